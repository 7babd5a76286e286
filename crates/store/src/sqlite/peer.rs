//! A second read connection that reads the later half of a big session on another thread while
//! the store's own connection reads the first half, both from the same snapshot.
//!
//! Why two connections: one SQLite connection is one cursor on one thread, and stepping through a
//! whale session's 234 MB of rows is a third of its whole read; split in two, each half is read
//! and parsed in place on its own core, with no copy of the rows to parse threads.
//!
//! Why the same snapshot: a live runtime may commit between the two connections' reads. The
//! peer's `PRAGMA data_version` changes whenever another connection commits; it is noted just
//! before the store's read transaction begins and read again inside the peer's own read
//! transaction. Equal, nothing was committed between the two, so both read the same database;
//! different, the session is read on one connection as before. (SQLite's snapshot interface
//! would say the same, but it refuses a WAL file with no frame in it, which is how the runtime
//! leaves an idle journal.)

use std::cell::Cell;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Statement};

use crate::parse::text_of;
pub(super) use crate::session_rows::SPLIT_FROM;
use crate::session_rows::{EntryVisitor, PartRange, PartRows};
use crate::StoreError;

/// The peer connection of a store, opened when the store's first read transaction begins.
#[derive(Default)]
pub(super) struct Peer {
    /// `None` until opened, and when it could not be opened (the store then reads alone).
    conn: Mutex<Option<Connection>>,
    opened: Cell<bool>,
    /// The peer's `data_version` just before the store's current read transaction began.
    version_before: Cell<Option<i64>>,
}

pub(super) fn data_version(conn: &Connection) -> Option<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0)).ok()
}

/// End `conn`'s read transaction, if it is in one.
fn end_read(conn: &Connection) {
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("COMMIT");
    }
}

impl Peer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called just before the store begins a read transaction: ends any read the peer was left in
    /// and notes its `data_version`.
    pub(super) fn before_begin(&self, path: &Path, flags: OpenFlags) {
        if !self.opened.replace(true) {
            *self.lock() = Connection::open_with_flags(path, flags)
                .ok()
                .filter(|c| c.busy_timeout(Duration::from_millis(1500)).is_ok());
        }
        let guard = self.lock();
        let Some(conn) = guard.as_ref() else {
            return;
        };
        end_read(conn);
        self.version_before.set(data_version(conn));
    }

    /// Called when the store's read transaction ended: the peer's read of its snapshot ends too
    /// (a reader left open would hold back the runtime's checkpoints), and nothing proves the
    /// next one shares the store's.
    pub(super) fn after_end(&self) {
        self.version_before.set(None);
        if let Some(conn) = self.lock().as_ref() {
            end_read(conn);
        }
    }

    /// Nothing was committed from just before the store's read transaction began until now: a
    /// connection whose read began before this call reads the store's snapshot. The peer's
    /// read is ended first, so its `data_version` is the latest commit's.
    pub(super) fn unchanged_since_begin(&self) -> bool {
        let Some(before) = self.version_before.get() else {
            return false;
        };
        let guard = self.lock();
        let Some(conn) = guard.as_ref() else {
            return false;
        };
        end_read(conn);
        data_version(conn) == Some(before)
    }

    /// The peer inside a read transaction on the store's snapshot, or `None` when nothing proves
    /// it is the same (no version noted, a commit since, an error).
    pub(super) fn join_snapshot(&self) -> Option<&(dyn PartRows + Sync)> {
        // Kept for the rest of the store's transaction: a second split in it is proved the same
        // way (nothing committed from before the store's read began to the peer's).
        let before = self.version_before.get()?;
        let guard = self.lock();
        let conn = guard.as_ref()?;
        end_read(conn);
        if conn.execute_batch("BEGIN").is_err() {
            return None;
        }
        // Read inside the transaction: the pragma begins the peer's read, on the latest commit.
        if data_version(conn) != Some(before) {
            end_read(conn);
            return None;
        }
        Some(&self.conn)
    }
}

/// The store's own half: read in the store's transaction.
impl PartRows for Connection {
    fn for_each_entry_in(
        &self,
        session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        entries_in(self, session, range, f)
    }
}

/// The peer's half: its read ends its transaction, so the next one is joined (and proved) afresh.
impl PartRows for Mutex<Option<Connection>> {
    fn for_each_entry_in(
        &self,
        session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        let guard = self.lock().unwrap_or_else(|e| e.into_inner());
        let conn = guard.as_ref().ok_or_else(|| StoreError::Sqlite {
            context: "reading session entries".into(),
            detail: "the second connection is closed".into(),
        })?;
        let read = entries_in(conn, session, range, f);
        end_read(conn);
        read
    }
}

/// The entries of `session` in `range`: one range of the `(session_id, position)` index. Each
/// bound present is a condition of its own statement (a condition on a possibly-NULL parameter
/// would keep the index from bounding the range, and the scan would run on to the session's
/// end); a row whose position is not a number is in no bounded range.
pub(super) fn entries_in(
    conn: &Connection,
    session: &str,
    range: PartRange,
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    let mut sql = String::from(
        "SELECT entry_id, position, data FROM flue_session_entries WHERE session_id = ?1",
    );
    let mut params: Vec<&dyn rusqlite::ToSql> = vec![&session];
    for (bound, op) in [(&range.lo, ">="), (&range.hi, "<")] {
        if let Some(b) = bound {
            params.push(b);
            sql.push_str(&format!(" AND position {op} ?{}", params.len()));
        }
    }
    sql.push_str(if range.descending {
        " ORDER BY position DESC"
    } else {
        " ORDER BY position"
    });
    query_entries(conn, &sql, params.as_slice(), f)
}

/// `visit_entries` on the cached statement `sql`.
pub(super) fn query_entries(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(|e| StoreError::sqlite("reading session entries", e))?;
    visit_entries(&mut stmt, params, f)
}

/// Run `stmt` (selecting `entry_id, position, data`) and call `f(entry_id, position, data)` for
/// each row: text and blob columns as stored, the data slice borrowing SQLite's buffer, one
/// buffer for every row's id; a position that is not an integer is -1.
fn visit_entries(
    stmt: &mut Statement<'_>,
    params: impl rusqlite::Params,
    f: &mut EntryVisitor<'_>,
) -> Result<(), StoreError> {
    let err = |e| StoreError::sqlite("reading session entries", e);
    let mut rows = stmt.query(params).map_err(err)?;
    let mut id = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let pos = r.get::<_, Option<i64>>(1).unwrap_or(None).unwrap_or(-1);
        let id_blob = read_id(&mut id, r.get_ref(0).map_err(err)?);
        match r.get_ref(2).map_err(err)? {
            ValueRef::Text(t) => f(&id, pos, t, id_blob),
            ValueRef::Blob(t) => f(&id, pos, t, true),
            other => f(&id, pos, text_of(other).as_bytes(), id_blob),
        }
    }
    Ok(())
}

/// Put an `entry_id` column's bytes into `id` (cleared first); true when it is stored as a BLOB.
/// Only a BLOB can be something other than text there: the column's `TEXT` affinity stores a
/// number as text.
pub(super) fn read_id(id: &mut Vec<u8>, v: ValueRef<'_>) -> bool {
    id.clear();
    match v {
        ValueRef::Text(t) => id.extend_from_slice(t),
        ValueRef::Blob(t) => {
            id.extend_from_slice(t);
            return true;
        }
        other => id.extend_from_slice(text_of(other).as_bytes()),
    }
    false
}
