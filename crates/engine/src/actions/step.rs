//! `step`: manual step-through of recovery. Apply exactly the next write of the runtime's own plan
//! for this submission (with the writes the runtime makes in the same breath, see
//! `writes::groups`), with its own preview and fence; then re-read, re-classify and re-plan.
//!
//! One write is left to the runtime on purpose: replacing the attempt (the runtime picks the row
//! up and replaces it itself, spec §6.5 "stop there (recommended)"). A direct prompt's settlement
//! is written whole, as the runtime's pass writes it: the terminal outbox reserved, its event
//! appended once to the prompt's event stream, the offset recorded, the row finalized.

use super::common::{firing_rule, no_writes, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::writes::{group_rows, groups};
use crate::report::SubmissionReport;
use turnscope_core::recovery::reconciler::PlannedWrite;

/// Plan the next write of `r.plan` (its first group of writes).
pub fn plan_step(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    if let Some(plan) = super::malformed::plan_auto_fail(r, ActionKind::Step, now_ms) {
        return plan;
    }
    let rule = firing_rule(r, now_ms, "nothing to step through")?;
    let Some(first) = groups(&r.plan.writes).into_iter().next() else {
        return Err(no_writes(r, rule, "nothing to step through"));
    };
    let taken = first.end;
    let changes = group_rows(r, &[], first.clone(), now_ms, ids)?;
    let described: Vec<String> = r.plan.writes[first]
        .iter()
        .map(PlannedWrite::describe)
        .collect();
    Ok(ActionPlan::new(
        ActionKind::Step,
        r,
        changes,
        format!(
            "rule {rule}, write{}{} of {}: {}",
            if taken > 1 { "s 1–" } else { " " },
            taken,
            r.plan.writes.len(),
            described.join("; then ")
        ),
    ))
}
