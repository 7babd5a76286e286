//! A bulk apply on a flue 2.x SQLite journal: `turnscope --write abort|requeue|extend|fail ID ID…
//! | --all [filters] [--rate N/s]`, as beta.7's (`bulk.rs`): the selection read once, in one
//! snapshot, and frozen (full ids); each submission planned at the real clock by the action's own
//! planning (`turnscope_core::flue2::actions`, the one-submission action's); a preview grouped
//! by what is written and the runtime's next pass computed on each row after it, the refusals
//! with their reasons; one confirmation (the count typed from 10 on); then one fenced
//! transaction per submission (`Flue2SqliteWriter`, the same fence as one action's), all under
//! one batch id, where a change since the preview stops only that one. The summary, or one
//! `turnscope.flue2.bulk/1` document, says what happened to each.

use std::collections::{BTreeMap, HashMap};
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
use turnscope_core::flue2::{Flue2Action, Flue2ActionPlan, Flue2Refusal, Flue2SubmissionRow};
use turnscope_core::text::{plural, sanitize};
use turnscope_engine::flue2::{plan_json, Flue2Options, Streams};
use turnscope_engine::flue2_actions::{audit_summary, plan_on, preview_json};
use turnscope_store::{Applied, ApplyError, AuditInfo, Flue2SqliteReader, Flue2SqliteWriter};

/// How many submissions each group of the preview and the summary names before "and N more".
const SHOWN_PER_GROUP: usize = 20;

/// What happened to one submission of the batch.
enum Outcome {
    /// Planned, not written (a dry run, a declined batch).
    Planned,
    Applied(Applied),
    /// Refused at planning or by the writer: nothing written.
    Refused(Flue2Refusal),
    /// The fence found it changed since the preview: nothing written.
    Changed(Vec<String>),
    /// The write failed (the database, not the submission): nothing written.
    Error(String),
}

impl Outcome {
    fn name(&self) -> &'static str {
        match self {
            Outcome::Planned => "planned",
            Outcome::Applied(_) => "applied",
            Outcome::Refused(_) => "refused",
            Outcome::Changed(_) => "changed",
            Outcome::Error(_) => "error",
        }
    }
}

/// One submission: where it stood at the read, and its plan or refusal.
struct Item {
    id: String,
    /// Its classification and the runtime's next step at the read.
    before: String,
    plan: Result<Flue2ActionPlan, Flue2Refusal>,
    outcome: Outcome,
}

/// What a group of the preview shares: the columns written and the next pass after the write.
fn group_key(p: &Flue2ActionPlan) -> String {
    let cols: Vec<&str> = p.changes.iter().map(|c| c.column).collect();
    let live = if p.fence.live_lease {
        " (under a live lease: its owner honours it)"
    } else {
        ""
    };
    format!(
        "write {}{live}; next: {}",
        cols.join(", "),
        p.next.step.column()
    )
}

/// Every selected submission, read in one snapshot and planned at `now`.
fn plan_all(
    reader: &Flue2SqliteReader,
    opts: &Flue2Options,
    action: &Flue2Action,
    b: &BulkActionArgs,
    now: i64,
) -> Result<Vec<Item>, CliError> {
    let sel = if b.all {
        Some(super::flue2_list::selection_of(&b.selection)?)
    } else {
        None
    };
    let mut streams = Streams::default();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let mut owner_error = None;
    let (rows, owner) = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        joined = turnscope_core::flue2::joined_by_host(&all);
        let (rows, owner): (Vec<Flue2SubmissionRow>, Option<String>) = match &sel {
            None => {
                let mut rows: Vec<Flue2SubmissionRow> = Vec::new();
                for q in &b.submissions {
                    let r = reader.find_submission(q)?;
                    if !rows.iter().any(|x| x.submission_id == r.submission_id) {
                        rows.push(r);
                    }
                }
                (rows, None)
            }
            Some(sel) => {
                let in_view: Vec<Flue2SubmissionRow> =
                    all.into_iter().filter(|r| sel.in_view(r, now)).collect();
                match sel.resolve_owner(in_view.iter()) {
                    Ok(o) => (in_view, o),
                    Err(e) => {
                        owner_error = Some(e);
                        (Vec::new(), None)
                    }
                }
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
    let item = |i: &turnscope_engine::flue2::Inspected<'_>| Item {
        id: i.row.submission_id.clone(),
        before: format!("{} · next {}", i.label(), i.plan.step.column()),
        plan: plan_on(action, i, opts, now),
        outcome: Outcome::Planned,
    };
    let joined_of =
        |r: &Flue2SubmissionRow| joined.get(&r.submission_id).cloned().unwrap_or_default();
    Ok(match &sel {
        None => rows
            .iter()
            .map(|r| item(&streams.inspect(r, opts, joined_of(r), now)))
            .collect(),
        Some(sel) => {
            let (kept, _) = sel.select(&rows, owner.as_deref(), now, |r| {
                streams.inspect(r, opts, joined_of(r), now)
            });
            kept.iter().map(item).collect()
        }
    })
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
    writeln!(
        out,
        "{name} on {} ({what}), each planned at the real clock; the runtime's next pass is computed on each row after its write:",
        plural(items.len() as u64, "submission", "submissions")
    )?;
    let mut groups: BTreeMap<String, Vec<&Item>> = BTreeMap::new();
    for i in items {
        if let Ok(p) = &i.plan {
            groups.entry(group_key(p)).or_default().push(i);
        }
    }
    for (key, members) in &groups {
        writeln!(out, "  {} to {}", members.len(), sanitize(key))?;
        write_ids(members, out)?;
    }
    let refused: Vec<&Item> = items.iter().filter(|i| i.plan.is_err()).collect();
    if !refused.is_empty() {
        writeln!(
            out,
            "  {} refused (nothing written to them):",
            refused.len()
        )?;
        for i in refused.iter().take(SHOWN_PER_GROUP) {
            let r = i.plan.as_ref().expect_err("refused");
            writeln!(out, "    {}: {}", i.id, sanitize(&r.reason))?;
        }
        if refused.len() > SHOWN_PER_GROUP {
            writeln!(
                out,
                "    and {} more (--json lists every one)",
                refused.len() - SHOWN_PER_GROUP
            )?;
        }
    }
    Ok(())
}

fn write_ids(members: &[&Item], out: &mut dyn Write) -> std::io::Result<()> {
    for i in members.iter().take(SHOWN_PER_GROUP) {
        writeln!(out, "    {}  ({})", i.id, sanitize(&i.before))?;
    }
    if members.len() > SHOWN_PER_GROUP {
        writeln!(
            out,
            "    and {} more (--json lists every one)",
            members.len() - SHOWN_PER_GROUP
        )?;
    }
    Ok(())
}

/// Counts: applied, refused (planning or writer), changed, errors.
fn counts(items: &[Item]) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for i in items {
        match (&i.outcome, &i.plan) {
            (Outcome::Applied(_), _) => c.0 += 1,
            (Outcome::Refused(_), _) | (_, Err(_)) => c.1 += 1,
            (Outcome::Changed(_), _) => c.2 += 1,
            (Outcome::Error(_), _) => c.3 += 1,
            (Outcome::Planned, Ok(_)) => {}
        }
    }
    c
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
    let (applied, refused, changed, errors) = counts(items);
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
        json!({"selected": items.len(), "applied": applied, "refused": refused, "changed": changed, "errors": errors}),
    );
    let list: Vec<Value> = items
        .iter()
        .map(|i| {
            let plan = i.plan.as_ref().ok();
            let refusal = match (&i.outcome, &i.plan) {
                (Outcome::Changed(d), _) => Some(json!({
                    "reason": "the submission changed since the preview",
                    "instead": format!("run `turnscope show {}` to see its current state", i.id),
                    "changed": d,
                })),
                (Outcome::Error(e), _) => Some(json!({"reason": e, "instead": null, "changed": []})),
                (Outcome::Refused(r), _) | (_, Err(r)) => {
                    Some(json!({"reason": r.reason, "instead": r.instead, "changed": []}))
                }
                _ => None,
            };
            json!({
                "submissionId": i.id,
                "before": i.before,
                "outcome": if i.plan.is_err() { "refused" } else { i.outcome.name() },
                "preview": plan.map_or(Value::Null, preview_json),
                "next": plan.map_or(Value::Null, |p| plan_json(&p.next)),
                "refused": refusal,
                "auditId": match &i.outcome { Outcome::Applied(a) => json!(a.audit_id), _ => Value::Null },
            })
        })
        .collect();
    o.insert("items".into(), Value::Array(list));
    Value::Object(o)
}

fn write_summary(items: &[Item], batch: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let (applied, refused, changed, errors) = counts(items);
    writeln!(
        out,
        "applied {applied}, refused {refused}, changed since the preview {changed}, failed {errors} (batch {batch}; `turnscope audit --batch {batch}` lists it, `turnscope --write undo {batch}` reverts what the runtime has not acted on yet)"
    )?;
    for i in items {
        let line = match &i.outcome {
            Outcome::Changed(d) => format!(
                "changed since the preview, nothing written: {}",
                d.join("; ")
            ),
            Outcome::Error(e) => format!("failed, nothing written: {e}"),
            Outcome::Refused(r) => format!("refused, nothing written: {}", r.reason),
            _ => continue,
        };
        writeln!(out, "  {}: {}", i.id, sanitize(&line))?;
    }
    Ok(())
}

/// The exit of a bulk apply, as beta.7's (a change since the preview counts as a refusal).
fn finish(items: &[Item], dry_run: bool) -> Result<(), CliError> {
    let (_, refused, changed, errors) = counts(items);
    bulk_exit(dry_run, refused + changed, errors)
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
    let writes = items.iter().filter(|i| i.plan.is_ok()).count();
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
    for (n, item) in items.iter_mut().filter(|i| i.plan.is_ok()).enumerate() {
        pace(started, n, b.rate);
        let plan = item.plan.as_ref().expect("a write has a plan");
        let info = AuditInfo {
            operator: operator.clone(),
            action: name.to_string(),
            reason: b.reason.clone(),
            summary: audit_summary(plan),
            now_ms: turnscope_store::clock::now_ms(),
            batch_id: Some(batch.clone()),
            side_effects: None,
        };
        // The fence re-reads the row inside the write's transaction, on the real clock.
        item.outcome = match writer.apply(&plan.fence, &plan.changes, &info) {
            Ok(a) => Outcome::Applied(a),
            Err(ApplyError::Fenced(d)) => Outcome::Changed(d),
            Err(ApplyError::Store(e)) => Outcome::Error(e.to_string()),
            Err(e) => Outcome::Refused(Flue2Refusal {
                reason: e.to_string(),
                instead: format!("run `turnscope show {}` to see its current state", item.id),
            }),
        };
        bar.advance(1);
    }
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
