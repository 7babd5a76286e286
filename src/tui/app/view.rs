//! The view state: what drawing writes and the keys and the mouse read back.

use ratatui::layout::Rect;

use crate::tui::popups::PopupView;

/// Screen rectangles from the last draw, for the mouse and for paging.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hit {
    /// The pane's whole area.
    pub area: Rect,
    /// Where its first row is drawn and how many rows fit.
    pub rows: Rect,
}

/// What drawing writes and the keys and the mouse read back: the hit areas of the last frame,
/// the scroll offsets that keep each pane's selection in view, the detail pane's wrapped lines.
/// The screens draw from their own state (`&App`) plus this.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub list: Option<Hit>,
    pub sessions: Option<Hit>,
    pub audit: Option<Hit>,
    pub tree: Option<Hit>,
    pub detail: Option<Hit>,
    /// Total wrapped lines in the detail pane (for scroll bounds).
    pub detail_lines: usize,
    /// The detail pane's last page start as last drawn (its scroll is clamped to it).
    pub detail_max_scroll: Option<usize>,
    /// The open popup's scroll bounds.
    pub popup: PopupView,
    /// The first drawn row of each list-like pane.
    pub list_offset: usize,
    pub sessions_offset: usize,
    pub audit_offset: usize,
    /// The tree's first drawn row, one per opened view (the app's stack).
    pub tree_offsets: Vec<usize>,
    /// The detail pane's wrapped lines (built once per selection and width).
    pub detail_cache: Option<crate::tui::views::DetailCache>,
}

impl Layout {
    /// A new frame: forget the last frame's areas and bounds, keep the offsets and the cache.
    pub fn new_frame(&mut self) {
        self.list = None;
        self.sessions = None;
        self.audit = None;
        self.tree = None;
        self.detail = None;
        self.detail_lines = 0;
        self.popup = PopupView::default();
    }

    /// The innermost opened view's tree offset.
    pub fn tree_offset(&self) -> usize {
        self.tree_offsets.last().copied().unwrap_or(0)
    }
}
