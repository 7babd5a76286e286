//! The screens under the popups: the submissions list, the sessions list, the audit trail, the
//! incidents (stuck submissions per worker), and
//! an opened submission or session. Each holds its own state and answers the actions of its
//! pane; the app routes keys to the focused one and carries out what it asks for.

pub mod audit;
pub mod incidents;
pub mod inspect;
pub mod list;
pub mod sessions;

use crate::tui::data::{ListItem, Target};
use crate::tui::keymap::Action;
use crate::tui::popups::Popup;
use crate::tui::view_state::InputMode;

/// A cursor at `cur` in `len` rows moved by `delta`, kept on a row.
pub fn step(cur: usize, len: usize, delta: isize) -> usize {
    if len == 0 {
        return 0;
    }
    (cur as isize)
        .saturating_add(delta)
        .clamp(0, len as isize - 1) as usize
}

/// What a screen asks the router to carry out after it handled an action: the router owns the
/// root view, the focus, the popup slot, the status line and the worker's requests, so a screen
/// answers with these instead of reaching into the app.
#[derive(Debug)]
pub enum Ask {
    /// Say this on the status line.
    Info(String),
    /// Say this on the status line as an error.
    Error(String),
    /// Open this submission or session on top of the screen.
    Open(Target),
    /// The list's filter changed: back to its top, rebuild it and read the new filter's rows.
    Reread,
    /// The list's rows shown changed (query, narrowing): rebuild the list and the incidents.
    Rebuild,
    /// The incidents screen narrowed the list to one worker: show the list.
    ShowList,
    /// Take typed text (`/` filter, tree search).
    Input(InputMode),
    /// Give the tree the keyboard.
    FocusTree,
    /// Leave this root view for the one it was opened from (esc on the audit trail, incidents).
    Leave,
    /// Open this popup.
    Show(Popup),
}

/// What the submissions-backed screens handle an action with besides their own state: the
/// app's loaded rows and the clock, the page size of the focused pane, the mode.
pub struct ScreenCx<'a> {
    pub items: &'a [ListItem],
    pub now_ms: i64,
    /// Rows in a page of the focused pane (PageUp / PageDown).
    pub page: usize,
    pub write_mode: bool,
}

/// How far a navigation action moves a cursor with `page` rows a page (`None`: not one).
pub fn nav_delta(a: Action, page: usize) -> Option<isize> {
    Some(match a {
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -(page as isize),
        Action::PageDown => page as isize,
        Action::Top => isize::MIN / 2,
        Action::Bottom => isize::MAX / 2,
        _ => return None,
    })
}

/// Answer a message when there is one.
pub fn say(msg: Option<String>) -> Vec<Ask> {
    msg.map(Ask::Info).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::audit::AuditScreen;
    use super::incidents::IncidentScreen;
    use super::list::ListScreen;
    use super::sessions::SessionsScreen;
    use super::*;
    use crate::store::RowFilter;

    fn cx() -> ScreenCx<'static> {
        ScreenCx {
            items: &[],
            now_ms: 0,
            page: 10,
            write_mode: true,
        }
    }

    #[test]
    fn a_filter_key_resets_the_cursor_and_asks_for_the_filters_rows() {
        let mut list = ListScreen {
            selected: 4,
            ..ListScreen::default()
        };
        let asks = list.handle(Action::Filter(RowFilter::Failed), &cx(), true);
        assert_eq!(list.filter, RowFilter::Failed);
        assert_eq!(list.selected, 0);
        assert!(matches!(asks.as_slice(), [Ask::Reread]));
    }

    #[test]
    fn esc_on_the_list_peels_the_query_then_the_workers_narrowing_then_nothing() {
        let mut list = ListScreen::default();
        list.narrow_to(Some("worker-1".into()));
        list.query = "running".into();
        let first = list.handle(Action::Back, &cx(), true);
        assert!(matches!(first.as_slice(), [Ask::Rebuild]));
        assert!(list.query.is_empty());
        let second = list.handle(Action::Back, &cx(), true);
        assert!(
            matches!(second.as_slice(), [Ask::Rebuild, Ask::Info(m)] if m.contains("narrowing is off"))
        );
        assert!(list.owner.is_none());
        assert!(list.handle(Action::Back, &cx(), true).is_empty());
    }

    #[test]
    fn the_audit_trail_leaves_on_esc_and_refuses_an_undo_without_a_record() {
        let mut audit = AuditScreen::default();
        assert!(matches!(
            audit.handle(Action::Back, 10).as_slice(),
            [Ask::Leave]
        ));
        let asks = audit.handle(Action::Undo { batch: false }, 10);
        assert!(matches!(asks.as_slice(), [Ask::Info(m)] if m == "select an audit record first"));
    }

    #[test]
    fn slash_on_the_sessions_takes_text_and_enter_without_rows_opens_nothing() {
        let mut sessions = SessionsScreen::default();
        let asks = sessions.handle(Action::StartFilter, 10);
        assert!(matches!(asks.as_slice(), [Ask::Input(InputMode::Filter)]));
        assert!(sessions.handle(Action::Enter, 10).is_empty());
    }

    #[test]
    fn enter_on_an_empty_incidents_screen_says_so_and_leaves_the_list_as_it_was() {
        let mut incidents = IncidentScreen::default();
        let mut list = ListScreen::default();
        let asks = incidents.handle(Action::Enter, 10, &mut list, true);
        assert!(matches!(asks.as_slice(), [Ask::Info(m)] if m == "no worker left anything stuck"));
        assert!(list.owner.is_none());
        assert!(matches!(
            incidents
                .handle(Action::Back, 10, &mut list, true)
                .as_slice(),
            [Ask::Leave]
        ));
    }
}
