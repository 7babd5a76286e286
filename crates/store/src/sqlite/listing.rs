//! `ListQueries` on SQLite: the filters' SQL from `store::filter`, exact in SQL.

use std::collections::HashMap;

use crate::parse::text_of;

use crate::filter::{Dialect, FilterSql, RowFilter};
use crate::listing::ListQueries;
use crate::{JournalStore, RowPage, SqliteStore, StoreError};
use turnscope_core::journal::submission_rows::SubmissionRow;

fn err(what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |e| StoreError::sqlite(what, e)
}

impl SqliteStore {
    /// `filter` as SQL under this database's terminal column names.
    pub(super) fn filter_sql(&self, filter: RowFilter) -> FilterSql {
        let [_, event, _] = self.schema().variant.terminal_columns();
        filter.sql(Dialect::Sqlite, event)
    }
}

fn with_now<T>(sql: &FilterSql, now_ms: i64, f: impl FnOnce(&[&dyn rusqlite::ToSql]) -> T) -> T {
    if sql.takes_now {
        f(&[&now_ms])
    } else {
        f(&[])
    }
}

impl SqliteStore {
    /// `submissions_where(filter, now_ms, None)`, the rows of `page`, each handed to `visit` as
    /// it is read; the last one's sequence.
    pub(crate) fn visit_where(
        &self,
        filter: RowFilter,
        now_ms: i64,
        page: RowPage,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<Option<i64>, StoreError> {
        let sql = self.filter_sql(filter);
        debug_assert!(!sql.refine_in_rust);
        let mut last = None;
        with_now(&sql, now_ms, |p| {
            self.visit_submissions(&sql.where_after(page.after), p, page.rows, &mut |r| {
                last = Some(r.sequence);
                visit(r);
            })
        })?;
        Ok(last)
    }
}

impl ListQueries for SqliteStore {
    fn submissions_where(
        &self,
        filter: RowFilter,
        now_ms: i64,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        let sql = self.filter_sql(filter);
        // SQLite's JSON functions decide every filter in SQL.
        debug_assert!(!sql.refine_in_rust);
        let inner = sql.where_clause();
        let where_sql = match newest {
            None => inner,
            Some(n) => format!(
                "WHERE sequence IN (SELECT sequence FROM flue_agent_submissions {inner} ORDER BY sequence DESC LIMIT {n})"
            ),
        };
        with_now(&sql, now_ms, |p| self.query_submissions(&where_sql, p))
    }

    fn count_where(&self, filter: RowFilter, now_ms: i64) -> Result<usize, StoreError> {
        let sql = self.filter_sql(filter);
        let text = format!(
            "SELECT COUNT(*) FROM flue_agent_submissions {}",
            sql.where_clause()
        );
        let n: i64 = self
            .connection()
            .prepare_cached(&text)
            .and_then(|mut s| with_now(&sql, now_ms, |p| s.query_row(p, |r| r.get(0))))
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
                let phase = text_of(r.get_ref(0).map_err(err("reading turn journals"))?);
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
