//! The domain records a read produces: a submission with its journal, session and stream chunks,
//! and a session with its entries. Plain data defined here (not in `store`) so the pure planners
//! and the report builders can take them without knowing how they were read.

use crate::core::entry::Entry;
use crate::core::rows::{JournalRow, SubmissionRow};

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
    /// the first entry's `parentId` is cleared. Enough to classify and plan, never to write.
    PathSinceInput,
}
