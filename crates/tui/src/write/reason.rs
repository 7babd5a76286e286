//! The reason of a write: a one-line text input before every action (and undo), recorded in the
//! audit trail. ⏎ plans the action with the reason; `fail` requires one (a blank one is refused
//! in place), the others take a blank as "no reason given". esc cancels, ^u erases.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::popups::env::Reply;
use crate::popups::widgets::centered;
use crate::text::{char_width, clean};
use crate::theme::Theme;
use crate::write::popup_text;
use turnscope_engine::actions::ActionKind;

#[derive(Debug, Clone, PartialEq)]
pub struct Reason {
    pub kind: ActionKind,
    pub ids: Vec<String>,
    pub text: String,
    pub error: Option<String>,
    /// Set when the reason is for an undo (`kind` and `ids` unused then).
    pub undo: Option<turnscope_store::UndoTarget>,
}

impl Reason {
    pub fn new(kind: ActionKind, ids: Vec<String>) -> Reason {
        Reason {
            kind,
            ids,
            text: String::new(),
            error: None,
            undo: None,
        }
    }

    /// The reason of an undo (optional).
    pub fn for_undo(target: turnscope_store::UndoTarget) -> Reason {
        Reason {
            undo: Some(target),
            ..Reason::new(ActionKind::Repair, Vec::new())
        }
    }

    /// Whether a blank reason is refused: `fail` gives up on a submission for good.
    pub fn required(&self) -> bool {
        self.undo.is_none() && self.kind == ActionKind::Fail
    }

    pub fn on_key(&mut self, ev: &KeyEvent) -> Reply {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Esc => return Reply::CloseWith("cancelled: nothing written".into()),
            KeyCode::Enter => {
                let reason = self.text.trim().to_string();
                if reason.is_empty() && self.required() {
                    self.error = Some("a reason is required to fail a submission".into());
                    return Reply::Stay;
                }
                let reason = (!reason.is_empty()).then_some(reason);
                if let Some(target) = &self.undo {
                    return Reply::PlanUndo {
                        target: target.clone(),
                        reason,
                    };
                }
                return Reply::Plan {
                    kind: self.kind,
                    ids: self.ids.clone(),
                    reason,
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
        let what = if let Some(t) = &self.undo {
            t.to_string()
        } else if self.ids.len() == 1 {
            clean(&turnscope_core::journal::submission_rows::short_id(
                &self.ids[0],
            ))
        } else {
            format!("{} marked submissions", self.ids.len())
        };
        let title_word = if self.undo.is_some() {
            "Undo"
        } else {
            popup_text::title_word(self.kind)
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Double)
            .border_style(t.partial())
            .title(Span::styled(
                format!(" {title_word} {what}: why? "),
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
                if self.required() {
                    " A reason is required; it is recorded in the audit trail."
                } else {
                    " Why? Recorded in the audit trail (⏎ on a blank line: no reason given)."
                },
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
