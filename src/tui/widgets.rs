//! Small drawing helpers every screen and the chrome share. A leaf of the TUI.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::theme::Theme;

/// A one-line paragraph of spans.
pub(crate) fn line<'a>(spans: Vec<Span<'a>>) -> Paragraph<'a> {
    Paragraph::new(Line::from(spans))
}

/// Keep `sel` inside a window of `height` rows starting at `offset`.
/// A table's frame from its `(title, width)` columns drawn in `area`: the header row (titles
/// padded, dim bold), the column widths, and the rows' area below the header (the mouse's hit
/// area for a click on a row).
pub(crate) fn table_header(
    titles: &[(&str, usize)],
    area: Rect,
    t: &Theme,
) -> (Row<'static>, Vec<Constraint>, Rect) {
    let bold = t.dim().add_modifier(Modifier::BOLD);
    let widths = titles
        .iter()
        .map(|(_, cw)| Constraint::Length(*cw as u16))
        .collect();
    let header = Row::new(
        titles
            .iter()
            .map(|(title, cw)| Cell::from(Span::styled(super::text::pad(title, *cw), bold))),
    );
    let rows = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(1),
        ..area
    };
    (header, widths, rows)
}

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
