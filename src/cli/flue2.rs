//! flue 2.x journals (SQLite): `list`, `classify` and `show` on a database 2.x wrote, read-only,
//! and `--flue-version`, which picks the classifier's variant; the actions, `audit` and `undo` are
//! routed to [`super::flue2_act`]. Every other command refuses a 2.x journal in one line
//! (`From<StoreError> for CliError`). See docs/flue2.md.

use std::io::{IsTerminal, Write};

use super::args::{Cli, Command, ListArgs};
use super::common::{exit, now_ms, CliError};
use super::output::{print_json, truncate};
use serde_json::Value;
use turnscope_core::flue2::{EntryBody, Flue2Variant};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{classify_json, Flue2Options, Inspected, Streams};
use turnscope_engine::flue2_cost::{
    attempt_line, attempts_json, cost_json, cost_of, cost_text, AttemptsAndMemos,
};
use turnscope_engine::flue2_memos::{memos_of, StepMemo};
use turnscope_engine::flue2_show::{
    following, trailing_batch_json, user_text, CallOutcome, Outcomes, ShowDocument, ShowView,
};
use turnscope_store::{is_flue2_export, DbTarget, Flue2SqliteReader, JournalFormat, SqliteStore};

/// The release `--flue-version` defaults to.
pub const DEFAULT_RELEASE: &str = "2.1.0";

/// Every release `--flue-version` takes.
fn releases() -> Vec<&'static str> {
    Flue2Variant::ALL
        .iter()
        .flat_map(|v| v.releases().iter().copied())
        .collect()
}

/// `--flue-version`'s release and variant (refused in one line for any other version).
fn options(cli: &Cli) -> Result<Flue2Options, CliError> {
    let release = cli
        .flue_version
        .as_deref()
        .or(cli.flue_version_config.as_deref())
        .unwrap_or(DEFAULT_RELEASE);
    Flue2Options::for_release(release, cli.context_window.unwrap_or(0)).ok_or_else(|| {
        CliError::new(
            format!("unknown flue version {release:?}: turnscope has no classifier for it"),
            format!("use one of: {}", releases().join(", ")),
            exit::USAGE,
        )
    })
}

/// A command on a 2.x SQLite journal read here, or `None` for the usual path (beta.7, and
/// every refusal the usual open gives). `--flue-version` is checked first: an unknown version
/// and a journal that is not 2.x are refused.
pub fn route(cli: &Cli, out: &mut dyn Write) -> Option<Result<(), CliError>> {
    if matches!(
        cli.command,
        Some(
            Command::Config { .. }
                | Command::Completions { .. }
                | Command::Man
                | Command::Demo { .. }
                | Command::CopyToPostgres { .. }
        )
    ) {
        return None;
    }
    // `diff A B` of two 2.x exports without --db: read as `--db A diff A B`, the file the first
    // side names being a database of its own.
    if let (None, Some(Command::Diff(a))) = (&cli.db, &cli.command) {
        let path = std::path::Path::new(&a.a);
        if path.is_file() && is_flue2_export(path) {
            let mut with_db = cli.clone();
            with_db.db = Some(path.to_path_buf());
            return route(&with_db, out);
        }
    }
    let given = cli.flue_version.is_some();
    let opts = match options(cli) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    let target = cli
        .db
        .as_deref()
        .and_then(|p| DbTarget::from_path(p).ok())?;
    let (path, export) = match target {
        DbTarget::Sqlite(path) => (path, false),
        DbTarget::Export(path) if is_flue2_export(&path) => (path, true),
        _ if given => {
            return Some(Err(CliError::new(
                "--flue-version applies to flue 2.x journals, which turnscope reads from SQLite files only",
                "leave out --flue-version: PostgreSQL journals and exports are read as flue 1.0.0-beta.7",
                exit::USAGE,
            )))
        }
        _ => return None,
    };
    // A file that cannot be opened is refused by the usual open, with its own words.
    let format = if export {
        // Its own flue_meta is checked when it is loaded.
        JournalFormat::Flue2 {
            format_version: "1".into(),
        }
    } else {
        SqliteStore::detect_format(&path).ok()?
    };
    // No command in a pipe prints the list (on a terminal it opens the TUI, which refuses 2.x).
    let piped_list = cli.command.is_none() && !std::io::stdout().is_terminal();
    let reads = piped_list
        || matches!(
            cli.command,
            Some(
                Command::List(_)
                    | Command::Show { .. }
                    | Command::Classify { .. }
                    | Command::Incidents { .. }
                    | Command::Sessions(_)
                    | Command::Export(_)
                    | Command::Wait(_)
                    | Command::Diff(_)
                    | Command::NextRequest { .. }
                    | Command::Health(_)
            )
        );
    let acts = matches!(
        cli.command,
        Some(
            Command::Abort(_)
                | Command::Requeue(_)
                | Command::Extend(_)
                | Command::Fail(_)
                | Command::Audit(_)
                | Command::Undo(_)
        )
    );
    match format {
        JournalFormat::Flue2 { format_version } if format_version == "1" && reads => {
            Some(run(cli, &opts, &path, export, out))
        }
        // Every other command refuses a 2.x export as it refuses the journal.
        JournalFormat::Flue2 { format_version } if export => {
            Some(Err(turnscope_store::StoreError::NewerFormat {
                format_version,
            }
            .into()))
        }
        JournalFormat::Flue2 { format_version }
            if format_version == "1" && matches!(cli.command, Some(Command::Repair(_))) =>
        {
            Some(Err(super::flue2_health::refuse_repair()))
        }
        JournalFormat::Flue2 { format_version } if format_version == "1" && acts => {
            Some(super::flue2_act::run(cli, &opts, &path, out))
        }
        JournalFormat::Flue2 { .. } => None,
        other if given => Some(Err(CliError::new(
            format!(
                "--flue-version {} picks a flue 2.x classifier, but this journal was written by {}",
                opts.release,
                other.writer()
            ),
            "leave out --flue-version: it applies to flue 2.x journals only",
            exit::USAGE,
        ))),
        _ => None,
    }
}

fn run(
    cli: &Cli,
    opts: &Flue2Options,
    path: &std::path::Path,
    export: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let reader = if export {
        Flue2SqliteReader::open_export(path)?
    } else {
        Flue2SqliteReader::open(path)?
    };
    match &cli.command {
        Some(Command::List(a)) => super::flue2_list::list(cli, opts, &reader, a, out),
        Some(Command::Show { submission, json }) => {
            one(cli, opts, &reader, submission, *json, true, out)
        }
        Some(Command::Classify { submission, json }) => {
            one(cli, opts, &reader, submission, *json, false, out)
        }
        Some(Command::Sessions(a)) => super::flue2_sessions::run(opts, &reader, a, out),
        Some(Command::Diff(a)) => super::flue2_diff::run(cli, opts, &reader, a, out),
        Some(Command::Export(a)) => super::flue2_export::run(cli, opts, &reader, a, out),
        Some(Command::Wait(a)) => super::flue2_wait::run(cli, opts, &reader, a, out),
        Some(Command::Incidents { json }) => {
            super::flue2_incidents::run(cli, opts, &reader, *json, out)
        }
        Some(Command::NextRequest {
            target,
            vision,
            json,
        }) => super::flue2_next_request::run(cli, opts, &reader, target, *vision, *json, out),
        Some(Command::Health(a)) => super::flue2_health::run(cli, opts, &reader, a, out),
        None => super::flue2_list::list(cli, opts, &reader, &ListArgs::default(), out),
        _ => unreachable!("route only runs the commands READS_FLUE2 names"),
    }
}

fn one(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    query: &str,
    json: bool,
    show: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    // Never dropped: a whale's folded stream is hundreds of thousands of small allocations,
    // and freeing them one by one costs a fifth of the command; the process ends right after
    // printing (every caller runs one command per process), and exit returns the memory at once.
    let mut streams = std::mem::ManuallyDrop::new(Streams::default());
    let (row, joined, memos, attempts) = reader.in_snapshot(|reader| {
        let row = reader.find_submission(query)?;
        let joined = reader.joined_into(&row.submission_id)?;
        // `show` puts each tool call's step memos under it, and the attempts' records: seen as
        // the fold reads the stream.
        let (attempts, memos) = match (show, row.session()) {
            (true, Some(k)) => {
                let mut seen = AttemptsAndMemos::new(&row);
                streams.load_observed(reader, &k.stream_path(), |b, r| seen.observe(b, r))?;
                seen.finish()
            }
            _ => {
                streams.load(reader, [&row])?;
                (Vec::new(), Vec::new())
            }
        };
        Ok((row, joined, memos, attempts))
    })?;
    let i = streams.inspect(&row, opts, joined, now);
    let folded = i.stream_path.as_deref().and_then(|p| streams.get(p));
    let batches = folded.map_or(0, |f| f.batches);
    let not_utf8 = folded.map_or(&[][..], |f| &f.not_utf8[..]);
    let fv = reader.format_version();
    if json {
        if show {
            let view = ShowView {
                inspected: &i,
                batches,
                not_utf8,
                memos: &memos,
            };
            let mut doc = ShowDocument::new(opts, fv, &view, now);
            doc.head.insert(
                "cost".into(),
                cost_of(&i).map_or(Value::Null, |c| cost_json(&c)),
            );
            doc.head
                .insert("attempts".into(), attempts_json(&attempts, &row));
            doc.write_pretty(out)?;
        } else {
            print_json(out, &classify_json(opts, fv, &i, now))?;
        }
        return Ok(());
    }
    writeln!(out, "{}", opts.header_line(fv))?;
    writeln!(
        out,
        "submission {}  {}",
        sanitize(&row.submission_id),
        sanitize(&i.label())
    )?;
    let kv = |out: &mut dyn Write, k: &str, v: String| writeln!(out, "  {k:<16}{v}");
    match &i.verdict {
        Ok(c) => {
            kv(
                out,
                "rule",
                format!(
                    "step {} of the decision order: {}",
                    c.explanation.step,
                    sanitize(&c.explanation.rule)
                ),
            )?;
            if !c.explanation.entry_ids.is_empty() {
                kv(
                    out,
                    "entries",
                    sanitize(&c.explanation.entry_ids.join(", ")),
                )?;
            }
        }
        Err(e) => kv(out, "error", sanitize(e))?,
    }
    kv(
        out,
        "context window",
        sanitize(&opts.window_for(i.conversation).describe()),
    )?;
    write_plan(&i, show, out)?;
    if !show {
        if row.status != "running" {
            kv(
                out,
                "note",
                format!(
                    "the row is {}: the runtime only recovers running submissions",
                    sanitize(&row.status)
                ),
            )?;
        }
        return Ok(());
    }
    writeln!(out)?;
    let key = row.session();
    kv(out, "sequence", row.sequence.to_string())?;
    kv(
        out,
        "kind",
        format!(
            "{} (agent {})",
            sanitize(&row.kind),
            sanitize(key.as_ref().map_or("?", |k| k.agent_name.as_str()))
        ),
    )?;
    kv(
        out,
        "instance",
        sanitize(key.as_ref().map_or("?", |k| k.instance_id.as_str())),
    )?;
    kv(out, "status", sanitize(&row.status))?;
    kv(
        out,
        "attempts",
        format!(
            "{}/{}  attempt {}",
            row.attempt_count,
            row.max_attempts,
            sanitize(row.attempt_id.as_deref().unwrap_or("-"))
        ),
    )?;
    kv(
        out,
        "lease",
        format!(
            "{}  owner {}",
            super::flue2_list::lease_text(&row, now),
            sanitize(row.owner_id.as_deref().unwrap_or("-"))
        ),
    )?;
    let time = |t: Option<i64>| t.filter(|t| *t > 0).map_or("no".into(), iso_from_ms);
    kv(out, "input applied", time(row.input_applied_at))?;
    if row.timeout_at > 0 {
        kv(out, "timeout at", iso_from_ms(row.timeout_at))?;
    }
    if let Some(t) = row.abort_requested_at {
        kv(out, "abort requested", iso_from_ms(t))?;
    }
    if let Some(j) = &row.joined_into {
        kv(out, "joined into", sanitize(j))?;
    }
    if let Some(t) = row.settled_at {
        kv(out, "settled at", iso_from_ms(t))?;
    }
    if let Some(outcome) = row.settlement_outcome() {
        kv(out, "settlement", format!("outcome {}", sanitize(&outcome)))?;
    }
    if row.status == "running" && row.attempts_exhausted() {
        kv(
            out,
            "note",
            "every attempt of its budget is spent (attempt_count >= max_attempts)".into(),
        )?;
    }
    if row.status == "running" && row.deadline_passed(now) {
        kv(out, "note", "its deadline (timeout_at) has passed".into())?;
    }
    if let Some(e) = &row.error {
        kv(out, "error", sanitize(e))?;
    }
    if !row.not_utf8.is_empty() {
        kv(
            out,
            "damaged",
            format!(
                "{} not valid UTF-8 (read with replacement characters, as the runtime reads it)",
                row.not_utf8.join(", ")
            ),
        )?;
    }
    kv(
        out,
        "stream",
        format!(
            "{}  {batches} batch(es)",
            sanitize(i.stream_path.as_deref().unwrap_or("-"))
        ),
    )?;
    if !not_utf8.is_empty() {
        let seqs: Vec<String> = not_utf8.iter().map(i64::to_string).collect();
        kv(
            out,
            "damaged",
            format!(
                "batch(es) {} not valid UTF-8 (read with replacement characters, as the runtime reads them)",
                seqs.join(", ")
            ),
        )?;
    }
    if let Some(c) = cost_of(&i) {
        let t = c.total();
        kv(
            out,
            "cost",
            format!(
                "{} since the input: {} assistant(s), {} tokens ({} in, {} out, {} cache read, {} cache write); aborted partials {}, abandoned {}{}",
                cost_text(Some(&t)),
                t.assistants,
                t.total_tokens,
                t.input,
                t.output,
                t.cache_read,
                t.cache_write,
                cost_text(Some(&c.aborted)),
                cost_text(Some(&c.abandoned)),
                if c.in_progress > 0 {
                    format!("; {} message(s) in progress (no usage yet)", c.in_progress)
                } else {
                    String::new()
                }
            ),
        )?;
    }
    kv(
        out,
        "attempts seen",
        format!(
            "{} of the row's {} wrote records",
            attempts.len(),
            row.attempt_count
        ),
    )?;
    for a in &attempts {
        kv(out, "", sanitize(&attempt_line(a, &row)))?;
    }
    writeln!(out)?;
    write_conversation(&i, &memos, out)?;
    Ok(())
}

/// What the runtime's recovery does next (see [`super::flue2_plan::write_flue2_plan`]).
fn write_plan(i: &Inspected<'_>, full: bool, out: &mut dyn Write) -> Result<(), CliError> {
    super::flue2_plan::write_flue2_plan(&i.plan, "next", full, out)
}

/// The conversation after the input entry, the in-progress messages, the recorded outcomes and
/// the trailing batch.
fn write_conversation(
    i: &Inspected<'_>,
    memos: &[StepMemo],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let input = i.row.input_entry_id();
    let Some(conv) = i.conversation else {
        writeln!(
            out,
            "conversation: none (the instance has no conversation for this session)"
        )?;
        return Ok(());
    };
    if !conv.has_entry(&input) {
        writeln!(
            out,
            "conversation: the input entry {} is not there",
            sanitize(&input)
        )?;
    } else {
        let after = following(Some(conv), &input);
        let outcomes = Outcomes::new(conv, &after);
        writeln!(
            out,
            "conversation after the input {} ({} committed entr{})",
            sanitize(&input),
            after.len(),
            if after.len() == 1 { "y" } else { "ies" }
        )?;
        for e in &after {
            let id = sanitize(&e.id);
            match &e.body {
                EntryBody::User { content } => {
                    let other = e
                        .submission_id
                        .as_deref()
                        .filter(|s| *s != i.row.submission_id)
                        .map_or(String::new(), |s| format!("  (submission {})", sanitize(s)));
                    writeln!(
                        out,
                        "  user       {id}{other}  {}",
                        sanitize(&truncate(&user_text(content), 60))
                    )?;
                }
                EntryBody::Signal { signal_type } => {
                    writeln!(out, "  signal     {id}  {}", sanitize(signal_type))?
                }
                EntryBody::Assistant {
                    stop_reason,
                    error_message,
                    text,
                    tool_calls,
                    ..
                } => {
                    writeln!(
                        out,
                        "  assistant  {id}  {}{}  {}",
                        sanitize(stop_reason),
                        error_message.as_deref().map_or(String::new(), |m| format!(
                            ": {}",
                            sanitize(&truncate(m, 60))
                        )),
                        sanitize(&truncate(text, 60))
                    )?;
                    for c in tool_calls {
                        let outcome = match outcomes.of(&e.id, &c.id) {
                            CallOutcome::Committed { entry_id, is_error } => format!(
                                "committed {}{}",
                                sanitize(&entry_id),
                                if is_error { " (error)" } else { "" }
                            ),
                            CallOutcome::Recorded {
                                record_id,
                                is_error,
                            } => format!(
                                "recorded, not committed (record {}){}",
                                sanitize(&record_id),
                                if is_error { " (error)" } else { "" }
                            ),
                            CallOutcome::None => "no outcome".into(),
                        };
                        writeln!(
                            out,
                            "    call     {} {}  → {outcome}",
                            sanitize(&c.name),
                            sanitize(&c.id)
                        )?;
                        for m in memos_of(memos, &c.id) {
                            writeln!(
                                out,
                                "      step   {}  memo {} in batch {} (replayed on a re-run)",
                                sanitize(&m.step_name),
                                sanitize(&m.record_id),
                                m.seq
                            )?;
                        }
                    }
                }
                EntryBody::ToolResult {
                    tool_call_id,
                    tool_name,
                    is_error,
                    terminate,
                } => writeln!(
                    out,
                    "  result     {id}  {} {}{}{}",
                    sanitize(tool_name),
                    sanitize(tool_call_id),
                    if *is_error { "  error" } else { "" },
                    if *terminate { "  terminate" } else { "" }
                )?,
                EntryBody::Compaction {
                    first_kept_entry_id,
                } => writeln!(
                    out,
                    "  compaction {id}  first kept {}",
                    sanitize(first_kept_entry_id)
                )?,
            }
        }
    }
    for m in &conv.in_progress {
        let text: String = m.blocks.iter().map(|b| b.deltas.concat()).collect();
        writeln!(
            out,
            "in progress (not an entry; the classifier does not see it): message {}  submission {}  {} block(s)  {}",
            sanitize(&m.message_id),
            sanitize(m.submission_id.as_deref().unwrap_or("-")),
            m.blocks.len(),
            sanitize(&truncate(&text, 60))
        )?;
    }
    for o in &conv.uncommitted_outcomes {
        writeln!(
            out,
            "recorded, not committed: outcome of {} (record {}){}",
            sanitize(&o.tool_call_id),
            sanitize(&o.record_id),
            if o.is_error { " error" } else { "" }
        )?;
    }
    let after = following(i.conversation, &i.row.input_entry_id());
    let batch = trailing_batch_json(i, &after, None);
    if !batch.is_null() {
        let calls: Vec<String> = batch["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} ({})",
                    c["id"].as_str().unwrap_or(""),
                    c["outcome"]["state"].as_str().unwrap_or("")
                )
            })
            .collect();
        writeln!(
            out,
            "TRAILING UNCOMMITTED BATCH: assistant {}{}: {}",
            sanitize(batch["assistantEntryId"].as_str().unwrap_or("")),
            if batch["atLeaf"] == true {
                " at the leaf"
            } else {
                ""
            },
            sanitize(&calls.join(", "))
        )?;
    }
    Ok(())
}
