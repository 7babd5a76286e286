//! Small drawing helpers every screen and the chrome share. A leaf of the TUI.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{HighlightSpacing, Paragraph, Table, TableState};
use ratatui::Frame;

use super::theme::Theme;

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

/// Draw a table of rows where the selected row (if any) is highlighted across the whole width,
/// with the cursor in front: the audit and sessions screens.
pub(crate) fn render_selectable(
    f: &mut Frame,
    area: Rect,
    table: Table<'_>,
    t: &Theme,
    focused: bool,
    offset: usize,
    selected: Option<usize>,
) {
    let table = table
        .column_spacing(1)
        .row_highlight_style(if focused {
            t.selected()
        } else {
            t.selected_unfocused()
        })
        .highlight_symbol("›")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::new()
        .with_offset(offset)
        .with_selected(selected);
    f.render_stateful_widget(table, area, &mut state);
}
