//! The sessions view (`s`): every session with its instance, entry count, last update and its
//! submissions by status, most recently updated first; `/` filters by key or instance, ⏎ opens
//! the session's tree.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::step;
use crate::core::time::ms_from_iso;
use crate::store::SessionSummary;
use crate::tui::app::{App, Hit, Layout, Pane};
use crate::tui::text::{ago, clean, pad};
use crate::tui::views::scroll_into_view;

#[derive(Debug, Clone, Default)]
pub struct SessionsScreen {
    pub rows: Vec<SessionSummary>,
    pub query: String,
    pub view: Vec<usize>,
    pub selected: usize,
    pub selected_id: Option<String>,
}

impl SessionsScreen {
    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.view.get(self.selected).map(|&i| &self.rows[i])
    }

    pub fn rebuild(&mut self) {
        let q = self.query.to_lowercase();
        let mut view: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                let s = &self.rows[i];
                q.is_empty()
                    || s.id.to_lowercase().contains(&q)
                    || s.instance_id
                        .as_deref()
                        .unwrap_or("")
                        .to_lowercase()
                        .contains(&q)
            })
            .collect();
        // Most recently updated first (ISO strings sort chronologically).
        let rows = &self.rows;
        view.sort_by(|&a, &b| {
            rows[b]
                .updated_at
                .cmp(&rows[a].updated_at)
                .then(rows[a].id.cmp(&rows[b].id))
        });
        self.view = view;
        let keep = self.selected_id.clone();
        self.selected = keep
            .and_then(|id| self.view.iter().position(|&i| self.rows[i].id == id))
            .unwrap_or_else(|| self.selected.min(self.view.len().saturating_sub(1)));
        self.selected_id = self.selected_session().map(|s| s.id.clone());
    }

    pub fn move_cursor(&mut self, delta: isize) {
        self.selected = step(self.selected, self.view.len(), delta);
        self.selected_id = self.selected_session().map(|s| s.id.clone());
    }

    /// A click on row `row` of the viewport; `true` when it landed on a session.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.view.len() {
            return false;
        }
        self.selected = i;
        self.selected_id = self.selected_session().map(|s| s.id.clone());
        true
    }
}

fn by_status(s: &SessionSummary) -> String {
    if s.submissions_by_status.is_empty() {
        return "-".into();
    }
    s.submissions_by_status
        .iter()
        .map(|(st, n)| format!("{n} {}", if st == "queued" { "pending" } else { st }))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn draw(f: &mut Frame, app: &App, view: &mut Layout, area: Rect) {
    let t = app.cfg.theme;
    let w = area.width as usize;
    // instance, entries, updated, submissions, key (widest last, dropped first)
    let inst_w = 18.min(w / 4);
    let cols: Vec<(&str, usize)> = vec![
        ("INSTANCE", inst_w),
        ("ENTRIES", 7),
        ("UPDATED", 12),
        ("SUBMISSIONS", 30.min(w.saturating_sub(inst_w + 7 + 12 + 5))),
    ];
    let used: usize = cols.iter().map(|(_, c)| c + 1).sum::<usize>() + 1;
    let key_w = w.saturating_sub(used);
    let mut head = vec![Span::raw(" ")];
    for (title, cw) in &cols {
        head.push(Span::styled(
            pad(title, *cw),
            t.dim().add_modifier(Modifier::BOLD),
        ));
        head.push(Span::raw(" "));
    }
    if key_w >= 12 {
        head.push(Span::styled(
            pad("SESSION KEY", key_w),
            t.dim().add_modifier(Modifier::BOLD),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(head)), Rect { height: 1, ..area });
    let rows_area = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(1),
        ..area
    };
    view.sessions = Some(Hit {
        area,
        rows: rows_area,
    });
    let h = rows_area.height as usize;
    scroll_into_view(&mut view.sessions_offset, app.sessions.selected, h);
    if app.sessions.view.is_empty() {
        let msg = if !app.loaded || !app.scale.sessions_loaded {
            "reading the sessions…"
        } else if app.sessions.rows.is_empty() {
            "the database has no sessions"
        } else {
            "no session matches the filter (esc clears)"
        };
        f.render_widget(
            Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
            Rect {
                height: 1,
                ..rows_area
            },
        );
    }
    let focused = app.focus == Pane::Sessions;
    for (r, &idx) in app
        .sessions
        .view
        .iter()
        .enumerate()
        .skip(view.sessions_offset)
        .take(h)
    {
        let s = &app.sessions.rows[idx];
        let selected = r == app.sessions.selected;
        let row_style = match (selected, focused) {
            (true, true) => t.selected(),
            (true, false) => t.selected_unfocused(),
            _ => Style::new(),
        };
        let updated = s
            .updated_at
            .as_deref()
            .and_then(ms_from_iso)
            .map_or("-".into(), |ms| ago(app.now_ms, ms));
        let running = s
            .submissions_by_status
            .iter()
            .any(|(st, _)| st == "running");
        let cells = [
            (
                clean(s.instance_id.as_deref().unwrap_or("(not an agent session)")),
                Style::new(),
            ),
            (s.entry_count.to_string(), t.dim()),
            (updated, t.dim()),
            (by_status(s), if running { t.warn() } else { Style::new() }),
        ];
        let mut spans = vec![Span::styled(if selected { "›" } else { " " }, row_style)];
        for ((text, style), (_, cw)) in cells.into_iter().zip(&cols) {
            spans.push(Span::styled(
                pad(&clean(&text), *cw),
                style.patch(row_style),
            ));
            spans.push(Span::styled(" ", row_style));
        }
        if key_w >= 12 {
            spans.push(Span::styled(
                pad(&clean(&s.id), key_w),
                t.dim().patch(row_style),
            ));
        }
        let y = rows_area.y + (r - view.sessions_offset) as u16;
        f.render_widget(
            Paragraph::new(Line::from(spans)).style(row_style),
            Rect {
                y,
                height: 1,
                ..rows_area
            },
        );
    }
}
