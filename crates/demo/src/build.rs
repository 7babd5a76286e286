//! In-memory rows of the demo database and the small state machines that fill them the way the
//! runtime would: [`Session`] (append-only entry tree, §2), [`Sub`] (submission row lifecycle,
//! §1.4–1.5) and [`Run`] (turn journal writes, §3.2–3.4). One file: the rows and the machines
//! that fill them refer to each other (a claim draws ids from the `Demo`, which holds the rows).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::ids::{iso, Rng};
use super::shapes;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::SubmissionRow;

pub const HOUR: i64 = 3_600_000;
pub const MIN: i64 = 60_000;
pub const SEC: i64 = 1_000;
pub const DAY: i64 = 24 * HOUR;

/// Everything that ends up in the file.
pub struct Demo {
    pub now: i64,
    pub rng: Rng,
    used_ids: HashSet<String>,
    pub sessions: Vec<Session>,
    pub subs: Vec<Sub>,
    pub journals: Vec<Run>,
    pub chunks: Vec<(String, i64, String)>,
    /// (path, key, data) appended once through `flue_event_stream_keys`.
    pub events: Vec<(String, String, String)>,
    pub receipts: Vec<(String, i64)>,
    /// Coordinator owner ids, indexed by the role constants of `flow`.
    pub procs: Vec<String>,
}

impl Demo {
    pub fn new(now: i64) -> Self {
        let mut rng = Rng::new(0x7475_726e_7363_6f70); // "turnscop"
        let procs = (0..6).map(|_| rng.uuid()).collect();
        Demo {
            now,
            rng,
            procs,
            used_ids: HashSet::new(),
            sessions: Vec::new(),
            subs: Vec::new(),
            journals: Vec::new(),
            chunks: Vec::new(),
            events: Vec::new(),
            receipts: Vec::new(),
        }
    }

    /// A fresh 8-hex entry id, unique over the whole file.
    pub fn entry_id(&mut self) -> String {
        loop {
            let id = self.rng.hex(8);
            if self.used_ids.insert(id.clone()) {
                return id;
            }
        }
    }

    pub fn uuid(&mut self) -> String {
        self.rng.uuid()
    }

    pub fn jitter(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.range(lo, hi)
    }

    /// An Anthropic (`toolu_01…`) or OpenAI (`call_…|fc_…`) tool call id.
    pub fn call_id(&mut self, model: &shapes::Model) -> String {
        if model.provider == "openai" {
            format!("call_{}|fc_{}", self.rng.base62(24), self.rng.hex(50))
        } else {
            format!("toolu_01{}", self.rng.base62(22))
        }
    }

    pub fn response_id(&mut self, model: &shapes::Model) -> String {
        if model.provider == "openai" {
            format!("resp_{}", self.rng.hex(50))
        } else {
            format!("msg_01{}", self.rng.base62(22))
        }
    }

    pub fn signature(&mut self) -> String {
        format!("Eq{}", self.rng.base62(86))
    }

    /// Append the terminal event of a direct submission to `agents/<agent>/<id>` (the trigger
    /// copies it into the entries table) and return its offset string.
    pub fn append_event(
        &mut self,
        agent: &str,
        instance: &str,
        key: String,
        data: &Value,
    ) -> String {
        let path = format!("agents/{agent}/{instance}");
        let seq = self.events.iter().filter(|(p, _, _)| *p == path).count();
        self.events.push((path, key, data.to_string()));
        format!("0000000000000000_{seq:016}")
    }

    pub fn push_session(&mut self, s: Session) {
        self.sessions.push(s);
    }
}

/// A session (`flue_sessions` row plus its entries) and its own clock.
pub struct Session {
    pub instance: String,
    pub agent: String,
    pub key: String,
    pub conv: String,
    pub aff: String,
    pub created: i64,
    pub updated: i64,
    pub leaf: Option<String>,
    pub children: Vec<Value>,
    /// (entry id, compact JSON) in append order; the index is the `position`.
    pub entries: Vec<(String, String)>,
    /// The session clock (ms): every append happens at or after it.
    pub t: i64,
    /// Usage of the responses of the operation in progress (for a direct prompt's result).
    pub usage: Vec<(shapes::Model, shapes::Tokens)>,
    /// Rough prompt size in tokens of the model context (drives realistic usage numbers).
    pub ctx: i64,
}

impl Session {
    /// A root session for `instance` whose clock starts at `t`. The session row itself is
    /// created (ids and `createdAt`) just before its first entry is appended.
    pub fn new(instance: &str, agent: &str, t: i64) -> Self {
        Self::with_key(
            instance,
            agent,
            &format!("[\"{instance}\",\"default\",\"default\"]"),
            t,
        )
    }

    pub fn with_key(instance: &str, agent: &str, key_json: &str, t: i64) -> Self {
        Session {
            instance: instance.to_string(),
            agent: agent.to_string(),
            key: format!("agent-session:{key_json}"),
            conv: String::new(),
            aff: String::new(),
            created: t,
            updated: t,
            leaf: None,
            children: Vec::new(),
            entries: Vec::new(),
            t,
            ctx: 2_400,
            usage: Vec::new(),
        }
    }

    /// Advance the clock by a random amount in `lo..=hi` ms and return it.
    pub fn tick(&mut self, d: &mut Demo, lo: i64, hi: i64) -> i64 {
        self.t += d.jitter(lo, hi);
        self.t
    }

    /// Jump the clock forward to `t` (never backwards).
    pub fn jump(&mut self, t: i64) {
        assert!(
            t >= self.t,
            "demo clock for {} would go backwards",
            self.instance
        );
        self.t = t;
    }

    /// Append a message entry at the current clock; returns its id.
    pub fn append(&mut self, d: &mut Demo, message: Value, extras: Vec<(&str, Value)>) -> String {
        let id = d.entry_id();
        let e = shapes::message_entry(&id, self.leaf.as_deref(), self.t, message, extras);
        self.push(d, id, e)
    }

    /// Append a prepared entry (its timestamp is the session clock).
    pub fn push(&mut self, d: &mut Demo, id: String, entry: Value) -> String {
        if self.entries.is_empty() {
            // get-or-create: the empty session is saved a few ms before the first entry.
            self.created = self.t - d.jitter(9, 25);
            self.conv = format!("conv_{}", d.rng.ulid(self.created - 1));
            self.aff = format!("aff_{}", d.rng.ulid(self.created));
        }
        let data = entry.to_string();
        self.ctx += data.len() as i64 / 4;
        self.entries.push((id.clone(), data));
        self.leaf = Some(id.clone());
        self.updated = self.t;
        id
    }

    /// The JSON of the entry `id` (for verbatim copies).
    pub fn entry(&self, id: &str) -> Value {
        let (_, data) = self
            .entries
            .iter()
            .find(|(e, _)| e == id)
            .expect("entry exists");
        serde_json::from_str(data).expect("valid entry")
    }

    /// Move the leaf (repair's `setLeaf`).
    pub fn set_leaf(&mut self, id: &str) {
        self.leaf = Some(id.to_string());
    }

    pub fn data(&self) -> String {
        shapes::session_data(
            &self.conv,
            &self.aff,
            self.leaf.as_deref(),
            &self.children,
            self.created,
            self.updated,
        )
        .to_string()
    }
}

// One `flue_agent_submissions` row and its lifecycle (spec §1.4–1.5): admission, claim, input
// application, attempt replacement, crash, settlement and the direct terminal outbox.

/// One `flue_agent_submissions` row.
#[derive(Debug, Clone)]
pub struct Sub {
    pub id: String,
    pub session_key: String,
    pub kind: &'static str,
    pub agent: String,
    pub instance: String,
    pub payload: Value,
    pub status: SubmissionStatus,
    pub accepted_at: i64,
    pub attempt_id: Option<String>,
    pub input_applied_at: Option<i64>,
    pub recovery_requested_at: Option<i64>,
    pub started_at: Option<i64>,
    pub settled_at: Option<i64>,
    pub error: Option<String>,
    pub attempt_count: i64,
    pub max_retry: i64,
    pub timeout_at: i64,
    pub owner_id: Option<String>,
    pub lease_expires_at: i64,
    pub terminal_event_key: Option<String>,
    pub terminal_event_json: Option<String>,
    pub terminal_event_offset: Option<String>,
    /// Dispatch input, or the direct prompt text.
    pub input: Value,
}

impl Sub {
    fn admitted(
        id: String,
        s: &Session,
        kind: &'static str,
        payload: Value,
        accepted: i64,
        input: Value,
    ) -> Self {
        Sub {
            id,
            session_key: s.key.clone(),
            kind,
            agent: s.agent.clone(),
            instance: s.instance.clone(),
            payload,
            status: SubmissionStatus::Queued,
            accepted_at: accepted,
            attempt_id: None,
            input_applied_at: None,
            recovery_requested_at: None,
            started_at: None,
            settled_at: None,
            error: None,
            attempt_count: 0,
            max_retry: 10,
            timeout_at: 0,
            owner_id: None,
            lease_expires_at: 0,
            terminal_event_key: None,
            terminal_event_json: None,
            terminal_event_offset: None,
            input,
        }
    }

    /// The row as turnscope reads it (`sequence` is the database's, given on insert).
    pub fn into_row(self) -> SubmissionRow {
        SubmissionRow {
            sequence: 0,
            payload: self.payload.to_string(),
            submission_id: self.id,
            session_key: self.session_key,
            kind: self.kind.to_string(),
            status: self.status,
            accepted_at: Some(self.accepted_at),
            attempt_id: self.attempt_id,
            input_applied_at: self.input_applied_at,
            recovery_requested_at: self.recovery_requested_at,
            started_at: self.started_at,
            settled_at: self.settled_at,
            error: self.error,
            attempt_count: self.attempt_count,
            max_retry: self.max_retry,
            timeout_at: self.timeout_at,
            owner_id: self.owner_id,
            lease_expires_at: self.lease_expires_at,
            terminal_key: self.terminal_event_key,
            terminal_event: self.terminal_event_json,
            terminal_offset: self.terminal_event_offset,
            stored_as: None,
            image_chunks: Vec::new(),
        }
    }

    /// Admit a dispatch at `accepted` (queued).
    pub fn dispatch(d: &mut Demo, s: &Session, input: Value, accepted: i64) -> Self {
        let id = d.uuid();
        let payload = shapes::dispatch_payload(&id, &s.agent, &s.instance, &input, accepted);
        Sub::admitted(id, s, "dispatch", payload, accepted, input)
    }

    /// Admit a direct prompt at `accepted` (queued).
    pub fn direct(d: &mut Demo, s: &Session, message: &str, accepted: i64) -> Self {
        let id = d.uuid();
        let payload = shapes::direct_payload(&id, &s.agent, &s.instance, message, accepted);
        Sub::admitted(id, s, "direct", payload, accepted, json!(message))
    }

    /// `claimSubmission` at `t` by `owner`.
    pub fn claim(&mut self, d: &mut Demo, t: i64, owner: &str) {
        self.status = SubmissionStatus::Running;
        self.attempt_id = Some(d.uuid());
        self.started_at = Some(t);
        self.attempt_count += 1;
        self.max_retry = 10;
        if self.timeout_at == 0 {
            self.timeout_at = t + HOUR;
        }
        self.owner_id = Some(owner.to_string());
        self.lease_expires_at = t + 30 * SEC;
    }

    /// `markSubmissionInputApplied` with the agent's durability (max attempts, timeout ms).
    pub fn apply_input(&mut self, t: i64, durability: (i64, i64)) {
        if self.input_applied_at.is_none() {
            self.input_applied_at = Some(t);
            self.max_retry = durability.0;
            self.timeout_at = self.started_at.expect("claimed") + durability.1;
        }
    }

    /// `replaceTurnJournalAttempt` (submission side) at `t`.
    pub fn replace(&mut self, d: &mut Demo, t: i64, owner: &str) -> String {
        let a = d.uuid();
        self.attempt_id = Some(a.clone());
        self.recovery_requested_at = None;
        self.started_at = Some(t);
        self.attempt_count += 1;
        self.owner_id = Some(owner.to_string());
        self.lease_expires_at = t + 30 * SEC;
        a
    }

    /// The process died at `crashed`: the last heartbeat renewed the lease to at most
    /// `crashed + 30 s` and at least `crashed + 20 s`; pick the value closest to `target`.
    pub fn crash(&mut self, crashed: i64, target: i64) {
        self.lease_expires_at = target.clamp(crashed + 20 * SEC, crashed + 30 * SEC);
    }

    /// Lease renewed by a live owner at `t` (the heartbeat).
    pub fn renew(&mut self, t: i64) {
        self.lease_expires_at = t + 30 * SEC;
    }

    /// The heartbeat renewed the lease every 10 s while the attempt ran, until `t`.
    fn heartbeat(&mut self, t: i64) {
        if let Some(st) = self.started_at {
            self.lease_expires_at = st + 30 * SEC + (t - st).max(0) / (10 * SEC) * (10 * SEC);
        }
    }

    pub fn complete(&mut self, t: i64) {
        self.heartbeat(t);
        self.status = SubmissionStatus::Settled;
        self.settled_at = Some(t);
        self.error = None;
    }

    pub fn fail(&mut self, t: i64, msg: &str) {
        self.heartbeat(t);
        self.status = SubmissionStatus::Settled;
        self.settled_at = Some(t);
        self.error = Some(msg.to_string());
    }

    /// Direct terminal outbox: reserve (status `terminalizing`).
    pub fn reserve(&mut self, event: &Value, t: i64) {
        self.heartbeat(t);
        self.status = SubmissionStatus::Terminalizing;
        self.terminal_event_key = Some(format!("direct-submission:{}:settled", self.id));
        self.terminal_event_json = Some(event.to_string());
    }

    /// Direct terminal outbox: reserve, append, record offset, finalize.
    pub fn settle_direct(&mut self, d: &mut Demo, event: &Value, t: i64) {
        self.reserve(event, t);
        let key = self.terminal_event_key.clone().expect("reserved");
        self.terminal_event_offset = Some(d.append_event(&self.agent, &self.instance, key, event));
        self.status = SubmissionStatus::Settled;
        self.settled_at = Some(t);
        self.error = None;
    }

    /// The dispatch input signal entry / direct user entry for this submission.
    pub fn input_entry(&self, d: &mut Demo, s: &mut Session) -> String {
        if self.kind == "dispatch" {
            let attrs = json!({
                "agent": self.agent, "id": self.instance, "session": "default",
                "dispatchId": self.id, "acceptedAt": iso(self.accepted_at)
            });
            let msg = shapes::dispatch_signal(&shapes::stable_pretty(&self.input), attrs, s.t);
            s.append(d, msg, vec![("dispatch", json!({"dispatchId": self.id}))])
        } else {
            let msg_ts = s.t - d.jitter(0, 3);
            let text = self.input.as_str().expect("direct message").to_string();
            s.append(
                d,
                shapes::user_text(&text, msg_ts),
                vec![("directSubmissionId", json!(self.id))],
            )
        }
    }
}

// One `flue_agent_turn_journals` row, evolved through the runtime's journal writes (spec
// §3.2–3.4): begin, provider started, tool request recorded, checkpoint ready, commit, stream
// consumed, attempt replacement.

/// One `flue_agent_turn_journals` row, evolved through the runtime's journal writes.
#[derive(Debug, Clone)]
pub struct Run {
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
    pub fn begin(d: &mut Demo, sub: &Sub, t: i64, checkpoint: Option<&str>) -> Run {
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
    pub fn next_turn(&mut self, d: &mut Demo, t: i64, checkpoint: Option<&str>) {
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

    pub fn provider_started(&mut self, t: i64) {
        self.phase = "provider_started";
        self.write(t);
        self.stream_key = Some(format!(
            "{}:{}:{}",
            self.submission_id, self.turn_id, self.attempt_id
        ));
    }

    pub fn tool_request(&mut self, t: i64, assistant_id: &str, calls: &[Value]) {
        self.phase = "tool_request_recorded";
        self.write(t);
        self.checkpoint_leaf_id = Some(assistant_id.to_string());
        self.tool_request_json = Some(json!({ "toolCalls": calls }).to_string());
    }

    /// "checkpointReady" after a tool batch, or the repair's phase reset.
    pub fn checkpoint_ready(&mut self, t: i64, last_result: &str) {
        self.phase = "before_provider";
        self.write(t);
        self.checkpoint_leaf_id = Some(last_result.to_string());
    }

    pub fn commit(&mut self, t: i64, leaf: &str) {
        self.phase = "committed";
        self.write(t);
        self.committed = true;
        self.committed_leaf_id = Some(leaf.to_string());
    }

    pub fn mark_stream_consumed(&mut self, t: i64) {
        self.write(t);
        self.stream_consumed_at = Some(t);
    }

    /// `replaceTurnJournalAttempt` (journal side; a no-op on a committed journal).
    pub fn replace_attempt(&mut self, t: i64, attempt: &str) {
        if !self.committed {
            self.attempt_id = attempt.to_string();
            self.write(t);
        }
    }
}
