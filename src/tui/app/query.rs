//! What the app answers about itself, for the run loop and the test harness: its fields stay
//! private to the router, so the screens' state can move without touching either.

use super::*;
use crate::tui::screens::inspect::Inspect;

impl App {
    /// The effects asked for since the last call, to carry out (worker requests, clipboard).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// No effect is waiting to be carried out.
    pub fn idle(&self) -> bool {
        self.effects.is_empty()
    }

    /// The operator asked to quit (`q`, Ctrl-C).
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// The time the views are relative to (the pinned clock, when set).
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// The root view (submissions, sessions, audit trail, incidents).
    pub fn root(&self) -> Root {
        self.root
    }

    /// The pane that has the keyboard.
    pub fn focus(&self) -> Pane {
        self.focus
    }

    pub fn popup(&self) -> Option<&Popup> {
        self.popup.as_ref()
    }

    /// The submissions list screen (its view, cursor, query and marks).
    pub fn list(&self) -> &ListScreen {
        &self.list
    }

    /// Every loaded row of the current filter, in the worker's order.
    pub fn items(&self) -> &[ListItem] {
        &self.items
    }

    /// The list's rows as shown (filtered, searched and sorted).
    pub fn shown_items(&self) -> Vec<&ListItem> {
        self.list.view.iter().map(|&i| &self.items[i]).collect()
    }

    /// Marked rows the list does not show (another filter, the `/` query, a worker's narrowing).
    pub fn hidden_marks(&self) -> Vec<String> {
        self.list.hidden_marks(&self.items)
    }

    pub fn sessions(&self) -> &SessionsScreen {
        &self.sessions
    }

    pub fn audit(&self) -> &AuditScreen {
        &self.audit
    }

    pub fn incidents(&self) -> &IncidentScreen {
        &self.incidents
    }

    /// The opened views, the innermost last.
    pub fn stack(&self) -> &[Inspect] {
        &self.stack
    }

    /// The innermost opened view, to change (the harness's loading-line timings).
    pub fn inspect_top_mut(&mut self) -> Option<&mut Inspect> {
        self.stack.last_mut()
    }

    /// What the last draw laid out (hit areas, offsets).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The status line's text.
    pub fn status_text(&self) -> Option<String> {
        self.status.as_ref().map(|s| s.text.clone())
    }

    /// The "changed under you" banner.
    pub fn banner(&self) -> Option<&str> {
        self.banner.as_deref()
    }

    /// The last database error (shown in the status line).
    pub fn db_error(&self) -> Option<&WorkerError> {
        self.db_error.as_ref()
    }
}
