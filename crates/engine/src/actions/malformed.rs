//! A malformed submission row (spec fact 8): the runtime's row parser rejects it whenever the
//! reconciler lists expired work and settles it as failed (`failSubmissionSequence`:
//! `status = 'settled', settled_at = now, error = the parse error's message` where the row is
//! still running). `step` and `reconcile` write exactly that, where turnscope knows the message.

use super::common::{check_expired_running, ActionKind, ActionPlan, Refusal};
use crate::report::SubmissionReport;
use turnscope_core::recovery::changes::{RowChange, SqlValue};
use turnscope_core::recovery::reconciler::{Disposition, PlannedWrite};

/// The auto-fail of `r` when its row is malformed, `None` for a row the parser accepts.
pub(super) fn plan_auto_fail(
    r: &SubmissionReport,
    action: ActionKind,
    now_ms: i64,
) -> Option<Result<ActionPlan, Refusal>> {
    let Disposition::Malformed { problem } = &r.plan.disposition else {
        return None;
    };
    Some(auto_fail(r, action, problem, now_ms))
}

fn auto_fail(
    r: &SubmissionReport,
    action: ActionKind,
    problem: &str,
    now_ms: i64,
) -> Result<ActionPlan, Refusal> {
    // The reconciler's listing is what meets this row: a running row under an expired lease.
    // A queued one is met by the claim loop, which needs no help.
    check_expired_running(r, now_ms)?;
    let error = match r.plan.writes.as_slice() {
        [PlannedWrite::AutoFailMalformed { error: Some(e) }] => e.clone(),
        [PlannedWrite::AutoFailMalformed { error: None }] => {
            return Err(Refusal::new(
                format!(
                    "the row is malformed ({problem}); the runtime settles it with V8's JSON.parse message for this payload, which turnscope cannot give"
                ),
                "leave it to the runtime: its next reconciliation pass settles the row as failed by itself",
            ))
        }
        _ => {
            return Err(Refusal::new(
                format!("the row is malformed ({problem})"),
                "leave it to the runtime's row parser",
            ))
        }
    };
    let row = r.row();
    if row.fence_column_stored_wrong() {
        return Err(Refusal::new(
            format!(
                "the row is malformed ({problem}), and turnscope's write, fenced on submission_id and attempt_id, cannot match that row"
            ),
            "leave it to the runtime: its next reconciliation pass settles the row as failed by itself (by its sequence)",
        ));
    }
    // The same columns as `failSubmission`'s, under the parser's own guard.
    let set = super::runtime_rows::settle_columns(row, now_ms, SqlValue::text(&error));
    let changes = vec![RowChange::AutoFailSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone(),
        set,
    }];
    let mut plan = ActionPlan::new(
        action,
        r,
        changes,
        format!("the runtime's row parser rejects this row ({problem}): settle it as failed with {error}"),
    );
    // The parser settles the row before any session is loaded; the session (which may be the
    // damaged part, even unreadable as text) is neither written nor relied on.
    plan.fence.session = None;
    Ok(plan)
}
