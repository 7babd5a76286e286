//! Reading and writing the journal database: SQLite files ([`sqlite`]) and PostgreSQL databases
//! ([`postgres`], the `postgres` feature) behind the same traits. Everything above this module talks to [`Backend`] and [`JournalWriter`] trait objects
//! obtained from [`open`] / [`open_writer`], and never learns which database it talks to.

mod audit_query;
mod backend;
mod compact_load;
pub mod ddl;
mod error;
pub mod export_db;
mod filter;
mod find;
pub mod format;
mod image_chunks;
pub mod images;
mod session_rows;
// Parts of it serve the PostgreSQL store only.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
mod listing;
// Parts of it serve the PostgreSQL store only.
pub mod clock;
pub mod memory;
mod parallel_parse;
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
mod parse;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(not(feature = "postgres"))]
#[path = "postgres_absent.rs"]
pub mod postgres;
mod prefix;
pub mod progress;
pub mod sqlite;
mod traits;
mod walk;

pub use audit_query::{AuditParam, AuditQuery};
pub use backend::{open, open_writer, Backend, DbTarget};
pub use compact_load::{
    fetch_full, fetch_previews, load_compact, search_positions, CompactLoader, FetchedPreview,
};
pub use error::{NotWritable, PgFailure, StoreError};
pub use filter::RowFilter;
pub use find::{
    thousands, MatchKind, SessionFinder, SessionMatch, TextSearched, TextSink, SNIPPET_AROUND,
};
pub use format::{detect_format, FlueMeta, JournalFormat};
pub use listing::ListQueries;
pub use session_rows::{
    EntryRow, EntryVisitor, EntryWhile, PartRange, PartRows, SessionData, SessionLoader,
    SessionRows, Split, SplitBelow, BLOB_SESSION,
};
pub use sqlite::flue2::{Flue2Batch, Flue2SqliteReader, Flue2Stream};
pub use sqlite::flue2_chunk::{BatchChunk, BatchView, ChunkItem};
pub use sqlite::flue2_export::{is_flue2_export, FLUE2_EXPORT_SCHEMA};
pub use sqlite::flue2_write::Flue2SqliteWriter;
pub use sqlite::undo::refusal_from_trail;
pub use sqlite::write::{SqliteWriter, AUDIT_DDL};
pub use sqlite::SqliteStore;
pub use turnscope_core::journal::records::{SessionRecord, SessionScope, SubmissionBundle};
pub use walk::PathWalker;

pub use traits::{
    Applied, ApplyError, AuditInfo, AuditLog, AuditRecord, JournalStore, JournalWriter, RowPage,
    SchemaInfo, SessionBrowse, SessionSummary, UndoTarget, Undone, Variant,
};
