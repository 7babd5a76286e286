//! A bulk apply on a flue 2.x SQLite journal: `turnscope --write abort|requeue|extend|fail ID ID…
//! | --all [filters] [--rate N/s]`, as beta.7's (`bulk.rs`): the selection read once, in one
//! snapshot, and frozen (full ids); each submission planned at the real clock by the action's own
//! planning (`turnscope_core::flue2::actions`, the one-submission action's); a preview grouped
//! by what is written and the runtime's next pass computed on each row after it, the refusals
//! with their reasons; one confirmation (the count typed from 10 on); then one fenced
//! transaction per submission (`Flue2SqliteWriter`, the same fence as one action's), all under
//! one batch id, where a change since the preview stops only that one. The summary, or one
//! `turnscope.flue2.bulk/1` document, says what happened to each.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

use super::args::{BulkActionArgs, Cli};
use super::bulk::{bulk_exit, check_selection, pace, selection_flags};
use super::common::{exit, CliError};
use super::confirm;
use super::output::print_json;
use super::progress::Bar;
use turnscope_core::flue2::{Flue2Action, Flue2SubmissionRow};
use turnscope_core::text::{plural, sanitize};
use turnscope_engine::flue2::{Flue2Options, Streams};
use turnscope_engine::flue2_bulk::{
    apply_all, counts, items_json, plan_ids, preview_heading, preview_lines, unwritten_line,
    writes, BulkAudit, BulkItem as Item, SHOWN_PER_GROUP,
};
use turnscope_store::{Flue2SqliteReader, Flue2SqliteWriter};

/// Every selected submission, read in one snapshot and planned at `now`.
fn plan_all(
    reader: &Flue2SqliteReader,
    opts: &Flue2Options,
    action: &Flue2Action,
    b: &BulkActionArgs,
    now: i64,
) -> Result<Vec<Item>, CliError> {
    if !b.all {
        return Ok(plan_ids(
            reader,
            opts,
            &b.submissions,
            |_| action.clone(),
            now,
        )?);
    }
    let sel = super::flue2_list::selection_of(&b.selection)?;
    let mut streams = Streams::default();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let mut owner_error = None;
    let (rows, owner) = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        joined = turnscope_core::flue2::joined_by_host(&all);
        let in_view: Vec<Flue2SubmissionRow> =
            all.into_iter().filter(|r| sel.in_view(r, now)).collect();
        let (rows, owner) = match sel.resolve_owner(in_view.iter()) {
            Ok(o) => (in_view, o),
            Err(e) => {
                owner_error = Some(e);
                (Vec::new(), None)
            }
        };
        streams.load(reader, rows.iter())?;
        Ok((rows, owner))
    })?;
    if let Some(turnscope_engine::listing::ListingError::AmbiguousOwner { message, hint }) =
        owner_error
    {
        return Err(CliError::new(message, hint, exit::USAGE));
    }
    let joined_of =
        |r: &Flue2SubmissionRow| joined.get(&r.submission_id).cloned().unwrap_or_default();
    let (kept, _) = sel.select(&rows, owner.as_deref(), now, |r| {
        streams.inspect(r, opts, joined_of(r), now)
    });
    Ok(kept
        .iter()
        .map(|i| Item::planned(action, i, opts, now))
        .collect())
}

fn write_preview(
    opts: &Flue2Options,
    fv: &str,
    name: &str,
    b: &BulkActionArgs,
    items: &[Item],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "{}", opts.header_line(fv))?;
    let what = if b.all {
        let flags = selection_flags(&b.selection);
        format!("--all {}", flags.join(" ")).trim_end().to_string()
    } else {
        format!(
            "{} named",
            plural(items.len() as u64, "submission", "submissions")
        )
    };
    writeln!(out, "{}", preview_heading(name, items.len(), &what))?;
    for line in preview_lines(items, SHOWN_PER_GROUP) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bulk_json(
    opts: &Flue2Options,
    fv: &str,
    name: &str,
    b: &BulkActionArgs,
    batch: Option<&str>,
    dry_run: bool,
    items: &[Item],
) -> Value {
    let mut o = opts.header("turnscope.flue2.bulk/1", fv);
    let c = counts(items);
    o.insert("action".into(), json!(name));
    o.insert("dryRun".into(), json!(dry_run));
    o.insert(
        "selection".into(),
        if b.all {
            json!({"all": true, "flags": selection_flags(&b.selection)})
        } else {
            json!({"all": false, "ids": b.submissions})
        },
    );
    o.insert("batchId".into(), json!(batch));
    o.insert(
        "counts".into(),
        json!({"selected": items.len(), "applied": c.applied, "refused": c.refused, "changed": c.changed, "errors": c.errors}),
    );
    o.insert("items".into(), Value::Array(items_json(items)));
    Value::Object(o)
}

fn write_summary(items: &[Item], batch: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let c = counts(items);
    writeln!(
        out,
        "applied {}, refused {}, changed since the preview {}, failed {} (batch {batch}; `turnscope audit --batch {batch}` lists it, `turnscope --write undo {batch}` reverts what the runtime has not acted on yet)",
        c.applied, c.refused, c.changed, c.errors
    )?;
    for i in items {
        if let Some(line) = unwritten_line(i) {
            writeln!(out, "  {}: {}", i.id, sanitize(&line))?;
        }
    }
    Ok(())
}

/// The exit of a bulk apply, as beta.7's (a change since the preview counts as a refusal).
fn finish(items: &[Item], dry_run: bool) -> Result<(), CliError> {
    let c = counts(items);
    bulk_exit(dry_run, c.refused + c.changed, c.errors)
}

/// `action` on several ids or `--all` (one id alone is the one-submission action).
pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    path: &Path,
    action: Flue2Action,
    b: &BulkActionArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let name = action.name();
    check_selection(b)?;
    if !cli.write && !b.dry_run {
        return Err(CliError::new(
            format!("{name} writes to the journal database, and turnscope is read-only by default"),
            format!("add --write to apply it, or --dry-run to preview the rows it would write: turnscope --write {name} …"),
            exit::USAGE,
        ));
    }
    if matches!(action, Flue2Action::Fail { .. })
        && b.reason.as_deref().is_none_or(|r| r.trim().is_empty())
    {
        return Err(CliError::new(
            "fail needs a reason: it gives up on the submissions for good",
            "say why with --reason, e.g. turnscope --write fail --all --verdict stuck --reason \"provider outage\"",
            exit::USAGE,
        ));
    }
    let operator = if b.dry_run {
        None
    } else {
        Some(confirm::operator(cli)?)
    };
    let reader = Flue2SqliteReader::open(path)?;
    let mut writer = if b.dry_run {
        None
    } else {
        Some(Flue2SqliteWriter::open(path)?)
    };
    // Every safety check reads the real clock (a pinned clock moves only read-only views).
    let now = turnscope_store::clock::now_ms();
    let mut items = plan_all(&reader, opts, &action, b, now)?;
    let fv = reader.format_version().to_string();
    if items.is_empty() {
        return Err(CliError::new(
            "the selection is empty: nothing to do",
            "`turnscope list` with the same filters shows what they select",
            exit::REFUSED,
        ));
    }
    if !b.json {
        write_preview(opts, &fv, name, b, &items, out)?;
    }
    let writes = writes(&items);
    if b.dry_run || writes == 0 {
        if b.json {
            print_json(out, &bulk_json(opts, &fv, name, b, None, true, &items))?;
        } else {
            writeln!(out, "dry run: nothing written.")?;
        }
        return finish(&items, true);
    }
    let question = confirm::Question::batch(name, writes);
    if confirm::ask_for(b.yes, b.json, &question, out)? == confirm::Answer::Declined {
        if b.json {
            let mut doc = bulk_json(opts, &fv, name, b, None, false, &items);
            doc["declined"] = json!(true);
            print_json(out, &doc)?;
        } else {
            writeln!(out, "declined: nothing written.")?;
        }
        return Err(confirm::declined_for(&question));
    }
    let writer = writer.as_mut().expect("opened for a write");
    let operator = operator.expect("checked for a write");
    let batch = turnscope_engine::actions::run::new_batch_id();
    let started = Instant::now();
    let mut bar = Bar::new(b.json, name, writes as u64);
    let audit = BulkAudit {
        operator,
        action: name.to_string(),
        reason: b.reason.clone(),
        batch_id: batch.clone(),
    };
    apply_all(
        writer,
        &mut items,
        &audit,
        |n| pace(started, n, b.rate),
        || bar.advance(1),
    );
    bar.finish();
    if b.json {
        print_json(
            out,
            &bulk_json(opts, &fv, name, b, Some(&batch), false, &items),
        )?;
    } else {
        write_summary(&items, &batch, out)?;
    }
    finish(&items, false)
}
