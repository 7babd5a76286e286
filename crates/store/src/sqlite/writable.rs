//! Whether an SQLite journal can be written, found when the writer opens (before any preview):
//! the file, the side files SQLite writes beside it (`-wal`, `-shm`, `-journal`), the directory it
//! creates them in, and the file system.
//!
//! Asked with access(2), never by opening: closing any descriptor of the database would drop the
//! POSIX locks SQLite holds on it in this process.

use std::path::Path;

use rusqlite::Connection;

use crate::error::NotWritable;
use crate::StoreError;

fn not_writable(path: &Path, why: NotWritable, detail: impl Into<String>) -> StoreError {
    StoreError::NotWritable {
        target: path.display().to_string(),
        why,
        detail: detail.into(),
    }
}

/// `Err(errno text, is EROFS)` when this user may not write `p`.
#[cfg(unix)]
fn may_write(p: &Path) -> Result<(), (String, bool)> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err((e.to_string(), e.raw_os_error() == Some(libc::EROFS)))
}

#[cfg(not(unix))]
fn may_write(p: &Path) -> Result<(), (String, bool)> {
    match std::fs::metadata(p) {
        Ok(m) if m.permissions().readonly() => Err(("read-only".into(), false)),
        _ => Ok(()),
    }
}

fn check_one(db: &Path, p: &Path, why: NotWritable) -> Result<(), StoreError> {
    may_write(p).map_err(|(e, rofs)| {
        let why = if rofs { NotWritable::ReadOnlyFs } else { why };
        not_writable(db, why, format!("{}: {e}", p.display()))
    })
}

/// Check that `path` (opened as `conn`) can be written: the file, SQLite did not fall back to
/// read-only, each side file that exists, and the directory where one must be created.
pub(super) fn check(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    check_one(path, path, NotWritable::File)?;
    if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
        return Err(not_writable(
            path,
            NotWritable::File,
            "SQLite opened it read-only",
        ));
    }
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite("reading the journal mode", e))?;
    let side_files: &[&str] = if mode.eq_ignore_ascii_case("wal") {
        &["-wal", "-shm"]
    } else {
        &["-journal"]
    };
    let mut missing = false;
    for suffix in side_files {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let side = Path::new(&side);
        if side.exists() {
            // A runtime running beside us keeps its -wal and -shm; we must write them too.
            check_one(path, side, NotWritable::File)?;
        } else {
            missing = true;
        }
    }
    if missing {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        check_one(path, &dir, NotWritable::Directory)?;
    }
    Ok(())
}

/// `Err(why)` when this user may not create files in `dir` (where SQLite makes a database's -shm).
pub(crate) fn may_write_dir(dir: &Path) -> Result<(), String> {
    may_write(dir).map_err(|(why, _)| format!("{}: {why}", dir.display()))
}

/// `Err(why)` when this user may not read `p` (asked with access(2), never by opening it).
#[cfg(unix)]
pub(crate) fn may_read(p: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::R_OK) } == 0 {
        return Ok(());
    }
    Err(format!(
        "{}: {}",
        p.display(),
        std::io::Error::last_os_error()
    ))
}

#[cfg(not(unix))]
pub(crate) fn may_read(_p: &Path) -> Result<(), String> {
    Ok(())
}
