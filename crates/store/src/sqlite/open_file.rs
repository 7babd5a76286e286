//! Opening a database file read-only: the file's own checks (missing, a directory, empty,
//! unreadable, not SQLite, a WAL without its files), SQLite's `immutable` mode where safe, and the
//! one-line cause when SQLite refuses it. Never a descriptor of the database closed (see
//! `header_says_wal`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::StoreError;

pub(super) const READ_FLAGS: OpenFlags = OpenFlags::SQLITE_OPEN_READ_ONLY
    .union(OpenFlags::SQLITE_OPEN_NO_MUTEX)
    .union(OpenFlags::SQLITE_OPEN_URI);

pub(super) fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// `path` with `suffix` appended to its file name (`-wal`, `-shm`).
pub(super) fn sibling(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    s.into()
}

/// Whether the SQLite header says WAL mode: bytes 18 and 19 (file format write and read
/// versions) are 2.
///
/// The descriptor is never closed (`forget`): closing any descriptor of the database drops every
/// POSIX lock this process holds on it, SQLite's included (see `export_db::looks_like_json`).
pub(super) fn header_says_wal(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    let read = std::fs::File::open(path).and_then(|mut f| {
        let r = f.read_exact(&mut head);
        std::mem::forget(f);
        r
    });
    read.is_ok() && head.starts_with(b"SQLite format 3\0") && head[18] == 2 && head[19] == 2
}

/// The `*.db` files in `dir` (sorted, the first five), for the hint of a directory given as
/// `--db`.
pub(super) fn db_files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".db") || n.ends_with(".sqlite") || n.ends_with(".sqlite3"))
        .collect();
    names.sort();
    names.truncate(5);
    names
}

/// A read-only connection to `path` (with SQLite's `immutable` flag when asked) and its tables.
pub(super) fn open_read(
    path: &Path,
    immutable: bool,
) -> Result<(Connection, Vec<String>), rusqlite::Error> {
    let conn = if immutable {
        Connection::open_with_flags(file_uri(path, "immutable=1"), READ_FLAGS)?
    } else {
        Connection::open_with_flags(path, READ_FLAGS)?
    };
    // The runtime's own busy timeout is 0; ours only affects our reads.
    conn.busy_timeout(std::time::Duration::from_millis(1500))?;
    let tables = table_names(&conn)?;
    Ok((conn, tables))
}

/// `file:` URI of `path` with `query`, its bytes percent-encoded where a URI needs it.
pub(super) fn file_uri(path: &Path, query: &str) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push('?');
    uri.push_str(query);
    uri
}

pub(super) fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(code, _)
        if matches!(code.code, rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen))
}

pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// What the file starts with, when that is not SQLite's header (`None` for an SQLite file, or one
/// too short or unreadable to tell). Asked only once SQLite has refused the file: the descriptor
/// is never closed (`forget`), because closing any descriptor of a file drops every POSIX lock
/// this process holds on it, SQLite's included.
pub(super) fn other_kind(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok();
    std::mem::forget(f);
    let n = n?;
    if n < head.len() || head == *b"SQLite format 3\0" {
        return None;
    }
    let text: String = String::from_utf8_lossy(&head[..n])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Some(format!("{:?}", text.trim_end()))
}

pub(super) fn classify_open_error(path: &Path, e: rusqlite::Error) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(
                code.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            ) =>
        {
            match other_kind(path) {
                Some(start) => StoreError::OtherKind {
                    path: path.to_path_buf(),
                    start,
                },
                None => StoreError::NotSqlite {
                    path: path.to_path_buf(),
                    detail: e.to_string(),
                },
            }
        }
        rusqlite::Error::SqliteFailure(code, _)
            if code.code == rusqlite::ErrorCode::ReadOnly && hot_journal(path).exists() =>
        {
            StoreError::HotJournal {
                path: path.to_path_buf(),
            }
        }
        _ => StoreError::sqlite("opening the database", e),
    }
}

pub(super) fn hot_journal(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-journal");
    PathBuf::from(p)
}

/// `path` opened read-only after the file's own checks (missing, a directory, empty,
/// unreadable, not SQLite, a WAL without its files), with its table names and whether it had to
/// be opened `immutable`.
pub(super) fn open_connection(path: &Path) -> Result<(Connection, Vec<String>, bool), StoreError> {
    let meta = std::fs::metadata(path).map_err(|_| StoreError::Missing(path.to_path_buf()))?;
    if meta.is_dir() {
        return Err(StoreError::IsDirectory {
            path: path.to_path_buf(),
            db_files: db_files_in(path),
        });
    }
    if meta.len() == 0 {
        // An empty main file with a -shm beside it: a WAL database whose -wal was left out.
        if sibling(path, "-shm").exists() && !sibling(path, "-wal").exists() {
            return Err(StoreError::MissingWal(path.to_path_buf()));
        }
        return Err(StoreError::Empty(path.to_path_buf()));
    }
    for p in [
        path.to_path_buf(),
        sibling(path, "-wal"),
        sibling(path, "-shm"),
    ] {
        if p.exists() {
            crate::sqlite::writable::may_read(&p).map_err(|detail| StoreError::NotReadable {
                path: path.to_path_buf(),
                detail,
            })?;
        }
    }
    // Looked at before opening, which creates an empty -wal beside a WAL database (so a
    // second look finds an empty one where the first found none).
    let wal_absent = std::fs::metadata(sibling(path, "-wal")).map_or(true, |m| m.len() == 0);
    let mut immutable = false;
    let (conn, tables) = match open_read(path, false) {
        Ok(opened) => opened,
        // A WAL database without its -shm, in a directory this user cannot write: SQLite
        // cannot make the -shm a reader needs (the runtime is down, or it would be there).
        Err(e) if is_read_only(&e) && !sibling(path, "-shm").exists() => {
            let dir = parent_dir(path);
            let Err(detail) = crate::sqlite::writable::may_write_dir(&dir) else {
                return Err(classify_open_error(path, e));
            };
            if !wal_absent {
                return Err(StoreError::WalNeedsShm {
                    path: path.to_path_buf(),
                    detail,
                });
            }
            // Everything is in the main file and nobody writes it: SQLite's `immutable`
            // flag reads it without the -shm and without locks.
            immutable = true;
            open_read(path, true).map_err(|e| classify_open_error(path, e))?
        }
        Err(e) => return Err(classify_open_error(path, e)),
    };
    if tables.is_empty() {
        if wal_absent && header_says_wal(path) {
            return Err(StoreError::MissingWal(path.to_path_buf()));
        }
        return Err(StoreError::Empty(path.to_path_buf()));
    }
    Ok((conn, tables, immutable))
}
