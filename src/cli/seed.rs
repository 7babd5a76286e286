//! `turnscope demo --db postgres://…` (and `demo postgres://…`): the demo
//! journal is written to a temporary SQLite file as usual, then copied into PostgreSQL by the
//! converter (`store::postgres::convert`), and the file is removed.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::args::Cli;
use super::{exit, CliError};
use turnscope_store::postgres::{convert, is_pg_url, PgTarget};
use turnscope_store::DbTarget;

/// The PostgreSQL database to seed: the demo's PATH argument when it is a URL, else `--db` when
/// that is one. A target that already holds flue rows is refused by the converter.
pub(super) fn pg_seed_target(cli: &Cli, path: Option<&Path>) -> Result<Option<PgTarget>, CliError> {
    let url = path
        .and_then(Path::to_str)
        .filter(|s| is_pg_url(s))
        .or_else(|| {
            cli.db
                .as_deref()
                .and_then(Path::to_str)
                .filter(|s| is_pg_url(s))
        });
    let Some(url) = url else {
        return Ok(None);
    };
    match DbTarget::parse(url)
        .map_err(|e| CliError {
            code: exit::USAGE,
            ..CliError::from(e)
        })?
        .with_ca_file(cli.pg_ca_file.as_deref())
    {
        DbTarget::Postgres(t) => Ok(Some(t)),
        DbTarget::Sqlite(_) | DbTarget::Export(_) => Ok(None),
    }
}

/// Fail before generating anything when the server cannot be reached.
pub(super) fn check_reachable(target: &PgTarget) -> Result<(), CliError> {
    turnscope_store::postgres::connect::connect(target, false)
        .map(drop)
        .map_err(CliError::from)
}

/// Where the SQLite file goes before it is copied.
pub(super) fn staging_path(kind: &str, now: i64) -> PathBuf {
    std::env::temp_dir().join(format!(
        "turnscope-{kind}-{}-{now}-for-postgres.db",
        std::process::id()
    ))
}

/// Copy `sqlite` into `target`, then remove the file (and its WAL side files).
pub(super) fn seed(
    sqlite: &Path,
    target: &PgTarget,
    json: bool,
) -> Result<convert::CopyStats, CliError> {
    let mut bars = super::progress::Stages::new(json);
    let result = convert::sqlite_to_postgres_watched(sqlite, target, &mut bars);
    bars.finish();
    remove_sqlite_files(sqlite);
    result.map_err(CliError::from)
}

/// Remove an SQLite file and its side files (`-wal`, `-shm`, `-journal`); missing ones are fine.
pub(super) fn remove_sqlite_files(sqlite: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = sqlite.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// A demo database written to the temp directory because no PATH was given: removed when the
/// run ends (the TUI quits, the list is printed), as a demo without a path is expected to leave
/// nothing behind. Giving a PATH keeps it.
pub(super) struct TempDemo(pub PathBuf);

impl Drop for TempDemo {
    fn drop(&mut self) {
        remove_sqlite_files(&self.0);
    }
}

/// `turnscope --write --db postgres://… copy-to-postgres FILE`.
pub(super) fn run_copy(
    cli: &Cli,
    sqlite: &Path,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let DbTarget::Postgres(target) = super::db_target(cli)? else {
        return Err(CliError::new(
            "copy-to-postgres needs a PostgreSQL database to copy into",
            "give it with --db postgres://user@host/dbname (an empty database)",
            exit::USAGE,
        ));
    };
    if !cli.write {
        return Err(CliError::new(
            "copy-to-postgres writes into the database at --db, and turnscope is read-only by default",
            format!(
                "add --write: turnscope --write --db {} copy-to-postgres {}",
                target.display(),
                sqlite.display()
            ),
            exit::USAGE,
        ));
    }
    // A flue journal, checked the way every command checks it (clear errors for anything else).
    drop(turnscope_store::SqliteStore::open(sqlite)?);
    let mut bars = super::progress::Stages::new(json);
    let stats = convert::sqlite_to_postgres_watched(sqlite, &target, &mut bars)?;
    bars.finish();
    if json {
        let tables: serde_json::Map<String, serde_json::Value> = stats
            .tables
            .iter()
            .map(|(t, n)| (t.clone(), (*n).into()))
            .collect();
        let doc = serde_json::json!({
            "schema": "turnscope.copy/1",
            "format": turnscope_engine::report::JOURNAL_FORMAT,
            "from": sqlite.display().to_string(),
            "to": target.display(),
            "rows": tables,
        });
        super::output::print_json(out, &doc)?;
        return Ok(());
    }
    writeln!(
        out,
        "copied {} into {}: {} submissions, {} sessions, {} entries, {} journals",
        sqlite.display(),
        target.display(),
        stats.rows("flue_agent_submissions"),
        stats.rows("flue_sessions"),
        stats.rows("flue_session_entries"),
        stats.rows("flue_agent_turn_journals")
    )?;
    writeln!(out, "next: turnscope --db {} list", target.display())?;
    Ok(())
}
