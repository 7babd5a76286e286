//! [`JournalBuilder`]: a flue 1.0.0-beta.7 journal (SQLite) of a given shape, for the tests that
//! need "a session of so many turns", "a running submission whose lease expired", "a journal at
//! this phase" rather than one of the demo's recovery scenarios.
//!
//! It writes only valid rows: the runtime's schema (`turnscope_demo::DDL`, schema version 3, WAL),
//! entries chained by `parentId` in the runtime's key order (`turnscope_demo::shapes`), session
//! data naming the last entry as the leaf, and submission, turn-journal and stream-chunk rows
//! through the demo's own writers (`turnscope_demo::insert`). Tests that damage rows on purpose
//! (malformed JSON, broken trees, odd cells, another schema: `damaged.rs`, `damaged_props.rs`,
//! `hostile.rs` and the like) keep writing their own SQL.
//!
//! ```no_run
//! # use serde_json::json;
//! # use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};
//! let t = 1_767_225_600_000;
//! let mut s = SessionBuilder::for_instance("support-1", t);
//! s.message("aaaa0001", json!({"role": "user", "content": "hi", "timestamp": t}));
//! let sub = Submission::dispatch("sub-1", s.key(), "support", "support-1", &json!({}), t)
//!     .claimed("attempt-1", "worker-1", t + 1, t + 30_000);
//! JournalBuilder::new().session(s).submission(sub).write("journal.db".as_ref()).unwrap();
//! ```

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::{json, Value};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::SubmissionRow;
use turnscope_core::journal::time::ms_from_iso;
use turnscope_demo::build::Run;
use turnscope_demo::insert::{insert_submissions, Batch, Inserts, SessionRow, SubRow};
use turnscope_demo::shapes;

/// The rows of a journal, written by [`write`](JournalBuilder::write) as a new file or added by
/// [`append_to`](JournalBuilder::append_to) to an existing one, in one transaction: sessions and
/// their entries, then submissions (in the order given: `sequence` is admission order), turn
/// journals and stream chunks.
#[derive(Default)]
pub struct JournalBuilder {
    sessions: Vec<SessionBuilder>,
    submissions: Vec<SubmissionRow>,
    journals: Vec<Run>,
    chunks: Vec<(String, i64, String)>,
}

impl JournalBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A session and its entries (or, from [`SessionBuilder::continuing`], entries added to a
    /// session of the file).
    pub fn session(&mut self, s: SessionBuilder) -> &mut Self {
        self.sessions.push(s);
        self
    }

    pub fn submission(&mut self, s: Submission) -> &mut Self {
        self.submissions.push(s.row);
        self
    }

    pub fn turn_journal(&mut self, j: TurnJournal) -> &mut Self {
        self.journals.push(j.0);
        self
    }

    /// One `flue_agent_stream_chunks` segment (a body from `turnscope_demo::shapes::chunk_body`).
    pub fn stream_chunk(
        &mut self,
        stream_key: &str,
        segment_index: i64,
        body: String,
    ) -> &mut Self {
        self.chunks
            .push((stream_key.to_string(), segment_index, body));
        self
    }

    /// A new journal at `path`: the runtime's schema in WAL mode, then these rows.
    pub fn write(&self, path: &Path) -> rusqlite::Result<()> {
        turnscope_demo::synthetic::write_empty_journal(path)?;
        let mut conn = Connection::open(path)?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        assert_eq!(mode, "wal");
        self.insert(&mut conn)
    }

    /// These rows added to the journal at `path` (the demo, a fixture, a scale database; or one a
    /// TUI under test has open: a write as the runtime's would be, in one transaction).
    pub fn append_to(&self, path: &Path) -> rusqlite::Result<()> {
        self.insert(&mut Connection::open(path)?)
    }

    fn insert(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        let tx = conn.transaction()?;
        {
            let mut rows = Inserts::new(&tx)?;
            for s in &self.sessions {
                match &s.existing {
                    None => {
                        rows.batch(&batch(Some(SessionRow {
                            key: s.key.clone(),
                            data: s.data().to_string(),
                            entries: s.entries.clone(),
                        })))?;
                    }
                    Some(existing) => s.append_to_existing(&tx, existing)?,
                }
            }
            let subs: Vec<SubRow> = self
                .submissions
                .iter()
                .enumerate()
                .map(|(i, row)| SubRow {
                    key: (row.accepted_at.unwrap_or(0), 0, i),
                    row: row.clone(),
                })
                .collect();
            insert_submissions(&tx, &subs, &mut turnscope_store::progress::Unwatched)?;
            let mut rest = batch(None);
            rest.journals = self.journals.clone();
            rest.chunks = self.chunks.clone();
            rows.batch(&rest)?;
        }
        tx.commit()
    }
}

fn batch(session: Option<SessionRow>) -> Batch {
    Batch {
        session,
        subs: Vec::new(),
        journals: Vec::new(),
        chunks: Vec::new(),
        events: Vec::new(),
        whale: None,
    }
}

/// A session already in the file that a [`SessionBuilder`] continues.
struct Existing {
    data: Value,
    first_position: i64,
}

/// A `flue_sessions` row and its entries. Each message is appended under the current leaf and
/// becomes the leaf (as the runtime's `appendMessage` does); [`branch`](Self::branch) appends
/// off the path and leaves the leaf where it is. Entries are timed by the session's clock
/// ([`at`](Self::at)).
pub struct SessionBuilder {
    key: String,
    conversation_id: String,
    affinity_key: String,
    created_at: i64,
    clock: i64,
    leaf: Option<String>,
    entries: Vec<(String, String)>,
    /// The ids of `entries`, each once.
    ids: HashSet<String>,
    existing: Option<Existing>,
}

impl SessionBuilder {
    /// A new session under `key` (`agent-session:[…]`), created at `created_at`, whose clock
    /// starts there.
    pub fn new(key: impl Into<String>, created_at: i64) -> Self {
        SessionBuilder {
            key: key.into(),
            conversation_id: "conv_01KTESTK1T000000000000000".into(),
            affinity_key: "aff_01KTESTK1T000000000000000".into(),
            created_at,
            clock: created_at,
            leaf: None,
            entries: Vec::new(),
            ids: HashSet::new(),
            existing: None,
        }
    }

    /// The default session of agent instance `instance`: `agent-session:["instance","default","default"]`.
    pub fn for_instance(instance: &str, created_at: i64) -> Self {
        Self::new(
            format!("agent-session:{}", json!([instance, "default", "default"])),
            created_at,
        )
    }

    /// The session's `conversationId` and `affinityKey`.
    pub fn ids(mut self, conversation_id: &str, affinity_key: &str) -> Self {
        self.conversation_id = conversation_id.to_string();
        self.affinity_key = affinity_key.to_string();
        self
    }

    /// The session `key` of the journal `conn` is open on, continued: new entries go after its
    /// last position, the first under its leaf, and on writing its `leafId` moves to the last
    /// one (the rest of its data is kept). The clock starts at its `updatedAt`.
    pub fn continuing(conn: &Connection, key: &str) -> rusqlite::Result<Self> {
        let data: String =
            conn.query_row("SELECT data FROM flue_sessions WHERE id = ?1", [key], |r| {
                r.get(0)
            })?;
        let first_position: i64 = conn.query_row(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM flue_session_entries WHERE session_id = ?1",
            [key],
            |r| r.get(0),
        )?;
        let data: Value = serde_json::from_str(&data)
            .unwrap_or_else(|e| panic!("{key}: session data is not JSON ({e}): not a valid row"));
        let time = |k: &str| data[k].as_str().and_then(ms_from_iso).unwrap_or(0);
        let mut s = Self::new(key, time("createdAt"));
        s.clock = time("updatedAt");
        s.leaf = data["leafId"].as_str().map(str::to_string);
        s.existing = Some(Existing {
            data,
            first_position,
        });
        Ok(s)
    }

    /// Time the entries that follow at `ms`.
    pub fn at(&mut self, ms: i64) -> &mut Self {
        self.clock = ms;
        self
    }

    /// A message entry under the leaf; it becomes the leaf.
    pub fn message(&mut self, id: &str, message: Value) -> &mut Self {
        self.message_with(id, message, Vec::new())
    }

    /// [`message`](Self::message) with the entry's optional top-level keys after `message`
    /// (`dispatch`, `directSubmissionId`).
    pub fn message_with(
        &mut self,
        id: &str,
        message: Value,
        extras: Vec<(&str, Value)>,
    ) -> &mut Self {
        let parent = self.leaf.take();
        self.put(id, parent.as_deref(), message, extras);
        self.leaf = Some(id.to_string());
        self
    }

    /// A message entry under `parent`, off the active path: the leaf stays.
    pub fn branch(&mut self, parent: &str, id: &str, message: Value) -> &mut Self {
        self.put(id, Some(parent), message, Vec::new());
        self
    }

    fn put(&mut self, id: &str, parent: Option<&str>, message: Value, extras: Vec<(&str, Value)>) {
        assert!(
            self.ids.insert(id.to_string()),
            "{}: entry id {id} twice",
            self.key
        );
        let entry = shapes::message_entry(id, parent, self.clock, message, extras);
        self.entries.push((id.to_string(), entry.to_string()));
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The entries this builder adds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The session row's data (§2.2): updated at the clock.
    fn data(&self) -> Value {
        shapes::session_data(
            &self.conversation_id,
            &self.affinity_key,
            self.leaf.as_deref(),
            &[],
            self.created_at,
            self.clock.max(self.created_at),
        )
    }

    fn append_to_existing(&self, c: &Connection, existing: &Existing) -> rusqlite::Result<()> {
        let mut ins = c.prepare(
            "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (i, (id, data)) in self.entries.iter().enumerate() {
            ins.execute(params![
                self.key,
                id,
                existing.first_position + i as i64,
                data
            ])?;
        }
        let mut data = existing.data.clone();
        data["leafId"] = json!(self.leaf);
        c.execute(
            "UPDATE flue_sessions SET data = ?2 WHERE id = ?1",
            params![self.key, data.to_string()],
        )?;
        Ok(())
    }
}

/// A `flue_agent_submissions` row, admitted queued, then moved through the runtime's lifecycle
/// (claimed, input applied, settled).
#[derive(Debug, Clone)]
pub struct Submission {
    row: SubmissionRow,
}

impl Submission {
    fn admitted(id: &str, session_key: &str, kind: &str, payload: Value, accepted_at: i64) -> Self {
        Submission {
            row: SubmissionRow {
                sequence: 0,
                submission_id: id.to_string(),
                session_key: session_key.to_string(),
                kind: kind.to_string(),
                payload: payload.to_string(),
                status: SubmissionStatus::Queued,
                accepted_at: Some(accepted_at),
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
                terminal_key: None,
                terminal_event: None,
                terminal_offset: None,
                stored_as: None,
                image_chunks: Vec::new(),
            },
        }
    }

    /// A queued dispatch of `input` to `agent`'s instance `instance`, accepted at `accepted_at`.
    pub fn dispatch(
        id: &str,
        session_key: &str,
        agent: &str,
        instance: &str,
        input: &Value,
        accepted_at: i64,
    ) -> Self {
        let payload = shapes::dispatch_payload(id, agent, instance, input, accepted_at);
        Self::admitted(id, session_key, "dispatch", payload, accepted_at)
    }

    /// A queued direct prompt `message`.
    pub fn direct(
        id: &str,
        session_key: &str,
        agent: &str,
        instance: &str,
        message: &str,
        accepted_at: i64,
    ) -> Self {
        let payload = shapes::direct_payload(id, agent, instance, message, accepted_at);
        Self::admitted(id, session_key, "direct", payload, accepted_at)
    }

    /// `claimSubmission`: running under `attempt_id` by `owner` from `started_at`, one more
    /// attempt counted, the lease until `lease_expires_at` (in the past: a crashed owner), the
    /// deadline an hour on unless set.
    pub fn claimed(
        mut self,
        attempt_id: &str,
        owner: &str,
        started_at: i64,
        lease_expires_at: i64,
    ) -> Self {
        let r = &mut self.row;
        r.status = SubmissionStatus::Running;
        r.attempt_id = Some(attempt_id.to_string());
        r.owner_id = Some(owner.to_string());
        r.started_at = Some(started_at);
        r.attempt_count += 1;
        r.lease_expires_at = lease_expires_at;
        if r.timeout_at == 0 {
            r.timeout_at = started_at + 3_600_000;
        }
        self
    }

    /// `markSubmissionInputApplied` at `at`.
    pub fn input_applied(mut self, at: i64) -> Self {
        self.row.input_applied_at = Some(at);
        self
    }

    /// The deadline (`timeout_at`).
    pub fn timeout_at(mut self, at: i64) -> Self {
        self.row.timeout_at = at;
        self
    }

    /// The attempts made and allowed.
    pub fn attempts(mut self, count: i64, max_retry: i64) -> Self {
        self.row.attempt_count = count;
        self.row.max_retry = max_retry;
        self
    }

    /// A recovery requested at `at` (the runtime's reconciler asked for a new attempt).
    pub fn recovery_requested(mut self, at: i64) -> Self {
        self.row.recovery_requested_at = Some(at);
        self
    }

    /// Settled at `at`: completed, or failed with `error` (the serialized error).
    pub fn settled(mut self, at: i64, error: Option<&str>) -> Self {
        self.row.status = SubmissionStatus::Settled;
        self.row.settled_at = Some(at);
        self.row.error = error.map(str::to_string);
        self
    }

    pub fn id(&self) -> &str {
        &self.row.submission_id
    }
}

/// A `flue_agent_turn_journals` row, through the runtime's journal writes (the demo's [`Run`]):
/// begun at `before_provider`, each later write one revision more.
#[derive(Debug, Clone)]
pub struct TurnJournal(Run);

impl TurnJournal {
    /// `beginTurnJournal` for the claimed `sub`'s current attempt at `at` (revision 1),
    /// checkpointed at `checkpoint_leaf`.
    pub fn begin(
        sub: &Submission,
        operation_id: &str,
        turn_id: &str,
        at: i64,
        checkpoint_leaf: Option<&str>,
    ) -> Self {
        let r = &sub.row;
        TurnJournal(Run {
            submission_id: r.submission_id.clone(),
            session_key: r.session_key.clone(),
            kind: if r.kind == "direct" {
                "direct"
            } else {
                "dispatch"
            },
            attempt_id: r
                .attempt_id
                .clone()
                .expect("a turn journal belongs to a claimed submission"),
            operation_id: operation_id.to_string(),
            turn_id: turn_id.to_string(),
            phase: "before_provider",
            revision: 1,
            created_at: at,
            updated_at: at,
            checkpoint_leaf_id: checkpoint_leaf.map(str::to_string),
            tool_request_json: None,
            stream_key: None,
            stream_consumed_at: None,
            committed: false,
            committed_leaf_id: None,
        })
    }

    /// `provider_started`, with the stream key `submission:turn:attempt`.
    pub fn provider_started(mut self, at: i64) -> Self {
        self.0.provider_started(at);
        self
    }

    /// `tool_request_recorded`: the assistant entry and its tool calls (`toolCall` blocks).
    pub fn tool_request(mut self, at: i64, assistant_id: &str, calls: &[Value]) -> Self {
        self.0.tool_request(at, assistant_id, calls);
        self
    }

    /// Back to `before_provider` after a tool batch, checkpointed at its last result.
    pub fn checkpoint_ready(mut self, at: i64, last_result: &str) -> Self {
        self.0.checkpoint_ready(at, last_result);
        self
    }

    /// `committed` at `leaf`.
    pub fn commit(mut self, at: i64, leaf: &str) -> Self {
        self.0.commit(at, leaf);
        self
    }

    pub fn stream_consumed(mut self, at: i64) -> Self {
        self.0.mark_stream_consumed(at);
        self
    }

    pub fn stream_key(&self) -> Option<&str> {
        self.0.stream_key.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_core::journal::status::JournalPhase;
    use turnscope_engine::report::SubmissionReport;
    use turnscope_store::{JournalStore, RowFilter, SqliteStore};

    const T: i64 = 1_767_225_600_000;

    fn assistant(calls: &[Value]) -> Value {
        shapes::assistant(
            &shapes::HAIKU,
            calls.to_vec(),
            shapes::usage(&shapes::HAIKU, shapes::Tokens::new(10, 2, 0, 0)),
            "toolUse",
            T,
            None,
            None,
        )
    }

    /// A crash mid tool batch: the input, an assistant with two calls, one result; the
    /// submission running under an expired lease, its journal at `tool_request_recorded`, a
    /// stream chunk. Read back, it is what the runtime would conclude on such rows.
    #[test]
    fn a_crash_mid_batch_reads_back_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("j.db");
        let mut s = SessionBuilder::for_instance("kit-1", T);
        let sub = Submission::dispatch("sub-kit-1", s.key(), "kit", "kit-1", &json!({"q": 1}), T)
            .claimed("att-1", "worker-1", T + 10, T + 30_000)
            .input_applied(T + 20);
        s.at(T + 20).message_with(
            "in000001",
            shapes::dispatch_signal(
                "{\n  \"q\": 1\n}",
                json!({"dispatchId": "sub-kit-1"}),
                T + 20,
            ),
            vec![("dispatch", json!({"dispatchId": "sub-kit-1"}))],
        );
        let calls = [
            shapes::tool_call("call_1", "fetch", json!({})),
            shapes::tool_call("call_2", "fetch", json!({})),
        ];
        s.at(T + 30).message("as000001", assistant(&calls));
        s.branch(
            "as000001",
            "ab000001",
            shapes::tool_result("call_1", "fetch", "old", None, false, T),
        );
        s.at(T + 40).message(
            "re000001",
            shapes::tool_result("call_1", "fetch", "ok", Some(json!({})), false, T + 40),
        );
        assert_eq!(s.leaf(), Some("re000001"));
        let journal = TurnJournal::begin(&sub, "op_1", "turn_1", T + 25, Some("in000001"))
            .provider_started(T + 26)
            .tool_request(T + 30, "as000001", &calls);
        let key = journal.stream_key().unwrap().to_string();
        let mut b = JournalBuilder::new();
        b.session(s)
            .submission(sub)
            .turn_journal(journal)
            .stream_chunk(&key, 0, shapes::chunk_body(&["Wor", "king"], &json!({})));
        b.write(&db).unwrap();

        let store = SqliteStore::open(&db).unwrap();
        let rows = store
            .list_submissions(RowFilter::Expired, T + 60_000)
            .unwrap();
        assert_eq!(rows.len(), 1);
        let r = SubmissionReport::load(&store, "sub-kit-1", Some(200_000), T + 60_000).unwrap();
        let batch = r
            .classification()
            .trailing_partial_batch
            .as_ref()
            .expect("a partial batch");
        assert_eq!(batch.entry_id, "as000001");
        assert_eq!(batch.tool_calls.len(), 2);
        let journal = r.bundle.journal.as_ref().unwrap();
        assert_eq!(journal.phase, JournalPhase::ToolRequestRecorded);
        assert_eq!(journal.revision, 3);
        assert_eq!(r.bundle.stream_chunks.len(), 1);
        let session = r.bundle.session.as_ref().unwrap();
        assert_eq!(session.leaf_id.as_deref(), Some("re000001"));
        assert_eq!(session.entries.len(), 4);
        let conn = Connection::open(&db).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    /// Continuing a session of an existing journal: entries after its last position, the first
    /// under its leaf, the leaf moved, nothing else of its data changed.
    #[test]
    fn a_continued_session_grows_from_its_leaf() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("j.db");
        let mut s = SessionBuilder::for_instance("kit-2", T).ids("conv_x", "aff_x");
        s.message("u0000001", shapes::user_string("hi", T));
        let sub = Submission::direct("sub-kit-2", s.key(), "kit", "kit-2", "hi", T)
            .claimed("att-1", "w", T, T + 1)
            .settled(T + 5, None);
        JournalBuilder::new()
            .session(s)
            .submission(sub)
            .write(&db)
            .unwrap();
        let key = r#"agent-session:["kit-2","default","default"]"#;
        let conn = Connection::open(&db).unwrap();
        let mut more = SessionBuilder::continuing(&conn, key).unwrap();
        assert_eq!(more.leaf(), Some("u0000001"));
        more.at(T + 9)
            .message("u0000002", shapes::user_string("still there?", T + 9));
        JournalBuilder::new().session(more).append_to(&db).unwrap();
        let rows: Vec<(String, i64, String)> = conn
            .prepare("SELECT entry_id, position, data FROM flue_session_entries ORDER BY position")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].0.as_str(), rows[1].1), ("u0000002", 1));
        let e: Value = serde_json::from_str(&rows[1].2).unwrap();
        assert_eq!(e["parentId"], "u0000001");
        let data: String = conn
            .query_row("SELECT data FROM flue_sessions", [], |r| r.get(0))
            .unwrap();
        let data: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(data["leafId"], "u0000002");
        assert_eq!(data["conversationId"], "conv_x");
        let store = SqliteStore::open(&db).unwrap();
        let row = &store.list_submissions(RowFilter::All, T).unwrap()[0];
        assert_eq!(row.status, SubmissionStatus::Settled);
    }
}
