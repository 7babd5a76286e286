//! In-memory rows of the demo database and the small state machines that fill them the way the
//! runtime would: [`Session`] (append-only entry tree, §2), [`Sub`] (submission row lifecycle,
//! §1.4–1.5) and [`Run`] (turn journal writes, §3.2–3.4).

use std::collections::HashSet;

use serde_json::Value;

use super::ids::Rng;
use super::shapes;

pub(crate) const HOUR: i64 = 3_600_000;
pub(crate) const MIN: i64 = 60_000;
pub(crate) const SEC: i64 = 1_000;
pub(crate) const DAY: i64 = 24 * HOUR;

/// Everything that ends up in the file.
pub(crate) struct Demo {
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
    pub(crate) fn new(now: i64) -> Self {
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
    pub(crate) fn entry_id(&mut self) -> String {
        loop {
            let id = self.rng.hex(8);
            if self.used_ids.insert(id.clone()) {
                return id;
            }
        }
    }

    pub(crate) fn uuid(&mut self) -> String {
        self.rng.uuid()
    }

    pub(crate) fn jitter(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.range(lo, hi)
    }

    /// An Anthropic (`toolu_01…`) or OpenAI (`call_…|fc_…`) tool call id.
    pub(crate) fn call_id(&mut self, model: &shapes::Model) -> String {
        if model.provider == "openai" {
            format!("call_{}|fc_{}", self.rng.base62(24), self.rng.hex(50))
        } else {
            format!("toolu_01{}", self.rng.base62(22))
        }
    }

    pub(crate) fn response_id(&mut self, model: &shapes::Model) -> String {
        if model.provider == "openai" {
            format!("resp_{}", self.rng.hex(50))
        } else {
            format!("msg_01{}", self.rng.base62(22))
        }
    }

    pub(crate) fn signature(&mut self) -> String {
        format!("Eq{}", self.rng.base62(86))
    }

    /// Append the terminal event of a direct submission to `agents/<agent>/<id>` (the trigger
    /// copies it into the entries table) and return its offset string.
    pub(crate) fn append_event(
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

    pub(crate) fn push_session(&mut self, s: Session) {
        self.sessions.push(s);
    }
}

/// A session (`flue_sessions` row plus its entries) and its own clock.
pub(crate) struct Session {
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
    pub(crate) fn new(instance: &str, agent: &str, t: i64) -> Self {
        Self::with_key(
            instance,
            agent,
            &format!("[\"{instance}\",\"default\",\"default\"]"),
            t,
        )
    }

    pub(crate) fn with_key(instance: &str, agent: &str, key_json: &str, t: i64) -> Self {
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
    pub(crate) fn tick(&mut self, d: &mut Demo, lo: i64, hi: i64) -> i64 {
        self.t += d.jitter(lo, hi);
        self.t
    }

    /// Jump the clock forward to `t` (never backwards).
    pub(crate) fn jump(&mut self, t: i64) {
        assert!(
            t >= self.t,
            "demo clock for {} would go backwards",
            self.instance
        );
        self.t = t;
    }

    /// Append a message entry at the current clock; returns its id.
    pub(crate) fn append(
        &mut self,
        d: &mut Demo,
        message: Value,
        extras: Vec<(&str, Value)>,
    ) -> String {
        let id = d.entry_id();
        let e = shapes::message_entry(&id, self.leaf.as_deref(), self.t, message, extras);
        self.push(d, id, e)
    }

    /// Append a prepared entry (its timestamp is the session clock).
    pub(crate) fn push(&mut self, d: &mut Demo, id: String, entry: Value) -> String {
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
    pub(crate) fn entry(&self, id: &str) -> Value {
        let (_, data) = self
            .entries
            .iter()
            .find(|(e, _)| e == id)
            .expect("entry exists");
        serde_json::from_str(data).expect("valid entry")
    }

    /// Move the leaf (repair's `setLeaf`).
    pub(crate) fn set_leaf(&mut self, id: &str) {
        self.leaf = Some(id.to_string());
    }

    pub(crate) fn data(&self) -> String {
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

pub(crate) use super::journal::Run;
pub(crate) use super::submission::Sub;
