//! Reading and writing the journal database: SQLite files and PostgreSQL databases behind the same
//! traits. Everything above this module talks to [`Backend`] and [`JournalWriter`] trait objects
//! obtained from [`open`] / [`open_writer`], and never learns which database it talks to.

mod access;
mod audit_query;
mod backend;
mod compact_load;
mod error;
mod filter;
pub mod images;
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
mod prefix;
mod sessions;
mod sqlite;
mod sqlite_listing;
mod sqlite_peer;
mod sqlite_traits;
mod traits;
mod walk;
mod write;
mod write_access;
pub(crate) mod write_rows;
pub(crate) mod write_undo;

pub use crate::core::records::{SessionRecord, SessionScope, SubmissionBundle};
pub use access::{
    EntryRow, EntryVisitor, PartRange, PartRows, SessionLoader, SessionRows, Split, SplitBelow,
};
pub use audit_query::{AuditParam, AuditQuery};
pub use backend::{open, open_writer, Backend, DbTarget};
pub use compact_load::{
    fetch_full, fetch_previews, load_compact, search_positions, CompactLoader, FetchedPreview,
};
pub use error::{NotWritable, PgFailure, StoreError};
pub use filter::RowFilter;
pub use listing::ListQueries;
pub use sqlite::SqliteStore;
pub use walk::PathWalker;
pub use write::{SqliteWriter, AUDIT_DDL};

pub use traits::{
    Applied, ApplyError, AuditInfo, AuditLog, AuditRecord, JournalStore, JournalWriter, RowPage,
    SchemaInfo, SessionBrowse, SessionSummary, UndoTarget, Undone, Variant,
};
