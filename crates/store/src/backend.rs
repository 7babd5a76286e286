//! Choosing the backend: an SQLite file for a path, PostgreSQL for a `postgres://` or
//! `postgresql://` URL (from `--db` or `TURNSCOPE_DB`).

use std::path::{Path, PathBuf};

use super::postgres::{is_pg_url, PgTarget};
#[cfg(feature = "postgres")]
use super::postgres::{PgStore, PgWriter};
use super::{
    AuditLog, JournalStore, JournalWriter, ListQueries, SessionBrowse, SessionFinder, SqliteStore,
    SqliteWriter, StoreError,
};

/// Everything the CLI and the TUI read, from whichever database.
pub trait Backend:
    JournalStore + SessionBrowse + ListQueries + AuditLog + SessionFinder + Send
{
    /// The same store as a plain `JournalStore` (for `SubmissionReport::load`).
    fn reader(&self) -> &dyn JournalStore;
}

impl<T: JournalStore + SessionBrowse + ListQueries + AuditLog + SessionFinder + Send> Backend
    for T
{
    fn reader(&self) -> &dyn JournalStore {
        self
    }
}

/// Where the journal lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    Sqlite(PathBuf),
    /// A JSON file given to `--db`: an export (`turnscope.export/1`), opened read-only in memory.
    Export(PathBuf),
    Postgres(PgTarget),
}

impl DbTarget {
    /// A URL or a path, as given to `--db`.
    pub fn from_path(p: &Path) -> Result<DbTarget, StoreError> {
        match p.to_str() {
            Some(s) if is_pg_url(s) => Ok(DbTarget::Postgres(PgTarget::parse(s)?)),
            Some(s) => match url_scheme(s) {
                Some(scheme) => Err(StoreError::UnsupportedScheme {
                    scheme: scheme.to_string(),
                }),
                None => Ok(DbTarget::file(p)),
            },
            None => Ok(DbTarget::file(p)),
        }
    }

    /// A file: an export when its first bytes read as JSON, else an SQLite database.
    fn file(p: &Path) -> DbTarget {
        if crate::export_db::looks_like_json(p) {
            DbTarget::Export(p.to_path_buf())
        } else {
            DbTarget::Sqlite(p.to_path_buf())
        }
    }

    /// An export file, opened read-only in memory.
    pub fn is_export(&self) -> bool {
        matches!(self, DbTarget::Export(_))
    }

    pub fn parse(s: &str) -> Result<DbTarget, StoreError> {
        DbTarget::from_path(Path::new(s))
    }

    /// Use `ca_file` (`--pg-ca-file`) unless the URL names one; no effect on SQLite.
    pub fn with_ca_file(mut self, ca_file: Option<&Path>) -> DbTarget {
        if let (DbTarget::Postgres(t), Some(ca)) = (&mut self, ca_file) {
            if t.ca_file.is_none() {
                t.ca_file = Some(ca.to_path_buf());
            }
        }
        self
    }

    /// For titles, logs, errors and JSON: a path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            DbTarget::Sqlite(p) | DbTarget::Export(p) => p.display().to_string(),
            DbTarget::Postgres(t) => t.display(),
        }
    }

    /// `text` with any password of the target scrubbed.
    pub fn redact(&self, text: &str) -> String {
        match self {
            DbTarget::Sqlite(_) | DbTarget::Export(_) => text.to_string(),
            DbTarget::Postgres(t) => t.redact(text),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, DbTarget::Postgres(_))
    }

    /// An SQLite file that no longer exists (the TUI keeps showing the last data read).
    pub fn vanished(&self) -> Option<String> {
        match self {
            DbTarget::Sqlite(p) | DbTarget::Export(p) if !p.exists() => {
                Some(p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                ))
            }
            _ => None,
        }
    }
}

/// Open `target` for reading (read-only on both backends).
pub fn open(target: &DbTarget) -> Result<Box<dyn Backend>, StoreError> {
    Ok(match target {
        DbTarget::Sqlite(p) => Box::new(SqliteStore::open(p)?),
        DbTarget::Export(p) => Box::new(crate::export_db::open_export(p)?),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres(t) => Box::new(PgStore::open(t)?),
        #[cfg(not(feature = "postgres"))]
        DbTarget::Postgres(t) => {
            return Err(StoreError::PgNotBuilt {
                target: t.display(),
            })
        }
    })
}

/// Open `target` for fenced writes (`--write` only).
pub fn open_writer(target: &DbTarget) -> Result<Box<dyn JournalWriter>, StoreError> {
    Ok(match target {
        DbTarget::Sqlite(p) => Box::new(SqliteWriter::open(p)?),
        DbTarget::Export(p) => return Err(StoreError::ExportReadOnly { path: p.clone() }),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres(t) => Box::new(PgWriter::open(t)?),
        #[cfg(not(feature = "postgres"))]
        DbTarget::Postgres(t) => {
            return Err(StoreError::PgNotBuilt {
                target: t.display(),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_pick_postgres_and_everything_else_is_an_sqlite_path() {
        for s in ["postgres://u@h/d", "postgresql://u@h/d"] {
            assert!(DbTarget::parse(s).unwrap().is_postgres(), "{s}");
        }
        for s in [
            "./data/flue.db",
            "/tmp/postgres://x",
            "file:flue.db",
            "postgres.db",
        ] {
            assert_eq!(
                DbTarget::parse(s).unwrap(),
                DbTarget::Sqlite(PathBuf::from(s))
            );
        }
        assert!(matches!(
            DbTarget::parse("postgres://u@h:notaport/d"),
            Err(StoreError::PgUrl { .. })
        ));
    }

    #[test]
    fn the_url_ca_file_wins_over_the_flag_and_passwords_are_redacted() {
        let flag = Path::new("/flag.pem");
        let t = DbTarget::parse("postgres://u:pw-secret@h/d?sslrootcert=/url.pem")
            .unwrap()
            .with_ca_file(Some(flag));
        let DbTarget::Postgres(pg) = &t else {
            panic!("not postgres")
        };
        assert_eq!(pg.ca_file.as_deref(), Some(Path::new("/url.pem")));
        assert!(!t.display().contains("pw-secret"));
        assert_eq!(t.redact("auth pw-secret failed"), "auth *** failed");
        let t = DbTarget::parse("postgres://u@h/d")
            .unwrap()
            .with_ca_file(Some(flag));
        let DbTarget::Postgres(pg) = &t else {
            panic!("not postgres")
        };
        assert_eq!(pg.ca_file.as_deref(), Some(flag));
        assert_eq!(t.vanished(), None);
        assert!(DbTarget::Sqlite(PathBuf::from("/nonexistent/x.db"))
            .vanished()
            .is_some());
    }
}

/// The scheme of `s` when it reads as a URL (`mysql://…`): letters, digits, `+`, `-`, `.` after
/// a letter, then `://`. A file path (`./a.db`, `/x/y.db`, `C:\\x.db`) has none.
fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

#[cfg(test)]
mod url_scheme_tests {
    use super::*;

    #[test]
    fn a_url_of_another_database_is_refused_and_a_path_is_not() {
        for (arg, scheme) in [
            ("mysql://root@localhost/flue", Some("mysql")),
            ("sqlite+file://x", Some("sqlite+file")),
            ("./data/flue.db", None),
            ("/var/lib/flue.db", None),
            ("weird:name.db", None),
            ("dir/1://x.db", None),
        ] {
            assert_eq!(url_scheme(arg), scheme, "{arg}");
        }
        let e = DbTarget::parse("mysql://root@localhost/flue").unwrap_err();
        assert!(
            e.to_string().starts_with("unsupported URL scheme mysql://"),
            "{e}"
        );
        assert!(matches!(DbTarget::parse("./a.db"), Ok(DbTarget::Sqlite(_))));
    }
}
