//! `turnscope demo`: write a realistic flue journal database to explore without a real runtime.
//!
//! The file uses the exact schema of the built-in SQLite adapter of `@flue/runtime`
//! 1.0.0-beta.7 (DDL copied from `sqlite_master` of databases the runtime wrote) and the exact
//! JSON shapes and key orders of its rows (spec §1.4–§3.6). It contains one session per
//! scenario: stuck submissions with expired leases covering every classification of §4 and every
//! rule of the reconciler table (§5.2), a session repaired the way §6.1 repairs, and healthy rows
//! (live, queued, terminalizing, settled). See `scenarios*.rs` for what the runtime would
//! conclude on each one.
//!
//! Everything is deterministic given `now_ms`: ids come from a fixed-seed generator, times are
//! offsets from `now_ms`. `tests_rules.rs` pins the classification and reconciler rule of every
//! stuck row; the same outcomes were confirmed once with the real runtime (the shared flue
//! harness's `inspect.sh` and `resume.sh`, run on a copy whose agent names were changed to the
//! harness's `worker`).

// `build`, `flow`, `ids` and `shapes` are public for the scale generator (`turnscope-bench`),
// which writes its journals with the same row shapes.
pub mod build;
pub mod flow;
pub mod ids;
pub mod insert;
mod scenarios;
mod scenarios_batches;
mod scenarios_billing;
mod scenarios_completed;
mod scenarios_resume;
mod scenarios_rows;
pub mod shapes;
pub mod synthetic;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rules;

use std::path::Path;

use rusqlite::{params, Connection};

use build::Demo;

/// Row counts of a written demo database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSummary {
    /// Rows in `flue_agent_submissions`.
    pub submissions: usize,
    /// Rows in `flue_sessions` (root and child sessions).
    pub sessions: usize,
    /// Rows in `flue_session_entries`.
    pub entries: usize,
}

/// Why the demo database could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The target exists and is not empty; the demo never overwrites a file.
    #[error("refusing to overwrite existing file {}", .0.display())]
    AlreadyExists(std::path::PathBuf),
    /// Checking the target path failed.
    #[error("cannot check the demo database path: {0}")]
    Io(#[source] std::io::Error),
    /// SQLite refused a statement.
    #[error("cannot write the demo database: {0}")]
    Sqlite(#[source] rusqlite::Error),
}

impl From<rusqlite::Error> for DemoError {
    fn from(e: rusqlite::Error) -> Self {
        DemoError::Sqlite(e)
    }
}

/// The current wall-clock time in ms since the Unix epoch (JavaScript `Date.now()`).
pub fn demo_now_ms() -> i64 {
    turnscope_store::clock::now_ms()
}

/// Write the demo database to `path` (a new file, or an existing empty one), with every time
/// relative to `now_ms`. Leases of the stuck submissions are expired relative to `now_ms`;
/// the one live submission's lease runs until `now_ms + 30 min`.
pub fn write_demo(path: &Path, now_ms: i64) -> Result<DemoSummary, DemoError> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 || !m.is_file() => {
            return Err(DemoError::AlreadyExists(path.to_path_buf()))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(DemoError::Io(e)),
    }
    let demo = build_demo(now_ms);
    let mut conn = Connection::open(path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    debug_assert_eq!(mode, "wal");
    conn.execute_batch(DDL)?;
    let tx = conn.transaction()?;
    insert_all(&tx, &demo)?;
    tx.commit()?;
    Ok(DemoSummary {
        submissions: demo.subs.len(),
        sessions: demo.sessions.len(),
        entries: demo.sessions.iter().map(|s| s.entries.len()).sum(),
    })
}

/// Build every scenario in memory.
fn build_demo(now_ms: i64) -> Demo {
    let mut d = Demo::new(now_ms);
    scenarios::build(&mut d);
    scenarios_completed::build(&mut d);
    scenarios_resume::build(&mut d);
    scenarios_batches::build(&mut d);
    scenarios_rows::build(&mut d);
    // AUTOINCREMENT `sequence` is admission order.
    d.subs.sort_by_key(|s| s.accepted_at);
    d
}

fn insert_all(tx: &rusqlite::Transaction<'_>, d: &Demo) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO flue_meta (key, value) VALUES ('schema_version', '3')",
        [],
    )?;
    let mut ins_session = tx.prepare("INSERT INTO flue_sessions (id, data) VALUES (?1, ?2)")?;
    let mut ins_entry = tx.prepare(
        "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for s in &d.sessions {
        ins_session.execute(params![s.key, s.data()])?;
        for (pos, (id, data)) in s.entries.iter().enumerate() {
            ins_entry.execute(params![s.key, id, pos as i64, data])?;
        }
    }
    // Admission order is the order the scenarios were built in.
    let rows: Vec<insert::SubRow> = d
        .subs
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, sub)| insert::SubRow::new(sub, 0, i))
        .collect();
    insert::insert_submissions(tx, &rows, &mut turnscope_store::progress::Unwatched)?;
    let mut ins_journal = tx.prepare(insert::JOURNAL_INSERT)?;
    for j in &d.journals {
        insert::insert_journal(&mut ins_journal, j)?;
    }
    let mut ins_chunk =
        tx.prepare("INSERT INTO flue_agent_stream_chunks (stream_key, segment_index, body) VALUES (?1, ?2, ?3)")?;
    for (key, idx, body) in &d.chunks {
        ins_chunk.execute(params![key, idx, body])?;
    }
    // Event streams: the keys table's trigger copies each event into the entries table and bumps
    // next_offset, exactly like `appendEventOnce`.
    let mut ins_stream =
        tx.prepare("INSERT OR IGNORE INTO flue_event_streams (path) VALUES (?1)")?;
    let mut ins_key = tx.prepare(
        "INSERT INTO flue_event_stream_keys (path, key, seq, data) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut next: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    for (path, key, data) in &d.events {
        ins_stream.execute(params![path])?;
        let seq = next.entry(path.as_str()).or_insert(0);
        ins_key.execute(params![path, key, *seq, data])?;
        *seq += 1;
    }
    let mut ins_receipt = tx.prepare(
        "INSERT INTO flue_agent_dispatch_receipts (dispatch_id, accepted_at) VALUES (?1, ?2)",
    )?;
    for (id, at) in &d.receipts {
        ins_receipt.execute(params![id, at])?;
    }
    Ok(())
}

/// The runtime's SQLite schema (beta.7), as its adapter creates it; the scale generator writes it
/// too. It lives in `turnscope-store`, which also loads exports into it.
pub use turnscope_store::ddl::DDL;
