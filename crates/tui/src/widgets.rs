//! Small drawing helpers every screen and the chrome share. A leaf of the TUI.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::theme::Theme;

/// A one-line paragraph of spans.
pub(crate) fn line<'a>(spans: Vec<Span<'a>>) -> Paragraph<'a> {
    Paragraph::new(Line::from(spans))
}

/// `area` split into a table on top and a strip of `strip` rows under it (the selected row's
/// preview or detail); with a strip of 0 the table has the whole area.
pub(crate) fn table_and_strip(area: Rect, strip: u16) -> (Rect, Rect) {
    let [table, below] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(strip)]).areas(area);
    (table, below)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strip_sits_under_the_table_and_together_they_fill_the_area() {
        for height in 0..40u16 {
            let area = Rect::new(3, 2, 50, height);
            let strip = if height >= 14 { 6 } else { 0 };
            let (table, below) = table_and_strip(area, strip);
            assert_eq!(
                table,
                Rect {
                    height: height - strip,
                    ..area
                },
                "height {height}"
            );
            assert_eq!((below.y, below.height), (area.y + table.height, strip));
            assert_eq!((below.x, below.width), (area.x, area.width));
        }
    }
}
