//! The history tree pane. Only the rows inside the viewport are laid out, so a session of
//! thousands of entries draws as fast as a short one.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};
use ratatui::Frame;

use super::Inspect;
use crate::messages::Opened;
use crate::text::{ago, clean, clean_span, compact, dollars, fit};
use crate::theme::Theme;
use crate::tree::{CallStatus, Flags, NodeKind};
use crate::view_state::{DrawCtx, Hit, Layout, Pane};
use crate::widgets::scroll_into_view;
use turnscope_core::journal::entry::{Entry, EntryBody, Role};
use turnscope_core::journal::time::ms_from_iso;

/// Frames of the loading spinner (plain ASCII, so it reads the same without colour).
const SPINNER: [char; 4] = ['|', '/', '-', '\\'];

/// Draw the innermost of the opened views (`stack`, outermost first).
pub fn draw(f: &mut Frame, cx: &DrawCtx, stack: &[Inspect], view: &mut Layout, area: Rect) {
    let t = cx.theme;
    let focused = cx.focus == Pane::Tree;
    let now = cx.now_ms;
    let Some(ins) = stack.last() else {
        return;
    };
    let title = match (&ins.data, &ins.error) {
        (_, Some(_)) => " history (error) ".to_string(),
        (None, _) => " history (loading…) ".to_string(),
        (Some(_), _) => {
            let n = ins.history().map_or(0, |h| h.entries.len());
            let active = ins.history().map_or(0, |h| h.active_indexes().len());
            format!(
                " history · {active} on the active path of {} ",
                turnscope_core::text::plural(n as u64, "entry", "entries")
            )
        }
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(if focused && !t.color {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(t.border(focused))
        .title(Span::styled(
            title,
            if focused { t.title() } else { t.dim() },
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    view.tree = Some(Hit { area, rows: inner });
    let Some(ins) = stack.last() else {
        return;
    };
    if let Some(e) = &ins.error {
        f.render_widget(
            Paragraph::new(vec![
                Line::from(Span::styled(format!(" ✗ {}", clean(&e.line())), t.error())),
                Line::from(Span::styled(" r retries · esc goes back", t.dim())),
            ]),
            inner,
        );
        return;
    }
    if ins.data.is_none() {
        // Past 100 ms, say how long and that nothing is stuck (a whale takes a second or more).
        let waited = ins.requested_at.elapsed();
        let text = if waited.as_millis() >= 100 {
            format!(
                " {} reading the session in the background… {:.1} s (esc goes back)",
                SPINNER[(waited.as_millis() / 100) as usize % SPINNER.len()],
                waited.as_secs_f64()
            )
        } else {
            " loading…".to_string()
        };
        f.render_widget(Paragraph::new(Span::styled(text, t.dim())), inner);
        return;
    }
    let h = inner.height as usize;
    view.tree_offsets.resize(stack.len(), 0);
    let offset = view.tree_offsets.last_mut().expect("one per opened view");
    scroll_into_view(offset, ins.sel, h);
    let offset = *offset;
    let w = inner.width as usize;
    let hits: std::collections::HashSet<usize> = ins.search.hits.iter().copied().collect();
    for (r, &node) in ins.visible.iter().enumerate().skip(offset).take(h) {
        let selected = r == ins.sel;
        // Database text in a row is shown terminal-safe, whatever built the span.
        let (body, badges) = row_spans(ins, node, t, now, hits.contains(&node));
        let body: Vec<Span> = body.into_iter().map(clean_span).collect();
        // The badges ([matched], [checkpoint], …) carry the row's meaning: the text before them
        // is cut to make room, unless the pane is too narrow for them and a bit of the row.
        let badges_w: usize = badges.iter().map(|s| s.width()).sum();
        let keep_badges = badges_w + 12 <= w;
        let mut kept = if keep_badges {
            truncate_spans(body, w - badges_w)
        } else {
            truncate_spans(body.into_iter().chain(badges.clone()).collect(), w)
        };
        if keep_badges {
            kept.extend(badges);
        }
        let row_style = match (selected, focused) {
            (true, true) => t.selected(),
            (true, false) => t.selected_unfocused(),
            _ => Style::new(),
        };
        let y = inner.y + (r - offset) as u16;
        let kept: Vec<Span> = kept
            .into_iter()
            .map(|s| Span::styled(s.content, s.style.patch(row_style)))
            .collect();
        f.render_widget(
            Paragraph::new(Line::from(kept)).style(row_style),
            Rect {
                y,
                height: 1,
                ..inner
            },
        );
    }
}

/// The spans of one tree row: gutter marker, indentation, fold marker, content and badges.
/// Spans cut to `w` cells, keeping styles.
fn truncate_spans(spans: Vec<Span<'_>>, w: usize) -> Vec<Span<'_>> {
    let mut used = 0;
    let mut kept = Vec::new();
    for s in spans {
        let sw = s.width();
        if used + sw <= w {
            used += sw;
            kept.push(s);
        } else {
            let room = w.saturating_sub(used);
            if room > 0 {
                kept.push(Span::styled(fit(&s.content, room), s.style));
            }
            break;
        }
    }
    kept
}

/// A tree row: its text, and its badges (drawn after the text whatever the width).
fn row_spans<'a>(
    ins: &'a Inspect,
    node: usize,
    t: Theme,
    now: i64,
    hit: bool,
) -> (Vec<Span<'a>>, Vec<Span<'a>>) {
    let tree = &ins.tree;
    let n = &tree.nodes[node];
    let hist = ins.history();
    let gutter = if n.has(Flags::PARTIAL) {
        Span::styled("‼", t.partial())
    } else if n.has(Flags::INPUT) {
        Span::styled("▶", t.title())
    } else if n.has(Flags::MATCHED) {
        Span::styled("◆", t.matched())
    } else if n.has(Flags::CHECKPOINT) {
        Span::styled("⚑", t.key())
    } else if hit {
        Span::styled("»", t.key())
    } else {
        Span::raw(" ")
    };
    let fold = if !n.has_children() {
        "  "
    } else if tree.is_open(node, &ins.exp) {
        "▾ "
    } else {
        "▸ "
    };
    let dim = n.has(Flags::OFF_PATH);
    let base = if dim { t.dim() } else { Style::new() };
    let mut v = vec![
        gutter,
        Span::raw("  ".repeat(n.depth as usize)),
        Span::styled(fold, t.dim()),
    ];
    match &n.kind {
        NodeKind::Header => match &ins.data {
            Some(Opened::Submission(s)) => {
                let short = turnscope_core::journal::submission_rows::short_id(
                    &s.report.row().submission_id,
                );
                v.push(Span::styled(format!("submission {short} "), t.title()));
                v.push(Span::styled(
                    s.verdict(),
                    t.disposition(s.plan.disposition.kind()),
                ));
                if let (Some(r), Some(res)) = (s.plan.rule, s.plan.result) {
                    v.push(Span::raw(format!(" · rule {r} → {res}")));
                }
                v.push(Span::styled("  (v: verdict and plan)", t.dim()));
            }
            Some(Opened::Session(s)) => {
                let inst = turnscope_core::journal::submission_rows::instance_id_of(&s.key)
                    .unwrap_or_else(|| s.key.clone());
                v.push(Span::styled(
                    format!("session {} ", clean(&inst)),
                    t.title(),
                ));
                let n = s.record.as_ref().map_or(0, |r| r.entries.len());
                v.push(Span::raw(format!(
                    "· {} · {}",
                    turnscope_core::text::plural(n as u64, "entry", "entries"),
                    turnscope_core::text::plural(
                        s.submissions.len() as u64,
                        "submission",
                        "submissions"
                    )
                )));
            }
            None => {}
        },
        NodeKind::Note(i) => v.push(Span::styled(
            format!("⚠ {}", clean(tree.note(*i))),
            t.warn(),
        )),
        NodeKind::PreInput { count } => v.push(Span::styled(
            format!(
                "{count} entr{} before the input",
                if *count == 1 { "y" } else { "ies" }
            ),
            t.dim(),
        )),
        NodeKind::Abandoned { anchor, count } => {
            let what = if anchor.is_some() {
                "off the active path, branching here"
            } else {
                "unreachable from the active path"
            };
            v.push(Span::styled(
                format!(
                    "⎇ {count} entr{} {what}",
                    if *count == 1 { "y" } else { "ies" }
                ),
                t.dim(),
            ));
        }
        NodeKind::Call { result, status, .. } => {
            let call = tree.call(node).unwrap_or_default();
            let style = match status {
                CallStatus::Ok => t.ok(),
                CallStatus::Error => t.error(),
                CallStatus::Missing => t.partial(),
            };
            v.push(Span::styled(format!("{} ", status.mark()), style));
            v.push(Span::styled(clean(&call.name), base));
            v.push(Span::styled(
                format!(" {}", clean(&call.id_text())),
                t.dim(),
            ));
            match (result, hist) {
                (Some(r), Some(h)) => {
                    let e = &h.entries[*r as usize];
                    v.push(Span::styled(format!(" → {}", clean(&e.id)), t.dim()));
                    if e.message().is_some() {
                        match ins.preview_of(e) {
                            Some(text) if text.is_empty() => {}
                            Some(text) => {
                                v.push(Span::styled(format!(" {}", fit(&clean(&text), 60)), base))
                            }
                            None => v.push(Span::styled(format!(" {TEXT_PENDING}"), t.dim())),
                        }
                    }
                }
                _ => v.push(Span::styled(" no result", t.partial())),
            }
        }
        NodeKind::Entry { entry } => {
            if let Some(h) = hist {
                let e = &h.entries[*entry as usize];
                entry_spans(e, ins.preview_of(e).as_deref(), t, now, base, !dim, &mut v);
            }
        }
    }
    // Badges: text that keeps its meaning without colour.
    let mut badges = Vec::new();
    if n.has(Flags::PARTIAL) {
        badges.push(Span::styled(" [partial batch]", t.partial()));
    }
    if n.has(Flags::INPUT) {
        badges.push(Span::styled(" [input]", t.title()));
    }
    if n.has(Flags::MATCHED) {
        badges.push(Span::styled(" [matched]", t.matched()));
    }
    if n.has(Flags::CHECKPOINT) {
        badges.push(Span::styled(" [checkpoint]", t.key()));
    }
    if dim && matches!(n.kind, NodeKind::Entry { .. }) {
        badges.push(Span::styled(" [off path]", t.dim()));
    }
    (v, badges)
}

/// What a row shows for a text that has not arrived from the worker yet (a frame or two).
const TEXT_PENDING: &str = "…";

/// An entry's row; `text` is its message's text, `None` while it is being read.
fn entry_spans<'a>(
    e: &Entry,
    text: Option<&str>,
    t: Theme,
    now: i64,
    base: Style,
    on_path: bool,
    v: &mut Vec<Span<'a>>,
) {
    v.push(Span::styled(format!("{} ", clean(&e.id)), t.dim()));
    match &e.body {
        EntryBody::Message(m) => match &m.role {
            Role::Assistant => {
                let stop = m.stop_reason().unwrap_or("?").to_string();
                let stop_style = match stop.as_str() {
                    "error" => t.error(),
                    "aborted" => t.warn(),
                    "stop" | "length" => t.ok(),
                    _ => base,
                };
                v.push(Span::styled("assistant ", base));
                v.push(Span::styled(stop, stop_style));
                if let Some(model) = m.model().filter(|s| !s.is_empty()) {
                    v.push(Span::styled(format!(" · {}", clean(model)), t.dim()));
                }
                if m.has_usage() {
                    v.push(Span::styled(
                        format!(
                            " · {} in {} out {}",
                            compact(m.usage("input")),
                            compact(m.usage("output")),
                            dollars(m.cost_total())
                        ),
                        t.dim(),
                    ));
                }
                if let Some(err) = m.truthy_error_message() {
                    v.push(Span::styled(
                        format!(" ✗ {}", fit(&clean(&err), 50)),
                        t.error(),
                    ));
                } else {
                    match text {
                        Some("") => {}
                        Some(text) => {
                            v.push(Span::styled(format!(" “{}”", fit(&clean(text), 40)), base))
                        }
                        None => v.push(Span::styled(format!(" {TEXT_PENDING}"), t.dim())),
                    }
                }
            }
            Role::User => {
                v.push(Span::styled("user ", t.title()));
                v.push(match text {
                    Some(text) => Span::styled(format!("“{}”", fit(&clean(text), 50)), base),
                    None => Span::styled(TEXT_PENDING, t.dim()),
                });
            }
            Role::ToolResult => {
                let mark = if m.is_error() { "✗" } else { "✓" };
                v.push(Span::styled(
                    format!("toolResult {mark} {} ", clean(m.tool_name().unwrap_or("?"))),
                    if m.is_error() { t.error() } else { base },
                ));
                v.push(Span::styled(
                    clean(&turnscope_core::journal::entry::js_key_text(
                        &m.tool_call_id(),
                    )),
                    t.dim(),
                ));
                if on_path {
                    v.push(Span::styled(" (no call to pair with)", t.dim()));
                }
            }
            Role::Signal => {
                let ty = m.signal_type().unwrap_or("?");
                v.push(Span::styled(format!("signal {}", clean(ty)), base));
                let detail = match ty {
                    "dispatch_input" => m
                        .attribute("agent")
                        .map(|a| format!(" agent {a}"))
                        .unwrap_or_default(),
                    "submission_interrupted" => m
                        .attribute("reason")
                        .map(|a| format!(" {a}"))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                v.push(Span::styled(clean(&detail), t.dim()));
            }
            Role::Other(r) => v.push(Span::styled(
                format!("message role {} (unknown)", clean(r)),
                t.warn(),
            )),
            Role::Missing => v.push(Span::styled("message without a role", t.warn())),
        },
        EntryBody::Compaction(c) => {
            v.push(Span::styled("compaction", t.title()));
            if let Some(tb) = c.tokens_before {
                v.push(Span::styled(
                    format!(" · {} tokens before", compact(tb)),
                    t.dim(),
                ));
            }
            v.push(Span::styled(
                format!(" “{}”", fit(&clean(&c.summary), 40)),
                base,
            ));
        }
        EntryBody::Unknown { type_name } => v.push(Span::styled(
            format!("{} (unknown entry type)", clean(type_name)),
            t.warn(),
        )),
        EntryBody::Malformed { error } => v.push(Span::styled(
            format!("malformed: {}", clean(error)),
            t.error(),
        )),
    }
    if let Some(ms) = e.timestamp.as_deref().and_then(ms_from_iso) {
        v.push(Span::styled(format!(" · {}", ago(now, ms)), t.dim()));
    }
}
