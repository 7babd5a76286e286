//! Fenced writes: one short `BEGIN IMMEDIATE` transaction per action that first re-checks the exact
//! state the operator previewed, then writes the rows and an audit record, then commits. Any
//! difference rolls back and writes nothing.
//!
//! The runtime uses a busy timeout of 0, so while we hold the write lock *its* writes fail: the
//! transaction does no reading beyond the fence check and no work outside SQL.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};

use crate::images::{after_images, before_images, RowImage};
use crate::sqlite::row_images::{images_json, SqliteRows};
use crate::traits::{Applied, ApplyError, AuditInfo, AuditRecord};
use crate::{JournalStore, SchemaInfo, SqliteStore, StoreError, Variant};
use turnscope_core::journal::records::EventStore;
use turnscope_core::recovery::changes::{
    ColumnChange, Fence, FenceSeen, GuardedUpdate, RowChange, SqlValue,
};

pub const AUDIT_DDL: &str = "CREATE TABLE IF NOT EXISTS turnscope_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  operator TEXT NOT NULL,
  action TEXT NOT NULL,
  submission_id TEXT NOT NULL,
  attempt_id TEXT,
  reason TEXT,
  summary TEXT NOT NULL,
  version TEXT NOT NULL,
  batch_id TEXT,
  undoes INTEGER,
  changes TEXT,
  side_effects TEXT
)";

/// Columns added to `turnscope_audit` after its first release: an older table gets them (NULL in
/// its old rows) in the first write transaction of a newer turnscope.
pub const AUDIT_COLUMNS_ADDED: [(&str, &str); 4] = [
    ("batch_id", "TEXT"),
    ("undoes", "INTEGER"),
    ("changes", "TEXT"),
    ("side_effects", "TEXT"),
];

/// Create the audit table, or bring an older one up to date, inside the write transaction.
pub(super) fn migrate_audit(tx: &Connection) -> Result<(), rusqlite::Error> {
    tx.execute(AUDIT_DDL, [])?;
    let present = audit_columns(tx)?;
    for (name, ty) in AUDIT_COLUMNS_ADDED {
        if !present.iter().any(|c| c == name) {
            tx.execute(
                &format!("ALTER TABLE turnscope_audit ADD COLUMN {name} {ty}"),
                [],
            )?;
        }
    }
    Ok(())
}

fn audit_columns(c: &Connection) -> Result<Vec<String>, rusqlite::Error> {
    c.prepare("SELECT name FROM pragma_table_info('turnscope_audit')")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect()
}

/// Append one audit row; returns its id.
pub(super) fn insert_audit(
    tx: &Connection,
    audit: &AuditInfo,
    submission_id: &str,
    attempt_id: Option<&str>,
    undoes: Option<i64>,
    images: &[RowImage],
) -> Result<i64, rusqlite::Error> {
    tx.execute(
        "INSERT INTO turnscope_audit (at, operator, action, submission_id, attempt_id, reason, summary, version, batch_id, undoes, changes, side_effects)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            audit.now_ms,
            audit.operator,
            audit.action,
            submission_id,
            attempt_id,
            audit.reason,
            audit.summary,
            env!("CARGO_PKG_VERSION"),
            audit.batch_id,
            undoes,
            images_json(images),
            audit.side_effects,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// A read-write connection, opened only in `--write` mode. Never creates the file.
pub struct SqliteWriter {
    conn: Connection,
    schema: SchemaInfo,
}

impl SqliteWriter {
    pub fn open(path: &Path) -> Result<SqliteWriter, StoreError> {
        // Validate it is a flue journal through the read-only path first.
        let schema = SqliteStore::open(path)?.schema().clone();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::sqlite("opening the database for writing", e))?;
        // Waiting here only delays us; the runtime never waits for us.
        conn.busy_timeout(Duration::from_millis(2000))
            .map_err(|e| StoreError::sqlite("setting the busy timeout", e))?;
        // No WAL checkpoint on our commits: SQLite runs one inside the committing call once the
        // WAL passes 1,000 pages (a 1.5 s stall in the 84th write of a 401-submission bulk on the
        // runtime-shaped scale journal). The runtime's own connections checkpoint as they always
        // do, and the last connection to close checkpoints what is left.
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(|e| StoreError::sqlite("turning off the automatic checkpoint", e))?;
        crate::sqlite::writable::check(path, &conn)?;
        check_integrity(&conn)?;
        Ok(SqliteWriter { conn, schema })
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(super) fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Apply `changes` if `fence` still holds, with an audit row, in one immediate transaction.
    pub fn apply(
        &mut self,
        fence: &Fence,
        changes: &[RowChange],
        audit: &AuditInfo,
    ) -> Result<Applied, ApplyError> {
        let variant = self.schema.variant;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let started = Instant::now();
        // The real clock, whatever time the caller shows: a lease live now is never written under.
        let diffs = check_fence(&tx, fence, crate::clock::now_ms())?;
        if !diffs.is_empty() {
            tx.rollback()?;
            return Err(ApplyError::Fenced(diffs));
        }
        let mut rows = 0;
        let mut images = Vec::new();
        for change in changes {
            // The exact rows before (and after) each change, for the audit and for `undo`.
            let mut touched =
                before_images(&mut SqliteRows(&tx), change).map_err(ApplyError::Store)?;
            let n = apply_change(&tx, change, variant)?;
            if n == 0 {
                tx.rollback()?;
                return Err(ApplyError::Fenced(vec![format!(
                    "a conditional write matched no row: {}",
                    change.preview()[0]
                )]));
            }
            after_images(&mut SqliteRows(&tx), &mut touched).map_err(ApplyError::Store)?;
            images.extend(touched);
            rows += n;
        }
        migrate_audit(&tx)?;
        let audit_id = insert_audit(
            &tx,
            audit,
            &fence.submission_id,
            fence.attempt_id.as_deref(),
            None,
            &images,
        )?;
        tx.commit()?;
        Ok(Applied {
            rows_written: rows,
            lock_held: started.elapsed(),
            audit_id,
        })
    }
}

/// Never write into a damaged file: a b-tree that reads fine where we looked can still be broken
/// where SQLite would put our rows. `quick_check` reads every page once (no index cross-check);
/// it runs before any lock is taken, so the runtime is not blocked by it.
pub(super) fn check_integrity(conn: &Connection) -> Result<(), StoreError> {
    let findings: Vec<String> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| StoreError::sqlite("checking the database before writing", e))?;
    if findings.len() == 1 && findings[0] == "ok" {
        return Ok(());
    }
    Err(StoreError::Sqlite {
        context: "refusing to write: the database file is damaged".into(),
        detail: format!("PRAGMA quick_check: {}", findings.join("; ")),
    })
}

fn check_fence(
    tx: &Transaction,
    fence: &Fence,
    now_ms: i64,
) -> Result<Vec<String>, rusqlite::Error> {
    let mut seen = FenceSeen {
        submission: tx
            .query_row(
                "SELECT status, attempt_id, lease_expires_at FROM flue_agent_submissions WHERE submission_id = ?1",
                [&fence.submission_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?,
        ..FenceSeen::default()
    };
    if seen.submission.is_none() {
        return Ok(fence.differences(&seen, now_ms));
    }
    seen.journal = tx
        .query_row(
            "SELECT attempt_id, phase, revision, committed FROM flue_agent_turn_journals WHERE submission_id = ?1",
            [&fence.submission_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? != 0)),
        )
        .optional()?;
    if fence.session.is_some() {
        let session_key: String = tx.query_row(
            "SELECT session_key FROM flue_agent_submissions WHERE submission_id = ?1",
            [&fence.submission_id],
            |r| r.get(0),
        )?;
        let data: Option<String> = tx
            .query_row(
                "SELECT data FROM flue_sessions WHERE id = ?1",
                [&session_key],
                |r| r.get(0),
            )
            .optional()?;
        let count: i64 = tx.query_row(
            "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1",
            [&session_key],
            |r| r.get(0),
        )?;
        seen.session = Some((data, count));
    }
    Ok(fence.differences(&seen, now_ms))
}

fn to_sql(v: &SqlValue) -> rusqlite::types::Value {
    match v {
        SqlValue::Null => rusqlite::types::Value::Null,
        SqlValue::Int(i) => rusqlite::types::Value::Integer(*i),
        SqlValue::Text(t) => rusqlite::types::Value::Text(t.clone()),
    }
}

fn column_name(c: &ColumnChange, variant: Variant) -> &'static str {
    variant.column(c.column)
}

/// Apply one change with a conditional statement; returns the rows affected.
fn apply_change(
    tx: &Transaction,
    change: &RowChange,
    variant: Variant,
) -> Result<usize, rusqlite::Error> {
    if let Some(u) = change.guarded_update() {
        return update(tx, &u, variant);
    }
    match change {
        RowChange::InsertSession { session_id, data } => tx.execute(
            // Entry rows without a session row would be deleted by the runtime's first save of
            // the session it creates; turnscope never writes over rows it did not read.
            "INSERT INTO flue_sessions (id, data) SELECT ?1, ?2
             WHERE NOT EXISTS (SELECT 1 FROM flue_session_entries WHERE session_id = ?1)
             ON CONFLICT (id) DO NOTHING",
            params![session_id, data],
        ),
        RowChange::InsertEntry { session_id, entry_id, position, data } => tx.execute(
            "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
            params![session_id, entry_id, position, data],
        ),
        RowChange::UpdateSessionData { session_id, old, new } => tx.execute(
            "UPDATE flue_sessions SET data = ?1 WHERE id = ?2 AND data = ?3",
            params![new, session_id, old],
        ),
        RowChange::DeleteStreamChunks { stream_key, .. } => {
            tx.execute("DELETE FROM flue_agent_stream_chunks WHERE stream_key = ?1", [stream_key])?;
            // Deleting fewer (or more) segments than previewed is harmless: count it as done.
            Ok(1)
        }
        RowChange::CreateEventStream { path } => tx.execute(
            "INSERT INTO flue_event_streams (path) VALUES (?1) ON CONFLICT (path) DO NOTHING",
            [path],
        ),
        RowChange::AppendEvent { path, key, seq, data, store } => append_event(tx, path, key, *seq, data, *store),
        RowChange::UpdateJournal { .. }
        | RowChange::UpdateSubmission { .. }
        | RowChange::AutoFailSubmission { .. }
        | RowChange::UpdateTerminalizing { .. } => unreachable!("a guarded update, written above"),
    }
}

/// `appendEventOnce` at `seq`: only on an open stream still at `seq`, and only while the key is
/// new. The built-in store's trigger copies the keyed row into the entries and moves the head;
/// libsql's store has no trigger, so the append does both itself.
fn append_event(
    tx: &Transaction,
    path: &str,
    key: &str,
    seq: i64,
    data: &str,
    store: EventStore,
) -> Result<usize, rusqlite::Error> {
    let n = match store {
        EventStore::KeysTable => tx.execute(
            "INSERT OR IGNORE INTO flue_event_stream_keys (path, key, seq, data)
             SELECT path, ?2, next_offset, ?3 FROM flue_event_streams
             WHERE path = ?1 AND closed = 0 AND next_offset = ?4",
            params![path, key, data, seq],
        )?,
        _ => {
            let n = tx.execute(
                "INSERT INTO flue_event_stream_entries (path, seq, data, event_key)
                 SELECT path, next_offset, ?3, ?2 FROM flue_event_streams
                 WHERE path = ?1 AND closed = 0 AND next_offset = ?4
                 ON CONFLICT DO NOTHING",
                params![path, key, data, seq],
            )?;
            if n == 1 {
                tx.execute(
                    "UPDATE flue_event_streams SET next_offset = next_offset + 1 WHERE path = ?1 AND next_offset = ?2",
                    params![path, seq],
                )?;
            }
            n
        }
    };
    if n == 0 {
        return Ok(0);
    }
    // The event is in the entries and the head moved past it (a keys table without its trigger
    // would leave both undone: then nothing is written).
    let appended: bool = tx.query_row(
        "SELECT (SELECT next_offset FROM flue_event_streams WHERE path = ?1) = ?2 + 1
            AND EXISTS (SELECT 1 FROM flue_event_stream_entries WHERE path = ?1 AND seq = ?2 AND data = ?3)",
        params![path, seq, data],
        |r| r.get(0),
    )?;
    Ok(usize::from(appended))
}

/// `UPDATE table SET c = new, … WHERE submission_id = ? AND attempt_id IS ? AND <guard> AND c IS
/// old …` (`attempt_id IS NULL` for a row without an attempt)
fn update(tx: &Transaction, u: &GuardedUpdate, variant: Variant) -> Result<usize, rusqlite::Error> {
    let GuardedUpdate {
        table,
        guard,
        submission_id,
        attempt_id,
        set,
    } = *u;
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    let mut sets = Vec::new();
    let mut wheres = vec![
        format!("submission_id = ?{}", 1),
        format!("attempt_id IS ?{}", 2),
        guard.to_string(),
    ];
    values.push(rusqlite::types::Value::Text(submission_id.to_string()));
    values.push(attempt_id.map_or(rusqlite::types::Value::Null, |a| {
        rusqlite::types::Value::Text(a.to_string())
    }));
    for c in set {
        let name = column_name(c, variant);
        values.push(to_sql(&c.new));
        sets.push(format!("{name} = ?{}", values.len()));
        // Compare-and-set on the old value too (IS handles NULL).
        values.push(to_sql(&c.old));
        wheres.push(format!("{name} IS ?{}", values.len()));
    }
    let sql = format!(
        "UPDATE {table} SET {} WHERE {}",
        sets.join(", "),
        wheres.join(" AND ")
    );
    tx.execute(&sql, rusqlite::params_from_iter(values))
}

/// Audit rows matching `cond`, newest first. A table written by an older turnscope lacks the
/// newer columns: they read as NULL.
pub(super) fn read_audit<P: rusqlite::Params>(
    c: &Connection,
    cond: &str,
    params: P,
    limit: Option<usize>,
) -> Result<Vec<AuditRecord>, rusqlite::Error> {
    let present = audit_columns(c)?;
    let col = |name: &str| {
        if present.iter().any(|c| c == name) {
            name.to_string()
        } else {
            "NULL".to_string()
        }
    };
    let sql = format!(
        "SELECT id, at, operator, action, submission_id, attempt_id, reason, summary, version, {}, {}, {}, {} FROM turnscope_audit WHERE {cond} ORDER BY id DESC{}",
        col("batch_id"),
        col("undoes"),
        col("changes"),
        col("side_effects"),
        limit.map_or(String::new(), |n| format!(" LIMIT {n}"))
    );
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt
        .query_map(params, |r| {
            Ok(AuditRecord {
                id: r.get(0)?,
                at: r.get(1)?,
                operator: r.get(2)?,
                action: r.get(3)?,
                submission_id: r.get(4)?,
                attempt_id: r.get(5)?,
                reason: r.get(6)?,
                summary: r.get(7)?,
                version: r.get(8)?,
                batch_id: r.get(9)?,
                undoes: r.get(10)?,
                changes: r
                    .get::<_, Option<String>>(11)?
                    .and_then(|t| serde_json::from_str(&t).ok()),
                side_effects: r
                    .get::<_, Option<String>>(12)?
                    .and_then(|t| serde_json::from_str(&t).ok()),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

impl SqliteStore {
    /// The audit trail, newest first; empty when turnscope never wrote to this database.
    pub fn audit_records(&self) -> Result<Vec<AuditRecord>, StoreError> {
        self.audit_query(&crate::AuditQuery::default())
    }

    /// The records `query` selects, newest first (the filters run in SQLite).
    pub fn audit_query(&self, query: &crate::AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        audit_query_on(self.connection(), query)
    }
}

/// The audit records `query` selects on `c`, newest first (none where turnscope never wrote).
pub(crate) fn audit_query_on(
    c: &Connection,
    query: &crate::AuditQuery,
) -> Result<Vec<AuditRecord>, StoreError> {
    {
        let err = |e| StoreError::sqlite("reading the audit trail", e);
        let exists: bool = c
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'turnscope_audit'", [], |r| r.get::<_, i64>(0))
            .map_err(err)?
            > 0;
        if !exists {
            return Ok(Vec::new());
        }
        let has_batch = audit_columns(c)
            .map_err(err)?
            .iter()
            .any(|n| n == "batch_id");
        let (cond, params) = query.condition(false, has_batch);
        let values: Vec<rusqlite::types::Value> = params
            .into_iter()
            .map(|p| match p {
                crate::AuditParam::Text(t) => rusqlite::types::Value::Text(t),
                crate::AuditParam::Int(n) => rusqlite::types::Value::Integer(n),
            })
            .collect();
        read_audit(c, &cond, rusqlite::params_from_iter(values), query.limit).map_err(err)
    }
}
