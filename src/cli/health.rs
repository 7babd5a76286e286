//! `turnscope health [--all | IDS…] [--json]`: what on each session's active path the next turn
//! will not send as stored (`engine::report::health`), with what it does to that turn. `--all`
//! reads every session of the journal one at a time (a bar on stderr in a terminal); each
//! session with findings is printed as it is found. Exit 8 when any session has a finding.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::{json, Value};

use super::args::HealthArgs;
use super::common::exit;
use super::progress::Bar;
use super::CliError;
use turnscope_core::recovery::health::Hazard;
use turnscope_core::text::sanitize;
use turnscope_engine::report::health::{self, HealthError, HealthTotals, SessionHealth};
use turnscope_store::{thousands, Backend, StoreError};

pub fn run(store: &dyn Backend, args: &HealthArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let keys: Vec<String> = match (args.all, args.ids.is_empty()) {
        (true, true) => store.list_sessions()?.into_iter().map(|s| s.id).collect(),
        (false, false) => resolve(store, &args.ids)?,
        (true, false) => return Err(CliError::new(
            "health takes --all or session ids, not both",
            "turnscope health --all   (every session); turnscope health KEY|SUBMISSION|INSTANCE…",
            exit::USAGE,
        )),
        (false, true) => return Err(CliError::new(
            "health needs --all or one or more sessions",
            "turnscope health --all   (every session); turnscope health KEY|SUBMISSION|INSTANCE…",
            exit::USAGE,
        )),
    };
    let mut bar = Bar::new(args.json, "health", keys.len() as u64);
    let mut totals = HealthTotals::default();
    let mut shown: Vec<Value> = Vec::new();
    let mut write_error: Option<std::io::Error> = None;
    let list_healthy = !args.all;
    let mut visit = |h: SessionHealth| {
        totals.add(&h);
        bar.advance(1);
        if h.healthy() && !list_healthy {
            return true;
        }
        if args.json {
            shown.push(serde_json::to_value(&h).expect("a session's health serialises"));
            return true;
        }
        let r = bar.suspend(|| print_session(out, &h));
        match r {
            Ok(()) => true,
            Err(e) => {
                write_error = Some(e);
                false
            }
        }
    };
    let scanned = health::scan(store.reader(), &mut keys.into_iter(), &mut visit);
    bar.clear();
    match scanned {
        Ok(()) => {}
        Err(HealthError::Store(e)) => return Err(e.into()),
        Err(e @ HealthError::NoRows) => {
            return Err(CliError::new(
                e.to_string(),
                "health reads SQLite and PostgreSQL journals, not an export",
                exit::ERROR,
            ))
        }
    }
    if let Some(e) = write_error {
        return Err(e.into());
    }
    if args.json {
        let doc = json!({
            "schema": "turnscope.health/1",
            "format": turnscope_engine::report::JOURNAL_FORMAT,
            "database": store.location(),
            "scope": if args.all { "all" } else { "sessions" },
            "totals": totals,
            "sessions": shown,
        });
        super::output::print_json(out, &doc)?;
    } else {
        writeln!(out, "{}", summary(&totals))?;
    }
    if totals.findings > 0 {
        // The exit code says it; nothing more is printed.
        return Err(CliError {
            message: String::new(),
            hint: None,
            code: exit::FINDINGS,
        });
    }
    Ok(())
}

/// The sessions `ids` name: an exact session key, or whatever `sessions QUERY` finds for it (an
/// instance, a submission id or prefix, a conversation id, …). Each session once, in key order.
fn resolve(store: &dyn Backend, ids: &[String]) -> Result<Vec<String>, CliError> {
    let mut keys = BTreeSet::new();
    for id in ids {
        if session_exists(store, id)? {
            keys.insert(id.clone());
            continue;
        }
        let found = store.find_sessions(id)?;
        if found.is_empty() {
            return Err(CliError::new(
                format!("no session matches {}", sanitize(id)),
                "give a session key, an instance, a submission id or prefix (`turnscope sessions QUERY` finds one)",
                exit::NOT_FOUND,
            ));
        }
        keys.extend(found.into_iter().map(|m| m.session));
    }
    Ok(keys.into_iter().collect())
}

/// Whether `key` names a session row, without reading its entries.
fn session_exists(store: &dyn Backend, key: &str) -> Result<bool, StoreError> {
    match store.reader().session_rows() {
        Some(rows) => Ok(rows.session_data(key)?.is_some()),
        None => Ok(false),
    }
}

/// The closing line: how much was read and what was found.
pub(super) fn summary(t: &HealthTotals) -> String {
    let kinds: Vec<String> = Hazard::KINDS
        .iter()
        .zip(t.by_kind)
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {}", thousands(n)))
        .collect();
    let read = format!(
        "{} session{} ({} entries)",
        thousands(t.sessions),
        if t.sessions == 1 { "" } else { "s" },
        thousands(t.entries)
    );
    // A 2.x stream's batches are no session's (conversation's): said apart.
    let batches = match t.batch_findings {
        0 => String::new(),
        n => format!(" and {} in streams' batches", thousands(n)),
    };
    let in_sessions = t.findings - t.batch_findings;
    if t.findings == 0 {
        format!("healthy: no finding in {read}")
    } else if in_sessions == 0 {
        // Not "0 findings in 0 of …": the conversations are healthy, only batches are damaged.
        format!(
            "{} finding{} in streams' batches, none in {read}: {}",
            thousands(t.batch_findings),
            if t.batch_findings == 1 { "" } else { "s" },
            kinds.join(", ")
        )
    } else {
        format!(
            "{} finding{} in {} of {read}{batches}: {}",
            thousands(in_sessions),
            if in_sessions == 1 { "" } else { "s" },
            thousands(t.sessions_with_findings),
            kinds.join(", ")
        )
    }
}

fn short(id: &str) -> String {
    let id = sanitize(id);
    if id.chars().count() > 12 {
        format!("{}…", id.chars().take(8).collect::<String>())
    } else {
        id
    }
}

/// One session's findings, a few lines each.
pub(super) fn print_session(out: &mut dyn Write, h: &SessionHealth) -> std::io::Result<()> {
    let instance = h
        .instance
        .as_deref()
        .map_or(String::new(), |i| format!(" ({})", sanitize(i)));
    writeln!(
        out,
        "{}{instance}: {} entries, {} on the active path, {}",
        sanitize(&h.session),
        thousands(h.entries),
        thousands(h.active_path),
        match h.findings.len() {
            0 => "healthy".to_string(),
            1 => "1 finding".to_string(),
            n => format!("{n} findings"),
        }
    )?;
    print_findings(out, h)
}

/// A session's findings, a few lines each, under its header line.
pub(super) fn print_findings(out: &mut dyn Write, h: &SessionHealth) -> std::io::Result<()> {
    for f in &h.findings {
        let sub = f.submission.as_ref().map_or(String::new(), |o| {
            format!(", submission {} ({})", short(&o.id), o.status)
        });
        writeln!(out, "  ‼ {}{}{sub}", f.hazard.kind(), where_(&f.hazard))?;
        for line in details(&f.hazard) {
            writeln!(out, "      {line}")?;
        }
        writeln!(out, "      next turn: {}", sanitize(&f.effect))?;
        if let Some(r) = &f.repair {
            let verdict = if r.in_place {
                "repairable in place"
            } else {
                "not repairable in place"
            };
            writeln!(out, "      repair: {verdict}: {}", sanitize(&r.why))?;
        }
    }
    Ok(())
}

fn where_(h: &Hazard) -> String {
    let at = |e: &str, p: i64| format!(" at entry {} (position {p})", sanitize(e));
    match h {
        Hazard::UnresolvedCalls { assistant, .. } | Hazard::MismatchedBatch { assistant, .. } => {
            at(&assistant.entry, assistant.position)
        }
        Hazard::OrphanedResult { at: a, .. }
        | Hazard::InProgressAssistant { at: a, .. }
        | Hazard::EmptyAssistant { at: a } => at(&a.entry, a.position),
        Hazard::DroppedPartial { partial, .. } => at(&partial.entry, partial.position),
        Hazard::DuplicateCallId { call_id, .. } => format!(" {}", sanitize(call_id)),
        Hazard::Unreadable { .. } | Hazard::NotUtf8 { .. } => String::new(),
    }
}

fn details(h: &Hazard) -> Vec<String> {
    match h {
        Hazard::UnresolvedCalls { calls, missing, .. } => calls
            .iter()
            .map(|c| {
                let args = c
                    .arguments
                    .as_ref()
                    .map_or("?".to_string(), |a| a.to_string());
                let state = if missing.contains(&c.id) {
                    "no result"
                } else {
                    "result recorded"
                };
                format!(
                    "{} ({}) {}: {state}",
                    sanitize(&c.name),
                    sanitize(&c.id),
                    sanitize(&cut(&args, 120))
                )
            })
            .collect(),
        Hazard::MismatchedBatch { why, .. } => vec![sanitize(why)],
        Hazard::OrphanedResult {
            call_id, tool_name, ..
        } => vec![format!(
            "result for call {} of tool {}",
            sanitize(call_id.as_deref().unwrap_or("(none)")),
            sanitize(tool_name.as_deref().unwrap_or("(none)"))
        )],
        Hazard::DuplicateCallId {
            assistants,
            same_batch,
            ..
        } => vec![format!(
            "on {} ({})",
            assistants
                .iter()
                .map(|a| sanitize(&a.entry))
                .collect::<Vec<_>>()
                .join(", "),
            if *same_batch {
                "twice in one batch"
            } else {
                "in different batches"
            }
        )],
        Hazard::InProgressAssistant { stop_reason, .. } => vec![format!(
            "stopReason {}",
            sanitize(stop_reason.as_deref().unwrap_or("(missing)"))
        )],
        Hazard::EmptyAssistant { .. } => vec![],
        Hazard::DroppedPartial { continued, .. } => vec![format!(
            "continued by {} (position {})",
            sanitize(&continued.entry),
            continued.position
        )],
        Hazard::Unreadable { what } | Hazard::NotUtf8 { what } => vec![sanitize(what)],
    }
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(findings: usize, batch_findings: usize, with: usize) -> HealthTotals {
        let mut by_kind = [0; Hazard::KINDS.len()];
        by_kind[0] = findings;
        HealthTotals {
            sessions: 12,
            entries: 1_234,
            sessions_with_findings: with,
            findings,
            batch_findings,
            by_kind,
        }
    }

    #[test]
    fn the_summary_says_where_the_findings_are() {
        let k = Hazard::KINDS[0];
        assert_eq!(
            summary(&totals(0, 0, 0)),
            "healthy: no finding in 12 sessions (1,234 entries)"
        );
        assert_eq!(
            summary(&totals(3, 0, 2)),
            format!("3 findings in 2 of 12 sessions (1,234 entries): {k} 3")
        );
        assert_eq!(
            summary(&totals(3, 1, 1)),
            format!(
                "2 findings in 1 of 12 sessions (1,234 entries) and 1 in streams' batches: {k} 3"
            )
        );
        assert_eq!(
            summary(&totals(1, 1, 0)),
            format!("1 finding in streams' batches, none in 12 sessions (1,234 entries): {k} 1")
        );
    }
}
