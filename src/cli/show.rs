//! `turnscope show` and `turnscope classify`.

use std::io::Write;

use serde_json::json;

use super::args::Cli;
use super::output::truncate;
use super::{now_ms, CliError};
use turnscope_core::journal::entry::Role;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_core::text::sanitize;
use turnscope_engine::report::{classification_json, cost_text, Previews, SubmissionReport};
use turnscope_store::JournalStore;

pub fn run_classify(
    store: &dyn JournalStore,
    cli: &Cli,
    query: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let r = SubmissionReport::load_compact(
        store,
        query,
        cli.context_window,
        now_ms(cli),
        Previews::Drop,
    )?;
    let c = r.classification();
    if json {
        let doc = json!({
            "schema": "turnscope.classify/1",
            "format": turnscope_engine::report::JOURNAL_FORMAT,
            "submissionId": r.row().submission_id,
            "status": r.row().status,
            "contextWindow": r.window,
            "classification": classification_json(c),
            "inspection": c.state.inspection().as_str(),
            "verdict": r.verdict(),
        });
        super::output::print_json(out, &doc)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}  {}",
        sanitize(&r.row().submission_id),
        c.state.label()
    )?;
    writeln!(out, "inspection      {}", c.state.inspection().as_str())?;
    writeln!(
        out,
        "rule            step {} of the decision order: {}",
        c.explanation.step,
        sanitize(&c.explanation.rule)
    )?;
    if !c.explanation.entry_ids.is_empty() {
        writeln!(
            out,
            "entries         {}",
            sanitize(&c.explanation.entry_ids.join(", "))
        )?;
    }
    writeln!(out, "context window  {}", r.window.describe())?;
    if !r.row().is_running() {
        writeln!(
            out,
            "note            the row is {}: the runtime only classifies running submissions ({})",
            sanitize(r.row().status.as_str()),
            r.verdict()
        )?;
    }
    Ok(())
}

pub fn run_show(
    store: &dyn JournalStore,
    cli: &Cli,
    query: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    // Only the text form prints message previews.
    let previews = if json { Previews::Drop } else { Previews::Keep };
    let r =
        SubmissionReport::load_compact(store, query, cli.context_window, now_ms(cli), previews)?;
    if json {
        r.write_json_pretty(out)?;
        // The command ends here and the process with it: freeing a whale's 120,000 entries
        // one by one cost ~5 % of `show --json`, and the system takes them back at once.
        std::mem::forget(r);
        return Ok(());
    }
    let row = r.row();
    let kv = |out: &mut dyn Write, k: &str, v: String| writeln!(out, "  {k:<16}{v}");
    writeln!(out, "submission {}", sanitize(&row.submission_id))?;
    // The decision first: a whale's history is thousands of lines, printed last.
    write_verdict(&r, out)?;
    writeln!(out)?;
    kv(out, "sequence", row.sequence.to_string())?;
    kv(
        out,
        "kind",
        format!(
            "{} (agent {})",
            sanitize(&row.kind),
            sanitize(&row.agent().unwrap_or_else(|| "?".into()))
        ),
    )?;
    kv(
        out,
        "instance",
        sanitize(&row.instance_id().unwrap_or_default()),
    )?;
    kv(out, "status", sanitize(row.status.as_str()))?;
    kv(
        out,
        "attempts",
        format!(
            "{}/{}  attempt {}",
            row.attempt_count,
            row.max_retry,
            sanitize(row.attempt_id.as_deref().unwrap_or("-"))
        ),
    )?;
    kv(
        out,
        "lease",
        format!(
            "{}  owner {}",
            r.lease_text(),
            sanitize(row.owner_id.as_deref().unwrap_or("-"))
        ),
    )?;
    kv(
        out,
        "input applied",
        row.input_applied_at.map_or("no".into(), iso_from_ms),
    )?;
    if row.timeout_at > 0 {
        kv(out, "timeout at", iso_from_ms(row.timeout_at))?;
    }
    if let Some(e) = &row.error {
        kv(out, "error", sanitize(e))?;
    }
    writeln!(out)?;
    match &r.bundle.journal {
        None => writeln!(out, "journal: none")?,
        Some(j) => {
            writeln!(out, "journal")?;
            let fenced = if row.attempt_id.as_deref() == Some(j.attempt_id.as_str()) {
                ""
            } else {
                "  (another attempt)"
            };
            kv(
                out,
                "phase",
                format!(
                    "{}  revision {}{}",
                    sanitize(j.phase.as_str()),
                    j.revision,
                    if j.committed { "  committed" } else { "" }
                ),
            )?;
            kv(
                out,
                "attempt",
                format!("{}{fenced}", sanitize(&j.attempt_id)),
            )?;
            kv(
                out,
                "checkpoint leaf",
                sanitize(j.checkpoint_leaf_id.as_deref().unwrap_or("-")),
            )?;
            if let Ok(Some(calls)) = j.tool_request() {
                let list: Vec<String> = calls
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.id))
                    .collect();
                kv(out, "tool request", sanitize(&list.join(", ")))?;
            }
            if let Some(k) = &j.stream_key {
                kv(
                    out,
                    "stream",
                    format!(
                        "{}  {} chunk segment(s){}",
                        sanitize(k),
                        r.bundle.stream_chunks.len(),
                        if j.stream_consumed_at.is_some() {
                            ", consumed"
                        } else {
                            ""
                        }
                    ),
                )?;
            }
        }
    }
    if let Some(p) = &r.bundle.journal_problem {
        writeln!(out, "  problem: {}", sanitize(p))?;
    }
    writeln!(out)?;
    write_attempts_and_cost(&r, out)?;
    writeln!(out)?;
    write_history(&r, out)?;
    Ok(())
}

/// The verdict, the classifier's reason and the plan with its writes.
fn write_verdict(r: &SubmissionReport, out: &mut dyn Write) -> std::io::Result<()> {
    let c = r.classification();
    writeln!(out, "verdict         {}", r.verdict())?;
    writeln!(
        out,
        "classification  {}  (inspection {})",
        c.state.label(),
        c.state.inspection().as_str()
    )?;
    writeln!(
        out,
        "because         step {}: {}",
        c.explanation.step,
        sanitize(&c.explanation.rule)
    )?;
    writeln!(out, "context window  {}", r.window.describe())?;
    writeln!(out)?;
    match r.plan.rule {
        Some(rule) => writeln!(
            out,
            "plan            rule {rule} → {}: {}",
            r.plan.result.map_or("?", RuleResult::as_str),
            sanitize(&r.plan.reason)
        )?,
        None => writeln!(
            out,
            "plan            {}: {}",
            r.plan.disposition.label(),
            sanitize(&r.plan.reason)
        )?,
    }
    for (i, w) in r.plan.writes.iter().enumerate() {
        writeln!(out, "  {}. {}", i + 1, sanitize(&w.describe()))?;
    }
    Ok(())
}

/// The attempt timeline (one line per traced attempt) and the cost since the input.
fn write_attempts_and_cost(r: &SubmissionReport, out: &mut dyn Write) -> std::io::Result<()> {
    let lines = cost_text::attempt_lines(&r.attempts(), r.now_ms);
    writeln!(out, "attempts        {}", sanitize(&lines[0]))?;
    for l in &lines[1..] {
        writeln!(out, "  {}", sanitize(l))?;
    }
    match r.cost() {
        None => writeln!(out, "cost since input: no input entry on the active path")?,
        Some(c) => {
            writeln!(out, "cost since input")?;
            for l in cost_text::cost_lines(&c) {
                writeln!(out, "  {}", sanitize(&l))?;
            }
        }
    }
    Ok(())
}

fn write_history(r: &SubmissionReport, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(session) = &r.bundle.session else {
        return writeln!(
            out,
            "history: no session row for {}",
            sanitize(&r.row().session_key)
        );
    };
    for p in session.data_problems.iter().chain(&session.not_utf8) {
        writeln!(out, "  damaged: {}", sanitize(p))?;
    }
    if let Some(h) = &r.history {
        for d in &h.damage {
            writeln!(out, "  damaged: {}", sanitize(&d.to_string()))?;
        }
    }
    let Some(following) = r.following() else {
        let off = r.inspection.input_off_path_id.as_deref();
        return match off {
            Some(id) => writeln!(
                out,
                "history: the input entry {} is only on an abandoned branch (counts as absent)",
                sanitize(id)
            ),
            None => writeln!(
                out,
                "history: the input entry is not in the session ({})",
                turnscope_core::text::plural(session.entries.len() as u64, "entry", "entries")
            ),
        };
    };
    let input = r.inspection.input_entry_id.as_deref().unwrap_or("?");
    writeln!(
        out,
        "history after input {} ({})",
        sanitize(input),
        turnscope_core::text::plural(following.len() as u64, "entry", "entries")
    )?;
    let batch = r.classification().trailing_partial_batch.as_ref();
    let explained = &r.classification().explanation.entry_ids;
    for e in &following {
        let mut line = format!("{} {:<26}", sanitize(&e.id), e.kind_label());
        if let Some(m) = e.message() {
            match m.role {
                Role::Assistant => {
                    line.push_str(&format!(" stop={}", m.stop_reason().unwrap_or("?")));
                    let calls: Vec<String> = m
                        .tool_calls()
                        .iter()
                        .map(|c| format!("{}({})", c.name, c.id_text()))
                        .collect();
                    if !calls.is_empty() {
                        line.push_str(&format!(" calls: {}", calls.join(" ")));
                    }
                    if let Some(err) = m.truthy_error_message() {
                        line.push_str(&format!(" error: {}", truncate(&err, 60)));
                    }
                }
                Role::ToolResult => {
                    let mark = if m.is_error() { "✗" } else { "✓" };
                    line.push_str(&format!(
                        " {mark} {} ({})",
                        m.tool_name().unwrap_or("?"),
                        turnscope_core::journal::entry::js_key_text(&m.tool_call_id())
                    ));
                }
                _ => line.push_str(&format!(" {}", truncate(&m.text(), 60))),
            }
        }
        let mut marks = String::new();
        if batch
            .is_some_and(|b| b.entry_id == e.id || b.result_entry_ids.iter().any(|r| *r == e.id))
        {
            marks.push_str("  [partial batch]");
        }
        if explained.iter().any(|x| *x == e.id) {
            marks.push_str("  ◆");
        }
        writeln!(out, "  {}{marks}", sanitize(&line))?;
    }
    if let Some(b) = batch {
        for call in b.missing_calls() {
            writeln!(
                out,
                "  {:8} ⧗ missing result for {} ({})  [partial batch]",
                "",
                sanitize(&call.name),
                sanitize(&call.id)
            )?;
        }
    }
    Ok(())
}
