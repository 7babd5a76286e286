//! Sessions on PostgreSQL, built from small primitives (`session_data`, `entry_by_id`,
//! `entries_in_order`) so a backend-neutral lazy loader can use them directly; plus the TUI's
//! browsing queries and the audit trail.

use std::collections::HashMap;
use turnscope_core::journal::images::{ChunkCell, ChunkRow};
use turnscope_core::journal::submission_rows::ImageChunk;

use postgres::fallible_iterator::FallibleIterator;
use postgres::GenericClient;

use super::{cell_int, cell_opt_text, cell_text, pg_error, PgStore};
use crate::session_rows::parse_session_data;
use crate::session_rows::session_data_facts;
use crate::RowFilter;
use crate::{
    AuditLog, AuditRecord, JournalStore, SessionBrowse, SessionRecord, SessionScope,
    SessionSummary, StoreError,
};
use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::{failure_in_terminal_event, instance_id_of};

/// `flue_sessions.data` of `key`, or `None` when there is no such row.
pub fn session_data<C: GenericClient>(c: &mut C, key: &str) -> Result<Option<String>, StoreError> {
    Ok(
        c.query_opt("SELECT data FROM flue_sessions WHERE id = $1", &[&key])
            .map_err(|e| pg_error("reading the session", &e))?
            .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default()),
    )
}

/// `(position, data)` of one entry (primary-key lookup).
pub fn entry_by_id<C: GenericClient>(
    c: &mut C,
    session: &str,
    entry_id: &str,
) -> Result<Option<(i64, String)>, StoreError> {
    Ok(c
        .query_opt(
            "SELECT position::bigint, data FROM flue_session_entries WHERE session_id = $1 AND entry_id = $2",
            &[&session, &entry_id],
        )
        .map_err(|e| pg_error("reading a session entry", &e))?
        .map(|r| {
            (
                r.get::<_, Option<i64>>(0).unwrap_or(-1),
                r.get::<_, Option<String>>(1).unwrap_or_default(),
            )
        }))
}

/// The session's image chunk rows whole (`SessionRows::stored_image_chunks`), every column in
/// its one type.
pub fn stored_image_chunks<C: GenericClient>(
    c: &mut C,
    session: &str,
) -> Result<Vec<ImageChunk>, StoreError> {
    stored_chunks(c, "session_entry", session)
}

/// A submission's own image chunk rows whole (`SessionRows::stored_submission_chunks`).
pub fn stored_submission_chunks<C: GenericClient>(
    c: &mut C,
    submission: &str,
) -> Result<Vec<ImageChunk>, StoreError> {
    stored_chunks(c, "submission", submission)
}

fn stored_chunks<C: GenericClient>(
    c: &mut C,
    owner_kind: &str,
    owner_id: &str,
) -> Result<Vec<ImageChunk>, StoreError> {
    use turnscope_core::journal::submission_rows::StoredValue;
    Ok(c.query(
        "SELECT owner_kind, owner_id, owner_part, image_id, chunk_index::bigint,
                    chunk_count::bigint, data
             FROM flue_image_chunks WHERE owner_kind = $1 AND owner_id = $2
             ORDER BY owner_part, image_id, chunk_index",
        &[&owner_kind, &owner_id],
    )
    .map_err(|e| pg_error("reading image chunk rows", &e))?
    .iter()
    .map(|r| ImageChunk {
        owner_kind: r.get(0),
        owner_id: r.get(1),
        owner_part: r.get(2),
        image_id: StoredValue::Text(r.get::<_, String>(3).into_bytes()),
        chunk_index: StoredValue::Integer(r.get(4)),
        chunk_count: StoredValue::Integer(r.get(5)),
        data: StoredValue::Text(r.get::<_, String>(6).into_bytes()),
    })
    .collect())
}

/// Whether the database has `flue_image_chunks` (a query of a missing table would abort the
/// read snapshot's transaction).
pub(super) fn has_image_chunks<C: GenericClient>(c: &mut C) -> Result<bool, StoreError> {
    c.query_one("SELECT to_regclass('flue_image_chunks') IS NOT NULL", &[])
        .map(|r| r.get(0))
        .map_err(|e| pg_error("looking for the image chunk table", &e))
}

/// The session's image chunk rows with their entry ids (`SessionRows::image_chunks`). The
/// columns are typed (`image_id` text, the two counts integer, `data` text NOT NULL): every row
/// has the types the runtime's row check wants.
pub fn image_chunks<C: GenericClient>(
    c: &mut C,
    session: &str,
) -> Result<Vec<(String, ChunkRow)>, StoreError> {
    Ok(c.query(
        "SELECT owner_part, image_id, chunk_index::float8, chunk_count::float8
             FROM flue_image_chunks WHERE owner_kind = 'session_entry' AND owner_id = $1
             ORDER BY owner_part, image_id, chunk_index",
        &[&session],
    )
    .map_err(|e| pg_error("reading image chunk rows", &e))?
    .iter()
    .map(|r| {
        (
            r.get::<_, String>(0),
            ChunkRow {
                image_id: ChunkCell::Text(r.get(1)),
                index: ChunkCell::Number(r.get(2)),
                count: ChunkCell::Number(r.get(3)),
                data_is_text: true,
                data_units: 0,
            },
        )
    })
    .collect())
}

/// The own image chunk rows (a direct prompt's images, which the runtime's row parser reads with
/// its row) of the submissions `FROM flue_agent_submissions {selection}` selects (with `params`),
/// by owner; none (one probe) in most journals. The data is read only where its image's bytes are
/// over the payload check's limit, to count its UTF-16 units. Read in the caller's snapshot when
/// it has one (a bundle's, a listing's); outside one, a direct prompt admitted between this read
/// and the rows' is read without its rows: queued, so no write of turnscope's takes it.
pub(super) fn submission_image_chunks<C: GenericClient>(
    c: &mut C,
    selection: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<std::collections::HashMap<String, Vec<ChunkRow>>, StoreError> {
    let mut out: std::collections::HashMap<String, Vec<ChunkRow>> = Default::default();
    let err = |e: postgres::Error| pg_error("reading a submission's image chunk rows", &e);
    if !has_image_chunks(c)?
        || !c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM flue_image_chunks WHERE owner_kind = 'submission')",
                &[],
            )
            .map_err(err)?
            .get::<_, bool>(0)
    {
        return Ok(out);
    }
    let limit = turnscope_core::journal::images::MAX_IMAGE_DATA_UNITS;
    let rows = c
        .query(
            &format!(
                "SELECT owner_id, image_id, chunk_index::float8, chunk_count::float8,
                        octet_length(data)::int8,
                        CASE WHEN sum(octet_length(data)) OVER (PARTITION BY owner_id, image_id)
                                  > {limit} THEN data END
                   FROM flue_image_chunks
                  WHERE owner_kind = 'submission' AND owner_part = ''
                    AND owner_id IN (SELECT submission_id FROM flue_agent_submissions {selection})
                  ORDER BY owner_id, image_id, chunk_index"
            ),
            params,
        )
        .map_err(err)?;
    for r in &rows {
        let data_units = match r.get::<_, Option<String>>(5) {
            Some(data) => data.encode_utf16().count() as u64,
            // Within the limit: the byte length, never less than the UTF-16 units.
            None => r.get::<_, i64>(4).max(0) as u64,
        };
        out.entry(r.get(0)).or_default().push(ChunkRow {
            image_id: ChunkCell::Text(r.get(1)),
            index: ChunkCell::Number(r.get(2)),
            count: ChunkCell::Number(r.get(3)),
            data_is_text: true,
            data_units,
        });
    }
    Ok(out)
}

/// `(entry_id, position, data)` of the entries `ids`, in one query (found ones only, in no
/// particular order).
pub fn entries_by_ids<C: GenericClient>(
    c: &mut C,
    session: &str,
    ids: &[&str],
    mut each: impl FnMut(&str, i64, &str),
) -> Result<(), StoreError> {
    let rows = c
        .query(
            "SELECT entry_id, position::bigint, data FROM flue_session_entries
             WHERE session_id = $1 AND entry_id = ANY($2)",
            &[&session, &ids],
        )
        .map_err(|e| pg_error("reading session entries", &e))?;
    for r in &rows {
        each(
            r.get::<_, Option<&str>>(0).unwrap_or_default(),
            r.get::<_, Option<i64>>(1).unwrap_or(-1),
            r.get::<_, Option<&str>>(2).unwrap_or_default(),
        );
    }
    Ok(())
}

/// Stream `(entry_id, position, data)` of every entry in position order (served by
/// `flue_session_entries_session_position_idx`), without holding them all at once; the slices
/// borrow the row being read.
pub fn entries_in_order<C: GenericClient>(
    c: &mut C,
    session: &str,
    each: impl FnMut(&str, i64, &str),
) -> Result<(), StoreError> {
    entries_in_range(c, session, None, None, each)
}

/// `entries_in_order` for the entries with `lo <= position < hi` (a missing bound does not
/// bound): one half of a session read in two at once.
pub fn entries_in_range<C: GenericClient>(
    c: &mut C,
    session: &str,
    lo: Option<i64>,
    hi: Option<i64>,
    mut each: impl FnMut(&str, i64, &str),
) -> Result<(), StoreError> {
    let err = |e: postgres::Error| pg_error("reading session entries", &e);
    // In chunks by position: the client buffers a result set as fast as the server sends it,
    // so one query for a whale session held all its rows (285 MB) at once. Each chunk is a range
    // of the (session_id, position) index; the rows of its last position are read on their own
    // so that a chunk never ends between two rows of one position.
    let emit = |rows: &[postgres::Row], each: &mut dyn FnMut(&str, i64, &str)| {
        for r in rows {
            each(
                r.get::<_, Option<&str>>(0).unwrap_or_default(),
                r.get::<_, Option<i64>>(1).unwrap_or(-1),
                r.get::<_, Option<&str>>(2).unwrap_or_default(),
            );
        }
    };
    // Each bound is in the text only when there is one (the first chunk reads from `lo`, the
    // next ones from after the last position read), so the index serves every form.
    let query = |c: &mut C, from: Option<(&str, i64)>| {
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&session, &PG_CHUNK_ROWS];
        let mut bounds = String::new();
        if let Some((op, pos)) = &from {
            params.push(pos);
            bounds.push_str(&format!(" AND position {op} ${}::bigint", params.len()));
        }
        if let Some(hi) = &hi {
            params.push(hi);
            bounds.push_str(&format!(" AND position < ${}::bigint", params.len()));
        }
        c.query(
            &format!(
                "SELECT entry_id, position::bigint, data FROM flue_session_entries
                 WHERE session_id = $1{bounds}
                 ORDER BY flue_session_entries.position LIMIT $2::bigint"
            ),
            &params,
        )
    };
    let mut after: Option<i64> = None;
    loop {
        let from = match after {
            None => lo.map(|lo| (">=", lo)),
            Some(pos) => Some((">", pos)),
        };
        let rows = query(c, from).map_err(err)?;
        if (rows.len() as i64) < PG_CHUNK_ROWS {
            emit(&rows, &mut each);
            return Ok(());
        }
        let last: i64 = rows[rows.len() - 1].get::<_, Option<i64>>(1).unwrap_or(-1);
        let keep = rows
            .iter()
            .position(|r| r.get::<_, Option<i64>>(1).unwrap_or(-1) == last)
            .unwrap_or(rows.len());
        emit(&rows[..keep], &mut each);
        let ties = c
            .query(
                "SELECT entry_id, position::bigint, data FROM flue_session_entries
                 WHERE session_id = $1 AND position = $2::bigint ORDER BY entry_id",
                &[&session, &last],
            )
            .map_err(err)?;
        emit(&ties, &mut each);
        after = Some(last);
    }
}

/// Rows per chunk of a whole-session read on PostgreSQL (a few megabytes of entry JSON).
const PG_CHUNK_ROWS: i64 = 2048;

/// Up to `limit` entries below position `below`, in descending position order.
pub fn entries_before<C: GenericClient>(
    c: &mut C,
    session: &str,
    below: i64,
    limit: usize,
    mut each: impl FnMut(&str, i64, &str),
) -> Result<(), StoreError> {
    let err = |e: postgres::Error| pg_error("reading session entries", &e);
    let limit = limit as i64;
    let mut rows = c
        .query_raw(
            "SELECT entry_id, position::bigint, data FROM flue_session_entries
             WHERE session_id = $1 AND position < $2::bigint ORDER BY flue_session_entries.position DESC LIMIT $3::bigint",
            [&session as &(dyn postgres::types::ToSql + Sync), &below, &limit],
        )
        .map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        each(
            r.get::<_, Option<&str>>(0).unwrap_or_default(),
            r.get::<_, Option<i64>>(1).unwrap_or(-1),
            r.get::<_, Option<&str>>(2).unwrap_or_default(),
        );
    }
    Ok(())
}

/// One session and its entries, as the SQLite backend builds it (PostgreSQL text is always valid
/// UTF-8, so there are no replacement-character problems to report).
pub fn session_record<C: GenericClient>(
    c: &mut C,
    key: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    session_record_parsed(c, key, Entry::parse)
}

/// `session_record`, each entry read by `parse` (the write path keeps messages compact).
pub fn session_record_parsed<C: GenericClient>(
    c: &mut C,
    key: &str,
    parse: fn(i64, &str, &str) -> Entry,
) -> Result<Option<SessionRecord>, StoreError> {
    let Some(data) = session_data(c, key)? else {
        return Ok(None);
    };
    let mut entries = Vec::new();
    entries_in_order(c, key, |id, pos, data| entries.push(parse(pos, id, data)))?;
    let (leaf_id, mut data_problems) = parse_session_data(&data);
    let chunks = if has_image_chunks(c)? {
        image_chunks(c, key)?
    } else {
        Vec::new()
    };
    let images = crate::image_chunks::SessionImages::check(chunks, |owner| {
        Ok(
            entry_by_id(c, key, owner)?.map(|(position, data)| crate::EntryRow {
                position,
                data: data.into_bytes(),
                blob: false,
            }),
        )
    })?;
    data_problems.extend(images.problems(&entries));
    Ok(Some(SessionRecord {
        id: key.to_string(),
        data,
        leaf_id,
        data_problems,
        // PostgreSQL text is always valid UTF-8.
        not_utf8: Vec::new(),
        entries: entries.into(),
        scope: SessionScope::Full,
    }))
}

/// Count one of a session's settled submissions as failed (the failed filter's name, as SQLite's
/// count names it), keeping the statuses in name order.
fn move_to_failed(counts: &mut Vec<(String, i64)>) {
    let settled = SubmissionStatus::Settled.as_str();
    let failed: &str = RowFilter::Failed.into();
    if let Some(i) = counts.iter().position(|(s, _)| s == settled) {
        counts[i].1 -= 1;
        if counts[i].1 <= 0 {
            counts.remove(i);
        }
    }
    match counts.iter_mut().find(|(s, _)| s == failed) {
        Some((_, n)) => *n += 1,
        None => {
            counts.push((failed.to_string(), 1));
            counts.sort_by(|a, b| a.0.cmp(&b.0));
        }
    }
}

impl SessionBrowse for PgStore {
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let c = &mut *self.conn()?;
        let mut by_session: HashMap<String, Vec<(String, i64)>> = HashMap::new();
        let counts = c
            .query(
                "SELECT k, st, n FROM (
                   SELECT session_key AS k,
                          CASE WHEN status = 'settled' AND error IS NOT NULL THEN 'failed' ELSE status END AS st,
                          COUNT(*) AS n
                   FROM flue_agent_submissions GROUP BY 1, 2) t
                 ORDER BY k COLLATE \"C\", st COLLATE \"C\"",
                &[],
            )
            .map_err(|e| pg_error("counting submissions per session", &e))?;
        for r in &counts {
            by_session
                .entry(cell_text(r, 0))
                .or_default()
                .push((cell_text(r, 1), cell_int(r, 2).unwrap_or(0)));
        }
        // A direct prompt fails by its terminal event (its `error` stays NULL): PostgreSQL cannot
        // test the text for JSON, so Rust decides it, as for the failed filter.
        let [_, event, _] = self.schema().variant.terminal_columns();
        let direct = c
            .query(
                &format!(
                    "SELECT session_key, {event} FROM flue_agent_submissions
                     WHERE status = 'settled' AND error IS NULL AND {event} IS NOT NULL"
                ),
                &[],
            )
            .map_err(|e| pg_error("counting failed direct submissions", &e))?;
        for r in &direct {
            let failed = cell_opt_text(r, 1)
                .as_deref()
                .and_then(failure_in_terminal_event)
                .is_some();
            if failed {
                move_to_failed(by_session.entry(cell_text(r, 0)).or_default());
            }
        }
        let rows = c
            .query(
                "SELECT s.id, s.data,
                        (SELECT COUNT(*) FROM flue_session_entries e WHERE e.session_id = s.id)
                 FROM flue_sessions s ORDER BY s.id COLLATE \"C\"",
                &[],
            )
            .map_err(|e| pg_error("listing sessions", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let id = cell_text(r, 0);
                let data = cell_text(r, 1);
                let count = cell_int(r, 2).unwrap_or(0);
                let (leaf_id, data_problems, created_at, updated_at) = session_data_facts(&data);
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

    fn load_session(&self, key: &str) -> Result<Option<SessionRecord>, StoreError> {
        let c = &mut *self.conn()?;
        let mut tx = c
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| pg_error("starting a read snapshot", &e))?;
        let record = session_record(&mut tx, key)?;
        tx.commit()
            .map_err(|e| pg_error("ending the read snapshot", &e))?;
        Ok(record)
    }

    fn journal_phases(&self) -> Result<HashMap<String, (String, i64)>, StoreError> {
        if !self.has_table("flue_agent_turn_journals") {
            return Ok(HashMap::new());
        }
        Ok(self
            .conn()?
            .query(
                "SELECT submission_id, phase, revision::bigint FROM flue_agent_turn_journals",
                &[],
            )
            .map_err(|e| pg_error("reading turn journals", &e))?
            .iter()
            .map(|r| {
                (
                    cell_text(r, 0),
                    (cell_text(r, 1), cell_int(r, 2).unwrap_or(0)),
                )
            })
            .collect())
    }

    fn bundle_fingerprint(
        &self,
        submission_id: &str,
        session_key: &str,
    ) -> Result<String, StoreError> {
        let journals = self.has_table("flue_agent_turn_journals");
        let journal = if journals {
            "(SELECT phase || ':' || revision || ':' || updated_at || ':' || committed
               FROM flue_agent_turn_journals WHERE submission_id = $2)"
        } else {
            "NULL::text"
        };
        let chunks = if journals && self.has_table("flue_agent_stream_chunks") {
            "(SELECT COUNT(*) FROM flue_agent_stream_chunks WHERE stream_key =
               (SELECT stream_key FROM flue_agent_turn_journals WHERE submission_id = $2))"
        } else {
            "0::bigint"
        };
        let r = self
            .conn()?
            .query_one(
                &format!(
                    "SELECT (SELECT data FROM flue_sessions WHERE id = $1),
                            (SELECT COUNT(*) FROM flue_session_entries WHERE session_id = $1),
                            {journal}, {chunks}, $2::text"
                ),
                &[&session_key, &submission_id],
            )
            .map_err(|e| pg_error("checking for changes", &e))?;
        Ok(format!(
            "{}\u{1}{}\u{1}{}\u{1}{}",
            r.get::<_, Option<String>>(0).unwrap_or_default(),
            cell_int(&r, 1).unwrap_or(0),
            r.get::<_, Option<String>>(2).unwrap_or_default(),
            cell_int(&r, 3).unwrap_or(0)
        ))
    }
}

impl AuditLog for PgStore {
    fn audit_query(&self, query: &crate::AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        let c = &mut *self.conn()?;
        let err = |e: postgres::Error| pg_error("reading the audit trail", &e);
        let exists: bool = c
            .query_one("SELECT to_regclass('turnscope_audit') IS NOT NULL", &[])
            .map_err(err)?
            .get(0);
        if !exists {
            return Ok(Vec::new());
        }
        let has_batch: bool = c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_name = 'turnscope_audit' AND table_schema = current_schema()
                   AND column_name = 'batch_id')",
                &[],
            )
            .map_err(err)?
            .get(0);
        let (cond, params) = query.condition(true, has_batch);
        let values: Vec<Box<dyn postgres::types::ToSql + Sync>> = params
            .into_iter()
            .map(|p| -> Box<dyn postgres::types::ToSql + Sync> {
                match p {
                    crate::AuditParam::Text(t) => Box::new(t),
                    crate::AuditParam::Int(n) => Box::new(n),
                }
            })
            .collect();
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            values.iter().map(|v| v.as_ref()).collect();
        super::undo::read_audit(c, &cond, &refs, query.limit).map_err(err)
    }
}
