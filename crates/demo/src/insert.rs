//! Rows as the demo and the scale generator (`turnscope-bench`) hand them to the writer, and the prepared
//! inserts that put them in the file (same statements as the demo's `insert_all`).

use std::collections::HashMap;

use rusqlite::{params, Connection, Statement};

use crate::build::{Run, Sub};
use turnscope_core::journal::submission_rows::SubmissionRow;

/// One `flue_agent_submissions` row, ready to insert: the row as turnscope reads it back, and
/// the order it is inserted in (accepted at, session, position in the session).
pub struct SubRow {
    pub key: (i64, usize, usize),
    pub row: SubmissionRow,
}

impl SubRow {
    pub fn new(s: Sub, session: usize, local: usize) -> SubRow {
        SubRow {
            key: (s.accepted_at, session, local),
            row: s.into_row(),
        }
    }
}

/// A `flue_sessions` row and its entries ((entry id, data) in position order).
pub struct SessionRow {
    pub key: String,
    pub data: String,
    pub entries: Vec<(String, String)>,
}

/// Everything one session contributes to the file.
pub struct Batch {
    /// The session row, when the session has entries.
    pub session: Option<SessionRow>,
    pub subs: Vec<SubRow>,
    pub journals: Vec<Run>,
    pub chunks: Vec<(String, i64, String)>,
    pub events: Vec<(String, String, String)>,
    pub whale: Option<(String, String)>,
}

/// Prepared inserts of everything but submissions.
pub struct Inserts<'c> {
    session: Statement<'c>,
    entry: Statement<'c>,
    journal: Statement<'c>,
    chunk: Statement<'c>,
    stream: Statement<'c>,
    key: Statement<'c>,
}

impl<'c> Inserts<'c> {
    pub fn new(c: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Inserts {
            session: c.prepare("INSERT INTO flue_sessions (id, data) VALUES (?1, ?2)")?,
            entry: c.prepare(
                "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
            )?,
            journal: c.prepare(JOURNAL_INSERT)?,
            chunk: c.prepare(
                "INSERT INTO flue_agent_stream_chunks (stream_key, segment_index, body) VALUES (?1, ?2, ?3)",
            )?,
            stream: c.prepare("INSERT OR IGNORE INTO flue_event_streams (path) VALUES (?1)")?,
            key: c.prepare(
                "INSERT INTO flue_event_stream_keys (path, key, seq, data) VALUES (?1, ?2, ?3, ?4)",
            )?,
        })
    }

    /// Insert a batch; returns (entries, bytes of entry data).
    pub fn batch(&mut self, b: &Batch) -> rusqlite::Result<(usize, usize)> {
        let mut n = (0, 0);
        if let Some(row) = &b.session {
            self.session.execute(params![row.key, row.data])?;
            for (pos, (id, data)) in row.entries.iter().enumerate() {
                self.entry.execute(params![row.key, id, pos as i64, data])?;
                n.1 += data.len();
            }
            n.0 = row.entries.len();
        }
        for j in &b.journals {
            insert_journal(&mut self.journal, j)?;
        }
        for (key, idx, body) in &b.chunks {
            self.chunk.execute(params![key, idx, body])?;
        }
        // Each session's events go to its own instance's stream, so sequence numbers restart here
        // exactly as `Demo::append_event` numbered them.
        let mut seq: HashMap<&str, i64> = HashMap::new();
        for (path, key, data) in &b.events {
            self.stream.execute(params![path])?;
            let s = seq.entry(path.as_str()).or_insert(0);
            self.key.execute(params![path, key, *s, data])?;
            *s += 1;
        }
        Ok(n)
    }
}

/// `INSERT` of one `flue_agent_turn_journals` row; see [`insert_journal`].
pub const JOURNAL_INSERT: &str =
    "INSERT INTO flue_agent_turn_journals (submission_id, session_key, kind, attempt_id, operation_id, \
     turn_id, phase, revision, created_at, updated_at, checkpoint_leaf_id, tool_request_json, stream_key, \
     stream_consumed_at, committed, committed_leaf_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
     ?11, ?12, ?13, ?14, ?15, ?16)";

/// Insert one journal row with a statement prepared from [`JOURNAL_INSERT`].
pub fn insert_journal(st: &mut Statement<'_>, j: &Run) -> rusqlite::Result<usize> {
    st.execute(params![
        j.submission_id,
        j.session_key,
        j.kind,
        j.attempt_id,
        j.operation_id,
        j.turn_id,
        j.phase,
        j.revision,
        j.created_at,
        j.updated_at,
        j.checkpoint_leaf_id,
        j.tool_request_json,
        j.stream_key,
        j.stream_consumed_at,
        j.committed as i64,
        j.committed_leaf_id,
    ])
}

pub fn insert_submissions(
    c: &Connection,
    subs: &[SubRow],
    progress: &mut dyn turnscope_store::progress::Progress,
) -> rusqlite::Result<()> {
    let mut st = c.prepare(
        "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, accepted_at, \
         attempt_id, input_applied_at, recovery_requested_at, started_at, settled_at, error, attempt_count, \
         max_retry, timeout_at, owner_id, lease_expires_at, terminal_event_key, terminal_event_json, \
         terminal_event_offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
         ?17, ?18, ?19, ?20)",
    )?;
    for SubRow { row: s, .. } in subs {
        st.execute(params![
            s.submission_id,
            s.session_key,
            s.kind,
            s.payload,
            s.status.as_str(),
            s.accepted_at,
            s.attempt_id,
            s.input_applied_at,
            s.recovery_requested_at,
            s.started_at,
            s.settled_at,
            s.error,
            s.attempt_count,
            s.max_retry,
            s.timeout_at,
            s.owner_id,
            s.lease_expires_at,
            s.terminal_key,
            s.terminal_event,
            s.terminal_offset,
        ])?;
        progress.advance(1);
    }
    Ok(())
}
