//! `turnscope repair|requeue|fail <submission> [--dry-run] [--reason TEXT] [--json]` and `audit`.

use std::io::{BufRead, IsTerminal, Write};

use serde_json::json;

use super::args::{ActionArgs, BulkActionArgs, Cli};
use super::output::table;
use super::{db_target, exit, now_ms, open_store, CliError};
use crate::actions::{run, ActionKind, ActionPlan, Extension, IdSource, Refusal};
use crate::core::time::iso_from_ms;
use crate::report::SubmissionReport;
use crate::store::{ApplyError, Backend};
use crate::text::sanitize;

/// `$USER@hostname`, unless `--operator` says otherwise.
pub fn operator(cli: &Cli) -> String {
    if let Some(o) = &cli.operator {
        return o.clone();
    }
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "localhost".into());
    format!("{user}@{host}")
}

fn refused(r: &Refusal) -> CliError {
    CliError::new(
        format!("refused: {}", r.reason),
        r.instead.clone(),
        exit::REFUSED,
    )
}

pub fn run(
    cli: &Cli,
    kind: ActionKind,
    args: &ActionArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    run_with(cli, kind, args, None, out)
}

/// An action on several submissions: each previewed, confirmed and applied in its own fenced
/// transaction, in the order given; the first refusal or error stops the rest.
pub fn run_bulk(
    cli: &Cli,
    kind: ActionKind,
    args: &BulkActionArgs,
    extension: Option<Extension>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for submission in &args.submissions {
        run_with(cli, kind, &args.one(submission), extension, out)?;
    }
    Ok(())
}

fn run_with(
    cli: &Cli,
    kind: ActionKind,
    args: &ActionArgs,
    extension: Option<Extension>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if !cli.write && !args.dry_run {
        return Err(CliError::new(
            format!("{} writes to the journal database, and turnscope is read-only by default", kind.as_str()),
            format!("add --write to apply it, or --dry-run to preview the rows it would write: turnscope --write {} {}", kind.as_str(), args.submission),
            exit::USAGE,
        ));
    }
    let store = open_store(cli)?;
    let now = now_ms(cli);
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
    let plan = prepared.plan.map_err(|r| refused(&r))?;
    let id = plan.submission_id.clone();
    if args.json && (args.dry_run || plan.is_noop()) {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&action_json(&plan, None, args.dry_run))
                .unwrap_or_default()
        )?;
        return Ok(());
    }
    if !args.json {
        if kind == ActionKind::Step {
            write_runtime_plan(&report, out)?;
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
    if !args.yes && std::io::stdin().is_terminal() && !confirm(out)? {
        writeln!(out, "cancelled: nothing written.")?;
        return Ok(());
    }
    let db = db_target(cli)?;
    let mut writer = crate::store::open_writer(&db)?;
    let applied = run::apply(&mut *writer, &plan, &operator(cli), now).map_err(|e| match e {
        ApplyError::Fenced(_) => CliError::new(
            e.to_string(),
            format!("run `turnscope show {id}` to see its current state"),
            exit::REFUSED,
        ),
        ApplyError::Store(s) => CliError::from(s),
    })?;
    drop(writer);
    // A fresh connection: what any reader of the database sees now.
    let after = crate::store::open(&db)
        .and_then(|s| run::reread(s.reader(), &plan, cli.context_window, now));
    if args.json {
        let mut doc = action_json(&plan, Some(&applied), false);
        if let Ok(a) = &after {
            doc["after"] =
                serde_json::to_value(crate::actions::predict::describe(a)).unwrap_or_default();
        }
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "applied: {} row(s) written, write lock held {:.2} ms, audit #{}",
        applied.rows_written,
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
                Some(crate::core::plan::PlannedWrite::ReplaceAttempt) => writeln!(
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
    writeln!(
        out,
        "next: run `turnscope show {}` to check the result",
        sanitize(&crate::core::rows::short_id(&id))
    )?;
    Ok(())
}

fn confirm(out: &mut dyn Write) -> Result<bool, CliError> {
    write!(out, "apply these writes? [y/N] ")?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

fn write_runtime_plan(r: &SubmissionReport, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "runtime plan: rule {} → {}: {}",
        r.plan.rule.map_or("-".into(), |n| n.to_string()),
        r.plan.result.unwrap_or("-"),
        sanitize(&r.plan.reason)
    )?;
    for (i, w) in r.plan.writes.iter().enumerate() {
        writeln!(
            out,
            "  {} {}. {}",
            if i == 0 { "▶" } else { " " },
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
    Ok(())
}

fn action_json(
    plan: &ActionPlan,
    applied: Option<&crate::store::Applied>,
    dry_run: bool,
) -> serde_json::Value {
    json!({
        "schema": "turnscope.action/1",
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
        "applied": applied.map(|a| json!({
            "rowsWritten": a.rows_written,
            "lockHeldMs": a.lock_held.as_secs_f64() * 1000.0,
            "auditId": a.audit_id,
        })),
    })
}

pub fn audit(store: &dyn Backend, as_json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let records = store.audit_records()?;
    if as_json {
        let doc = json!({"schema": "turnscope.audit/1", "records": records});
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        )?;
        return Ok(());
    }
    if records.is_empty() {
        writeln!(out, "no turnscope action was ever applied to this database")?;
        return Ok(());
    }
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|a| {
            vec![
                a.id.to_string(),
                iso_from_ms(a.at),
                sanitize(&a.operator),
                a.action.clone(),
                sanitize(&a.submission_id),
                sanitize(a.reason.as_deref().unwrap_or("")),
                sanitize(&a.summary),
            ]
        })
        .collect();
    write!(
        out,
        "{}",
        table(
            &[
                "ID",
                "AT",
                "OPERATOR",
                "ACTION",
                "SUBMISSION",
                "REASON",
                "SUMMARY"
            ],
            &rows
        )
    )?;
    Ok(())
}
