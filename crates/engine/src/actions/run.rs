//! The one way an action runs, for the CLI and the TUI alike: *prepare* (read the submission
//! whole at `now` and plan), *apply* (one fenced transaction with its audit row), *re-read* (the
//! state the runtime will now see). The callers only decide how to ask and how to show.

use super::{
    plan_extend, plan_fail, plan_reconcile, plan_repair, plan_requeue, plan_step, ActionPlan,
    EntryIds, Extension, Refusal,
};
use crate::report::SubmissionReport;
use turnscope_store::{Applied, ApplyError, AuditInfo, JournalStore, JournalWriter, StoreError};

use super::ActionKind;

/// Where the ids of new entries come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdSource {
    /// Random ids that avoid every id of the session (what operators get).
    #[default]
    Random,
    /// A fixed sequence from this seed, for reproducible tests and snapshots.
    Seeded(u64),
}

impl IdSource {
    /// The entry ids for one plan of `r`.
    pub fn for_report(self, r: &SubmissionReport) -> EntryIds {
        match self {
            IdSource::Random => EntryIds::for_report(r),
            IdSource::Seeded(seed) => {
                // splitmix64: a fixed, well-spread sequence.
                let mut x = seed;
                EntryIds::with_source(
                    r,
                    Box::new(move || {
                        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                        let mut z = x;
                        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                        z ^ (z >> 31)
                    }),
                )
            }
        }
    }
}

/// Plan `kind` for `r` at `now_ms` (pure). `reason` is the operator's (required for `fail`).
/// `extend` gets [`Extension::suggested`].
pub fn plan(
    kind: ActionKind,
    r: &SubmissionReport,
    reason: Option<&str>,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    plan_request(kind, r, reason, None, now_ms, ids)
}

/// [`plan`] with the operator's extension for `extend` (`None`: the suggested one).
pub fn plan_request(
    kind: ActionKind,
    r: &SubmissionReport,
    reason: Option<&str>,
    extension: Option<Extension>,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    let mut plan = match kind {
        ActionKind::Repair => plan_repair(r, now_ms, ids),
        ActionKind::Requeue => plan_requeue(r, now_ms, ids),
        ActionKind::Fail => plan_fail(r, reason.unwrap_or(""), now_ms, ids),
        ActionKind::Step => plan_step(r, now_ms, ids),
        ActionKind::Reconcile => plan_reconcile(r, now_ms, ids),
        ActionKind::Extend => plan_extend(
            r,
            extension.unwrap_or_else(|| Extension::suggested(r)),
            now_ms,
        ),
    }?;
    if plan.reason.is_none() {
        plan.reason = reason.map(str::to_string);
    }
    Ok(plan)
}

/// A submission read whole, and the plan for it (or why there is none).
#[derive(Debug)]
pub struct Prepared {
    pub report: SubmissionReport,
    pub plan: Result<ActionPlan, Refusal>,
}

/// Read `submission` (an id or a unique prefix) whole at `now_ms` and plan `kind` for it. The
/// fence of the plan is what this read saw.
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    store: &dyn JournalStore,
    kind: ActionKind,
    submission: &str,
    reason: Option<&str>,
    extension: Option<Extension>,
    context_window: Option<u64>,
    now_ms: i64,
    ids: IdSource,
) -> Result<Prepared, StoreError> {
    let report = SubmissionReport::load(store, submission, context_window, now_ms)?;
    let mut plan = plan_request(
        kind,
        &report,
        reason,
        extension,
        now_ms,
        &mut ids.for_report(&report),
    );
    if kind == ActionKind::Repair && super::repair::is_settled_leaf_repair(&report) {
        if let Some(busy) = session_at_work(store, &report.row().session_key, now_ms)? {
            plan = Err(Refusal::new(
                format!(
                    "submission {busy} of the same session is queued or running: its worker saves the session it loaded, deleting rows written meanwhile"
                ),
                "wait until it settles, then run `turnscope health` and repair again",
            ));
        }
    }
    Ok(Prepared { report, plan })
}

/// A submission of session `key` that a worker may be holding (queued, running or
/// terminalizing), if any.
fn session_at_work(
    store: &dyn JournalStore,
    key: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    use turnscope_store::RowFilter;
    for filter in [
        RowFilter::Running,
        RowFilter::Queued,
        RowFilter::Terminalizing,
    ] {
        if let Some(row) = store
            .list_submissions(filter, now_ms)?
            .into_iter()
            .find(|r| r.session_key == key)
        {
            return Ok(Some(row.submission_id));
        }
    }
    Ok(None)
}

/// The audit row an applied plan is recorded with.
pub fn audit_info(plan: &ActionPlan, operator: &str, now_ms: i64) -> AuditInfo {
    AuditInfo {
        operator: operator.to_string(),
        action: plan.action.as_str().to_string(),
        reason: plan.reason.clone(),
        summary: plan.summary.clone(),
        now_ms,
        batch_id: None,
        side_effects: (!plan.side_effects.is_empty() && plan.side_effects_acknowledged)
            .then(|| serde_json::to_string(&plan.side_effects).unwrap_or_default()),
    }
}

/// Apply one plan in its own fenced transaction, with its audit row: any change since the plan's
/// read writes nothing ([`ApplyError::Fenced`]).
pub fn apply(
    writer: &mut dyn JournalWriter,
    plan: &ActionPlan,
    operator: &str,
    now_ms: i64,
) -> Result<Applied, ApplyError> {
    if let Some(why) = plan.unacknowledged_side_effects() {
        return Err(ApplyError::Refused(why));
    }
    writer.apply(
        &plan.fence,
        &plan.changes,
        &audit_info(plan, operator, now_ms),
    )
}

/// [`apply`] as one of a bulk apply: its audit row carries `batch_id`, shared by the batch.
pub fn apply_in_batch(
    writer: &mut dyn JournalWriter,
    plan: &ActionPlan,
    operator: &str,
    now_ms: i64,
    batch_id: Option<&str>,
) -> Result<Applied, ApplyError> {
    if let Some(why) = plan.unacknowledged_side_effects() {
        return Err(ApplyError::Refused(why));
    }
    let mut info = audit_info(plan, operator, now_ms);
    info.batch_id = batch_id.map(str::to_string);
    writer.apply(&plan.fence, &plan.changes, &info)
}

/// A new batch id: `b` and 12 hex digits from the clock and the process.
pub fn new_batch_id() -> String {
    let t = turnscope_store::clock::now_ms() as u64;
    let mix = (t ^ (u64::from(std::process::id()) << 40)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    format!("b{:012x}", mix >> 16)
}

/// The submission of `plan` read again after it was applied.
pub fn reread(
    store: &dyn JournalStore,
    plan: &ActionPlan,
    context_window: Option<u64>,
    now_ms: i64,
) -> Result<SubmissionReport, StoreError> {
    SubmissionReport::load(store, &plan.submission_id, context_window, now_ms)
}
