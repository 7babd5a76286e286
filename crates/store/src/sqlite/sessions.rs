//! Read queries for browsing sessions (the TUI's sessions view) and cheap change detection for
//! live refresh. Read-only, like the rest of the store.

use std::collections::HashMap;

use crate::parse::{opt_text, text_of};

use crate::{RowFilter, SessionRecord, SessionSummary, SqliteStore, StoreError};
use turnscope_core::journal::submission_rows::instance_id_of;

impl SqliteStore {
    /// Every session with its entry count, timestamps and its submissions by status.
    pub fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let conn = self.connection();
        let mut by_session: HashMap<String, Vec<(String, i64)>> = HashMap::new();
        {
            // "failed" is the failed filter's condition (SQLite decides it exactly in SQL).
            let failed = self
                .filter_sql(RowFilter::Failed)
                .condition
                .expect("the failed filter has a condition");
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT session_key,
                            CASE WHEN {failed} THEN 'failed' ELSE status END,
                            COUNT(*)
                     FROM flue_agent_submissions GROUP BY 1, 2 ORDER BY 1, 2"
                ))
                .map_err(|e| StoreError::sqlite("counting submissions per session", e))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        text_of(r.get_ref(0)?),
                        text_of(r.get_ref(1)?),
                        r.get::<_, i64>(2)?,
                    ))
                })
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(|e| StoreError::sqlite("counting submissions per session", e))?;
            for (key, status, n) in rows {
                by_session.entry(key).or_default().push((status, n));
            }
        }
        let mut stmt = conn
            .prepare_cached(
                "SELECT s.id, s.data,
                        (SELECT COUNT(*) FROM flue_session_entries e WHERE e.session_id = s.id)
                 FROM flue_sessions s ORDER BY s.id",
            )
            .map_err(|e| StoreError::sqlite("listing sessions", e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    text_of(r.get_ref(0)?),
                    super::session_data_of(r.get_ref(1)?),
                    r.get::<_, i64>(2)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite("listing sessions", e))?;
        Ok(rows
            .into_iter()
            .map(|(id, data, count)| {
                let (leaf_id, data_problems, created_at, updated_at) = data.facts();
                SessionSummary {
                    instance_id: instance_id_of(&id),
                    submissions_by_status: by_session.remove(&id).unwrap_or_default(),
                    id,
                    entry_count: count.max(0) as usize,
                    created_at,
                    updated_at,
                    leaf_id,
                    data_problems,
                }
            })
            .collect())
    }

    /// One session and its entries in position order (`None` when there is no such row). The
    /// same read as `load_bundle`'s, so both mark the same damage.
    pub fn load_session(&self, key: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.session(key)
    }

    /// `submission_id → (phase, revision)` of every turn journal.
    pub fn journal_phases(&self) -> Result<HashMap<String, (String, i64)>, StoreError> {
        if !self.has_table("flue_agent_turn_journals") {
            return Ok(HashMap::new());
        }
        let mut stmt = self
            .connection()
            .prepare_cached("SELECT submission_id, phase, revision FROM flue_agent_turn_journals")
            .map_err(|e| StoreError::sqlite("reading turn journals", e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    text_of(r.get_ref(0)?),
                    text_of(r.get_ref(1)?),
                    r.get::<_, Option<i64>>(2).unwrap_or(None).unwrap_or(0),
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| StoreError::sqlite("reading turn journals", e))?;
        Ok(rows.into_iter().map(|(id, p, r)| (id, (p, r))).collect())
    }

    /// A cheap fingerprint of everything `load_bundle` reads besides the submission row: the
    /// session's data (its `updatedAt` changes on every save), its entry count, the journal's
    /// phase/revision/update time and the stream chunk count. Equal fingerprints mean a cached
    /// bundle is still current.
    pub fn bundle_fingerprint(
        &self,
        submission_id: &str,
        session_key: &str,
    ) -> Result<String, StoreError> {
        let journal = if self.has_table("flue_agent_turn_journals") {
            "(SELECT phase || ':' || revision || ':' || updated_at || ':' || committed
               FROM flue_agent_turn_journals WHERE submission_id = ?2)"
        } else {
            "NULL"
        };
        let chunks = if self.has_table("flue_agent_turn_journals")
            && self.has_table("flue_agent_stream_chunks")
        {
            "(SELECT COUNT(*) FROM flue_agent_stream_chunks WHERE stream_key =
               (SELECT stream_key FROM flue_agent_turn_journals WHERE submission_id = ?2))"
        } else {
            "0"
        };
        self.connection()
            .prepare_cached(&format!(
                "SELECT (SELECT data FROM flue_sessions WHERE id = ?1),
                        (SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1),
                        {journal}, {chunks}, ?2"
            ))
            .and_then(|mut s| {
                s.query_row([session_key, submission_id], |r| {
                    Ok(format!(
                        "{}\u{1}{}\u{1}{}\u{1}{}",
                        opt_text(r.get_ref(0)?).unwrap_or_default(),
                        text_of(r.get_ref(1)?),
                        opt_text(r.get_ref(2)?).unwrap_or_default(),
                        text_of(r.get_ref(3)?)
                    ))
                })
            })
            .map_err(|e| StoreError::sqlite("checking for changes", e))
    }
}
