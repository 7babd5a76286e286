//! Store errors: one line that says what was found, plus a hint that says what to do.

use std::path::PathBuf;

#[derive(Debug)]
pub enum StoreError {
    /// The database file does not exist (we never create one).
    Missing(PathBuf),
    /// The file is empty (0 bytes, or no tables at all).
    Empty(PathBuf),
    /// Not an SQLite database (or damaged beyond reading its header).
    NotSqlite {
        path: PathBuf,
        detail: String,
    },
    /// An SQLite database, but not a flue journal.
    NotFlue {
        path: PathBuf,
        tables: Vec<String>,
    },
    /// A newer runtime's format (`flue_meta.format_version`, flue ≥ 2).
    NewerFormat {
        format_version: String,
    },
    /// `flue_meta.schema_version` outside 1–3.
    SchemaVersion {
        found: String,
    },
    /// A rollback journal left by a writer that stopped mid-transaction: only a read-write
    /// connection can roll it back, and turnscope reads read-only.
    HotJournal {
        path: PathBuf,
    },
    /// Another process holds a lock we could not wait out.
    Locked {
        detail: String,
    },
    SubmissionNotFound {
        query: String,
    },
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    /// Any other SQLite failure.
    Sqlite {
        context: String,
        detail: String,
    },
    /// A `postgres://` URL turnscope cannot use.
    PgUrl {
        detail: String,
    },
    /// Connecting to PostgreSQL failed (`target` is shown without its password).
    PgConnect {
        target: String,
        why: PgFailure,
        detail: String,
    },
    /// A PostgreSQL database, but not a flue journal.
    PgNotFlue {
        target: String,
        tables: Vec<String>,
    },
    /// Seeding or copying into a PostgreSQL database that already holds a journal.
    PgNotEmpty {
        target: String,
    },
    /// A `postgres://` URL, and this build has no PostgreSQL support (the `postgres` feature).
    PgNotBuilt {
        target: String,
    },
    /// Any other PostgreSQL failure (never carries the password).
    Postgres {
        context: String,
        detail: String,
    },
    /// `--write`, and the database cannot be written: found when the writer opens, before any
    /// preview, so no confirmation is asked for a write that would fail.
    NotWritable {
        /// The database (a path, or a URL without its password).
        target: String,
        why: NotWritable,
        detail: String,
    },
}

/// Why a database cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotWritable {
    /// The file's permissions refuse this user.
    File,
    /// SQLite must create its `-wal`/`-shm`/`-journal` file beside the database, and the
    /// directory refuses this user.
    Directory,
    /// The file system is mounted read-only.
    ReadOnlyFs,
    /// The PostgreSQL role lacks a privilege on a table turnscope writes.
    PgPrivilege,
    /// The PostgreSQL server makes every transaction read-only (`default_transaction_read_only`,
    /// or a hot standby).
    PgReadOnly,
}

/// Why a PostgreSQL connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgFailure {
    Refused,
    Timeout,
    Auth,
    Tls,
    NoDatabase,
    Other,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Missing(p) => write!(f, "no database at {}", p.display()),
            StoreError::Empty(p) => write!(f, "{} is empty: not a flue journal database", p.display()),
            StoreError::NotSqlite { path, detail } => {
                write!(f, "{} is not an SQLite database ({detail})", path.display())
            }
            StoreError::NotFlue { path, tables } => {
                let shown: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
                let more = if tables.len() > 5 { ", …" } else { "" };
                write!(
                    f,
                    "{} is an SQLite database but not a flue journal (tables: {}{more})",
                    path.display(),
                    shown.join(", ")
                )
            }
            StoreError::NewerFormat { format_version } => write!(
                f,
                "this journal uses a newer runtime format (flue_meta.format_version = {format_version})"
            ),
            StoreError::SchemaVersion { found } => {
                write!(f, "unsupported journal schema version {found:?} (turnscope reads 1–3)")
            }
            StoreError::HotJournal { path } => write!(
                f,
                "{} has an unfinished transaction in {}-journal (a writer stopped mid-write); a read-only open cannot roll it back",
                path.display(),
                path.display()
            ),
            StoreError::Locked { detail } => write!(f, "the database is locked ({detail})"),
            StoreError::SubmissionNotFound { query } => write!(f, "no submission matches {query:?}"),
            StoreError::Ambiguous { query, candidates } => write!(
                f,
                "{query:?} matches {} submissions: {}",
                candidates.len(),
                candidates.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
            ),
            StoreError::Sqlite { context, detail } => write!(f, "{context}: {detail}"),
            StoreError::PgUrl { detail } => write!(f, "bad PostgreSQL URL: {detail}"),
            StoreError::PgConnect { target, why, detail } => {
                let what = match why {
                    PgFailure::Refused => "the server refused the connection (is it running, on that host and port?)",
                    PgFailure::Timeout => "no answer from the server within the connect timeout",
                    PgFailure::Auth => "authentication failed",
                    PgFailure::Tls => "the TLS handshake failed",
                    PgFailure::NoDatabase => "that database does not exist",
                    PgFailure::Other => "could not connect",
                };
                write!(f, "{target}: {what} ({detail})")
            }
            StoreError::PgNotFlue { target, tables } => {
                let shown: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
                let more = if tables.len() > 5 { ", …" } else { "" };
                write!(
                    f,
                    "{target} is a PostgreSQL database but not a flue journal (tables: {}{more})",
                    if shown.is_empty() { "none".to_string() } else { shown.join(", ") }
                )
            }
            StoreError::PgNotEmpty { target } => write!(
                f,
                "refusing to copy into {target}: it already holds flue submissions or sessions"
            ),
            StoreError::PgNotBuilt { target } => write!(
                f,
                "{target}: this turnscope was built without PostgreSQL support"
            ),
            StoreError::Postgres { context, detail } => write!(f, "{context}: {detail}"),
            StoreError::NotWritable { target, why, detail } => {
                let what = match why {
                    NotWritable::File => "the database file is not writable by this user",
                    NotWritable::Directory => "the database's directory is not writable by this user (SQLite creates its -wal, -shm or -journal file there)",
                    NotWritable::ReadOnlyFs => "the database is on a read-only file system",
                    NotWritable::PgPrivilege => "this PostgreSQL role cannot write the journal tables",
                    NotWritable::PgReadOnly => "the PostgreSQL server makes every transaction read-only",
                };
                write!(f, "cannot write {target}: {what} ({detail})")
            }
        }
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// What the operator can do next.
    pub fn hint(&self) -> String {
        match self {
            StoreError::Missing(_) => "check the path given with --db or TURNSCOPE_DB; `turnscope demo` opens a demo database".into(),
            StoreError::Empty(_) | StoreError::NotFlue { .. } => {
                "point --db at the file the runtime's db.ts passes to sqlite(), e.g. ./data/flue.db".into()
            }
            StoreError::NotSqlite { .. } => {
                "the file may be truncated or overwritten; restore it from a backup or copy the -wal file along with it".into()
            }
            StoreError::NewerFormat { .. } => {
                "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3); this database was written by flue 2 or later".into()
            }
            StoreError::SchemaVersion { .. } => "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3)".into(),
            StoreError::HotJournal { .. } => "let the runtime (or `sqlite3 <db> 'PRAGMA integrity_check'`) open it read-write once to roll the transaction back; never delete the -journal file".into(),
            StoreError::Locked { .. } => "another process holds a write lock; retry in a moment".into(),
            StoreError::SubmissionNotFound { .. } => "run `turnscope list --status all` to see every submission id".into(),
            StoreError::Ambiguous { .. } => "type more characters of the submission id".into(),
            StoreError::Sqlite { .. } => "run `sqlite3 <db> 'PRAGMA integrity_check'` to look for damage".into(),
            StoreError::PgUrl { .. } => "use postgres://user[:password]@host[:port]/dbname[?sslmode=require]".into(),
            StoreError::PgConnect { why, .. } => match why {
                PgFailure::Refused => "check host and port (`pg_isready -h HOST -p PORT`) and that the server listens on TCP".into(),
                PgFailure::Timeout => "check the host name and firewalls, or raise ?connect_timeout=SECONDS".into(),
                PgFailure::Auth => "check the user and password (URL, PGPASSWORD or ~/.pgpass) and pg_hba.conf".into(),
                PgFailure::Tls => "check ?sslmode= (disable|prefer|require|verify-full) and the CA file (?sslrootcert= or --pg-ca-file)".into(),
                PgFailure::NoDatabase => "check the database name at the end of the URL (`psql -l` lists them)".into(),
                PgFailure::Other => "check the URL and that the server accepts connections from here".into(),
            },
            StoreError::PgNotFlue { .. } => "point the URL at the database the runtime's postgres() adapter uses".into(),
            StoreError::PgNotEmpty { .. } => "copy into a new, empty database: `createdb NAME`, then --db postgres://…/NAME".into(),
            StoreError::PgNotBuilt { .. } => "rebuild with --features postgres (a default feature), or give --db an SQLite path".into(),
            StoreError::Postgres { .. } => "retry; if it persists, check the server log".into(),
            StoreError::NotWritable { why, .. } => match why {
                NotWritable::File => "run turnscope as the user the runtime writes as (`ls -l` shows the owner), or grant write access; nothing was written, and the database is not damaged".into(),
                NotWritable::Directory => "run turnscope as the user that owns the directory, or grant write access to it; nothing was written, and the database is not damaged".into(),
                NotWritable::ReadOnlyFs => "write on the host that mounts it read-write (or remount it); drop --write to read it".into(),
                NotWritable::PgPrivilege => "connect as the role the runtime uses, or GRANT SELECT, INSERT, UPDATE, DELETE on the flue tables (and CREATE on the schema for turnscope_audit) to this role".into(),
                NotWritable::PgReadOnly => "connect to the primary, not a standby, or run ALTER ROLE/DATABASE … SET default_transaction_read_only = off; drop --write to read".into(),
            },
        }
    }

    pub(crate) fn sqlite(context: &str, e: rusqlite::Error) -> StoreError {
        let detail = e.to_string();
        if let rusqlite::Error::SqliteFailure(code, _) = &e {
            if matches!(
                code.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) {
                return StoreError::Locked { detail };
            }
        }
        StoreError::Sqlite {
            context: context.to_string(),
            detail,
        }
    }
}
