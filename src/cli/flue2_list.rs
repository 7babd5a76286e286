//! `list` on a flue 2.x journal: the same flags as on beta.7 (`--expired`/`--status`, `--kind`,
//! `--instance`, `--owner`, `--older-than`, `--verdict`/`--not-verdict`, `--rule`, `--limit`,
//! `--sort`, `-o wide|ids|json`, `--json`), resolved by `turnscope_engine::flue2_select` over
//! every row read in one snapshot, each row's stream folded once.

use std::collections::HashMap;
use std::io::Write;

use super::args::{Cli, ListArgs, ListOutput, SelectionArgs};
use super::common::{exit, now_ms, CliError};
use super::output::print_json;
use serde_json::Value;
use turnscope_core::flue2::{Flue2Step, Flue2SubmissionRow, FLUE2_STATUSES};
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{list_json, Flue2Options, Inspected, Streams};
use turnscope_engine::flue2_cost::{cost_json, cost_of, cost_text};
use turnscope_engine::flue2_select::{
    disposition, is_view, verdict_names, Flue2Selection, LAST_STEP,
};
use turnscope_engine::flue2_sort::{key_of, sort_rows, SortColumn};
use turnscope_engine::listing::ListingError;
use turnscope_engine::report::rule_filter::{rule_names_up_to, RuleFilter};
use turnscope_engine::report::verdict_filter::VerdictFilter;
use turnscope_store::Flue2SqliteReader;

/// `--sort` on a 2.x journal: a column and its direction (the order is the engine's
/// `flue2_sort`, which the TUI's `o`/`O` sort by too).
struct Sort {
    column: SortColumn,
    descending: bool,
}

impl Sort {
    fn parse(text: &str) -> Result<Sort, CliError> {
        let t = text.trim();
        let (descending, name) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let column = SortColumn::parse(name).ok_or_else(|| {
            let names: Vec<&str> = SortColumn::ALL.iter().map(|c| c.name()).collect();
            CliError::new(
                format!("unknown column {text:?} for --sort on a flue 2.x journal"),
                format!(
                    "sort by one of: {} (a leading - sorts descending: --sort=-lease)",
                    names.join(", ")
                ),
                exit::USAGE,
            )
        })?;
        Ok(Sort { column, descending })
    }
}

/// The flags, checked (exit 2 naming the values a flag takes).
fn selection(a: &ListArgs) -> Result<Flue2Selection, CliError> {
    selection_of(&a.selection)
}

/// [`selection`] of the selection flags alone (`list`'s, and a bulk action's `--all`).
pub(super) fn selection_of(s: &SelectionArgs) -> Result<Flue2Selection, CliError> {
    let view = s.status.as_deref().unwrap_or("expired");
    if !is_view(view) {
        return Err(CliError::new(
            format!("unknown status {view:?} for a flue 2.x journal"),
            format!(
                "use one of: expired, all, {} (or --expired; --verdict failed selects failed settlements)",
                FLUE2_STATUSES.join(", ")
            ),
            exit::USAGE,
        ));
    }
    let names = verdict_names();
    let verdict = |v: &str| {
        VerdictFilter::parse_among(v, &names).map_err(|e| {
            CliError::new(
                format!("{e} for a flue 2.x journal"),
                format!("use one of: {}", names.join(", ")),
                exit::USAGE,
            )
        })
    };
    let verdict = match (&s.verdict, &s.not_verdict) {
        (_, Some(v)) => Some(verdict(v)?.negate()),
        (Some(v), None) => Some(verdict(v)?),
        (None, None) => None,
    };
    let rule = s
        .rule
        .as_deref()
        .map(|r| {
            RuleFilter::parse_up_to(r, LAST_STEP).map_err(|e| {
                CliError::new(
                    format!("{e} (flue 2.x's reconciler has steps 0 to {LAST_STEP})"),
                    format!("use one of: {}", rule_names_up_to(LAST_STEP).join(", ")),
                    exit::USAGE,
                )
            })
        })
        .transpose()?;
    Ok(Flue2Selection {
        view: view.to_string(),
        kind: s.kind.clone(),
        instance: s.instance.clone(),
        owner: s.owner.clone(),
        older_than: s.older_than,
        verdict,
        rule,
        limit: s.limit,
    })
}

pub(super) fn list(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    a: &ListArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if a.watch.is_some() {
        return Err(CliError::new(
            "list --watch does not read flue 2.x journals yet",
            "run list again, or open the journal in the TUI",
            exit::USAGE,
        ));
    }
    let mut sel = selection(a)?;
    let sort = a.sort.as_deref().map(Sort::parse).transpose()?;
    // Sorted, --limit keeps the first N in the sorted order: every row is selected first.
    let limit = sel.limit;
    if sort.is_some() {
        sel.limit = None;
    }
    let now = now_ms(cli);
    // Each row's verdict and plan, its stream folded and dropped before the next is read:
    // memory holds one folded stream, not every row's.
    let mut inspected = HashMap::new();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let mut owner_error: Option<ListingError> = None;
    let (rows, owner) = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        joined = turnscope_core::flue2::joined_by_host(&all);
        let in_view: Vec<Flue2SubmissionRow> =
            all.into_iter().filter(|r| sel.in_view(r, now)).collect();
        let owner = match sel.resolve_owner(in_view.iter()) {
            Ok(o) => o,
            Err(e) => {
                owner_error = Some(e);
                return Ok((Vec::new(), None));
            }
        };
        // Only rows the row filters keep are folded (a stream is read once for all its rows).
        let keep: Vec<&Flue2SubmissionRow> = in_view
            .iter()
            .filter(|r| sel.keeps_row(r, owner.as_deref(), now).iter().all(|k| *k))
            .collect();
        inspected = Streams::inspect_each(
            reader,
            keep,
            opts,
            |r| joined.get(&r.submission_id).cloned().unwrap_or_default(),
            now,
        )?;
        Ok((in_view, owner))
    })?;
    if let Some(ListingError::AmbiguousOwner { message, hint }) = owner_error {
        return Err(CliError::new(message, hint, exit::USAGE));
    }
    // select inspects only the rows the row filters keep, each inspected above; a row it did
    // not would read as one with no stream.
    let none = Streams::default();
    let (mut shown, funnel) = sel.select(&rows, owner.as_deref(), now, |r| {
        match inspected.remove(&r.submission_id) {
            Some(d) => d.attach(r),
            None => none.inspect(r, opts, Vec::new(), now),
        }
    });
    if let Some(s) = &sort {
        // Stable: equal keys stay in sequence order; a missing value last either way.
        sort_rows(&mut shown, s.column, s.descending, |i, c| key_of(i, c));
        if let Some(n) = limit {
            shown.truncate(n);
        }
    }
    let view = sel.view.as_str();
    if a.json || a.output == Some(ListOutput::Json) {
        let mut doc = list_json(opts, reader.format_version(), view, &shown, now);
        // Each item's cost since the input, as `show` has it.
        if let Some(Value::Array(items)) = doc.get_mut("submissions") {
            for (item, i) in items.iter_mut().zip(&shown) {
                if let Value::Object(m) = item {
                    m.insert(
                        "cost".into(),
                        cost_of(i).map_or(Value::Null, |c| cost_json(&c)),
                    );
                }
            }
        }
        print_json(out, &doc)?;
        return Ok(());
    }
    if a.output == Some(ListOutput::Ids) {
        for i in &shown {
            writeln!(out, "{}", sanitize(&i.row.submission_id))?;
        }
        return Ok(());
    }
    writeln!(out, "{}", opts.header_line(reader.format_version()))?;
    if shown.is_empty() {
        writeln!(out, "{}", funnel.nothing_matched(view))?;
        return Ok(());
    }
    let wide = a.output == Some(ListOutput::Wide);
    write_table(&shown, wide, now, out)?;
    writeln!(out, "{} submission(s) in view {view}", shown.len())?;
    // One journal-wide cause behind every `pass_fails` row: said once, under the table.
    if let Some(why) = shown
        .iter()
        .find(|i| i.plan.step == Flue2Step::PassFails)
        .and_then(|i| i.row.pass_fails.as_deref())
    {
        writeln!(
            out,
            "no reconciliation pass gets past its pending settlements: {}",
            sanitize(why)
        )?;
    }
    Ok(())
}

/// The table: ID, KIND, INSTANCE, STATUS, ATTEMPTS, LEASE, COST, VERDICT, NEXT; wide adds the
/// disposition, the owner and the error.
fn write_table(
    shown: &[Inspected<'_>],
    wide: bool,
    now: i64,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut head = vec![
        "ID", "KIND", "INSTANCE", "STATUS", "ATTEMPTS", "LEASE", "COST", "VERDICT", "NEXT",
    ];
    if wide {
        head.extend(["STATE", "OWNER", "ERROR"]);
    }
    let table: Vec<Vec<String>> = shown
        .iter()
        .map(|i| {
            let r = i.row;
            let mut row = vec![
                sanitize(&r.submission_id),
                sanitize(&r.kind),
                sanitize(&r.session().map_or_else(
                    || "?".into(),
                    |k| format!("{}/{}", k.agent_name, k.instance_id),
                )),
                sanitize(&r.status),
                format!("{}/{}", r.attempt_count, r.max_attempts),
                lease_text(r, now),
                cost_text(cost_of(i).map(|c| c.total()).as_ref()),
                sanitize(&i.label()),
                i.plan.step.column(),
            ];
            if wide {
                row.push(disposition(i).to_string());
                row.push(sanitize(r.owner_id.as_deref().unwrap_or("-")));
                row.push(sanitize(r.error.as_deref().unwrap_or("-")));
            }
            row
        })
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &table {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (n, (c, w)) in cells.iter().zip(&width).enumerate() {
            if n + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s
    };
    writeln!(out, "{}", line(head.clone()))?;
    for row in &table {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// A duration as `1h2m`, `3m4s` or `5s`.
fn span(ms: i64) -> String {
    let s = ms.unsigned_abs() / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// The lease column: expired (running, past), held, or none.
pub(super) fn lease_text(r: &Flue2SubmissionRow, now: i64) -> String {
    if r.lease_expires_at <= 0 {
        return "-".into();
    }
    let d = r.lease_expires_at - now;
    if r.lease_expired(now) {
        format!("expired {} ago", span(d))
    } else if d >= 0 {
        format!("{} left", span(d))
    } else {
        format!("ended {} ago", span(d))
    }
}
