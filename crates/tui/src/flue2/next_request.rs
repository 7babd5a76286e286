//! The 2.x "next request" pane (`M`, as on beta.7): the opened (or selected) submission's
//! `turnscope next-request` view, read by the worker with the engine's own report
//! ([`turnscope_engine::flue2_next_request`]) and shown as the CLI prints it, in a scrollable
//! popup that any other key closes.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_next_request::load;
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::text::{clean, fit};
use crate::theme::Theme;

/// The view's title and lines (the CLI's text), read in one snapshot at `now_ms`.
pub fn read(
    reader: &Flue2SqliteReader,
    options: &Flue2Options,
    id: &str,
    now_ms: i64,
) -> Result<(String, Vec<String>), StoreError> {
    let report = load(reader, options, id, now_ms)?;
    let lines = report.text_lines(options.header_line(reader.format_version()));
    Ok((format!("next request of {id}"), lines))
}

/// The pane: reading, or the view with its scroll.
pub enum Pane {
    Reading(String),
    Shown {
        title: String,
        lines: Vec<String>,
        scroll: usize,
        /// Rows the last draw fitted.
        page: usize,
    },
}

impl Pane {
    /// A key: `true` keeps the pane open (the scroll keys), `false` closes it.
    pub fn on_key(&mut self, ev: KeyEvent) -> bool {
        let Pane::Shown {
            lines,
            scroll,
            page,
            ..
        } = self
        else {
            return ev.code != KeyCode::Esc;
        };
        let last = lines.len().saturating_sub((*page).max(1));
        match ev.code {
            KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => {
                *scroll = (*scroll + (*page).max(1)).min(last)
            }
            KeyCode::PageUp => *scroll = scroll.saturating_sub((*page).max(1)),
            KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
            KeyCode::End | KeyCode::Char('G') => *scroll = last,
            _ => return false,
        }
        true
    }

    /// The text shown, for tests.
    pub fn text(&self) -> Vec<String> {
        match self {
            Pane::Reading(s) => vec![s.clone()],
            Pane::Shown { lines, .. } => lines.clone(),
        }
    }

    pub fn draw(&mut self, f: &mut Frame, t: &Theme, area: Rect) {
        let rect = Rect::new(
            area.x + 1,
            area.y + 1,
            area.width.saturating_sub(2),
            area.height.saturating_sub(2),
        );
        f.render_widget(Clear, rect);
        let inner = rect.height.saturating_sub(2) as usize;
        let width = rect.width.saturating_sub(2) as usize;
        let (title, body): (String, Vec<Line>) = match self {
            Pane::Reading(s) => (
                "next request".into(),
                vec![Line::from(Span::styled(format!(" {s}"), t.dim()))],
            ),
            Pane::Shown {
                title,
                lines,
                scroll,
                page,
            } => {
                *page = inner.saturating_sub(1);
                *scroll = (*scroll).min(lines.len().saturating_sub((*page).max(1)));
                let mut v: Vec<Line> = lines
                    .iter()
                    .skip(*scroll)
                    .take(*page)
                    .map(|l| Line::from(Span::raw(fit(&clean(l), width))))
                    .collect();
                v.push(Line::from(Span::styled(
                    "↑/↓ PgUp/PgDn scroll · any other key closes",
                    t.dim(),
                )));
                (title.clone(), v)
            }
        };
        f.render_widget(
            Paragraph::new(body).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(Span::styled(format!(" {} ", clean(&title)), t.title())),
            ),
            rect,
        );
    }
}
