//! The submissions list (home): columns dropped by priority when narrow, a verdict preview of the
//! selected row below. In `--write` mode a marker column shows the rows marked for a bulk action.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::scroll_into_view;
use crate::report::lease_text;
use crate::tui::app::{App, Column, Hit, Pane};
use crate::tui::data::ListItem;
use crate::tui::keymap::StatusFilter;
use crate::tui::text::{clean, fit, pad, width};

/// Columns in the order they are kept when the terminal is narrow.
const PRIORITY: [Column; 11] = [
    Column::Id,
    Column::Verdict,
    Column::Lease,
    Column::Status,
    Column::Rule,
    Column::Instance,
    Column::Attempts,
    Column::Seq,
    Column::Phase,
    Column::Kind,
    Column::Error,
];

fn status_label(s: &str) -> &str {
    if s == "queued" {
        "pending"
    } else {
        s
    }
}

fn rule_text(it: &ListItem) -> String {
    match (it.rule, it.result) {
        (Some(r), Some(res)) => format!("{r} {res}"),
        _ => "-".into(),
    }
}

/// The text of one list cell, terminal-safe.
pub fn cell(app: &App, it: &ListItem, col: Column) -> String {
    clean(&raw_cell(app, it, col))
}

fn raw_cell(app: &App, it: &ListItem, col: Column) -> String {
    match col {
        Column::Seq => it.row.sequence.to_string(),
        Column::Id => crate::core::rows::short_id(&it.row.submission_id),
        Column::Kind => it.row.kind.clone(),
        Column::Instance => clean(&it.instance),
        Column::Status => status_label(&it.row.status).to_string(),
        Column::Attempts => format!("{}/{}", it.row.attempt_count, it.row.max_retry),
        Column::Lease => lease_text(&it.row, app.now_ms),
        Column::Phase => it.journal.as_ref().map_or("-".into(), |(p, _)| clean(p)),
        Column::Verdict => {
            if it.partial.is_some() {
                format!("{} ‼", it.verdict)
            } else {
                it.verdict.clone()
            }
        }
        Column::Rule => rule_text(it),
        Column::Error => it.row.error.as_deref().map(clean).unwrap_or_default(),
    }
}

/// Which columns fit in `w` cells, with their widths, in display order.
fn columns(app: &App, w: usize) -> Vec<(Column, usize)> {
    let rows: Vec<&ListItem> = app.list.view.iter().map(|&i| &app.items[i]).collect();
    let natural = |c: Column| -> usize {
        let content = rows
            .iter()
            .map(|it| width(&cell(app, it, c)))
            .max()
            .unwrap_or(0);
        let cap = match c {
            Column::Instance => 18,
            Column::Verdict => 30,
            Column::Error => 60,
            Column::Lease => 18,
            _ => 24,
        };
        content.max(width(c.title()) + 1).min(cap)
    };
    let mut chosen: Vec<(Column, usize)> = Vec::new();
    let mut used = 1; // left margin
    for c in PRIORITY {
        let nw = if c == Column::Error { 10 } else { natural(c) };
        if used + nw < w {
            chosen.push((c, nw));
            used += nw + 1;
        }
    }
    // The error column takes what is left.
    if let Some(e) = chosen.iter_mut().find(|(c, _)| *c == Column::Error) {
        e.1 += w.saturating_sub(used);
    }
    chosen.sort_by_key(|(c, _)| Column::ALL.iter().position(|x| x == c));
    chosen
}

pub fn draw(f: &mut Frame, app: &mut App, area: Rect) {
    let t = app.cfg.theme;
    let preview_h = if area.height >= 14 { 5 } else { 0 };
    let table = Rect {
        height: area.height - preview_h,
        ..area
    };
    let preview = Rect {
        y: area.y + table.height,
        height: preview_h,
        ..area
    };
    // The marker column exists only in write mode (marks do too).
    let marker = app.write_mode();
    let w = table.width as usize - usize::from(marker);
    let cols = columns(app, w);
    // Header row.
    let mut head = vec![Span::raw(if marker { "  " } else { " " })];
    for (c, cw) in &cols {
        let mut title = c.title().to_string();
        let sorted = app.list.sort == Some(*c) || (app.list.sort.is_none() && *c == Column::Seq);
        if sorted {
            title.push(if app.list.desc { '▼' } else { '▲' });
        }
        head.push(Span::styled(
            pad(&title, *cw),
            t.dim().add_modifier(Modifier::BOLD),
        ));
        head.push(Span::raw(" "));
    }
    f.render_widget(
        Paragraph::new(Line::from(head)),
        Rect { height: 1, ..table },
    );
    let rows_area = Rect {
        y: table.y + 1,
        height: table.height.saturating_sub(1),
        ..table
    };
    app.layout.list = Some(Hit {
        area: table,
        rows: rows_area,
    });
    let h = rows_area.height as usize;
    scroll_into_view(&mut app.list.offset, app.list.selected, h);
    if app.list.view.is_empty() {
        let msg = if !app.loaded {
            "reading the database…".to_string()
        } else if app.count(StatusFilter::All) == 0 {
            "the database has no submissions".to_string()
        } else if !app.list.query.is_empty() {
            format!(
                "no submission matches /{} (esc clears)",
                clean(&app.list.query)
            )
        } else {
            match app.list.filter {
                StatusFilter::Expired => {
                    "no expired lease: nothing for the reconciler to pick up · 2 shows all"
                        .to_string()
                }
                fl => format!("no {} submission · 2 shows all", fl.label()),
            }
        };
        f.render_widget(
            Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
            Rect {
                height: 1,
                ..rows_area
            },
        );
    }
    let focused = app.focus == Pane::List;
    for (r, &idx) in app
        .list
        .view
        .iter()
        .enumerate()
        .skip(app.list.offset)
        .take(h)
    {
        let it = &app.items[idx];
        let selected = r == app.list.selected;
        let row_style = if selected {
            if focused {
                t.selected()
            } else {
                t.selected_unfocused()
            }
        } else if app.is_flashing(&it.row.submission_id) {
            t.flash()
        } else {
            Style::new()
        };
        let mut spans = vec![Span::raw(if selected { "›" } else { " " })];
        if marker {
            if app.marks.contains(&it.row.submission_id) {
                spans.push(Span::styled("●", row_style.patch(t.marked())));
            } else {
                spans.push(Span::styled(" ", row_style));
            }
        }
        for (c, cw) in &cols {
            let text = pad(&cell(app, it, *c), *cw);
            let style = match c {
                Column::Status => t.status(&it.row.status),
                Column::Verdict if it.partial.is_some() => t.partial(),
                Column::Verdict => t.status(it.disposition.label()),
                Column::Lease if it.row.lease_expired(app.now_ms) => t.warn(),
                Column::Error => t.error().remove_modifier(Modifier::BOLD),
                Column::Seq | Column::Kind | Column::Attempts | Column::Phase => t.dim(),
                _ => Style::new(),
            };
            spans.push(Span::styled(text, style.patch(row_style)));
            spans.push(Span::styled(" ", row_style));
        }
        let y = rows_area.y + (r - app.list.offset) as u16;
        f.render_widget(
            Paragraph::new(Line::from(spans)).style(row_style),
            Rect {
                y,
                height: 1,
                ..rows_area
            },
        );
    }
    if preview_h > 0 {
        draw_preview(f, app, preview);
    }
}

fn draw_preview(f: &mut Frame, app: &App, area: Rect) {
    let t = app.cfg.theme;
    let Some(it) = app.selected_item() else {
        let block = Block::new()
            .borders(Borders::TOP)
            .border_style(t.border(false));
        f.render_widget(block, area);
        return;
    };
    let short = crate::core::rows::short_id(&it.row.submission_id);
    let title = Line::from(vec![
        Span::styled(format!(" {short} "), t.title()),
        Span::styled(format!("{} ", it.verdict), t.status(it.disposition.label())),
        Span::styled(
            crate::tui::tooltip::tooltip(&it.verdict)
                .map(|m| {
                    let used = short.chars().count() + width(&it.verdict) + 5;
                    fit(
                        &format!("─ {m} "),
                        (area.width as usize).saturating_sub(used),
                    )
                })
                .unwrap_or_default(),
            t.dim(),
        ),
    ]);
    let block = Block::new()
        .borders(Borders::TOP)
        .border_style(t.border(false))
        .title(title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let w = inner.width as usize;
    let label = |s: &'static str| Span::styled(format!(" {s:<7}"), t.dim());
    let mut lines: Vec<Line> = Vec::new();
    if let Some(ex) = &it.explanation {
        lines.push(Line::from(vec![
            label("why"),
            Span::raw(fit(&clean(ex), w.saturating_sub(8))),
        ]));
    }
    let plan = match (it.rule, it.result) {
        (Some(r), Some(res)) => format!("rule {r} → {res}: {}", it.reason),
        _ => format!("{}: {}", it.disposition.label(), it.reason),
    };
    lines.push(Line::from(vec![
        label("plan"),
        Span::raw(fit(&clean(&plan), w.saturating_sub(8))),
    ]));
    if let Some((missing, total)) = it.partial {
        lines.push(Line::from(vec![
            label("batch"),
            Span::styled(
                fit(
                    &format!("‼ partial batch: {missing} of {total} tool calls have no result"),
                    w.saturating_sub(8),
                ),
                t.partial(),
            ),
        ]));
    } else if let Some(first) = it.writes.first() {
        let more = if it.writes.len() > 1 {
            format!(" (+{} more)", it.writes.len() - 1)
        } else {
            String::new()
        };
        lines.push(Line::from(vec![
            label("writes"),
            Span::raw(fit(
                &format!("1. {}{more}", clean(first)),
                w.saturating_sub(8),
            )),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled(" ⏎", t.key()),
        Span::styled(" history tree, verdict and plan", t.dim()),
    ]));
    f.render_widget(Paragraph::new(lines), inner);
}
