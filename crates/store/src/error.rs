//! Store errors: one line that says what was found, plus a hint that says what to do.

use std::path::PathBuf;

/// The `Display` of each is the one `error:` line; [`StoreError::hint`] is its `hint:`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file does not exist (we never create one).
    #[error("no database at {}", .0.display())]
    Missing(PathBuf),
    /// `--db` names a directory.
    #[error("{} is a directory, not a database file", .path.display())]
    IsDirectory {
        path: PathBuf,
        /// The `*.db` files in it (the first few), for the hint.
        db_files: Vec<String>,
    },
    /// A WAL-mode database without its `-wal` file (copied alone): its tables may all be in
    /// the missing file, so it reads as empty.
    #[error(
        "{} reads as empty and its write-ahead log {}-wal is missing or empty (the database is in WAL mode)",
        .0.display(),
        .0.display()
    )]
    MissingWal(PathBuf),
    /// `--db` is a URL of a scheme turnscope does not read.
    #[error("unsupported URL scheme {scheme}:// in --db (turnscope reads SQLite files and postgres:// or postgresql:// URLs)")]
    UnsupportedScheme { scheme: String },
    /// `--db` names a JSON file that is not an export turnscope can open.
    #[error("{} is {what}, not a turnscope export (turnscope.export/1) or a journal database", .path.display())]
    NotAnExport { path: PathBuf, what: String },
    /// `export INSTANCE` where the instance has several sessions (an export holds one).
    #[error("instance {instance:?} has {} sessions: {}", .sessions.len(), first_ids(.sessions, 4))]
    SeveralSessions {
        instance: String,
        sessions: Vec<String>,
    },
    /// `export X` where X is no submission id or prefix, no session key and no instance.
    #[error("no submission, session or instance matches {query:?}")]
    NothingToExport { query: String },
    /// A write to an export opened with `--db`.
    #[error("an export is read-only: {} is a file written by `turnscope export`, not the journal database", .path.display())]
    ExportReadOnly { path: PathBuf },
    /// The file is empty (0 bytes, or no tables at all).
    #[error("{} is empty: not a flue journal database", .0.display())]
    Empty(PathBuf),
    /// Not an SQLite database (or damaged beyond reading its header).
    #[error("{} is not an SQLite database ({detail})", .path.display())]
    NotSqlite { path: PathBuf, detail: String },
    /// This user may not read the database (or a side file SQLite must read with it).
    #[error("{} cannot be read by this user ({detail})", .path.display())]
    NotReadable { path: PathBuf, detail: String },
    /// A file of another kind: its first bytes are not SQLite's header.
    #[error("{} is not an SQLite database: it starts with {start}", .path.display())]
    OtherKind { path: PathBuf, start: String },
    /// A WAL database whose -wal holds transactions, without its -shm, in a directory this user
    /// cannot write: SQLite must create the -shm to read the -wal.
    #[error(
        "{} cannot be read by this user: its write-ahead log {}-wal holds transactions, and SQLite must create {}-shm beside it to read them, in a directory this user cannot write ({detail})",
        .path.display(),
        .path.display(),
        .path.display()
    )]
    WalNeedsShm { path: PathBuf, detail: String },
    /// An SQLite database, but not a flue journal.
    #[error(
        "{} is an SQLite database but not a flue journal (tables: {})",
        .path.display(),
        table_list(.tables, "")
    )]
    NotFlue { path: PathBuf, tables: Vec<String> },
    /// A newer runtime's format (`flue_meta.format_version`, flue ≥ 2; 2.0.0–2.1.0 write 1).
    #[error("{}", newer_format_line(.format_version))]
    NewerFormat { format_version: String },
    /// flue 1.0.0-beta.8 or beta.9's format (`schema_version` 4 with conversation streams and no
    /// session tables).
    #[error(
        "this journal was written by flue 1.0.0-beta.8 or beta.9 (flue_meta.schema_version = {schema_version}), a format turnscope does not read"
    )]
    Beta8or9Format { schema_version: String },
    /// A flue 2.x journal, or a part of one, that the 2.x reader does not read (a spilled batch
    /// missing chunks, a missing table): said, never guessed at.
    #[error("{what}")]
    Flue2Unreadable { what: String },
    /// `flue_meta.schema_version` outside 1–3.
    #[error("unsupported journal schema version {found:?} (turnscope reads 1–3)")]
    SchemaVersion { found: String },
    /// A rollback journal left by a writer that stopped mid-transaction: only a read-write
    /// connection can roll it back, and turnscope reads read-only.
    #[error(
        "{} has an unfinished transaction in {}-journal (a writer stopped mid-write); a read-only open cannot roll it back",
        .path.display(),
        .path.display()
    )]
    HotJournal { path: PathBuf },
    /// Another process holds a lock we could not wait out.
    #[error("the database is locked ({detail})")]
    Locked { detail: String },
    #[error("no submission matches {query:?}")]
    SubmissionNotFound { query: String },
    #[error("{query:?} matches {} submissions: {}", .candidates.len(), first_ids(.candidates, 4))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    /// Any other SQLite failure.
    #[error("{context}: {detail}")]
    Sqlite { context: String, detail: String },
    /// A `postgres://` URL turnscope cannot use.
    #[error("bad PostgreSQL URL: {detail}")]
    PgUrl { detail: String },
    /// Connecting to PostgreSQL failed (`target` is shown without its password).
    #[error("{target}: {} ({detail})", .why.what())]
    PgConnect {
        target: String,
        why: PgFailure,
        detail: String,
    },
    /// A PostgreSQL database, but not a flue journal.
    #[error(
        "{target} is a PostgreSQL database but not a flue journal (tables: {})",
        table_list(.tables, "none")
    )]
    PgNotFlue { target: String, tables: Vec<String> },
    /// Seeding or copying into a PostgreSQL database that already holds a journal.
    #[error("refusing to copy into {target}: it already holds flue submissions or sessions")]
    PgNotEmpty { target: String },
    /// A `postgres://` URL, and this build has no PostgreSQL support (the `postgres` feature).
    #[error("{target}: this turnscope was built without PostgreSQL support")]
    PgNotBuilt { target: String },
    /// Any other PostgreSQL failure (never carries the password).
    #[error("{context}: {detail}")]
    Postgres { context: String, detail: String },
    /// `--write`, and the database cannot be written: found when the writer opens, before any
    /// preview, so no confirmation is asked for a write that would fail.
    #[error("cannot write {target}: {} ({detail})", .why.what())]
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

impl NotWritable {
    /// What refuses the write, in the error line.
    fn what(self) -> &'static str {
        match self {
            NotWritable::File => "the database file is not writable by this user",
            NotWritable::Directory => "the database's directory is not writable by this user (SQLite creates its -wal, -shm or -journal file there)",
            NotWritable::ReadOnlyFs => "the database is on a read-only file system",
            NotWritable::PgPrivilege => "this PostgreSQL role cannot write the journal tables",
            NotWritable::PgReadOnly => "the PostgreSQL server makes every transaction read-only",
        }
    }
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

impl PgFailure {
    /// What went wrong, in the error line.
    fn what(self) -> &'static str {
        match self {
            PgFailure::Refused => {
                "the server refused the connection (is it running, on that host and port?)"
            }
            PgFailure::Timeout => "no answer from the server within the connect timeout",
            PgFailure::Auth => "authentication failed",
            PgFailure::Tls => "the TLS handshake failed",
            PgFailure::NoDatabase => "that database does not exist",
            PgFailure::Other => "could not connect",
        }
    }
}

/// The error line of a newer format: flue 2.x named where its format version is the one 2.x
/// writes.
fn newer_format_line(format_version: &str) -> String {
    if format_version == "1" {
        format!("this journal was written by flue 2.x (flue_meta.format_version = {format_version}), a newer runtime format turnscope does not read yet")
    } else {
        format!("this journal uses a newer runtime format (flue_meta.format_version = {format_version})")
    }
}

/// The first five table names (`, …` when there are more), or `none_text` when there is none.
fn table_list(tables: &[String], none_text: &str) -> String {
    if tables.is_empty() {
        return none_text.to_string();
    }
    let shown: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
    let more = if tables.len() > 5 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

/// The first `n` candidate ids of an ambiguous prefix, and how many more there are.
fn first_ids(candidates: &[String], n: usize) -> String {
    let shown = candidates
        .iter()
        .take(n)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match candidates.len().saturating_sub(n) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

impl StoreError {
    /// What the operator can do next.
    pub fn hint(&self) -> String {
        match self {
            StoreError::Missing(_) => "check the path given with --db or TURNSCOPE_DB; `turnscope demo` opens a demo database".into(),
            StoreError::IsDirectory { db_files, .. } if db_files.is_empty() => {
                "give --db the journal file itself, the one the runtime's db.ts passes to sqlite(), e.g. ./data/flue.db".into()
            }
            StoreError::IsDirectory { path, db_files } => format!(
                "give --db the journal file itself; {} holds {}",
                path.display(),
                db_files.join(", ")
            ),
            StoreError::MissingWal(p) => format!(
                "copy {}-wal (and -shm) from beside the original along with the .db, or run `sqlite3 ORIGINAL 'PRAGMA wal_checkpoint(TRUNCATE)'` before copying",
                p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
            ),
            StoreError::SeveralSessions { sessions, .. } => format!(
                "an export holds one session: export each by its key, e.g. turnscope export '{}' (the sessions view of the TUI, or `turnscope list --status all --instance ID`, shows them)",
                sessions.first().map_or("agent-session:[…]", String::as_str)
            ),
            StoreError::NothingToExport { .. } => "give a submission id (or a unique prefix), a session key (agent-session:[…]) or an instance id; `turnscope list --status all` shows them".into(),
            StoreError::NotAnExport { .. } => "give --db a journal database (an SQLite file or a postgres:// URL) or a file written by `turnscope export`; an export written by an older turnscope must be exported again".into(),
            StoreError::ExportReadOnly { .. } => "an export is for reading: run the write against the live database (--db PATH or postgres://…) without --write on the export".into(),
            StoreError::UnsupportedScheme { .. } => {
                "give --db an SQLite file path (./data/flue.db) or postgres://user[:password]@host[:port]/dbname".into()
            }
            StoreError::Empty(_) | StoreError::NotFlue { .. } => {
                "point --db at the file the runtime's db.ts passes to sqlite(), e.g. ./data/flue.db".into()
            }
            StoreError::NotReadable { .. } => "ask for read access to the database and its -wal and -shm files (the runtime's user and group have it), or read a copy".into(),
            StoreError::OtherKind { .. } => "give --db the journal database the runtime writes (an SQLite file: its first bytes are \"SQLite format 3\")".into(),
            StoreError::WalNeedsShm { path, .. } => format!(
                "copy the database with its -wal to a directory you can write (cp {p} {p}-wal /tmp/) and open the copy, or run turnscope as a user who may write to that directory",
                p = path.display()
            ),
            StoreError::NotSqlite { .. } => {
                "the file may be truncated or overwritten; restore it from a backup or copy the -wal file along with it".into()
            }
            StoreError::NewerFormat { format_version } if format_version == "1" => {
                "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3); flue 2.0.0–2.1.0 keep history as conversation streams (a record log per agent instance), which it cannot read yet: inspect this database with the runtime that wrote it".into()
            }
            StoreError::NewerFormat { .. } => {
                "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3); this database was written by a flue release newer than 2.1.0".into()
            }
            StoreError::Flue2Unreadable { .. } => {
                "turnscope reads flue 2.x journals (SQLite) with list, show and classify; inspect this one with the runtime that wrote it".into()
            }
            StoreError::Beta8or9Format { .. } => {
                "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3); beta.8 and beta.9 were short-lived, and neither beta.7 nor flue 2.x opens their databases".into()
            }
            StoreError::SchemaVersion { found } if found == "8" => {
                "turnscope reads flue 1.0.0-beta.7 journals (schema_version 1–3); flue 2.x relabels a schema_version 8 as its format_version 1, so this is likely an early flue 2 journal, which turnscope cannot read yet".into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_line_reads_as_the_cli_prints_it() {
        let six: Vec<String> = (1..=6).map(|i| format!("t{i}")).collect();
        let cases = [
            (
                StoreError::NotFlue {
                    path: "a.db".into(),
                    tables: six.clone(),
                },
                "a.db is an SQLite database but not a flue journal (tables: t1, t2, t3, t4, t5, …)",
            ),
            (
                StoreError::PgNotFlue {
                    target: "postgres://h/d".into(),
                    tables: vec![],
                },
                "postgres://h/d is a PostgreSQL database but not a flue journal (tables: none)",
            ),
            (
                StoreError::Ambiguous {
                    query: "ab".into(),
                    candidates: six,
                },
                "\"ab\" matches 6 submissions: t1, t2, t3, t4 and 2 more",
            ),
            (
                StoreError::PgConnect {
                    target: "postgres://h/d".into(),
                    why: PgFailure::Auth,
                    detail: "denied".into(),
                },
                "postgres://h/d: authentication failed (denied)",
            ),
            (
                StoreError::HotJournal {
                    path: "j.db".into(),
                },
                "j.db has an unfinished transaction in j.db-journal (a writer stopped mid-write); a read-only open cannot roll it back",
            ),
        ];
        for (e, line) in cases {
            assert_eq!(e.to_string(), line);
        }
    }
}
