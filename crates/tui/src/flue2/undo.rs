//! Undo from the 2.x audit screen (`--write` only), as beta.7's audit screen and `turnscope
//! --write undo` do it: asked why (⏎ on a blank line skips it), then the store's own check and
//! preview (a transaction rolled back: the rows it restores, or why it is refused), with No
//! selected; `A` (or ⏎ on Yes) writes it in one fenced transaction with its audit record.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::text::clean;
use crate::theme::Theme;

#[derive(Debug, Clone)]
pub enum UndoFlow {
    Reason {
        target: String,
        text: String,
    },
    Waiting(String),
    Confirm {
        target: String,
        reason: Option<String>,
        lines: Vec<String>,
        yes: bool,
    },
    Done {
        title: String,
        lines: Vec<String>,
    },
}

/// What a key asks the app for.
pub enum UndoStep {
    Stay,
    Close,
    /// Check and preview (`commit` false), or write.
    Ask {
        target: String,
        reason: Option<String>,
        commit: bool,
    },
}

impl UndoFlow {
    pub fn on_key(&mut self, ev: KeyEvent) -> UndoStep {
        match self {
            UndoFlow::Reason { target, text } => match ev.code {
                KeyCode::Esc => UndoStep::Close,
                KeyCode::Enter => UndoStep::Ask {
                    target: target.clone(),
                    reason: Some(text.trim().to_string()).filter(|r| !r.is_empty()),
                    commit: false,
                },
                KeyCode::Backspace => {
                    text.pop();
                    UndoStep::Stay
                }
                KeyCode::Char(c) => {
                    text.push(c);
                    UndoStep::Stay
                }
                _ => UndoStep::Stay,
            },
            UndoFlow::Waiting(_) => UndoStep::Stay,
            UndoFlow::Confirm {
                target,
                reason,
                yes,
                ..
            } => match ev.code {
                KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab => {
                    *yes = !*yes;
                    UndoStep::Stay
                }
                KeyCode::Char('A') => UndoStep::Ask {
                    target: target.clone(),
                    reason: reason.clone(),
                    commit: true,
                },
                KeyCode::Enter if *yes => UndoStep::Ask {
                    target: target.clone(),
                    reason: reason.clone(),
                    commit: true,
                },
                KeyCode::Enter | KeyCode::Esc | KeyCode::Char('n') => UndoStep::Close,
                _ => UndoStep::Stay,
            },
            UndoFlow::Done { .. } => UndoStep::Close,
        }
    }

    pub fn title(&self) -> String {
        match self {
            UndoFlow::Reason { target, .. } => format!("Undo {}: why?", clean(target)),
            UndoFlow::Waiting(w) => w.clone(),
            UndoFlow::Confirm { target, .. } => format!("Undo {}", clean(target)),
            UndoFlow::Done { title, .. } => title.clone(),
        }
    }

    pub fn body(&self) -> Vec<String> {
        match self {
            UndoFlow::Reason { text, .. } => vec![
                "undo restores the rows as they were before turnscope wrote them, only while they still hold what it wrote".into(),
                String::new(),
                format!("reason: {text}▏"),
                String::new(),
                "⏎ check and preview it (nothing written yet; a blank reason is allowed) · esc cancel".into(),
            ],
            UndoFlow::Waiting(w) => vec![w.clone()],
            UndoFlow::Confirm { lines, yes, .. } => {
                let mut v = lines.clone();
                v.push(String::new());
                v.push(format!(
                    "{}   {}      A applies · ←/→ choose · esc/n cancel",
                    if *yes { "[ Yes ]" } else { "  Yes  " },
                    if *yes { "  No  " } else { "[ No ]" }
                ));
                v
            }
            UndoFlow::Done { lines, .. } => {
                let mut v = lines.clone();
                v.push(String::new());
                v.push("any key closes".into());
                v
            }
        }
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        let w = area.width.saturating_sub(4).min(120);
        let body = self.body();
        let h = (body.len() as u16 + 2)
            .min(area.height.saturating_sub(2))
            .max(5);
        let rect = Rect::new(
            area.x + (area.width.saturating_sub(w)) / 2,
            area.y + (area.height.saturating_sub(h)) / 2,
            w,
            h,
        );
        f.render_widget(Clear, rect);
        let lines: Vec<Line> = body
            .into_iter()
            .map(|l| Line::from(Span::raw(clean(&l))))
            .collect();
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(Span::styled(format!(" {} ", self.title()), t.title())),
            ),
            rect,
        );
    }
}
