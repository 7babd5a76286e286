//! Whether a PostgreSQL journal can be written by this connection, found when the writer opens
//! (before any preview): a server that makes transactions read-only, and the role's privileges on
//! every table turnscope writes (its actions, `undo` and the audit trail).

use postgres::Client;

use super::{pg_error, PgTarget};
use crate::{NotWritable, StoreError};

/// `(table, privilege)` turnscope needs: the rows its actions change, what `undo` restores, and
/// its own audit table.
const NEEDED: [(&str, &str); 11] = [
    ("flue_session_entries", "INSERT"),
    ("flue_session_entries", "DELETE"),
    ("flue_sessions", "UPDATE"),
    ("flue_agent_turn_journals", "UPDATE"),
    ("flue_agent_submissions", "UPDATE"),
    ("flue_agent_stream_chunks", "DELETE"),
    ("flue_agent_stream_chunks", "INSERT"),
    // A direct prompt's terminal event: the stream's head and the event row (their row images
    // are read `FOR UPDATE`, which needs UPDATE).
    ("flue_event_streams", "INSERT"),
    ("flue_event_streams", "UPDATE"),
    ("flue_event_stream_entries", "INSERT"),
    ("turnscope_audit", "INSERT"),
];

fn not_writable(target: &PgTarget, why: NotWritable, detail: String) -> StoreError {
    StoreError::NotWritable {
        target: target.display(),
        why,
        detail,
    }
}

pub(super) fn check(client: &mut Client, target: &PgTarget) -> Result<(), StoreError> {
    let row = client
        .query_one(
            "SELECT current_setting('default_transaction_read_only'), current_setting('transaction_read_only'), pg_is_in_recovery()",
            &[],
        )
        .map_err(|e| pg_error("checking write access", &e))?;
    let (default_ro, tx_ro, standby): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
    if standby {
        return Err(not_writable(
            target,
            NotWritable::PgReadOnly,
            "the server is a hot standby (pg_is_in_recovery)".into(),
        ));
    }
    if default_ro == "on" || tx_ro == "on" {
        return Err(not_writable(
            target,
            NotWritable::PgReadOnly,
            format!("default_transaction_read_only = {default_ro}"),
        ));
    }
    let audit_exists: bool = client
        .query_one("SELECT to_regclass('turnscope_audit') IS NOT NULL", &[])
        .map_err(|e| pg_error("checking write access", &e))?
        .get(0);
    let mut missing = Vec::new();
    for (table, privilege) in NEEDED {
        if table == "turnscope_audit" && !audit_exists {
            continue;
        }
        let ok: bool = client
            .query_one(
                // A table the journal lacks needs nothing (CASE keeps the check off it).
                "SELECT CASE WHEN to_regclass($1::text) IS NULL THEN true
                             ELSE has_table_privilege(current_user, $1::text, $2::text) END",
                &[&table, &privilege],
            )
            .map_err(|e| pg_error("checking write access", &e))?
            .get(0);
        if !ok {
            missing.push(format!("{privilege} on {table}"));
        }
    }
    if !audit_exists {
        let create: bool = client
            .query_one(
                "SELECT has_schema_privilege(current_user, current_schema(), 'CREATE')",
                &[],
            )
            .map_err(|e| pg_error("checking write access", &e))?
            .get(0);
        if !create {
            missing.push("CREATE on the schema (for turnscope_audit)".into());
        }
    }
    if !missing.is_empty() {
        let user: String = client
            .query_one("SELECT current_user::text", &[])
            .map(|r| r.get(0))
            .unwrap_or_default();
        return Err(not_writable(
            target,
            NotWritable::PgPrivilege,
            format!("role {user} lacks {}", missing.join(", ")),
        ));
    }
    Ok(())
}
