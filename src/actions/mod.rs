//! Operator actions as a *plan* (pure, previewable: the exact rows to write and the state they
//! rely on) that the store then *applies* in one fenced transaction.
//!
//! Writes the runtime reads are byte-compatible with its own (spec §6.5): compact JSON, the
//! runtime's key order, recorded messages copied verbatim.

mod common;
mod entries;
mod fail;
mod repair;
mod requeue;
pub mod run;
mod step;

pub use common::{ActionKind, ActionPlan, Refusal};
pub use entries::EntryIds;
pub use fail::plan_fail;
pub use repair::{plan_repair, synthetic_result, INTERRUPTED_TEXT};
pub use requeue::plan_requeue;
pub use run::IdSource;
pub use step::plan_step;

use crate::report::SubmissionReport;

/// Plan `kind` for `r` at `now_ms` (pure). `reason` is the operator's (required for `fail`).
pub fn plan(
    kind: ActionKind,
    r: &SubmissionReport,
    reason: Option<&str>,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    let mut plan = match kind {
        ActionKind::Repair => plan_repair(r, now_ms, ids),
        ActionKind::Requeue => plan_requeue(r, now_ms),
        ActionKind::Fail => plan_fail(r, reason.unwrap_or(""), now_ms, ids),
        ActionKind::Step => plan_step(r, now_ms, ids),
    }?;
    if plan.reason.is_none() {
        plan.reason = reason.map(str::to_string);
    }
    Ok(plan)
}
