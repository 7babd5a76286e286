//! The operator actions on a flue 2.x SQLite journal: `turnscope --write abort|requeue|extend|fail
//! ID [--dry-run] [-y] [--json]`, and `audit` and `undo` of what they wrote. One submission at a
//! time: its row and stream read in one snapshot, the action planned on it at the real clock
//! (`turnscope_core::flue2::actions`), the exact row change and the runtime's next pass on the
//! row after it previewed, an explicit yes, then one fenced transaction with its audit record
//! (`Flue2SqliteWriter`). See docs/flue2.md.

use std::io::Write;
use std::path::Path;

use super::args::{ActionArgs, BulkActionArgs, Cli, Command};
use super::common::{exit, CliError};
use super::confirm;
use super::flue2_plan::{write_flue2_plan, write_flue2_resume};
use super::output::print_json;
use turnscope_core::flue2::{Flue2Action, Flue2ActionPlan, Flue2Refusal};
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{Flue2Options, Streams, FORMAT};
use turnscope_engine::flue2_actions::{
    action_json, audit_summary, plan_on, preview_lines, ActionResult,
};
use turnscope_store::{ApplyError, AuditInfo, Flue2SqliteReader, Flue2SqliteWriter};

pub fn run(
    cli: &Cli,
    opts: &Flue2Options,
    path: &Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match &cli.command {
        Some(Command::Abort(b)) => one_or_bulk(cli, opts, path, Flue2Action::Abort, b, out),
        Some(Command::Requeue(b)) => one_or_bulk(cli, opts, path, Flue2Action::Requeue, b, out),
        Some(Command::Fail(b)) => {
            let action = Flue2Action::Fail {
                reason: b.reason.clone().unwrap_or_default(),
            };
            one_or_bulk(cli, opts, path, action, b, out)
        }
        Some(Command::Extend(e)) => {
            let action = Flue2Action::Extend {
                deadline_ms: e.deadline,
                attempts: e.attempts,
            };
            one_or_bulk(cli, opts, path, action, &e.bulk, out)
        }
        Some(Command::Audit(a)) => {
            let reader = Flue2SqliteReader::open(path)?;
            super::audit::run_on(&|q| reader.audit_query(q), FORMAT, cli, a, out)
        }
        Some(Command::Undo(u)) => {
            if !cli.write {
                return Err(CliError::new(
                    "undo writes to the journal database, and turnscope is read-only by default",
                    format!(
                        "add --write (with --dry-run to only check and preview): turnscope --write undo {}",
                        u.target
                    ),
                    exit::USAGE,
                ));
            }
            let operator = confirm::operator(cli)?;
            let mut writer = Flue2SqliteWriter::open(path)?;
            super::undo::run_on(
                &mut |t, i, commit| writer.undo(t, i, commit),
                operator,
                FORMAT,
                u,
                out,
            )
        }
        _ => unreachable!("route sends only the actions, audit and undo here"),
    }
}

/// One id alone is the one-submission action (its preview, question and output); several ids or
/// `--all` are one bulk apply (`flue2_bulk.rs`), as on beta.7.
fn one_or_bulk(
    cli: &Cli,
    opts: &Flue2Options,
    path: &Path,
    action: Flue2Action,
    b: &BulkActionArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match b.submissions.as_slice() {
        [one] if !b.all => {
            super::bulk::check_selection(b)?;
            act(cli, opts, path, action, &b.one(one), out)
        }
        _ => super::flue2_bulk::run(cli, opts, path, action, b, out),
    }
}

fn refused(r: &Flue2Refusal) -> CliError {
    CliError::new(
        format!("refused: {}", r.reason),
        r.instead.clone(),
        exit::REFUSED,
    )
}

fn write_preview(
    opts: &Flue2Options,
    fv: &str,
    p: &Flue2ActionPlan,
    now: i64,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    writeln!(out, "{}", opts.header_line(fv))?;
    for line in preview_lines(p, now) {
        writeln!(out, "{}", sanitize(&line))?;
    }
    writeln!(
        out,
        "the runtime's next pass, computed on the row after the write:"
    )?;
    write_flue2_plan(&p.next, "next", true, out)?;
    if p.fence.live_lease {
        if let Some(then) = &p.then {
            writeln!(out, "{}", p.then_heading())?;
            write_flue2_plan(then, "then", true, out)?;
        }
    } else if let Some(r) = p.then.as_ref().and_then(|t| t.resume.as_ref()) {
        writeln!(
            out,
            "and once the runtime claims it again (the resume of its own requeue, step 7):"
        )?;
        write_flue2_resume(r, out)?;
    }
    Ok(())
}

fn act(
    cli: &Cli,
    opts: &Flue2Options,
    path: &Path,
    action: Flue2Action,
    a: &ActionArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let name = action.name();
    if !cli.write && !a.dry_run {
        return Err(CliError::new(
            format!("{name} writes to the journal database, and turnscope is read-only by default"),
            format!("add --write to apply it, or --dry-run to preview the row it would write: turnscope --write {name} {}", a.submission),
            exit::USAGE,
        ));
    }
    if matches!(action, Flue2Action::Fail { .. })
        && a.reason.as_deref().is_none_or(|r| r.trim().is_empty())
    {
        return Err(CliError::new(
            "fail needs a reason: it gives up on the submission for good",
            format!(
                "say why with --reason, e.g. turnscope --write fail {} --reason \"tool hangs on this input\"",
                a.submission
            ),
            exit::USAGE,
        ));
    }
    let writing = !a.dry_run;
    let operator = if writing {
        Some(confirm::operator(cli)?)
    } else {
        None
    };
    let reader = Flue2SqliteReader::open(path)?;
    let mut writer = if writing {
        Some(Flue2SqliteWriter::open(path)?)
    } else {
        None
    };
    // Every safety check reads the real clock (a pinned clock moves only read-only views).
    let now = turnscope_store::clock::now_ms();
    let mut streams = Streams::default();
    let (row, joined) = reader.in_snapshot(|reader| {
        let row = reader.find_submission(&a.submission)?;
        let joined = reader.joined_into(&row.submission_id)?;
        streams.load(reader, [&row])?;
        Ok((row, joined))
    })?;
    let i = streams.inspect(&row, opts, joined, now);
    let fv = reader.format_version().to_string();
    let id = row.submission_id.clone();
    let plan = match plan_on(&action, &i, opts, now) {
        Ok(p) => p,
        Err(r) => {
            if a.json {
                print_json(
                    out,
                    &action_json(opts, &fv, name, &id, ActionResult::Refused(&r)),
                )?;
            }
            return Err(refused(&r));
        }
    };
    if a.json {
        if a.dry_run {
            print_json(
                out,
                &action_json(opts, &fv, name, &id, ActionResult::Previewed(&plan)),
            )?;
            return Ok(());
        }
    } else {
        write_preview(opts, &fv, &plan, now, out)?;
        if a.dry_run {
            writeln!(out, "dry run: nothing written.")?;
            return Ok(());
        }
    }
    if confirm::ask(a.yes, a.json, name, out)? == confirm::Answer::Declined {
        if !a.json {
            writeln!(out, "declined: nothing written.")?;
        }
        return Err(confirm::declined());
    }
    let info = AuditInfo {
        operator: operator.unwrap_or_default(),
        action: name.to_string(),
        reason: a.reason.clone(),
        summary: audit_summary(&plan),
        now_ms: now,
        batch_id: None,
        side_effects: None,
    };
    let writer = writer.as_mut().expect("opened for a write");
    match writer.apply(&plan.fence, &plan.changes, &info) {
        Ok(applied) => {
            if a.json {
                print_json(
                    out,
                    &action_json(opts, &fv, name, &id, ActionResult::Applied(&plan, &applied)),
                )?;
            } else {
                writeln!(
                    out,
                    "applied: {} row written, audit #{} (undo while the runtime has not acted: turnscope --write undo {}), write lock held {:.1} ms",
                    applied.rows_written,
                    applied.audit_id,
                    applied.audit_id,
                    applied.lock_held.as_secs_f64() * 1000.0
                )?;
            }
            Ok(())
        }
        Err(ApplyError::Fenced(changed)) => {
            if a.json {
                print_json(
                    out,
                    &action_json(opts, &fv, name, &id, ActionResult::Fenced(&plan, &changed)),
                )?;
            }
            Err(CliError::new(
                format!(
                    "refused, nothing written: the submission changed since the preview ({})",
                    changed.join("; ")
                ),
                "look again with `turnscope show`, then run the action again if it still applies",
                exit::REFUSED,
            ))
        }
        Err(ApplyError::Store(e)) => Err(e.into()),
        Err(e) => Err(CliError::new(
            e.to_string(),
            "nothing was written",
            exit::ERROR,
        )),
    }
}
