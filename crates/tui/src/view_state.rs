//! The view state: which screen and pane are shown, what drawing writes and the keys and the
//! mouse read back. A leaf: the app, the screens and the frame composer (`app/draw.rs`) all use
//! it.

use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::theme::Theme;

use crate::popups::PopupView;

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
/// The screens draw from their own state plus a [`DrawCtx`], and write this.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub list: Option<Hit>,
    pub sessions: Option<Hit>,
    pub audit: Option<Hit>,
    pub incidents: Option<Hit>,
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
    pub incidents_offset: usize,
    /// The tree's first drawn row, one per opened view (the app's stack).
    pub tree_offsets: Vec<usize>,
    /// The detail pane's wrapped lines (built once per selection and width).
    pub detail_cache: Option<DetailCache>,
}

impl Layout {
    /// A new frame: forget the last frame's areas and bounds, keep the offsets and the cache.
    pub fn new_frame(&mut self) {
        self.list = None;
        self.sessions = None;
        self.audit = None;
        self.incidents = None;
        self.tree = None;
        self.detail = None;
        self.detail_lines = 0;
        self.popup = PopupView::default();
    }

    /// Where pane `pane` was drawn last (`None`: not drawn).
    pub fn hit(&self, pane: Pane) -> Option<Hit> {
        match pane {
            Pane::List => self.list,
            Pane::Sessions => self.sessions,
            Pane::Tree => self.tree,
            Pane::Detail => self.detail,
            Pane::Audit => self.audit,
            Pane::Incidents => self.incidents,
        }
    }

    /// The pane drawn under column `x`, row `y` (the mouse's target); the opened view's panes
    /// first, as they are drawn over the list.
    pub fn pane_at(&self, x: u16, y: u16) -> Option<Pane> {
        [
            Pane::Detail,
            Pane::Tree,
            Pane::List,
            Pane::Sessions,
            Pane::Audit,
            Pane::Incidents,
        ]
        .into_iter()
        .find(|&p| self.hit(p).is_some_and(|h| h.area.contains((x, y).into())))
    }

    /// The innermost opened view's tree offset.
    pub fn tree_offset(&self) -> usize {
        self.tree_offsets.last().copied().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    List,
    Sessions,
    Tree,
    Detail,
    Audit,
    Incidents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Submissions,
    Sessions,
    /// The audit trail (`a`).
    Audit,
    /// The stuck submissions per worker (`I`).
    Incidents,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
    /// A refresh the operator asked for (`r`) is running: its answer replaces the line with how
    /// long it took.
    Refreshing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub level: Level,
}

/// Text being typed into the list filter or the tree search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    Filter,
    Search,
}

/// Wrapped lines of the detail pane for one (selection, width, clock) state.
#[derive(Debug, Clone, Default)]
pub struct DetailCache {
    pub(crate) key: (usize, u64, u16, i64),
    pub(crate) lines: Vec<Line<'static>>,
}

/// What a screen needs from the app to draw itself besides its own state: the app builds it
/// once per frame, so the screens never read the app.
#[derive(Debug, Clone, Copy)]
pub struct DrawCtx {
    pub theme: Theme,
    /// "Now" of the frame (ages and lease countdowns).
    pub now_ms: i64,
    pub focus: Pane,
    /// `--write` mode.
    pub write_mode: bool,
    /// The first snapshot of the list arrived.
    pub loaded: bool,
    /// The first page of sessions arrived.
    pub sessions_loaded: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(x: u16, y: u16, w: u16, h: u16) -> Option<Hit> {
        let area = Rect::new(x, y, w, h);
        Some(Hit { area, rows: area })
    }

    #[test]
    fn the_mouse_targets_the_opened_view_over_the_list_and_nothing_outside_the_panes() {
        let layout = Layout {
            list: hit(0, 0, 80, 20),
            tree: hit(0, 0, 40, 20),
            detail: hit(40, 0, 40, 20),
            ..Layout::default()
        };
        assert_eq!(layout.pane_at(10, 5), Some(Pane::Tree));
        assert_eq!(layout.pane_at(50, 5), Some(Pane::Detail));
        assert_eq!(layout.pane_at(10, 30), None);
        let list_only = Layout {
            list: hit(0, 0, 80, 20),
            ..Layout::default()
        };
        assert_eq!(list_only.pane_at(10, 5), Some(Pane::List));
        assert!(list_only.hit(Pane::Audit).is_none());
    }
}
