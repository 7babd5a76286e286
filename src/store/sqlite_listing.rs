//! `ListQueries` on SQLite.

use std::collections::HashMap;

use rusqlite::types::ValueRef;

use super::listing::{ListQueries, ListRows};
use super::{JournalStore, SqliteStore, StoreError, Variant};
use crate::core::rows::SubmissionRow;

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

impl SqliteStore {
    /// The terminal outbox column that holds the event JSON (spec §1.2).
    fn terminal_event_column(&self) -> &'static str {
        match self.schema().variant {
            Variant::BuiltIn => "terminal_event_json",
            Variant::Libsql => "terminal_event",
        }
    }

    /// `WHERE …` of `rows` (parameter ?1 when it has one).
    fn list_where(&self, rows: ListRows<'_>) -> String {
        match rows {
            ListRows::Expired { .. } => {
                "WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?1".into()
            }
            ListRows::All => String::new(),
            ListRows::Status(_) => "WHERE status = ?1".into(),
            ListRows::Failed => {
                let t = self.terminal_event_column();
                format!(
                    "WHERE status = 'settled' AND (error IS NOT NULL OR (json_valid({t}) AND json_extract({t}, '$.outcome') = 'failed'))"
                )
            }
        }
    }
}

fn with_param<T>(rows: ListRows<'_>, f: impl FnOnce(&[&dyn rusqlite::ToSql]) -> T) -> T {
    match rows {
        ListRows::Expired { now_ms } => f(&[&now_ms]),
        ListRows::Status(s) => f(&[&s]),
        ListRows::All | ListRows::Failed => f(&[]),
    }
}

impl ListQueries for SqliteStore {
    fn submissions_where(
        &self,
        rows: ListRows<'_>,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        let inner = self.list_where(rows);
        let where_sql = match newest {
            None => inner,
            Some(n) => format!(
                "WHERE sequence IN (SELECT sequence FROM flue_agent_submissions {inner} ORDER BY sequence DESC LIMIT {n})"
            ),
        };
        with_param(rows, |p| self.query_submissions(&where_sql, p))
    }

    fn count_where(&self, rows: ListRows<'_>) -> Result<usize, StoreError> {
        let sql = format!(
            "SELECT COUNT(*) FROM flue_agent_submissions {}",
            self.list_where(rows)
        );
        let n: i64 = self
            .connection()
            .prepare_cached(&sql)
            .and_then(|mut s| with_param(rows, |p| s.query_row(p, |r| r.get(0))))
            .map_err(err("counting submissions"))?;
        Ok(n.max(0) as usize)
    }

    fn phases_of(&self, ids: &[&str]) -> Result<HashMap<String, (String, i64)>, StoreError> {
        let mut out = HashMap::new();
        if ids.is_empty() || !self.has_table("flue_agent_turn_journals") {
            return Ok(out);
        }
        let mut stmt = self
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

    fn session_submissions(&self, key: &str) -> Result<Vec<SubmissionRow>, StoreError> {
        self.query_submissions("WHERE session_key = ?1", &[&key])
    }

    fn submission_by_id(&self, id: &str) -> Result<Option<SubmissionRow>, StoreError> {
        Ok(self
            .query_submissions("WHERE submission_id = ?1", &[&id])?
            .into_iter()
            .next())
    }
}
