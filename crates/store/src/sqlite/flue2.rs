//! A flue 2.x journal (SQLite), read-only: its submission rows and one agent instance's
//! conversation stream batches, in `seq` order, spilled batches put back together. Nothing here
//! interprets a record: `turnscope_core::flue2` folds and classifies what this returns.
//!
//! What the schema holds: docs/flue2.md. A batch whose JSON text exceeds 1,048,576 bytes is
//! spilled by the runtime into `flue_conversation_stream_batch_chunks` (CSS:5765) and its `data`
//! becomes `{"$flueChunkCount":N}` (CSS:5817); its chunks are concatenated in `chunk_index`
//! order. A spill whose chunks are not all there (or disagree on their count) is refused, never
//! guessed at.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use super::{open_connection, read_flue_meta};
use crate::format::{detect_format, JournalFormat};
use crate::StoreError;
use turnscope_core::flue2::submission_parse::{obligation_failure, parse_outcome, ParseOutcome};
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_core::journal::submission_rows::StoredAs;

/// The tables this reader reads.
const FLUE2_TABLES: [&str; 4] = [
    "flue_agent_submissions",
    "flue_conversation_streams",
    "flue_conversation_stream_batches",
    "flue_conversation_stream_batch_chunks",
];

const SUBMISSION_COLUMNS: &str = "sequence, submission_id, session_key, kind, status, accepted_at, \
     canonical_ready_at, attempt_id, input_applied_at, abort_requested_at, started_at, joined_into, \
     settled_at, error, attempt_count, max_attempts, timeout_at, owner_id, lease_expires_at, \
     settlement_record_id, settlement_record, typeof(payload), \
     CASE WHEN status IN ('running', 'queued', 'terminalizing') THEN payload END";

/// A submission row read from `r` ([`SUBMISSION_COLUMNS`]) by the typed getters: the fast path,
/// which fails on a damaged row (text that is not UTF-8, a column in another storage class).
fn submission_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Flue2SubmissionRow, Option<String>)> {
    // `payload`'s storage class, which SQLite answers from the record header; the text itself
    // only where the row parser's outcome is wanted ([`PAYLOAD`]).
    if r.get_ref(PAYLOAD_TYPE)?.as_str()? != "text" {
        return Err(rusqlite::Error::InvalidColumnType(
            PAYLOAD_TYPE,
            "payload".into(),
            rusqlite::types::Type::Blob,
        ));
    }
    let row = Flue2SubmissionRow {
        sequence: r.get(0)?,
        submission_id: r.get(1)?,
        session_key: r.get(2)?,
        kind: r.get(3)?,
        status: r.get(4)?,
        accepted_at: r.get(5)?,
        canonical_ready_at: r.get(6)?,
        attempt_id: r.get(7)?,
        input_applied_at: r.get(8)?,
        abort_requested_at: r.get(9)?,
        started_at: r.get(10)?,
        joined_into: r.get(11)?,
        settled_at: r.get(12)?,
        error: r.get(13)?,
        attempt_count: r.get(14)?,
        max_attempts: r.get(15)?,
        timeout_at: r.get(16)?,
        owner_id: r.get(17)?,
        lease_expires_at: r.get(18)?,
        settlement_record_id: r.get(19)?,
        settlement_record: r.get(20)?,
        not_utf8: Vec::new(),
        stored_as: None,
        parse: ParseOutcome::Parses,
        pass_fails: None,
    };
    Ok((row, r.get(PAYLOAD)?))
}

/// The column of [`SUBMISSION_COLUMNS`] that holds `typeof(payload)`.
const PAYLOAD_TYPE: usize = 21;

/// The column of [`SUBMISSION_COLUMNS`] that holds `payload`, read for a running, queued or
/// terminalizing row only ([`parsed`]); a whole prompt per row is not read for the others.
const PAYLOAD: usize = 22;

/// A row of this status is parsed by a pass of the runtime (`submission_parse`): the running rows
/// of the expired-lease scan and the queued ones of the unready pass and the claim loop, each
/// settled failed where the parser rejects it; the terminalizing ones of the pending-settlement
/// step (`getSubmission`), deferred where it rejects one.
fn parsed(status: &str) -> bool {
    matches!(status, "running" | "queued" | "terminalizing")
}

/// `payload` in a storage class the runtime's row parser rejects (`typeof row.payload !==
/// "string"`), from its `typeof`.
fn payload_stored_as(type_of: rusqlite::types::ValueRef<'_>) -> Option<StoredAs> {
    let class = match type_of.as_str().unwrap_or("") {
        "text" => return None,
        "blob" => "a BLOB",
        "integer" | "real" => "a number",
        _ => "NULL",
    };
    // Only its class is read: a 2.x export copies the column as stored.
    Some(StoredAs {
        column: "payload",
        class,
        value: None,
    })
}

/// A damaged row, where [`submission_row`] failed: every column read whatever it holds. Text
/// that is not UTF-8 is read as the runtime's `node:sqlite` reads it (U+FFFD), its column named
/// in `not_utf8`; the first column in a storage class the runtime's row parser rejects (SAES:704:
/// a BLOB where it wants text, text where it wants a number; SQLite keeps either) is named in
/// `stored_as` (`payload` by its `typeof`).
fn submission_row_any_class(
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<(Flue2SubmissionRow, Option<String>)> {
    use crate::parse::{first_in_another_class, opt_int, status_text, text_and_lossy, Class};
    use rusqlite::types::ValueRef;
    // Not `status`: one that is no text never meets the runtime's `status = 'running'`; it is
    // read as `TEXT stored as CLASS`, a status the runtime does not write.
    const CHECKED: [(usize, &str, Class); 15] = [
        (0, "sequence", Class::Number),
        (1, "submission_id", Class::Text),
        (2, "session_key", Class::Text),
        (3, "kind", Class::Text),
        (5, "accepted_at", Class::Number),
        (6, "canonical_ready_at", Class::NumberOrNull),
        (7, "attempt_id", Class::TextOrNull),
        (8, "input_applied_at", Class::NumberOrNull),
        (9, "abort_requested_at", Class::NumberOrNull),
        (10, "started_at", Class::NumberOrNull),
        (11, "joined_into", Class::TextOrNull),
        (12, "settled_at", Class::NumberOrNull),
        (14, "attempt_count", Class::Number),
        (15, "max_attempts", Class::Number),
        (16, "timeout_at", Class::Number),
    ];
    let v = (0..=PAYLOAD)
        .map(|i| r.get_ref(i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut not_utf8 = Vec::new();
    let mut text = |i: usize| match v[i] {
        ValueRef::Null => None,
        value => {
            let (t, lossy) = text_and_lossy(value);
            if lossy {
                // The last column is `payload` (only where [`parsed`]).
                let name = match i {
                    PAYLOAD => Some("payload"),
                    _ => SUBMISSION_COLUMNS.split(',').map(str::trim).nth(i),
                };
                not_utf8.extend(name);
            }
            Some(t)
        }
    };
    let int = |i: usize| opt_int(v[i]);
    // In the parser's order: `payload` after `kind`.
    let stored_as = first_in_another_class(&v, &CHECKED[..4])
        .or_else(|| payload_stored_as(v[PAYLOAD_TYPE]))
        .or_else(|| first_in_another_class(&v, &CHECKED[4..]));
    // Only text: a payload in another class is already `stored_as`.
    let payload = match v[PAYLOAD] {
        ValueRef::Text(_) => text(PAYLOAD),
        _ => None,
    };
    let row = Flue2SubmissionRow {
        sequence: int(0).unwrap_or(0),
        submission_id: text(1).unwrap_or_default(),
        session_key: text(2).unwrap_or_default(),
        kind: text(3).unwrap_or_default(),
        status: status_text(v[4]),
        accepted_at: int(5),
        canonical_ready_at: int(6),
        attempt_id: text(7),
        input_applied_at: int(8),
        abort_requested_at: int(9),
        started_at: int(10),
        joined_into: text(11),
        settled_at: int(12),
        error: text(13),
        attempt_count: int(14).unwrap_or(0),
        max_attempts: int(15).unwrap_or(0),
        timeout_at: int(16).unwrap_or(0),
        owner_id: text(17),
        lease_expires_at: int(18).unwrap_or(0),
        settlement_record_id: text(19),
        settlement_record: text(20),
        not_utf8,
        stored_as,
        parse: ParseOutcome::Parses,
        pass_fails: None,
    };
    Ok((row, payload))
}

/// One stored batch of a conversation stream, its `data` un-spilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flue2Batch {
    pub seq: i64,
    /// The submission and attempt that wrote it (`None` for unowned batches such as the first).
    pub submission_id: Option<String>,
    pub attempt_id: Option<String>,
    /// The JSON array of records, as stored (the chunks concatenated for a spilled batch).
    pub data: String,
    /// How many chunks it was spilled into (0: stored inline).
    pub chunk_count: usize,
    /// Some of its text is not valid UTF-8 ([`BatchView::not_utf8`]).
    pub not_utf8: bool,
    /// Why the runtime's read of its stream fails on it ([`BatchView::unreadable`]).
    pub unreadable: Option<String>,
}

/// One `flue_conversation_streams` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flue2Stream {
    /// `agents/<agent>/<instance>`.
    pub path: String,
    /// `{"agentName","instanceId"}` as stored.
    pub identity_json: Option<String>,
    pub next_offset: i64,
}

/// A flue 2.x SQLite journal opened read-only.
pub struct Flue2SqliteReader {
    conn: Connection,
    path: PathBuf,
    format_version: String,
    /// The journal has `flue_submission_chunks` (2.x creates it; an export of a journal without
    /// it, or a journal built by hand, may not).
    has_submission_chunks: bool,
}

impl Flue2SqliteReader {
    /// Open `path` read-only (the same file checks as every SQLite read) and check that it is a
    /// 2.x journal turnscope reads (`format_version` 1, the tables above).
    pub fn open(path: &Path) -> Result<Flue2SqliteReader, StoreError> {
        let (conn, tables, _immutable) = open_connection(path)?;
        Flue2SqliteReader::checked(conn, tables, path)
    }

    /// A reader of a journal loaded into `conn` (an export opened again), named by `path`.
    pub(super) fn from_loaded(
        conn: Connection,
        path: &Path,
    ) -> Result<Flue2SqliteReader, StoreError> {
        let tables = super::open_file::table_names(&conn)
            .map_err(|e| StoreError::sqlite("reading the export's tables", e))?;
        Flue2SqliteReader::checked(conn, tables, path)
    }

    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The reader of `conn`, once its `flue_meta` and tables say it is a 2.x journal turnscope
    /// reads.
    fn checked(
        conn: Connection,
        tables: Vec<String>,
        path: &Path,
    ) -> Result<Flue2SqliteReader, StoreError> {
        let meta = read_flue_meta(&conn, &tables)?;
        let format = detect_format(&tables, &meta);
        let format_version = match format {
            JournalFormat::Flue2 { format_version } if format_version == "1" => format_version,
            JournalFormat::Flue2 { format_version } => {
                return Err(StoreError::NewerFormat { format_version })
            }
            other => {
                return Err(StoreError::Flue2Unreadable {
                    what: format!(
                        "{} is not a flue 2.x journal (written by {})",
                        path.display(),
                        other.writer()
                    ),
                })
            }
        };
        if let Some(missing) = FLUE2_TABLES
            .iter()
            .find(|t| !tables.iter().any(|n| n == *t))
        {
            return Err(StoreError::Flue2Unreadable {
                what: format!("this flue 2.x journal has no {missing} table"),
            });
        }
        let has_submission_chunks = tables.iter().any(|t| t == "flue_submission_chunks");
        Ok(Flue2SqliteReader {
            conn,
            path: path.to_path_buf(),
            format_version,
            has_submission_chunks,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `flue_meta.format_version` ("1").
    pub fn format_version(&self) -> &str {
        &self.format_version
    }

    /// Run `read` in one read transaction: every query in it sees the same snapshot.
    pub fn in_snapshot<T>(
        &self,
        read: impl FnOnce(&Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let err = |e| StoreError::sqlite("reading a snapshot", e);
        self.conn.execute_batch("BEGIN").map_err(err)?;
        let out = read(self);
        self.conn.execute_batch("COMMIT").map_err(err)?;
        out
    }

    /// Every submission row, in `sequence` order.
    pub fn submissions(&self) -> Result<Vec<Flue2SubmissionRow>, StoreError> {
        self.query_rows("", &[])
    }

    /// The ids of the deliveries joined into `host` and not settled yet (`joined_into = host`,
    /// status `joined`): the runtime's `settleJoinedSubmissions` settles each before the host.
    pub fn joined_into(&self, host: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .query_rows("WHERE joined_into = ?1 AND status = 'joined'", &[&host])?
            .into_iter()
            .map(|r| r.submission_id)
            .collect())
    }

    /// The row named by a full id or a prefix only one id starts with.
    pub fn find_submission(&self, query: &str) -> Result<Flue2SubmissionRow, StoreError> {
        let not_found = || StoreError::SubmissionNotFound {
            query: query.into(),
        };
        if query.is_empty() {
            return Err(not_found());
        }
        if let Some(row) = self
            .query_rows("WHERE submission_id = ?1", &[&query])?
            .into_iter()
            .next()
        {
            return Ok(row);
        }
        // substr, not LIKE: `%` and `_` are literal in an id.
        let mut hits =
            self.query_rows("WHERE substr(submission_id, 1, length(?1)) = ?1", &[&query])?;
        match hits.len() {
            0 => Err(not_found()),
            1 => Ok(hits.remove(0)),
            _ => Err(StoreError::Ambiguous {
                query: query.into(),
                candidates: hits.into_iter().map(|r| r.submission_id).collect(),
            }),
        }
    }

    fn query_rows(
        &self,
        where_sql: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Flue2SubmissionRow>, StoreError> {
        let err = |e| StoreError::sqlite("reading flue_agent_submissions", e);
        let sql = format!(
            "SELECT {SUBMISSION_COLUMNS} FROM flue_agent_submissions {where_sql} ORDER BY sequence"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(err)?;
        let rows = stmt
            .query_map(params, |r| {
                // A damaged row (text that is not UTF-8, a column in another storage class) is
                // read again whatever it holds: one such row no longer stops every read of the
                // table. Only such a row (each column read so from the start cost `list
                // --expired` on the 2 GB 2.x journal 1.035x its wall time).
                match submission_row(r) {
                    Err(
                        rusqlite::Error::InvalidColumnType(..)
                        | rusqlite::Error::FromSqlConversionFailure(..),
                    ) => submission_row_any_class(r),
                    row => row,
                }
            })
            .map_err(err)?;
        let rows = rows.collect::<Result<Vec<_>, _>>().map_err(err)?;
        // The parser's outcome for each running row, with its chunk rows (most journals have
        // none: one probe).
        let mut chunks =
            if self.has_submission_chunks && rows.iter().any(|(r, _)| parsed(&r.status)) {
                super::flue2_submission_chunks::read(&self.conn, where_sql, params)?
            } else {
                Default::default()
            };
        let pass_fails = if rows
            .iter()
            .any(|(r, _)| matches!(r.status.as_str(), "running" | "terminalizing"))
        {
            self.pass_failure()?
        } else {
            None
        };
        Ok(rows
            .into_iter()
            .map(|(mut row, payload)| {
                if parsed(&row.status) {
                    let own = chunks.remove(&row.submission_id).unwrap_or_default();
                    row.parse = parse_outcome(&row, payload.as_deref(), &own);
                }
                if matches!(row.status.as_str(), "running" | "terminalizing") {
                    row.pass_fails.clone_from(&pass_fails);
                }
                row
            })
            .collect())
    }

    /// Why the runtime's reconciliation pass throws before its expired-lease scan: the first
    /// terminalizing row, in `sequence` order, whose settlement obligation does not parse
    /// (`listPendingSubmissionSettlements` maps every one through `parseSettlementObligation`).
    fn pass_failure(&self) -> Result<Option<String>, StoreError> {
        let err = |e| StoreError::sqlite("reading the terminalizing rows' settlement columns", e);
        let text = |c: &str| format!("CASE WHEN typeof({c}) = 'text' THEN {c} END");
        let sql = format!(
            "SELECT {}, {}, {}, {}, {}, sequence FROM flue_agent_submissions
              WHERE status = 'terminalizing' ORDER BY sequence",
            text("submission_id"),
            text("session_key"),
            text("attempt_id"),
            text("settlement_record_id"),
            text("settlement_record")
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let cell = |i: usize| -> rusqlite::Result<Option<String>> {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Text(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                    _ => None,
                })
            };
            let columns = (0..5)
                .map(cell)
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(err)?;
            let as_str: [Option<&str>; 5] = std::array::from_fn(|i| columns[i].as_deref());
            if let Some((problem, error)) = obligation_failure(as_str) {
                let id = columns[0].as_deref().unwrap_or("?");
                let sequence: i64 = r.get(5).map_err(err)?;
                let error = error.map_or_else(
                    || "JSON.parse's message, which turnscope cannot give".to_string(),
                    |e| format!("{e:?}"),
                );
                return Ok(Some(format!(
                    "the settlement obligation of terminalizing row {id} (sequence {sequence}) does not parse: {problem}; the pass throws {error}"
                )));
            }
        }
        Ok(None)
    }

    /// Every batch of the stream at `path` (`agents/<agent>/<instance>`), in `seq` order, spilled
    /// batches put back together. A stream with no row reads as no batches.
    pub fn stream_batches(&self, path: &str) -> Result<Vec<Flue2Batch>, StoreError> {
        let mut out = Vec::new();
        self.each_stream_batch(path, |b| {
            out.push(b);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Flue2SqliteReader::stream_batches`] one batch at a time, in `seq` order, each handed to
    /// `each` as it is read (a long stream is never held whole); an error from `each` stops the
    /// read and is returned.
    pub fn each_stream_batch(
        &self,
        path: &str,
        mut each: impl FnMut(Flue2Batch) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.each_batch_row(path, |b| {
            each(Flue2Batch {
                seq: b.seq,
                submission_id: b.submission_id.map(str::to_string),
                attempt_id: b.attempt_id.map(str::to_string),
                data: b.data.to_string(),
                chunk_count: b.chunk_count,
                not_utf8: b.not_utf8,
                unreadable: b.unreadable.map(str::to_string),
            })
        })
    }

    /// Every conversation stream (one per agent instance), by path: its `identity_json` as
    /// stored and its head (`next_offset`, the batches appended).
    pub fn streams(&self) -> Result<Vec<Flue2Stream>, StoreError> {
        let err = |e| StoreError::sqlite("reading flue_conversation_streams", e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT path, identity_json, next_offset FROM flue_conversation_streams ORDER BY path",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Flue2Stream {
                    path: r.get(0)?,
                    identity_json: r.get(1)?,
                    next_offset: r.get(2)?,
                })
            })
            .map_err(err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err)
    }

    /// Every stream's head: `(next_offset, incarnation)` by path. Batches are only ever
    /// appended (`next_offset` grows with each) and a stream made again gets a new
    /// `incarnation`, so an unchanged head is an unchanged stream.
    pub fn stream_heads(
        &self,
    ) -> Result<std::collections::HashMap<String, (i64, String)>, StoreError> {
        let err = |e| StoreError::sqlite("reading flue_conversation_streams", e);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, next_offset, incarnation FROM flue_conversation_streams")
            .map_err(err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    /// The stream's head (`next_offset`), where it has a row.
    pub fn stream_next_offset(&self, path: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row(
                "SELECT next_offset FROM flue_conversation_streams WHERE path = ?1",
                [path],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| StoreError::sqlite("reading flue_conversation_streams", e))
    }

    /// The `count` chunks of spilled batch `seq`, concatenated, and whether one was not UTF-8
    /// (read as [`row_text`] reads it); `Err(why)` unless exactly chunks 0..count are stored,
    /// each saying `count`, each text: the runtime's read of the stream fails there too
    /// (`materializeBatchData`, CSS:5826), never guessed at.
    pub(super) fn unspill(
        &self,
        path: &str,
        seq: i64,
        count: usize,
    ) -> Result<Result<(String, bool), String>, StoreError> {
        let err = |e| StoreError::sqlite("reading flue_conversation_stream_batch_chunks", e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT chunk_index, chunk_count, data FROM flue_conversation_stream_batch_chunks \
                 WHERE path = ?1 AND seq = ?2 ORDER BY chunk_index",
            )
            .map_err(err)?;
        // Each chunk's text is appended as it is read, borrowed from its row, to one string
        // sized at the first: the runtime cuts chunks of one size, the last shorter. (A string
        // per chunk, then joined into a string grown chunk by chunk, was a few per cent of
        // `list --expired`'s reading thread, in copies and faulted pages.)
        let mut whole = String::new();
        let mut rows_read = 0usize;
        let mut in_order = true;
        let mut lossy = false;
        let mut rows = stmt.query(rusqlite::params![path, seq]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let index: i64 = r.get(0).map_err(err)?;
            let chunk_count: i64 = r.get(1).map_err(err)?;
            let text = match r.get_ref(2).map_err(err)? {
                rusqlite::types::ValueRef::Text(t) => crate::parse::lossy_text(t),
                other => {
                    // The runtime's `parts.join("")` would take a BLOB in as its bytes' decimal
                    // list (`String(Uint8Array)`): no batch it wrote; turnscope reads none.
                    return Ok(Err(format!(
                        "chunk {index} of its spill is stored as {}, not text (the runtime would \
                         join it in as a list of byte values)",
                        other.data_type()
                    )));
                }
            };
            lossy |= matches!(text, std::borrow::Cow::Owned(_));
            if rows_read == 0 {
                // `count` is the batch row's word, not yet checked against the chunk rows: the
                // room taken ahead is bounded, and a longer batch grows as any string does.
                whole.reserve_exact(text.len().saturating_mul(count).min(MAX_SPILL_RESERVE));
            }
            in_order &= index == rows_read as i64 && chunk_count == count as i64;
            whole.push_str(&text);
            rows_read += 1;
        }
        if rows_read != count || !in_order {
            return Ok(Err(format!(
                "it is spilled into {count} chunks but {rows_read} chunk rows with indexes \
                 0..{count} are not all stored (the runtime: \"Spilled batch chunk rows do not \
                 match the recorded count.\" or \"… are not contiguous.\")"
            )));
        }
        Ok(Ok((whole, lossy)))
    }
}

/// Column `i` of `r` as a string borrowed from the row: `get::<String>`'s answer, its error for
/// a value that is not text included, without the copy.
pub(super) fn row_str<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    match r.get_ref(i)?.as_str() {
        Ok(t) => Ok(t),
        Err(_) => Err(r
            .get::<_, String>(i)
            .err()
            .unwrap_or(rusqlite::Error::InvalidQuery)),
    }
}

/// Column `i` of `r` as text read as the runtime's `node:sqlite` reads it: each sequence that is
/// not UTF-8 as U+FFFD (`Cow::Owned` then, else borrowed from the row); a value that is not text
/// is `get::<String>`'s error.
pub(super) fn row_text<'r>(
    r: &'r rusqlite::Row<'_>,
    i: usize,
) -> rusqlite::Result<std::borrow::Cow<'r, str>> {
    match r.get_ref(i)? {
        rusqlite::types::ValueRef::Text(t) => Ok(crate::parse::lossy_text(t)),
        _ => row_str(r, i).map(std::borrow::Cow::Borrowed),
    }
}

/// [`row_text`], `None` for `NULL`.
pub(super) fn opt_text<'r>(
    r: &'r rusqlite::Row<'_>,
    i: usize,
) -> rusqlite::Result<Option<std::borrow::Cow<'r, str>>> {
    match r.get_ref(i)? {
        rusqlite::types::ValueRef::Null => Ok(None),
        _ => row_text(r, i).map(Some),
    }
}

/// The most [`Flue2SqliteReader::unspill`] reserves ahead for a spilled batch.
const MAX_SPILL_RESERVE: usize = 64 << 20;

/// `N` of a spilled batch's `data`, `{"$flueChunkCount":N}` (CSS:5817); `None` for a batch stored
/// inline (a JSON array).
pub(super) fn spill_count(data: &str) -> Option<usize> {
    if !data.trim_start().starts_with('{') {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(data).ok()?;
    let o = v.as_object()?;
    if o.len() != 1 {
        return None;
    }
    o.get("$flueChunkCount")?.as_u64().map(|n| n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column read borrowed answers as `get` does: the text, `None` for `NULL` (the optional
    /// read), and for a value that is not text the error `get::<String>` gives; text that is not
    /// UTF-8 is read with U+FFFD for each bad sequence (as `node:sqlite` reads it), owned.
    #[test]
    fn a_borrowed_column_answers_as_get_does() {
        use std::borrow::Cow;
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = "SELECT 'é', NULL, x'00ff', 7, CAST(x'61ff62e282' AS TEXT)";
        conn.query_row(sql, [], |r| {
            assert_eq!(row_str(r, 0).unwrap(), "é");
            assert!(matches!(row_text(r, 0).unwrap(), Cow::Borrowed("é")));
            assert!(matches!(opt_text(r, 0).unwrap(), Some(Cow::Borrowed("é"))));
            assert_eq!(opt_text(r, 1).unwrap(), None);
            for i in [1, 2, 3] {
                let want = r.get::<_, String>(i).unwrap_err().to_string();
                assert_eq!(row_str(r, i).unwrap_err().to_string(), want, "{i}");
                if i != 1 {
                    assert_eq!(row_text(r, i).unwrap_err().to_string(), want, "{i}");
                }
            }
            for i in [2, 3] {
                let want = r.get::<_, Option<String>>(i).unwrap_err().to_string();
                assert_eq!(opt_text(r, i).unwrap_err().to_string(), want, "{i}");
            }
            assert!(r.get::<_, String>(4).is_err());
            let lossy = row_text(r, 4).unwrap();
            assert!(matches!(lossy, Cow::Owned(_)));
            // One U+FFFD for the lone 0xff, one for the cut-off three-byte sequence: what V8's
            // UTF-8 decoder (and so `node:sqlite`) gives.
            assert_eq!(lossy, "a\u{fffd}b\u{fffd}");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn only_the_runtimes_spill_marker_is_a_spill() {
        assert_eq!(spill_count(r#"{"$flueChunkCount":3}"#), Some(3));
        assert_eq!(spill_count(r#"[{"v":1}]"#), None);
        assert_eq!(spill_count(r#"{"$flueChunkCount":3,"x":1}"#), None);
        assert_eq!(spill_count(r#"{"$flueChunkCount":"3"}"#), None);
    }
}
