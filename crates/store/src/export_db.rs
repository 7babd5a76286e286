//! An export file (`turnscope.export/1`, written by `turnscope export` and the TUI's `e`) opened
//! as a journal: the rows it holds (its `rows` section) are loaded into an in-memory SQLite
//! database with the runtime's schema ([`crate::ddl::DDL`]) and served by an ordinary read-only
//! [`SqliteStore`], so `show`, `classify`, `list`, the plan and the TUI read it exactly as they
//! read the database it came from. Nothing is written to disk; a write is refused
//! ([`StoreError::ExportReadOnly`]).
//!
//! The rows section is written here too ([`ExportRows::to_json`]), beside the reader, so the two
//! cannot drift apart.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{params, Connection, OpenFlags};
use serde_json::{json, Map, Value};

use crate::{SqliteStore, StoreError};
use turnscope_core::journal::records::{terminal_event_key, EventStore, EventStream};
use turnscope_core::journal::status::{JournalPhase, SubmissionStatus};
use turnscope_core::journal::submission_rows::{
    ImageChunk, JournalRow, StoredAs, StoredValue, SubmissionRow,
};

/// The export document's schema.
pub const EXPORT_SCHEMA: &str = "turnscope.export/1";

/// One `flue_session_entries` row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    pub entry_id: String,
    pub position: i64,
    /// `data` byte for byte (not UTF-8 only in a damaged database).
    pub data: Vec<u8>,
    /// The id or data is stored as a BLOB (a damaged database): the copy stores the data as one
    /// too, so the runtime refuses to load it there as well.
    pub blob: bool,
}

/// Every row an export needs to be opened again and read as its database was: the session row,
/// its entries, and each submission's row, turn journal, stream chunks and event stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportRows {
    /// `flue_meta.schema_version` of the source.
    pub schema_version: String,
    pub event_store: Option<EventStore>,
    /// `(id, data)` of the `flue_sessions` row.
    pub session: Option<(String, String)>,
    /// The session's data is stored as a BLOB (a damaged database): the copy keeps it one.
    pub session_blob: bool,
    /// In position order.
    pub entries: Vec<RawEntry>,
    pub submissions: Vec<SubmissionRow>,
    pub journals: Vec<JournalRow>,
    /// `(stream_key, segment_index, body)`.
    pub stream_chunks: Vec<(String, i64, String)>,
    pub event_streams: Vec<EventStream>,
    /// The session's `flue_image_chunks` rows (owner `session_entry`) and its submissions' (owner
    /// `submission`): the runtime checks them against the markers of the entries (on every load)
    /// and of each direct prompt's payload (with its row), so a copy without them is damaged.
    pub image_chunks: Vec<ImageChunk>,
}

fn event_store_name(s: EventStore) -> &'static str {
    match s {
        EventStore::KeysTable => "keys_table",
        EventStore::EventKeyColumn => "event_key_column",
        EventStore::Postgres => "postgres",
        EventStore::Absent => "absent",
    }
}

fn event_store_of(name: &str) -> Option<EventStore> {
    Some(match name {
        "keys_table" => EventStore::KeysTable,
        "event_key_column" => EventStore::EventKeyColumn,
        "postgres" => EventStore::Postgres,
        "absent" => EventStore::Absent,
        _ => return None,
    })
}

/// Text as JSON: a string when it is UTF-8, else `{"bytes": [..]}` (kept exactly).
fn bytes_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => Value::String(s.to_string()),
        Err(_) => json!({ "bytes": b }),
    }
}

impl ExportRows {
    /// The `rows` section of the export document.
    pub fn to_json(&self) -> Value {
        let submissions: Vec<Value> = self.submissions.iter().map(submission_json).collect();
        let journals: Vec<Value> = self.journals.iter().map(journal_json).collect();
        json!({
            "schemaVersion": self.schema_version,
            "eventStore": self.event_store.map(event_store_name),
            "session": self.session.as_ref().map(|(id, data)| match self.session_blob {
                true => json!({"id": id, "data": { "blob": data.as_bytes() }}),
                false => json!({"id": id, "data": data}),
            }),
            "entries": self.entries.iter().map(|e| json!({
                "entryId": e.entry_id,
                "position": e.position,
                "data": if e.blob { json!({ "blob": e.data }) } else { bytes_json(&e.data) },
            })).collect::<Vec<_>>(),
            "submissions": submissions,
            "turnJournals": journals,
            "streamChunks": self.stream_chunks.iter().map(|(k, i, b)| json!({
                "streamKey": k, "segmentIndex": i, "body": b,
            })).collect::<Vec<_>>(),
            "imageChunks": self.image_chunks.iter().map(|c| json!({
                "ownerKind": c.owner_kind, "ownerId": c.owner_id, "ownerPart": c.owner_part,
                "imageId": stored_json(&c.image_id), "chunkIndex": stored_json(&c.chunk_index),
                "chunkCount": stored_json(&c.chunk_count), "data": stored_json(&c.data),
            })).collect::<Vec<_>>(),
            "eventStreams": self.event_streams.iter().map(|s| json!({
                "path": s.path,
                "head": s.head.map(|(next, closed)| json!({"nextOffset": next, "closed": closed})),
                "keyed": s.keyed.as_ref().map(|(seq, data)| json!({"seq": seq, "data": data})),
            })).collect::<Vec<_>>(),
        })
    }

    /// Read the `rows` section back; `Err` says what is wrong with it.
    pub fn from_json(v: &Value) -> Result<ExportRows, String> {
        let o = v.as_object().ok_or("rows is not an object")?;
        let mut rows = ExportRows {
            schema_version: str_field(o, "schemaVersion")?,
            event_store: match o.get("eventStore") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => {
                    Some(event_store_of(s).ok_or_else(|| format!("unknown eventStore {s:?}"))?)
                }
                Some(_) => return Err("eventStore is not a string".into()),
            },
            ..ExportRows::default()
        };
        if let Some(s) = o.get("session").filter(|s| !s.is_null()) {
            let s = s.as_object().ok_or("session is not an object")?;
            let data = match s.get("data").and_then(|d| d.get("blob")) {
                Some(b) => {
                    rows.session_blob = true;
                    let bytes = serde_json::from_value::<Vec<u8>>(b.clone())
                        .map_err(|e| format!("the session's data bytes: {e}"))?;
                    String::from_utf8(bytes).map_err(|_| "the session's data is not UTF-8")?
                }
                None => str_field(s, "data")?,
            };
            rows.session = Some((str_field(s, "id")?, data));
        }
        for e in array(o, "entries")? {
            let e = e.as_object().ok_or("an entry is not an object")?;
            let (data, blob) = match e.get("data") {
                Some(Value::String(s)) => (s.as_bytes().to_vec(), false),
                Some(Value::Object(b)) => {
                    let blob = b.contains_key("blob");
                    let bytes = b.get(if blob { "blob" } else { "bytes" });
                    let data =
                        serde_json::from_value::<Vec<u8>>(bytes.cloned().unwrap_or_default())
                            .map_err(|e| format!("an entry's data bytes: {e}"))?;
                    (data, blob)
                }
                _ => return Err("an entry has no data".into()),
            };
            rows.entries.push(RawEntry {
                entry_id: str_field(e, "entryId")?,
                position: int_field(e, "position")?,
                data,
                blob,
            });
        }
        for s in array(o, "submissions")? {
            rows.submissions.push(submission_of(
                s.as_object().ok_or("a submission is not an object")?,
            )?);
        }
        for j in array(o, "turnJournals")? {
            rows.journals.push(journal_of(
                j.as_object().ok_or("a turn journal is not an object")?,
            )?);
        }
        for c in array(o, "streamChunks")? {
            let c = c.as_object().ok_or("a stream chunk is not an object")?;
            rows.stream_chunks.push((
                str_field(c, "streamKey")?,
                int_field(c, "segmentIndex")?,
                str_field(c, "body")?,
            ));
        }
        // Added within version 1: an export written before has none.
        if let Some(chunks) = o.get("imageChunks") {
            let chunks = chunks.as_array().ok_or("imageChunks is not an array")?;
            for c in chunks {
                let c = c.as_object().ok_or("an image chunk is not an object")?;
                let cell = |key: &str| {
                    stored_of(c.get(key).unwrap_or(&Value::Null))
                        .ok_or_else(|| format!("an image chunk's {key} is not a stored value"))
                };
                rows.image_chunks.push(ImageChunk {
                    owner_kind: str_field(c, "ownerKind")?,
                    owner_id: str_field(c, "ownerId")?,
                    owner_part: str_field(c, "ownerPart")?,
                    image_id: cell("imageId")?,
                    chunk_index: cell("chunkIndex")?,
                    chunk_count: cell("chunkCount")?,
                    data: cell("data")?,
                });
            }
        }
        for s in array(o, "eventStreams")? {
            let s = s.as_object().ok_or("an event stream is not an object")?;
            let head = match s.get("head").filter(|h| !h.is_null()) {
                Some(Value::Object(h)) => Some((
                    int_field(h, "nextOffset")?,
                    h.get("closed").and_then(Value::as_bool).unwrap_or(false),
                )),
                Some(_) => return Err("an event stream's head is not an object".into()),
                None => None,
            };
            let keyed = match s.get("keyed").filter(|h| !h.is_null()) {
                Some(Value::Object(k)) => Some((int_field(k, "seq")?, str_field(k, "data")?)),
                Some(_) => return Err("an event stream's keyed event is not an object".into()),
                None => None,
            };
            rows.event_streams.push(EventStream {
                path: str_field(s, "path")?,
                store: rows.event_store.unwrap_or(EventStore::KeysTable),
                head,
                keyed,
            });
        }
        Ok(rows)
    }
}

fn array<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a Vec<Value>, String> {
    match o.get(key) {
        Some(Value::Array(a)) => Ok(a),
        None => Err(format!("no {key}")),
        Some(_) => Err(format!("{key} is not an array")),
    }
}

fn str_field(o: &Map<String, Value>, key: &str) -> Result<String, String> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(format!("{key} is not a string")),
    }
}

fn opt_str(o: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} is not a string or null")),
    }
}

fn int_field(o: &Map<String, Value>, key: &str) -> Result<i64, String> {
    o.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("{key} is not an integer"))
}

fn opt_int(o: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{key} is not an integer or null")),
    }
}

/// A submission row, every column under its name in the built-in adapter's table.
fn submission_json(r: &SubmissionRow) -> Value {
    with_stored_as(
        r.stored_as.as_ref(),
        json!({
            "sequence": r.sequence,
            "submission_id": r.submission_id,
            "session_key": r.session_key,
            "kind": r.kind,
            "payload": r.payload,
            "status": r.status.as_str(),
            "accepted_at": r.accepted_at,
            "attempt_id": r.attempt_id,
            "input_applied_at": r.input_applied_at,
            "recovery_requested_at": r.recovery_requested_at,
            "started_at": r.started_at,
            "settled_at": r.settled_at,
            "error": r.error,
            "attempt_count": r.attempt_count,
            "max_retry": r.max_retry,
            "timeout_at": r.timeout_at,
            "owner_id": r.owner_id,
            "lease_expires_at": r.lease_expires_at,
            "terminal_event_key": r.terminal_key,
            "terminal_event_json": r.terminal_event,
            "terminal_event_offset": r.terminal_offset,
        }),
    )
}

fn submission_of(o: &Map<String, Value>) -> Result<SubmissionRow, String> {
    Ok(SubmissionRow {
        sequence: int_field(o, "sequence")?,
        submission_id: str_field(o, "submission_id")?,
        session_key: str_field(o, "session_key")?,
        kind: str_field(o, "kind")?,
        payload: str_field(o, "payload")?,
        status: SubmissionStatus::parse(&str_field(o, "status")?),
        accepted_at: opt_int(o, "accepted_at")?,
        attempt_id: opt_str(o, "attempt_id")?,
        input_applied_at: opt_int(o, "input_applied_at")?,
        recovery_requested_at: opt_int(o, "recovery_requested_at")?,
        started_at: opt_int(o, "started_at")?,
        settled_at: opt_int(o, "settled_at")?,
        error: opt_str(o, "error")?,
        attempt_count: int_field(o, "attempt_count")?,
        max_retry: int_field(o, "max_retry")?,
        timeout_at: int_field(o, "timeout_at")?,
        owner_id: opt_str(o, "owner_id")?,
        lease_expires_at: int_field(o, "lease_expires_at")?,
        terminal_key: opt_str(o, "terminal_event_key")?,
        terminal_event: opt_str(o, "terminal_event_json")?,
        terminal_offset: opt_str(o, "terminal_event_offset")?,
        stored_as: stored_as_of(o)?,
        image_chunks: Vec::new(),
    })
}

fn journal_json(j: &JournalRow) -> Value {
    with_stored_as(
        j.stored_as.as_ref(),
        json!({
            "submission_id": j.submission_id,
            "session_key": j.session_key,
            "kind": j.kind,
            "attempt_id": j.attempt_id,
            "operation_id": j.operation_id,
            "turn_id": j.turn_id,
            "phase": j.phase.as_str(),
            "revision": j.revision,
            "created_at": j.created_at,
            "updated_at": j.updated_at,
            "checkpoint_leaf_id": j.checkpoint_leaf_id,
            "tool_request_json": j.tool_request_json,
            "stream_key": j.stream_key,
            "stream_consumed_at": j.stream_consumed_at,
            "committed": j.committed,
            "committed_leaf_id": j.committed_leaf_id,
        }),
    )
}

fn journal_of(o: &Map<String, Value>) -> Result<JournalRow, String> {
    Ok(JournalRow {
        submission_id: str_field(o, "submission_id")?,
        session_key: str_field(o, "session_key")?,
        kind: str_field(o, "kind")?,
        attempt_id: str_field(o, "attempt_id")?,
        operation_id: str_field(o, "operation_id")?,
        turn_id: str_field(o, "turn_id")?,
        phase: JournalPhase::parse(&str_field(o, "phase")?),
        revision: int_field(o, "revision")?,
        created_at: int_field(o, "created_at")?,
        updated_at: int_field(o, "updated_at")?,
        checkpoint_leaf_id: opt_str(o, "checkpoint_leaf_id")?,
        tool_request_json: opt_str(o, "tool_request_json")?,
        stream_key: opt_str(o, "stream_key")?,
        stream_consumed_at: opt_int(o, "stream_consumed_at")?,
        committed: o
            .get("committed")
            .and_then(Value::as_bool)
            .ok_or("committed is not a boolean")?,
        committed_leaf_id: opt_str(o, "committed_leaf_id")?,
        stored_as: stored_as_of(o)?,
    })
}

/// A row with a column in another storage class (`storedAs`: its column, class and value as
/// stored), so that the export, opened, stores it so and is judged as the journal is; the row's
/// own columns hold the value as read.
fn with_stored_as(stored: Option<&StoredAs>, mut row: Value) -> Value {
    let (Some(s), Some(o)) = (stored, row.as_object_mut()) else {
        return row;
    };
    let Some(value) = s.value.as_ref().map(tagged_json) else {
        return row;
    };
    o.insert(
        "storedAs".into(),
        json!({ "column": s.column, "class": s.class, "value": value }),
    );
    row
}

/// A row's `storedAs` ([`with_stored_as`]), if it has one.
fn stored_as_of(o: &Map<String, Value>) -> Result<Option<StoredAs>, String> {
    let Some(s) = o.get("storedAs").filter(|s| !s.is_null()) else {
        return Ok(None);
    };
    let s = s.as_object().ok_or("storedAs is not an object")?;
    let (column, class) = (str_field(s, "column")?, str_field(s, "class")?);
    let (column, class) = crate::parse::stored_as_names(&column, &class).ok_or_else(|| {
        format!("storedAs names a column or class turnscope does not check: {column:?}, {class:?}")
    })?;
    let value = match s.get("value") {
        None | Some(Value::Null) => StoredValue::Null,
        Some(Value::Object(v)) => {
            tagged_of(v).ok_or("storedAs value is not integer, realBits, text or blob (bytes)")?
        }
        Some(_) => return Err("storedAs value is not an object or null".into()),
    };
    Ok(Some(StoredAs {
        column,
        class,
        value: Some(value),
    }))
}

/// The parameters of a row's insert, `columns` in order: the column its `storedAs` names bound
/// as stored (its storage class kept: SQLite keeps a BLOB or text as bound in any column, where
/// the runtime would find them).
fn with_stored(
    columns: &str,
    mut values: Vec<rusqlite::types::Value>,
    stored: Option<&StoredAs>,
) -> Vec<rusqlite::types::Value> {
    if let Some((s, v)) = stored.and_then(|s| Some((s, s.value.as_ref()?))) {
        if let Some(i) = columns
            .split(',')
            .map(str::trim)
            .position(|c| c == s.column)
        {
            values[i] = sql_value(v);
        }
    }
    values
}

/// A stored value as `{"integer": N}`, `{"realBits": N}`, `{"text": [bytes]}`, `{"blob":
/// [bytes]}`, or `null`.
fn tagged_json(v: &StoredValue) -> Value {
    match v {
        StoredValue::Null => Value::Null,
        StoredValue::Integer(i) => json!({ "integer": i }),
        StoredValue::Real(bits) => json!({ "realBits": bits }),
        StoredValue::Text(t) => json!({ "text": t }),
        StoredValue::Blob(b) => json!({ "blob": b }),
    }
}

/// [`tagged_json`] read back (an object of one key).
fn tagged_of(v: &Map<String, Value>) -> Option<StoredValue> {
    let bytes = |v: &Value| serde_json::from_value::<Vec<u8>>(v.clone()).ok();
    Some(match v.iter().next()? {
        (k, n) if k == "integer" => StoredValue::Integer(n.as_i64()?),
        (k, n) if k == "realBits" => StoredValue::Real(n.as_u64()?),
        (k, t) if k == "text" => StoredValue::Text(bytes(t)?),
        (k, b) if k == "blob" => StoredValue::Blob(bytes(b)?),
        _ => return None,
    })
}

/// An image chunk's cell: text (UTF-8, nearly always) as a string and an integer as a number,
/// so that an image's data is not written as an array of bytes; any other as [`tagged_json`].
fn stored_json(v: &StoredValue) -> Value {
    match v {
        StoredValue::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => tagged_json(v),
        },
        StoredValue::Integer(i) => json!(i),
        other => tagged_json(other),
    }
}

/// [`stored_json`] read back.
fn stored_of(v: &Value) -> Option<StoredValue> {
    Some(match v {
        Value::Null => StoredValue::Null,
        Value::String(s) => StoredValue::Text(s.as_bytes().to_vec()),
        Value::Number(n) => StoredValue::Integer(n.as_i64()?),
        Value::Object(o) => tagged_of(o)?,
        _ => return None,
    })
}

/// A stored value bound as it was stored (its storage class kept).
fn sql_value(v: &StoredValue) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        StoredValue::Null => V::Null,
        StoredValue::Integer(n) => V::Integer(*n),
        StoredValue::Real(bits) => V::Real(f64::from_bits(*bits)),
        // Text that is not UTF-8 (rarer still) with U+FFFD for each bad sequence, as the
        // runtime reads it.
        StoredValue::Text(t) => V::Text(String::from_utf8_lossy(t).into_owned()),
        StoredValue::Blob(b) => V::Blob(b.clone()),
    }
}

/// Whether the first bytes of `path` read as JSON (an object or an array after any whitespace
/// or byte-order mark): `--db` then names an export (or some other JSON file, said as such),
/// never an SQLite database, whose first bytes are `SQLite format 3`.
///
/// The descriptor is never closed (`forget`): `path` is usually a database this process already
/// has open in SQLite, and closing any descriptor of a file drops every POSIX lock the process
/// holds on it. Without its shared lock, another connection that closes believes it is the last,
/// checkpoints and deletes the WAL, and our next commit goes into the deleted file: a bulk apply
/// said "applied" and nothing was in the database.
pub fn looks_like_json(path: &Path) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 256];
    let n = f.read(&mut head).unwrap_or(0);
    std::mem::forget(f);
    let head = head[..n]
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(&head[..n]);
    matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// Open the export at `path`: read its rows into a new in-memory database and serve it
/// read-only. Its location is the export file's path.
pub fn open_export(path: &Path) -> Result<SqliteStore, StoreError> {
    let text = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => StoreError::Missing(path.to_path_buf()),
        _ => StoreError::NotReadable {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
    })?;
    let not = |what: String| StoreError::NotAnExport {
        path: path.to_path_buf(),
        what,
    };
    let doc: Value = serde_json::from_slice(&text)
        .map_err(|e| not(format!("a JSON file that does not parse ({e})")))?;
    let rows = rows_of(&doc).map_err(not)?;
    load(&rows, &path.display().to_string())
}

/// The rows of an export document, or what the document is instead.
pub fn rows_of(doc: &Value) -> Result<ExportRows, String> {
    let schema = match doc.get("schema") {
        Some(Value::String(s)) => s.as_str(),
        _ if doc.is_object() => return Err("a JSON object without a \"schema\" field".into()),
        _ => return Err("a JSON document that is not an object".into()),
    };
    if schema != EXPORT_SCHEMA {
        return Err(format!("a {schema} document"));
    }
    match doc.get("rows") {
        None | Some(Value::Null) => Err(
            "a turnscope.export/1 document without its rows section (written before exports could be opened again)"
                .into(),
        ),
        Some(rows) => ExportRows::from_json(rows)
            .map_err(|e| format!("a turnscope.export/1 document whose rows are damaged ({e})")),
    }
}

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// Load `rows` into a new in-memory database (SQLite's `memdb`, shared by name with the store's
/// second connection) and open it as a read-only store that says `label` for its location.
pub fn load(rows: &ExportRows, label: &str) -> Result<SqliteStore, StoreError> {
    let uri = format!(
        "file:/turnscope-export-{}-{}?vfs=memdb",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::Relaxed)
    );
    let err = |e| StoreError::sqlite("loading the export", e);
    let conn = Connection::open_with_flags(
        &uri,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(err)?;
    write_rows(&conn, rows).map_err(err)?;
    // The loading connection stays open until the store's own is: the database lives while
    // any connection to it does.
    let store = SqliteStore::open_memory(&uri, label)?;
    drop(conn);
    Ok(store)
}

fn write_rows(conn: &Connection, rows: &ExportRows) -> rusqlite::Result<()> {
    conn.execute_batch(crate::ddl::DDL)?;
    let tx = conn.unchecked_transaction()?;
    insert_rows(&tx, rows)?;
    tx.commit()
}

fn insert_rows(tx: &Connection, rows: &ExportRows) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO flue_meta (key, value) VALUES ('schema_version', ?1)",
        [&rows.schema_version],
    )?;
    if let Some((id, data)) = &rows.session {
        tx.execute(
            "INSERT INTO flue_sessions (id, data)
             VALUES (?1, CASE WHEN ?3 THEN CAST(?2 AS BLOB) ELSE ?2 END)",
            params![id, data, rows.session_blob],
        )?;
        let mut ins = tx.prepare_cached(
            "INSERT INTO flue_session_entries (session_id, entry_id, position, data)
             VALUES (?1, ?2, ?3, CASE WHEN ?5 THEN ?4 ELSE CAST(?4 AS TEXT) END)",
        )?;
        for e in &rows.entries {
            ins.execute(params![id, e.entry_id, e.position, e.data, e.blob])?;
        }
    }
    const SUBMISSION_COLUMNS: &str = "sequence, submission_id, session_key, kind, payload, \
         status, accepted_at, attempt_id, input_applied_at, recovery_requested_at, started_at, \
         settled_at, error, attempt_count, max_retry, timeout_at, owner_id, lease_expires_at, \
         terminal_event_key, terminal_event_json, terminal_event_offset";
    let mut ins = tx.prepare_cached(&format!(
        "INSERT INTO flue_agent_submissions ({SUBMISSION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, \
         ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)"
    ))?;
    for r in &rows.submissions {
        use rusqlite::types::Value as V;
        let text = |s: &str| V::Text(s.to_string());
        let opt_text = |s: &Option<String>| s.as_deref().map_or(V::Null, text);
        let opt_int = |n: Option<i64>| n.map_or(V::Null, V::Integer);
        let values = vec![
            V::Integer(r.sequence),
            text(&r.submission_id),
            text(&r.session_key),
            text(&r.kind),
            text(&r.payload),
            text(r.status.as_str()),
            opt_int(r.accepted_at),
            opt_text(&r.attempt_id),
            opt_int(r.input_applied_at),
            opt_int(r.recovery_requested_at),
            opt_int(r.started_at),
            opt_int(r.settled_at),
            opt_text(&r.error),
            V::Integer(r.attempt_count),
            V::Integer(r.max_retry),
            V::Integer(r.timeout_at),
            opt_text(&r.owner_id),
            V::Integer(r.lease_expires_at),
            opt_text(&r.terminal_key),
            opt_text(&r.terminal_event),
            opt_text(&r.terminal_offset),
        ];
        let values = with_stored(SUBMISSION_COLUMNS, values, r.stored_as.as_ref());
        ins.execute(rusqlite::params_from_iter(values))?;
    }
    const JOURNAL_COLUMNS: &str = "submission_id, session_key, kind, attempt_id, operation_id, \
         turn_id, phase, revision, created_at, updated_at, checkpoint_leaf_id, tool_request_json, \
         stream_key, stream_consumed_at, committed, committed_leaf_id";
    let mut ins = tx.prepare_cached(&format!(
        "INSERT INTO flue_agent_turn_journals ({JOURNAL_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, \
         ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
    ))?;
    for j in &rows.journals {
        use rusqlite::types::Value as V;
        let text = |s: &str| V::Text(s.to_string());
        let opt_text = |s: &Option<String>| s.as_deref().map_or(V::Null, text);
        let values = vec![
            text(&j.submission_id),
            text(&j.session_key),
            text(&j.kind),
            text(&j.attempt_id),
            text(&j.operation_id),
            text(&j.turn_id),
            text(j.phase.as_str()),
            V::Integer(j.revision),
            V::Integer(j.created_at),
            V::Integer(j.updated_at),
            opt_text(&j.checkpoint_leaf_id),
            opt_text(&j.tool_request_json),
            opt_text(&j.stream_key),
            j.stream_consumed_at.map_or(V::Null, V::Integer),
            V::Integer(j.committed as i64),
            opt_text(&j.committed_leaf_id),
        ];
        let values = with_stored(JOURNAL_COLUMNS, values, j.stored_as.as_ref());
        ins.execute(rusqlite::params_from_iter(values))?;
    }
    // OR IGNORE: the copy's table keeps the runtime's NOT NULL columns, which a damaged row
    // stored with a NULL would break; the runtime's read never took such a row anyway.
    let mut ins = tx.prepare_cached(
        "INSERT OR IGNORE INTO flue_image_chunks
         (owner_kind, owner_id, owner_part, image_id, chunk_index, chunk_count, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for c in &rows.image_chunks {
        ins.execute(params![
            c.owner_kind,
            c.owner_id,
            c.owner_part,
            sql_value(&c.image_id),
            sql_value(&c.chunk_index),
            sql_value(&c.chunk_count),
            sql_value(&c.data),
        ])?;
    }
    let mut ins = tx.prepare_cached(
        "INSERT OR REPLACE INTO flue_agent_stream_chunks (stream_key, segment_index, body) VALUES (?1, ?2, ?3)",
    )?;
    for (k, i, b) in &rows.stream_chunks {
        ins.execute(params![k, i, b])?;
    }
    if rows.event_store == Some(EventStore::Absent) {
        tx.execute_batch(
            "DROP TRIGGER flue_event_stream_key_append; DROP TABLE flue_event_stream_keys;
             DROP TABLE flue_event_stream_entries; DROP TABLE flue_event_streams;",
        )?;
    } else {
        for s in &rows.event_streams {
            let Some((next, closed)) = s.head else {
                continue;
            };
            tx.execute(
                "INSERT OR IGNORE INTO flue_event_streams (path) VALUES (?1)",
                [&s.path],
            )?;
            if let Some((seq, data)) = &s.keyed {
                // The terminal key of the submission whose stream this is (the trigger copies
                // the event into the entries table).
                let key = rows
                    .submissions
                    .iter()
                    .find(|r| {
                        turnscope_core::journal::records::event_stream_path(r).as_deref()
                            == Some(s.path.as_str())
                    })
                    .map(|r| terminal_event_key(&r.submission_id));
                if let Some(key) = key {
                    tx.execute(
                        "INSERT OR IGNORE INTO flue_event_stream_keys (path, key, seq, data) VALUES (?1, ?2, ?3, ?4)",
                        params![s.path, key, seq, data],
                    )?;
                }
            }
            tx.execute(
                "UPDATE flue_event_streams SET next_offset = ?2, closed = ?3 WHERE path = ?1",
                params![s.path, next, closed as i64],
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JournalStore;

    #[test]
    fn a_json_file_that_is_not_an_export_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for (text, what) in [
            (
                "{\"schema\":\"turnscope.show/1\"}",
                "a turnscope.show/1 document",
            ),
            ("[1,2]", "a JSON document that is not an object"),
            ("{\"a\":1}", "without a \"schema\" field"),
            (
                "{\"schema\":\"turnscope.export/1\"}",
                "without its rows section",
            ),
            ("{ nope", "does not parse"),
        ] {
            let p = dir.path().join("x.json");
            std::fs::write(&p, text).unwrap();
            assert!(looks_like_json(&p), "{text}");
            let e = open_export(&p).err().expect(text).to_string();
            assert!(e.contains(what), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn rows_load_into_a_read_only_store_and_survive_a_round_trip() {
        let rows = ExportRows {
            schema_version: "3".into(),
            event_store: Some(EventStore::KeysTable),
            session: Some(("agent-session:[\"a\",\"b\"]".into(), "{}".into())),
            session_blob: true,
            entries: vec![
                RawEntry {
                    entry_id: "e1".into(),
                    position: 0,
                    data: b"{\"type\":\"message\",\"id\":\"e1\"}".to_vec(),
                    blob: false,
                },
                // Damage the copy keeps: the runtime refuses the session there too.
                RawEntry {
                    entry_id: "e2".into(),
                    position: 1,
                    data: b"{\"type\":\"message\",\"id\":\"e2\"}".to_vec(),
                    blob: true,
                },
            ],
            ..ExportRows::default()
        };
        let back = ExportRows::from_json(&rows.to_json()).unwrap();
        assert_eq!(back, rows);
        let store = load(&rows, "x.json").unwrap();
        assert_eq!(store.location(), "x.json");
        let stored: Vec<String> = store
            .connection()
            .prepare("SELECT typeof(data) FROM flue_session_entries ORDER BY position")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(stored, ["text", "blob"]);
        let session: String = store
            .connection()
            .query_row("SELECT typeof(data) FROM flue_sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(session, "blob");
        assert!(store
            .connection()
            .execute("DELETE FROM flue_sessions", [])
            .is_err());
    }
}
