//! A popup's body line with its tone: the code that writes a line says what it means (a refusal,
//! a result, the next write), and the popup styles it by that, never by reading the text back.
//! A leaf under `popups/`: the worker's previews and results (`act.rs`, `worker_undo.rs`) are
//! written as these lines too.

use ratatui::style::{Modifier, Style};

use crate::theme::Theme;
use turnscope_core::recovery::changes::PreviewPart;

/// What a popup line means, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Normal,
    /// A section's head: `runtime plan:`, `afterwards:`, `what changed:`, …
    Heading,
    /// A row a write touches (`insert entry …`, `update …`, `delete …`).
    Row,
    /// A value a write replaces.
    Removed,
    /// A value a write puts in its place.
    Added,
    /// The next write of the runtime's plan.
    Next,
    /// Nothing written, and what to do instead.
    Warning,
    /// A refusal or an error.
    Refused,
    /// A write that was applied.
    Applied,
}

impl Tone {
    pub fn style(self, t: Theme) -> Style {
        match self {
            Tone::Normal => Style::new(),
            Tone::Heading => t.title(),
            Tone::Row => Style::new().add_modifier(Modifier::BOLD),
            Tone::Removed | Tone::Refused => t.error().remove_modifier(Modifier::BOLD),
            Tone::Added | Tone::Applied => t.ok(),
            Tone::Next => t.key(),
            Tone::Warning => t.warn(),
        }
    }
}

impl From<PreviewPart> for Tone {
    fn from(p: PreviewPart) -> Tone {
        match p {
            PreviewPart::Row => Tone::Row,
            PreviewPart::Old => Tone::Removed,
            PreviewPart::New => Tone::Added,
            PreviewPart::Value => Tone::Normal,
        }
    }
}

/// One line of a popup's body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PopupLine {
    pub tone: Tone,
    pub text: String,
}

impl PopupLine {
    pub fn new(tone: Tone, text: impl Into<String>) -> PopupLine {
        PopupLine {
            tone,
            text: text.into(),
        }
    }

    /// An empty line between sections.
    pub fn blank() -> PopupLine {
        PopupLine::default()
    }
}

/// A line without a tone.
impl From<String> for PopupLine {
    fn from(text: String) -> PopupLine {
        PopupLine::new(Tone::Normal, text)
    }
}

impl From<&str> for PopupLine {
    fn from(text: &str) -> PopupLine {
        PopupLine::new(Tone::Normal, text)
    }
}

/// The lines' text, one per line (what tests and the status line read).
pub fn text_of(lines: &[PopupLine]) -> Vec<&str> {
    lines.iter().map(|l| l.text.as_str()).collect()
}
