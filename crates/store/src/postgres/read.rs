//! `JournalStore` for PostgreSQL: server-side filters on the runtime's indexes, and bundles read
//! in one `REPEATABLE READ READ ONLY` transaction.

use postgres::types::ToSql;
use std::cell::RefCell;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{GenericClient, Transaction};
use rusqlite::types::ValueRef;

use super::connect::begin_snapshot;
use super::peer::PeerPart;
use super::session_rows::TxRows;
use super::sessions::session_record_parsed;
use super::{cell_int, cell_text, pg_error, sqlite_values, PgStore};
use crate::parse::{journal_from_values, journal_problem, submission_from_values, JOURNAL_COLUMNS};
use crate::prefix::{find_by_prefix, Lookup};
use crate::{
    JournalStore, ListQueries, RowFilter, RowPage, SchemaInfo, SessionLoader, SessionRecord,
    SessionRows, StoreError, SubmissionBundle,
};
use turnscope_core::journal::records::{
    event_stream_path, terminal_event_key, EventStore, EventStream,
};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::{JournalRow, SubmissionRow};

type Params<'a> = [&'a (dyn ToSql + Sync)];

pub(super) fn query_submissions<C: GenericClient>(
    c: &mut C,
    columns: &str,
    where_sql: &str,
    params: &Params<'_>,
) -> Result<Vec<SubmissionRow>, StoreError> {
    let mut out = Vec::new();
    visit_submissions(c, columns, where_sql, params, None, &mut |r| out.push(r))?;
    Ok(out)
}

/// `query_submissions`, each row handed to `visit` as it is read (a portal, not every row at
/// once).
pub(super) fn visit_submissions<C: GenericClient>(
    c: &mut C,
    columns: &str,
    where_sql: &str,
    params: &Params<'_>,
    limit: Option<usize>,
    visit: &mut dyn FnMut(SubmissionRow),
) -> Result<(), StoreError> {
    let err = |e: postgres::Error| pg_error("reading submissions", &e);
    let limit = limit.map_or(String::new(), |n| format!(" LIMIT {n}"));
    let selection = format!("{where_sql} ORDER BY sequence{limit}");
    let sql = format!("SELECT {columns} FROM flue_agent_submissions {selection}");
    // Read first, for the same rows: the portal below holds the connection until its last row.
    let mut images = super::sessions::submission_image_chunks(c, &selection, params)?;
    let mut rows = c.query_raw(&sql, params.iter().copied()).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let values = sqlite_values(&r);
        let refs: Vec<ValueRef<'_>> = values.iter().map(ValueRef::from).collect();
        let mut row = submission_from_values(&refs);
        row.image_chunks = images.remove(&row.submission_id).unwrap_or_default();
        visit(row);
    }
    Ok(())
}

pub(super) fn journal<C: GenericClient>(
    c: &mut C,
    has_table: bool,
    submission_id: &str,
) -> Result<(Option<JournalRow>, Option<String>), StoreError> {
    if !has_table {
        return Ok((
            None,
            Some("the database has no flue_agent_turn_journals table".into()),
        ));
    }
    let row = c
        .query_opt(
            &format!(
                "SELECT {JOURNAL_COLUMNS} FROM flue_agent_turn_journals WHERE submission_id = $1"
            ),
            &[&submission_id],
        )
        .map_err(|e| pg_error("reading the turn journal", &e))?;
    Ok(match row {
        None => (None, None),
        Some(r) => {
            let values = sqlite_values(&r);
            let refs: Vec<ValueRef<'_>> = values.iter().map(ValueRef::from).collect();
            let j = journal_from_values(&refs);
            let problem = journal_problem(&j);
            (Some(j), problem)
        }
    })
}

fn stream_chunks<C: GenericClient>(
    c: &mut C,
    has_table: bool,
    stream_key: &str,
) -> Result<Vec<String>, StoreError> {
    if !has_table {
        return Ok(Vec::new());
    }
    Ok(c.query(
        "SELECT body FROM flue_agent_stream_chunks WHERE stream_key = $1 ORDER BY segment_index",
        &[&stream_key],
    )
    .map_err(|e| pg_error("reading stream chunks", &e))?
    .iter()
    .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
    .collect())
}

/// The event stream `row`'s terminal event goes to, as it is now (direct prompts only). The
/// `@flue/postgres` schema keys events by `flue_event_stream_entries.event_key`.
fn event_stream<C: GenericClient>(
    c: &mut C,
    has_tables: bool,
    row: &SubmissionRow,
) -> Result<Option<EventStream>, StoreError> {
    let Some(path) = event_stream_path(row) else {
        return Ok(None);
    };
    if !has_tables {
        return Ok(Some(EventStream {
            path,
            store: EventStore::Absent,
            head: None,
            keyed: None,
        }));
    }
    let err = |e: postgres::Error| pg_error("reading the event stream", &e);
    let head = c
        .query_opt(
            "SELECT next_offset, closed FROM flue_event_streams WHERE path = $1",
            &[&path],
        )
        .map_err(err)?
        .map(|r| (r.get::<_, i64>(0), r.get::<_, bool>(1)));
    let key = terminal_event_key(&row.submission_id);
    let keyed = c
        .query_opt(
            "SELECT seq, data FROM flue_event_stream_entries WHERE path = $1 AND event_key = $2",
            &[&path, &key],
        )
        .map_err(err)?
        .map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1)));
    Ok(Some(EventStream {
        path,
        store: EventStore::Postgres,
        head,
        keyed,
    }))
}

impl JournalStore for PgStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn location(&self) -> String {
        self.target.display()
    }

    fn list_submissions(
        &self,
        filter: RowFilter,
        now_ms: i64,
    ) -> Result<Vec<SubmissionRow>, StoreError> {
        self.submissions_where(filter, now_ms, None)
    }

    fn for_each_submission(
        &self,
        filter: RowFilter,
        now_ms: i64,
        page: RowPage,
        visit: &mut dyn FnMut(SubmissionRow),
    ) -> Result<Option<i64>, StoreError> {
        self.visit_where(filter, now_ms, page, visit)
    }

    fn status_counts(&self) -> Result<Vec<(SubmissionStatus, i64)>, StoreError> {
        Ok(self
            .conn()?
            .query(
                "SELECT status, COUNT(*) FROM flue_agent_submissions
                 GROUP BY status ORDER BY status COLLATE \"C\"",
                &[],
            )
            .map_err(|e| pg_error("counting submissions", &e))?
            .iter()
            .map(|r| {
                (
                    SubmissionStatus::parse(&cell_text(r, 0)),
                    cell_int(r, 1).unwrap_or(0),
                )
            })
            .collect())
    }

    fn find_submission(&self, query: &str) -> Result<SubmissionRow, StoreError> {
        if query.is_empty() {
            // Without a connection: an empty query is never a submission.
            return find_by_prefix(query, &mut |_| Ok(Vec::new()));
        }
        let c = &mut *self.conn()?;
        let cols = &self.submission_columns;
        find_by_prefix(query, &mut |lookup| match lookup {
            Lookup::Exact => query_submissions(c, cols, "WHERE submission_id = $1", &[&query]),
            // starts_with: `%` and `_` in ids stay literal, whatever the collation.
            Lookup::Prefix => {
                query_submissions(c, cols, "WHERE starts_with(submission_id, $1)", &[&query])
            }
        })
    }

    fn load_bundle(&self, submission_id: &str) -> Result<SubmissionBundle, StoreError> {
        // The write path's read: compact messages beside their stored text.
        self.bundle_in_snapshot(submission_id, &mut |tx, row| {
            session_record_parsed(
                tx,
                &row.session_key,
                turnscope_core::journal::compact::parse_keeping_raw,
            )
        })
    }

    fn load_bundle_with(
        &self,
        submission_id: &str,
        loader: &mut dyn SessionLoader,
    ) -> Result<SubmissionBundle, StoreError> {
        self.bundle_in_snapshot(submission_id, &mut |tx, row| {
            let rows = TxRows {
                tx: RefCell::new(tx),
                peer: PeerPart::new(self),
                image_chunks: self.has_table("flue_image_chunks"),
            };
            loader.load(&rows, &row.session_key, &row.kind, &row.submission_id)
        })
    }

    fn session_rows(&self) -> Option<&dyn SessionRows> {
        Some(self)
    }

    /// A second connection (see `PgStore::twin`); `None` when the server refuses it, and the
    /// listing is read on one.
    fn snapshot_twin(&self) -> Option<Box<dyn JournalStore + Send>> {
        self.twin()
            .ok()
            .map(|t| Box::new(t) as Box<dyn JournalStore + Send>)
    }
}

type SessionRead<'a> = dyn FnMut(&mut Transaction<'_>, &SubmissionRow) -> Result<Option<SessionRecord>, StoreError>
    + 'a;

impl PgStore {
    /// The row, journal, session (read by `session`) and chunks from one `REPEATABLE READ READ
    /// ONLY` transaction.
    fn bundle_in_snapshot(
        &self,
        submission_id: &str,
        session: &mut SessionRead<'_>,
    ) -> Result<SubmissionBundle, StoreError> {
        let c = &mut *self.conn()?;
        let mut tx = begin_snapshot(c, "starting a read snapshot")?;
        let row = query_submissions(
            &mut tx,
            &self.submission_columns,
            "WHERE submission_id = $1",
            &[&submission_id],
        )?
        .into_iter()
        .next()
        .ok_or_else(|| StoreError::SubmissionNotFound {
            query: submission_id.to_string(),
        })?;
        let (journal, journal_problem) = journal(
            &mut tx,
            self.has_table("flue_agent_turn_journals"),
            submission_id,
        )?;
        let session = session(&mut tx, &row)?;
        let stream_chunks = match journal.as_ref().and_then(|j| j.stream_key.as_deref()) {
            Some(key) => stream_chunks(&mut tx, self.has_table("flue_agent_stream_chunks"), key)?,
            None => Vec::new(),
        };
        let event_stream = event_stream(
            &mut tx,
            self.has_table("flue_event_streams") && self.has_table("flue_event_stream_entries"),
            &row,
        )?;
        tx.commit()
            .map_err(|e| pg_error("ending the read snapshot", &e))?;
        Ok(SubmissionBundle {
            row,
            journal,
            journal_problem,
            session,
            stream_chunks,
            event_stream,
        })
    }
}
