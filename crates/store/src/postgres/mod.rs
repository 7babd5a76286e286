//! PostgreSQL journals (`@flue/postgres`, spec §7): same tables as SQLite with BIGINT
//! milliseconds, the `terminal_key` / `terminal_event` / `terminal_offset` columns and JSON as
//! text. The schema is derived (see [`ddl`]).
//!
//! Reading: one connection with `default_transaction_read_only=on`, so PostgreSQL itself refuses
//! any write; lists filter on the server; a bundle is read in one `REPEATABLE READ READ ONLY`
//! transaction (one snapshot). Rows are parsed by the same helpers as SQLite's (`store::parse`).
//! Writing: [`PgWriter`], a separate read-write connection opened only with `--write`.
//! Seeding: [`convert`] copies an SQLite journal row by row into a PostgreSQL database.

mod cells;
pub mod connect;
pub mod convert;
pub mod ddl;
mod find;
mod listing;
mod peer;
mod read;
mod schema;
mod session_rows;
pub mod sessions;
mod tls;
mod undo;
pub mod url;
mod write;
mod write_access;

use std::cell::RefCell;

use postgres::Client;

pub use url::{is_pg_url, PgTarget, SslMode};
pub use write::PgWriter;

pub(crate) use cells::{cell_int, cell_opt_text, cell_text, sqlite_values};
pub(crate) use connect::{connect, pg_error};
pub(crate) use schema::detect_schema;

use super::{SchemaInfo, StoreError};

/// A read-only PostgreSQL journal.
pub struct PgStore {
    client: RefCell<Client>,
    target: PgTarget,
    schema: SchemaInfo,
    submission_columns: String,
    tables: Vec<String>,
    /// A second read-only connection, opened for the first session read in two halves.
    peer: std::sync::Mutex<Option<Client>>,
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
            peer: std::sync::Mutex::new(None),
        })
    }

    /// A second store on its own read-only connection, for a listing's second thread. On
    /// PostgreSQL every bundle is read in its own snapshot (there is no listing-wide one), so it
    /// reads each bundle exactly as this store would.
    fn twin(&self) -> Result<PgStore, StoreError> {
        Ok(PgStore {
            client: RefCell::new(connect(&self.target, true)?),
            target: self.target.clone(),
            schema: self.schema.clone(),
            submission_columns: self.submission_columns.clone(),
            tables: self.tables.clone(),
            peer: std::sync::Mutex::new(None),
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
