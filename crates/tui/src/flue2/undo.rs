//! Undo from the 2.x audit screen (`--write` only), as beta.7's audit screen and `turnscope
//! --write undo` do it: asked why (⏎ on a blank line skips it), then the store's own check and
//! preview (a transaction rolled back: the rows it restores, or why it is refused), with No
//! selected; `A` (or ⏎ on Yes) writes it in one fenced transaction with its audit record.

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use super::popup::{self, Choice, Typed};
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
            UndoFlow::Reason { target, text } => match popup::reason_key(ev.code, text) {
                Typed::Close => UndoStep::Close,
                Typed::Submit => UndoStep::Ask {
                    target: target.clone(),
                    reason: Some(text.trim().to_string()).filter(|r| !r.is_empty()),
                    commit: false,
                },
                Typed::Stay => UndoStep::Stay,
            },
            UndoFlow::Waiting(_) => UndoStep::Stay,
            UndoFlow::Confirm {
                target,
                reason,
                yes,
                ..
            } => match popup::confirm_key(ev.code, yes) {
                Choice::Apply => UndoStep::Ask {
                    target: target.clone(),
                    reason: reason.clone(),
                    commit: true,
                },
                Choice::Close => UndoStep::Close,
                Choice::Stay => UndoStep::Stay,
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
            UndoFlow::Reason { text, .. } => popup::reason_body(
                "undo restores the rows as they were before turnscope wrote them, only while they still hold what it wrote",
                text,
                "⏎ check and preview it (nothing written yet; a blank reason is allowed) · esc cancel",
            ),
            UndoFlow::Waiting(w) => vec![w.clone()],
            UndoFlow::Confirm { lines, yes, .. } => popup::confirm_body(lines, *yes),
            UndoFlow::Done { lines, .. } => popup::done_body(lines),
        }
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        popup::draw(f, t, area, &self.title(), self.body());
    }
}
