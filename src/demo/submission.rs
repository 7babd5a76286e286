//! One `flue_agent_submissions` row and its lifecycle (spec §1.4–1.5): admission, claim, input
//! application, attempt replacement, crash, settlement and the direct terminal outbox.

use serde_json::{json, Value};

use super::build::{Demo, Session, HOUR, SEC};
use super::ids::iso;
use super::shapes;

/// One `flue_agent_submissions` row.
#[derive(Debug, Clone)]
pub(crate) struct Sub {
    pub id: String,
    pub session_key: String,
    pub kind: &'static str,
    pub agent: String,
    pub instance: String,
    pub payload: Value,
    pub status: &'static str,
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
            status: "queued",
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

    /// Admit a dispatch at `accepted` (queued).
    pub(crate) fn dispatch(d: &mut Demo, s: &Session, input: Value, accepted: i64) -> Self {
        let id = d.uuid();
        let payload = shapes::dispatch_payload(&id, &s.agent, &s.instance, &input, accepted);
        Sub::admitted(id, s, "dispatch", payload, accepted, input)
    }

    /// Admit a direct prompt at `accepted` (queued).
    pub(crate) fn direct(d: &mut Demo, s: &Session, message: &str, accepted: i64) -> Self {
        let id = d.uuid();
        let payload = shapes::direct_payload(&id, &s.agent, &s.instance, message, accepted);
        Sub::admitted(id, s, "direct", payload, accepted, json!(message))
    }

    /// `claimSubmission` at `t` by `owner`.
    pub(crate) fn claim(&mut self, d: &mut Demo, t: i64, owner: &str) {
        self.status = "running";
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
    pub(crate) fn apply_input(&mut self, t: i64, durability: (i64, i64)) {
        if self.input_applied_at.is_none() {
            self.input_applied_at = Some(t);
            self.max_retry = durability.0;
            self.timeout_at = self.started_at.expect("claimed") + durability.1;
        }
    }

    /// `replaceTurnJournalAttempt` (submission side) at `t`.
    pub(crate) fn replace(&mut self, d: &mut Demo, t: i64, owner: &str) -> String {
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
    pub(crate) fn crash(&mut self, crashed: i64, target: i64) {
        self.lease_expires_at = target.clamp(crashed + 20 * SEC, crashed + 30 * SEC);
    }

    /// Lease renewed by a live owner at `t` (the heartbeat).
    pub(crate) fn renew(&mut self, t: i64) {
        self.lease_expires_at = t + 30 * SEC;
    }

    /// The heartbeat renewed the lease every 10 s while the attempt ran, until `t`.
    fn heartbeat(&mut self, t: i64) {
        if let Some(st) = self.started_at {
            self.lease_expires_at = st + 30 * SEC + (t - st).max(0) / (10 * SEC) * (10 * SEC);
        }
    }

    pub(crate) fn complete(&mut self, t: i64) {
        self.heartbeat(t);
        self.status = "settled";
        self.settled_at = Some(t);
        self.error = None;
    }

    pub(crate) fn fail(&mut self, t: i64, msg: &str) {
        self.heartbeat(t);
        self.status = "settled";
        self.settled_at = Some(t);
        self.error = Some(msg.to_string());
    }

    /// Direct terminal outbox: reserve (status `terminalizing`).
    pub(crate) fn reserve(&mut self, event: &Value, t: i64) {
        self.heartbeat(t);
        self.status = "terminalizing";
        self.terminal_event_key = Some(format!("direct-submission:{}:settled", self.id));
        self.terminal_event_json = Some(event.to_string());
    }

    /// Direct terminal outbox: reserve, append, record offset, finalize.
    pub(crate) fn settle_direct(&mut self, d: &mut Demo, event: &Value, t: i64) {
        self.reserve(event, t);
        let key = self.terminal_event_key.clone().expect("reserved");
        self.terminal_event_offset = Some(d.append_event(&self.agent, &self.instance, key, event));
        self.status = "settled";
        self.settled_at = Some(t);
        self.error = None;
    }

    /// The dispatch input signal entry / direct user entry for this submission.
    pub(crate) fn input_entry(&self, d: &mut Demo, s: &mut Session) -> String {
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
