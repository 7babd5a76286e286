//! The pieces every popup draws with: a centred box and a button.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::theme::Theme;

pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10);
    let h = h.min(area.height.saturating_sub(2)).max(3);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub(crate) fn button(t: Theme, label: &str, selected: bool) -> Span<'static> {
    if selected {
        Span::styled(format!("[> {label} <]"), t.selected())
    } else {
        Span::styled(format!("[  {label}  ]"), Style::new())
    }
}
