//! `requeue`: the runtime's rule 7 write (`requeueSubmissionBeforeInputApplied`, spec §5.4), only
//! where its preconditions hold.

use super::common::{check_stuck, fence, ActionKind, ActionPlan, Refusal};
use crate::core::changes::{ColumnChange, RowChange, SqlValue};
use crate::core::classify::Inspection;
use crate::core::status::SubmissionStatus;
use crate::report::SubmissionReport;

pub fn plan_requeue(r: &SubmissionReport, now_ms: i64) -> Result<ActionPlan, Refusal> {
    check_stuck(r, now_ms)?;
    let row = r.row();
    if row.input_applied_at.is_some() {
        return Err(Refusal::new(
            "the input was already applied to the session: the runtime never requeues after input application (a replay could repeat tool calls)",
            match r.classification().trailing_partial_batch {
                Some(_) => "repair the tool batch, or fail it".to_string(),
                None => format!("fail it, or let the runtime apply rule {}", r.plan.rule.map_or("-".into(), |n| n.to_string())),
            },
        ));
    }
    if r.inspection.inspection() != Inspection::Absent {
        return Err(Refusal::new(
            format!(
                "the input is already in the session ({}), so a requeue would apply it twice",
                r.classification().state.label()
            ),
            "fail it (the runtime's rule 8 does the same)",
        ));
    }
    let set = vec![
        ColumnChange::new(
            "status",
            SqlValue::status(SubmissionStatus::Running),
            SqlValue::status(SubmissionStatus::Queued),
        ),
        ColumnChange::new(
            "attempt_id",
            SqlValue::opt_text(row.attempt_id.as_deref()),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "recovery_requested_at",
            SqlValue::opt_int(row.recovery_requested_at),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "started_at",
            SqlValue::opt_int(row.started_at),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "owner_id",
            SqlValue::opt_text(row.owner_id.as_deref()),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "lease_expires_at",
            SqlValue::Int(row.lease_expires_at),
            SqlValue::Int(0),
        ),
    ];
    Ok(ActionPlan {
        action: ActionKind::Requeue,
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone(),
        fence: fence(r),
        changes: vec![RowChange::UpdateSubmission {
            submission_id: row.submission_id.clone(),
            attempt_id: row.attempt_id.clone().unwrap_or_default(),
            set,
        }],
        summary: "requeue: back to queued, as if it had just arrived (the input never reached the session)".into(),
        expected_after: "queued; the runtime's claim loop starts it within about 15 s".into(),
        reason: None,
    })
}
