//! The detail pane: the verdict panel and the rows of an opened submission, a session's summary,
//! or the selected entry (fields, tool-call arguments, result text, usage, errors, and its JSON
//! pretty-printed, with the raw stored bytes one key away). Lines are built once per selection and
//! width, then only the visible slice is drawn.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};
use ratatui::Frame;

use super::Inspect;
use crate::messages::{Opened, OpenedSession, OpenedSubmission};
use crate::text::{ago, char_width, clean, clean_lines, dollars};
use crate::theme::Theme;
use crate::tree::{CallStatus, NodeKind};
use crate::view_state::{DetailCache, DrawCtx, Hit, Layout, Pane};
use turnscope_core::journal::entry::{js_key_text, Entry, EntryBody, Message, Role};
use turnscope_core::journal::time::{iso_from_ms, ms_from_iso};

struct Doc {
    t: Theme,
    /// `--write` mode (the plan's hint names the step key).
    write: bool,
    lines: Vec<Line<'static>>,
}

impl Doc {
    fn heading(&mut self, text: impl Into<String>) {
        if !self.lines.is_empty() {
            self.lines.push(Line::default());
        }
        self.lines.push(Line::from(Span::styled(
            clean(&text.into()),
            self.t.title(),
        )));
    }

    fn kv(&mut self, k: &str, v: impl Into<String>) {
        self.kv_styled(k, v, Style::new());
    }

    fn kv_styled(&mut self, k: &str, v: impl Into<String>, style: Style) {
        self.lines.push(Line::from(vec![
            Span::styled(format!("  {k:<15} "), self.t.dim()),
            Span::styled(clean(&v.into()), style),
        ]));
    }

    /// One line (cleaned: `clean` is idempotent, so callers may clean parts of it first).
    fn text(&mut self, s: impl Into<String>, style: Style) {
        self.lines
            .push(Line::from(Span::styled(clean(&s.into()), style)));
    }

    /// A message's text under `heading` (shown for an empty text only when `always`), or a
    /// line saying it is being read (the entry is compact until the worker's body arrives).
    fn message_text(&mut self, heading: &str, m: &Message, always: bool) {
        match m.text_if_read() {
            Some(text) if text.is_empty() && !always => {}
            Some(text) => {
                self.heading(heading);
                self.block(&text, Style::new());
            }
            None => {
                self.heading(heading);
                self.text("  reading the entry…", self.t.dim());
            }
        }
    }

    /// Multi-line text kept as lines (JSON, message text); escapes only control characters.
    fn block(&mut self, s: &str, style: Style) {
        for l in s.split('\n') {
            self.lines
                .push(Line::from(Span::styled(format!("  {}", clean(l)), style)));
        }
    }
}

fn when(now: i64, ms: Option<i64>) -> String {
    match ms.filter(|m| *m > 0) {
        Some(m) => format!("{} ({})", iso_from_ms(m), ago(now, m)),
        None => "-".into(),
    }
}

fn submission_doc(d: &mut Doc, s: &OpenedSubmission, now: i64) {
    let t = d.t;
    let r = &s.report;
    let c = r.classification();
    let row = r.row();
    d.lines.push(Line::from(vec![
        Span::styled("VERDICT ", t.title()),
        Span::styled(s.verdict(), t.disposition(s.plan.disposition.kind())),
        Span::styled(
            format!("   inspection {}", c.state.inspection().as_str()),
            t.dim(),
        ),
    ]));
    if !row.is_running() {
        d.kv(
            "note",
            format!(
                "the row is {}: the runtime only classifies running submissions",
                row.status
            ),
        );
    }
    d.kv("classification", c.state.label());
    d.kv(
        "because",
        format!(
            "step {} of the decision order: {}",
            c.explanation.step, c.explanation.rule
        ),
    );
    if !c.explanation.entry_ids.is_empty() {
        d.kv_styled(
            "entries",
            format!("{}   (m jumps to each)", c.explanation.entry_ids.join(", ")),
            t.matched(),
        );
    }
    if let Some(b) = &c.trailing_partial_batch {
        let calls: Vec<String> = b
            .tool_calls
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c.name,
                    if c.has_result {
                        "recorded"
                    } else {
                        "⧗ missing"
                    }
                )
            })
            .collect();
        d.kv_styled(
            "partial batch",
            format!("‼ of {}: {}", b.entry_id, calls.join(", ")),
            t.partial(),
        );
    }
    d.kv("context window", r.window.describe());
    // The classification in one sentence (after the evidence, so the partial batch stays on the
    // first screen).
    if let Some(meaning) = crate::tooltip::tooltip(&c.state.label()) {
        d.kv_styled("meaning", meaning, t.dim());
    }
    d.heading(match (s.plan.rule, s.plan.result) {
        (Some(rule), Some(res)) => format!("PLAN  rule {rule} → {res}"),
        _ => format!("PLAN  {}", s.plan.disposition.label()),
    });
    d.block(&s.plan.reason, Style::new());
    for (i, w) in s.plan.writes.iter().enumerate() {
        d.text(
            format!("  {}. {}", i + 1, clean(&w.describe())),
            Style::new(),
        );
    }
    if !s.plan.writes.is_empty() {
        d.text(
            if d.write {
                "  (W lists these writes · S applies the next one, previewed and confirmed)"
            } else {
                "  (W lists these writes · read-only: w switches to write mode to apply them)"
            },
            t.dim(),
        );
    }
    d.heading(format!("SUBMISSION {}", row.submission_id));
    d.kv(
        "kind",
        format!(
            "{} · sequence {} · agent {}",
            row.kind,
            row.sequence,
            row.agent().unwrap_or_else(|| "?".into())
        ),
    );
    d.kv("instance", row.instance_id().unwrap_or_else(|| "-".into()));
    d.kv("session", row.session_key.clone());
    d.kv_styled(
        "status",
        format!(
            "{}{}",
            if row.status == turnscope_core::journal::status::SubmissionStatus::Queued {
                "pending (queued)"
            } else {
                row.status.as_str()
            },
            match &s.plan.disposition {
                turnscope_core::recovery::reconciler::Disposition::Reconcile =>
                    " · stuck: the reconciler picks it up",
                _ => "",
            }
        ),
        t.status(&row.status),
    );
    d.kv(
        "attempts",
        format!(
            "{}/{} · attempt {}",
            row.attempt_count,
            row.max_retry,
            row.attempt_id.as_deref().unwrap_or("-")
        ),
    );
    d.kv(
        "lease",
        format!(
            "{} · owner {}",
            turnscope_engine::report::lease_text(row, now),
            row.owner_id.as_deref().unwrap_or("-")
        ),
    );
    d.kv("accepted", when(now, row.accepted_at));
    d.kv("input applied", when(now, row.input_applied_at));
    d.kv("started", when(now, row.started_at));
    if row.timeout_at > 0 {
        d.kv("timeout at", when(now, Some(row.timeout_at)));
    }
    if row.settled_at.is_some() {
        d.kv("settled", when(now, row.settled_at));
    }
    if let Some(e) = &row.error {
        d.kv_styled("error", e.clone(), t.error());
    }
    match &r.bundle.journal {
        None => d.heading("JOURNAL  none (the runtime writes one only after input application)"),
        Some(j) => {
            d.heading(format!(
                "JOURNAL  {} · revision {}{}",
                j.phase,
                j.revision,
                if j.committed {
                    " · committed"
                } else {
                    " · not committed"
                }
            ));
            let same = row.attempt_id.as_deref() == Some(j.attempt_id.as_str());
            d.kv(
                "attempt",
                if same {
                    format!("{} (the submission's attempt)", j.attempt_id)
                } else {
                    format!("{} (another attempt)", j.attempt_id)
                },
            );
            d.kv_styled(
                "checkpoint leaf",
                match &j.checkpoint_leaf_id {
                    Some(id) => format!("{id}   (c jumps to it)"),
                    None => "-".into(),
                },
                t.key(),
            );
            match j.tool_request() {
                Ok(Some(calls)) => {
                    let list: Vec<String> = calls
                        .iter()
                        .map(|c| format!("{} ({})", c.name, c.id))
                        .collect();
                    d.kv("tool request", list.join(", "));
                }
                Ok(None) => d.kv("tool request", "-"),
                Err(e) => d.kv_styled("tool request", e, t.error()),
            }
            match &j.stream_key {
                Some(k) => {
                    let n = r.bundle.stream_chunks.len();
                    d.kv(
                        "stream",
                        format!(
                            "{k} · {n} chunk segment{}{}",
                            if n == 1 { "" } else { "s" },
                            if j.stream_consumed_at.is_some() {
                                " · consumed"
                            } else {
                                ""
                            }
                        ),
                    );
                    if let Some(st) = &r.inspection.stream {
                        d.kv(
                            "stream rebuild",
                            match st {
                                turnscope_core::journal::stream::StreamReconstruction::Recoverable {
                                    text_chars,
                                    blocks,
                                } => {
                                    format!(
                                        "recoverable: {} in {}",
                                        turnscope_core::text::plural(
                                            *text_chars as u64,
                                            "character",
                                            "characters"
                                        ),
                                        turnscope_core::text::plural(*blocks as u64, "block", "blocks")
                                    )
                                }
                                turnscope_core::journal::stream::StreamReconstruction::NotRecoverable(why) => {
                                    format!("not recoverable: {why}")
                                }
                            },
                        );
                    }
                }
                None => d.kv("stream", "no stream key · no chunks"),
            }
            if let Some(id) = &j.committed_leaf_id {
                d.kv("committed leaf", id.clone());
            }
            d.kv("created", when(now, Some(j.created_at)));
            d.kv("updated", when(now, Some(j.updated_at)));
            d.kv("turn", format!("{} · {}", j.turn_id, j.operation_id));
        }
    }
    if let Some(p) = &r.bundle.journal_problem {
        d.kv_styled("problem", p.clone(), t.error());
    }
    attempts_and_cost(d, r, now);
}

/// The attempt timeline and the cost since the input, in `show`'s words.
fn attempts_and_cost(d: &mut Doc, r: &turnscope_engine::report::SubmissionReport, now: i64) {
    use turnscope_engine::report::cost_text;
    let a = r.attempts();
    d.heading(format!("ATTEMPTS  {}", cost_text::attempts_head(&a)));
    for t in &a.traced {
        // Two lines: the pane is narrow and how far it got matters most.
        let (who, steps) = cost_text::attempt_parts(t, now);
        d.text(format!("  {who}"), Style::new());
        d.text(format!("      {steps}"), d.t.dim());
    }
    match r.cost() {
        None => d.heading("COST SINCE INPUT  no input entry on the active path"),
        Some(c) => {
            d.heading(format!(
                "COST SINCE INPUT  {}",
                cost_text::money(c.total().cost)
            ));
            for l in cost_text::cost_lines(&c) {
                d.text(format!("  {l}"), Style::new());
            }
        }
    }
}

fn session_doc(d: &mut Doc, s: &OpenedSession, now: i64) {
    let t = d.t;
    d.lines.push(Line::from(Span::styled(
        format!("SESSION {}", clean(&s.key)),
        t.title(),
    )));
    d.kv(
        "instance",
        turnscope_core::journal::submission_rows::instance_id_of(&s.key)
            .unwrap_or_else(|| "-".into()),
    );
    if let Some(h) = &s.history {
        d.kv(
            "entries",
            format!(
                "{} ({} on the active path) · leaf {}",
                h.entries.len(),
                h.active_indexes().len(),
                h.leaf_id.as_deref().unwrap_or("-")
            ),
        );
    }
    if let Some(sum) = &s.summary {
        let t_of = |iso: &Option<String>| iso.as_deref().and_then(ms_from_iso);
        d.kv("created", when(now, t_of(&sum.created_at)));
        d.kv("updated", when(now, t_of(&sum.updated_at)));
        for p in &sum.data_problems {
            d.kv_styled("damaged", p.clone(), t.error());
        }
    }
    d.heading(format!("SUBMISSIONS ({})", s.submissions.len()));
    if s.submissions.is_empty() {
        d.text("  none", t.dim());
    }
    for (it, input) in &s.submissions {
        let short = turnscope_core::journal::submission_rows::short_id(&it.row.submission_id);
        let rule = match (it.rule, it.result) {
            (Some(r), Some(res)) => format!(" · rule {r} → {res}"),
            _ => String::new(),
        };
        d.lines.push(Line::from(vec![
            Span::styled(format!("  #{} {short} ", it.row.sequence), Style::new()),
            Span::styled(format!("{} ", it.row.status), t.status(&it.row.status)),
            Span::styled(it.verdict.clone(), t.item(it.disposition)),
            Span::raw(rule),
            Span::styled(
                match input {
                    Some(e) => format!(" · input {e}"),
                    None => " · input not on the active path".into(),
                },
                t.dim(),
            ),
        ]));
    }
    d.text(
        "  ]/[ step between inputs · ⏎ on an input row opens its submission",
        t.dim(),
    );
}

fn entry_doc(d: &mut Doc, e: &Entry, on_path: bool, now: i64, raw: bool) {
    let t = d.t;
    d.lines.push(Line::from(vec![
        Span::styled(format!("{} ", e.kind_label()), t.title()),
        Span::raw(clean(&e.id)),
        Span::styled(
            format!(
                "   position {} · {}",
                e.position,
                if on_path {
                    "on the active path"
                } else {
                    "off the active path"
                }
            ),
            t.dim(),
        ),
    ]));
    d.kv(
        "parent",
        e.parent_id.clone().unwrap_or_else(|| "(root)".into()),
    );
    if let Some(ts) = &e.timestamp {
        d.kv(
            "time",
            match ms_from_iso(ts) {
                Some(ms) => format!("{ts} ({})", ago(now, ms)),
                None => ts.to_string(),
            },
        );
    }
    if let Some(id) = e.dispatch_id() {
        d.kv_styled("dispatch input", id, t.title());
    }
    if let Some(id) = e.direct_submission_id() {
        d.kv_styled("direct input", id, t.title());
    }
    if let Some(id) = e.submission_terminal_id() {
        d.kv("advisory for", id);
    }
    match &e.body {
        EntryBody::Message(m) => match &m.role {
            Role::Assistant => {
                let api = m.value().get("api").and_then(|v| v.as_str()).unwrap_or("?");
                let provider = m
                    .value()
                    .get("provider")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?");
                d.kv(
                    "model",
                    format!("{} ({api} / {provider})", m.model().unwrap_or("?")),
                );
                d.kv("stopReason", m.stop_reason().unwrap_or("(none)"));
                if m.has_usage() {
                    let u = |k: &str| {
                        let v = m.usage(k);
                        if v.is_nan() {
                            "-".to_string()
                        } else {
                            format!("{v}")
                        }
                    };
                    let cost = m
                        .value()
                        .pointer("/usage/cost/total")
                        .and_then(|c| c.as_f64())
                        .unwrap_or(f64::NAN);
                    d.kv(
                        "usage",
                        format!(
                            "in {} · out {} · cache read {} · cache write {} · total {} · cost {}",
                            u("input"),
                            u("output"),
                            u("cacheRead"),
                            u("cacheWrite"),
                            u("totalTokens"),
                            dollars(cost)
                        ),
                    );
                }
                if let Some(err) = m.error_message_value() {
                    d.kv_styled(
                        "errorMessage",
                        turnscope_core::journal::entry::js_to_string(err),
                        t.error(),
                    );
                }
                let calls = m.tool_calls();
                if !calls.is_empty() {
                    d.heading(format!("TOOL CALLS ({})", calls.len()));
                    for c in &calls {
                        d.text(
                            format!("  {} ({})", clean(&c.name), clean(&c.id_text())),
                            Style::new(),
                        );
                        let args = serde_json::to_string_pretty(&c.arguments).unwrap_or_default();
                        for l in args.lines() {
                            d.text(format!("    {}", clean(l)), t.dim());
                        }
                    }
                }
                d.message_text("TEXT", m, false);
            }
            Role::ToolResult => {
                d.kv("tool", m.tool_name().unwrap_or("?"));
                d.kv("toolCallId", js_key_text(&m.tool_call_id()));
                d.kv_styled(
                    "isError",
                    m.is_error().to_string(),
                    if m.is_error() { t.error() } else { t.ok() },
                );
                d.message_text("RESULT TEXT", m, true);
            }
            Role::User | Role::Signal | Role::Other(_) | Role::Missing => {
                d.message_text("CONTENT", m, false);
            }
        },
        EntryBody::Compaction(c) => {
            d.kv(
                "firstKeptEntryId",
                c.first_kept_entry_id.clone().unwrap_or_else(|| "-".into()),
            );
            d.kv(
                "tokensBefore",
                c.tokens_before.map_or("-".into(), |v| v.to_string()),
            );
            d.heading("SUMMARY");
            d.block(&c.summary, Style::new());
        }
        EntryBody::Unknown { type_name } => d.kv_styled(
            "type",
            format!("{type_name} (not one this runtime writes)"),
            t.warn(),
        ),
        EntryBody::Malformed { error } => d.kv_styled("malformed", error.to_string(), t.error()),
    }
    if e.compact {
        // The tree holds a compact entry; the worker is fetching the stored text.
        d.heading(format!("STORED ENTRY ({} bytes)", e.stored_len));
        d.text("loading the stored entry…", t.dim());
        return;
    }
    if raw {
        d.heading(format!(
            "RAW STORED BYTES ({} bytes · b: pretty JSON)",
            e.raw.len()
        ));
        // Raw bytes, escapes visible; wrapped by the pane.
        d.text(clean(&e.raw), Style::new());
    } else {
        d.heading("ENTRY JSON (b: raw stored bytes)");
        match e.json() {
            Some(v) => {
                let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
                for l in pretty.lines() {
                    d.text(clean(l), Style::new());
                }
            }
            None => d.text(clean(&e.raw), t.error()),
        }
    }
}

fn build(ins: &Inspect, t: Theme, now: i64, write: bool) -> Vec<Line<'static>> {
    let mut d = Doc {
        t,
        write,
        lines: Vec::new(),
    };
    let Some(node) = ins.selected_node() else {
        return clean_lines(d.lines);
    };
    let h = ins.history();
    match &ins.tree.nodes[node].kind {
        NodeKind::Header => match &ins.data {
            Some(Opened::Submission(s)) => submission_doc(&mut d, s, now),
            Some(Opened::Session(s)) => session_doc(&mut d, s, now),
            None => {}
        },
        NodeKind::Note(n) => d.text(clean(ins.tree.note(*n)), t.warn()),
        NodeKind::PreInput { count } => {
            d.text(
                format!(
                    "{} of the active path {} before the submission's input.",
                    turnscope_core::text::plural(*count as u64, "entry", "entries"),
                    if *count == 1 { "comes" } else { "come" }
                ),
                Style::new(),
            );
            d.text(
                "The classifier only looks at what follows the input (spec §4.1).",
                t.dim(),
            );
            d.text("⏎ or → expands them.", t.dim());
        }
        NodeKind::Abandoned { count, anchor } => {
            d.text(
                format!(
                    "{count} entr{} off the active path.",
                    if *count == 1 { "y is" } else { "ies are" }
                ),
                Style::new(),
            );
            match anchor.and_then(|a| h.map(|h| h.entries[a as usize].id.clone())) {
                Some(id) => d.text(format!("They branch from {id}: the leaf was moved back to it (a repair does this), so the runtime no longer sees them."), t.dim()),
                None => d.text("Their parent chain never reaches the active path.", t.dim()),
            }
        }
        &NodeKind::Call {
            owner,
            result,
            status,
            call,
        } => {
            let (owner, call) = (owner as usize, call as usize);
            let shown = ins.tree.call(node).unwrap_or_default();
            let owner_id = h.map(|h| h.entries[owner].id.clone()).unwrap_or_default();
            let (mark, style) = match status {
                CallStatus::Ok => ("✓ ok", t.ok()),
                CallStatus::Error => ("✗ error", t.error()),
                CallStatus::Missing => ("⧗ no result recorded", t.partial()),
            };
            d.lines.push(Line::from(vec![
                Span::styled(format!("TOOL CALL {} ", clean(&shown.name)), t.title()),
                Span::raw(clean(&shown.id_text())),
                Span::raw("  "),
                Span::styled(mark, style),
            ]));
            d.kv(
                "requested by",
                format!("{owner_id} (call {} of its batch)", call + 1),
            );
            if let Some(args) = h
                .and_then(|h| ins.body(&h.entries[owner]).message())
                .and_then(|m| m.tool_calls().get(call).cloned())
            {
                d.heading("ARGUMENTS");
                let pretty = serde_json::to_string_pretty(&args.arguments).unwrap_or_default();
                for l in pretty.lines() {
                    d.text(format!("  {}", clean(l)), Style::new());
                }
            }
            match (result, h) {
                (Some(r), Some(h)) => {
                    d.heading("RESULT");
                    let mut sub = Doc {
                        t,
                        write,
                        lines: Vec::new(),
                    };
                    let r = r as usize;
                    entry_doc(
                        &mut sub,
                        ins.body(&h.entries[r]),
                        h.is_on_active_path(r),
                        now,
                        ins.raw,
                    );
                    d.lines.extend(sub.lines);
                }
                _ => d.text(
                    "No result entry for this call follows the assistant on the active path.",
                    t.partial(),
                ),
            }
        }
        NodeKind::Entry { entry } => {
            if let Some(h) = h {
                let entry = *entry as usize;
                entry_doc(
                    &mut d,
                    ins.body(&h.entries[entry]),
                    h.is_on_active_path(entry),
                    now,
                    ins.raw,
                );
            }
        }
    }
    // Every line of the document is shown terminal-safe, whatever built it.
    clean_lines(d.lines)
}

/// Wrap styled lines to `w` cells, at spaces where possible; continuation lines are indented.
fn wrap_lines(lines: Vec<Line<'static>>, w: usize) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        if l.width() <= w {
            out.push(l);
            continue;
        }
        let cells: Vec<(char, Style)> = l
            .spans
            .iter()
            .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
            .collect();
        let mut start = 0;
        let mut first = true;
        while start < cells.len() {
            let indent = if first { 0 } else { 2 };
            let room = w.saturating_sub(indent).max(1);
            // Take as many cells as fit.
            let mut end = start;
            let mut used = 0;
            while end < cells.len() {
                let cw = char_width(cells[end].0);
                if used + cw > room {
                    break;
                }
                used += cw;
                end += 1;
            }
            if end == start {
                end = start + 1;
            }
            // Break after the last space if the line does not end the text and a space is near.
            if end < cells.len() {
                if let Some(sp) = (start..end).rev().find(|&k| cells[k].0 == ' ') {
                    if sp > start && (end - sp) < room / 2 {
                        end = sp + 1;
                    }
                }
            }
            let mut spans: Vec<Span<'static>> = Vec::new();
            if indent > 0 {
                spans.push(Span::raw("  "));
            }
            let mut buf = String::new();
            let mut style = cells[start].1;
            for &(c, st) in &cells[start..end] {
                if st != style && !buf.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut buf), style));
                }
                style = st;
                buf.push(c);
            }
            if !buf.is_empty() {
                spans.push(Span::styled(buf, style));
            }
            out.push(Line::from(spans));
            start = end;
            first = false;
        }
    }
    out
}

/// Draw the innermost of the opened views (`stack`, outermost first).
pub fn draw(f: &mut Frame, cx: &DrawCtx, stack: &[Inspect], view: &mut Layout, area: Rect) {
    let t = cx.theme;
    let focused = cx.focus == Pane::Detail;
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(if focused && !t.color {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(t.border(focused))
        .title(Span::styled(
            if stack.last().is_some_and(|i| i.raw) {
                " detail · raw "
            } else {
                " detail "
            },
            if focused { t.title() } else { t.dim() },
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    view.detail = Some(Hit { area, rows: inner });
    let depth = stack.len();
    let now = cx.now_ms;
    let Some(ins) = stack.last() else { return };
    if ins.data.is_none() {
        return;
    }
    let w = inner.width.max(1);
    let key = (depth, ins.generation, w, now / 1000);
    let stale = view.detail_cache.as_ref().stale_for(key);
    if stale {
        let lines = wrap_lines(build(ins, t, now, cx.write_mode), w as usize);
        view.detail_cache = Some(DetailCache { key, lines });
    }
    let cache = view.detail_cache.as_ref().expect("just built");
    let total = cache.lines.len();
    view.detail_lines = total;
    let h = inner.height as usize;
    // The last page ends at the last line; keys start from here (see `Inspect::scroll_detail`).
    let max = total.saturating_sub(h.min(total));
    view.detail_max_scroll = Some(max);
    let start = ins.detail_scroll.min(max);
    let visible: Vec<Line> = cache.lines.iter().skip(start).take(h).cloned().collect();
    f.render_widget(Paragraph::new(visible), inner);
    if total > h {
        let pct = format!(" {}-{}/{} ", start + 1, (start + h).min(total), total);
        let x = area.right().saturating_sub(pct.len() as u16 + 1);
        f.render_widget(
            Paragraph::new(Span::styled(pct, t.dim())),
            Rect {
                x,
                y: area.bottom() - 1,
                width: area.right() - x,
                height: 1,
            },
        );
    }
}

trait CacheCheck {
    fn stale_for(&self, key: (usize, u64, u16, i64)) -> bool;
}

impl CacheCheck for Option<&DetailCache> {
    fn stale_for(&self, key: (usize, u64, u16, i64)) -> bool {
        match self {
            None => true,
            Some(c) => c.key != key,
        }
    }
}

/// Plain text of the detail pane for the current selection (what the harness reads).
#[cfg(feature = "test-harness")]
pub fn detail_text(cx: &DrawCtx, ins: Option<&Inspect>) -> String {
    let Some(ins) = ins else {
        return String::new();
    };
    build(ins, cx.theme, cx.now_ms, cx.write_mode)
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_styles_and_indents_continuations() {
        let l = Line::from(vec![
            Span::raw("abcd"),
            Span::styled("efgh", Style::new().bold()),
        ]);
        let out = wrap_lines(vec![l], 5);
        let text: Vec<String> = out
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text, ["abcde", "  fgh"]);
        assert_eq!(out[1].spans[1].style, Style::new().bold());
        let words = wrap_lines(vec![Line::from("the quick brown fox")], 12);
        let text: Vec<String> = words
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text, ["the quick ", "  brown fox"]);
    }
}
