//! What every planner shares: the action kinds, the plan, the refusal, the preconditions of a
//! stuck submission, and the fence a plan is applied under.

use serde::Serialize;

use super::predict::{predict, Prediction};
use super::side_effects::{side_effects, MayHaveRun};
use crate::report::SubmissionReport;
use turnscope_core::recovery::changes::{Fence, RowChange};

/// The operator actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ActionKind {
    Repair,
    Requeue,
    Fail,
    Step,
    Reconcile,
    Extend,
}

impl ActionKind {
    /// The command's name (`repair`, …), the same as in JSON.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A previewable action: nothing is written until the store applies it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionPlan {
    pub action: ActionKind,
    pub submission_id: String,
    pub attempt_id: Option<String>,
    pub fence: Fence,
    /// The rows to write, in order. Empty means the action has nothing to do (idempotent no-op).
    pub changes: Vec<RowChange>,
    /// One line: what this does.
    pub summary: String,
    /// What the runtime's next pass does with the rows once `changes` are written, computed by
    /// running its planner on them.
    pub prediction: Prediction,
    /// The operator's reason (required for `fail`).
    pub reason: Option<String>,
    /// The tool calls `changes` answer with a synthetic `interrupted` result: each may have run.
    /// Applying needs [`ActionPlan::acknowledge_side_effects`] when this is not empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<MayHaveRun>,
    /// Whether the operator acknowledged `side_effects` (`--ack-side-effects`, or the TUI's
    /// second confirmation).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub side_effects_acknowledged: bool,
}

impl ActionPlan {
    /// The plan of `action` on `r` writing `changes`, fenced on what `r` read, with its
    /// prediction computed from those very rows.
    pub(super) fn new(
        action: ActionKind,
        r: &SubmissionReport,
        changes: Vec<RowChange>,
        summary: String,
    ) -> ActionPlan {
        ActionPlan {
            action,
            submission_id: r.row().submission_id.clone(),
            attempt_id: r.row().attempt_id.clone(),
            fence: fence(r),
            prediction: predict(r, &changes),
            side_effects: side_effects(r, &changes),
            side_effects_acknowledged: false,
            changes,
            summary,
            reason: None,
        }
    }

    /// The operator has seen the side-effect ledger and accepts that its calls may have run.
    pub fn acknowledge_side_effects(&mut self) {
        self.side_effects_acknowledged = true;
    }

    /// Why this plan may not be applied yet: calls that may have run, not acknowledged.
    pub fn unacknowledged_side_effects(&self) -> Option<String> {
        if self.side_effects.is_empty() || self.side_effects_acknowledged {
            return None;
        }
        let n = self.side_effects.len();
        // Each tool once, the first few: a 10,000-call batch stays one line.
        let mut names: Vec<String> = Vec::new();
        for c in &self.side_effects {
            if !names.contains(&c.tool) {
                names.push(c.tool.clone());
            }
        }
        if names.len() > 5 {
            let more = names.len() - 5;
            names.truncate(5);
            names.push(turnscope_core::text::plural(
                more as u64,
                "more tool",
                "more tools",
            ));
        }
        Some(format!(
            "{n} tool call{} this write answers `interrupted` may already have run ({}): acknowledge {} side effects (--ack-side-effects)",
            if n == 1 { "" } else { "s" },
            names.join(", "),
            if n == 1 { "its" } else { "their" }
        ))
    }

    pub fn is_noop(&self) -> bool {
        self.changes.is_empty()
    }

    /// The event stream this plan appends an event to (a direct prompt's terminal event): once
    /// written, subscribers may have read it, so an undo is refused.
    pub fn published_stream(&self) -> Option<&str> {
        self.changes.iter().find_map(|c| match c {
            RowChange::AppendEvent { path, .. } => Some(path.as_str()),
            _ => None,
        })
    }
}

/// Why an action does not apply, and what would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub reason: String,
    /// The action (or wait) that fits instead.
    pub instead: String,
}

impl Refusal {
    pub(super) fn new(reason: impl Into<String>, instead: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
            instead: instead.into(),
        }
    }
}

/// The preconditions every action shares: a running row whose lease expired, and a session the
/// runtime itself could load.
/// The rule that fires now for a stuck submission, for the actions that write the runtime's own
/// plan (`step`, `reconcile`); `instead` says what to do when there is nothing to write.
pub(super) fn firing_rule(r: &SubmissionReport, now_ms: i64, instead: &str) -> Result<u8, Refusal> {
    check_stuck(r, now_ms)?;
    r.plan
        .rule
        .ok_or_else(|| Refusal::new(r.plan.reason.clone(), instead))
}

/// The refusal of a rule whose plan has no write turnscope makes.
pub(super) fn no_writes(r: &SubmissionReport, rule: u8, instead: &str) -> Refusal {
    Refusal::new(
        format!("rule {rule} makes no writes ({})", r.plan.reason),
        instead,
    )
}

/// The plan with nothing to write of a rule whose first write is the attempt replacement (rule
/// 5): the runtime makes it itself, so `step` and `reconcile` both have nothing to write there.
pub(super) fn left_to_runtime(
    r: &SubmissionReport,
    rule: u8,
    action: ActionKind,
) -> Option<ActionPlan> {
    use turnscope_core::recovery::reconciler::{PlannedWrite, RuleResult};
    let first @ PlannedWrite::ReplaceAttempt = r.plan.writes.first()? else {
        return None;
    };
    Some(ActionPlan::new(
        action,
        r,
        Vec::new(),
        format!(
            "rule {rule} → {}: nothing for turnscope to write; left to the runtime: {}",
            r.plan.result.map_or("-", RuleResult::as_str),
            first.describe()
        ),
    ))
}

pub(super) fn check_stuck(r: &SubmissionReport, now_ms: i64) -> Result<(), Refusal> {
    check_expired_running(r, now_ms)?;
    check_whole(r)
}

/// What the reconciler's listing requires of a row before anything is written for it: running,
/// its lease expired (and not 0 or negative), read from a whole session.
pub(super) fn check_expired_running(r: &SubmissionReport, now_ms: i64) -> Result<(), Refusal> {
    // Writes are planned only from a whole, fully parsed session (`SubmissionReport::load`).
    if let Some(s) = r.bundle.session.as_ref() {
        if s.scope != turnscope_core::journal::records::SessionScope::Full {
            return Err(Refusal::new(
                "the session was read in part (for a listing or a view), not whole",
                "plan the action from a full read of the submission",
            ));
        }
    }
    let row = r.row();
    if !row.is_running() {
        return Err(Refusal::new(
            format!(
                "the submission is {} ({}), not running",
                row.status,
                r.verdict()
            ),
            "nothing to do: only running submissions are recovered",
        ));
    }
    if row.lease_expires_at == 0 {
        return Err(Refusal::new(
            "the lease is 0 (a Cloudflare-style claim): turnscope cannot tell whether a worker still owns it",
            "leave it to the runtime that claimed it",
        ));
    }
    if row.lease_expires_at < 0 {
        return Err(Refusal::new(
            format!(
                "the lease is negative ({}): the runtime never writes one, so the row is damaged",
                row.lease_expires_at
            ),
            "repair the row by hand first; the runtime never reconciles it either",
        ));
    }
    if row.lease_expires_at >= now_ms {
        return Err(Refusal::new(
            format!(
                "the lease is live ({}): a worker owns this submission",
                r.lease_text()
            ),
            "wait for the lease to expire; never write under a live lease",
        ));
    }
    Ok(())
}

/// Nothing turnscope would write over is damaged: the row parses, the session and journal were
/// read whole, and the row has an attempt to fence on.
/// `check_whole` for a settled submission: read from a whole session the runtime could load.
pub(super) fn check_settled_whole(r: &SubmissionReport) -> Result<(), Refusal> {
    if let Some(s) = r.bundle.session.as_ref() {
        if s.scope != turnscope_core::journal::records::SessionScope::Full {
            return Err(Refusal::new(
                "the session was read in part (for a listing or a view), not whole",
                "plan the action from a full read of the submission",
            ));
        }
    }
    check_whole(r)
}

fn check_whole(r: &SubmissionReport) -> Result<(), Refusal> {
    let row = r.row();
    if let turnscope_core::recovery::reconciler::Disposition::Malformed { problem } =
        &r.plan.disposition
    {
        return Err(Refusal::new(
            format!("the submission row is damaged: {problem}"),
            "leave it to the runtime: its row parser rejects this row and settles it as failed",
        ));
    }
    if !r.inspection.load_blockers.is_empty() {
        return Err(Refusal::new(
            format!("the session is damaged: {}", r.inspection.load_blockers.join("; ")),
            "repair the damaged rows by hand first; turnscope never writes to a session it could not fully read",
        ));
    }
    // Damage the runtime itself would live with, but that leaves turnscope unsure what it would
    // overwrite or where its rows would hang: text that is not UTF-8 (the runtime reads it with
    // U+FFFD and writes that back; an undo, from row images read the same way, could not restore
    // the bytes), a broken tree, an unreadable journal.
    if let Some(s) = r.bundle.session.as_ref().filter(|s| !s.not_utf8.is_empty()) {
        return Err(Refusal::new(
            format!("the session is damaged: {}", s.not_utf8.join("; ")),
            "repair the rows by hand first (the runtime reads them as they are shown); turnscope never writes to a session whose bytes it could not keep",
        ));
    }
    if let Some(h) = r.history.as_ref().filter(|h| !h.damage.is_empty()) {
        let damage: Vec<String> = h.damage.iter().map(|d| d.to_string()).collect();
        return Err(Refusal::new(
            format!("the session is damaged: {}", damage.join("; ")),
            "repair the damaged rows by hand first; turnscope never writes to a session it could not fully read",
        ));
    }
    let journal_problems: Vec<&str> = r
        .bundle
        .journal_problem
        .iter()
        .chain(r.inspection.tool_request_error.iter())
        .map(String::as_str)
        .collect();
    if !journal_problems.is_empty() {
        return Err(Refusal::new(
            format!("the turn journal is damaged: {}", journal_problems.join("; ")),
            "repair the journal row by hand first; turnscope never writes what it could not fully read",
        ));
    }
    if row.attempt_id.is_none() {
        return Err(Refusal::new(
            "the row has no attempt id",
            "nothing to fence on",
        ));
    }
    Ok(())
}

/// The fence for `r`: everything the preview relied on.
pub(super) fn fence(r: &SubmissionReport) -> Fence {
    let row = r.row();
    Fence {
        submission_id: row.submission_id.clone(),
        status: row.status.to_string(),
        attempt_id: row.attempt_id.clone(),
        lease_expires_at: row.lease_expires_at,
        require_expired_lease: true,
        journal: r.bundle.journal.as_ref().map(|j| {
            (
                j.attempt_id.clone(),
                j.phase.to_string(),
                j.revision,
                j.committed,
            )
        }),
        session: r
            .bundle
            .session
            .as_ref()
            .map(|s| (s.leaf_id.clone(), s.entries.len() as i64)),
    }
}
