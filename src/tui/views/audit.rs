//! The audit trail (`a`, both modes): every `turnscope_audit` row, newest first, with the
//! selected record in full below.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::scroll_into_view;
use crate::core::time::iso_from_ms;
use crate::tui::app::{App, Hit, Pane};
use crate::tui::text::{clean, pad};

/// `2026-01-05 09:20:00` (UTC).
fn when(ms: i64) -> String {
    iso_from_ms(ms).replace('T', " ").chars().take(19).collect()
}

pub fn draw(f: &mut Frame, app: &mut App, area: Rect) {
    let t = app.cfg.theme;
    let detail_h = if area.height >= 14 { 6 } else { 0 };
    let table = Rect {
        height: area.height - detail_h,
        ..area
    };
    let w = table.width as usize;
    // time, operator, action, submission, reason; the summary takes what is left.
    let fixed = [
        ("AT (UTC)", 19),
        ("OPERATOR", 16),
        ("ACTION", 7),
        ("SUBMISSION", 10),
    ];
    let reason_w = 24.min(w / 5);
    let used: usize = fixed.iter().map(|(_, c)| c + 1).sum::<usize>() + reason_w + 2;
    let summary_w = w.saturating_sub(used);
    let mut head = vec![Span::raw(" ")];
    let bold = t.dim().add_modifier(Modifier::BOLD);
    for (title, cw) in fixed {
        head.push(Span::styled(pad(title, cw), bold));
        head.push(Span::raw(" "));
    }
    head.push(Span::styled(pad("REASON", reason_w), bold));
    head.push(Span::raw(" "));
    if summary_w >= 8 {
        head.push(Span::styled(pad("SUMMARY", summary_w), bold));
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
    app.layout.audit = Some(Hit {
        area: table,
        rows: rows_area,
    });
    let h = rows_area.height as usize;
    scroll_into_view(&mut app.audit.offset, app.audit.selected, h);
    if app.audit.rows.is_empty() {
        let msg = if let Some(e) = &app.audit.error {
            format!("could not read the audit trail: {}", clean(e))
        } else if !app.audit.loaded {
            "reading the audit trail…".to_string()
        } else {
            "no turnscope action was ever applied to this database".to_string()
        };
        f.render_widget(
            Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
            Rect {
                height: 1,
                ..rows_area
            },
        );
    }
    let focused = app.focus == Pane::Audit;
    for (r, a) in app
        .audit
        .rows
        .iter()
        .enumerate()
        .skip(app.audit.offset)
        .take(h)
    {
        let selected = r == app.audit.selected;
        let row_style = match (selected, focused) {
            (true, true) => t.selected(),
            (true, false) => t.selected_unfocused(),
            _ => Style::new(),
        };
        let short = clean(&crate::core::rows::short_id(&a.submission_id));
        let cells = [
            (when(a.at), t.dim(), 19),
            (clean(&a.operator), Style::new(), 16),
            (clean(&a.action), t.key(), 7),
            (short, Style::new(), 10),
            (
                clean(a.reason.as_deref().unwrap_or("-")),
                Style::new(),
                reason_w,
            ),
        ];
        let mut spans = vec![Span::styled(if selected { "›" } else { " " }, row_style)];
        for (text, style, cw) in cells {
            spans.push(Span::styled(pad(&text, cw), style.patch(row_style)));
            spans.push(Span::styled(" ", row_style));
        }
        if summary_w >= 8 {
            spans.push(Span::styled(
                pad(&clean(&a.summary), summary_w),
                t.dim().patch(row_style),
            ));
        }
        let y = rows_area.y + (r - app.audit.offset) as u16;
        f.render_widget(
            Paragraph::new(Line::from(spans)).style(row_style),
            Rect {
                y,
                height: 1,
                ..rows_area
            },
        );
    }
    if detail_h > 0 {
        let d = Rect {
            y: area.y + table.height,
            height: detail_h,
            ..area
        };
        let block = Block::new()
            .borders(Borders::TOP)
            .border_style(t.border(false));
        let inner = block.inner(d);
        f.render_widget(block, d);
        let Some(a) = app.selected_audit() else {
            return;
        };
        let label = |s: &'static str| Span::styled(format!(" {s:<11}"), t.dim());
        let lines = vec![
            Line::from(vec![
                label("record"),
                Span::raw(format!(
                    "#{} · {} · {} by {} · turnscope {}",
                    a.id,
                    iso_from_ms(a.at),
                    a.action,
                    clean(&a.operator),
                    clean(&a.version)
                )),
            ]),
            Line::from(vec![
                label("submission"),
                Span::raw(format!(
                    "{} · attempt {}",
                    clean(&a.submission_id),
                    clean(a.attempt_id.as_deref().unwrap_or("-"))
                )),
            ]),
            Line::from(vec![
                label("reason"),
                Span::raw(clean(a.reason.as_deref().unwrap_or("-"))),
            ]),
            Line::from(vec![label("summary"), Span::raw(clean(&a.summary))]),
        ];
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    }
}
