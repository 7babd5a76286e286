//! The list's reads, server-side: only the rows the current filter shows (through the runtime's
//! `(status, sequence)` index), the counts per filter, and the journal phase of just those rows.
//! A filter with more rows than [`PAGE`] loads its newest page only, so memory stays bounded on a
//! production journal.

use std::collections::HashMap;

use rusqlite::types::ValueRef;

use super::keymap::StatusFilter;
use crate::core::rows::SubmissionRow;
use crate::store::{JournalStore, SqliteStore, StoreError, Variant};

/// The most rows one filter loads (its newest by sequence).
pub const PAGE: usize = 5_000;

fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => String::new(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    }
}

fn err(what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |e| StoreError::sqlite(what, e)
}

/// The terminal outbox column that holds the event JSON (spec §1.2).
fn terminal_column(store: &SqliteStore) -> &'static str {
    match store.schema().variant {
        Variant::BuiltIn => "terminal_event_json",
        Variant::Libsql => "terminal_event",
    }
}

/// `settled` rows that failed: an error (dispatch), or a terminal event whose outcome is
/// `failed` (direct). The same rule as the planner's; the app re-checks every row anyway.
fn failed_predicate(store: &SqliteStore) -> String {
    let t = terminal_column(store);
    format!(
        "status = 'settled' AND (error IS NOT NULL OR (json_valid({t}) AND json_extract({t}, '$.outcome') = 'failed'))"
    )
}

/// The rows `filter` shows at `now_ms`, in sequence order: at most [`PAGE`], the newest. The
/// second value is the filter's total when only a page was loaded.
pub fn rows(
    store: &SqliteStore,
    filter: StatusFilter,
    now_ms: i64,
) -> Result<(Vec<SubmissionRow>, Option<usize>), StoreError> {
    let page = PAGE as i64;
    let newest = |inner: &str| {
        format!(
            "WHERE sequence IN (SELECT sequence FROM flue_agent_submissions {inner} ORDER BY sequence DESC LIMIT {})",
            page + 1
        )
    };
    let status = |s: &str| -> Result<Vec<SubmissionRow>, StoreError> {
        store.query_submissions(&newest("WHERE status = ?1"), &[&s])
    };
    let mut rows = match filter {
        StatusFilter::Expired => store.query_submissions(
            "WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?1",
            &[&now_ms],
        )?,
        StatusFilter::All => store.query_submissions(&newest(""), &[])?,
        StatusFilter::Queued => status("queued")?,
        StatusFilter::Running => status("running")?,
        StatusFilter::Terminalizing => status("terminalizing")?,
        StatusFilter::Settled => status("settled")?,
        StatusFilter::Failed => {
            store.query_submissions(&newest(&format!("WHERE {}", failed_predicate(store))), &[])?
        }
    };
    if filter != StatusFilter::Expired && rows.len() > PAGE {
        rows.drain(..rows.len() - PAGE);
        return Ok((rows, Some(total(store, filter)?)));
    }
    Ok((rows, None))
}

/// How many rows `filter` has in all (used only when a page was cut).
fn total(store: &SqliteStore, filter: StatusFilter) -> Result<usize, StoreError> {
    let conn = store.connection();
    let (sql, arg): (String, Option<&str>) = match filter {
        StatusFilter::All => ("SELECT COUNT(*) FROM flue_agent_submissions".into(), None),
        StatusFilter::Failed => (
            format!(
                "SELECT COUNT(*) FROM flue_agent_submissions WHERE {}",
                failed_predicate(store)
            ),
            None,
        ),
        StatusFilter::Queued => (status_count_sql(), Some("queued")),
        StatusFilter::Running => (status_count_sql(), Some("running")),
        StatusFilter::Terminalizing => (status_count_sql(), Some("terminalizing")),
        StatusFilter::Settled => (status_count_sql(), Some("settled")),
        StatusFilter::Expired => return Ok(0),
    };
    let mut stmt = conn
        .prepare_cached(&sql)
        .map_err(err("counting submissions"))?;
    let n: i64 = match arg {
        Some(a) => stmt.query_row([a], |r| r.get(0)),
        None => stmt.query_row([], |r| r.get(0)),
    }
    .map_err(err("counting submissions"))?;
    Ok(n.max(0) as usize)
}

fn status_count_sql() -> String {
    "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = ?1".into()
}

/// Expired-lease submissions at `now_ms` (the `(status, sequence)` index narrows to `running`).
pub fn expired_count(store: &SqliteStore, now_ms: i64) -> Result<usize, StoreError> {
    let n: i64 = store
        .connection()
        .prepare_cached(
            "SELECT COUNT(*) FROM flue_agent_submissions
             WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?1",
        )
        .and_then(|mut s| s.query_row([now_ms], |r| r.get(0)))
        .map_err(err("counting expired submissions"))?;
    Ok(n.max(0) as usize)
}

/// Failed submissions: reads every settled row, so the worker runs it in the background.
pub fn failed_count(store: &SqliteStore) -> Result<usize, StoreError> {
    total(store, StatusFilter::Failed)
}

/// `(phase, revision)` of the turn journals of these submissions (primary-key lookups).
pub fn phases(
    store: &SqliteStore,
    ids: &[&str],
) -> Result<HashMap<String, (String, i64)>, StoreError> {
    let mut out = HashMap::new();
    if ids.is_empty() || !store.has_table("flue_agent_turn_journals") {
        return Ok(out);
    }
    let mut stmt = store
        .connection()
        .prepare_cached(
            "SELECT phase, revision FROM flue_agent_turn_journals WHERE submission_id = ?1",
        )
        .map_err(err("reading turn journals"))?;
    for id in ids {
        let mut rows = stmt.query([id]).map_err(err("reading turn journals"))?;
        if let Some(r) = rows.next().map_err(err("reading turn journals"))? {
            let phase = text(r.get_ref(0).map_err(err("reading turn journals"))?);
            let rev = r.get::<_, Option<i64>>(1).unwrap_or(None).unwrap_or(0);
            out.insert(id.to_string(), (phase, rev));
        }
    }
    Ok(out)
}

/// Every submission of one session, in sequence order (the `(session_key, status, sequence)`
/// index).
pub fn session_rows(store: &SqliteStore, key: &str) -> Result<Vec<SubmissionRow>, StoreError> {
    store.query_submissions("WHERE session_key = ?1", &[&key])
}

/// `(sequence, submission id)` of every submission of one session, for stepping between them.
pub fn session_ids(store: &SqliteStore, key: &str) -> Result<Vec<(i64, String)>, StoreError> {
    let mut stmt = store
        .connection()
        .prepare_cached(
            "SELECT sequence, submission_id FROM flue_agent_submissions
             WHERE session_key = ?1 ORDER BY sequence",
        )
        .map_err(err("reading the session's submissions"))?;
    let rows = stmt
        .query_map([key], |r| Ok((r.get::<_, i64>(0)?, text(r.get_ref(1)?))))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(err("reading the session's submissions"))?;
    Ok(rows)
}
