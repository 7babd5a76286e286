//! `turnscope list`.

use std::io::Write;

use serde_json::json;

use super::args::{Cli, ListArgs};
use super::output::{table, truncate};
use super::{now_ms, CliError};
use crate::report::{plan_json, submission_json, SubmissionReport};
use crate::store::{JournalStore, PathWalker, RowFilter, StoreError};
use crate::text::sanitize;

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let filter = match args.status.as_deref() {
        None => RowFilter::Expired,
        Some(s) => s.parse::<RowFilter>().map_err(|_| {
            CliError::new(
                format!("unknown status {s:?}"),
                format!("use one of: {} (or --expired)", RowFilter::names()),
                super::exit::USAGE,
            )
        })?,
    };
    // One read snapshot for the listing and every report: one consistent state, and no
    // transaction per submission.
    let mut items = Vec::new();
    let mut body: Vec<Vec<String>> = Vec::new();
    store.in_snapshot(&mut || scan_rows(store, cli, args, filter, now, &mut items, &mut body))?;
    if args.json {
        let doc = json!({
            "schema": "turnscope.list/1",
            "database": store.location(),
            "filter": filter.name(),
            "now": now,
            "submissions": [],
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        writeln!(out, "{}", with_items(&text, &items))?;
        return Ok(());
    }
    if body.is_empty() {
        let what = match filter {
            RowFilter::Expired => "no submission has an expired lease".to_string(),
            RowFilter::All => "the database has no submissions".to_string(),
            RowFilter::Failed => "no submission failed".to_string(),
            status => format!("no submission has status {status}"),
        };
        writeln!(out, "{what}")?;
        return Ok(());
    }
    let header = [
        "SEQ", "ID", "KIND", "INSTANCE", "STATUS", "ATT", "LEASE", "PHASE", "VERDICT", "RULE",
        "ERROR",
    ];
    write!(out, "{}", table(&header, &body))?;
    Ok(())
}

/// Inspect the listed rows that pass the row-level filters: JSON items or table rows.
fn scan_rows(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    filter: RowFilter,
    now: i64,
    items: &mut Vec<String>,
    body: &mut Vec<Vec<String>>,
) -> Result<(), StoreError> {
    let mut rows = store.list_submissions(filter, now)?;
    // Row-level filters first, so only the rows shown are inspected.
    rows.retain(|r| {
        args.kind.as_ref().is_none_or(|k| &r.kind == k)
            && args
                .instance
                .as_ref()
                .is_none_or(|i| r.instance_id().as_ref() == Some(i))
            && args.older_than.is_none_or(|age| {
                let since = if r.is_running() && r.lease_expires_at > 0 {
                    r.lease_expires_at
                } else {
                    r.accepted_at.unwrap_or(now)
                };
                now - since >= age.as_millis() as i64
            })
    });
    // Each report holds only its active path since the input (`store::walk`) and is turned into
    // its output line and dropped at once; the walker keeps a few recent walks.
    let mut walker = PathWalker::new(cli.context_window.is_some());
    for row in rows {
        if args.limit.is_some_and(|n| items.len() + body.len() >= n) {
            break;
        }
        let report = SubmissionReport::scan(
            store,
            &row.submission_id,
            &mut walker,
            cli.context_window,
            now,
        )?;
        if let Some(v) = &args.verdict {
            let verdict = report.verdict();
            // `resume` matches every resume mode; otherwise the label must match exactly.
            let hit = &verdict == v || verdict.strip_prefix("resume/").is_some() && v == "resume";
            if !hit {
                continue;
            }
        }
        if args.json {
            // Kept as text: 2,000 items as JSON values would take tens of megabytes.
            items.push(serde_json::to_string_pretty(&json_item(&report, now)).unwrap_or_default());
        } else {
            body.push(table_row(&report));
        }
    }
    Ok(())
}

/// `doc` (pretty JSON ending in `"submissions": []`) with the pretty-printed `items` in that
/// array, formatted exactly as `to_string_pretty` formats the whole document.
fn with_items(doc: &str, items: &[String]) -> String {
    const EMPTY: &str = "\"submissions\": []\n}";
    let Some(head) = doc.strip_suffix(EMPTY) else {
        return doc.to_string();
    };
    if items.is_empty() {
        return doc.to_string();
    }
    let mut out =
        String::with_capacity(doc.len() + items.iter().map(|i| i.len() + 64).sum::<usize>());
    out.push_str(head);
    out.push_str("\"submissions\": [\n");
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push_str(",\n");
        }
        for (k, line) in item.lines().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
    }
    out.push_str("\n  ]\n}");
    out
}

fn json_item(r: &SubmissionReport, now: i64) -> serde_json::Value {
    json!({
        "submission": submission_json(r.row(), now),
        "journalPhase": r.bundle.journal.as_ref().map(|j| j.phase.clone()),
        "classification": r.classification().state.to_runtime_json(),
        "inspection": r.classification().state.inspection().as_str(),
        "trailingPartialBatch": r.classification().trailing_partial_batch,
        "verdict": r.verdict(),
        "plan": plan_json(&r.plan),
    })
}

fn table_row(r: &SubmissionReport) -> Vec<String> {
    let row = r.row();
    vec![
        row.sequence.to_string(),
        truncate(&sanitize(&row.submission_id), 8),
        row.kind.clone(),
        truncate(&sanitize(&row.instance_id().unwrap_or_default()), 18),
        row.status.to_string(),
        format!("{}/{}", row.attempt_count, row.max_retry),
        r.lease_text(),
        r.bundle
            .journal
            .as_ref()
            .map_or("-".into(), |j| sanitize(j.phase.as_str())),
        r.verdict(),
        r.plan.rule.map_or("-".into(), |n| {
            format!("{n} {}", r.plan.result.unwrap_or(""))
        }),
        truncate(&sanitize(&row.error.clone().unwrap_or_default()), 40),
    ]
}
