//! The screens under the popups: the submissions list, the sessions list, the audit trail, the
//! incidents (stuck submissions per worker), and
//! an opened submission or session. Each holds its own state and answers the actions of its
//! pane; the app routes keys to the focused one and carries out what it asks for.

pub mod audit;
pub mod incidents;
pub mod inspect;
pub mod list;
pub mod sessions;

use crate::keymap::Action;
use crate::messages::{ListItem, Target};
use crate::popups::Popup;
use crate::view_state::InputMode;

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
mod tests;
