//! The command line: thin, every command calls the same core/store/report code as the TUI.

mod act;
mod args;
mod audit;
mod bulk;
mod common;
mod confirm;
mod diff;
mod export;
mod flue2;
mod flue2_act;
mod flue2_bulk;
mod flue2_diff;
mod flue2_export;
mod flue2_health;
mod flue2_incidents;
mod flue2_list;
mod flue2_next_request;
mod flue2_plan;
mod flue2_sessions;
mod flue2_wait;
mod health;
mod incidents;
mod keys;
mod list;
mod list_sort;
mod list_watch;
mod next_request;
mod output;
mod progress;
mod seed;
mod select;
mod sessions;
mod show;
mod undo;
mod wait;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

pub use args::{
    parse_age, parse_since, ActionArgs, AuditArgs, Cli, Command, DiffArgs, ExportArgs, HealthArgs,
    ListArgs, SelectionArgs, SessionsArgs, Since, UndoArgs,
};
pub use turnscope_core::text::{is_hostile_char, sanitize};
pub use turnscope_tui::config::parse_duration;

pub use common::{exit, now_ms, CliError};

use common::{db_target, open_store};
use turnscope_store::DbTarget;

/// Run a parsed command line, writing to `out`. Errors are returned, not printed.
///
/// Everything written goes through [`turnscope_core::text::TerminalSafe`], so no control sequence, bidi override
/// or zero-width character from the database reaches the terminal raw, even where a caller forgot
/// [`sanitize`] (human output) or serde_json left a character raw (JSON output).
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<(), CliError> {
    if matches!(
        cli.command,
        Some(Command::Completions { .. } | Command::Man)
    ) {
        // Generated from the clap definition, no database text: written byte for byte.
        return run_command(cli, out);
    }
    if let Some(Command::Config {
        print_default: true,
    }) = cli.command
    {
        // Works even when the current file is broken: it is how to start over.
        out.write_all(turnscope_tui::config::DEFAULT_FILE.as_bytes())?;
        return Ok(());
    }
    let cli = &resolve(cli)?;
    let pinned = common::pinned_clock_note(cli);
    let mut safe = turnscope_core::text::TerminalSafe::new(out);
    let mut result = run_command(cli, &mut safe);
    match (&pinned, json_output(cli), &result) {
        // Beside a JSON document the person reading sees it on stderr; the document stays
        // what its schema says. An error stays one `error:` and one `hint:` line.
        (Some(note), true, Ok(())) => eprintln!("{note}"),
        (Some(note), false, Ok(())) => result = writeln!(safe, "{note}").map_err(CliError::from),
        _ => {}
    }
    let finished = safe.finish();
    result?;
    finished?;
    Ok(())
}

/// Whether the operator asked for JSON (`--json`, `-o json`): an error is then also printed as a
/// `turnscope.error/1` document on stdout.
pub fn json_requested(cli: &Cli) -> bool {
    match &cli.command {
        Some(Command::Export(_)) => false,
        Some(Command::List(a)) => a.json,
        _ => json_output(cli),
    }
}

/// Whether the command prints a JSON document on stdout.
fn json_output(cli: &Cli) -> bool {
    match &cli.command {
        Some(
            Command::Show { json, .. }
            | Command::NextRequest { json, .. }
            | Command::Classify { json, .. }
            | Command::Incidents { json }
            | Command::Wait(args::WaitArgs { json, .. })
            | Command::CopyToPostgres { json, .. }
            | Command::Demo { json, .. },
        ) => *json,
        // `-o ids` is pasted into other commands: the pinned-clock note goes to stderr.
        Some(Command::List(a)) => a.json || a.output == Some(args::ListOutput::Ids),
        Some(Command::Audit(a)) => a.json,
        Some(Command::Sessions(a)) => a.json,
        Some(Command::Health(a)) => a.json,
        // The document itself goes to stdout unless --output names a file.
        Some(Command::Export(a)) => a.output.is_none(),
        Some(Command::Undo(a)) => a.json,
        Some(Command::Abort(a)) => a.json,
        Some(Command::Diff(a)) => a.json,
        Some(
            Command::Repair(a)
            | Command::Requeue(a)
            | Command::Fail(a)
            | Command::Step(a)
            | Command::Reconcile(a),
        ) => a.json,
        Some(Command::Extend(a)) => a.bulk.json,
        _ => false,
    }
}

/// Apply the configuration file where neither a flag nor an environment variable gave a value
/// (clap already ranks flags above environment variables).
pub fn resolve(cli: &Cli) -> Result<Cli, CliError> {
    let file = turnscope_tui::config::load(cli.config.as_deref())
        .and_then(|f| keys::overrides(&f.keys, f.source.as_deref()).map(|_| f))
        .map_err(bad_configuration)?;
    let mut c = cli.clone();
    c.db = c.db.or(file.db);
    c.operator = c.operator.or(file.operator);
    c.context_window = c.context_window.or(file.context_window);
    c.flue_version_config = file.flue_version;
    c.refresh = Some(c.refresh.unwrap_or(file.refresh));
    c.theme = Some(c.theme.unwrap_or(file.theme));
    c.write = c.write || !file.read_only_default;
    c.keys = file.keys;
    if let Some(Command::Config { .. }) = &c.command {
        // Only what the file says is needed for `config`; the source is reported there.
        c.config = file.source.or(c.config);
    }
    Ok(c)
}

fn bad_configuration(e: turnscope_tui::config::ConfigError) -> CliError {
    // A file that is not there has no line to fix: say how to make one.
    let hint = if e.line.is_none() && !e.path.as_os_str().is_empty() && !e.path.exists() {
        format!(
            "create it with `turnscope config --print-default > {}`, or leave out --config (and TURNSCOPE_CONFIG) to use the defaults",
            e.path.display()
        )
    } else if e.line.is_some() {
        "fix that line, or see `turnscope config --print-default` for every key with its default"
            .to_string()
    } else {
        "fix the file, or see `turnscope config --print-default` for every key with its default"
            .to_string()
    };
    CliError::new(format!("bad configuration: {e}"), hint, exit::USAGE)
}

/// The key overrides [`resolve`] already checked, as the keymap's type.
fn key_overrides(cli: &Cli) -> Result<turnscope_tui::Overrides, CliError> {
    keys::overrides(&cli.keys, cli.config.as_deref()).map_err(bad_configuration)
}

fn run_config(cli: &Cli, out: &mut dyn Write) -> Result<(), CliError> {
    let found = cli.config.as_ref().filter(|p| p.exists());
    match found {
        Some(p) => writeln!(out, "configuration file: {}", p.display())?,
        None => writeln!(
            out,
            "configuration file: none (looked for {}; using the defaults)",
            turnscope_tui::config::default_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "nothing: no XDG_CONFIG_HOME or HOME".into())
        )?,
    }
    let show = |o: Option<String>| o.unwrap_or_else(|| "(not set)".into());
    writeln!(
        out,
        "db = {}",
        show(cli.db.as_ref().map(|p| match DbTarget::from_path(p) {
            Ok(t) => t.display(),
            Err(_) => "(not a usable path or URL)".into(),
        }))
    )?;
    writeln!(
        out,
        "refresh = {:?}",
        cli.refresh.unwrap_or(std::time::Duration::from_secs(2))
    )?;
    writeln!(out, "theme = {}", cli.theme.unwrap_or_default().as_str())?;
    // The file's key: `--write` (or this key) makes a run write.
    writeln!(out, "read_only_default = {}", !cli.write)?;
    writeln!(out, "operator = {}", confirm::operator_shown(cli))?;
    writeln!(
        out,
        "context_window = {}",
        show(cli.context_window.map(|n| n.to_string()))
    )?;
    writeln!(
        out,
        "flue_version = {}",
        show(cli.flue_version.clone().or(cli.flue_version_config.clone()))
    )?;
    for (a, k) in &key_overrides(cli)?.0 {
        writeln!(
            out,
            "keys.{} = {}",
            turnscope_tui::action_name(*a),
            turnscope_tui::key_label(k)
        )?;
    }
    writeln!(
        out,
        "next: turnscope config --print-default   (a commented file with every key)"
    )?;
    Ok(())
}

fn run_command(cli: &Cli, out: &mut dyn Write) -> Result<(), CliError> {
    // A flue 2.x journal (list, show, classify), and --flue-version's checks.
    if let Some(done) = flue2::route(cli, out) {
        return done;
    }
    match &cli.command {
        Some(Command::List(args)) => match args.watch {
            Some(every) => list_watch::run(open_store(cli)?.reader(), cli, args, every, out),
            None => list::run(open_store(cli)?.reader(), cli, args, out),
        },
        Some(Command::Sessions(a)) => sessions::run(&*open_store(cli)?, a, out),
        Some(Command::Health(a)) => health::run(&*open_store(cli)?, a, out),
        Some(Command::Incidents { json }) => {
            incidents::run(open_store(cli)?.reader(), cli, *json, out)
        }
        Some(Command::Show { submission, json }) => {
            show::run_show(open_store(cli)?.reader(), cli, submission, *json, out)
        }
        Some(Command::NextRequest {
            target,
            vision,
            json,
        }) => next_request::run(&*open_store(cli)?, cli, target, *vision, *json, out),
        Some(Command::Classify { submission, json }) => {
            show::run_classify(open_store(cli)?.reader(), cli, submission, *json, out)
        }
        Some(Command::Wait(a)) => wait::run(open_store(cli)?.reader(), cli, a, out),
        Some(Command::Demo { path, json }) => run_demo(cli, path.clone(), *json, out),
        Some(Command::Repair(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Repair,
            a,
            None,
            out,
        ),
        Some(Command::Requeue(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Requeue,
            a,
            None,
            out,
        ),
        // Reached on every journal but a flue 2.x one, which `flue2::route` runs.
        Some(Command::Abort(a)) => Err(CliError::new(
            "abort is flue 2.x's abort intent, and this journal was not written by flue 2.x",
            format!(
                "on a flue 1.0.0-beta.7 journal give up on it with fail: turnscope --write fail {} --reason TEXT",
                a.submissions.first().map_or("ID", String::as_str)
            ),
            exit::USAGE,
        )),
        Some(Command::Fail(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Fail,
            a,
            None,
            out,
        ),
        Some(Command::Step(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Step,
            a,
            None,
            out,
        ),
        Some(Command::Reconcile(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Reconcile,
            a,
            None,
            out,
        ),
        Some(Command::Extend(a)) => bulk::run_action(
            cli,
            turnscope_engine::actions::ActionKind::Extend,
            &a.bulk,
            Some(turnscope_engine::actions::Extension {
                deadline_ms: a.deadline,
                attempts: a.attempts,
            }),
            out,
        ),
        Some(Command::Audit(a)) => audit::run(&*open_store(cli)?, cli, a, out),
        Some(Command::Undo(a)) => undo::run(cli, a, out),
        Some(Command::Export(a)) => export::run(&*open_store(cli)?, cli, a, out),
        Some(Command::Diff(a)) => diff::run(cli, a, out),
        Some(Command::CopyToPostgres { sqlite, json }) => seed::run_copy(cli, sqlite, *json, out),
        Some(Command::Completions { shell }) => {
            // Into a buffer: clap_complete panics on a write error (`| head` closing the pipe).
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut completion_command(), "turnscope", &mut buf);
            out.write_all(&buf)?;
            Ok(())
        }
        Some(Command::Config { .. }) => run_config(cli, out),
        Some(Command::Man) => write_man(out),
        None => {
            // A flue 2.x journal opens in the TUI's 2.x screens (in a pipe `flue2::route` listed it).
            if std::io::stdout().is_terminal() && is_flue2_file(cli) {
                return run_tui(cli, db_target(cli)?, None);
            }
            let store = open_store(cli)?;
            if std::io::stdout().is_terminal() {
                drop(store);
                return run_tui(cli, db_target(cli)?, None);
            }
            // Not a terminal (a pipe, a script): print what is stuck instead.
            list::run(store.reader(), cli, &ListArgs::default(), out)
        }
    }
}

/// The man page's BULK ACTIONS section (roff paragraphs), the subcommands' options being
/// listed by `turnscope <action> --help`.
const BULK_MAN: &[&str] = &[
    "repair, requeue, fail, step, reconcile and extend take one id (the one-submission action), or several ids or --all with the filters of list (--status, --kind, --verdict, --instance, --owner, --older-than, --limit) for one bulk apply.",
    ".PP",
    "The selection is read once and frozen (full ids). The preview counts the submissions and groups them by what will happen: will write (by the computed prediction of the runtime's next pass), nothing to write, refused (by reason), 20 ids a group, then \"and N more\"; a warning names the writes that cannot be undone (a direct prompt's terminal event reaches its stream's subscribers), before the question.",
    ".PP",
    "One confirmation covers the batch, No by default; from 10 writes the count must be typed. -y answers it; off a terminal without -y nothing is written (exit 2).",
    ".PP",
    "Each submission is written in its own fenced transaction, all under one batch id (audit: batch; undo BATCH reverts it), paced by --rate N/s. A refusal or a change since the preview refuses that one and the batch goes on. The summary counts applied, nothing to write (never refused) and refused with the reasons; --json prints one turnscope.bulk/1 document. Exit 0 when nothing was refused, 3 otherwise.",
    ".PP",
    "At a terminal a progress bar on stderr shows the planning and the writes (and copy-to-postgres, the pre-write integrity check); nothing in a pipe or beside --json.",
];

/// The man page: clap_mangen's sections, with EXIT STATUS (from [`exit::ALL`]) before VERSION.
fn write_man(out: &mut dyn Write) -> Result<(), CliError> {
    let man = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;
    // Each command's own flags, in this one page (there are no turnscope-<command> pages).
    for sub in <Cli as clap::CommandFactory>::command().get_subcommands() {
        if !sub.get_arguments().any(|a| !a.is_hide_set()) {
            continue;
        }
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut buf)?;
        let text = String::from_utf8_lossy(&buf).replacen(
            ".SH OPTIONS",
            &format!(".SH \"OPTIONS OF turnscope {}\"", sub.get_name()),
            1,
        );
        out.write_all(text.as_bytes())?;
    }
    write_man_keys(out)?;
    man.render_extra_section(out)?;
    writeln!(out, ".SH \"BULK ACTIONS\"")?;
    for line in BULK_MAN {
        writeln!(out, "{}", line.replace('-', "\\-"))?;
    }
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in exit::ALL {
        writeln!(out, ".TP\n\\fB{code}\\fR\n{}", meaning.replace('-', "\\-"))?;
    }
    man.render_version_section(out)?;
    man.render_authors_section(out)?;
    Ok(())
}

/// The TUI's keys, from the keymap the help (`?`) is generated from, so the man page says what
/// the keys do; the ones that exist only with `--write` are tagged.
fn write_man_keys(out: &mut dyn Write) -> Result<(), CliError> {
    let roff = |t: &str| t.replace('\\', "\\e").replace('-', "\\-");
    let read_only: Vec<(&str, &str)> = turnscope_tui::help_groups(false)
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .collect();
    writeln!(out, ".SH \"TUI KEYS\"")?;
    writeln!(
        out,
        "turnscope without a command, on a terminal, opens the TUI. \\fB?\\fR lists these keys, \\fB:\\fR runs any of them by name; the [keys] table of the configuration file rebinds them."
    )?;
    for (title, rows) in turnscope_tui::help_groups(true) {
        writeln!(out, ".SS \"{}\"", roff(title))?;
        for (keys, help) in rows {
            let write = if read_only.contains(&(keys, help)) {
                ""
            } else {
                " (\\-\\-write only)"
            };
            writeln!(out, ".TP\n\\fB{}\\fR\n{}{write}", roff(keys), roff(help))?;
        }
    }
    Ok(())
}

/// `--db` is a flue 2.x journal the TUI reads: an SQLite file 2.x wrote, or a 2.x export.
fn is_flue2_file(cli: &Cli) -> bool {
    match cli.db.as_deref().map(DbTarget::from_path) {
        Some(Ok(db)) => turnscope_tui::flue2::run::Flue2Source::of(&db).is_some(),
        _ => false,
    }
}

fn run_tui(cli: &Cli, db: DbTarget, display_name: Option<String>) -> Result<(), CliError> {
    let mut o = turnscope_tui::TuiOptions::for_target(db);
    o.flue_version = cli.flue_version.clone().or(cli.flue_version_config.clone());
    o.now_override = cli.now_ms;
    o.context_window = cli.context_window;
    o.refresh = cli.refresh.unwrap_or(std::time::Duration::from_secs(2));
    o.palette = cli.theme.unwrap_or_default();
    o.keys = key_overrides(cli)?;
    o.display_name = display_name;
    o.read_only = !cli.write;
    o.operator = if cli.write {
        // Every audit row must say who: an empty operator is refused before the TUI opens.
        confirm::operator(cli)?
    } else {
        // Read-only: write mode can still be switched on in place (`w`), if someone can be
        // recorded as the operator.
        match confirm::operator(cli) {
            Ok(name) => name,
            Err(e) => {
                o.write_refusal = Some(match &e.hint {
                    Some(h) => format!("{} · {h}", e.message),
                    None => e.message.clone(),
                });
                confirm::operator_shown(cli)
            }
        }
    };
    turnscope_tui::run(o).map_err(|e| CliError {
        message: e.to_string(),
        hint: Some(e.hint()),
        code: exit::ERROR,
    })
}

/// The command line as shell completions see it: `--verdict` and `--status` offer their values
/// (the parser checks them itself, with "did you mean"), ids and values offer no file names.
fn completion_command() -> clap::Command {
    // Leaked: the process prints the completions and ends.
    let leak = |v: Vec<String>| -> Vec<&'static str> {
        v.into_iter()
            .map(|s| &*Box::leak(s.into_boxed_str()))
            .collect()
    };
    let verdicts = leak(turnscope_engine::report::verdict_filter::VerdictFilter::names());
    let rules = leak(turnscope_engine::report::rule_filter::rule_names());
    let statuses = leak(
        turnscope_store::RowFilter::all()
            .map(|f| f.name().to_string())
            .collect(),
    );
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |mut s| {
            let has = |s: &clap::Command, id: &str| s.get_arguments().any(|a| a.get_id() == id);
            for flag in ["verdict", "not_verdict"] {
                if has(&s, flag) {
                    let v = verdicts.clone();
                    s = s.mut_arg(flag, |a| {
                        a.value_parser(clap::builder::PossibleValuesParser::new(v))
                    });
                }
            }
            if has(&s, "rule") {
                let v = rules.clone();
                s = s.mut_arg("rule", |a| {
                    a.value_parser(clap::builder::PossibleValuesParser::new(v))
                });
            }
            if has(&s, "status") {
                let v = statuses.clone();
                s = s.mut_arg("status", |a| {
                    a.value_parser(clap::builder::PossibleValuesParser::new(v))
                });
            }
            s
        });
    }
    cmd
}

fn run_demo(
    cli: &Cli,
    path: Option<PathBuf>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let pg = seed::pg_seed_target(cli, path.as_deref())?;
    if let Some(t) = &pg {
        seed::check_reachable(t)?;
    }
    let mut temp = None;
    let path = match (&pg, path) {
        (Some(_), _) => seed::staging_path("demo", now),
        (None, Some(p)) => p,
        (None, None) => {
            let p = std::env::temp_dir()
                .join(format!("turnscope-demo-{}-{now}.db", std::process::id()));
            temp = Some(seed::TempDemo(p.clone()));
            p
        }
    };
    let summary = turnscope_demo::write_demo(&path, now).map_err(|e| {
        CliError::new(
            format!(
                "could not write the demo database at {}: {e}",
                path.display()
            ),
            "give a PATH that does not exist yet in a writable directory",
            exit::ERROR,
        )
    })?;
    let target = match pg {
        Some(t) => {
            seed::seed(&path, &t, json)?;
            DbTarget::Postgres(t)
        }
        None => DbTarget::Sqlite(path),
    };
    let shown = target.display();
    let store = turnscope_store::open(&target)?;
    if !json && std::io::stdout().is_terminal() {
        drop(store);
        let name = format!("demo database ({shown})");
        // `temp` lives until the TUI has quit: then the file goes.
        let result = run_tui(cli, target, Some(name));
        drop(temp);
        return result;
    }
    if !json {
        writeln!(
            out,
            "demo journal database: {shown} ({} submissions, {} sessions, {} entries){}",
            summary.submissions,
            summary.sessions,
            summary.entries,
            if temp.is_some() {
                "; removed when this run ends (give a PATH to keep it)"
            } else {
                ""
            }
        )?;
        writeln!(out)?;
    }
    list::run(
        store.reader(),
        cli,
        &ListArgs {
            json,
            ..ListArgs::default()
        },
        out,
    )?;
    if !json {
        writeln!(out)?;
        if temp.is_some() {
            writeln!(
                out,
                "next: turnscope demo ./demo.db   (a PATH keeps the database for show, list and the TUI)"
            )?;
        } else {
            writeln!(
                out,
                "next: turnscope --db {shown} show <submission>   (any unique id prefix works)"
            )?;
        }
    }
    drop(store);
    drop(temp);
    Ok(())
}
