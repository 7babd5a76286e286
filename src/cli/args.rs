//! The clap definition.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// What `turnscope --help` ends with: what no command does, and the commands an operator starts
/// from.
const AFTER_HELP: &str = "\
With no command, turnscope opens the TUI on the database (at a terminal; in a pipe it prints the
list).

Examples:
  turnscope demo                                   the TUI on a built-in demo journal
  turnscope --db ./data/flue.db                    the TUI on your journal, read-only
  turnscope --db ./data/flue.db list               the stuck submissions (expired leases)
  turnscope --db ./data/flue.db show 86bad5c1      one submission: history, verdict, plan
  turnscope --db ./data/flue.db incidents          the stuck submissions per dead worker
  turnscope --db ./data/flue.db --write repair 86bad5c1 --dry-run
                                                   the exact rows a repair writes, not written
  turnscope --db postgres://ops@db/flue list --json

Read-only unless --write; every write is previewed and needs a yes. More: `turnscope man`.";

/// Triage and repair stuck turns in a flue agent-runtime journal database.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "turnscope",
    version,
    long_version = env!("TURNSCOPE_LONG_VERSION"),
    about,
    long_about = None,
    after_help = AFTER_HELP
)]
pub struct Cli {
    /// The configuration file. Default: $XDG_CONFIG_HOME/turnscope/config.toml, else
    /// ~/.config/turnscope/config.toml (a missing default file means the defaults).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_CONFIG",
        value_name = "PATH"
    )]
    pub config: Option<PathBuf>,

    /// The journal database: an SQLite file written by the runtime, or a PostgreSQL URL
    /// (postgres://user[:password]@host[:port]/dbname[?sslmode=require]).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_DB",
        value_name = "PATH|URL"
    )]
    pub db: Option<PathBuf>,

    /// CA certificate (PEM) to verify a PostgreSQL server with (like the URL's sslrootcert=).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_PG_CA_FILE",
        value_name = "PATH"
    )]
    pub pg_ca_file: Option<PathBuf>,

    /// Context window (tokens) for silent-overflow detection. Default: from the model id, else 0.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_CONTEXT_WINDOW",
        value_name = "N"
    )]
    pub context_window: Option<u64>,

    /// The flue 2.x release that wrote the database, which picks the runtime classifier's variant
    /// (2.0.0, 2.0.1, 2.0.3, 2.0.5, 2.0.8 or 2.1.0) [default: 2.1.0]. flue 2.x journals only:
    /// refused on a beta.7 journal.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "VERSION"
    )]
    pub flue_version: Option<String>,

    /// The configuration file's `flue_version` (set by `resolve`): used where `--flue-version`
    /// is not given, and, unlike the flag, never a reason to refuse a journal that is not 2.x.
    #[arg(skip)]
    pub flue_version_config: Option<String>,

    /// Allow actions that write to the journal database (read-only without it, unless the
    /// configuration file says `read_only_default = false`).
    #[arg(long, global = true)]
    pub write: bool,

    /// Operator name recorded in the audit trail (default: $USER@hostname). With `audit`, given
    /// on the command line: only that operator's records.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_OPERATOR",
        value_name = "NAME"
    )]
    pub operator: Option<String>,

    /// Whether `operator` was given on the command line (not by the environment or the
    /// configuration file): only then does it filter `audit`.
    #[arg(skip)]
    pub operator_on_command_line: bool,

    /// TUI live-refresh interval, e.g. 2s, 500ms, 10s [default: 2s, or the configuration file].
    #[arg(long, global = true, help_heading = "Global options", env = "TURNSCOPE_REFRESH", value_name = "DURATION", value_parser = turnscope_tui::config::parse_duration)]
    pub refresh: Option<std::time::Duration>,

    /// Colour theme [default: dark, or the configuration file]. NO_COLOR (non-empty) turns
    /// colours off in every theme.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "TURNSCOPE_THEME",
        value_name = "THEME"
    )]
    pub theme: Option<turnscope_tui::config::Palette>,

    /// Key overrides from the configuration file (not a flag).
    #[arg(skip)]
    pub keys: Vec<turnscope_tui::config::KeyOverride>,

    /// Pin "now" (ms since the epoch) for reproducible output: `TURNSCOPE_NOW_MS` only, not a
    /// flag, so no help or shell completion offers it.
    #[arg(skip)]
    pub now_ms: Option<i64>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// Parse the process's arguments, noting which values came from the command line itself.
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Cli::command().try_get_matches()?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        // A global flag typed after the subcommand is recorded in the subcommand's matches.
        let mut level = Some(&matches);
        while let Some(m) = level {
            if m.value_source("operator") == Some(clap::parser::ValueSource::CommandLine) {
                cli.operator_on_command_line = true;
            }
            level = m.subcommand().map(|(_, sub)| sub);
        }
        if let Some(v) = std::env::var_os("TURNSCOPE_NOW_MS").filter(|v| !v.is_empty()) {
            let text = v.to_string_lossy();
            cli.now_ms = Some(text.parse().map_err(|_| {
                Cli::command().error(
                    clap::error::ErrorKind::InvalidValue,
                    format!("TURNSCOPE_NOW_MS={text:?} is not a time in ms since the epoch"),
                )
            })?);
        }
        // `-o json` is `--json` (kubectl's and the temporal CLI's spelling beside ours).
        if let Some(Command::List(a)) = &mut cli.command {
            if a.output == Some(ListOutput::Json) {
                a.output = None;
                a.json = true;
            }
        }
        Ok(cli)
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// List submissions: by default those whose lease expired (what the reconciler would pick up).
    List(ListArgs),
    /// Find sessions from what a customer gives you: a session key or part of it, an instance,
    /// a submission id or a prefix of one, a conversation id or another id the session's rows
    /// hold (affinity key, child session, attempt, turn or operation id, entry id); with --text,
    /// text anywhere in the stored history of every session. Exit 4 when nothing matches.
    Sessions(SessionsArgs),
    /// Session health: what on each session's active path the next turn will not send as
    /// stored (unresolved tool calls behind settled submissions, orphaned results, repeated
    /// call ids, in-progress or empty assistants, continuations whose partial is dropped,
    /// histories the runtime cannot read), each with what it does to that turn. Exit 8 when any
    /// session has a finding.
    Health(HealthArgs),
    /// The stuck submissions (expired leases) grouped by the worker that held their lease: when
    /// it stopped renewing, how many it left, what the runtime's plan does to them, and the
    /// command that acts on all of them.
    Incidents {
        /// Print JSON (schema turnscope.incidents/1).
        #[arg(long)]
        json: bool,
    },
    /// Show one submission: row, journal, active path after the input, classification, recovery plan.
    Show {
        /// Submission id or a unique prefix of it.
        submission: String,
        /// Print JSON (schema turnscope.show/1).
        #[arg(long)]
        json: bool,
    },
    /// Follow submissions until the runtime acts on each (settles it, requeues it, replaces its
    /// attempt, or its worker renews the lease), then say which rule fired beside the one
    /// turnscope predicted. Exit 0 when every one went as predicted, 6 when any did not, 7 when
    /// any was not acted on within --timeout.
    Wait(WaitArgs),
    /// The message list the runtime's next turn sends to the provider: the recovery writes
    /// first, the runtime's context builder, then the model library's transformMessages; every
    /// difference from the stored history marked and every hazard named.
    #[command(name = "next-request")]
    NextRequest {
        /// A submission id or unique prefix, a session key, or an instance with one session.
        target: String,
        /// Whether the model takes images: `no` shows them replaced by the library's placeholder
        /// (default: unknown, images shown as stored and named as a hazard).
        #[arg(long, value_name = "yes|no", value_parser = parse_yes_no)]
        vision: Option<bool>,
        /// Print JSON (schema turnscope.next-request/1).
        #[arg(long)]
        json: bool,
    },
    /// Classify one submission exactly as the runtime would, with the rule that matched.
    Classify {
        /// Submission id or a unique prefix of it.
        submission: String,
        /// Print JSON (schema turnscope.classify/1).
        #[arg(long)]
        json: bool,
    },
    /// Complete the trailing tool batch with synthetic "interrupted" results, as the runtime's repair does.
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Repair(BulkActionArgs),
    /// Put a submission whose input never reached the session back in the queue (the runtime's rule 7).
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Requeue(BulkActionArgs),
    /// Ask the runtime to abort a submission (flue 2.x journals): its abort intent
    /// (`abort_requested_at`), which the runtime settles `aborted` (its next pass, a live owner's
    /// deadline scan, or the claim of a queued row). Several ids or --all: one bulk apply.
    Abort(BulkActionArgs),
    /// Give up on a submission: the runtime's failure writes (advisory entry, settlement; a direct
    /// prompt's terminal event appended to its event stream). Needs --reason.
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Fail(BulkActionArgs),
    /// Step through recovery: show the runtime's plan and apply exactly its next write.
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Step(BulkActionArgs),
    /// Apply the runtime's own writes for the rule that fires now (all but the attempt
    /// replacement, which it makes itself; a direct prompt's settlement whole, its terminal
    /// event appended to its event stream), one fenced transaction per submission.
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Reconcile(BulkActionArgs),
    /// Give submissions a new deadline and/or more attempts, so the runtime resumes them where
    /// it would fail them (rule 3: deadline passed; rule 2: attempts spent).
    ///
    /// Several ids, or --all with the filters of list, make one bulk apply: one grouped preview,
    /// one confirmation (the count typed from 10 writes), one fenced transaction per submission
    /// under one batch id, paced by --rate; exit 3 when any was refused.
    Extend(ExtendArgs),
    /// Revert exactly what an audited action (an audit id) or a bulk apply (a batch id) wrote, in
    /// one fenced transaction, only while every row it changed still holds what turnscope wrote.
    /// Never a record that appended a direct prompt's terminal event to its event stream
    /// (subscribers may have read it). Needs --write (the check runs in a write transaction,
    /// rolled back for --dry-run).
    Undo(UndoArgs),
    /// Export one session whole (every entry with its stored data, every row) and every
    /// submission of it, inspected: the TUI's `e`, as JSON (schema turnscope.export/1) on stdout
    /// or in a file. `turnscope --db FILE` opens an export again, read-only.
    Export(ExportArgs),
    /// Compare two states of a submission: each side an export file or a submission id in the
    /// --db database (e.g. an export taken before a repair and the live database after).
    /// Entries added, removed and changed, the session leaf, the row's columns, and the verdict
    /// and plan computed on each side. Exit 0 when equal, 1 when different, 2 or more on error.
    Diff(DiffArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout: turnscope man > turnscope.1
    Man,
    /// The configuration file: where it is looked for and what it sets.
    Config {
        /// Print a commented default file: turnscope config --print-default > ~/.config/turnscope/config.toml
        #[arg(long)]
        print_default: bool,
    },
    /// The audit trail of every action turnscope applied to this database, newest first; the
    /// filters run in the database. `--operator NAME` (the global flag, on the command line)
    /// keeps only that operator's records.
    Audit(AuditArgs),
    /// Copy an SQLite journal (a runtime database, the demo, the scale data) into the PostgreSQL
    /// database given with --db, row by row and exactly. Needs --write; the target must hold no
    /// flue rows yet.
    CopyToPostgres {
        /// The SQLite journal file to copy.
        sqlite: PathBuf,
        /// Print JSON (schema turnscope.copy/1): rows per table.
        #[arg(long)]
        json: bool,
    },
    /// Write a demo journal database (every recovery case) and list what is stuck in it.
    Demo {
        /// Where to write it (must not exist); it is kept. Without it: a new file in the temp
        /// directory, removed when the run ends (the TUI quits or the list is printed).
        path: Option<PathBuf>,
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Default, Args)]
pub struct SessionsArgs {
    /// A session key or part of it, an instance, or an id (4 characters or more): a submission
    /// id or prefix, a conversation id or part of one, an affinity key, a child session, an
    /// attempt id (a prefix of hex digits), a turn or operation id (a prefix: turn_…, op_…),
    /// an entry id.
    #[arg(value_hint = clap::ValueHint::Other)]
    pub query: Option<String>,

    /// Search every session's stored entries for TEXT (ignoring case), a row at a time; each
    /// matching session is printed as it is found, with a piece of the entry that matched.
    #[arg(long, value_name = "TEXT", value_hint = clap::ValueHint::Other)]
    pub text: Option<String>,

    /// At most N sessions (the text search stops there).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,

    /// Print JSON (schema turnscope.sessions/1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct HealthArgs {
    /// Sessions to judge: a session key, an instance, a submission id or prefix, or any id
    /// `sessions QUERY` finds (each session it names).
    #[arg(value_hint = clap::ValueHint::Other)]
    pub ids: Vec<String>,

    /// Every session of the journal, read one at a time; only those with findings are listed.
    #[arg(long)]
    pub all: bool,

    /// Print JSON (schema turnscope.health/1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Sort by this column: seq, id, kind, instance, status, att, lease, phase, verdict, rule,
    /// cost, owner or error; a leading - sorts descending (--sort=-cost: the costliest first).
    /// With --limit: the first N in this order.
    #[arg(long, value_name = "COLUMN", allow_hyphen_values = true)]
    pub sort: Option<String>,

    /// Output format: `wide` (full ids, untruncated columns, and the lease owner), `ids` (only
    /// the full submission ids, one per line, to paste into a bulk command) or `json` (as --json).
    #[arg(
        short = 'o',
        long = "output",
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "json"
    )]
    pub output: Option<ListOutput>,

    /// Read the listing every INTERVAL (default 2s; 100ms to 1h) until Ctrl-C (exit 0). On a
    /// terminal it is redrawn in place; in a pipe it is printed again only when its rows changed,
    /// after a `── <time> ──` line.
    #[arg(
        long,
        value_name = "INTERVAL",
        num_args = 0..=1,
        default_missing_value = "2s",
        value_parser = turnscope_tui::config::parse_duration,
        conflicts_with = "json"
    )]
    pub watch: Option<std::time::Duration>,

    /// Stop --watch after this many readings (for tests).
    #[arg(long, hide = true, requires = "watch", value_name = "N")]
    pub watch_ticks: Option<u64>,

    /// Print JSON (schema turnscope.list/1).
    #[arg(long)]
    pub json: bool,
}

/// `list -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListOutput {
    Wide,
    Ids,
    /// The same as `--json` (made so at parse time).
    Json,
}

/// Which submissions a command is about: `list` shows them, a bulk action (`--all`) acts on
/// them. Resolved by [`super::select`], the one place these filters mean something.
#[derive(Debug, Clone, Default, Args)]
pub struct SelectionArgs {
    /// Only running submissions whose lease expired (the default).
    #[arg(long, conflicts_with = "status")]
    pub expired: bool,

    /// Only these submissions: expired, all, queued, running, terminalizing, settled or failed.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,

    /// Only dispatch or direct submissions.
    #[arg(long, value_name = "KIND", value_parser = ["dispatch", "direct"])]
    pub kind: Option<String>,

    /// Only this verdict: a classification (tool_use_unresolved, resume/tool_results_partial, resume
    /// for every mode, …) or a disposition (stuck, live, no-lease, pending, publishing, completed,
    /// failed, malformed, damaged); any other value is refused with the full list.
    /// A leading `!` selects every other row (`--verdict '!live'`, as --not-verdict).
    #[arg(long, value_name = "VERDICT", allow_hyphen_values = true)]
    pub verdict: Option<String>,

    /// Every row but those of this verdict (the same values as --verdict).
    #[arg(long, value_name = "VERDICT", conflicts_with = "verdict")]
    pub not_verdict: Option<String>,

    /// Only rows whose plan fires this reconciler rule next: 0 to 9, several with commas
    /// (`2,3`), `none` for rows no rule applies to; a leading `!` selects every other row.
    #[arg(long, value_name = "RULE")]
    pub rule: Option<String>,

    /// Only this instance id (from the session key).
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,

    /// Only submissions whose lease this worker holds or held (the row's owner_id: in full, or a
    /// prefix that only one owner among the rows of --status has).
    #[arg(long, value_name = "ID")]
    pub owner: Option<String>,

    /// Only rows older than this: lease expired at least this long ago for running rows, accepted
    /// at least this long ago for the others (e.g. 10m, 2h).
    #[arg(long, value_name = "DURATION", value_parser = parse_age)]
    pub older_than: Option<std::time::Duration>,

    /// At most this many rows (oldest first).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Rows of the view read at a time (default 4096): the tests read a small journal in many
    /// pages with it.
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub page_rows: Option<u64>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct AuditArgs {
    /// Only records of submissions whose id starts with this (a full id or a prefix).
    #[arg(long, value_name = "ID", value_hint = clap::ValueHint::Other)]
    pub submission: Option<String>,
    /// Only records written since then: a duration back from now (30m, 2h, 3d) or a time
    /// (2026-12-01, 2026-12-01T03:12:04; UTC unless it ends in an offset such as +02:00).
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    pub since: Option<Since>,
    /// Only records of this batch (one bulk apply, or the undo of one: the BATCH column).
    #[arg(long, value_name = "BATCH")]
    pub batch: Option<String>,
    /// At most this many records (the newest of those that match).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Print JSON (schema turnscope.audit/1).
    #[arg(long)]
    pub json: bool,
}

/// `audit --since`: a duration back from now, or an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Ago(std::time::Duration),
    /// ms since the epoch.
    At(i64),
}

impl Since {
    /// The instant it names, `now_ms` being now.
    pub fn ms(self, now_ms: i64) -> i64 {
        match self {
            Since::Ago(d) => now_ms - d.as_millis() as i64,
            Since::At(t) => t,
        }
    }
}

/// `--since`: `2h`, `30m`, `3d` (see [`parse_age`]) or a time (see
/// [`turnscope_core::journal::time::ms_from_typed_time`]).
pub fn parse_since(text: &str) -> Result<Since, String> {
    // A time always has a `-` in its date; an age never does.
    if text.contains('-') {
        return turnscope_core::journal::time::ms_from_typed_time(text)
            .map(Since::At)
            .ok_or_else(|| {
                format!("{text:?} is not a time (try 2026-12-01T03:12:04, or an age such as 2h)")
            });
    }
    parse_age(text).map(Since::Ago).map_err(|_| {
        format!("{text:?} is neither an age nor a time (try 2h, 30m or 2026-12-01T03:12:04)")
    })
}

#[derive(Debug, Clone, Default, Args)]
pub struct ExportArgs {
    /// What to export: a submission id (or a unique prefix of one), a session key
    /// (agent-session:[…]) or an instance id with one session. An export holds one session.
    #[arg(value_name = "TARGET")]
    pub submission: String,
    /// Replace tool arguments, tool results and message text with markers that keep their
    /// shape (ids, keys, types, lengths); the verdict and plan stay the same. RULES picks some:
    /// args, results, text (comma-separated; all three without a value). Put TARGET first or
    /// write --redact=RULES.
    #[arg(long, value_name = "RULES", num_args = 0..=1, default_missing_value = "all")]
    pub redact: Option<String>,
    /// Write the document to FILE (created readable by its owner only) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --output: replace FILE if it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct DiffArgs {
    /// The state before: an export file (a path that exists), or a submission id or prefix in
    /// the --db database.
    pub a: String,
    /// The state after, the same way.
    pub b: String,
    /// Print JSON (schema turnscope.diff/1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ActionArgs {
    /// Submission id or a unique prefix of it.
    pub submission: String,
    /// Print the exact rows that would be written, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Why (recorded in the audit trail; required for fail).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Apply without asking for confirmation on a terminal.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Accept that the tool calls this write answers `interrupted` may already have run (their
    /// side effects happened): required when there are any; recorded in the audit row.
    #[arg(long)]
    pub ack_side_effects: bool,
    /// Print JSON (schema turnscope.action/1).
    #[arg(long)]
    pub json: bool,
}

/// The flags of an action on one or more submissions: one id acts on that submission alone;
/// several ids, or `--all` with the selection filters, make one bulk apply (one preview, one
/// confirmation, one batch id).
#[derive(Debug, Clone, Default, Args)]
pub struct BulkActionArgs {
    /// Submission ids or unique prefixes (or --all).
    #[arg(required_unless_present = "all", conflicts_with = "all", num_args = 1..)]
    pub submissions: Vec<String>,
    /// Every submission the selection filters select (the expired view unless --status says
    /// otherwise), read once before the preview.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Print the exact rows that would be written, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Why (recorded in the audit trail; required for fail).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Apply without asking for confirmation on a terminal.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Accept that the tool calls this write answers `interrupted` may already have run (their
    /// side effects happened): required when there are any; recorded in the audit row.
    #[arg(long)]
    pub ack_side_effects: bool,
    /// At most N submissions a second in a bulk apply (e.g. 5/s or 0.5), to spare the database
    /// the runtime is using.
    #[arg(long, value_name = "N/s", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Print JSON: schema turnscope.action/1 for one submission, turnscope.bulk/1 for a bulk.
    #[arg(long)]
    pub json: bool,
}

impl BulkActionArgs {
    /// The one-submission flags for `submission`.
    pub fn one(&self, submission: &str) -> ActionArgs {
        ActionArgs {
            submission: submission.to_string(),
            dry_run: self.dry_run,
            reason: self.reason.clone(),
            yes: self.yes,
            ack_side_effects: self.ack_side_effects,
            json: self.json,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    /// Submission ids or unique prefixes.
    #[arg(required = true, num_args = 1..)]
    pub submissions: Vec<String>,
    /// Give up on the ones not acted on after this long (e.g. 90s, 10m).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = turnscope_tui::config::parse_duration)]
    pub timeout: std::time::Duration,
    /// How often the rows are read again.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = turnscope_tui::config::parse_duration)]
    pub interval: std::time::Duration,
    /// Print JSON (schema turnscope.wait/1).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Default, Args)]
#[command(group(clap::ArgGroup::new("extension").required(true).multiple(true).args(["deadline", "attempts"])))]
pub struct ExtendArgs {
    #[command(flatten)]
    pub bulk: BulkActionArgs,
    /// New deadline: now + DURATION (e.g. 30m, 2h, 1d).
    #[arg(long, value_name = "DURATION", value_parser = turnscope_engine::actions::parse_deadline)]
    pub deadline: Option<i64>,
    /// N more attempts than are left now (a spent budget counts from the attempts used).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=turnscope_engine::actions::MAX_ATTEMPTS))]
    pub attempts: Option<i64>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct UndoArgs {
    /// An audit id (`turnscope audit` lists them) or a batch id (every record of a bulk apply).
    pub target: String,
    /// Check and print the rows it would restore, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Why (recorded in the undo's audit row).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Apply without asking for confirmation on a terminal.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print JSON (schema turnscope.action/1, action "undo").
    #[arg(long)]
    pub json: bool,
}

/// A pace: `5/s`, `5`, `0.5/s` submissions a second (above 0, at most 10,000).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let num = t.strip_suffix("/s").unwrap_or(t);
    match num.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n <= 10_000.0 => Ok(n),
        Ok(_) => Err(format!(
            "{text:?} is out of range (above 0, at most 10000/s)"
        )),
        Err(_) => Err(format!("{text:?} is not a rate (try 5/s or 0.5/s)")),
    }
}

/// An age: `30s`, `10m`, `2h`, `3d`.
pub fn parse_age(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not an age (try 10m or 2h)"))?;
    let secs = match unit {
        "s" | "" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?} (use s, m, h or d)"
            ))
        }
    };
    Ok(std::time::Duration::from_secs(secs))
}

fn parse_yes_no(s: &str) -> Result<bool, String> {
    match s {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("give yes or no".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_age, parse_rate, parse_since, Since};
    use std::time::Duration;

    #[test]
    fn since_is_an_age_or_a_time() {
        assert_eq!(parse_since("2h"), Ok(Since::Ago(Duration::from_secs(7200))));
        assert_eq!(
            parse_since("2h").unwrap().ms(10_000_000),
            10_000_000 - 7_200_000
        );
        assert_eq!(
            parse_since("2026-01-05T09:12:44.131Z"),
            Ok(Since::At(1767604364131))
        );
        assert_eq!(parse_since("2026-01-05").unwrap().ms(0), 1767571200000);
        assert!(parse_since("2026-13-01")
            .unwrap_err()
            .contains("not a time"));
        assert!(parse_since("soon")
            .unwrap_err()
            .contains("neither an age nor a time"));
    }

    #[test]
    fn ages() {
        assert_eq!(parse_age("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_age("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_age("3d"), Ok(Duration::from_secs(259_200)));
        assert!(parse_age("ten minutes").is_err());
        assert!(parse_age("5y").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5/s"), Ok(5.0));
        assert_eq!(parse_rate("0.5/s"), Ok(0.5));
        assert_eq!(parse_rate("20"), Ok(20.0));
        assert!(parse_rate("0/s").is_err());
        assert!(parse_rate("-1").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("5/m").is_err());
    }
}
