//! SQLite journal databases, opened read-only: never created, never switched to another journal
//! mode, never write-locked. Reads work while a live runtime writes in WAL mode.

pub(crate) mod find;
pub mod flue2;
pub mod flue2_chunk;
pub mod flue2_export;
mod flue2_submission_chunks;
pub mod flue2_write;
pub(crate) mod listing;
mod open_file;
pub(crate) mod peer;
pub(crate) mod row_images;
pub(crate) mod sessions;
mod submission_images;
pub(crate) mod traits;
pub(crate) mod undo;
pub(crate) mod writable;
pub(crate) mod write;

use open_file::*;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;
use turnscope_core::journal::images::ChunkRow;
use turnscope_core::journal::submission_rows::ImageChunk;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, Row};

use super::{
    JournalStore, ListQueries, RowFilter, RowPage, SchemaInfo, SessionRecord, StoreError,
    SubmissionBundle, Variant,
};
use crate::format::{detect_format, FlueMeta, JournalFormat, BETA7_TABLES};
use crate::parse::{text_and_lossy, text_of};
use crate::prefix::{find_by_prefix, Lookup};
use crate::session_rows::{
    EntryRow, EntryVisitor, PartRange, SessionData, SessionLoader, SessionRows, Split, SplitBelow,
};
use crate::sqlite::peer::{data_version, entries_in, query_entries, Peer, SPLIT_FROM};
use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::records::{
    event_stream_path, terminal_event_key, EventStore, EventStream,
};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::{JournalRow, SubmissionRow};

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    schema: SchemaInfo,
    /// The SELECT list for submissions, adapted to the variant and to columns an old schema lacks.
    submission_columns: String,
    /// Every table of the database (a damaged or partial schema may lack the optional ones).
    tables: Vec<String>,
    /// Inside `in_snapshot`: bundles are read in its transaction instead of one of their own.
    in_snapshot: Cell<bool>,
    /// The second connection a big session's later half is read on (`sqlite_peer`).
    peer: Peer,
    /// How this database keys its events (built-in keys table, libsql `event_key` column).
    event_store: EventStore,
    /// What `location` says instead of the path: an export's file (its rows are in memory).
    label: Option<String>,
}

impl SqliteStore {
    /// Open `path` read-only and check that it is a flue 1.0.0-beta.7 journal.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let (conn, tables, immutable) = open_connection(path)?;
        let mut schema = detect_schema(&conn, path, &tables)?;
        schema.immutable = immutable;
        let submission_columns = submission_select_list(&conn, schema.variant)?;
        let event_store = event_store_of(&conn, &tables)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            schema,
            submission_columns,
            tables,
            in_snapshot: Cell::new(false),
            peer: Peer::default(),
            event_store,
            label: None,
        })
    }

    /// Open the in-memory database `uri` (`file:/NAME?vfs=memdb`, an export's rows) read-only,
    /// with the checks of `open`; its location is `label`.
    pub(crate) fn open_memory(uri: &str, label: &str) -> Result<SqliteStore, StoreError> {
        let path = Path::new(uri);
        let (conn, tables) =
            open_read(path, false).map_err(|e| StoreError::sqlite("opening the export", e))?;
        let schema = detect_schema(&conn, Path::new(label), &tables)?;
        let submission_columns = submission_select_list(&conn, schema.variant)?;
        let event_store = event_store_of(&conn, &tables)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            schema,
            submission_columns,
            tables,
            in_snapshot: Cell::new(false),
            peer: Peer::default(),
            event_store,
            label: Some(label.to_string()),
        })
    }

    /// Which runtime's format `path` is in ([`JournalFormat`]), read-only, whatever it is: the
    /// same checks of the file as [`SqliteStore::open`] (missing, empty, unreadable, not SQLite),
    /// then its tables and `flue_meta`. Nothing is refused for its format here.
    pub fn detect_format(path: &Path) -> Result<JournalFormat, StoreError> {
        let (conn, tables, _) = open_connection(path)?;
        Ok(detect_format(&tables, &read_flue_meta(&conn, &tables)?))
    }

    /// How this database keys its events.
    pub fn event_store(&self) -> EventStore {
        self.event_store
    }

    /// The event stream `row`'s terminal event goes to, as it is now (direct prompts only).
    fn event_stream(&self, row: &SubmissionRow) -> Result<Option<EventStream>, StoreError> {
        let Some(path) = event_stream_path(row) else {
            return Ok(None);
        };
        let err = |e| StoreError::sqlite("reading the event stream", e);
        let store = self.event_store;
        let mut stream = EventStream {
            path,
            store,
            head: None,
            keyed: None,
        };
        if store == EventStore::Absent {
            return Ok(Some(stream));
        }
        stream.head = self
            .conn
            .prepare_cached("SELECT next_offset, closed FROM flue_event_streams WHERE path = ?1")
            .and_then(|mut s| {
                s.query_row([&stream.path], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? != 0))
                })
                .optional()
            })
            .map_err(err)?;
        let keyed_sql = match store {
            EventStore::KeysTable => {
                "SELECT seq, data FROM flue_event_stream_keys WHERE path = ?1 AND key = ?2"
            }
            _ => {
                "SELECT seq, data FROM flue_event_stream_entries WHERE path = ?1 AND event_key = ?2"
            }
        };
        stream.keyed = self
            .conn
            .prepare_cached(keyed_sql)
            .and_then(|mut s| {
                s.query_row(
                    [&stream.path, &terminal_event_key(&row.submission_id)],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
                )
                .optional()
            })
            .map_err(err)?;
        Ok(Some(stream))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the database has `table` (as of opening).
    pub fn has_table(&self, table: &str) -> bool {
        self.tables.iter().any(|t| t == table)
    }

    /// The underlying connection (read-only).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn query_submissions(
        &self,
        where_sql: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        let mut out = Vec::new();
        self.visit_submissions(where_sql, params, None, &mut |r| out.push(r))?;
        Ok(out)
    }

    /// `query_submissions`, each row handed to `visit` as it is read.
    pub(crate) fn visit_submissions(
        &self,
        where_sql: &str,
        params: &[&dyn rusqlite::ToSql],
        limit: Option<usize>,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<(), StoreError> {
        // The chunk rows and the submission rows from one snapshot: a direct prompt admitted
        // between two reads would otherwise be read without its image rows, a mismatch that is
        // not in the journal. Inside a transaction already (a bundle's own): in it.
        if !self.conn.is_autocommit() {
            return self.visit_submissions_in_snapshot(where_sql, params, limit, visit);
        }
        JournalStore::in_snapshot(self, &mut || {
            self.visit_submissions_in_snapshot(where_sql, params, limit, visit)
        })
    }

    fn visit_submissions_in_snapshot(
        &self,
        where_sql: &str,
        params: &[&dyn rusqlite::ToSql],
        limit: Option<usize>,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<(), StoreError> {
        let limit = limit.map_or(String::new(), |n| format!(" LIMIT {n}"));
        let selection = format!("{where_sql} ORDER BY sequence{limit}");
        let sql = format!(
            "SELECT {} FROM flue_agent_submissions {selection}",
            self.submission_columns
        );
        // Read first, for the same rows.
        let mut images = submission_images::SubmissionImages::read(
            &self.conn,
            self.has_table("flue_image_chunks"),
            &selection,
            params,
        )?;
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| StoreError::sqlite("reading submissions", e))?;
        let rows = stmt
            .query_map(params, submission_from_row)
            .map_err(|e| StoreError::sqlite("reading submissions", e))?;
        for row in rows {
            let mut row = row.map_err(|e| StoreError::sqlite("reading submissions", e))?;
            images.attach(&mut row);
            visit(row);
        }
        Ok(())
    }

    fn journal(
        &self,
        submission_id: &str,
    ) -> Result<(Option<JournalRow>, Option<String>), StoreError> {
        if !self.has_table("flue_agent_turn_journals") {
            // Shown without a journal, but marked: writes need the journal to fence on.
            return Ok((
                None,
                Some("the database has no flue_agent_turn_journals table".into()),
            ));
        }
        let row = self
            .conn
            .prepare_cached(
                "SELECT submission_id, session_key, kind, attempt_id, operation_id, turn_id, phase, revision,
                        created_at, updated_at, checkpoint_leaf_id, tool_request_json, stream_key,
                        stream_consumed_at, committed, committed_leaf_id
                 FROM flue_agent_turn_journals WHERE submission_id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([submission_id], |r| {
                    let lossy = (0..16).map(|i| r.get_ref(i)).any(|v| v.is_ok_and(is_lossy));
                    Ok((journal_from_row(r)?, lossy))
                })
                .optional()
            })
            .map_err(|e| StoreError::sqlite("reading the turn journal", e))?;
        let Some((row, lossy)) = row else {
            return Ok((None, None));
        };
        let mut problems: Vec<String> = crate::parse::journal_problem(&row).into_iter().collect();
        if lossy {
            problems.push(
                "the journal row is not valid UTF-8 (read with replacement characters, as the runtime reads it)".into(),
            );
        }
        Ok((
            Some(row),
            (!problems.is_empty()).then(|| problems.join("; ")),
        ))
    }

    /// One session and its entries in position order (`None` when there is no such row). Text
    /// that is not valid UTF-8 is read with replacement characters and listed in `not_utf8`.
    pub(super) fn session(&self, key: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.session_parsed(key, Entry::parse)
    }

    /// `session`, each entry read by `parse` (the write path keeps messages compact).
    pub(super) fn session_parsed(
        &self,
        key: &str,
        parse: fn(i64, &str, &str) -> Entry,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let Some(session) = SessionRows::session_data(self, key)? else {
            return Ok(None);
        };
        let mut lossy = Vec::new();
        if session.lossy {
            lossy.push(crate::session_rows::LOSSY_DATA.to_string());
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT entry_id, position, data FROM flue_session_entries WHERE session_id = ?1 ORDER BY position",
            )
            .map_err(|e| StoreError::sqlite("reading session entries", e))?;
        let entries = stmt
            .query_map([key], |r| {
                let (id, id_lossy) = text_and_lossy(r.get_ref(0)?);
                let pos = r.get::<_, Option<i64>>(1).unwrap_or(None).unwrap_or(-1);
                let blob = [r.get_ref(0)?, r.get_ref(2)?]
                    .iter()
                    .any(|v| matches!(v, ValueRef::Blob(_)));
                if blob {
                    return Ok((Entry::blob_row(pos, &id, &bytes_of(r.get_ref(2)?)), false));
                }
                let (data, data_lossy) = text_and_lossy(r.get_ref(2)?);
                let lossy = id_lossy || data_lossy;
                Ok((parse(pos, &id, &data), lossy))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite("reading session entries", e))?;
        lossy.extend(
            entries
                .iter()
                .filter(|(_, l)| *l)
                .map(|(e, _)| crate::session_rows::lossy_entry(&e.id, e.position)),
        );
        let entries: Vec<Entry> = entries.into_iter().map(|(e, _)| e).collect();
        let (leaf_id, mut data_problems) = session.parse();
        data_problems
            .extend(crate::image_chunks::SessionImages::read(self, key)?.problems(&entries));
        Ok(Some(SessionRecord {
            id: key.to_string(),
            data: session.text,
            leaf_id,
            data_problems,
            not_utf8: lossy,
            entries: entries.into(),
            scope: super::SessionScope::Full,
        }))
    }

    fn stream_chunks(&self, stream_key: &str) -> Result<Vec<String>, StoreError> {
        if !self.has_table("flue_agent_stream_chunks") {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT body FROM flue_agent_stream_chunks WHERE stream_key = ?1 ORDER BY segment_index")
            .map_err(|e| StoreError::sqlite("reading stream chunks", e))?;
        let rows = stmt
            .query_map([stream_key], |r| Ok(text_of(r.get_ref(0)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite("reading stream chunks", e))?;
        Ok(rows)
    }
}

impl JournalStore for SqliteStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn location(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => self.path.display().to_string(),
        }
    }

    fn list_submissions(
        &self,
        filter: RowFilter,
        now_ms: i64,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        self.submissions_where(filter, now_ms, None)
    }

    fn for_each_submission(
        &self,
        filter: RowFilter,
        now_ms: i64,
        page: RowPage,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<Option<i64>, StoreError> {
        self.visit_where(filter, now_ms, page, visit)
    }

    fn status_counts(&self) -> Result<Vec<(SubmissionStatus, i64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT status, COUNT(*) FROM flue_agent_submissions GROUP BY status ORDER BY status")
            .map_err(|e| StoreError::sqlite("counting submissions", e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    SubmissionStatus::parse(&text_of(r.get_ref(0)?)),
                    r.get::<_, i64>(1)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite("counting submissions", e))?;
        Ok(rows)
    }

    fn find_submission(&self, query: &str) -> Result<SubmissionRow, StoreError> {
        find_by_prefix(query, &mut |lookup| match lookup {
            Lookup::Exact => self.query_submissions("WHERE submission_id = ?1", &[&query]),
            // A range instead of LIKE, so `%` and `_` in ids are literal.
            Lookup::Prefix => self.query_submissions(
                "WHERE submission_id >= ?1 AND submission_id < ?2",
                &[&query, &format!("{query}\u{10FFFF}")],
            ),
        })
    }

    fn load_bundle(&self, submission_id: &str) -> Result<SubmissionBundle, StoreError> {
        // The write path's read: compact messages beside their stored text.
        self.bundle_in_snapshot(submission_id, None, &mut |s, row| {
            s.session_parsed(
                &row.session_key,
                turnscope_core::journal::compact::parse_keeping_raw,
            )
        })
    }

    fn load_bundle_with(
        &self,
        submission_id: &str,
        loader: &mut dyn SessionLoader,
    ) -> Result<SubmissionBundle, StoreError> {
        self.bundle_in_snapshot(submission_id, None, &mut |s, row| {
            loader.load(s, &row.session_key, &row.kind, &row.submission_id)
        })
    }

    fn load_bundle_of_row(
        &self,
        row: &SubmissionRow,
        loader: &mut dyn SessionLoader,
    ) -> Result<SubmissionBundle, StoreError> {
        // Outside a snapshot the row may be stale: it is read again with the rest.
        let known = self.in_snapshot.get().then_some(row);
        self.bundle_in_snapshot(&row.submission_id, known, &mut |s, row| {
            loader.load(s, &row.session_key, &row.kind, &row.submission_id)
        })
    }

    fn session_rows(&self) -> Option<&dyn SessionRows> {
        Some(self)
    }

    fn snapshot_twin(&self) -> Option<Box<dyn JournalStore + Send>> {
        if !self.in_snapshot.get() {
            return None;
        }
        let conn = Connection::open_with_flags(&self.path, READ_FLAGS).ok()?;
        conn.busy_timeout(Duration::from_millis(1500)).ok()?;
        let twin = SqliteStore {
            conn,
            path: self.path.clone(),
            schema: self.schema.clone(),
            submission_columns: self.submission_columns.clone(),
            tables: self.tables.clone(),
            in_snapshot: Cell::new(false),
            // The twin's own second connection, so a whale the twin inspects is read in two
            // halves too (its `data_version` is noted as the twin's read begins).
            peer: Peer::default(),
            event_store: self.event_store,
            label: self.label.clone(),
        };
        // The store's own read has begun (the caller read its rows in it). The twin's read
        // begins next; then the store's peer, which noted its data_version just before the
        // store's transaction began, proves nothing was committed in between: both read one
        // snapshot.
        twin.begin_read().ok()?;
        // Read inside the transaction: the pragma begins the twin's read, on the latest commit.
        data_version(&twin.conn)?;
        if !self.peer.unchanged_since_begin() {
            return None;
        }
        // In its snapshot from now on: every read is made in it, none begins its own. Dropping
        // the twin closes its connections, which ends its reads.
        twin.in_snapshot.set(true);
        Some(Box::new(twin))
    }

    fn in_snapshot(&self, f: &mut dyn FnMut() -> Result<(), StoreError>) -> Result<(), StoreError> {
        if self.in_snapshot.get() {
            return f();
        }
        self.begin_read()?;
        self.in_snapshot.set(true);
        let result = f();
        self.in_snapshot.set(false);
        self.end_read();
        result
    }
}

type SessionRead<'a> =
    dyn FnMut(&SqliteStore, &SubmissionRow) -> Result<Option<SessionRecord>, StoreError> + 'a;

impl SqliteStore {
    /// Begin the read transaction a snapshot is read in (the peer notes where it began).
    fn begin_read(&self) -> Result<(), StoreError> {
        self.peer.before_begin(&self.path, READ_FLAGS);
        self.conn
            .execute_batch("BEGIN")
            .map_err(|e| StoreError::sqlite("starting a read snapshot", e))
    }

    /// End the read transaction, and any read of the peer's in it.
    fn end_read(&self) {
        let _ = self.conn.execute_batch("COMMIT");
        self.peer.after_end();
    }

    /// The row (`known`: already read in this snapshot), journal, session (read by `session`)
    /// and chunks from one read snapshot.
    fn bundle_in_snapshot(
        &self,
        submission_id: &str,
        known: Option<&SubmissionRow>,
        session: &mut SessionRead<'_>,
    ) -> Result<SubmissionBundle, StoreError> {
        let own = !self.in_snapshot.get();
        if own {
            self.begin_read()?;
        }
        let result = (|| {
            let row = match known {
                Some(row) => row.clone(),
                None => self
                    .query_submissions("WHERE submission_id = ?1", &[&submission_id])?
                    .into_iter()
                    .next()
                    .ok_or_else(|| StoreError::SubmissionNotFound {
                        query: submission_id.to_string(),
                    })?,
            };
            let (journal, journal_problem) = self.journal(submission_id)?;
            let session = session(self, &row)?;
            let stream_chunks = match journal.as_ref().and_then(|j| j.stream_key.as_deref()) {
                Some(key) => self.stream_chunks(key)?,
                None => Vec::new(),
            };
            let event_stream = self.event_stream(&row)?;
            Ok(SubmissionBundle {
                row,
                journal,
                journal_problem,
                session,
                stream_chunks,
                event_stream,
            })
        })();
        if own {
            self.end_read();
        }
        result
    }
}

/// Row access for the backend-neutral loaders (`access.rs`).
impl SessionRows for SqliteStore {
    fn session_data(&self, key: &str) -> Result<Option<SessionData>, StoreError> {
        self.conn
            .prepare_cached("SELECT data FROM flue_sessions WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([key], |r| Ok(session_data_of(r.get_ref(0)?)))
                    .optional()
            })
            .map_err(|e| StoreError::sqlite("reading the session", e))
    }

    fn entry_by_id(&self, session: &str, entry_id: &str) -> Result<Option<EntryRow>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT position, data FROM flue_session_entries WHERE session_id = ?1 AND entry_id = ?2",
            )
            .and_then(|mut s| {
                s.query_row([session, entry_id], |r| {
                    Ok(EntryRow {
                        position: r.get::<_, Option<i64>>(0).unwrap_or(None).unwrap_or(-1),
                        data: bytes_of(r.get_ref(1)?),
                        blob: matches!(r.get_ref(1)?, ValueRef::Blob(_)),
                    })
                })
                .optional()
            })
            .map_err(|e| StoreError::sqlite("reading a session entry", e))
    }

    fn image_chunks(&self, session: &str) -> Result<Vec<(String, ChunkRow)>, StoreError> {
        if !self.has_table("flue_image_chunks") {
            return Ok(Vec::new());
        }
        self.conn
            .prepare_cached(&format!(
                "SELECT owner_part, image_id, chunk_index, chunk_count, typeof(data) = 'text' {SESSION_CHUNKS}"
            ))
            .and_then(|mut s| {
                s.query_map([session], |r| {
                    Ok((
                        String::from_utf8_lossy(&bytes_of(r.get_ref(0)?)).into_owned(),
                        ChunkRow {
                            image_id: crate::parse::chunk_cell(r.get_ref(1)?),
                            index: crate::parse::chunk_cell(r.get_ref(2)?),
                            count: crate::parse::chunk_cell(r.get_ref(3)?),
                            data_is_text: r.get::<_, bool>(4)?,
                            data_units: 0,
                        },
                    ))
                })?
                .collect()
            })
            .map_err(|e| StoreError::sqlite("reading image chunk rows", e))
    }

    fn stored_image_chunks(&self, session: &str) -> Result<Vec<ImageChunk>, StoreError> {
        self.stored_chunks(SESSION_CHUNKS, session)
    }

    fn stored_submission_chunks(&self, submission: &str) -> Result<Vec<ImageChunk>, StoreError> {
        self.stored_chunks(
            "FROM flue_image_chunks WHERE owner_kind = 'submission' AND owner_id = ?1
             ORDER BY owner_part, image_id, chunk_index",
            submission,
        )
    }

    fn entries_before(
        &self,
        session: &str,
        below: i64,
        limit: usize,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        query_entries(
            &self.conn,
            "SELECT entry_id, position, data FROM flue_session_entries
             WHERE session_id = ?1 AND position < ?2 ORDER BY position DESC LIMIT ?3",
            rusqlite::params![session, below, limit as i64],
            f,
        )
    }

    fn entry_count(&self, session: &str) -> Result<Option<usize>, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1")
            .and_then(|mut s| s.query_row([session], |r| r.get(0)))
            .map_err(|e| StoreError::sqlite("counting session entries", e))?;
        Ok(usize::try_from(n).ok())
    }

    fn for_each_entry_while(
        &self,
        session: &str,
        f: &mut crate::session_rows::EntryWhile<'_>,
    ) -> Result<bool, StoreError> {
        self.entries_while(session, f)
    }

    fn for_each_entry(&self, session: &str, f: &mut EntryVisitor<'_>) -> Result<(), StoreError> {
        let all = PartRange {
            lo: None,
            hi: None,
            descending: false,
        };
        entries_in(&self.conn, session, all, f)
    }

    fn split_below(
        &self,
        session: &str,
        below: i64,
        rows: usize,
    ) -> Result<Option<SplitBelow<'_>>, StoreError> {
        if self.conn.is_autocommit() {
            return Ok(None);
        }
        // The position `offset` rows down from `below` (0: the first row below it).
        let down = |offset: usize| -> rusqlite::Result<Option<i64>> {
            self.conn
                .prepare_cached(
                    "SELECT position FROM flue_session_entries WHERE session_id = ?1 AND position < ?2
                     ORDER BY position DESC LIMIT 1 OFFSET ?3",
                )?
                .query_row(rusqlite::params![session, below, offset as i64], |r| {
                    Ok(r.get::<_, i64>(0).ok())
                })
                .optional()
                .map(Option::flatten)
        };
        let err = |e| StoreError::sqlite("splitting a walk's rows", e);
        // Fewer than half a segment below: one connection reads them.
        let Some(mid) = down(rows / 2).map_err(err)? else {
            return Ok(None);
        };
        let lo = down(rows.saturating_sub(1)).map_err(err)?;
        Ok(self.peer.join_snapshot().map(|lower| SplitBelow {
            mid,
            lo,
            upper: &self.conn,
            lower,
        }))
    }

    fn split(&self, session: &str, len: usize) -> Result<Option<Split<'_>>, StoreError> {
        // Only inside this store's read transaction: its snapshot is what the peer must share.
        if self.conn.is_autocommit() || len < SPLIT_FROM {
            return Ok(None);
        }
        let Some((at, first_len)) = split_point(&self.conn, session, len)
            .map_err(|e| StoreError::sqlite("splitting a session's entries", e))?
        else {
            return Ok(None);
        };
        Ok(self.peer.join_snapshot().map(|later| Split {
            at,
            first_len,
            len,
            first: &self.conn,
            later,
        }))
    }
}

/// The position at which `session`'s `len` entries split into two halves, and the first half's
/// length; `None` when a position is not a number (NULL sorts first, text and blobs last, and
/// the halves' range conditions would leave them out).
fn split_point(
    conn: &Connection,
    session: &str,
    len: usize,
) -> rusqlite::Result<Option<(i64, usize)>> {
    let end_type = |order: &str| -> rusqlite::Result<Option<String>> {
        conn.prepare_cached(&format!(
            "SELECT typeof(position) FROM flue_session_entries WHERE session_id = ?1
             ORDER BY position {order} LIMIT 1"
        ))?
        .query_row([session], |r| r.get(0))
        .optional()
    };
    let numeric = |t: Option<String>| matches!(t.as_deref(), Some("integer" | "real"));
    if !numeric(end_type("ASC")?) || !numeric(end_type("DESC")?) {
        return Ok(None);
    }
    let at: Option<i64> = conn
        .prepare_cached(
            "SELECT position FROM flue_session_entries WHERE session_id = ?1
             ORDER BY position LIMIT 1 OFFSET ?2",
        )?
        .query_row(rusqlite::params![session, (len / 2) as i64], |r| {
            Ok(r.get::<_, i64>(0).ok())
        })
        .optional()?
        .flatten();
    let Some(at) = at else { return Ok(None) };
    let first_len: i64 = conn
        .prepare_cached(
            "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1 AND position < ?2",
        )?
        .query_row(rusqlite::params![session, at], |r| r.get(0))?;
    Ok(usize::try_from(first_len).ok().map(|n| (at, n)))
}

/// `flue_sessions.data` as SQLite hands it on, whatever its storage class.
pub(super) fn session_data_of(v: ValueRef<'_>) -> SessionData {
    let (text, lossy) = text_and_lossy(v);
    let blob = matches!(v, ValueRef::Blob(_));
    SessionData { text, lossy, blob }
}

/// Bytes of a column whatever its storage class (text and blobs as stored).
fn bytes_of(v: ValueRef<'_>) -> Vec<u8> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => t.to_vec(),
        other => text_of(other).into_bytes(),
    }
}

/// `flue_meta`'s two version keys (none where the table is missing).
fn read_flue_meta(conn: &Connection, tables: &[String]) -> Result<FlueMeta, StoreError> {
    if !tables.iter().any(|t| t == "flue_meta") {
        return Ok(FlueMeta::default());
    }
    let key = |k: &str| {
        conn.query_row("SELECT value FROM flue_meta WHERE key = ?1", [k], |r| {
            Ok(text_of(r.get_ref(0)?))
        })
        .optional()
        .map_err(|e| StoreError::sqlite("reading flue_meta", e))
    };
    Ok(FlueMeta {
        format_version: key("format_version")?,
        schema_version: key("schema_version")?,
    })
}

fn detect_schema(
    conn: &Connection,
    path: &Path,
    tables: &[String],
) -> Result<SchemaInfo, StoreError> {
    let meta = read_flue_meta(conn, tables)?;
    let format = detect_format(tables, &meta);
    if let Some(refusal) = format.refusal() {
        return Err(refusal);
    }
    let JournalFormat::Beta7 { schema_version } = format else {
        let has = |t: &str| tables.iter().any(|n| n == t);
        if !BETA7_TABLES.iter().all(|t| has(t)) {
            return Err(StoreError::NotFlue {
                path: path.to_path_buf(),
                tables: tables.to_vec(),
            });
        }
        return Err(StoreError::SchemaVersion {
            found: meta.schema_version.unwrap_or_else(|| "(none)".into()),
        });
    };
    let columns = column_names(conn, "flue_agent_submissions")?;
    let variant = if columns
        .iter()
        .any(|c| c == Variant::Libsql.terminal_columns()[0])
    {
        Variant::Libsql
    } else {
        Variant::BuiltIn
    };
    Ok(SchemaInfo {
        variant,
        schema_version,
        immutable: false,
    })
}

/// The built-in adapter's keys table, else libsql's `event_key` column, else none.
fn event_store_of(conn: &Connection, tables: &[String]) -> Result<EventStore, StoreError> {
    let has = |t: &str| tables.iter().any(|x| x == t);
    Ok(
        if has("flue_event_stream_keys")
            && has("flue_event_stream_entries")
            && has("flue_event_streams")
        {
            EventStore::KeysTable
        } else if has("flue_event_stream_entries")
            && has("flue_event_streams")
            && column_names(conn, "flue_event_stream_entries")?
                .iter()
                .any(|c| c == "event_key")
        {
            EventStore::EventKeyColumn
        } else {
            EventStore::Absent
        },
    )
}

fn column_names(conn: &Connection, table: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA table_info({table})"))
        .map_err(|e| StoreError::sqlite("reading the schema", e))?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(1))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| StoreError::sqlite("reading the schema", e))?;
    Ok(rows)
}

fn submission_select_list(conn: &Connection, variant: Variant) -> Result<String, StoreError> {
    let present = column_names(conn, "flue_agent_submissions")?;
    Ok(crate::parse::submission_select_list(&present, variant))
}

/// Whether `text_of` had to replace bytes that are not valid UTF-8.
fn is_lossy(v: ValueRef<'_>) -> bool {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => std::str::from_utf8(t).is_err(),
        _ => false,
    }
}

impl SqliteStore {
    /// The chunk rows `from` (a `FROM … WHERE … = ?1 ORDER BY …` clause) selects, whole.
    fn stored_chunks(&self, from: &str, owner: &str) -> Result<Vec<ImageChunk>, StoreError> {
        if !self.has_table("flue_image_chunks") {
            return Ok(Vec::new());
        }
        self.conn
            .prepare_cached(&format!(
                "SELECT owner_kind, owner_id, owner_part, image_id, chunk_index, chunk_count, data {from}"
            ))
            .and_then(|mut s| {
                s.query_map([owner], |r| {
                    let text = |i| -> rusqlite::Result<String> {
                        Ok(String::from_utf8_lossy(&bytes_of(r.get_ref(i)?)).into_owned())
                    };
                    Ok(ImageChunk {
                        owner_kind: text(0)?,
                        owner_id: text(1)?,
                        owner_part: text(2)?,
                        image_id: crate::parse::stored_value(r.get_ref(3)?),
                        chunk_index: crate::parse::stored_value(r.get_ref(4)?),
                        chunk_count: crate::parse::stored_value(r.get_ref(5)?),
                        data: crate::parse::stored_value(r.get_ref(6)?),
                    })
                })?
                .collect()
            })
            .map_err(|e| StoreError::sqlite("reading image chunk rows", e))
    }
}

/// A session's image chunk rows in the order the runtime reads an entry's. A row whose
/// `owner_part` is not text is never read: the runtime's `owner_part = ?` with an entry id never
/// matches it.
const SESSION_CHUNKS: &str = "FROM flue_image_chunks
     WHERE owner_kind = 'session_entry' AND owner_id = ?1 AND typeof(owner_part) = 'text'
     ORDER BY owner_part, image_id, chunk_index";

fn submission_from_row(r: &Row<'_>) -> rusqlite::Result<SubmissionRow> {
    // The columns in `submission_columns`' order, mapped as the listing maps them.
    let values = (0..21)
        .map(|i| r.get_ref(i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::parse::submission_from_values(&values))
}

fn journal_from_row(r: &Row<'_>) -> rusqlite::Result<JournalRow> {
    // The columns in the journal SELECT's order, mapped as every backend maps them.
    let values = (0..16)
        .map(|i| r.get_ref(i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::parse::journal_from_values(&values))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A submission read outside a transaction is read in one (its chunk rows and its row from
    /// one snapshot), and inside a bundle's own transaction in that one.
    #[test]
    fn a_read_of_rows_is_one_snapshot_and_a_bundle_s_read_nests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(crate::ddl::DDL).unwrap();
        c.execute_batch(
            "INSERT INTO flue_meta VALUES ('schema_version', '3');
             INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload,
               status, accepted_at) VALUES ('s0', 'k', 'dispatch', '{}', 'queued', 0);",
        )
        .unwrap();
        drop(c);
        let store = SqliteStore::open(&path).unwrap();
        let mut in_transaction = Vec::new();
        store
            .visit_submissions("", &[], None, &mut |_| {
                in_transaction.push(!store.conn.is_autocommit())
            })
            .unwrap();
        assert_eq!(in_transaction, [true]);
        assert!(store.conn.is_autocommit(), "the read's transaction ended");
        // A bundle begins its own transaction and reads the row in it.
        let bundle = JournalStore::load_bundle(&store, "s0").unwrap();
        assert_eq!(bundle.row.submission_id, "s0");
        assert!(store.conn.is_autocommit());
    }
}
