//! `SessionRows` on PostgreSQL: the backend-neutral loaders (`walk.rs` for the list scan,
//! `compact_load.rs` for `show`, the TUI and lazy entry bodies) read sessions through these
//! primitives, inside a bundle's read snapshot (`TxRows`) or on the store's connection.

use std::cell::RefCell;

use postgres::GenericClient;

use super::peer::{read_part, split_point, PeerPart};
use super::sessions::{
    entries_before, entries_by_ids, entries_in_order, entry_by_id, image_chunks, session_data,
    stored_image_chunks, stored_submission_chunks,
};
use super::{pg_error, PgStore};
use crate::session_rows::SPLIT_FROM;
use crate::{
    EntryRow, EntryVisitor, PartRange, PartRows, SessionData, SessionRows, Split, StoreError,
};
use turnscope_core::journal::images::ChunkRow;
use turnscope_core::journal::submission_rows::ImageChunk;

/// Row access through a bundle's read-only transaction, with the store's second connection to
/// read the later half of a whale session at once (`peer.rs`).
pub(super) struct TxRows<'a, C: GenericClient> {
    pub tx: RefCell<&'a mut C>,
    pub peer: PeerPart<'a>,
    /// The database has `flue_image_chunks` (a query of a missing table would abort the
    /// snapshot's transaction).
    pub image_chunks: bool,
}

/// The first half of a split: read in the bundle's transaction, on this thread.
impl<C: GenericClient> PartRows for TxRows<'_, C> {
    fn for_each_entry_in(
        &self,
        session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        read_part(&mut **self.tx.borrow_mut(), session, range, f)
    }
}

fn rows_session_data<C: GenericClient>(
    c: &mut C,
    key: &str,
) -> Result<Option<SessionData>, StoreError> {
    // PostgreSQL text is always valid UTF-8 and never a BLOB.
    Ok(session_data(c, key)?.map(|text| SessionData {
        text,
        lossy: false,
        blob: false,
    }))
}

fn rows_entry_by_id<C: GenericClient>(
    c: &mut C,
    session: &str,
    entry_id: &str,
) -> Result<Option<EntryRow>, StoreError> {
    Ok(
        entry_by_id(c, session, entry_id)?.map(|(position, data)| EntryRow {
            position,
            data: data.into_bytes(),
            // PostgreSQL's `text` holds no BLOB.
            blob: false,
        }),
    )
}

fn rows_by_ids<C: GenericClient>(
    c: &mut C,
    session: &str,
    ids: &[&str],
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    entries_by_ids(c, session, ids, |id, pos, data| {
        f(id.as_bytes(), pos, data.as_bytes(), false)
    })
}

fn rows_for_each<C: GenericClient>(
    c: &mut C,
    session: &str,
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    entries_in_order(c, session, |id, pos, data| {
        f(id.as_bytes(), pos, data.as_bytes(), false)
    })
}

fn rows_entry_count<C: GenericClient>(
    c: &mut C,
    session: &str,
) -> Result<Option<usize>, StoreError> {
    let n: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = $1",
            &[&session],
        )
        .map_err(|e| pg_error("counting session entries", &e))?
        .get(0);
    Ok(usize::try_from(n).ok())
}

impl<C: GenericClient> SessionRows for TxRows<'_, C> {
    fn session_data(&self, key: &str) -> Result<Option<SessionData>, StoreError> {
        rows_session_data(&mut **self.tx.borrow_mut(), key)
    }

    fn image_chunks(&self, session: &str) -> Result<Vec<(String, ChunkRow)>, StoreError> {
        if !self.image_chunks {
            return Ok(Vec::new());
        }
        image_chunks(&mut **self.tx.borrow_mut(), session)
    }

    fn stored_image_chunks(&self, session: &str) -> Result<Vec<ImageChunk>, StoreError> {
        if !self.image_chunks {
            return Ok(Vec::new());
        }
        stored_image_chunks(&mut **self.tx.borrow_mut(), session)
    }

    fn stored_submission_chunks(&self, submission: &str) -> Result<Vec<ImageChunk>, StoreError> {
        if !self.image_chunks {
            return Ok(Vec::new());
        }
        stored_submission_chunks(&mut **self.tx.borrow_mut(), submission)
    }

    fn entry_by_id(&self, session: &str, entry_id: &str) -> Result<Option<EntryRow>, StoreError> {
        rows_entry_by_id(&mut **self.tx.borrow_mut(), session, entry_id)
    }

    fn entries_by_ids(
        &self,
        session: &str,
        ids: &[&str],
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        rows_by_ids(&mut **self.tx.borrow_mut(), session, ids, f)
    }

    fn for_each_entry(&self, session: &str, f: &mut EntryVisitor<'_>) -> Result<(), StoreError> {
        rows_for_each(&mut **self.tx.borrow_mut(), session, f)
    }

    fn entry_count(&self, session: &str) -> Result<Option<usize>, StoreError> {
        rows_entry_count(&mut **self.tx.borrow_mut(), session)
    }

    fn entries_before(
        &self,
        session: &str,
        below: i64,
        limit: usize,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        entries_before(
            &mut **self.tx.borrow_mut(),
            session,
            below,
            limit,
            |id, pos, data| f(id.as_bytes(), pos, data.as_bytes(), false),
        )
    }

    fn split(&self, session: &str, len: usize) -> Result<Option<Split<'_>>, StoreError> {
        if len < SPLIT_FROM || !self.peer.ready() {
            return Ok(None);
        }
        let Some((at, first_len, snapshot)) =
            split_point(&mut **self.tx.borrow_mut(), session, len)?
        else {
            return Ok(None);
        };
        self.peer.set_snapshot(snapshot);
        Ok(Some(Split {
            at,
            first_len,
            len,
            first: self,
            later: &self.peer,
        }))
    }
}

/// Outside a bundle (the TUI fetching one entry's stored text): the store's own connection.
impl SessionRows for PgStore {
    fn session_data(&self, key: &str) -> Result<Option<SessionData>, StoreError> {
        rows_session_data(&mut *self.conn()?, key)
    }

    fn image_chunks(&self, session: &str) -> Result<Vec<(String, ChunkRow)>, StoreError> {
        if !self.has_table("flue_image_chunks") {
            return Ok(Vec::new());
        }
        image_chunks(&mut *self.conn()?, session)
    }

    fn stored_image_chunks(&self, session: &str) -> Result<Vec<ImageChunk>, StoreError> {
        if !self.has_table("flue_image_chunks") {
            return Ok(Vec::new());
        }
        stored_image_chunks(&mut *self.conn()?, session)
    }

    fn stored_submission_chunks(&self, submission: &str) -> Result<Vec<ImageChunk>, StoreError> {
        if !self.has_table("flue_image_chunks") {
            return Ok(Vec::new());
        }
        stored_submission_chunks(&mut *self.conn()?, submission)
    }

    fn entry_by_id(&self, session: &str, entry_id: &str) -> Result<Option<EntryRow>, StoreError> {
        rows_entry_by_id(&mut *self.conn()?, session, entry_id)
    }

    fn entries_by_ids(
        &self,
        session: &str,
        ids: &[&str],
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        rows_by_ids(&mut *self.conn()?, session, ids, f)
    }

    fn for_each_entry(&self, session: &str, f: &mut EntryVisitor<'_>) -> Result<(), StoreError> {
        rows_for_each(&mut *self.conn()?, session, f)
    }

    fn for_each_entry_while(
        &self,
        session: &str,
        f: &mut crate::EntryWhile<'_>,
    ) -> Result<bool, StoreError> {
        self.entries_while(session, f)
    }

    fn entries_before(
        &self,
        session: &str,
        below: i64,
        limit: usize,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        entries_before(
            &mut *self.conn()?,
            session,
            below,
            limit,
            |id, pos, data| f(id.as_bytes(), pos, data.as_bytes(), false),
        )
    }
}
