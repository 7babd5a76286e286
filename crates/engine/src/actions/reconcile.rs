//! `reconcile`: the runtime's own writes for the rule that fires now (spec §5.2 rules 1–9), in
//! one fenced transaction: every write of its plan up to the attempt replacement (left to the
//! runtime, as with `step`), each built against the state the writes before it leave.

use super::common::{firing_rule, left_to_runtime, no_writes, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::writes::{group_rows, groups};
use crate::report::SubmissionReport;
use turnscope_core::recovery::reconciler::{PlannedWrite, RuleResult};

pub fn plan_reconcile(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    if let Some(plan) = super::malformed::plan_auto_fail(r, ActionKind::Reconcile, now_ms) {
        return plan;
    }
    let rule = firing_rule(r, now_ms, "nothing to reconcile")?;
    let mut changes = Vec::new();
    let mut written = 0;
    let mut stopped: Option<Refusal> = None;
    for group in groups(&r.plan.writes) {
        match group_rows(r, &changes, group.clone(), now_ms, ids) {
            Ok(rows) => {
                changes.extend(rows);
                written = group.end;
            }
            Err(refusal) => {
                stopped = Some(refusal);
                break;
            }
        }
    }
    if written == 0 {
        // A rule whose first write is the attempt replacement (rule 5) is reconciled by the
        // runtime alone: nothing to write is the whole of this action there, not a refusal.
        if let Some(plan) = left_to_runtime(r, rule, ActionKind::Reconcile) {
            return Ok(plan);
        }
        return Err(stopped.unwrap_or_else(|| no_writes(r, rule, "nothing to reconcile")));
    }
    let done: Vec<String> = r.plan.writes[..written]
        .iter()
        .map(PlannedWrite::describe)
        .collect();
    let mut summary = format!(
        "rule {rule} → {}: {}",
        r.plan.result.map_or("-", RuleResult::as_str),
        done.join("; then ")
    );
    if written < r.plan.writes.len() {
        let left: Vec<String> = r.plan.writes[written..]
            .iter()
            .map(PlannedWrite::describe)
            .collect();
        summary.push_str(&format!("; left to the runtime: {}", left.join("; then ")));
        // A write turnscope would not build (other than the attempt replacement, which is the
        // runtime's by design) says why it stopped there.
        if let (Some(refusal), false) = (
            stopped,
            matches!(r.plan.writes[written], PlannedWrite::ReplaceAttempt),
        ) {
            summary.push_str(&format!(" (turnscope stops before it: {})", refusal.reason));
        }
    }
    Ok(ActionPlan::new(ActionKind::Reconcile, r, changes, summary))
}
