//! Small drawing helpers every screen and the chrome share. A leaf of the TUI.

use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A one-line paragraph of spans.
pub(crate) fn line<'a>(spans: Vec<Span<'a>>) -> Paragraph<'a> {
    Paragraph::new(Line::from(spans))
}

/// Keep `sel` inside a window of `height` rows starting at `offset`.
pub(crate) fn scroll_into_view(offset: &mut usize, sel: usize, height: usize) {
    if height == 0 {
        return;
    }
    if sel < *offset {
        *offset = sel;
    } else if sel >= *offset + height {
        *offset = sel + 1 - height;
    }
}
