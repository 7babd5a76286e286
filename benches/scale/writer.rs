//! The refresh scenario's writer: what the runtime does while an operator watches, on its own
//! connection. Each round renews the leases of a few live submissions (+1 ms) and appends an
//! entry to a few expired submissions' sessions (a child of the session's leaf, not on the active
//! path), commits, then undoes both in a second transaction. The database is semantically the
//! same after every round, and it is always left after an undo.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::{params, Connection, TransactionBehavior};

pub fn run(db: &Path, now_ms: i64, stop: &AtomicBool, writes: &AtomicU64) -> Result<(), String> {
    let mut conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let q = |conn: &Connection, sql: &str| -> Result<Vec<(String, String)>, String> {
        let mut s = conn.prepare(sql).map_err(|e| e.to_string())?;
        let rows = s
            .query_map([now_ms], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|r| r.collect::<Result<Vec<_>, _>>())
            .map_err(|e| e.to_string())?;
        Ok(rows)
    };
    let live = q(
        &conn,
        "SELECT submission_id, session_key FROM flue_agent_submissions
         WHERE status = 'running' AND lease_expires_at >= ?1 ORDER BY sequence LIMIT 8",
    )?;
    let expired = q(
        &conn,
        "SELECT submission_id, session_key FROM flue_agent_submissions
         WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?1
         ORDER BY sequence LIMIT 4",
    )?;
    // Appends go under each session's leaf.
    let mut targets = Vec::new();
    for (_, key) in &expired {
        let leaf: Option<String> = conn
            .query_row(
                "SELECT json_extract(data, '$.leafId') FROM flue_sessions WHERE id = ?1",
                [key],
                |r| r.get(0),
            )
            .ok()
            .flatten();
        let pos: i64 = conn
            .query_row(
                "SELECT COALESCE(MAX(position), -1) + 1 FROM flue_session_entries WHERE session_id = ?1",
                [key],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        if let Some(leaf) = leaf {
            targets.push((key.clone(), leaf, pos));
        }
    }
    let mut round = 0u64;
    while !stop.load(Ordering::SeqCst) {
        round += 1;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        for (id, _) in &live {
            tx.execute(
                "UPDATE flue_agent_submissions SET lease_expires_at = lease_expires_at + 1 WHERE submission_id = ?1",
                [id],
            )
            .map_err(|e| e.to_string())?;
        }
        for (i, (key, leaf, pos)) in targets.iter().enumerate() {
            let id = format!("fe{:06x}", (round * 8 + i as u64) & 0xff_ffff);
            let data = format!(
                r#"{{"type":"message","id":"{id}","parentId":"{leaf}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"bench append","timestamp":0}}}}"#
            );
            tx.execute(
                "INSERT OR IGNORE INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
                params![key, id, pos, data],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        writes.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(15));
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        for (id, _) in &live {
            tx.execute(
                "UPDATE flue_agent_submissions SET lease_expires_at = lease_expires_at - 1 WHERE submission_id = ?1",
                [id],
            )
            .map_err(|e| e.to_string())?;
        }
        for (key, _, pos) in &targets {
            tx.execute(
                "DELETE FROM flue_session_entries WHERE session_id = ?1 AND position = ?2 AND entry_id LIKE 'fe%'",
                params![key, pos],
            )
            .map_err(|e| e.to_string())?;
        }
        tx.commit().map_err(|e| e.to_string())?;
        writes.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(15));
    }
    // Fold the WAL back so the file is as it was.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    Ok(())
}
