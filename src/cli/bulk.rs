//! A bulk apply: `turnscope --write <action> ID ID… | --all [filters] [--rate N/s]`.
//!
//! The selection is read once and frozen (full ids); each submission is read whole and planned;
//! the preview groups them by what will happen (the computed prediction, the no-ops, the
//! refusals); one confirmation covers the batch (the count typed for 10 or more); then one fenced
//! transaction per submission, all under one batch id, where a refusal or a change since the
//! preview stops only that one. The summary (or one `turnscope.bulk/1` document) says what
//! happened to each.

use super::output::print_json;
use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::json;

use super::args::{BulkActionArgs, Cli, SelectionArgs};
use super::progress::Bar;
use super::{confirm, exit, select, CliError};
use turnscope_core::text::sanitize;
use turnscope_engine::actions::bulk::{self, GroupKey, Section};
use turnscope_engine::actions::{run, ActionKind, ActionPlan, Extension, IdSource, Refusal};
use turnscope_store::{Applied, ApplyError, JournalStore};

/// How many submissions each group of the preview and the summary lists before "and N more".
const SHOWN_PER_GROUP: usize = 20;

/// What happened to one submission of the batch.
#[derive(Debug)]
enum Outcome {
    /// Planned, not written (a dry run, a declined batch, or not reached yet).
    Planned,
    Applied(Applied),
    Noop,
    Refused(Refusal),
    /// The fence found it changed between the preview and its write: nothing written.
    Changed(Vec<String>),
    /// The write failed (the database, not the submission's state): nothing written.
    Error(String),
}

impl Outcome {
    fn name(&self) -> &'static str {
        match self {
            Outcome::Planned => "planned",
            Outcome::Applied(_) => "applied",
            Outcome::Noop => "noop",
            Outcome::Refused(_) => "refused",
            Outcome::Changed(_) => "changed",
            Outcome::Error(_) => "error",
        }
    }
}

/// One submission of the batch: where it stood at the preview's read and its plan.
struct Item {
    id: String,
    /// Verdict and rule at the read (`resume/tool_results · rule 5 → replacement`).
    before: String,
    plan: Result<ActionPlan, Refusal>,
    outcome: Outcome,
}

impl Item {
    fn writes(&self) -> bool {
        self.plan.as_ref().is_ok_and(|p| !p.is_noop())
    }
}

/// The selection filters given, as flags (for the preview and the JSON document).
pub(super) fn selection_flags(sel: &SelectionArgs) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(s) = &sel.status {
        f.push(format!("--status {s}"));
    }
    let mut add = |flag: &str, v: &Option<String>| {
        if let Some(v) = v {
            f.push(format!("--{flag} {v}"));
        }
    };
    add("kind", &sel.kind);
    add("verdict", &sel.verdict);
    add("not-verdict", &sel.not_verdict);
    add("rule", &sel.rule);
    add("instance", &sel.instance);
    add("owner", &sel.owner);
    if let Some(age) = sel.older_than {
        f.push(format!("--older-than {}s", age.as_secs()));
    }
    if let Some(n) = sel.limit {
        f.push(format!("--limit {n}"));
    }
    f
}

/// Usage errors of the selection, before anything is opened.
pub(super) fn check_selection(args: &BulkActionArgs) -> Result<(), CliError> {
    let flags = selection_flags(&args.selection);
    if !args.all && (!flags.is_empty() || args.selection.expired) {
        return Err(CliError::new(
            format!(
                "{} selects with --all; with ids it acts on exactly those",
                if flags.is_empty() {
                    "--expired".to_string()
                } else {
                    flags.join(" ")
                }
            ),
            "add --all to act on every submission the filters select, or drop the filters",
            exit::USAGE,
        ));
    }
    Ok(())
}

/// The frozen selection: full ids, in order, each once, read in one snapshot.
fn frozen(
    store: &dyn JournalStore,
    args: &BulkActionArgs,
    context_window: Option<u64>,
    now: i64,
) -> Result<Vec<String>, CliError> {
    if args.all {
        let mut ids = Vec::new();
        select::scan(store, &args.selection, context_window, now, &mut |r| {
            ids.push(r.row().submission_id.clone())
        })?;
        return Ok(ids);
    }
    let mut ids: Vec<String> = Vec::new();
    let mut failed = None;
    store.in_snapshot(&mut || {
        for q in &args.submissions {
            match store.find_submission(q) {
                Ok(row) if !ids.contains(&row.submission_id) => ids.push(row.submission_id),
                Ok(_) => {}
                Err(e) => {
                    // An id that names nothing (or several) stops the batch before any preview.
                    failed = Some(e);
                    return Ok(());
                }
            }
        }
        Ok(())
    })?;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(ids),
    }
}

/// How the preview and the summary group submissions (the engine's grouping, shared with the
/// TUI): what will happen (or happened), and what to do instead.
fn group_key(item: &Item) -> GroupKey {
    match (&item.outcome, &item.plan) {
        (Outcome::Changed(_), _) => GroupKey::changed(),
        (Outcome::Error(e), _) => GroupKey::failed(e),
        (Outcome::Refused(r), _) => GroupKey::refused(r),
        (_, plan) => GroupKey::of_plan(plan),
    }
}

/// What to do instead for one refused submission (shown under it when its group's members
/// differ).
fn own_instead(item: &Item) -> Option<&str> {
    match (&item.outcome, &item.plan) {
        (Outcome::Refused(r), _) | (_, Err(r)) => Some(&r.instead),
        _ => None,
    }
}

/// Write the items grouped: each group's count and heading, then up to [`SHOWN_PER_GROUP`]
/// submissions and "and N more".
fn write_groups(items: &[&Item], members: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let keys: Vec<GroupKey> = items.iter().map(|i| group_key(i)).collect();
    for g in bulk::group(&keys) {
        writeln!(out, "  {} · {}", g.members.len(), sanitize(&g.heading))?;
        if let Some(h) = &g.instead {
            writeln!(out, "    instead: {}", sanitize(h))?;
        }
        if !members {
            continue;
        }
        for &i in g.members.iter().take(SHOWN_PER_GROUP) {
            let item = items[i];
            let what = item.plan.as_ref().map_or("", |p| p.summary.as_str());
            let line = format!("    {}  {}  {}", item.id, item.before, what);
            writeln!(out, "{}", sanitize(line.trim_end()))?;
            if let (None, Some(instead)) = (&g.instead, own_instead(item)) {
                writeln!(out, "      instead: {}", sanitize(instead))?;
            }
        }
        if g.members.len() > SHOWN_PER_GROUP {
            writeln!(out, "    and {} more", g.members.len() - SHOWN_PER_GROUP)?;
        }
    }
    Ok(())
}

fn write_preview(
    kind: ActionKind,
    args: &BulkActionArgs,
    items: &[Item],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let what = if args.all {
        let flags = selection_flags(&args.selection);
        format!(
            "--all: {}{}",
            args.selection
                .status
                .as_deref()
                .map_or("the expired view".to_string(), |s| format!("status {s}")),
            flags
                .iter()
                .filter(|f| !f.starts_with("--status"))
                .map(|f| format!(", {f}"))
                .collect::<String>()
        )
    } else {
        "the ids given".to_string()
    };
    writeln!(
        out,
        "{}: {} submission(s) selected ({}), read once",
        kind.as_str(),
        items.len(),
        sanitize(&what)
    )?;
    let part = |section: Section| {
        items
            .iter()
            .filter(|i| GroupKey::of_plan(&i.plan).section == section)
            .collect::<Vec<_>>()
    };
    for section in [Section::Write, Section::Nothing, Section::Refused] {
        let group = part(section);
        if !group.is_empty() {
            writeln!(out, "{}: {}", section.title(), group.len())?;
            write_groups(&group, true, out)?;
        }
    }
    // Said before the question: which writes the batch cannot take back.
    if let Some(line) = bulk::cannot_undo(items.iter().map(|i| &i.plan)) {
        writeln!(out, "warning: {}", sanitize(&line))?;
    }
    for (id, plan) in items
        .iter()
        .filter_map(|i| Some((&i.id, i.plan.as_ref().ok()?)))
        .filter(|(_, p)| !p.side_effects.is_empty())
    {
        writeln!(out, "{}:", sanitize(id))?;
        super::act::write_side_effects(&plan.side_effects, out)?;
    }
    Ok(())
}

/// Counts of the outcomes: (applied, noop, refused or changed, errors).
fn counts(items: &[Item]) -> (usize, usize, usize, usize) {
    let n = |f: fn(&Outcome) -> bool| items.iter().filter(|i| f(&i.outcome)).count();
    (
        n(|o| matches!(o, Outcome::Applied(_))),
        n(|o| matches!(o, Outcome::Noop)),
        n(|o| matches!(o, Outcome::Refused(_) | Outcome::Changed(_))),
        n(|o| matches!(o, Outcome::Error(_))),
    )
}

fn write_summary(items: &[Item], batch: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let (applied, noop, refused, errors) = counts(items);
    writeln!(
        out,
        "applied {applied}, nothing to write {noop}, refused {refused}{} (batch {batch})",
        if errors > 0 {
            format!(", failed {errors}")
        } else {
            String::new()
        }
    )?;
    // Refused at the preview: the preview listed them; the reasons again, with their counts.
    let at_preview: Vec<&Item> = items.iter().filter(|i| i.plan.is_err()).collect();
    if !at_preview.is_empty() {
        writeln!(out, "refused at the preview (listed above):")?;
        write_groups(&at_preview, false, out)?;
    }
    // Refused at the write: new since the preview, so each is named.
    let at_write: Vec<&Item> = items
        .iter()
        .filter(|i| {
            i.plan.is_ok()
                && matches!(
                    i.outcome,
                    Outcome::Refused(_) | Outcome::Changed(_) | Outcome::Error(_)
                )
        })
        .collect();
    if !at_write.is_empty() {
        writeln!(out, "not applied at the write:")?;
        write_groups(&at_write, true, out)?;
    }
    if applied > 0 {
        let published = items
            .iter()
            .filter(|i| matches!(i.outcome, Outcome::Applied(_)))
            .filter(|i| {
                i.plan
                    .as_ref()
                    .is_ok_and(|p| p.published_stream().is_some())
            })
            .count();
        if published > 0 {
            writeln!(
                out,
                "undo: not possible for this batch: {} appended a terminal event to an event stream (subscribers may have seen it); `turnscope --write undo <audit-id>` reverts any other record while the runtime has not acted on it yet",
                turnscope_core::text::plural(published as u64, "submission", "submissions")
            )?;
        } else {
            writeln!(
                out,
                "undo: `turnscope --write undo {batch}` reverts the batch while the runtime has not acted on it yet"
            )?;
        }
        writeln!(out, "next: `turnscope audit` lists its rows")?;
    }
    Ok(())
}

/// The `turnscope.bulk/1` document.
fn bulk_json(
    kind: ActionKind,
    args: &BulkActionArgs,
    database: &str,
    batch: Option<&str>,
    now: i64,
    items: &[Item],
) -> serde_json::Value {
    let (applied, noop, refused, errors) = counts(items);
    let items_in = items;
    let sel = &args.selection;
    let selection = if args.all {
        json!({
            "all": true,
            "status": sel.row_filter().map(|f| f.name()).unwrap_or("expired"),
            "kind": sel.kind,
            "verdict": sel.verdict,
            "instance": sel.instance,
            "owner": sel.owner,
            "olderThanMs": sel.older_than.map(|d| d.as_millis() as u64),
            "limit": sel.limit,
        })
    } else {
        json!({"all": false, "ids": args.submissions})
    };
    let items: Vec<serde_json::Value> = items
        .iter()
        .map(|i| {
            let plan = i.plan.as_ref().ok();
            let refusal = match (&i.outcome, &i.plan) {
                (Outcome::Changed(d), _) => Some(json!({
                    "reason": "the submission changed since the preview",
                    "instead": format!("run `turnscope show {}` to see its current state", i.id),
                    "changed": d,
                })),
                (Outcome::Error(e), _) => {
                    Some(json!({"reason": e, "instead": null, "changed": []}))
                }
                (Outcome::Refused(r), _) | (_, Err(r)) => {
                    Some(json!({"reason": r.reason, "instead": r.instead, "changed": []}))
                }
                _ => None,
            };
            json!({
                "submissionId": i.id,
                "before": i.before,
                "outcome": i.outcome.name(),
                "summary": plan.map(|p| &p.summary),
                "prediction": plan.map(|p| &p.prediction),
                "changes": plan.map_or(0, |p| p.changes.len()),
                "refused": refusal,
                "applied": match &i.outcome {
                    Outcome::Applied(a) => json!({
                        "rowsWritten": a.rows_written,
                        "lockHeldMs": a.lock_held.as_secs_f64() * 1000.0,
                        "auditId": a.audit_id,
                    }),
                    _ => serde_json::Value::Null,
                },
            })
        })
        .collect();
    json!({
        "schema": "turnscope.bulk/1",
        "format": turnscope_engine::report::JOURNAL_FORMAT,
        "action": kind,
        "database": database,
        "batch": batch,
        "dryRun": args.dry_run,
        "now": now,
        "selection": selection,
        "rate": args.rate,
        "cannotUndo": bulk::cannot_undo(items_in.iter().map(|i| &i.plan)),
        "counts": {
            "selected": items.len(),
            "applied": applied,
            "noop": noop,
            "refused": refused,
            "failed": errors,
        },
        "items": items,
    })
}

/// The exit status of a finished batch: 0 when nothing was refused, 3 when something was
/// (refused or changed since the preview), 1 when a write failed.
fn finish(items: &[Item], dry_run: bool) -> Result<(), CliError> {
    let (_, _, refused, errors) = counts(items);
    bulk_exit(dry_run, refused, errors)
}

/// A bulk apply's exit (both formats'): 3 when a submission was refused (a dry run's: the
/// selection does not all fit the action), 1 when a write failed on the database itself.
pub(super) fn bulk_exit(dry_run: bool, refused: usize, errors: usize) -> Result<(), CliError> {
    if dry_run && refused > 0 {
        return Err(CliError::new(
            format!("{refused} submission(s) of the selection would be refused; the preview says why for each"),
            "narrow the selection (e.g. --verdict) to the ones this action fits, or act on the others with what each `instead:` names",
            exit::REFUSED,
        ));
    }
    if errors > 0 {
        return Err(CliError::new(
            format!("{errors} write(s) of the batch failed; the others are as the summary says"),
            "look at the database's health, then run the action again on the ones that failed",
            exit::ERROR,
        ));
    }
    if refused > 0 {
        return Err(CliError::new(
            format!("{refused} submission(s) of the batch were refused (nothing written to them); the others are as the summary says"),
            "the summary says why for each; `turnscope show <submission>` shows one",
            exit::REFUSED,
        ));
    }
    Ok(())
}

/// Wait until the `n`-th write of the batch may start at `rate` a second.
pub(super) fn pace(started: Instant, n: usize, rate: Option<f64>) {
    let Some(rate) = rate else { return };
    let due = started + Duration::from_secs_f64(n as f64 / rate);
    let now = Instant::now();
    if due > now {
        std::thread::sleep(due - now);
    }
}

/// An action on the ids given or on `--all`: one id alone is the one-submission action (its
/// preview, question and output, unchanged); several ids or `--all` are one bulk apply.
pub fn run_action(
    cli: &Cli,
    kind: ActionKind,
    args: &BulkActionArgs,
    extension: Option<Extension>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match args.submissions.as_slice() {
        [one] if !args.all => {
            check_selection(args)?;
            super::act::run_with(cli, kind, &args.one(one), extension, out)
        }
        _ => run(cli, kind, args, extension, out),
    }
}

/// The bulk apply (several ids, or `--all`).
fn run(
    cli: &Cli,
    kind: ActionKind,
    args: &BulkActionArgs,
    extension: Option<Extension>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    check_selection(args)?;
    let shown = if args.all {
        "--all".to_string()
    } else {
        args.submissions.join(" ")
    };
    super::act::check_usage(cli, kind, &args.one(&shown))?;
    let writing = !args.dry_run;
    let super::act::Opened {
        operator,
        store,
        db,
        mut writer,
        now,
    } = super::act::open_for_action(cli, writing, args.json)?;
    let ids = frozen(store.reader(), args, cli.context_window, now)?;
    let mut items = Vec::with_capacity(ids.len());
    let mut bar = Bar::new(args.json, "planning", ids.len() as u64);
    for id in ids {
        let prepared = match run::prepare(
            store.reader(),
            kind,
            &id,
            args.reason.as_deref(),
            extension,
            cli.context_window,
            now,
            IdSource::Random,
        ) {
            Ok(p) => p,
            // Gone since the selection's read (deleted by hand, a dropped table): that one is
            // refused; any other failure to read stops the batch before its preview.
            Err(e @ turnscope_store::StoreError::SubmissionNotFound { .. }) => {
                items.push(Item {
                    before: "-".into(),
                    plan: Err(Refusal {
                        reason: format!("{e} any more (it was selected)"),
                        instead: "nothing to do: it no longer exists".into(),
                    }),
                    id,
                    outcome: Outcome::Planned,
                });
                bar.advance(1);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let r = &prepared.report;
        // The report (a whole session) is dropped here; the plan keeps only its rows.
        items.push(Item {
            before: format!("{} · {}", r.verdict(), r.plan.rule_label()),
            id,
            plan: prepared.plan,
            outcome: Outcome::Planned,
        });
        bar.advance(1);
    }
    bar.finish();
    for item in &mut items {
        match &item.plan {
            Ok(p) if p.is_noop() => item.outcome = Outcome::Noop,
            Err(r) => item.outcome = Outcome::Refused(r.clone()),
            Ok(_) => {}
        }
    }
    let database = store.reader().location();
    let writes = items.iter().filter(|i| i.writes()).count();
    if !args.json {
        write_preview(kind, args, &items, out)?;
    }
    if args.dry_run || writes == 0 {
        if args.json {
            print_json(out, &bulk_json(kind, args, &database, None, now, &items))?;
        } else {
            writeln!(
                out,
                "{}",
                if args.dry_run {
                    "dry run: nothing written."
                } else {
                    "nothing to write: nothing written."
                }
            )?;
        }
        return finish(&items, args.dry_run);
    }
    if let Some(l) = turnscope_engine::actions::live::live_runtime(store.reader(), now) {
        confirm::say(
            &l.warning(turnscope_engine::actions::live::BULK_NEXT_PASS),
            args.json,
            out,
        )?;
    }
    let calls: usize = items
        .iter()
        .filter_map(|i| i.plan.as_ref().ok())
        .map(|p| p.side_effects.len())
        .sum();
    if calls > 0 {
        if !args.ack_side_effects {
            let why = format!(
                "{} this batch answers `interrupted` may already have run: acknowledge their side effects (--ack-side-effects)",
                turnscope_core::text::plural(calls as u64, "tool call", "tool calls")
            );
            if args.json {
                let mut doc = bulk_json(kind, args, &database, None, now, &items);
                doc["refused"] = json!(why);
                print_json(out, &doc)?;
            }
            return Err(CliError::new(
                format!("refused, nothing written: {why}"),
                super::act::ACK_INSTEAD,
                exit::REFUSED,
            ));
        }
        for p in items.iter_mut().filter_map(|i| i.plan.as_mut().ok()) {
            p.acknowledge_side_effects();
        }
    }
    let question = confirm::Question::batch(kind.as_str(), writes);
    if confirm::ask_for(args.yes, args.json, &question, out)? == confirm::Answer::Declined {
        if args.json {
            let mut doc = bulk_json(kind, args, &database, None, now, &items);
            doc["declined"] = json!(true);
            print_json(out, &doc)?;
        } else {
            writeln!(out, "declined: nothing written.")?;
        }
        return Err(confirm::declined_for(&question));
    }
    let mut writer = writer.take().expect("opened for a write");
    let operator = operator.expect("checked for a write");
    let batch = run::new_batch_id();
    let started = Instant::now();
    let mut bar = Bar::new(args.json, kind.as_str(), writes as u64);
    for (n, item) in items.iter_mut().filter(|i| i.writes()).enumerate() {
        pace(started, n, args.rate);
        let plan = item.plan.as_ref().expect("a write has a plan");
        // The fence re-reads the submission inside the write transaction: whatever changed since
        // the preview refuses this one write and the batch goes on.
        item.outcome = match run::apply_in_batch(
            &mut *writer,
            plan,
            &operator,
            turnscope_store::clock::now_ms(),
            Some(&batch),
        ) {
            Ok(a) => Outcome::Applied(a),
            Err(ApplyError::Fenced(d)) => Outcome::Changed(d),
            Err(e @ (ApplyError::Refused(_) | ApplyError::NotFound(_))) => {
                Outcome::Refused(Refusal {
                    reason: e.to_string(),
                    instead: format!("run `turnscope show {}` to see its current state", item.id),
                })
            }
            Err(ApplyError::Store(e)) => {
                let line = e.to_string();
                // A broken connection is opened again for the next one.
                if let Ok(w) = turnscope_store::open_writer(&db) {
                    writer = w;
                }
                Outcome::Error(line)
            }
        };
        bar.advance(1);
    }
    bar.finish();
    if args.json {
        print_json(
            out,
            &bulk_json(kind, args, &database, Some(&batch), now, &items),
        )?;
    } else {
        write_summary(&items, &batch, out)?;
    }
    finish(&items, false)
}
