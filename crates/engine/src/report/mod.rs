//! One submission, fully inspected: the rows, its history, the classification and the recovery plan.
//! Shared by the CLI and the TUI so both always say the same thing.

pub mod cost_text;
pub mod diff;
pub mod export;
pub mod health;
mod item_json;
pub mod next_request;
pub mod observed;
pub mod redact;
pub mod rule_filter;
mod show_json;
pub mod verdict_filter;

use serde_json::{json, Value};

/// The journal format every `turnscope.*/1` document of the beta.7 read names in `format`
/// (flue 2.x documents name theirs, `crate::flue2::FORMAT`), so a script reading a document
/// knows which runtime's rules it was computed with.
pub const JOURNAL_FORMAT: &str = "flue-1.0.0-beta.7";

pub use item_json::{lease_text, plan_json, submission_json, PlanJson, SubmissionJson};
pub use show_json::{entry_summary_json, EntrySummary};
pub use turnscope_core::journal::compact::Previews;
use turnscope_core::journal::cost::{cost_since_input, CostSinceInput, UsageSum};
use turnscope_core::journal::entry::{Entry, Role};
use turnscope_core::journal::history::History;
use turnscope_core::journal::records::SessionScope;
use turnscope_core::journal::submission_rows::SubmissionRow;
use turnscope_core::recovery::attempts::{attempt_timeline, AttemptTimeline};
use turnscope_core::recovery::classify::Classification;
use turnscope_core::recovery::context_window::{self, ContextWindow};
use turnscope_core::recovery::reconciler::{
    inspect_session, plan_recovery, Disposition, RecoveryPlan, SessionInspection,
};
use turnscope_store::{CompactLoader, JournalStore, PathWalker, StoreError, SubmissionBundle};

/// The verdict operators see: the classification for the running rows the reconciler acts on (or
/// would, once the lease expires), the outcome otherwise. `classification` is `None` while only the
/// row is known (shown as `?`). The CLI, the JSON documents and the TUI all use this one rule.
pub fn verdict_label(disposition: &Disposition, classification: Option<&Classification>) -> String {
    match disposition {
        Disposition::Reconcile | Disposition::Live { .. } | Disposition::NoLease => {
            classification.map_or("?".into(), |c| c.state.label())
        }
        other => other.label().to_string(),
    }
}

/// A submission with everything turnscope concluded about it.
#[derive(Debug, Clone)]
pub struct SubmissionReport {
    pub bundle: SubmissionBundle,
    pub history: Option<History>,
    pub window: ContextWindow,
    pub inspection: SessionInspection,
    pub plan: RecoveryPlan,
    pub now_ms: i64,
}

impl SubmissionReport {
    /// Inspect a loaded bundle at `now_ms`. `context_window` is the operator's `--context-window`.
    pub fn build(
        bundle: SubmissionBundle,
        context_window: Option<u64>,
        now_ms: i64,
    ) -> SubmissionReport {
        let history = bundle
            .session
            .as_ref()
            .map(|s| History::new(s.entries.clone(), s.leaf_id.clone()));
        let model = history.as_ref().and_then(last_model);
        let window = context_window::resolve(context_window, model.as_deref());
        SubmissionReport::build_in(bundle, history, window, now_ms)
    }

    /// What this report would say once `changes` are written: the same read with the changes
    /// applied, classified and planned again in the same context window at the same instant.
    pub fn with_changes(
        &self,
        changes: &[turnscope_core::recovery::changes::RowChange],
    ) -> SubmissionReport {
        let bundle = turnscope_core::recovery::simulate::apply_changes(&self.bundle, changes);
        let history = bundle
            .session
            .as_ref()
            .map(|s| History::new(s.entries.clone(), s.leaf_id.clone()));
        SubmissionReport::build_in(bundle, history, self.window.clone(), self.now_ms)
    }

    fn build_in(
        bundle: SubmissionBundle,
        history: Option<History>,
        window: ContextWindow,
        now_ms: i64,
    ) -> SubmissionReport {
        let inspection = inspect_session(
            &bundle.row,
            bundle.journal.as_ref(),
            history.as_ref(),
            &bundle.stream_chunks,
            bundle
                .session
                .as_ref()
                .map_or(&[][..], |s| &s.data_problems[..]),
            window.tokens,
        );
        let plan = plan_recovery(&bundle.row, bundle.journal.as_ref(), &inspection, now_ms);
        SubmissionReport {
            bundle,
            history,
            window,
            inspection,
            plan,
            now_ms,
        }
    }

    /// Load and inspect one submission by id or unique prefix.
    pub fn load(
        store: &dyn JournalStore,
        query: &str,
        context_window: Option<u64>,
        now_ms: i64,
    ) -> Result<SubmissionReport, StoreError> {
        let row = store.find_submission(query)?;
        let bundle = store.load_bundle(&row.submission_id)?;
        Ok(SubmissionReport::build(bundle, context_window, now_ms))
    }

    /// Load and inspect one submission for viewing (`show`, the TUI): the session is read whole
    /// but compact, with full bodies for the input entry and the active path after it. Verdict
    /// and plan are those of `load`; actions must still use `load`.
    /// `previews`: whether messages keep their text previews (`show` prints them, `show --json`
    /// and `classify` do not).
    pub fn load_compact(
        store: &dyn JournalStore,
        query: &str,
        context_window: Option<u64>,
        now_ms: i64,
        previews: Previews,
    ) -> Result<SubmissionReport, StoreError> {
        let row = store.find_submission(query)?;
        let bundle = store.load_bundle_with(&row.submission_id, &mut CompactLoader { previews })?;
        Ok(SubmissionReport::build(bundle, context_window, now_ms))
    }

    /// Inspect one submission for a listing: only the active path from its input entry to the
    /// leaf is read (see `store::walk` for where this can differ from a full read).
    pub fn scan(
        store: &dyn JournalStore,
        submission_id: &str,
        walker: &mut PathWalker,
        context_window: Option<u64>,
        now_ms: i64,
    ) -> Result<SubmissionReport, StoreError> {
        let bundle = store.load_bundle_with(submission_id, walker)?;
        Ok(SubmissionReport::build(bundle, context_window, now_ms))
    }

    /// [`SubmissionReport::scan`] of a row the store read in the snapshot it is in (a
    /// listing's): the row is not read again.
    pub fn scan_row(
        store: &dyn JournalStore,
        row: &SubmissionRow,
        walker: &mut PathWalker,
        context_window: Option<u64>,
        now_ms: i64,
    ) -> Result<SubmissionReport, StoreError> {
        let bundle = store.load_bundle_of_row(row, walker)?;
        Ok(SubmissionReport::build(bundle, context_window, now_ms))
    }

    pub fn row(&self) -> &SubmissionRow {
        &self.bundle.row
    }

    pub fn classification(&self) -> &Classification {
        &self.inspection.classification
    }

    /// The verdict operators see ([`verdict_label`]).
    pub fn verdict(&self) -> String {
        verdict_label(&self.plan.disposition, Some(self.classification()))
    }

    /// The active path strictly after the input entry (what the classifier saw).
    pub fn following(&self) -> Option<Vec<&Entry>> {
        let h = self.history.as_ref()?;
        let kind = self.row().submission_kind()?;
        h.following(kind, &self.row().submission_id)
    }

    /// Index (into `history.entries`) of the input entry on the active path.
    pub fn input_index(&self) -> Option<usize> {
        let h = self.history.as_ref()?;
        let kind = self.row().submission_kind()?;
        h.find_input_index(kind, &self.row().submission_id)
    }

    /// Whether the read holds every entry of the session (`show`, the TUI, an action's load),
    /// not only the active path since the input (a listing's walk).
    pub fn whole_session(&self) -> bool {
        self.bundle
            .session
            .as_ref()
            .is_some_and(|s| matches!(s.scope, SessionScope::Full | SessionScope::Compact))
    }

    /// The stored usage of the assistants since the input (`journal::cost`): the whole subtree
    /// on a whole read, the active path only on a listing's walk (abandoned part unknown).
    /// `None` when the input entry is not on the active path.
    pub fn cost(&self) -> Option<CostSinceInput> {
        let h = self.history.as_ref()?;
        let input = self.input_index()?;
        Some(cost_since_input(h, input, self.whole_session()))
    }

    /// The cost since the input on the active path (aborted partials there included): the
    /// figure of `list`'s COST, the same whether the read was whole or the listing's walk (which
    /// can read a damaged session whole).
    pub fn path_cost(&self) -> Option<UsageSum> {
        self.cost().map(|c| c.on_active_path())
    }

    /// The attempts rebuilt from the row, the turn journal and the stream signals after the
    /// input (`recovery::attempts`); without an input entry, from the rows alone.
    pub fn attempts(&self) -> AttemptTimeline {
        let (since_input, path): (Vec<&Entry>, Vec<&Entry>) =
            match (self.history.as_ref(), self.input_index()) {
                (Some(h), Some(i)) => (
                    h.entries[i + 1..].iter().collect(),
                    self.following().unwrap_or_default(),
                ),
                _ => (Vec::new(), Vec::new()),
            };
        attempt_timeline(
            self.row(),
            self.bundle.journal.as_ref(),
            &since_input,
            &path,
        )
    }

    /// Lease as operators read it: `expired 4m12s ago`, `live 18s`, `none`.
    pub fn lease_text(&self) -> String {
        lease_text(self.row(), self.now_ms)
    }

    /// The stable JSON document of `turnscope show --json` (schema `turnscope.show/1`), whole.
    pub fn to_json(&self) -> Value {
        let mut doc = self.json_head();
        let following: Vec<Value> = self
            .following()
            .unwrap_or_default()
            .iter()
            .map(|e| entry_summary_json(e))
            .collect();
        if let Value::Object(o) = &mut doc {
            o.insert("following".into(), following.into());
        }
        doc
    }

    /// `to_json`, pretty-printed to `out` with the same bytes, without building the document's
    /// `following` (a whale submission has 100,000 entries there): the summaries are formatted
    /// in chunks, on two threads for a long path, and written in turn (`show_json`).
    pub fn write_json_pretty(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let following = self.following().unwrap_or_default();
        // The head is an object with keys, so its pretty form ends in "\n}": `following`, the
        // last key, goes before that brace.
        let mut head = serde_json::to_vec_pretty(&self.json_head())?;
        if !head.ends_with(b"\n}") {
            return Err(std::io::Error::other(
                "the show document's head is not an object",
            ));
        }
        head.truncate(head.len() - 2);
        let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
        w.write_all(&head)?;
        w.write_all(b",\n  \"following\": ")?;
        show_json::write_following(&following, &mut w)?;
        w.write_all(b"\n}\n")?;
        w.flush()
    }

    /// Every key of the `show --json` document but `following` (which comes last).
    fn json_head(&self) -> Value {
        let row = self.row();
        let c = self.classification();
        json!({
            "schema": "turnscope.show/1",
            "format": JOURNAL_FORMAT,
            "submission": submission_json(row, self.now_ms),
            "journal": self.bundle.journal.as_ref().map(|j| json!({
                "phase": j.phase,
                "revision": j.revision,
                "attemptId": j.attempt_id,
                "matchesSubmissionAttempt": row.attempt_id.as_deref() == Some(j.attempt_id.as_str()),
                "checkpointLeafId": j.checkpoint_leaf_id,
                "toolRequest": j.tool_request().ok().flatten(),
                "streamKey": j.stream_key,
                "streamConsumedAt": j.stream_consumed_at,
                "streamChunkSegments": self.bundle.stream_chunks.len(),
                "committed": j.committed,
                "committedLeafId": j.committed_leaf_id,
                "createdAt": j.created_at,
                "updatedAt": j.updated_at,
            })),
            "journalProblem": self.bundle.journal_problem,
            "session": self.bundle.session.as_ref().map(|s| json!({
                "id": s.id,
                "leafId": s.leaf_id,
                "entries": s.entries.len(),
                "problems": s.data_problems,
                "notUtf8": s.not_utf8,
                "pathDamage": self.history.as_ref().map(|h| h.damage.iter().map(|d| d.to_string()).collect::<Vec<_>>()).unwrap_or_default(),
            })),
            "inputEntryId": self.inspection.input_entry_id,
            "inputOffPathEntryId": self.inspection.input_off_path_id,
            "contextWindow": self.window,
            "classification": classification_json(c),
            "inspection": c.state.inspection().as_str(),
            "verdict": self.verdict(),
            "plan": plan_json(&self.plan),
            "attempts": self.attempts(),
            "costSinceInput": self.cost(),
        })
    }
}

fn last_model(h: &History) -> Option<String> {
    h.active_path()
        .iter()
        .rev()
        .filter_map(|e| e.message_with_role(&Role::Assistant))
        .find_map(|m| m.model().filter(|m| !m.is_empty()).map(str::to_string))
}

pub fn classification_json(c: &Classification) -> Value {
    json!({
        "result": c.state.to_runtime_json(),
        "label": c.state.label(),
        "explanation": c.explanation,
        "trailingPartialBatch": c.trailing_partial_batch,
    })
}
