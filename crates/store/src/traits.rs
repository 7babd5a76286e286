//! The store's vocabulary: what the database turned out to be, and the
//! traits every backend implements. Defined apart from `store/mod.rs` (which only declares and
//! re-exports) so the backends and the loaders use it without depending on each other.

use std::collections::HashMap;
use std::time::Duration;

use turnscope_core::recovery::changes::{Fence, RowChange};

use turnscope_core::journal::records::{SessionRecord, SubmissionBundle};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::SubmissionRow;

use crate::error::StoreError;
use crate::filter::RowFilter;
use crate::session_rows::SessionLoader;
use crate::session_rows::SessionRows;

/// Which rows of a listing's view one read takes, in sequence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowPage {
    /// Only rows whose sequence is greater (`None`: from the first).
    pub after: Option<i64>,
    /// At most this many rows of the view (`None`: every one).
    pub rows: Option<usize>,
}

impl RowPage {
    /// Every row of the view.
    pub const WHOLE: RowPage = RowPage {
        after: None,
        rows: None,
    };
}

/// Which column names the terminal outbox uses (spec §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Built-in `sqlite()` adapter: `terminal_event_key` / `terminal_event_json` / `terminal_event_offset`.
    BuiltIn,
    /// `@flue/libsql` (and PostgreSQL): `terminal_key` / `terminal_event` / `terminal_offset`.
    Libsql,
}

/// The terminal outbox columns (key, event, offset) of the built-in adapter and of `@flue/libsql`
/// (and PostgreSQL): the one table of these names.
const BUILT_IN_TERMINAL: [&str; 3] = [
    "terminal_event_key",
    "terminal_event_json",
    "terminal_event_offset",
];
const LIBSQL_TERMINAL: [&str; 3] = ["terminal_key", "terminal_event", "terminal_offset"];

impl Variant {
    /// This variant's terminal outbox columns: key, event, offset.
    pub fn terminal_columns(self) -> [&'static str; 3] {
        match self {
            Variant::BuiltIn => BUILT_IN_TERMINAL,
            Variant::Libsql => LIBSQL_TERMINAL,
        }
    }

    /// A column named as the built-in adapter names it (how plans name columns), under this
    /// variant; every other column is named the same in both.
    pub fn column(self, built_in_name: &str) -> &str {
        match BUILT_IN_TERMINAL.iter().position(|c| *c == built_in_name) {
            Some(i) => self.terminal_columns()[i],
            None => built_in_name,
        }
    }
}

/// What the database turned out to be.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchemaInfo {
    pub variant: Variant,
    pub schema_version: String,
    /// Opened with SQLite's `immutable` flag: the database is in WAL mode with no -wal content
    /// and no -shm, in a directory this user cannot write, so no runtime is writing it; one that
    /// starts writing after the open is not seen until the next open.
    pub immutable: bool,
}

/// One `flue_sessions` row summarised for the sessions view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// `flue_sessions.id` (the session key).
    pub id: String,
    /// The instance id parsed from the key, when it is an agent session key.
    pub instance_id: Option<String>,
    pub entry_count: usize,
    /// `createdAt` / `updatedAt` of the session data (ISO strings as stored).
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub leaf_id: Option<String>,
    pub data_problems: Vec<String>,
    /// Submissions of this session by status; settled rows with an error count as `failed`.
    pub submissions_by_status: Vec<(String, i64)>,
}

/// Read access to a journal database.
pub trait JournalStore {
    fn schema(&self) -> &SchemaInfo;
    /// A short description of where the data lives (a path or a URL without password).
    fn location(&self) -> String;
    /// The rows `filter` shows at `now_ms`, in sequence order.
    fn list_submissions(
        &self,
        filter: RowFilter,
        now_ms: i64,
    ) -> Result<Vec<SubmissionRow>, StoreError>;
    /// `list_submissions`, the rows of `page` only, each handed to `visit` as it is read: a
    /// listing that keeps a few of 200,000 rows (`--instance`) need not hold them all, and one
    /// read in pages holds a page at a time. Returns the sequence of the last row the page read
    /// (the next page starts after it; a row the filter refined away in Rust counts), `None` when
    /// it read none. `visit` must not read this store (its connection is busy with the rows). By
    /// default the rows are read whole first.
    fn for_each_submission(
        &self,
        filter: RowFilter,
        now_ms: i64,
        page: RowPage,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<Option<i64>, StoreError> {
        let mut last = None;
        let rows = self.list_submissions(filter, now_ms)?;
        for row in rows
            .into_iter()
            .filter(|r| page.after.is_none_or(|a| r.sequence > a))
            .take(page.rows.unwrap_or(usize::MAX))
        {
            last = Some(row.sequence);
            visit(row);
        }
        Ok(last)
    }
    /// Count of submissions per status.
    fn status_counts(&self) -> Result<Vec<(SubmissionStatus, i64)>, StoreError>;
    /// Resolve a full id or a unique prefix.
    fn find_submission(&self, query: &str) -> Result<SubmissionRow, StoreError>;
    /// Load a submission with its journal, session and stream chunks in one read snapshot.
    fn load_bundle(&self, submission_id: &str) -> Result<SubmissionBundle, StoreError>;
    /// Like `load_bundle`, with the session read by `loader` through `session_rows` inside the
    /// same snapshot. A backend without row access reads the session whole (this default).
    fn load_bundle_with(
        &self,
        submission_id: &str,
        loader: &mut dyn SessionLoader,
    ) -> Result<SubmissionBundle, StoreError> {
        let _ = loader;
        self.load_bundle(submission_id)
    }
    /// `load_bundle_with` for `row`, read by this store (or its twin) inside the `in_snapshot`
    /// it is in: a backend may take the row as read instead of reading it again (a listing's
    /// rows). This default reads it again.
    fn load_bundle_of_row(
        &self,
        row: &SubmissionRow,
        loader: &mut dyn SessionLoader,
    ) -> Result<SubmissionBundle, StoreError> {
        self.load_bundle_with(&row.submission_id, loader)
    }
    /// Row-level session access for the backend-neutral loaders, when the backend has it.
    fn session_rows(&self) -> Option<&dyn SessionRows> {
        None
    }
    /// Run `f` with every read it makes through this store in one read snapshot: a listing then
    /// reads one consistent state, and a backend saves a transaction per submission. A backend
    /// without this keeps one snapshot per bundle (this default).
    fn in_snapshot(&self, f: &mut dyn FnMut() -> Result<(), StoreError>) -> Result<(), StoreError> {
        f()
    }
    /// Called inside `in_snapshot`: a second store, for another thread, reading as this one
    /// reads: the very snapshot where the backend keeps one for the listing (SQLite: a listing
    /// read on two cores stays one consistent state), a snapshot per bundle where it keeps one
    /// per bundle (PostgreSQL). `None` when the backend has none, or when nothing proves the
    /// snapshot the same (something was committed meanwhile); the caller then reads alone.
    fn snapshot_twin(&self) -> Option<Box<dyn JournalStore + Send>> {
        None
    }
}

/// What the TUI reads besides submissions: sessions, journal phases and change fingerprints.
pub trait SessionBrowse {
    /// Every session with its entry count, timestamps and its submissions by status.
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError>;
    /// One session and its entries in position order (`None` when there is no such row).
    fn load_session(&self, key: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// `submission_id → (phase, revision)` of every turn journal.
    fn journal_phases(&self) -> Result<HashMap<String, (String, i64)>, StoreError>;
    /// A cheap fingerprint of everything `load_bundle` reads besides the submission row; equal
    /// fingerprints mean a cached bundle is still current.
    fn bundle_fingerprint(
        &self,
        submission_id: &str,
        session_key: &str,
    ) -> Result<String, StoreError>;
}

/// The `turnscope_audit` trail.
pub trait AuditLog {
    /// The records `query` selects, newest first, filtered by the database; empty when
    /// turnscope never wrote to this database.
    fn audit_query(&self, query: &super::AuditQuery) -> Result<Vec<AuditRecord>, StoreError>;

    /// Every record, newest first; empty when turnscope never wrote to this database.
    fn audit_records(&self) -> Result<Vec<AuditRecord>, StoreError> {
        self.audit_query(&super::AuditQuery::default())
    }
}

/// Fenced writes (`--write` only): every backend keeps the guarantees of `SqliteWriter::apply`.
pub trait JournalWriter: Send {
    /// Apply `changes` if `fence` still holds, with an audit row, in one short transaction;
    /// any difference writes nothing.
    fn apply(
        &mut self,
        fence: &Fence,
        changes: &[RowChange],
        audit: &AuditInfo,
    ) -> Result<Applied, ApplyError>;

    /// Revert the changes of the audit rows `target` names, in one fenced transaction, only if
    /// every row they changed still holds what turnscope wrote; the undo gets its own audit rows
    /// (`undoes` = the record undone). With `commit` false it only checks and previews (rolled
    /// back).
    fn undo(
        &mut self,
        target: &UndoTarget,
        audit: &AuditInfo,
        commit: bool,
    ) -> Result<Undone, ApplyError>;
}

/// Who and why, recorded in `turnscope_audit` with every applied action.
#[derive(Debug, Clone, Default)]
pub struct AuditInfo {
    pub operator: String,
    pub action: String,
    pub reason: Option<String>,
    pub summary: String,
    pub now_ms: i64,
    /// One id shared by the audit rows of one bulk apply (or one undo of a batch).
    pub batch_id: Option<String>,
    /// The tool calls the write answered `interrupted` that the operator acknowledged may have
    /// run (a JSON array), `None` when it answered none.
    pub side_effects: Option<String>,
}

/// What `undo` reverts: one audit record, or every record of a bulk apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoTarget {
    Audit(i64),
    Batch(String),
}

impl UndoTarget {
    /// A number is an audit id; anything else a batch id.
    pub fn parse(text: &str) -> UndoTarget {
        let t = text.trim().trim_start_matches('#');
        match t.parse::<i64>() {
            Ok(id) => UndoTarget::Audit(id),
            Err(_) => UndoTarget::Batch(t.to_string()),
        }
    }
}

impl std::fmt::Display for UndoTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UndoTarget::Audit(id) => write!(f, "audit #{id}"),
            UndoTarget::Batch(b) => write!(f, "batch {b}"),
        }
    }
}

/// What an undo did (or, not committed, would do).
#[derive(Debug, Clone, PartialEq)]
pub struct Undone {
    /// `(audit id, submission id)` of each record reverted.
    pub records: Vec<(i64, String)>,
    /// One line per row restored.
    pub restored: Vec<String>,
    /// The undo's own audit rows (empty when not committed).
    pub audit_ids: Vec<i64>,
    pub lock_held: Duration,
}

/// What an apply did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub rows_written: usize,
    /// From `BEGIN IMMEDIATE` acquired to `COMMIT` done.
    pub lock_held: Duration,
    pub audit_id: i64,
}

/// Why an apply wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The state changed since the preview: nothing was written.
    #[error(
        "refused, nothing written: the submission changed since the preview ({})",
        .0.join("; ")
    )]
    Fenced(Vec<String>),
    /// The request cannot be carried out at all (an undo of a record without row images, or of
    /// one already undone): nothing written.
    #[error("refused, nothing written: {0}")]
    Refused(String),
    /// No audit record matches: nothing written.
    #[error("no turnscope audit record matches {0}")]
    NotFound(String),
    #[error("{0}")]
    Store(StoreError),
}

impl From<rusqlite::Error> for ApplyError {
    fn from(e: rusqlite::Error) -> ApplyError {
        ApplyError::Store(StoreError::sqlite("writing", e))
    }
}

/// One row of `turnscope_audit`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AuditRecord {
    pub id: i64,
    pub at: i64,
    pub operator: String,
    pub action: String,
    pub submission_id: String,
    pub attempt_id: Option<String>,
    pub reason: Option<String>,
    pub summary: String,
    pub version: String,
    /// The bulk apply (or undo of one) this record belongs to.
    pub batch_id: Option<String>,
    /// The audit record this one undid.
    pub undoes: Option<i64>,
    /// The exact rows before and after (`None` for records written before turnscope kept them).
    pub changes: Option<Vec<crate::images::RowImage>>,
    /// The acknowledged side-effect ledger (`None` when the write answered no call `interrupted`,
    /// or was recorded before turnscope kept it).
    pub side_effects: Option<serde_json::Value>,
}
