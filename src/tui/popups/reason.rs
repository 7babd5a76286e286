//! The reason of a `fail`: a one-line text input. ⏎ plans the fail with the reason (a blank one
//! is refused in place), esc cancels, ^u erases.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::{centered, Reply};
use crate::actions::ActionKind;
use crate::tui::act;
use crate::tui::text::{char_width, clean};
use crate::tui::theme::Theme;

#[derive(Debug, Clone, PartialEq)]
pub struct Reason {
    pub kind: ActionKind,
    pub ids: Vec<String>,
    pub text: String,
    pub error: Option<String>,
}

impl Reason {
    pub fn new(kind: ActionKind, ids: Vec<String>) -> Reason {
        Reason {
            kind,
            ids,
            text: String::new(),
            error: None,
        }
    }

    pub fn on_key(&mut self, ev: &KeyEvent) -> Reply {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Esc => return Reply::CloseWith("cancelled: nothing written".into()),
            KeyCode::Enter => {
                let reason = self.text.trim().to_string();
                if reason.is_empty() {
                    self.error = Some("a reason is required to fail a submission".into());
                    return Reply::Stay;
                }
                return Reply::Plan {
                    kind: self.kind,
                    ids: self.ids.clone(),
                    reason: Some(reason),
                };
            }
            KeyCode::Backspace => {
                self.text.pop();
                self.error = None;
            }
            KeyCode::Char('u') if ctrl => self.text.clear(),
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if self.text.chars().count() < 500 {
                    self.text.push(c);
                }
                self.error = None;
            }
            _ => {}
        }
        Reply::Stay
    }

    pub fn render(&self, f: &mut Frame, area: Rect, t: Theme) {
        let r = centered(area, 80, 8);
        let what = if self.ids.len() == 1 {
            clean(&crate::core::rows::short_id(&self.ids[0]))
        } else {
            format!("{} marked submissions", self.ids.len())
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Double)
            .border_style(t.partial())
            .title(Span::styled(
                format!(" {} {what}: why? ", act::title_word(self.kind)),
                t.title(),
            ));
        let inner = block.inner(r);
        f.render_widget(Clear, r);
        f.render_widget(block, r);
        let room = (inner.width as usize).saturating_sub(4);
        // Show the end of a long reason: that is where the operator types.
        let shown: String = {
            let chars: Vec<char> = clean(&self.text).chars().collect();
            let mut w = 0;
            let mut start = chars.len();
            while start > 0 && w + char_width(chars[start - 1]) <= room.saturating_sub(1) {
                start -= 1;
                w += char_width(chars[start]);
            }
            chars[start..].iter().collect()
        };
        let mut lines = vec![
            Line::from(Span::styled(
                " A reason is required; it is recorded in the audit trail.",
                t.dim(),
            )),
            Line::default(),
            Line::from(vec![
                Span::styled(" > ", t.key()),
                Span::raw(shown),
                Span::styled("▏", t.key()),
            ]),
        ];
        lines.push(match &self.error {
            Some(e) => Line::from(Span::styled(format!(" ✗ {}", clean(e)), t.error())),
            None => Line::default(),
        });
        lines.push(Line::from(vec![
            Span::styled(" ⏎", t.key()),
            Span::styled(" preview the writes", t.dim()),
            Span::styled("   esc", t.key()),
            Span::styled(" cancel", t.dim()),
        ]));
        f.render_widget(Paragraph::new(lines), inner);
    }
}
