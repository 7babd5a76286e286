//! Row images and `undo` on PostgreSQL, with the guarantees of the SQLite writer: whole rows read
//! with `row_to_json` (locked `FOR UPDATE`), restored with `json_populate_record`, inside the
//! writer's one transaction; the audit table brought up to date there too.

use std::time::Instant;

use postgres::types::ToSql;
use postgres::{GenericClient, Transaction};
use serde_json::{Map, Value};

use super::ddl::{AUDIT_COLUMNS_ADDED, AUDIT_DDL};
use super::{cell_int, cell_opt_text, cell_text, pg_error};
use crate::images::{self, changed_columns, primary_key, RowAccess, RowImage};
use crate::sqlite::undo::{undo_summary, undoable};
use crate::{ApplyError, AuditInfo, AuditRecord, StoreError, UndoTarget, Undone};

fn checked(name: &str, table: bool) -> Result<&str, StoreError> {
    crate::sqlite::row_images::checked_name(name, table)
}

fn perr(context: &'static str) -> impl Fn(postgres::Error) -> StoreError {
    move |e| pg_error(context, &e)
}

/// `k1::text = $1 AND …`: every key compared as text (segment indexes are integers).
fn where_key(key: &Map<String, Value>, first: usize) -> Result<(String, Vec<String>), StoreError> {
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for (i, (k, v)) in key.iter().enumerate() {
        parts.push(format!("{}::text = ${}", checked(k, false)?, first + i));
        values.push(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    Ok((parts.join(" AND "), values))
}

fn refs(v: &[String]) -> Vec<&(dyn ToSql + Sync)> {
    v.iter().map(|s| s as &(dyn ToSql + Sync)).collect()
}

/// [`RowAccess`] on the writer's transaction.
pub(super) struct PgRows<'a, 'b>(pub &'a mut Transaction<'b>);

impl RowAccess for PgRows<'_, '_> {
    fn rows(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
    ) -> Result<Vec<Map<String, Value>>, StoreError> {
        let table = checked(table, true)?;
        let (cond, values) = where_key(key, 1)?;
        let order = primary_key(table).join(", ");
        let sql = format!(
            "SELECT row_to_json(t)::text FROM {table} t WHERE {cond} ORDER BY {order} FOR UPDATE"
        );
        let rows = self
            .0
            .query(&sql, &refs(&values))
            .map_err(perr("reading a row"))?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                serde_json::from_str::<Value>(&r.get::<_, String>(0))
                    .ok()
                    .and_then(|v| v.as_object().cloned())
            })
            .collect())
    }

    fn put(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
        now: Option<&Map<String, Value>>,
        to: Option<&Map<String, Value>>,
    ) -> Result<(), StoreError> {
        let table = checked(table, true)?;
        match (now, to) {
            (_, None) => {
                let (cond, values) = where_key(key, 1)?;
                self.0
                    .execute(&format!("DELETE FROM {table} WHERE {cond}"), &refs(&values))
                    .map_err(perr("restoring a row"))?;
            }
            (Some(now), Some(to)) => {
                let cols = changed_columns(now, to);
                if cols.is_empty() {
                    return Ok(());
                }
                let names = cols
                    .iter()
                    .map(|(c, _)| checked(c, false))
                    .collect::<Result<Vec<_>, _>>()?;
                let (cond, mut values) = where_key(key, 2)?;
                values.insert(0, Value::Object(to.clone()).to_string());
                let list = names.join(", ");
                let sql = format!(
                    "UPDATE {table} SET ({list}) = (SELECT {list} FROM json_populate_record(NULL::{table}, $1::text::json)) WHERE {cond}"
                );
                // A one-column row constructor needs ROW().
                let sql = if names.len() == 1 {
                    sql.replace(
                        &format!("SET ({list}) = (SELECT"),
                        &format!("SET {list} = (SELECT"),
                    )
                } else {
                    sql
                };
                self.0
                    .execute(&sql, &refs(&values))
                    .map_err(perr("restoring a row"))?;
            }
            (None, Some(to)) => {
                let doc = vec![Value::Object(to.clone()).to_string()];
                self.0
                    .execute(
                        &format!(
                            "INSERT INTO {table} SELECT * FROM json_populate_record(NULL::{table}, $1::text::json)"
                        ),
                        &refs(&doc),
                    )
                    .map_err(perr("restoring a row"))?;
            }
        }
        Ok(())
    }
}

/// Create the audit table, or add the columns an older turnscope's table lacks (only those: an
/// ALTER needs the table's owner).
pub(super) fn migrate_audit(tx: &mut Transaction<'_>) -> Result<(), StoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('turnscope_audit'))",
        &[],
    )
    .and_then(|_| tx.batch_execute(AUDIT_DDL))
    .map_err(perr("creating turnscope_audit"))?;
    let present: Vec<String> = tx
        .query(
            "SELECT column_name::text FROM information_schema.columns
             WHERE table_name = 'turnscope_audit' AND table_schema = current_schema()",
            &[],
        )
        .map_err(perr("reading turnscope_audit's columns"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for (name, ty) in AUDIT_COLUMNS_ADDED {
        if !present.iter().any(|c| c == name) {
            tx.batch_execute(&format!(
                "ALTER TABLE turnscope_audit ADD COLUMN {name} {ty}"
            ))
            .map_err(perr("adding a column to turnscope_audit"))?;
        }
    }
    Ok(())
}

/// Audit rows matching `cond`, newest first; a table of an older turnscope reads NULL for the
/// newer columns.
pub(super) fn read_audit(
    c: &mut impl GenericClient,
    cond: &str,
    params: &[&(dyn ToSql + Sync)],
    limit: Option<usize>,
) -> Result<Vec<AuditRecord>, postgres::Error> {
    let present: Vec<String> = c
        .query(
            "SELECT column_name::text FROM information_schema.columns
             WHERE table_name = 'turnscope_audit' AND table_schema = current_schema()",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let col = |name: &str, cast: &str| {
        if present.iter().any(|c| c == name) {
            format!("{name}{cast}")
        } else {
            format!("NULL{cast}")
        }
    };
    let sql = format!(
        "SELECT id, at, operator, action, submission_id, attempt_id, reason, summary, version, {}, {}, {}, {}
         FROM turnscope_audit WHERE {cond} ORDER BY id DESC{}",
        col("batch_id", "::text"),
        col("undoes", "::bigint"),
        col("changes", "::text"),
        col("side_effects", "::text"),
        limit.map_or(String::new(), |n| format!(" LIMIT {n}"))
    );
    Ok(c.query(&sql, params)?
        .iter()
        .map(|r| AuditRecord {
            id: cell_int(r, 0).unwrap_or(0),
            at: cell_int(r, 1).unwrap_or(0),
            operator: cell_text(r, 2),
            action: cell_text(r, 3),
            submission_id: cell_text(r, 4),
            attempt_id: cell_opt_text(r, 5),
            reason: cell_opt_text(r, 6),
            summary: cell_text(r, 7),
            version: cell_text(r, 8),
            batch_id: cell_opt_text(r, 9),
            undoes: cell_int(r, 10),
            changes: cell_opt_text(r, 11).and_then(|t| serde_json::from_str(&t).ok()),
            side_effects: cell_opt_text(r, 12).and_then(|t| serde_json::from_str(&t).ok()),
        })
        .collect())
}

/// Append one audit row; returns its id.
pub(super) fn insert_audit(
    tx: &mut Transaction<'_>,
    audit: &AuditInfo,
    submission_id: &str,
    attempt_id: Option<&str>,
    undoes: Option<i64>,
    images: &[RowImage],
) -> Result<i64, StoreError> {
    let changes = serde_json::to_string(images).unwrap_or_else(|_| "[]".into());
    Ok(tx
        .query_one(
            "INSERT INTO turnscope_audit (at, operator, action, submission_id, attempt_id, reason, summary, version, batch_id, undoes, changes, side_effects)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
            &[
                &audit.now_ms,
                &audit.operator,
                &audit.action,
                &submission_id,
                &attempt_id,
                &audit.reason,
                &audit.summary,
                &env!("CARGO_PKG_VERSION"),
                &audit.batch_id,
                &undoes,
                &changes,
                &audit.side_effects,
            ],
        )
        .map_err(perr("writing the audit row"))?
        .get(0))
}

/// `undo` inside the writer's transaction (the caller commits or rolls back).
pub(super) fn undo_tx(
    tx: &mut Transaction<'_>,
    target: &UndoTarget,
    audit: &AuditInfo,
    commit: bool,
) -> Result<Undone, ApplyError> {
    let started = Instant::now();
    tx.batch_execute("SET LOCAL lock_timeout = '2s'")
        .map_err(|e| ApplyError::Store(pg_error("writing", &e)))?;
    migrate_audit(tx).map_err(ApplyError::Store)?;
    let mut records = match target {
        UndoTarget::Audit(id) => read_audit(tx, "id = $1", &[id], None),
        UndoTarget::Batch(b) => read_audit(tx, "batch_id = $1", &[b], None),
    }
    .map_err(|e| ApplyError::Store(pg_error("reading the audit trail", &e)))?;
    records.reverse();
    let mut undone_by = std::collections::HashMap::new();
    for r in &records {
        if let Some(row) = tx
            .query_opt(
                "SELECT id FROM turnscope_audit WHERE undoes = $1 LIMIT 1",
                &[&r.id],
            )
            .map_err(|e| ApplyError::Store(pg_error("reading the audit trail", &e)))?
        {
            undone_by.insert(r.id, row.get::<_, i64>(0));
        }
    }
    undoable(target, &records, &|id| undone_by.get(&id).copied())?;
    let mut changed = Vec::new();
    let mut done: Vec<(AuditRecord, Vec<RowImage>)> = Vec::new();
    for r in records.iter().rev() {
        let imgs = r.changes.as_deref().unwrap_or_default();
        match images::undo(&mut PgRows(tx), imgs).map_err(ApplyError::Store)? {
            Ok(d) => done.push((r.clone(), d)),
            Err(c) => changed.extend(c.into_iter().map(|c| format!("audit #{}: {c}", r.id))),
        }
    }
    if !changed.is_empty() {
        return Err(ApplyError::Fenced(changed));
    }
    let mut out = Undone {
        records: done
            .iter()
            .map(|(r, _)| (r.id, r.submission_id.clone()))
            .collect(),
        restored: done.iter().flat_map(|(_, d)| images::preview(d)).collect(),
        audit_ids: Vec::new(),
        lock_held: started.elapsed(),
    };
    if commit {
        for (r, d) in &done {
            let info = AuditInfo {
                action: "undo".into(),
                summary: undo_summary(r, d.len()),
                ..audit.clone()
            };
            out.audit_ids.push(
                insert_audit(
                    tx,
                    &info,
                    &r.submission_id,
                    r.attempt_id.as_deref(),
                    Some(r.id),
                    d,
                )
                .map_err(ApplyError::Store)?,
            );
        }
    }
    Ok(out)
}
