//! `ListQueries` on PostgreSQL: the same filters as SQLite's, on the same indexes. The failed
//! filter reads settled rows with an error or a terminal event and decides on the event's JSON in
//! Rust (PostgreSQL 15 has no `IS JSON` test, and a cast of malformed text would abort the query).

use std::collections::HashMap;

use postgres::types::ToSql;

use super::read::query_submissions;
use super::{cell_int, cell_opt_text, pg_error, PgStore};
use crate::core::rows::SubmissionRow;
use crate::store::listing::{terminal_outcome_failed, ListQueries, ListRows};
use crate::store::StoreError;

const EXPIRED: &str = "status = 'running' AND lease_expires_at > 0 AND lease_expires_at < $1";
/// Settled rows that may have failed; `is_failed` decides.
const MAYBE_FAILED: &str =
    "status = 'settled' AND (error IS NOT NULL OR terminal_event IS NOT NULL)";

fn is_failed(row: &SubmissionRow) -> bool {
    row.error.is_some() || terminal_outcome_failed(row.terminal_event.as_deref())
}

impl PgStore {
    fn where_of<'a>(rows: &'a ListRows<'a>) -> (&'static str, Vec<&'a (dyn ToSql + Sync)>) {
        match rows {
            ListRows::Expired { now_ms } => (EXPIRED, vec![now_ms]),
            ListRows::All => ("TRUE", vec![]),
            ListRows::Status(s) => ("status = $1", vec![s]),
            ListRows::Failed => (MAYBE_FAILED, vec![]),
        }
    }
}

impl ListQueries for PgStore {
    fn submissions_where(
        &self,
        rows: ListRows<'_>,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        let (pred, params) = Self::where_of(&rows);
        let c = &mut *self.conn()?;
        let cols = &self.submission_columns;
        if rows == ListRows::Failed {
            // Filter in Rust, then keep the newest page.
            let mut all: Vec<SubmissionRow> =
                query_submissions(c, cols, &format!("WHERE {pred}"), &params)?
                    .into_iter()
                    .filter(is_failed)
                    .collect();
            if let Some(n) = newest {
                let cut = all.len().saturating_sub(n);
                all.drain(..cut);
            }
            return Ok(all);
        }
        let where_sql = match newest {
            None => format!("WHERE {pred}"),
            Some(n) => format!(
                "WHERE sequence IN (SELECT sequence FROM flue_agent_submissions WHERE {pred} ORDER BY sequence DESC LIMIT {n})"
            ),
        };
        query_submissions(c, cols, &where_sql, &params)
    }

    fn count_where(&self, rows: ListRows<'_>) -> Result<usize, StoreError> {
        if rows == ListRows::Failed {
            return Ok(self.submissions_where(rows, None)?.len());
        }
        let (pred, params) = Self::where_of(&rows);
        let r = self
            .conn()?
            .query_one(
                &format!("SELECT COUNT(*) FROM flue_agent_submissions WHERE {pred}"),
                &params,
            )
            .map_err(|e| pg_error("counting submissions", &e))?;
        Ok(cell_int(&r, 0).unwrap_or(0).max(0) as usize)
    }

    fn phases_of(&self, ids: &[&str]) -> Result<HashMap<String, (String, i64)>, StoreError> {
        let mut out = HashMap::new();
        if ids.is_empty() || !self.has_table("flue_agent_turn_journals") {
            return Ok(out);
        }
        let ids: Vec<&str> = ids.to_vec();
        let rows = self
            .conn()?
            .query(
                "SELECT submission_id, phase, revision::bigint FROM flue_agent_turn_journals
                 WHERE submission_id = ANY($1)",
                &[&ids],
            )
            .map_err(|e| pg_error("reading turn journals", &e))?;
        for r in &rows {
            let id = cell_opt_text(r, 0).unwrap_or_default();
            let phase = cell_opt_text(r, 1).unwrap_or_default();
            out.insert(id, (phase, cell_int(r, 2).unwrap_or(0)));
        }
        Ok(out)
    }

    fn session_submissions(&self, key: &str) -> Result<Vec<SubmissionRow>, StoreError> {
        let c = &mut *self.conn()?;
        query_submissions(
            c,
            &self.submission_columns,
            "WHERE session_key = $1",
            &[&key],
        )
    }

    fn submission_by_id(&self, id: &str) -> Result<Option<SubmissionRow>, StoreError> {
        let c = &mut *self.conn()?;
        Ok(query_submissions(
            c,
            &self.submission_columns,
            "WHERE submission_id = $1",
            &[&id],
        )?
        .into_iter()
        .next())
    }
}
