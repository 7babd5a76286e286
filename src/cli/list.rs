//! `turnscope list`.

use std::io::Write;

use serde_json::json;

use super::args::{Cli, ListArgs};
use super::output::{table, truncate};
use super::{now_ms, CliError};
use crate::report::{plan_json, submission_json, SubmissionReport};
use crate::store::{JournalStore, RowFilter};
use crate::text::sanitize;

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    // One read snapshot for the listing and every report: one consistent state, and no
    // transaction per submission.
    let mut items = Vec::new();
    let mut body: Vec<Vec<String>> = Vec::new();
    let filter = super::select::scan(store, &args.selection, cli.context_window, now, &mut |r| {
        if args.json {
            // Kept as text: 2,000 items as JSON values would take tens of megabytes.
            items.push(serde_json::to_string_pretty(&json_item(r, now)).unwrap_or_default());
        } else {
            body.push(table_row(r));
        }
    })?;
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
