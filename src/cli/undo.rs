//! `turnscope --write undo <audit-id | batch-id> [--reason TEXT] [--dry-run] [-y] [--json]`:
//! revert exactly what an applied action (or a bulk apply) wrote, while every row it changed
//! still holds what turnscope wrote.

use super::output::print_json;
use std::io::Write;

use serde_json::json;

use super::args::{Cli, UndoArgs};
use super::{confirm, db_target, exit, CliError};
use turnscope_core::text::sanitize;
use turnscope_store::{ApplyError, AuditInfo, UndoTarget, Undone};

fn refusal(e: ApplyError) -> CliError {
    match &e {
        ApplyError::NotFound(_) => CliError::new(
            e.to_string(),
            "run `turnscope audit` to see the audit ids and batch ids",
            exit::NOT_FOUND,
        ),
        ApplyError::Fenced(_) => CliError::new(
            format!(
                "refused, nothing written: the rows changed since turnscope wrote them ({})",
                match &e {
                    ApplyError::Fenced(d) => d.join("; "),
                    _ => String::new(),
                }
            ),
            "the runtime (or someone) has acted on them since: undo only reverts rows that still hold what turnscope wrote; look with `turnscope show`",
            exit::REFUSED,
        ),
        ApplyError::Refused(_) => CliError::new(
            e.to_string(),
            "run `turnscope audit` to see what each record did",
            exit::REFUSED,
        ),
        ApplyError::Store(_) => match e {
            ApplyError::Store(s) => CliError::from(s),
            _ => unreachable!("matched above"),
        },
    }
}

fn doc(
    format: &str,
    target: &str,
    done: Option<&Undone>,
    e: Option<&ApplyError>,
    dry_run: bool,
) -> serde_json::Value {
    json!({
        "schema": "turnscope.action/1",
        "format": format,
        "action": "undo",
        "target": target,
        "dryRun": dry_run,
        "undoes": done.map(|d| d.records.iter().map(|(id, s)| json!({"auditId": id, "submissionId": s})).collect::<Vec<_>>()),
        "restored": done.map(|d| d.restored.clone()),
        "refused": e.map(|e| json!({
            "reason": e.to_string(),
            "changed": match e { ApplyError::Fenced(d) => d.clone(), _ => Vec::new() },
        })),
        "applied": done.filter(|d| !d.audit_ids.is_empty()).map(|d| json!({
            "auditIds": d.audit_ids,
            "lockHeldMs": d.lock_held.as_secs_f64() * 1000.0,
        })),
    })
}

pub fn run(cli: &Cli, args: &UndoArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !cli.write {
        return Err(CliError::new(
            "undo writes to the journal database, and turnscope is read-only by default",
            format!(
                "add --write (with --dry-run to only check and preview): turnscope --write undo {}",
                args.target
            ),
            exit::USAGE,
        ));
    }
    let operator = confirm::operator(cli)?;
    let mut writer = turnscope_store::open_writer(&db_target(cli)?)?;
    run_on(
        &mut |t: &UndoTarget, i: &AuditInfo, commit: bool| writer.undo(t, i, commit),
        operator,
        turnscope_engine::report::JOURNAL_FORMAT,
        args,
        out,
    )
}

/// `undo` through any writer (beta.7's backends, a flue 2.x journal's writer), the operator
/// already named and the writer open.
pub fn run_on(
    undo: &mut dyn FnMut(&UndoTarget, &AuditInfo, bool) -> Result<Undone, ApplyError>,
    operator: String,
    format: &str,
    args: &UndoArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let target = UndoTarget::parse(&args.target);
    let info = AuditInfo {
        operator,
        action: "undo".into(),
        reason: args.reason.clone(),
        summary: String::new(),
        now_ms: turnscope_store::clock::now_ms(),
        batch_id: match &target {
            UndoTarget::Batch(_) => Some(turnscope_engine::actions::run::new_batch_id()),
            UndoTarget::Audit(_) => None,
        },
        side_effects: None,
    };
    // The check and the preview run in a write transaction that is rolled back.
    let preview = match undo(&target, &info, false) {
        Ok(p) => p,
        Err(e) => {
            if args.json {
                print_json(
                    out,
                    &doc(format, &args.target, None, Some(&e), args.dry_run),
                )?;
            }
            return Err(refusal(e));
        }
    };
    if args.json && args.dry_run {
        print_json(out, &doc(format, &args.target, Some(&preview), None, true))?;
        return Ok(());
    }
    if !args.json {
        let ids: Vec<String> = preview
            .records
            .iter()
            .map(|(id, _)| format!("#{id}"))
            .collect();
        writeln!(
            out,
            "undo {}: revert audit {} ({} row(s)), in one fenced transaction:",
            sanitize(&target.to_string()),
            ids.join(", "),
            preview.restored.len()
        )?;
        for l in &preview.restored {
            writeln!(out, "  {}", sanitize(l))?;
        }
        if args.dry_run {
            writeln!(out, "dry run: nothing written.")?;
            return Ok(());
        }
    }
    if confirm::ask(args.yes, args.json, "undo", out)? == confirm::Answer::Declined {
        if !args.json {
            writeln!(out, "declined: nothing written.")?;
        }
        return Err(confirm::declined());
    }
    let done = undo(&target, &info, true).map_err(|e| {
        if args.json {
            let _ = print_json(out, &doc(format, &args.target, None, Some(&e), false));
        }
        refusal(e)
    })?;
    if args.json {
        print_json(out, &doc(format, &args.target, Some(&done), None, false))?;
        return Ok(());
    }
    let ids: Vec<String> = done.audit_ids.iter().map(|id| format!("#{id}")).collect();
    writeln!(
        out,
        "undone: {} row(s) restored, write lock held {:.2} ms, recorded as audit {}",
        done.restored.len(),
        done.lock_held.as_secs_f64() * 1000.0,
        ids.join(", ")
    )?;
    Ok(())
}
