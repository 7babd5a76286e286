//! What every command shares: the operator-facing error with its exit code, "now", and the
//! database the command line names. The commands and the dispatcher in `cli/mod.rs` use this;
//! it uses neither.

use super::args::Cli;
use turnscope_store::{Backend, DbTarget, StoreError};

/// Exit codes (documented in docs/cli.md and the man page's EXIT STATUS, both from [`exit::ALL`]).
pub mod exit {
    pub const OK: i32 = 0;
    pub const ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const REFUSED: i32 = 3;
    pub const NOT_FOUND: i32 = 4;
    /// The operator answered anything but yes at the confirmation prompt: nothing written.
    pub const DECLINED: i32 = 5;
    /// `wait`: the runtime did something other than what turnscope predicted.
    pub const NOT_AS_PREDICTED: i32 = 6;
    /// `wait`: the runtime did not act within the timeout.
    pub const TIMED_OUT: i32 = 7;
    /// `health`: a session it judged has a finding.
    pub const FINDINGS: i32 = 8;

    /// Every code with its meaning, in order.
    pub const ALL: [(i32, &str); 9] = [
        (OK, "success (a dry run, a no-op and an applied write included)"),
        (ERROR, "error: unreadable database, not a flue journal, newer format, locked, no write access, a write that failed"),
        (USAGE, "usage: bad flags, a bad configuration file, no database given, an ambiguous id prefix, a write action without --write, fail without --reason, an empty operator, a write off a terminal without -y"),
        (REFUSED, "refused: the action does not apply to this submission's state, the state changed since the preview, or an undo whose rows changed since (nothing written); for a bulk apply, any submission of the batch refused (the others applied)"),
        (NOT_FOUND, "not found: no such database file, submission or audit record"),
        (DECLINED, "declined: the confirmation prompt was answered with anything but yes (nothing written)"),
        (NOT_AS_PREDICTED, "wait: the runtime did something other than what turnscope predicted for a submission"),
        (TIMED_OUT, "wait: the runtime did not act on a submission within --timeout"),
        (FINDINGS, "health: a session it judged has a finding (the findings are printed)"),
    ];
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

/// The commands that read a flue 2.x journal today (SQLite), named by the refusal of the others.
pub const READS_FLUE2: &str = "list, show, classify, incidents, sessions, export, wait, diff, next-request, health, audit and the actions abort, requeue, extend, fail and undo";

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> CliError {
        if let StoreError::NewerFormat { format_version } = &e {
            if format_version == "1" {
                // Reached by every command but those `flue2::route` runs on such a journal.
                return CliError::new(
                    format!(
                        "this journal was written by flue 2.x (flue_meta.format_version = 1): only {READS_FLUE2} read it yet (SQLite files), not this command"
                    ),
                    "run `turnscope list`, `turnscope show ID` or `turnscope classify ID` on it (--flue-version picks the release, default 2.1.0), or one of those actions; for anything else use the runtime that wrote it",
                    exit::ERROR,
                );
            }
        }
        let code = match e {
            StoreError::SubmissionNotFound { .. }
            | StoreError::NothingToExport { .. }
            | StoreError::Missing(_) => exit::NOT_FOUND,
            StoreError::Ambiguous { .. }
            | StoreError::SeveralSessions { .. }
            | StoreError::UnsupportedScheme { .. } => exit::USAGE,
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

/// The time *shown*: the real clock, unless tests pin it with `TURNSCOPE_NOW_MS`. Only the
/// read-only views (list, show, classify, demo data) use it; every write and every safety check
/// of one (live lease, expiry, fence, deadline) reads [`turnscope_store::clock::now_ms`] instead, so a
/// pinned clock can never make a live lease look expired.
pub fn now_ms(cli: &Cli) -> i64 {
    cli.now_ms.unwrap_or_else(turnscope_store::clock::now_ms)
}

/// The line every command run with a pinned clock prints: last on stdout, or on stderr beside a
/// JSON document.
pub fn pinned_clock_note(cli: &Cli) -> Option<String> {
    let pinned = cli.now_ms?;
    Some(format!(
        "clock: pinned to {} by TURNSCOPE_NOW_MS: times shown are relative to it; every safety check of a write uses the real clock",
        turnscope_core::journal::time::iso_from_ms(pinned)
    ))
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
    let store = turnscope_store::open(&db_target(cli)?)?;
    if store.schema().immutable {
        // Said once, on stderr (beside a JSON document too): what this read cannot see.
        eprintln!(
            "note: opened read-only without locks (SQLite's immutable mode): the database has no -shm or -wal and this user cannot write its directory, so no runtime is writing it; a runtime that starts writing now is not seen until turnscope opens it again"
        );
    }
    Ok(store)
}
