//! `step`: manual step-through of recovery. Apply exactly the next write of the runtime's own plan
//! for this submission (with the writes the runtime makes in the same breath, see
//! `writes::groups`), with its own preview and fence; then re-read, re-classify and re-plan.
//!
//! One write is left to the runtime on purpose: replacing the attempt (the runtime picks the row
//! up and replaces it itself, spec §6.5 "stop there (recommended)"). A direct prompt's settlement
//! is written whole, as the runtime's pass writes it: the terminal outbox reserved, its event
//! appended once to the prompt's event stream, the offset recorded, the row finalized.

use super::common::{firing_rule, left_to_runtime, no_writes, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::writes::{group_rows, groups};
use crate::report::SubmissionReport;
use turnscope_core::recovery::reconciler::PlannedWrite;

/// How many writes of the runtime's plan for `r` the next step takes (the writes the runtime
/// makes in the same breath as the first); 0 when there is none.
pub fn next_step_len(r: &SubmissionReport) -> usize {
    groups(&r.plan.writes)
        .into_iter()
        .next()
        .map_or(0, |g| g.end)
}

/// `the next write of 4 left in the runtime's plan` / `the next 2 writes of 3 left …`: the step
/// counts what is left in the plan of the state it reads, which every step reads afresh, so
/// consecutive steps are numbered the same way (never `1 of 4`, then `1–2 of 3`).
pub fn step_words(taken: usize, left: usize) -> String {
    if taken == 1 {
        format!("the next write of {left} left in the runtime's plan")
    } else {
        format!("the next {taken} writes of {left} left in the runtime's plan")
    }
}

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
    // A rule whose next write is the attempt replacement (rule 5) is the runtime's alone: there
    // is nothing for turnscope to write, as `reconcile` says, not a refusal.
    if let Some(plan) = left_to_runtime(r, rule, ActionKind::Step) {
        return Ok(plan);
    }
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
            "rule {rule}, {}: {}",
            step_words(taken, r.plan.writes.len()),
            described.join("; then ")
        ),
    ))
}
