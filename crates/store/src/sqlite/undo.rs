//! `undo` on SQLite: one `BEGIN IMMEDIATE` transaction that reads the audit rows named, checks
//! that every row they changed still holds what turnscope wrote, puts the before-images back, and
//! records the undo with its own row images.

use std::time::Instant;

use rusqlite::TransactionBehavior;

use crate::images::{self, RowImage};
use crate::sqlite::row_images::SqliteRows;
use crate::sqlite::write::{insert_audit, migrate_audit, read_audit};
use crate::traits::{ApplyError, AuditInfo, AuditRecord, UndoTarget, Undone};
use crate::SqliteWriter;

/// Why `records` cannot be undone at all, if so: none, no images, or already undone.
pub(crate) fn undoable(
    target: &UndoTarget,
    records: &[AuditRecord],
    undone_by: &dyn Fn(i64) -> Option<i64>,
) -> Result<(), ApplyError> {
    if records.is_empty() {
        return Err(ApplyError::NotFound(target.to_string()));
    }
    for r in records {
        if r.changes.is_none() {
            return Err(ApplyError::Refused(format!(
                "audit #{} was recorded by turnscope {} without the rows it changed, so it cannot be undone",
                r.id, r.version
            )));
        }
        if let Some(by) = undone_by(r.id) {
            return Err(ApplyError::Refused(format!(
                "audit #{} was already undone by audit #{by}",
                r.id
            )));
        }
        if let Some(published) = published_event(r) {
            return Err(ApplyError::Refused(format!(
                "audit #{} appended a terminal event to the event stream {published}: subscribers may have seen it, and a stream is append-only, so it cannot be taken back",
                r.id
            )));
        }
    }
    Ok(())
}

/// Why `target` cannot be undone, judged from the audit trail as last read (`trail`, every
/// record): already undone, written without row images, or it published a terminal event. The
/// TUI says so before it asks why; the undo itself checks again in its transaction. `None` when
/// nothing in the trail stands in the way (or the target is not in it).
pub fn refusal_from_trail(target: &UndoTarget, trail: &[AuditRecord]) -> Option<String> {
    let records: Vec<AuditRecord> = trail
        .iter()
        .filter(|r| match target {
            UndoTarget::Audit(id) => r.id == *id,
            UndoTarget::Batch(b) => r.batch_id.as_ref() == Some(b),
        })
        .cloned()
        .collect();
    if records.is_empty() {
        return None;
    }
    let undone_by = |id: i64| trail.iter().find(|r| r.undoes == Some(id)).map(|r| r.id);
    match undoable(target, &records, &undone_by) {
        Err(ApplyError::Refused(why)) => Some(why),
        _ => None,
    }
}

/// The stream path of an event `r` appended (a row it inserted into the event-stream tables).
fn published_event(r: &AuditRecord) -> Option<String> {
    r.changes.as_deref()?.iter().find_map(|img| {
        (images::EVENT_TABLES.contains(&img.table.as_str())
            && img.before.is_none()
            && img.after.is_some())
        .then(|| {
            img.key
                .get("path")
                .and_then(|p| p.as_str())
                .unwrap_or("?")
                .to_string()
        })
    })
}

/// The summary of the undo row of `r`.
pub(crate) fn undo_summary(r: &AuditRecord, restored: usize) -> String {
    format!(
        "undo of audit #{} ({}): {restored} row(s) restored",
        r.id, r.action
    )
}

impl SqliteWriter {
    pub fn undo(
        &mut self,
        target: &UndoTarget,
        audit: &AuditInfo,
        commit: bool,
    ) -> Result<Undone, ApplyError> {
        undo_on(self.connection_mut(), target, audit, commit)
    }
}

/// The undo on a write connection, whatever journal format its rows are in (beta.7's writer and
/// flue 2.x's share it: the row images name their tables and keys).
pub(crate) fn undo_on(
    conn: &mut rusqlite::Connection,
    target: &UndoTarget,
    audit: &AuditInfo,
    commit: bool,
) -> Result<Undone, ApplyError> {
    {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let started = Instant::now();
        migrate_audit(&tx)?;
        let mut records = match target {
            UndoTarget::Audit(id) => read_audit(&tx, "id = ?1", [id], None)?,
            UndoTarget::Batch(b) => read_audit(&tx, "batch_id = ?1", [b], None)?,
        };
        // Oldest first: they are reverted newest first.
        records.reverse();
        let undone_by = |id: i64| -> Option<i64> {
            tx.query_row(
                "SELECT id FROM turnscope_audit WHERE undoes = ?1 LIMIT 1",
                [id],
                |r| r.get(0),
            )
            .ok()
        };
        undoable(target, &records, &undone_by)?;
        let mut changed = Vec::new();
        let mut done: Vec<(AuditRecord, Vec<RowImage>)> = Vec::new();
        for r in records.iter().rev() {
            let imgs = r.changes.as_deref().unwrap_or_default();
            match images::undo(&mut SqliteRows(&tx), imgs).map_err(ApplyError::Store)? {
                Ok(d) => done.push((r.clone(), d)),
                Err(c) => changed.extend(c.into_iter().map(|c| format!("audit #{}: {c}", r.id))),
            }
        }
        if !changed.is_empty() {
            tx.rollback()?;
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
        if !commit {
            tx.rollback()?;
            return Ok(out);
        }
        for (r, d) in &done {
            let info = AuditInfo {
                action: "undo".into(),
                summary: undo_summary(r, d.len()),
                ..audit.clone()
            };
            out.audit_ids.push(insert_audit(
                &tx,
                &info,
                &r.submission_id,
                r.attempt_id.as_deref(),
                Some(r.id),
                d,
            )?);
        }
        tx.commit()?;
        out.lock_held = started.elapsed();
        Ok(out)
    }
}
