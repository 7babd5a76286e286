//! Row-level access to sessions: the few primitives the backend-neutral session loaders
//! (`walk.rs` for the list scan, `compact_load.rs` for `show` and the TUI) are written against.
//! Each backend implements `SessionRows` in its own files; nothing here knows about SQL.

// The scope is part of the loaders' vocabulary; the type is a domain record.
pub use turnscope_core::journal::records::SessionScope;

use super::{SessionRecord, StoreError};
use turnscope_core::journal::images::ChunkRow;
use turnscope_core::journal::submission_rows::ImageChunk;

/// Sessions with fewer entries are read on one connection: a second connection's read
/// transaction and the split's index lookups cost more than a second core saves on them.
pub(super) const SPLIT_FROM: usize = 8192;

/// One `flue_session_entries` row read by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRow {
    /// `position` (-1 when NULL or not a number).
    pub position: i64,
    /// `data` as stored, byte for byte (may not be UTF-8 in a damaged database).
    pub data: Vec<u8>,
    /// The data is stored as a BLOB (see [`EntryVisitor`]).
    pub blob: bool,
}

/// `flue_sessions.data` as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionData {
    /// The text, lossily decoded.
    pub text: String,
    /// Decoding replaced bytes that are not UTF-8.
    pub lossy: bool,
    /// Stored as a BLOB (only SQLite can hold one in its `TEXT` column): the runtime refuses to
    /// load the session ([`BLOB_SESSION`]).
    pub blob: bool,
}

impl SessionData {
    /// `leafId` and the problems of the data (spec §2.2), a BLOB's first.
    pub fn parse(&self) -> (Option<String>, Vec<String>) {
        let (leaf, problems, _created, _updated) = self.facts();
        (leaf, problems)
    }

    /// [`SessionData::parse`] and the data's `createdAt`, `updatedAt` (the sessions view).
    pub(crate) fn facts(&self) -> (Option<String>, Vec<String>, Option<String>, Option<String>) {
        let (leaf, mut problems, created, updated) = session_data_facts(&self.text);
        if self.blob {
            problems.insert(0, BLOB_SESSION.to_string());
        }
        (leaf, problems, created, updated)
    }
}

/// The load-blocking problem of session data stored as a BLOB: the runtime's `load` checks
/// `typeof data === "string"` before it parses anything (`sql-run-store`, `load`).
pub const BLOB_SESSION: &str = "session data is stored as a BLOB, not text: the runtime's load throws \"[flue] Persisted session row is malformed.\"";

/// Called with `(entry_id, position, data, blob)` for each row of a session, in position order.
/// `blob` is true when the id or the data is stored as a BLOB (only SQLite can hold one in a
/// `TEXT` column): the runtime refuses to load such a session (`Entry::blob_row`).
pub type EntryVisitor<'a> = dyn FnMut(&[u8], i64, &[u8], bool) + 'a;

/// [`EntryVisitor`] that says whether to go on.
pub type EntryWhile<'a> = dyn FnMut(&[u8], i64, &[u8], bool) -> bool + 'a;

/// The session reads a backend offers. All reads of one `load_bundle_with` call happen inside the
/// backend's read snapshot.
pub trait SessionRows {
    /// `flue_sessions.data` of `key`; `None` when the session row does not exist.
    fn session_data(&self, key: &str) -> Result<Option<SessionData>, StoreError>;
    /// One entry by its `entry_id` column (the primary key is `(session_id, entry_id)`).
    fn entry_by_id(&self, session: &str, entry_id: &str) -> Result<Option<EntryRow>, StoreError>;
    /// The session's `flue_image_chunks` rows (owner `session_entry`), each with the `entry_id`
    /// it belongs to, in the order the runtime reads an entry's rows (`image_id`, then
    /// `chunk_index`); none when the journal has no such table. `data` itself is not read.
    fn image_chunks(&self, session: &str) -> Result<Vec<(String, ChunkRow)>, StoreError>;
    /// The session's `flue_image_chunks` rows whole, as stored (an export's copy of them).
    fn stored_image_chunks(&self, session: &str) -> Result<Vec<ImageChunk>, StoreError>;
    /// A submission's own `flue_image_chunks` rows (owner `submission`: a direct prompt's
    /// images) whole, as stored.
    fn stored_submission_chunks(&self, submission: &str) -> Result<Vec<ImageChunk>, StoreError>;
    /// Several entries by their `entry_id` column: `f(entry_id, position, data)` for each one
    /// found, in no particular order. One read where the backend can (the TUI's previews of a
    /// screenful of rows: one round trip on PostgreSQL, not one per row).
    fn entries_by_ids(
        &self,
        session: &str,
        ids: &[&str],
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        for id in ids {
            if let Some(r) = self.entry_by_id(session, id)? {
                f(id.as_bytes(), r.position, &r.data, r.blob);
            }
        }
        Ok(())
    }
    /// Every entry of the session in position order: `f(entry_id, position, data)`. The slices are
    /// only valid during the call (no copy of the row is made).
    fn for_each_entry(&self, session: &str, f: &mut EntryVisitor<'_>) -> Result<(), StoreError>;
    /// `for_each_entry` while `f` returns `true`; `false` when `f` stopped it (a search across
    /// sessions reads no further than its match, and stops between two rows when cancelled).
    /// This default reads the rest of the session without calling `f`.
    fn for_each_entry_while(
        &self,
        session: &str,
        f: &mut EntryWhile<'_>,
    ) -> Result<bool, StoreError> {
        let mut go = true;
        self.for_each_entry(session, &mut |id, position, data, blob| {
            if go {
                go = f(id, position, data, blob);
            }
        })?;
        Ok(go)
    }
    /// How many entries the session has (what `for_each_entry` visits in the same snapshot), so
    /// a whole session's parse can allocate its entries once; `None` when the backend does not
    /// say.
    fn entry_count(&self, _session: &str) -> Result<Option<usize>, StoreError> {
        Ok(None)
    }
    /// Up to `limit` entries whose position is below `below`, in descending position order:
    /// `f(entry_id, position, data)`. A long path walk reads these in chunks (one range scan of
    /// the `(session_id, position)` index) instead of one primary-key lookup per entry.
    fn entries_before(
        &self,
        session: &str,
        below: i64,
        limit: usize,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError>;

    /// `session` (of `len` entries, as `entry_count` said) split into two halves to be read at
    /// once from this reader's snapshot, the later one on another thread; `None` where the
    /// backend cannot share its snapshot, or the session is small.
    fn split(&self, _session: &str, _len: usize) -> Result<Option<Split<'_>>, StoreError> {
        Ok(None)
    }
    /// The `rows` entries below position `below` (or as many as there are), split into two
    /// halves to be read at once (a long path walk's next segment); `None` where the backend
    /// cannot share its snapshot, or there are too few.
    fn split_below(
        &self,
        _session: &str,
        _below: i64,
        _rows: usize,
    ) -> Result<Option<SplitBelow<'_>>, StoreError> {
        Ok(None)
    }
}

/// The rows of a session a part reads: `lo <= position < hi` (a missing bound does not bound),
/// in position order or the highest position first.
#[derive(Debug, Clone, Copy)]
pub struct PartRange {
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    pub descending: bool,
}

/// One part of a session read in two at once: `split` and `split_below` hand out both, the
/// second to be read on another thread.
pub trait PartRows {
    /// Every entry of `session` in `range`, in its order: `f(entry_id, position, data)`.
    fn for_each_entry_in(
        &self,
        session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError>;
}

/// A session split in two at a position, both halves from the same snapshot: `first` reads
/// every entry below `at`, `later` every one from it on, both in position order.
pub struct Split<'a> {
    pub at: i64,
    /// Entries in the first half.
    pub first_len: usize,
    /// Entries in both.
    pub len: usize,
    pub first: &'a dyn PartRows,
    pub later: &'a (dyn PartRows + Sync),
}

/// The next segment of a long walk's read-ahead, split in two halves read at once from the
/// same snapshot: `upper` reads `[mid, below)`, `lower` reads `[lo, mid)` (every row below
/// `mid` without `lo`), each the highest position first.
pub struct SplitBelow<'a> {
    pub mid: i64,
    /// `None`: the segment reaches the session's first row.
    pub lo: Option<i64>,
    pub upper: &'a dyn PartRows,
    pub lower: &'a (dyn PartRows + Sync),
}

/// Reads a submission's session through `SessionRows` (a backend calls it inside its snapshot).
pub trait SessionLoader {
    /// `kind`/`submission_id` name the submission whose input the loader looks for.
    fn load(
        &mut self,
        rows: &dyn SessionRows,
        key: &str,
        kind: &str,
        submission_id: &str,
    ) -> Result<Option<SessionRecord>, StoreError>;
}

/// `leafId` and any problems of `flue_sessions.data` (spec §2.2): the same checks the sessions
/// view makes, without the timestamps. PostgreSQL's reading of it (SQLite reads `SessionData`).
#[cfg(feature = "postgres")]
pub fn parse_session_data(data: &str) -> (Option<String>, Vec<String>) {
    let (leaf, problems, _created, _updated) = session_data_facts(data);
    (leaf, problems)
}

fn json_str(v: &serde_json::Value, key: &str) -> Option<String> {
    v.get(key).and_then(|x| x.as_str()).map(str::to_string)
}

/// `leafId` and problems of `flue_sessions.data` (spec §2.2), for sessions read without a
/// submission. Mirrors the checks `load_bundle` makes.
pub(crate) fn session_data_facts(
    data: &str,
) -> (Option<String>, Vec<String>, Option<String>, Option<String>) {
    let v: serde_json::Value = match serde_json::from_str(data) {
        Ok(v) => v,
        Err(e) => {
            return (
                None,
                vec![format!("session data is not valid JSON: {e}")],
                None,
                None,
            )
        }
    };
    let mut problems = Vec::new();
    if v.get("version").and_then(|x| x.as_i64()) != Some(8) {
        problems.push(format!(
            "session data version is {} (the runtime requires 8)",
            v.get("version")
                .map(|x| x.to_string())
                .unwrap_or_else(|| "missing".into())
        ));
    }
    let ulid_ok = |prefix: &str, key: &str| {
        json_str(&v, key).is_some_and(|s| {
            s.strip_prefix(prefix).is_some_and(|rest| {
                rest.len() == 26
                    && rest.as_bytes()[0].is_ascii_digit()
                    && rest.as_bytes()[0] <= b'7'
                    && rest.bytes().all(|b| {
                        b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b))
                    })
            })
        })
    };
    if !ulid_ok("conv_", "conversationId") {
        problems
            .push("conversationId is malformed: the runtime refuses to load this session".into());
    }
    if !ulid_ok("aff_", "affinityKey") {
        problems.push("affinityKey is malformed: the runtime refuses to load this session".into());
    }
    (
        json_str(&v, "leafId"),
        problems,
        json_str(&v, "createdAt"),
        json_str(&v, "updatedAt"),
    )
}

/// The line the loaders record (`SessionRecord::not_utf8`) for session data that is not UTF-8.
pub const LOSSY_DATA: &str =
    "session data is not valid UTF-8 (read with replacement characters, as the runtime reads it)";

/// The line the loaders record (`SessionRecord::not_utf8`) for an entry that is not UTF-8.
pub fn lossy_entry(id: &str, position: i64) -> String {
    format!(
        "entry {id} at position {position} is not valid UTF-8 (read with replacement characters, \
         as the runtime reads it)"
    )
}
