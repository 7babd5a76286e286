//! `IdRows` on SQLite, and the early-stopping entry read a search across sessions uses.

use rusqlite::types::ValueRef;

use crate::find::IdRows;
use crate::parse::text_of;
use crate::session_rows::EntryWhile;
use crate::{SqliteStore, StoreError};

fn err(what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |e| StoreError::sqlite(what, e)
}

impl SqliteStore {
    /// `(id, session key)` of each row `sql` (two columns, one parameter) selects for `param`.
    fn id_pairs(
        &self,
        sql: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let e = err("finding sessions by id");
        let mut stmt = self.connection().prepare_cached(sql).map_err(&e)?;
        let rows = stmt
            .query_map(params, |r| {
                Ok((text_of(r.get_ref(0)?), text_of(r.get_ref(1)?)))
            })
            .map_err(&e)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(e)
    }

    /// `for_each_entry_while`: the session's rows in position order, the statement dropped as
    /// soon as `f` says stop.
    pub(super) fn entries_while(
        &self,
        session: &str,
        f: &mut EntryWhile<'_>,
    ) -> Result<bool, StoreError> {
        let e = err("reading session entries");
        let mut stmt = self
            .connection()
            .prepare_cached(
                "SELECT entry_id, position, data FROM flue_session_entries
                 WHERE session_id = ?1 ORDER BY position",
            )
            .map_err(&e)?;
        let mut rows = stmt.query([session]).map_err(&e)?;
        let mut id = Vec::new();
        while let Some(r) = rows.next().map_err(&e)? {
            let pos = r.get::<_, Option<i64>>(1).unwrap_or(None).unwrap_or(-1);
            let id_blob = super::peer::read_id(&mut id, r.get_ref(0).map_err(&e)?);
            let go = match r.get_ref(2).map_err(&e)? {
                ValueRef::Text(t) => f(&id, pos, t, id_blob),
                ValueRef::Blob(t) => f(&id, pos, t, true),
                other => f(&id, pos, text_of(other).as_bytes(), id_blob),
            };
            if !go {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `prefix` and the first string after every string starting with it: a range of the index,
/// where `%` and `_` stay literal.
fn upper(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

impl IdRows for SqliteStore {
    fn each_session(&self, f: &mut dyn FnMut(&str, &str)) -> Result<(), StoreError> {
        let e = err("reading sessions");
        let mut stmt = self
            .connection()
            .prepare_cached("SELECT id, data FROM flue_sessions ORDER BY id")
            .map_err(&e)?;
        let mut rows = stmt.query([]).map_err(&e)?;
        while let Some(r) = rows.next().map_err(&e)? {
            f(
                &text_of(r.get_ref(0).map_err(&e)?),
                &text_of(r.get_ref(1).map_err(&e)?),
            );
        }
        Ok(())
    }

    fn submissions_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.id_pairs(
            "SELECT submission_id, session_key FROM flue_agent_submissions
             WHERE submission_id >= ?1 AND submission_id < ?2",
            &[&prefix, &upper(prefix)],
        )
    }

    fn attempts_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        let up = upper(prefix);
        let mut out = self.id_pairs(
            "SELECT attempt_id, session_key FROM flue_agent_submissions
             WHERE attempt_id >= ?1 AND attempt_id < ?2",
            &[&prefix, &up],
        )?;
        if self.has_table("flue_agent_turn_journals") {
            out.extend(self.id_pairs(
                "SELECT attempt_id, session_key FROM flue_agent_turn_journals
                 WHERE attempt_id >= ?1 AND attempt_id < ?2",
                &[&prefix, &up],
            )?);
        }
        Ok(out)
    }

    fn turns_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError> {
        if !self.has_table("flue_agent_turn_journals") {
            return Ok(Vec::new());
        }
        let up = upper(prefix);
        self.id_pairs(
            "SELECT turn_id, session_key FROM flue_agent_turn_journals
             WHERE turn_id >= ?1 AND turn_id < ?2
             UNION ALL
             SELECT operation_id, session_key FROM flue_agent_turn_journals
             WHERE operation_id >= ?1 AND operation_id < ?2",
            &[&prefix, &up],
        )
    }

    fn entries_named(&self, id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let e = err("finding an entry by id");
        let mut stmt = self
            .connection()
            .prepare_cached(
                "SELECT session_id, position FROM flue_session_entries WHERE entry_id = ?1",
            )
            .map_err(&e)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    text_of(r.get_ref(0)?),
                    r.get::<_, Option<i64>>(1).unwrap_or(None).unwrap_or(-1),
                ))
            })
            .map_err(&e)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(e)
    }

    fn session_keys(&self, after: Option<&str>) -> Result<Vec<String>, StoreError> {
        let e = err("reading session keys");
        let mut stmt = self
            .connection()
            .prepare_cached("SELECT id FROM flue_sessions WHERE ?1 IS NULL OR id > ?1 ORDER BY id")
            .map_err(&e)?;
        let rows = stmt
            .query_map([after], |r| Ok(text_of(r.get_ref(0)?)))
            .map_err(&e)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(e)
    }

    fn totals(&self) -> Result<(usize, usize), StoreError> {
        let n: (i64, i64) = self
            .connection()
            .prepare_cached(
                "SELECT (SELECT COUNT(*) FROM flue_sessions), (SELECT COUNT(*) FROM flue_session_entries)",
            )
            .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))))
            .map_err(err("counting sessions and entries"))?;
        Ok((n.0.max(0) as usize, n.1.max(0) as usize))
    }
}
