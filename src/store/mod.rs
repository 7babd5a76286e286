//! Reading and writing the journal database: SQLite files and PostgreSQL databases behind the same
//! traits. Everything above this module talks to [`Backend`] and [`JournalWriter`] trait objects
//! obtained from [`open`] / [`open_writer`], and never learns which database it talks to.

mod access;
mod backend;
mod compact_load;
mod error;
// Parts of it serve the PostgreSQL store only.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
mod listing;
// Parts of it serve the PostgreSQL store only.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
mod parse;
mod parse_rows;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(not(feature = "postgres"))]
#[path = "postgres_absent.rs"]
pub mod postgres;
mod sessions;
mod sqlite;
mod sqlite_listing;
mod sqlite_traits;
mod walk;
mod write;

pub use access::{EntryRow, EntryVisitor, SessionLoader, SessionRows, SessionScope};
pub use backend::{open, open_writer, Backend, DbTarget};
pub use compact_load::{fetch_full, load_compact, CompactLoader};
pub use error::{PgFailure, StoreError};
pub use listing::{ListQueries, ListRows};
pub use sqlite::SqliteStore;
pub use walk::PathWalker;
pub use write::{Applied, ApplyError, AuditInfo, AuditRecord, SqliteWriter, AUDIT_DDL};

use std::collections::HashMap;

use crate::core::changes::{Fence, RowChange};

use crate::core::entry::Entry;
use crate::core::rows::{JournalRow, SubmissionRow};

/// Which column names the terminal outbox uses (spec §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Built-in `sqlite()` adapter: `terminal_event_key` / `terminal_event_json` / `terminal_event_offset`.
    BuiltIn,
    /// `@flue/libsql` (and PostgreSQL): `terminal_key` / `terminal_event` / `terminal_offset`.
    Libsql,
}

/// What the database turned out to be.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchemaInfo {
    pub variant: Variant,
    pub schema_version: String,
}

/// Which submissions to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListFilter {
    /// The runtime's definition: `status='running' AND 0 < lease_expires_at < now`.
    Expired {
        now_ms: i64,
    },
    Status(String),
    All,
}

/// A session row plus its entries, read in one snapshot.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub id: String,
    /// `flue_sessions.data` as stored.
    pub data: String,
    /// `leafId` from `data` (None when null, missing, or `data` is malformed).
    pub leaf_id: Option<String>,
    /// Problems with `data` itself (bad JSON, wrong version, malformed ids).
    pub data_problems: Vec<String>,
    /// Shared with the `History` built from it.
    pub entries: std::sync::Arc<[Entry]>,
    /// How much of the session `entries` holds (only `Full` and `Compact` are whole sessions).
    pub scope: SessionScope,
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
}

/// Read access to a journal database.
pub trait JournalStore {
    fn schema(&self) -> &SchemaInfo;
    /// A short description of where the data lives (a path or a URL without password).
    fn location(&self) -> String;
    fn list_submissions(&self, filter: &ListFilter) -> Result<Vec<SubmissionRow>, StoreError>;
    /// Count of submissions per status.
    fn status_counts(&self) -> Result<Vec<(String, i64)>, StoreError>;
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
    /// Newest first; empty when turnscope never wrote to this database.
    fn audit_records(&self) -> Result<Vec<AuditRecord>, StoreError>;
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
}
