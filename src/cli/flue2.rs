//! flue 2.x journals (SQLite), read-only: `list`, `classify` and `show` on a database 2.x wrote,
//! and `--flue-version`, which picks the classifier's variant. Every other command refuses a 2.x
//! journal in one line (`From<StoreError> for CliError`). See docs/flue2.md.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use super::args::{Cli, Command, ListArgs};
use super::common::{exit, now_ms, CliError};
use super::output::{print_json, truncate};
use turnscope_core::flue2::{EntryBody, Flue2SubmissionRow, Flue2Variant, FLUE2_STATUSES};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{
    classify_json, following, list_json, show_json, trailing_batch_json, user_text, CallOutcome,
    Flue2Options, Inspected, Outcomes, ShowView, Streams,
};
use turnscope_store::{DbTarget, Flue2SqliteReader, JournalFormat, SqliteStore};

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
    let release = cli.flue_version.as_deref().unwrap_or(DEFAULT_RELEASE);
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
    let given = cli.flue_version.is_some();
    let opts = match options(cli) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    let target = cli
        .db
        .as_deref()
        .and_then(|p| DbTarget::from_path(p).ok())?;
    let path = match target {
        DbTarget::Sqlite(path) => path,
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
    let format = SqliteStore::detect_format(&path).ok()?;
    // No command in a pipe prints the list (on a terminal it opens the TUI, which refuses 2.x).
    let piped_list = cli.command.is_none() && !std::io::stdout().is_terminal();
    let reads = piped_list
        || matches!(
            cli.command,
            Some(Command::List(_) | Command::Show { .. } | Command::Classify { .. })
        );
    match format {
        JournalFormat::Flue2 { format_version } if format_version == "1" && reads => {
            Some(run(cli, &opts, &path, out))
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
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let reader = Flue2SqliteReader::open(path)?;
    match &cli.command {
        Some(Command::List(a)) => list(cli, opts, &reader, a, out),
        Some(Command::Show { submission, json }) => {
            one(cli, opts, &reader, submission, *json, true, out)
        }
        Some(Command::Classify { submission, json }) => {
            one(cli, opts, &reader, submission, *json, false, out)
        }
        None => list(cli, opts, &reader, &ListArgs::default(), out),
        _ => unreachable!("route only runs list, show and classify"),
    }
}

/// A `list` flag this slice does not read on a 2.x journal, refused by name.
fn unsupported_list_flag(a: &ListArgs) -> Option<&'static str> {
    let s = &a.selection;
    [
        (a.watch.is_some(), "--watch"),
        (a.sort.is_some(), "--sort"),
        (a.output.is_some(), "--output"),
        (s.verdict.is_some(), "--verdict"),
        (s.not_verdict.is_some(), "--not-verdict"),
        (s.rule.is_some(), "--rule"),
        (s.owner.is_some(), "--owner"),
        (s.older_than.is_some(), "--older-than"),
    ]
    .into_iter()
    .find(|(set, _)| *set)
    .map(|(_, name)| name)
}

fn list(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    a: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(flag) = unsupported_list_flag(a) {
        return Err(CliError::new(
            format!("list {flag} does not read flue 2.x journals yet"),
            "on a flue 2.x journal list takes --expired, --status, --kind, --instance, --limit and --json",
            exit::USAGE,
        ));
    }
    let s = &a.selection;
    let view = s.status.as_deref().unwrap_or("expired");
    if view != "expired" && view != "all" && !FLUE2_STATUSES.contains(&view) {
        return Err(CliError::new(
            format!("unknown status {view:?} for a flue 2.x journal"),
            format!(
                "use one of: expired, all, {} (or --expired)",
                FLUE2_STATUSES.join(", ")
            ),
            exit::USAGE,
        ));
    }
    let now = now_ms(cli);
    let keep = |r: &Flue2SubmissionRow| {
        (match view {
            "expired" => r.lease_expired(now),
            "all" => true,
            status => r.status == status,
        }) && s.kind.as_deref().is_none_or(|k| r.kind == k)
            && s.instance
                .as_deref()
                .is_none_or(|i| r.session().is_some_and(|k| k.instance_id == i))
    };
    // Never dropped: a whale's folded stream is hundreds of thousands of small allocations,
    // and freeing them one by one costs a fifth of the command; the process ends right after
    // printing (every caller runs one command per process), and exit returns the memory at once.
    let mut streams = std::mem::ManuallyDrop::new(Streams::default());
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let rows = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        for r in &all {
            if let (Some(host), "joined") = (&r.joined_into, r.status.as_str()) {
                joined
                    .entry(host.clone())
                    .or_default()
                    .push(r.submission_id.clone());
            }
        }
        let mut rows: Vec<Flue2SubmissionRow> = all.into_iter().filter(keep).collect();
        if let Some(n) = s.limit {
            rows.truncate(n);
        }
        streams.load(reader, &rows)?;
        Ok(rows)
    })?;
    let inspected: Vec<Inspected<'_>> = rows
        .iter()
        .map(|r| {
            let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
            streams.inspect(r, opts, j, now)
        })
        .collect();
    if a.json {
        print_json(
            out,
            &list_json(opts, reader.format_version(), view, &inspected, now),
        )?;
        return Ok(());
    }
    writeln!(out, "{}", opts.header_line(reader.format_version()))?;
    if inspected.is_empty() {
        writeln!(out, "no submissions in view {view}")?;
        return Ok(());
    }
    let table: Vec<[String; 8]> = inspected
        .iter()
        .map(|i| {
            let r = i.row;
            [
                sanitize(&r.submission_id),
                sanitize(&r.kind),
                sanitize(&r.session().map_or_else(
                    || "?".into(),
                    |k| format!("{}/{}", k.agent_name, k.instance_id),
                )),
                sanitize(&r.status),
                format!("{}/{}", r.attempt_count, r.max_attempts),
                lease_text(r, now),
                sanitize(&i.label()),
                i.plan.step.column(),
            ]
        })
        .collect();
    let head = [
        "ID", "KIND", "INSTANCE", "STATUS", "ATTEMPTS", "LEASE", "VERDICT", "NEXT",
    ];
    let mut width = head.map(|h| h.chars().count());
    for row in &table {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (n, (c, w)) in cells.iter().zip(width).enumerate() {
            if n + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s
    };
    writeln!(out, "{}", line(head.to_vec()))?;
    for row in &table {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    writeln!(out, "{} submission(s) in view {view}", table.len())?;
    Ok(())
}

/// A duration as `1h2m`, `3m4s` or `5s`.
fn span(ms: i64) -> String {
    let s = ms.unsigned_abs() / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// The lease column: expired (running, past), held, or none.
fn lease_text(r: &Flue2SubmissionRow, now: i64) -> String {
    if r.lease_expires_at <= 0 {
        return "-".into();
    }
    let d = r.lease_expires_at - now;
    if r.lease_expired(now) {
        format!("expired {} ago", span(d))
    } else if d >= 0 {
        format!("{} left", span(d))
    } else {
        format!("ended {} ago", span(d))
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
    let (row, joined) = reader.in_snapshot(|reader| {
        let row = reader.find_submission(query)?;
        let joined = reader.joined_into(&row.submission_id)?;
        streams.load(reader, [&row])?;
        Ok((row, joined))
    })?;
    let i = streams.inspect(&row, opts, joined, now);
    let batches = i
        .stream_path
        .as_deref()
        .and_then(|p| streams.get(p))
        .map_or(0, |f| f.batches);
    let fv = reader.format_version();
    if json {
        let doc = if show {
            show_json(
                opts,
                fv,
                &ShowView {
                    inspected: &i,
                    batches,
                },
                now,
            )
        } else {
            classify_json(opts, fv, &i, now)
        };
        print_json(out, &doc)?;
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
        match opts.context_window {
            0 => "0 (no silent-overflow check; --context-window N sets it)".into(),
            n => n.to_string(),
        },
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
            lease_text(&row, now),
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
    kv(
        out,
        "stream",
        format!(
            "{}  {batches} batch(es)",
            sanitize(i.stream_path.as_deref().unwrap_or("-"))
        ),
    )?;
    writeln!(out)?;
    write_conversation(&i, out)?;
    Ok(())
}

/// What the runtime's recovery does next: the step and why; with `full` (show) its writes, the
/// row after it and the resume.
fn write_plan(i: &Inspected<'_>, full: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let p = &i.plan;
    let kv = |out: &mut dyn Write, k: &str, v: String| writeln!(out, "  {k:<16}{v}");
    let step = match p.step.number() {
        Some(n) => format!("step {n} ({}) of the reconciler", p.step.name()),
        None => format!("no reconciler step ({})", p.step.name()),
    };
    kv(out, "next", format!("{step}: {}", sanitize(&p.why)))?;
    if !full {
        return Ok(());
    }
    for (n, w) in p.writes.iter().enumerate() {
        writeln!(out, "    {}. {}", n + 1, sanitize(&w.describe()))?;
    }
    if let Some(a) = &p.row_after {
        kv(
            out,
            "row after",
            format!(
                "status {}, attempts {}, attempt id {}, error {}{}",
                sanitize(&a.status),
                a.attempt_count,
                match a.attempt_id {
                    turnscope_core::flue2::AttemptChange::Same => "kept",
                    turnscope_core::flue2::AttemptChange::New => "new",
                    turnscope_core::flue2::AttemptChange::Cleared => "cleared",
                },
                a.error
                    .as_deref()
                    .map_or("none".into(), |e| format!("{:?}", sanitize(e))),
                a.settlement_outcome
                    .as_deref()
                    .map_or(String::new(), |o| format!(
                        ", settlement outcome {}",
                        sanitize(o)
                    ))
            ),
        )?;
    }
    if let Some(r) = &p.resume {
        kv(
            out,
            "resume",
            format!(
                "what the {} will do",
                if r.after == "replacement" {
                    "replacement attempt"
                } else {
                    "next claim"
                }
            ),
        )?;
        for (n, a) in r.actions.iter().enumerate() {
            writeln!(out, "    {}. {}", n + 1, sanitize(&a.describe()))?;
        }
        writeln!(
            out,
            "    then: {} (classified {} after its repairs)",
            sanitize(&r.end.describe()),
            sanitize(&r.classification)
        )?;
    }
    Ok(())
}

/// The conversation after the input entry, the in-progress messages, the recorded outcomes and
/// the trailing batch.
fn write_conversation(i: &Inspected<'_>, out: &mut dyn Write) -> Result<(), CliError> {
    let input = i.row.input_entry_id();
    let Some(conv) = i.conversation else {
        writeln!(
            out,
            "conversation: none (the instance has no conversation for this session)"
        )?;
        return Ok(());
    };
    if !conv.entries.contains_key(&input) {
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
    let batch = trailing_batch_json(i);
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
