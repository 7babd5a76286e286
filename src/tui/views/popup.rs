//! Popups drawn over the screen: help, and the confirm dialog write actions will use.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::help;
use crate::tui::app::{App, Popup};
use crate::tui::text::clean;

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10);
    let h = h.min(area.height.saturating_sub(2)).max(3);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn draw(f: &mut Frame, app: &mut App, area: Rect) {
    let t = app.cfg.theme;
    let Some(popup) = &mut app.popup else { return };
    match popup {
        Popup::Help { scroll } => {
            let lines = help::lines(t, app.cfg.read_only);
            let r = centered(area, 96, area.height.saturating_sub(2));
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(t.border(true))
                .title(Span::styled(" help · j/k scroll · esc closes ", t.title()));
            let inner = block.inner(r);
            let max = lines.len().saturating_sub(inner.height as usize);
            *scroll = (*scroll).min(max);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let visible: Vec<Line> = lines
                .into_iter()
                .skip(*scroll)
                .take(inner.height as usize)
                .collect();
            f.render_widget(Paragraph::new(visible), inner);
        }
        Popup::Confirm {
            title,
            lines,
            confirm_label,
            scroll,
            ..
        } => {
            let h = (lines.len() as u16 + 4).min(area.height.saturating_sub(2));
            let r = centered(area, 80, h);
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Double)
                .border_style(t.border(true))
                .title(Span::styled(format!(" {} ", clean(title)), t.title()));
            let inner = block.inner(r);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let body_h = inner.height.saturating_sub(1);
            let text: Vec<Line> = lines.iter().map(|l| Line::from(clean(l))).collect();
            let max = text.len().saturating_sub(body_h as usize);
            *scroll = (*scroll).min(max);
            f.render_widget(
                Paragraph::new(text)
                    .wrap(Wrap { trim: false })
                    .scroll((*scroll as u16, 0)),
                Rect {
                    height: body_h,
                    ..inner
                },
            );
            let keys = Line::from(vec![
                Span::styled(" ⏎/y ", t.key()),
                Span::raw(format!("{confirm_label}   ")),
                Span::styled("esc/n ", t.key()),
                Span::raw("cancel"),
            ]);
            f.render_widget(
                Paragraph::new(keys),
                Rect {
                    y: inner.bottom().saturating_sub(1),
                    height: 1,
                    ..inner
                },
            );
        }
    }
}
