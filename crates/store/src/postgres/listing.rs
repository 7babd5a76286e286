//! `ListQueries` on PostgreSQL: the same filters as SQLite's (`store::filter`), on the same
//! indexes; the failed filter is finished in Rust (see `RowFilter::sql`).

use std::collections::HashMap;

use postgres::types::ToSql;

use super::read::{query_submissions, visit_submissions};
use super::{cell_int, cell_opt_text, pg_error, PgStore};
use crate::filter::{Dialect, FilterSql, RowFilter};
use crate::listing::ListQueries;
use crate::{JournalStore, RowPage, StoreError};
use turnscope_core::journal::submission_rows::SubmissionRow;

impl PgStore {
    fn filter_sql(&self, filter: RowFilter) -> FilterSql {
        let [_, event, _] = self.schema().variant.terminal_columns();
        filter.sql(Dialect::Postgres, event)
    }
}

fn params<'a>(sql: &FilterSql, now_ms: &'a i64) -> Vec<&'a (dyn ToSql + Sync)> {
    if sql.takes_now {
        vec![now_ms]
    } else {
        vec![]
    }
}

impl PgStore {
    /// `submissions_where(filter, now_ms, None)`, the rows of `page`, each handed to `visit` as
    /// it is read (the failed filter finished in Rust on each); the last one's sequence.
    pub(super) fn visit_where(
        &self,
        filter: RowFilter,
        now_ms: i64,
        page: RowPage,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<Option<i64>, StoreError> {
        let sql = self.filter_sql(filter);
        let params = params(&sql, &now_ms);
        let c = &mut *self.conn()?;
        let mut last = None;
        visit_submissions(
            c,
            &self.submission_columns,
            &sql.where_after(page.after),
            &params,
            page.rows,
            &mut |r| {
                last = Some(r.sequence);
                if !sql.refine_in_rust || filter.matches(&r, now_ms) {
                    visit(r);
                }
            },
        )?;
        Ok(last)
    }
}

impl ListQueries for PgStore {
    fn submissions_where(
        &self,
        filter: RowFilter,
        now_ms: i64,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        let sql = self.filter_sql(filter);
        let params = params(&sql, &now_ms);
        let c = &mut *self.conn()?;
        let cols = &self.submission_columns;
        if sql.refine_in_rust {
            // Filter in Rust, then keep the newest page.
            let mut all: Vec<SubmissionRow> =
                query_submissions(c, cols, &sql.where_clause(), &params)?
                    .into_iter()
                    .filter(|r| filter.matches(r, now_ms))
                    .collect();
            if let Some(n) = newest {
                let cut = all.len().saturating_sub(n);
                all.drain(..cut);
            }
            return Ok(all);
        }
        let where_sql = match newest {
            None => sql.where_clause(),
            Some(n) => format!(
                "WHERE sequence IN (SELECT sequence FROM flue_agent_submissions {} ORDER BY sequence DESC LIMIT {n})",
                sql.where_clause()
            ),
        };
        query_submissions(c, cols, &where_sql, &params)
    }

    fn count_where(&self, filter: RowFilter, now_ms: i64) -> Result<usize, StoreError> {
        let sql = self.filter_sql(filter);
        if sql.refine_in_rust {
            return Ok(self.submissions_where(filter, now_ms, None)?.len());
        }
        let r = self
            .conn()?
            .query_one(
                &format!(
                    "SELECT COUNT(*) FROM flue_agent_submissions {}",
                    sql.where_clause()
                ),
                &params(&sql, &now_ms),
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
