//! A whale session read in two halves at once on PostgreSQL, as on SQLite (`sqlite_peer.rs`):
//! the bundle's transaction reads the first half on this thread while a second connection
//! reads the later half on another, in the same snapshot.
//!
//! Why: a whole-session read is a chunked request and answer on one connection, so the server
//! (reading and decompressing 260 MB of entry text) and this process (parsing it) took turns.
//! Two connections keep two server processes and two parsers busy on two cores.
//!
//! The snapshot is shared the way PostgreSQL provides: the bundle's `REPEATABLE READ`
//! transaction exports its snapshot (`pg_export_snapshot()`), and the peer's transaction
//! imports it (`SET TRANSACTION SNAPSHOT`) as its first statement; PostgreSQL refuses the import
//! unless the exporting transaction is still open, and the peer then sees exactly its data.

use std::sync::{Mutex, MutexGuard};

use postgres::{Client, GenericClient};

use super::connect::begin_snapshot;
use super::sessions::entries_in_range;
use super::{connect, pg_error, PgStore, PgTarget};
use crate::{EntryVisitor, PartRange, PartRows, StoreError};

/// The later half's reader: the store's peer connection and the snapshot to import.
pub(super) struct PeerPart<'a> {
    target: &'a PgTarget,
    /// The store's second connection (kept between bundles).
    client: &'a Mutex<Option<Client>>,
    /// Exported by the bundle's transaction for the current split.
    snapshot: Mutex<String>,
}

impl<'a> PeerPart<'a> {
    pub(super) fn new(store: &'a PgStore) -> PeerPart<'a> {
        PeerPart {
            target: &store.target,
            client: &store.peer,
            snapshot: Mutex::new(String::new()),
        }
    }

    /// Make the next read import `snapshot` (exported by the transaction reading the first
    /// half, which stays open while this half is read).
    pub(super) fn set_snapshot(&self, snapshot: String) {
        *lock(&self.snapshot) = snapshot;
    }

    /// Whether the peer connection is open, opening it (again) when there is none or the
    /// server closed it. A server that refuses a second connection (its `max_connections`, a
    /// pooler's limit) leaves the session to be read on one.
    pub(super) fn ready(&self) -> bool {
        self.client().is_ok()
    }

    /// The peer connection, opened (again) when there is none or the server closed it.
    fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, StoreError> {
        let mut peer = lock(self.client);
        if peer.as_ref().is_none_or(Client::is_closed) {
            *peer = Some(connect(self.target, true)?);
        }
        Ok(peer)
    }
}

impl PartRows for PeerPart<'_> {
    fn for_each_entry_in(
        &self,
        session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        let snapshot = lock(&self.snapshot).clone();
        let mut peer = self.client()?;
        let client = peer.as_mut().expect("opened above");
        let mut tx = begin_snapshot(client, "starting the second connection's read")?;
        // The import must be the transaction's first statement; the identifier is PostgreSQL's
        // own (hex digits and dashes), quoted all the same.
        tx.batch_execute(&format!(
            "SET TRANSACTION SNAPSHOT '{}'",
            snapshot.replace('\'', "''")
        ))
        .map_err(|e| pg_error("sharing the read snapshot with a second connection", &e))?;
        read_part(&mut tx, session, range, f)?;
        tx.commit()
            .map_err(|e| pg_error("ending the second connection's read", &e))
    }
}

/// Read the entries of `range` through `c` (ascending: the halves of a whole-session read).
pub(super) fn read_part<C: GenericClient>(
    c: &mut C,
    session: &str,
    range: PartRange,
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    if range.descending {
        // Only `split` hands out parts on PostgreSQL, and it reads in position order.
        return Err(StoreError::Postgres {
            context: "reading session entries".into(),
            detail: "a descending part read is not offered on PostgreSQL".into(),
        });
    }
    entries_in_range(c, session, range.lo, range.hi, |id, pos, data| {
        f(id.as_bytes(), pos, data.as_bytes(), false)
    })
}

/// The position at which `session`'s `len` entries split into two halves, the first half's
/// length, and the snapshot `c`'s transaction exported for the later half's connection.
pub(super) fn split_point<C: GenericClient>(
    c: &mut C,
    session: &str,
    len: usize,
) -> Result<Option<(i64, usize, String)>, StoreError> {
    let err = |e: postgres::Error| pg_error("splitting a session's entries", &e);
    let at: Option<i64> = c
        .query_opt(
            "SELECT position::bigint FROM flue_session_entries WHERE session_id = $1
             ORDER BY position OFFSET $2::bigint LIMIT 1",
            &[&session, &((len / 2) as i64)],
        )
        .map_err(err)?
        .and_then(|r| r.get::<_, Option<i64>>(0));
    let Some(at) = at else { return Ok(None) };
    // An error would abort the bundle's transaction: export only where PostgreSQL allows it (a
    // standby exports from version 10 on).
    let exports: bool = c
        .query_one(
            "SELECT current_setting('server_version_num')::int >= 100000 OR NOT pg_is_in_recovery()",
            &[],
        )
        .map_err(err)?
        .get(0);
    if !exports {
        return Ok(None);
    }
    let first_len: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = $1 AND position < $2::bigint",
            &[&session, &at],
        )
        .map_err(err)?
        .get(0);
    let snapshot: String = c
        .query_one("SELECT pg_export_snapshot()", &[])
        .map_err(|e| pg_error("exporting the read snapshot", &e))?
        .get(0);
    Ok(usize::try_from(first_len).ok().map(|n| (at, n, snapshot)))
}

/// A poisoned lock only means another read panicked; the value is still whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
