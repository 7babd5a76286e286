//! `turnscope list`.

use std::io::Write;

use serde::Serialize;
use serde_json::json;

use super::args::{Cli, ListArgs, ListOutput};
use super::list_sort::{SortBy, SortKey};
use super::output::{table, truncate};
use super::{now_ms, CliError};
use turnscope_core::journal::cost::UsageSum;
use turnscope_core::journal::status::JournalPhase;
use turnscope_core::recovery::classify::TrailingPartialBatch;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_core::text::sanitize;
use turnscope_engine::report::{cost_text, PlanJson, SubmissionJson, SubmissionReport};
use turnscope_store::JournalStore;

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let sort = args.sort.as_deref().map(SortBy::parse).transpose()?;
    if args.json && sort.is_none() {
        return stream_json(store, cli, args, out);
    }
    let listing = render(store, cli, args, sort)?;
    out.write_all(listing.stdout.as_bytes())?;
    if let Some(note) = &listing.stderr {
        eprintln!("{}", sanitize(note));
    }
    Ok(())
}

/// `--json` in sequence order, each item written as it is inspected: a listing of every status
/// on a 148,000-submission journal is 200 MB of JSON, which was held twice before a byte was
/// written. The bytes are `render`'s. Nothing is written before the first item (an error found
/// before any row, a bad `--owner` prefix, prints no half document); a read that fails after it
/// leaves the document unclosed (no parser takes it for a whole listing) and exits with the error.
fn stream_json(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let doc = list_doc(store, args.selection.row_filter()?.name(), now);
    let Some(head) = doc.strip_suffix(EMPTY_ITEMS) else {
        return Err(CliError::from(std::io::Error::other(
            "the listing's JSON head is not the expected shape",
        )));
    };
    // Buffered: one write per item would be a system call for each of 148,000.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut item = format!("{head}\"submissions\": [");
    let mut written = 0usize;
    let mut failed: Option<std::io::Error> = None;
    let mut text = Vec::new();
    super::select::scan_counted(store, &args.selection, cli.context_window, now, &mut |r| {
        if failed.is_some() {
            return;
        }
        if written > 0 {
            item.clear();
        }
        json_item(r, now, r.path_cost(), &mut text);
        push_item(&mut item, &String::from_utf8_lossy(&text), written == 0);
        written += 1;
        if let Err(e) = out.write_all(item.as_bytes()) {
            failed = Some(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    if written == 0 {
        out.write_all(item.as_bytes())?;
    }
    out.write_all(if written == 0 {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    })?;
    out.flush()?;
    Ok(())
}

/// The listing's document without items, pretty (it ends in `EMPTY_ITEMS`).
fn list_doc(store: &dyn JournalStore, filter: &str, now: i64) -> String {
    let doc = json!({
        "schema": "turnscope.list/1",
        "format": turnscope_engine::report::JOURNAL_FORMAT,
        "database": store.location(),
        "filter": filter,
        "now": now,
        "submissions": [],
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

const EMPTY_ITEMS: &str = "\"submissions\": []\n}";

/// One pretty item as an element of the `submissions` array, indented as `to_string_pretty`
/// indents the whole document.
fn push_item(out: &mut String, item: &str, first: bool) {
    out.push_str(if first { "\n" } else { ",\n" });
    for (k, line) in item.lines().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
}

/// One reading of the listing: what goes to stdout and stderr, and a signature of the rows
/// that changes only when the data does (not when "expired 4m12s ago" ticks on).
pub struct Listing {
    pub stdout: String,
    pub stderr: Option<String>,
    pub signature: String,
}

/// One row, as the output format needs it.
enum Line {
    Json(String),
    Cells(Vec<String>),
    Id(String),
}

/// Read and format the listing once, in one read snapshot.
pub fn render(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    sort: Option<SortBy>,
) -> Result<Listing, CliError> {
    let now = now_ms(cli);
    let mut sel = args.selection.clone();
    // Sorted, --limit keeps the first N in the sorted order: every row is read first.
    let limit = sel.limit;
    if sort.is_some() {
        sel.limit = None;
    }
    let wide = args.output == Some(ListOutput::Wide);
    // Each line with its cost since the input (the total line sums those shown).
    let mut lines: Vec<(SortKey, Line, Option<f64>)> = Vec::new();
    let mut signature = String::new();
    let mut text = Vec::new();
    let funnel = super::select::scan_counted(store, &sel, cli.context_window, now, &mut |r| {
        let key = sort.map_or(SortKey::Missing, |s| s.key(r));
        // One walk of the path for the row's cost, whatever the output.
        let cost = r.path_cost();
        let figure = cost.as_ref().map(|c| c.cost);
        let line = if args.json {
            // Kept as text: 2,000 items as JSON values would take tens of megabytes.
            json_item(r, now, cost, &mut text);
            Line::Json(String::from_utf8_lossy(&text).into_owned())
        } else if args.output == Some(ListOutput::Ids) {
            Line::Id(r.row().submission_id.clone())
        } else {
            Line::Cells(table_row(r, figure, wide))
        };
        signature.push_str(&row_signature(r, now));
        lines.push((key, line, figure));
    })?;
    if let Some(s) = sort {
        // Stable: equal keys stay in sequence order. A missing value comes last either way
        // (`--sort=-cost` starts with the costliest, not with the rows that have no input).
        lines.sort_by(|a, b| match (&a.0, &b.0) {
            (SortKey::Missing, SortKey::Missing) => std::cmp::Ordering::Equal,
            (SortKey::Missing, _) => std::cmp::Ordering::Greater,
            (_, SortKey::Missing) => std::cmp::Ordering::Less,
            _ if s.descending => a.0.cmp(&b.0).reverse(),
            _ => a.0.cmp(&b.0),
        });
        if let Some(n) = limit {
            lines.truncate(n);
        }
    }
    let mut listing = Listing {
        stdout: String::new(),
        stderr: None,
        signature,
    };
    if args.json {
        let text = list_doc(store, funnel.view.name(), now);
        let items: Vec<String> = lines
            .into_iter()
            .filter_map(|(_, l, _)| match l {
                Line::Json(t) => Some(t),
                _ => None,
            })
            .collect();
        listing.stdout = format!("{}\n", with_items(&text, &items));
        return Ok(listing);
    }
    if lines.is_empty() {
        let what = funnel.nothing_matched();
        // `-o ids` output is pasted into commands: an empty list is no line at all.
        if args.output == Some(ListOutput::Ids) {
            listing.stderr = Some(what);
        } else {
            listing.stdout = format!("{what}\n");
        }
        return Ok(listing);
    }
    let mut body = Vec::with_capacity(lines.len());
    let (mut total, mut costed) = (0.0f64, 0usize);
    for (_, l, cost) in lines {
        if let Some(c) = cost {
            total += c;
            costed += 1;
        }
        match l {
            Line::Id(id) => {
                listing.stdout.push_str(&sanitize(&id));
                listing.stdout.push('\n');
            }
            Line::Cells(c) => body.push(c),
            Line::Json(_) => {}
        }
    }
    if !body.is_empty() {
        let header: &[&str] = if wide { &WIDE_HEADER } else { &HEADER };
        let rows = body.len();
        listing.stdout = table(header, &body);
        listing.stdout.push_str(&total_line(total, costed, rows));
    }
    Ok(listing)
}

const HEADER: [&str; 12] = [
    "SEQ", "ID", "KIND", "INSTANCE", "STATUS", "ATT", "LEASE", "PHASE", "VERDICT", "RULE", "COST",
    "ERROR",
];

/// `-o wide`: the lease owner too (which worker held it), before the error.
const WIDE_HEADER: [&str; 13] = [
    "SEQ", "ID", "KIND", "INSTANCE", "STATUS", "ATT", "LEASE", "PHASE", "VERDICT", "RULE", "COST",
    "OWNER", "ERROR",
];

/// The line under the table: the COST column summed over the rows shown.
fn total_line(total: f64, costed: usize, rows: usize) -> String {
    let mut s = format!(
        "total cost since input: {} over {}",
        cost_text::money(total),
        turnscope_core::text::plural(costed as u64, "submission", "submissions")
    );
    if costed < rows {
        s.push_str(&format!(
            ", {} without an input entry on the path",
            rows - costed
        ));
    }
    s.push_str(" (active paths only: `show` adds abandoned branches)\n");
    s
}

/// What makes a row "changed" for `--watch`: the stored state and the conclusions, not the
/// relative times shown (a lease counts only as expired or not).
fn row_signature(r: &SubmissionReport, now: i64) -> String {
    let row = r.row();
    format!(
        "{}|{}|{:?}|{}/{}|{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}\n",
        row.submission_id,
        row.status,
        row.attempt_id,
        row.attempt_count,
        row.max_retry,
        row.lease_expired(now),
        row.owner_id,
        r.bundle
            .journal
            .as_ref()
            .map(|j| (j.phase.as_str(), j.revision)),
        r.verdict(),
        r.plan.rule,
        r.plan.result.map(RuleResult::as_str),
        row.error,
    )
}

/// `doc` (pretty JSON ending in `"submissions": []`) with the pretty-printed `items` in that
/// array, formatted exactly as `to_string_pretty` formats the whole document.
fn with_items(doc: &str, items: &[String]) -> String {
    let Some(head) = doc.strip_suffix(EMPTY_ITEMS) else {
        return doc.to_string();
    };
    if items.is_empty() {
        return doc.to_string();
    }
    let mut out =
        String::with_capacity(doc.len() + items.iter().map(|i| i.len() + 64).sum::<usize>());
    out.push_str(head);
    out.push_str("\"submissions\": [");
    for (n, item) in items.iter().enumerate() {
        push_item(&mut out, item, n == 0);
    }
    out.push_str("\n  ]\n}");
    out
}

/// One item of the listing, serialized straight to its text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListItem<'a> {
    submission: SubmissionJson<'a>,
    journal_phase: Option<&'a JournalPhase>,
    classification: serde_json::Value,
    inspection: &'static str,
    trailing_partial_batch: &'a Option<TrailingPartialBatch>,
    verdict: String,
    plan: PlanJson<'a>,
    /// The stored usage since the input on the active path (the listing's walk does not read
    /// abandoned branches); `None` when the input entry is not on the path.
    cost_since_input: Option<UsageSum>,
}

/// The item pretty-printed on its own (`push_item` indents it into the array).
fn json_item(r: &SubmissionReport, now: i64, cost: Option<UsageSum>, text: &mut Vec<u8>) {
    let c = r.classification();
    let item = ListItem {
        submission: SubmissionJson::new(r.row(), now),
        journal_phase: r.bundle.journal.as_ref().map(|j| &j.phase),
        classification: c.state.to_runtime_json(),
        inspection: c.state.inspection().as_str(),
        trailing_partial_batch: &c.trailing_partial_batch,
        verdict: r.verdict(),
        plan: PlanJson::new(&r.plan),
        cost_since_input: cost,
    };
    text.clear();
    // Into a Vec, which cannot fail; a failed serialization would leave the item empty.
    if serde_json::to_writer_pretty(&mut *text, &item).is_err() {
        text.clear();
    }
}

/// A table row; `cost`: the cost since the input (COST); `wide`: full id, untruncated instance
/// and error, and the owner.
fn table_row(r: &SubmissionReport, cost: Option<f64>, wide: bool) -> Vec<String> {
    let row = r.row();
    let cut = |text: &str, max: usize| {
        if wide {
            sanitize(text)
        } else {
            truncate(&sanitize(text), max)
        }
    };
    let mut cells = vec![
        row.sequence.to_string(),
        cut(&row.submission_id, 8),
        row.kind.clone(),
        cut(&row.instance_id().unwrap_or_default(), 18),
        row.status.to_string(),
        format!("{}/{}", row.attempt_count, row.max_retry),
        r.lease_text(),
        r.bundle
            .journal
            .as_ref()
            .map_or("-".into(), |j| sanitize(j.phase.as_str())),
        r.verdict(),
        r.plan.rule.map_or("-".into(), |n| {
            format!("{n} {}", r.plan.result.map_or("", RuleResult::as_str))
        }),
        cost.map_or("-".into(), cost_text::money),
    ];
    if wide {
        cells.push(sanitize(row.owner_id.as_deref().unwrap_or("-")));
    }
    cells.push(cut(row.error.as_deref().unwrap_or_default(), 40));
    cells
}
