//! A runtime live beside a write: any submission holding a live lease (at the real clock) means a
//! runtime is running. Its SQLite busy timeout is 0 (spec §1.1) and its reconciler passes every
//! 15 s (spec §5.1), so the operator is told before the write, in the CLI and the TUI alike.

use crate::report::SubmissionReport;
use turnscope_core::journal::time::{human_duration, iso_from_ms};
use turnscope_store::{JournalStore, RowFilter};

/// Submissions whose lease is live at the real clock: a runtime (or a worker of one) owns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRuntime {
    pub live_leases: usize,
    /// The latest lease end, ms.
    pub until_ms: i64,
}

/// A runtime is taken to be live when any submission holds a live lease now.
pub fn live_runtime(store: &dyn JournalStore, now_ms: i64) -> Option<LiveRuntime> {
    let rows = store.list_submissions(RowFilter::Running, now_ms).ok()?;
    let live: Vec<i64> = rows
        .iter()
        .map(|r| r.lease_expires_at)
        .filter(|l| *l >= now_ms)
        .collect();
    let until_ms = *live.iter().max()?;
    Some(LiveRuntime {
        live_leases: live.len(),
        until_ms,
    })
}

/// How often the runtime's reconciler passes (spec §5.1).
pub const PASS_MS: i64 = 15_000;

impl LiveRuntime {
    /// What the operator must know before writing beside it, in lines; `next_pass` is the whole
    /// last line's sentence ([`next_pass`], or [`BULK_NEXT_PASS`]).
    pub fn warning(&self, next_pass: &str) -> Vec<String> {
        vec![
            format!(
                "warning: a runtime is live: {} submission(s) hold a live lease (the latest until {})",
                self.live_leases,
                iso_from_ms(self.until_ms)
            ),
            "  its SQLite busy timeout is 0: any statement it runs while turnscope holds the write lock (about 1 ms) fails at once with SQLITE_BUSY instead of waiting".into(),
            format!("  {next_pass}"),
        ]
    }
}

/// A bulk's last warning line: true of every submission whatever its lease's age.
pub const BULK_NEXT_PASS: &str = "its reconciler passes every 15 s: a pass that reaches one of these submissions applies its rule itself, racing these writes; the fence refuses whichever comes second";

/// What the runtime's own reconciler would do with this submission, true for its state: a lease
/// that expired within one pass is reconciled by the next one; one that expired longer ago and is
/// still stuck beside a live runtime has been passed over (that runtime may serve other agents,
/// or its pass fails here), so no "within 15 s" is promised for it.
pub fn next_pass(r: &SubmissionReport) -> String {
    let expired_for = r.now_ms - r.row().lease_expires_at;
    match (r.plan.rule, r.plan.result) {
        (Some(n), Some(result)) if (0..=PASS_MS).contains(&expired_for) => format!(
            "its reconciler passes every 15 s: within 15 s it would reconcile this submission itself: rule {n} → {result} ({}), racing this write; the fence refuses whichever comes second",
            r.plan.reason
        ),
        (Some(n), Some(result)) if expired_for > PASS_MS => format!(
            "its reconciler passes every 15 s, yet this submission's lease expired {} ago and it is still running: the live runtime has not reconciled it (it may serve other agents, or its pass fails here); a pass that does would apply rule {n} → {result} ({}), racing this write; the fence refuses whichever comes second",
            human_duration(expired_for),
            r.plan.reason
        ),
        _ => format!(
            "its reconciler passes every 15 s: it would leave this submission alone ({}: {})",
            r.plan.disposition.label(),
            r.plan.reason
        ),
    }
}
