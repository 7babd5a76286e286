//! `turnscope demo --db postgres://…` (and `demo postgres://…`, `demo --scale`): the demo or scale
//! journal is written to a temporary SQLite file as usual, then copied into PostgreSQL by the
//! converter (`store::postgres::convert`), and the file is removed.

use std::path::{Path, PathBuf};

use super::args::Cli;
use super::{exit, CliError};
use crate::store::postgres::{convert, is_pg_url, PgTarget};
use crate::store::DbTarget;

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
        DbTarget::Sqlite(_) => Ok(None),
    }
}

/// Fail before generating anything when the server cannot be reached.
pub(super) fn check_reachable(target: &PgTarget) -> Result<(), CliError> {
    crate::store::postgres::connect::connect(target, false)
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
pub(super) fn seed(sqlite: &Path, target: &PgTarget) -> Result<convert::CopyStats, CliError> {
    let result = convert::sqlite_to_postgres(sqlite, target);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = sqlite.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    result.map_err(CliError::from)
}
