//! `turnscope repair|requeue|fail <submission> [--dry-run] [--reason TEXT] [--json]` and `audit`.

use super::output::print_json;
use std::io::Write;

use serde_json::json;

use super::args::{ActionArgs, Cli};
use super::{confirm, db_target, exit, open_store, CliError};
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_core::text::sanitize;
use turnscope_engine::actions::{run, ActionKind, ActionPlan, Extension, IdSource, Refusal};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::ApplyError;

fn refused(r: &Refusal) -> CliError {
    CliError::new(
        format!("refused: {}", r.reason),
        r.instead.clone(),
        exit::REFUSED,
    )
}

/// Usage errors found in the command line alone, before anything is opened: exit 2.
pub(super) fn check_usage(cli: &Cli, kind: ActionKind, args: &ActionArgs) -> Result<(), CliError> {
    if !cli.write && !args.dry_run {
        return Err(CliError::new(
            format!("{} writes to the journal database, and turnscope is read-only by default", kind.as_str()),
            format!("add --write to apply it, or --dry-run to preview the rows it would write: turnscope --write {} {}", kind.as_str(), args.submission),
            exit::USAGE,
        ));
    }
    if kind == ActionKind::Fail && args.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err(CliError::new(
            "fail needs a reason: it gives up on the submission for good",
            format!(
                "say why with --reason, e.g. turnscope --write fail {} --reason \"tool hangs on this input\"",
                args.submission
            ),
            exit::USAGE,
        ));
    }
    Ok(())
}

/// The `turnscope.action/1` document of a refusal (the state does not allow the action, or it
/// changed between the preview and the write).
fn refusal_json(
    kind: ActionKind,
    submission: &str,
    reason: &str,
    instead: &str,
    changed: &[String],
) -> serde_json::Value {
    json!({
        "schema": "turnscope.action/1",
        "format": turnscope_engine::report::JOURNAL_FORMAT,
        "action": kind,
        "submissionId": submission,
        "refused": {"reason": reason, "instead": instead, "changed": changed},
        "applied": null,
    })
}

/// What every action opens before its preview, in this order: the operator (refused when empty),
/// the store, and for a write the writer, whose access and integrity are checked here, before any
/// question is asked that the database could not honour; then the real clock, which every safety
/// check (live lease, expiry, deadline, the fence) reads, a pinned clock moving only what
/// read-only views show.
pub(super) struct Opened {
    pub operator: Option<String>,
    pub store: Box<dyn turnscope_store::Backend>,
    pub db: turnscope_store::DbTarget,
    pub writer: Option<Box<dyn turnscope_store::JournalWriter>>,
    pub now: i64,
}

pub(super) fn open_for_action(cli: &Cli, writing: bool, json: bool) -> Result<Opened, CliError> {
    let operator = if writing {
        Some(confirm::operator(cli)?)
    } else {
        None
    };
    let store = open_store(cli)?;
    let db = db_target(cli)?;
    let writer = if writing {
        Some(super::progress::open_writer(&db, json)?)
    } else {
        None
    };
    Ok(Opened {
        operator,
        store,
        db,
        writer,
        now: turnscope_store::clock::now_ms(),
    })
}

/// One submission: preview, question, one fenced transaction, the state after.
pub(super) fn run_with(
    cli: &Cli,
    kind: ActionKind,
    args: &ActionArgs,
    extension: Option<Extension>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    check_usage(cli, kind, args)?;
    let writing = !args.dry_run;
    let Opened {
        operator,
        store,
        db,
        mut writer,
        now,
    } = open_for_action(cli, writing, args.json)?;
    let prepared = run::prepare(
        store.reader(),
        kind,
        &args.submission,
        args.reason.as_deref(),
        extension,
        cli.context_window,
        now,
        IdSource::Random,
    )?;
    let report = prepared.report;
    let mut plan = match prepared.plan {
        Ok(p) => p,
        Err(r) => {
            if args.json {
                let id = &report.row().submission_id;
                print_json(out, &refusal_json(kind, id, &r.reason, &r.instead, &[]))?;
            }
            return Err(refused(&r));
        }
    };
    let id = plan.submission_id.clone();
    let live = if writing && !plan.is_noop() {
        turnscope_engine::actions::live::live_runtime(store.reader(), now)
    } else {
        None
    };
    if args.json && (args.dry_run || plan.is_noop()) {
        print_json(out, &action_json(&plan, None, args.dry_run))?;
        return Ok(());
    }
    if !args.json {
        if kind == ActionKind::Step {
            let taken = if plan.is_noop() {
                0
            } else {
                turnscope_engine::actions::next_step_len(&report)
            };
            write_runtime_plan(&report, taken, out)?;
        }
        write_preview(&plan, out)?;
    }
    if plan.is_noop() || args.dry_run {
        if !args.json {
            writeln!(
                out,
                "{}",
                if plan.is_noop() {
                    "nothing written."
                } else {
                    "dry run: nothing written."
                }
            )?;
        }
        return Ok(());
    }
    if !plan.side_effects.is_empty() {
        if !args.ack_side_effects {
            let why = plan.unacknowledged_side_effects().unwrap_or_default();
            if args.json {
                print_json(out, &refusal_json(kind, &id, &why, ACK_INSTEAD, &[]))?;
            }
            return Err(CliError::new(
                format!("refused: {why}"),
                ACK_INSTEAD,
                exit::REFUSED,
            ));
        }
        plan.acknowledge_side_effects();
    }
    if let Some(l) = &live {
        confirm::say(
            &l.warning(&turnscope_engine::actions::live::next_pass(&report)),
            args.json,
            out,
        )?;
    }
    if confirm::ask(args.yes, args.json, kind.as_str(), out)? == confirm::Answer::Declined {
        if args.json {
            let mut doc = action_json(&plan, None, false);
            doc["declined"] = json!(true);
            print_json(out, &doc)?;
        } else {
            writeln!(out, "declined: nothing written.")?;
        }
        return Err(confirm::declined());
    }
    let mut writer = writer.take().expect("opened for a write");
    let operator = operator.expect("checked for a write");
    let applied = run::apply(&mut *writer, &plan, &operator, now).map_err(|e| {
        if let (true, ApplyError::Fenced(d)) = (args.json, &e) {
            let instead = format!("run `turnscope show {id}` to see its current state");
            let _ = print_json(
                out,
                &refusal_json(
                    kind,
                    &id,
                    "the submission changed since the preview",
                    &instead,
                    d,
                ),
            );
        }
        match e {
            ApplyError::Fenced(_) | ApplyError::Refused(_) | ApplyError::NotFound(_) => {
                CliError::new(
                    e.to_string(),
                    format!("run `turnscope show {id}` to see its current state"),
                    exit::REFUSED,
                )
            }
            ApplyError::Store(s) => CliError::from(s),
        }
    })?;
    drop(writer);
    // A fresh connection: what any reader of the database sees now.
    let after = turnscope_store::open(&db)
        .and_then(|s| run::reread(s.reader(), &plan, cli.context_window, now));
    if args.json {
        let mut doc = action_json(&plan, Some(&applied), false);
        if let Ok(a) = &after {
            doc["after"] = serde_json::to_value(turnscope_engine::actions::predict::describe(a))
                .unwrap_or_default();
        }
        print_json(out, &doc)?;
        return Ok(());
    }
    writeln!(
        out,
        "applied: {} written, write lock held {:.2} ms, audit #{}",
        turnscope_core::text::plural(applied.rows_written as u64, "row", "rows"),
        applied.lock_held.as_secs_f64() * 1000.0,
        applied.audit_id
    )?;
    if let Ok(a) = after {
        let rule = |r: &SubmissionReport| r.plan.rule_label();
        writeln!(out, "before: {} · {}", report.verdict(), rule(&report))?;
        writeln!(
            out,
            "now:    {} · {}: {}",
            a.verdict(),
            rule(&a),
            sanitize(&a.plan.reason)
        )?;
        if kind == ActionKind::Step {
            match a.plan.writes.first() {
                Some(turnscope_core::recovery::reconciler::PlannedWrite::ReplaceAttempt) => writeln!(
                    out,
                    "next write: the attempt replacement, which turnscope leaves to the runtime (its next pass makes it)"
                )?,
                Some(w) if a.plan.rule.is_some() => writeln!(
                    out,
                    "next write: {} (run step again, or stop here)",
                    sanitize(&w.describe())
                )?,
                _ => writeln!(
                    out,
                    "no writes left: the runtime's reconciler has nothing more to do here"
                )?,
            }
        }
    }
    match plan.published_stream() {
        Some(stream) => writeln!(
            out,
            "undo: not possible: the terminal event was appended to the event stream {} (subscribers may have seen it)",
            sanitize(stream)
        )?,
        None => writeln!(
            out,
            "undo: `turnscope --write undo {}` reverts it while the runtime has not acted on it yet",
            applied.audit_id
        )?,
    }
    writeln!(
        out,
        "next: run `turnscope show {}` to check the result",
        // The full id: a prefix unique now may not be once more submissions arrive.
        sanitize(&id)
    )?;
    Ok(())
}

/// The runtime's plan, each write the step takes marked `▶` (`taken`: none for a step with
/// nothing to write).
fn write_runtime_plan(
    r: &SubmissionReport,
    taken: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "runtime plan: rule {} → {}: {}",
        r.plan.rule.map_or("-".into(), |n| n.to_string()),
        r.plan.result.map_or("-", RuleResult::as_str),
        sanitize(&r.plan.reason)
    )?;
    for (i, w) in r.plan.writes.iter().enumerate() {
        writeln!(
            out,
            "  {} {}. {}",
            if i < taken { "▶" } else { " " },
            i + 1,
            sanitize(&w.describe())
        )?;
    }
    Ok(())
}

fn write_preview(plan: &ActionPlan, out: &mut dyn Write) -> std::io::Result<()> {
    // A next pass that fails the submission anyway is said before anything else.
    if let Some(warning) = plan.prediction.warning() {
        writeln!(out, "warning: {}", sanitize(&warning))?;
        if let Some(way_out) = &plan.prediction.way_out {
            writeln!(out, "way out: {}", sanitize(way_out))?;
        }
    }
    writeln!(
        out,
        "{} {}: {}",
        plan.action.as_str(),
        sanitize(&plan.submission_id),
        sanitize(&plan.summary)
    )?;
    for change in &plan.changes {
        for line in change.preview() {
            writeln!(out, "  {}", sanitize(&line))?;
        }
    }
    writeln!(out, "prediction: {}", sanitize(&plan.prediction.line()))?;
    write_side_effects(&plan.side_effects, out)?;
    if let Some(stream) = plan.published_stream() {
        writeln!(
            out,
            "note: this write appends the terminal event to the event stream {}, where subscribers read it: it cannot be undone",
            sanitize(stream)
        )?;
    }
    Ok(())
}

/// What to do about calls that may have run, when they were not acknowledged.
pub(super) const ACK_INSTEAD: &str =
    "check each call's effect (the ledger above), then run the same command with --ack-side-effects";

/// The side-effect ledger: every call the write answers `interrupted`, each of which may have run.
pub(super) fn write_side_effects(
    calls: &[turnscope_engine::actions::MayHaveRun],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if calls.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "side effects: {} answered `interrupted` may already have run (the model is told they did not finish, and may call them again):",
        turnscope_core::text::plural(calls.len() as u64, "tool call", "tool calls")
    )?;
    for c in calls {
        let args = c.arguments.as_deref().unwrap_or("(arguments not read)");
        let mut shown: String = args.chars().take(120).collect();
        if shown.len() < args.len() {
            shown.push('…');
        }
        writeln!(
            out,
            "  {} {} {}",
            sanitize(&c.call_id),
            sanitize(&c.tool),
            sanitize(&shown)
        )?;
        writeln!(
            out,
            "    issued by attempt {} ({}), worker {}, in entry {}",
            sanitize(c.attempt_id.as_deref().unwrap_or("-")),
            c.attempt_source,
            sanitize(c.worker.as_deref().unwrap_or("unknown")),
            sanitize(c.requested_by.as_deref().unwrap_or("-"))
        )?;
        writeln!(out, "    trace: {}", sanitize(&c.trace))?;
    }
    Ok(())
}

fn action_json(
    plan: &ActionPlan,
    applied: Option<&turnscope_store::Applied>,
    dry_run: bool,
) -> serde_json::Value {
    json!({
        "schema": "turnscope.action/1",
        "format": turnscope_engine::report::JOURNAL_FORMAT,
        "action": plan.action,
        "submissionId": plan.submission_id,
        "attemptId": plan.attempt_id,
        "summary": plan.summary,
        "prediction": plan.prediction,
        "reason": plan.reason,
        "noop": plan.is_noop(),
        "dryRun": dry_run,
        "fence": plan.fence,
        "changes": plan.changes,
        "sideEffects": plan.side_effects,
        "sideEffectsAcknowledged": plan.side_effects_acknowledged,
        "applied": applied.map(|a| json!({
            "rowsWritten": a.rows_written,
            "lockHeldMs": a.lock_held.as_secs_f64() * 1000.0,
            "auditId": a.audit_id,
        })),
    })
}
