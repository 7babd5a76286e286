//! Fenced writes on PostgreSQL, with the guarantees of `SqliteWriter::apply`: one short
//! transaction per action that
//!
//! 1. locks the submission row with `SELECT … FOR UPDATE NOWAIT` (held by anyone else: refused
//!    as busy, nothing written);
//! 2. takes the runtime's admission lock `pg_advisory_xact_lock(hashtext(session_key))` and locks
//!    the session row `FOR UPDATE` (the runtime's session save reads it `FOR SHARE`), and the
//!    journal row;
//! 3. re-checks the whole fence, then writes with compare-and-set statements
//!    (`UPDATE … WHERE <old values> RETURNING`), inserts, and the audit row;
//! 4. commits. Any mismatch rolls back: nothing written.
//!
//! Values are bound exactly as SQLite writing binds them (same text, same integers).

use std::time::Instant;

use postgres::types::ToSql;
use postgres::{Client, Transaction};

use super::undo::{insert_audit, migrate_audit, PgRows};
use super::{cell_int, cell_opt_text, cell_text, connect, detect_schema, pg_error, PgTarget};
use crate::images::{after_images, before_images};
use crate::{Applied, ApplyError, AuditInfo, JournalWriter, SchemaInfo, StoreError, Variant};
use turnscope_core::recovery::changes::{
    ColumnChange, Fence, FenceSeen, GuardedUpdate, RowChange, SqlValue,
};

/// A read-write connection, opened only in `--write` mode.
pub struct PgWriter {
    client: Client,
    schema: SchemaInfo,
}

fn werr(context: &str) -> impl Fn(postgres::Error) -> ApplyError + '_ {
    move |e| ApplyError::Store(pg_error(context, &e))
}

impl PgWriter {
    pub fn open(target: &PgTarget) -> Result<PgWriter, StoreError> {
        let mut client = connect(target, false)?;
        let (schema, _, _) = detect_schema(&mut client, target)?;
        super::write_access::check(&mut client, target)?;
        // The audit table is created (or brought up to date) in the first write transaction:
        // opening writes nothing, so a declined confirmation leaves the database as it was.
        Ok(PgWriter { client, schema })
    }

    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    fn apply_tx(
        tx: &mut Transaction<'_>,
        variant: Variant,
        fence: &Fence,
        changes: &[RowChange],
        audit: &AuditInfo,
    ) -> Result<(usize, i64), ApplyError> {
        // Fail fast instead of queueing behind the runtime.
        tx.batch_execute("SET LOCAL lock_timeout = '2s'")
            .map_err(werr("writing"))?;
        // The real clock, whatever time the caller shows: a lease live now is never written under.
        let diffs = check_fence(tx, fence, crate::clock::now_ms())?;
        if !diffs.is_empty() {
            return Err(ApplyError::Fenced(diffs));
        }
        let mut rows = 0;
        let mut images = Vec::new();
        for change in changes {
            // The exact rows before (and after) each change, for the audit and for `undo`.
            let mut touched = before_images(&mut PgRows(tx), change).map_err(ApplyError::Store)?;
            let n = apply_change(tx, change, variant)?;
            if n == 0 {
                return Err(ApplyError::Fenced(vec![format!(
                    "a conditional write matched no row: {}",
                    change.preview()[0]
                )]));
            }
            after_images(&mut PgRows(tx), &mut touched).map_err(ApplyError::Store)?;
            images.extend(touched);
            rows += n;
        }
        migrate_audit(tx).map_err(ApplyError::Store)?;
        let audit_id = insert_audit(
            tx,
            audit,
            &fence.submission_id,
            fence.attempt_id.as_deref(),
            None,
            &images,
        )
        .map_err(ApplyError::Store)?;
        Ok((rows, audit_id))
    }
}

impl JournalWriter for PgWriter {
    fn apply(
        &mut self,
        fence: &Fence,
        changes: &[RowChange],
        audit: &AuditInfo,
    ) -> Result<Applied, ApplyError> {
        let variant = self.schema.variant;
        let mut tx = self.client.transaction().map_err(werr("writing"))?;
        let started = Instant::now();
        match PgWriter::apply_tx(&mut tx, variant, fence, changes, audit) {
            Ok((rows_written, audit_id)) => {
                tx.commit().map_err(werr("committing"))?;
                Ok(Applied {
                    rows_written,
                    lock_held: started.elapsed(),
                    audit_id,
                })
            }
            Err(e) => {
                // Dropping the transaction would roll back too; say it explicitly.
                let _ = tx.rollback();
                Err(e)
            }
        }
    }

    fn undo(
        &mut self,
        target: &crate::UndoTarget,
        audit: &AuditInfo,
        commit: bool,
    ) -> Result<crate::Undone, ApplyError> {
        let mut tx = self.client.transaction().map_err(werr("writing"))?;
        let started = Instant::now();
        let result = super::undo::undo_tx(&mut tx, target, audit, commit);
        match result {
            Ok(mut done) if commit => {
                tx.commit().map_err(werr("committing"))?;
                done.lock_held = started.elapsed();
                Ok(done)
            }
            other => {
                let _ = tx.rollback();
                other
            }
        }
    }
}

fn check_fence(
    tx: &mut Transaction<'_>,
    fence: &Fence,
    now_ms: i64,
) -> Result<Vec<String>, ApplyError> {
    let row = tx
        .query_opt(
            "SELECT status, attempt_id, lease_expires_at, session_key FROM flue_agent_submissions
             WHERE submission_id = $1 FOR UPDATE NOWAIT",
            &[&fence.submission_id],
        )
        .map_err(werr("locking the submission (busy, try again)"))?;
    let Some(row) = row else {
        return Ok(fence.differences(&FenceSeen::default(), now_ms));
    };
    let session_key = cell_text(&row, 3);
    let mut seen = FenceSeen {
        submission: Some((
            cell_text(&row, 0),
            cell_opt_text(&row, 1),
            cell_int(&row, 2).unwrap_or(0),
        )),
        ..FenceSeen::default()
    };
    seen.journal = tx
        .query_opt(
            "SELECT attempt_id, phase, revision, committed FROM flue_agent_turn_journals
             WHERE submission_id = $1 FOR UPDATE",
            &[&fence.submission_id],
        )
        .map_err(werr("locking the turn journal"))?
        .map(|r| {
            (
                cell_text(&r, 0),
                cell_text(&r, 1),
                cell_int(&r, 2).unwrap_or(0),
                cell_int(&r, 3).unwrap_or(0) != 0,
            )
        });
    if fence.session.is_some() {
        // The runtime's admission/deletion lock for this session, then the row its save shares.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))",
            &[&session_key],
        )
        .map_err(werr("locking the session"))?;
        let data: Option<String> = tx
            .query_opt(
                "SELECT data FROM flue_sessions WHERE id = $1 FOR UPDATE",
                &[&session_key],
            )
            .map_err(werr("locking the session"))?
            .map(|r| cell_text(&r, 0));
        let count: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = $1",
                &[&session_key],
            )
            .map_err(werr("counting session entries"))?
            .get(0);
        seen.session = Some((data, count));
    }
    Ok(fence.differences(&seen, now_ms))
}

fn column_name(c: &ColumnChange, variant: Variant) -> &'static str {
    variant.column(c.column)
}

/// Apply one change with a conditional statement; returns the rows affected.
fn apply_change(
    tx: &mut Transaction<'_>,
    change: &RowChange,
    variant: Variant,
) -> Result<usize, ApplyError> {
    if let Some(u) = change.guarded_update() {
        return Ok(update(tx, &u, variant)? as usize);
    }
    let n = match change {
        RowChange::InsertSession { session_id, data } => tx
            .execute(
                // As on SQLite: never over entry rows that have no session row.
                "INSERT INTO flue_sessions (id, data) SELECT $1::text, $2::text
                 WHERE NOT EXISTS (SELECT 1 FROM flue_session_entries WHERE session_id = $1::text)
                 ON CONFLICT (id) DO NOTHING",
                &[session_id, data],
            )
            .map_err(werr("creating the session"))?,
        RowChange::InsertEntry {
            session_id,
            entry_id,
            position,
            data,
        } => tx
            .execute(
                "INSERT INTO flue_session_entries (session_id, entry_id, position, data)
                 VALUES ($1, $2, $3::bigint, $4)",
                &[session_id, entry_id, position, data],
            )
            .map_err(werr("inserting a session entry"))?,
        RowChange::UpdateSessionData {
            session_id,
            old,
            new,
        } => tx
            .query(
                "UPDATE flue_sessions SET data = $1 WHERE id = $2 AND data = $3 RETURNING 1",
                &[new, session_id, old],
            )
            .map_err(werr("updating the session"))?
            .len() as u64,
        RowChange::DeleteStreamChunks { stream_key, .. } => {
            tx.execute(
                "DELETE FROM flue_agent_stream_chunks WHERE stream_key = $1",
                &[stream_key],
            )
            .map_err(werr("deleting stream chunks"))?;
            // Deleting fewer (or more) segments than previewed is harmless: count it as done.
            1
        }
        RowChange::CreateEventStream { path } => tx
            .execute(
                "INSERT INTO flue_event_streams (path) VALUES ($1) ON CONFLICT (path) DO NOTHING",
                &[path],
            )
            .map_err(werr("creating the event stream"))?,
        RowChange::AppendEvent {
            path,
            key,
            seq,
            data,
            ..
        } => append_event(tx, path, key, *seq, data)?,
        RowChange::UpdateJournal { .. }
        | RowChange::UpdateSubmission { .. }
        | RowChange::AutoFailSubmission { .. }
        | RowChange::UpdateTerminalizing { .. } => unreachable!("a guarded update, written above"),
    };
    Ok(n as usize)
}

/// `appendEventOnce` at `seq` with the `event_key` column: only on an open stream still at `seq`
/// and while the key is new; the head moves past the event in the same statement's wake.
fn append_event(
    tx: &mut Transaction<'_>,
    path: &str,
    key: &str,
    seq: i64,
    data: &str,
) -> Result<u64, ApplyError> {
    let n = tx
        .execute(
            "INSERT INTO flue_event_stream_entries (path, seq, data, event_key)
             SELECT path, next_offset, $3, $2 FROM flue_event_streams
             WHERE path = $1 AND closed = FALSE AND next_offset = $4
             ON CONFLICT DO NOTHING",
            &[&path, &key, &data, &seq],
        )
        .map_err(werr("appending the terminal event"))?;
    if n == 1 {
        let moved = tx
            .execute(
                "UPDATE flue_event_streams SET next_offset = next_offset + 1 WHERE path = $1 AND next_offset = $2",
                &[&path, &seq],
            )
            .map_err(werr("appending the terminal event"))?;
        return Ok(moved);
    }
    Ok(0)
}

/// A bound parameter for `v` and its placeholder; NULL is written as a literal (no type needed).
fn placeholder(v: &SqlValue, params: &mut Vec<Box<dyn ToSql + Sync>>) -> String {
    match v {
        SqlValue::Null => "NULL".into(),
        SqlValue::Int(i) => {
            params.push(Box::new(*i));
            format!("${}::bigint", params.len())
        }
        SqlValue::Text(t) => {
            params.push(Box::new(t.clone()));
            format!("${}::text", params.len())
        }
    }
}

/// `UPDATE t SET c = new, … WHERE submission_id = $1 AND attempt_id IS NOT DISTINCT FROM $2
/// AND <guard> AND c IS NOT DISTINCT FROM old … RETURNING 1` (`$2` NULL for a row without an
/// attempt)
fn update(
    tx: &mut Transaction<'_>,
    u: &GuardedUpdate,
    variant: Variant,
) -> Result<u64, ApplyError> {
    let GuardedUpdate {
        table,
        guard,
        submission_id,
        attempt_id,
        set,
    } = *u;
    let mut params: Vec<Box<dyn ToSql + Sync>> = vec![
        Box::new(submission_id.to_string()),
        Box::new(attempt_id.map(str::to_string)),
    ];
    let mut sets = Vec::new();
    let mut wheres = vec![
        "submission_id = $1".to_string(),
        "attempt_id IS NOT DISTINCT FROM $2::text".to_string(),
        guard.to_string(),
    ];
    for c in set {
        let name = column_name(c, variant);
        let new = placeholder(&c.new, &mut params);
        sets.push(format!("{name} = {new}"));
        let old = placeholder(&c.old, &mut params);
        wheres.push(format!("{name} IS NOT DISTINCT FROM {old}"));
    }
    let sql = format!(
        "UPDATE {table} SET {} WHERE {} RETURNING 1",
        sets.join(", "),
        wheres.join(" AND ")
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
    Ok(tx.query(&sql, &refs).map_err(werr("updating"))?.len() as u64)
}
