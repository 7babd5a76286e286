//! `requeue`: the runtime's rule 7 write (`requeueSubmissionBeforeInputApplied`, spec §5.4), only
//! where its preconditions hold; with the empty session the runtime's get-or-create saves first
//! when the session row is missing.

use super::common::{check_stuck, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::runtime_rows::{create_session_rows, requeue_rows};
use crate::report::SubmissionReport;
use turnscope_core::recovery::classify::Inspection;

pub fn plan_requeue(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
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
    let mut changes = create_session_rows(r, ids, now_ms);
    changes.extend(requeue_rows(r));
    Ok(ActionPlan::new(
        ActionKind::Requeue,
        r,
        changes,
        "back to queued, as if it had just arrived (the input never reached the session)".into(),
    ))
}
