//! PostgreSQL journals (`@flue/postgres`, spec §7): same tables as SQLite with BIGINT
//! milliseconds, the `terminal_key` / `terminal_event` / `terminal_offset` columns and JSON as
//! text. The schema is derived (see [`ddl`]).
//!
//! Reading: one connection with `default_transaction_read_only=on`, so PostgreSQL itself refuses
//! any write; lists filter on the server; a bundle is read in one `REPEATABLE READ READ ONLY`
//! transaction (one snapshot). Rows are parsed by the same helpers as SQLite's (`store::parse`).
//! Writing: [`PgWriter`], a separate read-write connection opened only with `--write`.
//! Seeding: [`convert`] copies an SQLite journal row by row into a PostgreSQL database.

pub mod connect;
pub mod convert;
pub mod ddl;
mod listing;
mod read;
mod rows;
pub mod sessions;
mod tls;
pub mod url;
mod write;

use std::cell::RefCell;

use postgres::types::Type;
use postgres::Client;
use rusqlite::types::Value;

pub use url::{is_pg_url, PgTarget, SslMode};
pub use write::PgWriter;

pub(crate) use connect::{connect, pg_error};

use super::{SchemaInfo, StoreError, Variant};

/// A read-only PostgreSQL journal.
pub struct PgStore {
    client: RefCell<Client>,
    target: PgTarget,
    schema: SchemaInfo,
    submission_columns: String,
    tables: Vec<String>,
}

impl PgStore {
    /// Connect read-only and check that the database is a flue 1.0.0-beta.7 journal.
    pub fn open(target: &PgTarget) -> Result<PgStore, StoreError> {
        let mut client = connect(target, true)?;
        let (schema, tables, present) = detect_schema(&mut client, target)?;
        Ok(PgStore {
            submission_columns: super::parse::submission_select_list(&present, schema.variant),
            client: RefCell::new(client),
            target: target.clone(),
            schema,
            tables,
        })
    }

    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// The connection, opened again when the server dropped it (a restart, a failover): the
    /// query that noticed fails, the next one reconnects.
    pub(super) fn conn(&self) -> Result<std::cell::RefMut<'_, Client>, StoreError> {
        let mut c = self.client.borrow_mut();
        if c.is_closed() {
            *c = connect(&self.target, true)?;
        }
        Ok(c)
    }

    /// Whether the database has `table` (as of opening).
    pub fn has_table(&self, table: &str) -> bool {
        self.tables.iter().any(|t| t == table)
    }
}

/// Tables of the current schema, and the flue checks of `SqliteStore::open`: newer format,
/// missing core tables, schema version, terminal-column variant.
pub(crate) fn detect_schema(
    client: &mut Client,
    target: &PgTarget,
) -> Result<(SchemaInfo, Vec<String>, Vec<String>), StoreError> {
    let err = |e: postgres::Error| pg_error("reading the schema", &e);
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() ORDER BY 1",
            &[],
        )
        .map_err(err)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let has = |t: &str| tables.iter().any(|n| n == t);
    let meta = |client: &mut Client, key: &str| -> Result<Option<String>, StoreError> {
        Ok(client
            .query_opt("SELECT value FROM flue_meta WHERE key = $1", &[&key])
            .map_err(err)?
            .map(|r| r.get(0)))
    };
    if has("flue_meta") {
        if let Some(format_version) = meta(client, "format_version")? {
            return Err(StoreError::NewerFormat { format_version });
        }
    }
    if !has("flue_agent_submissions") || !has("flue_sessions") || !has("flue_session_entries") {
        return Err(StoreError::PgNotFlue {
            target: target.display(),
            tables,
        });
    }
    let version = if has("flue_meta") {
        meta(client, "schema_version")?
    } else {
        None
    };
    let schema_version = version.unwrap_or_else(|| "(none)".into());
    if !matches!(schema_version.as_str(), "1" | "2" | "3") {
        return Err(StoreError::SchemaVersion {
            found: schema_version,
        });
    }
    let present: Vec<String> = client
        .query(
            "SELECT column_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'flue_agent_submissions'",
            &[],
        )
        .map_err(err)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let variant = if present.iter().any(|c| c == "terminal_event_key") {
        Variant::BuiltIn
    } else {
        Variant::Libsql
    };
    Ok((
        SchemaInfo {
            variant,
            schema_version,
        },
        tables,
        present,
    ))
}

/// A PostgreSQL row as SQLite-style values, for the shared parsers: integers of any width become
/// `Integer`, booleans 0/1, text `Text`, anything else its text form when it has one.
pub(crate) fn sqlite_values(row: &postgres::Row) -> Vec<Value> {
    (0..row.len()).map(|i| cell(row, i)).collect()
}

/// One column as an SQLite-style value (never panics on an unexpected column type).
pub(crate) fn cell(row: &postgres::Row, i: usize) -> Value {
    let ty = row.columns()[i].type_();
    let int = |v: Option<i64>| v.map_or(Value::Null, Value::Integer);
    if *ty == Type::INT8 {
        int(row.try_get::<_, Option<i64>>(i).ok().flatten())
    } else if *ty == Type::INT4 {
        int(row
            .try_get::<_, Option<i32>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else if *ty == Type::INT2 {
        int(row
            .try_get::<_, Option<i16>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else if *ty == Type::BOOL {
        int(row
            .try_get::<_, Option<bool>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else {
        row.try_get::<_, Option<String>>(i)
            .ok()
            .flatten()
            .map_or(Value::Null, Value::Text)
    }
}

/// A column as text (`""` for NULL), whatever its type.
pub(crate) fn cell_text(row: &postgres::Row, i: usize) -> String {
    cell_opt_text(row, i).unwrap_or_default()
}

pub(crate) fn cell_opt_text(row: &postgres::Row, i: usize) -> Option<String> {
    match cell(row, i) {
        Value::Text(t) => Some(t),
        Value::Integer(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A column as an integer, whatever its integer type (`None` for NULL or non-numbers).
pub(crate) fn cell_int(row: &postgres::Row, i: usize) -> Option<i64> {
    match cell(row, i) {
        Value::Integer(n) => Some(n),
        Value::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}
