//! `IdRows` on PostgreSQL, and the early-stopping entry read a search across sessions uses.

use super::{pg_error, PgStore};
use crate::find::IdRows;
use crate::session_rows::EntryWhile;
use crate::StoreError;

/// Rows per chunk of a search's read of one session (a few megabytes of entry JSON).
const CHUNK_ROWS: i64 = 2048;

impl PgStore {
    /// `(id, session key)` of each row `sql` (two text columns) selects.
    fn id_pairs(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let rows = self
            .conn()?
            .query(sql, params)
            .map_err(|e| pg_error("finding sessions by id", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get::<_, Option<String>>(0).unwrap_or_default(),
                    r.get::<_, Option<String>>(1).unwrap_or_default(),
                )
            })
            .collect())
    }

    /// `for_each_entry_while`: the session's rows in (position, entry id) order, in chunks, no
    /// further chunk read once `f` says stop.
    pub(super) fn entries_while(
        &self,
        session: &str,
        f: &mut EntryWhile<'_>,
    ) -> Result<bool, StoreError> {
        let err = |e: postgres::Error| pg_error("reading session entries", &e);
        let mut after: Option<(i64, String)> = None;
        loop {
            let rows = {
                let mut c = self.conn()?;
                match &after {
                    None => c.query(
                        "SELECT entry_id, position::bigint, data FROM flue_session_entries
                         WHERE session_id = $1 ORDER BY position, entry_id LIMIT $2::bigint",
                        &[&session, &CHUNK_ROWS],
                    ),
                    Some((pos, id)) => c.query(
                        "SELECT entry_id, position::bigint, data FROM flue_session_entries
                         WHERE session_id = $1
                           AND (position > $3::bigint OR (position = $3::bigint AND entry_id > $4))
                         ORDER BY position, entry_id LIMIT $2::bigint",
                        &[&session, &CHUNK_ROWS, pos, id],
                    ),
                }
                .map_err(err)?
            };
            for r in &rows {
                let id = r.get::<_, Option<&str>>(0).unwrap_or_default();
                let pos = r.get::<_, Option<i64>>(1).unwrap_or(-1);
                let data = r.get::<_, Option<&str>>(2).unwrap_or_default();
                if !f(id.as_bytes(), pos, data.as_bytes(), false) {
                    return Ok(false);
                }
            }
            if (rows.len() as i64) < CHUNK_ROWS {
                return Ok(true);
            }
            let last = &rows[rows.len() - 1];
            after = Some((
                last.get::<_, Option<i64>>(1).unwrap_or(-1),
                last.get::<_, Option<String>>(0).unwrap_or_default(),
            ));
        }
    }
}

impl IdRows for PgStore {
    fn each_session(&self, f: &mut dyn FnMut(&str, &str)) -> Result<(), StoreError> {
        let rows = self
            .conn()?
            .query("SELECT id, data FROM flue_sessions ORDER BY id", &[])
            .map_err(|e| pg_error("reading sessions", &e))?;
        for r in &rows {
            f(
                r.get::<_, Option<&str>>(0).unwrap_or_default(),
                r.get::<_, Option<&str>>(1).unwrap_or_default(),
            );
        }
        Ok(())
    }

    fn submissions_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        // starts_with: `%` and `_` in ids stay literal, whatever the collation.
        self.id_pairs(
            "SELECT submission_id, session_key FROM flue_agent_submissions
             WHERE starts_with(submission_id, $1)",
            &[&prefix],
        )
    }

    fn attempts_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut out = self.id_pairs(
            "SELECT attempt_id, session_key FROM flue_agent_submissions
             WHERE starts_with(attempt_id, $1)",
            &[&prefix],
        )?;
        if self.has_table("flue_agent_turn_journals") {
            out.extend(self.id_pairs(
                "SELECT attempt_id, session_key FROM flue_agent_turn_journals
                 WHERE starts_with(attempt_id, $1)",
                &[&prefix],
            )?);
        }
        Ok(out)
    }

    fn turns_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        if !self.has_table("flue_agent_turn_journals") {
            return Ok(Vec::new());
        }
        self.id_pairs(
            "SELECT turn_id, session_key FROM flue_agent_turn_journals
             WHERE starts_with(turn_id, $1)
             UNION ALL
             SELECT operation_id, session_key FROM flue_agent_turn_journals
             WHERE starts_with(operation_id, $1)",
            &[&prefix],
        )
    }

    fn entries_named(&self, id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = self
            .conn()?
            .query(
                "SELECT session_id, position::bigint FROM flue_session_entries WHERE entry_id = $1",
                &[&id],
            )
            .map_err(|e| pg_error("finding an entry by id", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get::<_, Option<String>>(0).unwrap_or_default(),
                    r.get::<_, Option<i64>>(1).unwrap_or(-1),
                )
            })
            .collect())
    }

    fn session_keys(&self, after: Option<&str>) -> Result<Vec<String>, StoreError> {
        let rows = self
            .conn()?
            .query(
                "SELECT id FROM flue_sessions WHERE $1::text IS NULL OR id > $1 ORDER BY id",
                &[&after],
            )
            .map_err(|e| pg_error("reading session keys", &e))?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
            .collect())
    }

    fn totals(&self) -> Result<(usize, usize), StoreError> {
        let r = self
            .conn()?
            .query_one(
                "SELECT (SELECT COUNT(*) FROM flue_sessions), (SELECT COUNT(*) FROM flue_session_entries)",
                &[],
            )
            .map_err(|e| pg_error("counting sessions and entries", &e))?;
        Ok((
            r.get::<_, i64>(0).max(0) as usize,
            r.get::<_, i64>(1).max(0) as usize,
        ))
    }
}
