//! A flue 2.x journal (SQLite), written: one submission row changed in one short `BEGIN
//! IMMEDIATE` transaction that re-reads the row, checks the state the preview read (status,
//! attempt, owner, lease as read and ended on the real clock (but for an abort intent under a
//! live lease, which the owner honours), every changed column as read, no
//! joined delivery where the action needs none), writes it with the runtime's own fence in the
//! `UPDATE` (`WHERE submission_id = ? AND status = ? AND attempt_id = ?`, SAES:364–530) plus
//! those checks, and appends the audit record, with the row's image before and after, in the
//! same transaction. `undo` and the audit trail are beta.7's (`turnscope_audit`, row images).
//!
//! Only `flue_agent_submissions` is written: never a conversation stream (docs/flue2.md says
//! why).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde_json::{Map, Value};

use super::flue2::Flue2SqliteReader;
use super::row_images::SqliteRows;
use super::write::{audit_query_on, check_integrity, insert_audit, migrate_audit};
use crate::images::{RowAccess, RowImage};
use crate::traits::{Applied, ApplyError, AuditInfo, AuditRecord, UndoTarget, Undone};
use crate::{AuditQuery, StoreError};
use turnscope_core::flue2::{Flue2ColumnChange, Flue2Fence};
use turnscope_core::recovery::changes::SqlValue;

/// The columns an action may set (the `UPDATE` names them from this list only).
const WRITABLE: [&str; 10] = [
    "status",
    "attempt_id",
    "input_applied_at",
    "started_at",
    "owner_id",
    "lease_expires_at",
    "abort_requested_at",
    "max_attempts",
    "timeout_at",
    "settlement_record_id",
];
const SETTLEMENT_RECORD: &str = "settlement_record";

/// A flue 2.x SQLite journal opened for writing (only in `--write` mode; never creates it).
pub struct Flue2SqliteWriter {
    conn: Connection,
}

fn sql(v: &SqlValue) -> rusqlite::types::Value {
    match v {
        SqlValue::Null => rusqlite::types::Value::Null,
        SqlValue::Int(i) => rusqlite::types::Value::Integer(*i),
        SqlValue::Text(t) => rusqlite::types::Value::Text(t.clone()),
    }
}

fn shown(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "NULL".into(),
        SqlValue::Int(i) => i.to_string(),
        SqlValue::Text(t) if t.chars().count() > 60 => {
            format!("{:?}…", t.chars().take(60).collect::<String>())
        }
        SqlValue::Text(t) => format!("{t:?}"),
    }
}

impl Flue2SqliteWriter {
    /// Open `path` for writing: it must read as a 2.x journal turnscope reads (the read-only
    /// checks first), be writable, and pass `quick_check`.
    pub fn open(path: &Path) -> Result<Flue2SqliteWriter, StoreError> {
        drop(Flue2SqliteReader::open(path)?);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::sqlite("opening the database for writing", e))?;
        // Waiting here only delays us; the runtime (busy timeout 0) never waits for us.
        conn.busy_timeout(Duration::from_millis(2000))
            .map_err(|e| StoreError::sqlite("setting the busy timeout", e))?;
        super::writable::check(path, &conn)?;
        check_integrity(&conn)?;
        Ok(Flue2SqliteWriter { conn })
    }

    /// Write `changes` to the row `fence` names if it still holds what the preview read, with an
    /// audit record, in one immediate transaction.
    pub fn apply(
        &mut self,
        fence: &Flue2Fence,
        changes: &[Flue2ColumnChange],
        audit: &AuditInfo,
    ) -> Result<Applied, ApplyError> {
        for c in changes {
            if !WRITABLE.contains(&c.column) && c.column != SETTLEMENT_RECORD {
                return Err(ApplyError::Refused(format!(
                    "turnscope does not write the column {}",
                    c.column
                )));
            }
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let started = Instant::now();
        // The real clock: a lease live now is never written under, whatever the preview showed.
        let now = crate::clock::now_ms();
        let diffs = differences(&tx, fence, changes, now)?;
        if !diffs.is_empty() {
            tx.rollback()?;
            return Err(ApplyError::Fenced(diffs));
        }
        let table = "flue_agent_submissions";
        let mut key = Map::new();
        key.insert(
            "submission_id".into(),
            Value::from(fence.submission_id.clone()),
        );
        let mut image = RowImage {
            table: table.into(),
            before: SqliteRows(&tx)
                .rows(table, &key)
                .map_err(ApplyError::Store)?
                .into_iter()
                .next(),
            key,
            after: None,
        };
        let mut values = Vec::new();
        let mut sets = Vec::new();
        let mut wheres = Vec::new();
        for c in changes {
            values.push(sql(&c.after));
            sets.push(format!("{} = ?{}", c.column, values.len()));
        }
        // The runtime's fence, then the rest of what the preview read.
        let mut guard = |sql_text: &str, v: rusqlite::types::Value| {
            values.push(v);
            wheres.push(sql_text.replace('#', &format!("?{}", values.len())));
        };
        guard(
            "submission_id = #",
            sql(&SqlValue::text(&fence.submission_id)),
        );
        guard("status = #", sql(&SqlValue::text(&fence.status)));
        guard("attempt_id IS #", opt_text(&fence.attempt_id));
        guard("owner_id IS #", opt_text(&fence.owner_id));
        // An abort intent under a live lease holds neither (the owner renews it), as the
        // runtime's own requestSessionAbort; every other write, the lease as read and ended.
        if !fence.live_lease {
            guard(
                "lease_expires_at = #",
                rusqlite::types::Value::Integer(fence.lease_expires_at),
            );
            guard("lease_expires_at < #", rusqlite::types::Value::Integer(now));
        }
        for c in changes {
            guard(&format!("{} IS #", c.column), sql(&c.before));
        }
        if fence.no_joined {
            wheres.push(
                "NOT EXISTS (SELECT 1 FROM flue_agent_submissions AS j WHERE j.joined_into = flue_agent_submissions.submission_id AND j.status IN ('joining', 'joined'))".into(),
            );
        }
        let n = tx.execute(
            &format!(
                "UPDATE {table} SET {} WHERE {}",
                sets.join(", "),
                wheres.join(" AND ")
            ),
            rusqlite::params_from_iter(values),
        )?;
        if n != 1 {
            tx.rollback()?;
            return Err(ApplyError::Fenced(vec![
                "the fenced UPDATE matched no row".into()
            ]));
        }
        image.after = SqliteRows(&tx)
            .rows(table, &image.key)
            .map_err(ApplyError::Store)?
            .into_iter()
            .next();
        migrate_audit(&tx)?;
        let audit_id = insert_audit(
            &tx,
            audit,
            &fence.submission_id,
            fence.attempt_id.as_deref(),
            None,
            &[image],
        )?;
        tx.commit()?;
        Ok(Applied {
            rows_written: n,
            lock_held: started.elapsed(),
            audit_id,
        })
    }

    /// Revert an audited action (beta.7's undo: only while the row still holds what turnscope
    /// wrote, i.e. the runtime has not acted on it).
    pub fn undo(
        &mut self,
        target: &UndoTarget,
        audit: &AuditInfo,
        commit: bool,
    ) -> Result<Undone, ApplyError> {
        super::undo::undo_on(&mut self.conn, target, audit, commit)
    }
}

fn opt_text(v: &Option<String>) -> rusqlite::types::Value {
    v.as_ref().map_or(rusqlite::types::Value::Null, |t| {
        rusqlite::types::Value::Text(t.clone())
    })
}

/// What differs from the preview's state, in words (empty: the fence holds).
fn differences(
    tx: &Connection,
    fence: &Flue2Fence,
    changes: &[Flue2ColumnChange],
    now: i64,
) -> Result<Vec<String>, rusqlite::Error> {
    let row = tx
        .query_row(
            "SELECT status, attempt_id, owner_id, lease_expires_at FROM flue_agent_submissions WHERE submission_id = ?1",
            [&fence.submission_id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            },
        )
        .optional()?;
    let Some((status, attempt, owner, lease)) = row else {
        return Ok(vec![format!("submission {} is gone", fence.submission_id)]);
    };
    let mut out = Vec::new();
    if status != fence.status {
        out.push(format!(
            "status is {status}, was {} at the preview",
            fence.status
        ));
    }
    if attempt != fence.attempt_id {
        out.push(format!(
            "attempt_id is {}, was {} at the preview",
            attempt.as_deref().unwrap_or("NULL"),
            fence.attempt_id.as_deref().unwrap_or("NULL")
        ));
    }
    if owner != fence.owner_id {
        out.push(format!(
            "owner_id is {}, was {} at the preview",
            owner.as_deref().unwrap_or("NULL"),
            fence.owner_id.as_deref().unwrap_or("NULL")
        ));
    }
    if fence.live_lease {
        // Renewed or not, the lease is not held: the live owner honours the intent.
    } else if lease != fence.lease_expires_at {
        out.push(format!(
            "lease_expires_at is {lease}, was {} at the preview",
            fence.lease_expires_at
        ));
    } else if lease >= now {
        out.push(format!(
            "the lease is live on the real clock ({} ms more)",
            lease - now
        ));
    }
    for c in changes {
        let now_value: rusqlite::types::Value = tx.query_row(
            &format!(
                "SELECT {} FROM flue_agent_submissions WHERE submission_id = ?1",
                c.column
            ),
            [&fence.submission_id],
            |r| r.get(0),
        )?;
        if now_value != sql(&c.before) {
            out.push(format!(
                "{} changed since the preview (was {})",
                c.column,
                shown(&c.before)
            ));
        }
    }
    if fence.no_joined {
        let joined: Vec<String> = tx
            .prepare("SELECT submission_id FROM flue_agent_submissions WHERE joined_into = ?1 AND status IN ('joining', 'joined') ORDER BY sequence")?
            .query_map([&fence.submission_id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if !joined.is_empty() {
            out.push(format!(
                "deliveries joined into it since: {}",
                joined.join(", ")
            ));
        }
    }
    Ok(out)
}

impl Flue2SqliteReader {
    /// The audit records `query` selects, newest first (none where turnscope never wrote).
    pub fn audit_query(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        audit_query_on(self.connection(), query)
    }
}
