//! A flue 2.x export's rows: what `turnscope export` copies of one agent instance (its stream
//! row, every batch and spilled chunk, its submission rows and their spilled payload items,
//! `flue_meta`), column by column as stored, and the export opened again as a journal: those
//! rows loaded into an in-memory SQLite database served by an ordinary [`Flue2SqliteReader`],
//! so `list`, `show`, `classify` and `incidents` read it as they read the database it came from.
//!
//! The in-memory tables are made from the column names the export lists (checked to be plain
//! identifiers), never from SQL text in the file: an export is untrusted input. Values keep
//! their storage class (integer, real, text, null); no 2.x table an export copies holds blobs
//! (attachments are not exported).

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::flue2::Flue2SqliteReader;
use crate::StoreError;

/// The export document's schema.
pub const FLUE2_EXPORT_SCHEMA: &str = "turnscope.flue2.export/1";

/// The tables an export copies, in the order they are loaded.
const TABLES: [&str; 6] = [
    "flue_meta",
    "flue_conversation_streams",
    "flue_conversation_stream_batches",
    "flue_conversation_stream_batch_chunks",
    "flue_agent_submissions",
    "flue_submission_chunks",
];

impl Flue2SqliteReader {
    /// The rows of the instance whose stream is at `stream_path`, with its submissions
    /// `submission_ids`: `{ table: { "columns": [...], "rows": [[...], ...] } }`. A table the
    /// journal lacks is left out.
    pub fn export_rows(
        &self,
        stream_path: &str,
        submission_ids: &[String],
    ) -> Result<Value, StoreError> {
        let mut out = Map::new();
        for table in TABLES {
            let err = |e| StoreError::sqlite("reading a table to export", e);
            let exists: bool = self
                .connection()
                .query_row(
                    "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .map_err(err)?;
            if !exists {
                continue;
            }
            let (filter, keys): (&str, Vec<String>) = match table {
                "flue_meta" => ("1", vec![]),
                "flue_agent_submissions" | "flue_submission_chunks" => {
                    ("submission_id = ?1", submission_ids.to_vec())
                }
                _ => ("path = ?1", vec![stream_path.to_string()]),
            };
            let order = match table {
                "flue_conversation_stream_batches" => " ORDER BY seq",
                "flue_conversation_stream_batch_chunks" => " ORDER BY seq, chunk_index",
                "flue_agent_submissions" => " ORDER BY sequence",
                _ => "",
            };
            let sql = format!("SELECT * FROM {table} WHERE {filter}{order}");
            let mut stmt = self.connection().prepare(&sql).map_err(err)?;
            let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
            let mut rows: Vec<Value> = Vec::new();
            let mut read = |params: &[&dyn rusqlite::ToSql]| -> Result<(), StoreError> {
                let mut q = stmt.query(params).map_err(err)?;
                while let Some(r) = q.next().map_err(err)? {
                    let mut row = Vec::with_capacity(columns.len());
                    for i in 0..columns.len() {
                        row.push(match r.get_ref(i).map_err(err)? {
                            ValueRef::Null => Value::Null,
                            ValueRef::Integer(n) => json!(n),
                            ValueRef::Real(x) => json!(x),
                            ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                            // Damage (the runtime writes text): kept a BLOB, so the copy is as
                            // unreadable to the runtime as the journal, and read so by turnscope.
                            ValueRef::Blob(b) => json!({ "blob": b }),
                        });
                    }
                    rows.push(Value::Array(row));
                }
                Ok(())
            };
            if keys.is_empty() && table == "flue_meta" {
                read(&[])?;
            } else {
                for k in &keys {
                    read(&[k])?;
                }
            }
            out.insert(table.into(), json!({ "columns": columns, "rows": rows }));
        }
        Ok(Value::Object(out))
    }

    /// Open the flue 2.x export at `path` (its `rows` section) as a journal, in memory.
    pub fn open_export(path: &Path) -> Result<Flue2SqliteReader, StoreError> {
        let doc = read_doc(path)?;
        if doc.get("schema").and_then(Value::as_str) != Some(FLUE2_EXPORT_SCHEMA) {
            return Err(StoreError::NotAnExport {
                path: path.to_path_buf(),
                what: "not a turnscope.flue2.export/1 document".into(),
            });
        }
        Flue2SqliteReader::from_rows(doc.get("rows").unwrap_or(&Value::Null), path)
    }

    /// An export's `rows` section (as [`Flue2SqliteReader::export_rows`] writes it) loaded into
    /// memory as a journal named `path`.
    pub fn from_rows(rows: &Value, path: &Path) -> Result<Flue2SqliteReader, StoreError> {
        let not = |what: String| StoreError::NotAnExport {
            path: path.to_path_buf(),
            what,
        };
        let tables = rows
            .as_object()
            .ok_or_else(|| not("a turnscope.flue2.export/1 document without its rows".into()))?;
        let conn = Connection::open_in_memory()
            .map_err(|e| StoreError::sqlite("opening memory for the export", e))?;
        load(&conn, tables).map_err(|e| {
            not(format!(
                "a turnscope.flue2.export/1 document whose rows are damaged ({e})"
            ))
        })?;
        Flue2SqliteReader::from_loaded(conn, path)
    }
}

/// Whether the file at `path` is a flue 2.x export. Only a file that starts as JSON is read
/// (whole: exports are opened whole); a database file is never read here.
pub fn is_flue2_export(path: &Path) -> bool {
    crate::export_db::looks_like_json(path)
        && read_doc(path)
            .is_ok_and(|d| d.get("schema").and_then(Value::as_str) == Some(FLUE2_EXPORT_SCHEMA))
}

fn read_doc(path: &Path) -> Result<Value, StoreError> {
    let text = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => StoreError::Missing(path.to_path_buf()),
        _ => StoreError::NotReadable {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
    })?;
    serde_json::from_slice(&text).map_err(|e| StoreError::NotAnExport {
        path: path.to_path_buf(),
        what: format!("a JSON file that does not parse ({e})"),
    })
}

/// A plain identifier: what every 2.x table and column name is.
fn identifier(name: &str) -> Result<&str, String> {
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(name)
    } else {
        Err(format!("{name:?} is not a table or column name"))
    }
}

fn load(conn: &Connection, tables: &Map<String, Value>) -> Result<(), String> {
    for table in TABLES {
        let Some(t) = tables.get(table) else { continue };
        identifier(table)?;
        let columns: Vec<&str> = t
            .get("columns")
            .and_then(Value::as_array)
            .ok_or("a table without its columns")?
            .iter()
            .map(|c| {
                c.as_str()
                    .ok_or("a column name that is not text".to_string())
            })
            .map(|c| c.and_then(identifier))
            .collect::<Result<_, _>>()?;
        conn.execute_batch(&format!("CREATE TABLE {table} ({})", columns.join(", ")))
            .map_err(|e| e.to_string())?;
        let insert = format!(
            "INSERT INTO {table} VALUES ({})",
            vec!["?"; columns.len()].join(", ")
        );
        let mut stmt = conn.prepare(&insert).map_err(|e| e.to_string())?;
        for row in t
            .get("rows")
            .and_then(Value::as_array)
            .ok_or("a table without its rows")?
        {
            let cells = row.as_array().ok_or("a row that is not a list")?;
            if cells.len() != columns.len() {
                return Err(format!(
                    "a row of {table} with {} values for {} columns",
                    cells.len(),
                    columns.len()
                ));
            }
            let values: Vec<rusqlite::types::Value> = cells
                .iter()
                .map(|v| match v {
                    Value::Null => Ok(rusqlite::types::Value::Null),
                    Value::String(s) => Ok(rusqlite::types::Value::Text(s.clone())),
                    Value::Number(n) => Ok(match n.as_i64() {
                        Some(i) => rusqlite::types::Value::Integer(i),
                        None => rusqlite::types::Value::Real(n.as_f64().unwrap_or(0.0)),
                    }),
                    Value::Object(o) if o.len() == 1 && o.contains_key("blob") => {
                        serde_json::from_value::<Vec<u8>>(o["blob"].clone())
                            .map(rusqlite::types::Value::Blob)
                            .map_err(|e| format!("a BLOB value of {table}: {e}"))
                    }
                    other => Err(format!(
                        "a value of {table} that is neither text, number, null nor a BLOB: {other}"
                    )),
                })
                .collect::<Result<_, _>>()?;
            stmt.execute(rusqlite::params_from_iter(values))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
