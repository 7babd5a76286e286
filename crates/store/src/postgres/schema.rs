//! What a PostgreSQL database turned out to be: the flue checks `SqliteStore::open` makes
//! (newer format, missing tables, schema version) and the terminal-column variant.

use postgres::Client;

use super::connect::pg_error;
use super::url::PgTarget;
use crate::format::{detect_format, FlueMeta, JournalFormat, BETA7_TABLES};
use crate::{SchemaInfo, StoreError, Variant};

/// Tables of the current schema, and the flue checks of `SqliteStore::open`: the format
/// ([`detect_format`]: a newer or beta.8/9 one refused), missing core tables, schema version,
/// terminal-column variant.
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
    let flue_meta = if has("flue_meta") {
        FlueMeta {
            format_version: meta(client, "format_version")?,
            schema_version: meta(client, "schema_version")?,
        }
    } else {
        FlueMeta::default()
    };
    let format = detect_format(&tables, &flue_meta);
    if let Some(refusal) = format.refusal() {
        return Err(refusal);
    }
    let JournalFormat::Beta7 { schema_version } = format else {
        if !BETA7_TABLES.iter().all(|t| has(t)) {
            return Err(StoreError::PgNotFlue {
                target: target.display(),
                tables,
            });
        }
        return Err(StoreError::SchemaVersion {
            found: flue_meta.schema_version.unwrap_or_else(|| "(none)".into()),
        });
    };
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
    let variant = if present
        .iter()
        .any(|c| c == Variant::BuiltIn.terminal_columns()[0])
    {
        Variant::BuiltIn
    } else {
        Variant::Libsql
    };
    Ok((
        SchemaInfo {
            variant,
            schema_version,
            immutable: false,
        },
        tables,
        present,
    ))
}
