//! What every command shares: the operator-facing error with its exit code, "now", and the
//! database the command line names. The commands and the dispatcher in `cli/mod.rs` use this;
//! it uses neither.

use super::args::Cli;
use crate::store::{Backend, DbTarget, StoreError};

/// Exit codes (documented in the README).
pub mod exit {
    pub const OK: i32 = 0;
    pub const ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const REFUSED: i32 = 3;
    pub const NOT_FOUND: i32 = 4;
}

/// An error for the operator: one line, a hint, an exit code.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub hint: Option<String>,
    pub code: i32,
}

impl CliError {
    pub fn new(message: impl Into<String>, hint: impl Into<String>, code: i32) -> CliError {
        CliError {
            message: message.into(),
            hint: Some(hint.into()),
            code,
        }
    }
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> CliError {
        let code = match e {
            StoreError::SubmissionNotFound { .. } | StoreError::Missing(_) => exit::NOT_FOUND,
            StoreError::Ambiguous { .. } => exit::USAGE,
            _ => exit::ERROR,
        };
        CliError {
            message: e.to_string(),
            hint: Some(e.hint()),
            code,
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away (`turnscope list | head`): stop quietly, like other CLI tools.
            return CliError {
                message: String::new(),
                hint: None,
                code: exit::OK,
            };
        }
        CliError {
            message: format!("could not write output: {e}"),
            hint: None,
            code: exit::ERROR,
        }
    }
}

/// The current time, unless tests pin it with `TURNSCOPE_NOW_MS`.
pub fn now_ms(cli: &Cli) -> i64 {
    cli.now_ms.unwrap_or_else(crate::clock::now_ms)
}

/// The database `--db` / `TURNSCOPE_DB` names: an SQLite path or a `postgres://` URL.
pub(crate) fn db_target(cli: &Cli) -> Result<DbTarget, CliError> {
    let Some(path) = &cli.db else {
        return Err(CliError::new(
            "no database given",
            "pass --db PATH (or --db postgres://user@host/db) or set TURNSCOPE_DB; `turnscope demo` opens a demo database",
            exit::USAGE,
        ));
    };
    Ok(DbTarget::from_path(path)
        .map_err(|e| CliError {
            code: exit::USAGE,
            ..CliError::from(e)
        })?
        .with_ca_file(cli.pg_ca_file.as_deref()))
}

pub(crate) fn open_store(cli: &Cli) -> Result<Box<dyn Backend>, CliError> {
    Ok(crate::store::open(&db_target(cli)?)?)
}
