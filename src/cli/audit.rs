//! `turnscope audit`: the trail, filtered in the database (by submission prefix, time, operator
//! and batch, the newest N), as a table or the `turnscope.audit/1` document.

use std::io::Write;

use serde_json::json;

use super::args::{AuditArgs, Cli};
use super::output::table;
use super::{now_ms, CliError};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::text::sanitize;
use turnscope_store::{AuditQuery, AuditRecord, Backend, StoreError};

pub fn run(
    store: &dyn Backend,
    cli: &Cli,
    args: &AuditArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    run_on(
        &|q| store.audit_query(q),
        turnscope_engine::report::JOURNAL_FORMAT,
        cli,
        args,
        out,
    )
}

/// `audit` over any trail reader (beta.7's backends, a flue 2.x journal's reader).
pub fn run_on(
    audit_query: &dyn Fn(&AuditQuery) -> Result<Vec<AuditRecord>, StoreError>,
    format: &str,
    cli: &Cli,
    args: &AuditArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let query = query(cli, args);
    let records = audit_query(&query)?;
    if args.json {
        // `batch`: the bulk apply a record belongs to, under the name the batch's own
        // document (turnscope.bulk/1) gives it; `batch_id` stays for readers of the first form.
        let records: Vec<serde_json::Value> = records
            .iter()
            .map(|a| {
                let mut v = serde_json::to_value(a).unwrap_or_default();
                v["batch"] = json!(a.batch_id);
                v
            })
            .collect();
        let doc = json!({
            "schema": "turnscope.audit/1",
            "format": format,
            "records": records,
        });
        super::output::print_json(out, &doc)?;
        return Ok(());
    }
    if records.is_empty() {
        // Say whether the filters or the database are why there is nothing to show.
        let trail_empty = !query.is_filtered()
            || audit_query(&AuditQuery {
                limit: Some(1),
                ..AuditQuery::default()
            })?
            .is_empty();
        if trail_empty {
            writeln!(out, "no turnscope action was ever applied to this database")?;
        } else {
            writeln!(
                out,
                "no audit record matches {} (`turnscope audit` lists them all)",
                sanitize(&describe(&query, args))
            )?;
        }
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
                // Full ids: this column is pasted into show, export and undo.
                sanitize(&a.submission_id),
                sanitize(a.reason.as_deref().unwrap_or("")),
                sanitize(a.batch_id.as_deref().unwrap_or("")),
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
                "BATCH",
                "SUMMARY"
            ],
            &rows
        )
    )?;
    Ok(())
}

/// The store query the flags ask for. `--operator` filters only when typed on this command line:
/// `TURNSCOPE_OPERATOR` or the configuration file name who writes, not whose records to show.
fn query(cli: &Cli, args: &AuditArgs) -> AuditQuery {
    AuditQuery {
        submission_prefix: args.submission.clone(),
        since_ms: args.since.map(|s| s.ms(now_ms(cli))),
        operator: cli
            .operator
            .clone()
            .filter(|_| cli.operator_on_command_line),
        batch: args.batch.clone(),
        limit: args.limit.map(|n| n as usize),
    }
}

/// The filters as typed, for "no audit record matches …".
fn describe(q: &AuditQuery, args: &AuditArgs) -> String {
    let mut parts = Vec::new();
    if let Some(s) = &q.submission_prefix {
        parts.push(format!("--submission {s}"));
    }
    if let Some(t) = q.since_ms {
        parts.push(format!("--since {}", iso_from_ms(t)));
    }
    if let Some(o) = &q.operator {
        parts.push(format!("--operator {o}"));
    }
    if let Some(b) = &q.batch {
        parts.push(format!("--batch {b}"));
    }
    if let Some(n) = args.limit {
        parts.push(format!("--limit {n}"));
    }
    parts.join(" ")
}
