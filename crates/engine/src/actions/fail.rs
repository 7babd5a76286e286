//! `fail`: the operator gives up on a submission with the runtime's own failure writes (spec §5.3)
//! for the rule that applies: the `submission_interrupted` advisory (idempotent), then the
//! settlement with that rule's error. Where the runtime's next pass fails it anyway (rules 2, 3,
//! 8, 9) these are exactly its rows; where it would resume (rules 4–6), the failure it would
//! record if resuming were not possible (rule 8 or 9). Never a cause that is false for the state:
//! an input that never reached the session is requeued by the runtime, not failed.

use super::common::{check_stuck, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::runtime_rows::{
    advisory_rows, create_session_rows, delete_chunks_row, settle_failed_rows,
};
use crate::report::SubmissionReport;
use turnscope_core::journal::submission_rows::short_id;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::classify::Inspection;
use turnscope_core::recovery::failure::RuntimeFailure;

pub fn plan_fail(
    r: &SubmissionReport,
    reason: &str,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    if reason.trim().is_empty() {
        return Err(Refusal::new(
            "a reason is required to fail a submission",
            "pass --reason TEXT",
        ));
    }
    check_stuck(r, now_ms)?;
    let row = r.row();
    if r.inspection.inspection() == Inspection::Completed {
        return Err(Refusal::new(
            "the session already holds a completed answer for this submission; failing it would discard that answer",
            format!(
                "settle it as completed, as the runtime's next pass would (rule 1): `turnscope --write reconcile {}`",
                short_id(&row.submission_id)
            ),
        ));
    }
    if row.input_applied_at.is_none() && r.inspection.inspection() == Inspection::Absent {
        return Err(Refusal::new(
            "the input never reached the session, so the runtime requeues this submission (rule 7); no failure it records would be true for this state",
            format!(
                "requeue it: `turnscope --write requeue {}`",
                short_id(&row.submission_id)
            ),
        ));
    }
    let rule = match r.plan.rule {
        Some(n @ (2 | 3 | 8 | 9)) => n,
        _ if row.input_applied_at.is_none() => 8,
        _ => 9,
    };
    let failure = RuntimeFailure::for_rule(rule, row, r.bundle.journal.as_ref())
        .ok_or_else(|| Refusal::new("no failure applies", "inspect the submission"))?;
    let changes = failure_rows(r, &failure, now_ms, ids)?;
    let mut plan = ActionPlan::new(
        ActionKind::Fail,
        r,
        changes,
        format!(
            "fail with rule {rule}'s failure ({}): {}",
            failure.reason, failure.message
        ),
    );
    plan.reason = Some(reason.to_string());
    Ok(plan)
}

/// The runtime's `failInterruptedSubmission` rows for `failure`: the session it creates when
/// missing, the advisory unless one is on the active path, the settlement, the chunk cleanup.
pub(super) fn failure_rows(
    r: &SubmissionReport,
    failure: &RuntimeFailure,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<Vec<RowChange>, Refusal> {
    let mut changes = Vec::new();
    let created;
    let mut with_session = r;
    if r.bundle.session.is_none() {
        changes.extend(create_session_rows(r, ids, now_ms));
        created = r.with_changes(&changes);
        with_session = &created;
    }
    if !with_session.inspection.advisory_present {
        changes.extend(advisory_rows(with_session, failure, now_ms, ids)?);
    }
    changes.extend(settle_failed_rows(r, failure, now_ms)?);
    changes.extend(delete_chunks_row(r));
    Ok(changes)
}
