//! One `flue_agent_turn_journals` row, evolved through the runtime's journal writes (spec
//! §3.2–3.4): begin, provider started, tool request recorded, checkpoint ready, commit, stream
//! consumed, attempt replacement.

use serde_json::{json, Value};

use super::build::Demo;
use super::submission::Sub;

/// One `flue_agent_turn_journals` row, evolved through the runtime's journal writes.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub submission_id: String,
    pub session_key: String,
    pub kind: &'static str,
    pub attempt_id: String,
    pub operation_id: String,
    pub turn_id: String,
    pub phase: &'static str,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub checkpoint_leaf_id: Option<String>,
    pub tool_request_json: Option<String>,
    pub stream_key: Option<String>,
    pub stream_consumed_at: Option<i64>,
    pub committed: bool,
    pub committed_leaf_id: Option<String>,
}

impl Run {
    /// `beginTurnJournal` for the first turn of `sub`'s current attempt at time `t`.
    pub(crate) fn begin(d: &mut Demo, sub: &Sub, t: i64, checkpoint: Option<&str>) -> Run {
        Run {
            submission_id: sub.id.clone(),
            session_key: sub.session_key.clone(),
            kind: sub.kind,
            attempt_id: sub.attempt_id.clone().expect("claimed"),
            operation_id: format!("op_{}", d.rng.ulid(t - 3)),
            turn_id: format!("turn_{}", d.rng.ulid(t - 1)),
            phase: "before_provider",
            revision: 1,
            created_at: t,
            updated_at: t,
            checkpoint_leaf_id: checkpoint.map(str::to_string),
            tool_request_json: None,
            stream_key: None,
            stream_consumed_at: None,
            committed: false,
            committed_leaf_id: None,
        }
    }

    /// `beginTurnJournal` upsert for a later turn (new turn id, stream and commit fields reset).
    pub(crate) fn next_turn(&mut self, d: &mut Demo, t: i64, checkpoint: Option<&str>) {
        self.turn_id = format!("turn_{}", d.rng.ulid(t - 1));
        self.phase = "before_provider";
        self.write(t);
        self.checkpoint_leaf_id = checkpoint.map(str::to_string);
        self.tool_request_json = None;
        self.stream_key = None;
        self.stream_consumed_at = None;
        self.committed = false;
        self.committed_leaf_id = None;
    }

    fn write(&mut self, t: i64) {
        self.revision += 1;
        self.updated_at = t;
    }

    pub(crate) fn provider_started(&mut self, t: i64) {
        self.phase = "provider_started";
        self.write(t);
        self.stream_key = Some(format!(
            "{}:{}:{}",
            self.submission_id, self.turn_id, self.attempt_id
        ));
    }

    pub(crate) fn tool_request(&mut self, t: i64, assistant_id: &str, calls: &[Value]) {
        self.phase = "tool_request_recorded";
        self.write(t);
        self.checkpoint_leaf_id = Some(assistant_id.to_string());
        self.tool_request_json = Some(json!({ "toolCalls": calls }).to_string());
    }

    /// "checkpointReady" after a tool batch, or the repair's phase reset.
    pub(crate) fn checkpoint_ready(&mut self, t: i64, last_result: &str) {
        self.phase = "before_provider";
        self.write(t);
        self.checkpoint_leaf_id = Some(last_result.to_string());
    }

    pub(crate) fn commit(&mut self, t: i64, leaf: &str) {
        self.phase = "committed";
        self.write(t);
        self.committed = true;
        self.committed_leaf_id = Some(leaf.to_string());
    }

    pub(crate) fn mark_stream_consumed(&mut self, t: i64) {
        self.write(t);
        self.stream_consumed_at = Some(t);
    }

    /// `replaceTurnJournalAttempt` (journal side; a no-op on a committed journal).
    pub(crate) fn replace_attempt(&mut self, t: i64, attempt: &str) {
        if !self.committed {
            self.attempt_id = attempt.to_string();
            self.write(t);
        }
    }
}
