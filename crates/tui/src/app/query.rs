//! What the app answers about itself, for the views, the run loop and the test harness: its
//! fields stay private to the router, so the screens' state can move without touching either.

use super::popup_slot::contexts_of;
use super::*;
use crate::screens::inspect::Inspect;

impl App {
    // ----- what the views draw from --------------------------------------------------------

    pub fn inspect(&self) -> Option<&Inspect> {
        self.stack.last()
    }

    pub(super) fn inspect_mut(&mut self) -> Option<&mut Inspect> {
        self.stack.last_mut()
    }

    pub fn selected_item(&self) -> Option<&ListItem> {
        self.list.selected_item(&self.items)
    }

    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.sessions.selected_session()
    }

    /// Rows of filter `f` in the database (the counts come from SQL, not from the loaded rows).
    pub fn count(&self, f: RowFilter) -> usize {
        self.count_known(f).unwrap_or(0)
    }

    pub fn is_flashing(&self, id: &str) -> bool {
        self.flashes
            .get(id)
            .is_some_and(|&until| self.ui_now < until)
    }

    /// The contexts keys are looked up in, innermost first.
    pub fn contexts(&self) -> Vec<Ctx> {
        if self.popup.is_some() {
            return vec![Ctx::Popup];
        }
        contexts_of(self.focus)
    }

    /// `--write` mode: the write actions exist.
    pub fn write_mode(&self) -> bool {
        !self.cfg.read_only
    }

    /// What the screens draw with besides their own state.
    pub fn draw_ctx(&self) -> DrawCtx {
        DrawCtx {
            theme: self.cfg.theme,
            now_ms: self.now_ms,
            focus: self.focus,
            write_mode: self.write_mode(),
            loaded: self.loaded,
            sessions_loaded: self.scale.sessions_loaded,
        }
    }

    /// What the list screen draws from the app's loaded rows.
    pub fn list_rows(&self) -> ListRows<'_> {
        ListRows {
            items: &self.items,
            flashes: &self.flashes,
            ui_now: self.ui_now,
            total: self.count(RowFilter::All),
            searched: self.searched_label(),
            acted: &self.runtime_acted,
        }
    }

    /// What the incidents screen draws besides its own state.
    pub fn incident_rows(&self) -> IncidentRows<'_> {
        IncidentRows {
            marks: &self.list.marks,
            ready: self.loaded && self.scale.filter == Some(RowFilter::Expired),
        }
    }

    pub fn selected_audit(&self) -> Option<&AuditRecord> {
        self.audit.selected_record()
    }

    // ----- what the run loop and the tests read --------------------------------------------

    /// The effects asked for since the last call, to carry out (worker requests, clipboard).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// Take only the effects `pick` chooses; the others stay in order.
    pub fn take_effects_where(&mut self, pick: impl Fn(&Effect) -> bool) -> Vec<Effect> {
        let (taken, kept) = std::mem::take(&mut self.effects)
            .into_iter()
            .partition(|e| pick(e));
        self.effects = kept;
        taken
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
