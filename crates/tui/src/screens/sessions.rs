//! The sessions view (`s`): every session with its instance, entry count, last update and its
//! submissions by status, most recently updated first; `/` filters by key or instance, ⏎ opens
//! the session's tree.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::{nav_delta, step, Ask};
use crate::keymap::Action;
use crate::messages::{status_label, Target};
use crate::text::{ago, clean, pad};
use crate::view_state::{DrawCtx, Hit, InputMode, Layout, Pane};
use crate::widgets::{render_selectable, scroll_into_view, table_header};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::time::ms_from_iso;
use turnscope_store::SessionSummary;

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

    /// What ⏎ opens and `e` exports: the selected session.
    pub fn target(&self) -> Option<Target> {
        self.selected_session()
            .map(|s| Target::Session(s.id.clone()))
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

    /// The sessions list's own actions: the cursor, ⏎, `/` and esc clearing the query.
    pub fn handle(&mut self, a: Action, page: usize) -> Vec<Ask> {
        if let Some(delta) = nav_delta(a, page) {
            self.move_cursor(delta);
            return Vec::new();
        }
        match a {
            Action::Enter => self.target().map(Ask::Open).into_iter().collect(),
            Action::StartFilter => vec![Ask::Input(InputMode::Filter)],
            Action::Back if !self.query.is_empty() => {
                self.query.clear();
                self.rebuild();
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The `/` text: the sessions shown are those it matches.
    pub fn set_query(&mut self, q: String) {
        self.query = q;
        self.rebuild();
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

/// The session's submissions by status, as the header counts them: failed rows are settled
/// rows, shown inside the settled count (`3 settled (1 failed)`), not as a status of their own.
fn by_status(s: &SessionSummary) -> String {
    if s.submissions_by_status.is_empty() {
        return "-".into();
    }
    let failed: i64 = s
        .submissions_by_status
        .iter()
        .filter(|(st, _)| st == "failed")
        .map(|(_, n)| n)
        .sum();
    let mut parts = Vec::new();
    let mut settled_seen = false;
    for (st, n) in s
        .submissions_by_status
        .iter()
        .filter(|(st, _)| st != "failed")
    {
        let status = SubmissionStatus::parse(st);
        if status == SubmissionStatus::Settled {
            settled_seen = true;
            let inside = if failed > 0 {
                format!(" ({failed} failed)")
            } else {
                String::new()
            };
            parts.push(format!("{} {}{inside}", n + failed, status_label(&status)));
        } else {
            parts.push(format!("{n} {}", status_label(&status)));
        }
    }
    if !settled_seen && failed > 0 {
        let settled = status_label(&SubmissionStatus::Settled);
        parts.push(format!("{failed} {settled} ({failed} failed)"));
    }
    parts.join(", ")
}

impl SessionsScreen {
    pub fn draw(&self, f: &mut Frame, cx: &DrawCtx, view: &mut Layout, area: Rect) {
        let t = cx.theme;
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
        let mut titles = cols.clone();
        if key_w >= 12 {
            titles.push(("SESSION KEY", key_w));
        }
        let (header, widths, rows_area) = table_header(&titles, area, &t);
        view.sessions = Some(Hit {
            area,
            rows: rows_area,
        });
        let h = rows_area.height as usize;
        scroll_into_view(&mut view.sessions_offset, self.selected, h);
        let rows = self.view.iter().map(|&idx| {
            let s = &self.rows[idx];
            let updated = s
                .updated_at
                .as_deref()
                .and_then(ms_from_iso)
                .map_or("-".into(), |ms| ago(cx.now_ms, ms));
            let running = s
                .submissions_by_status
                .iter()
                .any(|(st, _)| SubmissionStatus::parse(st) == SubmissionStatus::Running);
            let texts = [
                (
                    clean(s.instance_id.as_deref().unwrap_or("(not an agent session)")),
                    Style::new(),
                ),
                (s.entry_count.to_string(), t.dim()),
                (updated, t.dim()),
                (by_status(s), if running { t.warn() } else { Style::new() }),
            ];
            let mut cells: Vec<Cell> = texts
                .into_iter()
                .zip(&cols)
                .map(|((text, style), (_, cw))| {
                    Cell::from(Span::styled(pad(&clean(&text), *cw), style))
                })
                .collect();
            if key_w >= 12 {
                cells.push(Cell::from(Span::styled(pad(&clean(&s.id), key_w), t.dim())));
            }
            Row::new(cells)
        });
        render_selectable(
            f,
            area,
            Table::new(rows, widths).header(header),
            &t,
            cx.focus == Pane::Sessions,
            view.sessions_offset,
            (!self.view.is_empty()).then_some(self.selected),
        );
        if self.view.is_empty() {
            let msg = if !cx.loaded || !cx.sessions_loaded {
                "reading the sessions…"
            } else if self.rows.is_empty() {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(by: &[(&str, i64)]) -> SessionSummary {
        SessionSummary {
            id: "k".into(),
            instance_id: None,
            entry_count: 0,
            created_at: None,
            updated_at: None,
            leaf_id: None,
            data_problems: vec![],
            submissions_by_status: by.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        }
    }

    /// As the header counts them: failed inside settled, never beside it.
    #[test]
    fn failed_rows_are_counted_inside_settled() {
        assert_eq!(by_status(&summary(&[])), "-");
        assert_eq!(
            by_status(&summary(&[("running", 1), ("settled", 3), ("failed", 2)])),
            "1 running, 5 settled (2 failed)"
        );
        assert_eq!(by_status(&summary(&[("settled", 3)])), "3 settled");
        assert_eq!(
            by_status(&summary(&[("queued", 1), ("failed", 2)])),
            "1 pending, 2 settled (2 failed)"
        );
    }
}
