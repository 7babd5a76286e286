//! Copy an SQLite journal (a runtime database, the demo, the scale data) into a PostgreSQL
//! database, row by row and exactly: the derived DDL of [`super::ddl`] is created, then every
//! table is streamed with `COPY … FROM STDIN`.
//!
//! * Text is copied as text, byte for byte; integers as integers (`BIGINT` milliseconds,
//!   `INTEGER` counts); NULL stays NULL; `flue_runs.is_error` / `flue_event_streams.closed`
//!   become booleans.
//! * The built-in adapter's `terminal_event_key` / `_json` / `_offset` land in `terminal_key` /
//!   `terminal_event` / `terminal_offset` (spec §7).
//! * `sequence` keeps its values (`COPY` writes identity columns as given) and the identity
//!   continues after the largest one; `turnscope_audit` is copied too.
//! * SQLite's `flue_event_stream_keys` has no table on PostgreSQL: its keys become
//!   `flue_event_stream_entries.event_key` of the same `(path, seq)`.
//! * One transaction: a failure leaves the target as it was. A target that already holds flue
//!   rows is refused, so seeding never mixes into a live journal.
//! * What PostgreSQL `TEXT` cannot hold (a NUL byte, bytes that are not UTF-8, as a damaged
//!   SQLite file may have) makes the copy fail with PostgreSQL's error naming the table; nothing
//!   is changed then.

use std::io::Write;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::ddl::{AUDIT_DDL, FLUE_DDL};
use super::{connect, pg_error, PgTarget};
use crate::progress::Progress;
use crate::{StoreError, Variant};

/// The tables copied, in order.
const TABLES: [&str; 14] = [
    "flue_meta",
    "flue_sessions",
    "flue_session_entries",
    "flue_agent_submissions",
    "flue_agent_session_deletions",
    "flue_agent_dispatch_receipts",
    "flue_agent_attempt_markers",
    "flue_agent_turn_journals",
    "flue_agent_stream_chunks",
    "flue_image_chunks",
    "flue_runs",
    "flue_event_streams",
    "flue_event_stream_entries",
    "turnscope_audit",
];

/// Rows copied per table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyStats {
    pub tables: Vec<(String, u64)>,
}

impl CopyStats {
    pub fn rows(&self, table: &str) -> u64 {
        self.tables
            .iter()
            .find(|(t, _)| t == table)
            .map_or(0, |(_, n)| *n)
    }
}

fn sqlite_err(context: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::sqlite(context, e)
}

fn pg_err(context: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
    move |e| pg_error(context, &e)
}

/// Copy the SQLite journal at `sqlite` into the (flue-empty) database `target`.
pub fn sqlite_to_postgres(sqlite: &Path, target: &PgTarget) -> Result<CopyStats, StoreError> {
    sqlite_to_postgres_watched(sqlite, target, &mut crate::progress::Unwatched)
}

/// [`sqlite_to_postgres`], reporting its progress: one stage per table, one unit per row.
pub fn sqlite_to_postgres_watched(
    sqlite: &Path,
    target: &PgTarget,
    progress: &mut dyn Progress,
) -> Result<CopyStats, StoreError> {
    let src = Connection::open_with_flags(sqlite, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sqlite_err("opening the SQLite journal"))?;
    let tables: Vec<String> = src
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(sqlite_err("reading the SQLite schema"))?;
    let mut client = connect(target, false)?;
    let mut tx = client.transaction().map_err(pg_err("starting the copy"))?;
    tx.batch_execute(FLUE_DDL)
        .and_then(|_| tx.batch_execute(AUDIT_DDL))
        .map_err(pg_err("creating the flue tables"))?;
    let busy: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM flue_agent_submissions)
                 OR EXISTS (SELECT 1 FROM flue_sessions)",
            &[],
        )
        .map_err(pg_err("checking the target is empty"))?
        .get(0);
    if busy {
        return Err(StoreError::PgNotEmpty {
            target: target.display(),
        });
    }
    let mut stats = CopyStats::default();
    for table in TABLES {
        if tables.iter().any(|t| t == table) {
            let n = copy_table(&src, &mut tx, table, table, progress)?;
            stats.tables.push((table.to_string(), n));
        }
    }
    if tables.iter().any(|t| t == "flue_event_stream_keys") {
        tx.batch_execute(
            "CREATE TEMP TABLE turnscope_event_keys (path TEXT, key TEXT, seq BIGINT, data TEXT) ON COMMIT DROP",
        )
        .map_err(pg_err("copying event keys"))?;
        let n = copy_table(
            &src,
            &mut tx,
            "flue_event_stream_keys",
            "turnscope_event_keys",
            progress,
        )?;
        tx.batch_execute(
            "UPDATE flue_event_stream_entries e SET event_key = k.key
             FROM turnscope_event_keys k WHERE e.path = k.path AND e.seq = k.seq",
        )
        .map_err(pg_err("copying event keys"))?;
        stats.tables.push(("flue_event_stream_keys".into(), n));
    }
    // Identities continue after the copied values.
    tx.batch_execute(
        "SELECT setval(pg_get_serial_sequence('flue_agent_submissions', 'sequence'),
                       COALESCE((SELECT MAX(sequence) FROM flue_agent_submissions), 1),
                       (SELECT COUNT(*) > 0 FROM flue_agent_submissions));
         SELECT setval(pg_get_serial_sequence('turnscope_audit', 'id'),
                       COALESCE((SELECT MAX(id) FROM turnscope_audit), 1),
                       (SELECT COUNT(*) > 0 FROM turnscope_audit));",
    )
    .map_err(pg_err("setting the identity sequences"))?;
    tx.commit().map_err(pg_err("committing the copy"))?;
    // Fresh statistics, so the planner uses the indexes right away.
    client
        .batch_execute("ANALYZE")
        .map_err(pg_err("analyzing the copied tables"))?;
    Ok(stats)
}

/// Column names of `table` on SQLite, in order.
fn sqlite_columns(src: &Connection, table: &str) -> Result<Vec<String>, StoreError> {
    src.prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .and_then(|mut s| s.query_map([], |r| r.get::<_, String>(1))?.collect())
        .map_err(sqlite_err("reading the SQLite schema"))
}

/// PostgreSQL names the terminal columns as `@flue/libsql` does.
fn pg_name(column: &str) -> &str {
    Variant::Libsql.column(column)
}

/// `COPY` every row of SQLite `from` into PostgreSQL `to`; returns the row count.
fn copy_table(
    src: &Connection,
    tx: &mut postgres::Transaction<'_>,
    from: &str,
    to: &str,
    progress: &mut dyn Progress,
) -> Result<u64, StoreError> {
    let columns = sqlite_columns(src, from)?;
    let total: i64 = src
        .query_row(&format!("SELECT COUNT(*) FROM \"{from}\""), [], |r| {
            r.get(0)
        })
        .map_err(sqlite_err("counting the rows to copy"))?;
    progress.stage(&format!("copying {from}"), Some(total.max(0) as u64));
    let types: Vec<(String, String)> = tx
        .query(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
             FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
            &[&to],
        )
        .map_err(pg_err("reading the PostgreSQL schema"))?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut boolean = Vec::new();
    for c in &columns {
        match types.iter().find(|(n, _)| n == pg_name(c)) {
            Some((_, ty)) => boolean.push(ty == "boolean"),
            None => {
                return Err(StoreError::Postgres {
                    context: format!("copying {from}"),
                    detail: format!("column {c} has no PostgreSQL counterpart in {to}"),
                })
            }
        }
    }
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("\"{}\"", pg_name(c)))
        .collect();
    let select: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
    let copy_sql = format!("COPY {to} ({}) FROM STDIN", list.join(", "));
    let context = format!("copying {from}");
    let mut writer = tx.copy_in(&copy_sql).map_err(pg_err(&context))?;
    let mut stmt = src
        .prepare(&format!("SELECT {} FROM \"{from}\"", select.join(", ")))
        .map_err(sqlite_err(&context))?;
    let mut rows = stmt.query([]).map_err(sqlite_err(&context))?;
    let mut n = 0u64;
    let mut line = Vec::with_capacity(4096);
    while let Some(r) = rows.next().map_err(sqlite_err(&context))? {
        line.clear();
        for (i, is_bool) in boolean.iter().enumerate() {
            if i > 0 {
                line.push(b'\t');
            }
            let v = r.get_ref(i).map_err(sqlite_err(&context))?;
            copy_field(&mut line, v, *is_bool);
        }
        line.push(b'\n');
        progress.advance(1);
        writer.write_all(&line).map_err(|e| StoreError::Postgres {
            context: context.clone(),
            detail: e.to_string(),
        })?;
        n += 1;
    }
    writer.finish().map_err(pg_err(&context))?;
    Ok(n)
}

/// One field in `COPY` text format.
fn copy_field(out: &mut Vec<u8>, v: ValueRef<'_>, boolean: bool) {
    match v {
        ValueRef::Null => out.extend_from_slice(b"\\N"),
        ValueRef::Integer(i) if boolean => out.push(if i != 0 { b't' } else { b'f' }),
        ValueRef::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        ValueRef::Real(f) => out.extend_from_slice(f.to_string().as_bytes()),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            for &b in t {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b => out.push(b),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_field;
    use rusqlite::types::ValueRef;

    #[test]
    fn copy_text_format_escapes_exactly_the_special_bytes() {
        let mut out = Vec::new();
        copy_field(
            &mut out,
            ValueRef::Text(b"a\\b\tc\nd\re \"\xc3\xa9\""),
            false,
        );
        assert_eq!(out, b"a\\\\b\\tc\\nd\\re \"\xc3\xa9\"".to_vec());
        let mut out = Vec::new();
        copy_field(&mut out, ValueRef::Null, false);
        copy_field(&mut out, ValueRef::Integer(1), true);
        copy_field(&mut out, ValueRef::Integer(-42), false);
        assert_eq!(out, b"\\Nt-42".to_vec());
    }
}
