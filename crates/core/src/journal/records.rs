//! The domain records a read produces: a submission with its journal, session and stream chunks,
//! and a session with its entries. Plain data defined here (not in `store`) so the pure planners
//! and the report builders can take them without knowing how they were read.

use crate::journal::submission_rows::{JournalRow, SubmissionRow};

/// Everything about one submission, read in one snapshot.
#[derive(Debug, Clone)]
pub struct SubmissionBundle {
    pub row: SubmissionRow,
    pub journal: Option<JournalRow>,
    /// Problem reading the journal row (e.g. an unknown phase), if any.
    pub journal_problem: Option<String>,
    pub session: Option<SessionRecord>,
    /// Stream chunk bodies of the journal's stream key, in segment order.
    pub stream_chunks: Vec<String>,
    /// A direct prompt's event stream (`agents/<agent>/<instance>`), where its terminal event is
    /// published; `None` for a dispatch, or a payload without an agent or id.
    pub event_stream: Option<EventStream>,
}

/// How a store makes an event's append idempotent (spec §1.2, §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventStore {
    /// Built-in `sqlite()`: `flue_event_stream_keys`, whose trigger `flue_event_stream_key_append`
    /// copies each row into `flue_event_stream_entries` and moves `next_offset`.
    KeysTable,
    /// `@flue/libsql`: `flue_event_stream_entries.event_key` with a partial unique index, no
    /// trigger (the append moves `next_offset` itself).
    EventKeyColumn,
    /// `@flue/postgres`: the `event_key` column as libsql, and its own terminal statements
    /// (the reservation requires an owner and no earlier terminal key; the finalize leaves `error`).
    Postgres,
    /// No event-stream tables (the runtime creates them when it opens the database).
    Absent,
}

/// The event stream a direct prompt's terminal event goes to, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventStream {
    /// `agents/<agentName>/<instanceId>`.
    pub path: String,
    pub store: EventStore,
    /// `(next_offset, closed)` of its `flue_event_streams` row; `None` when there is none.
    pub head: Option<(i64, bool)>,
    /// `(seq, data)` of an event already appended under this submission's terminal key.
    pub keyed: Option<(i64, String)>,
}

/// A direct prompt's event-stream path, `agents/<agent>/<id>` from its payload (`agentStreamPath`);
/// `None` for a dispatch or a payload without them.
pub fn event_stream_path(row: &SubmissionRow) -> Option<String> {
    if row.kind != "direct" {
        return None;
    }
    let p = crate::journal::payload::read(&row.payload).ok()?;
    Some(format!("agents/{}/{}", p.agent()?, p.id()?))
}

/// The key a direct prompt's `submission_settled` event is appended under.
pub fn terminal_event_key(submission_id: &str) -> String {
    format!("direct-submission:{submission_id}:settled")
}

/// `formatOffset(seq)`: the stream offset the runtime records, `0000000000000000_<seq>`.
pub fn format_offset(seq: i64) -> String {
    format!("{:016}_{seq:016}", 0)
}

/// A session row plus its entries, read in one snapshot.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub id: String,
    /// `flue_sessions.data` as stored.
    pub data: String,
    /// `leafId` from `data` (None when null, missing, or `data` is malformed).
    pub leaf_id: Option<String>,
    /// Problems with `data` itself (bad JSON, wrong version, malformed ids): the runtime cannot
    /// load the session.
    pub data_problems: Vec<String>,
    /// Rows whose text is not valid UTF-8 (`data`, or an entry's id or data), one line each. They
    /// are read with U+FFFD in place of each bad sequence, as the runtime's `node:sqlite` reads
    /// them, and so do not stop its load; turnscope never writes to such a session (its row
    /// images could not restore the bytes).
    pub not_utf8: Vec<String>,
    /// Shared with the `History` built from it (and, for a walked path, with the records of the
    /// session's other submissions).
    pub entries: crate::journal::entry_slice::EntrySlice,
    /// How much of the session `entries` holds (only `Full` and `Compact` are whole sessions).
    pub scope: SessionScope,
}

/// How much of a session a `SessionRecord` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionScope {
    /// Every entry, fully parsed, with its raw text.
    #[default]
    Full,
    /// Every entry, compact (`core::compact`); full bodies for the input entry and the active
    /// path after it.
    Compact,
    /// Only the active path from the submission's input entry (or the root) to the leaf, compact;
    /// the active path stops at the first entry (`EntrySlice::first_is_root`), whatever its
    /// `parentId`. Enough to classify and plan, never to write.
    PathSinceInput,
}
