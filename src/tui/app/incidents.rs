//! The incidents screen's and the bulk marks' side of the router: `I` opens the stuck
//! submissions per worker (on the list's expired rows), ⏎ narrows the list to one worker, and
//! the marks (space on a row or a worker, `*` every row shown, `V` a range, `u` none) that the
//! write keys act on.

use super::*;
use crate::tui::screens::incidents::IncidentRows;

impl App {
    /// `I`: the incidents screen, or back to where it was opened from. It groups the expired
    /// filter's rows, so the list switches to that filter (and reads it) when it showed another.
    pub(super) fn toggle_incidents(&mut self) {
        self.stack.clear();
        self.layout.tree_offsets.clear();
        self.banner = None;
        if self.root == Root::Incidents {
            self.root = self.incidents_return;
            self.focus = root_pane(self.root);
            return;
        }
        self.incidents_return = match self.root {
            Root::Audit => Root::Submissions,
            r => r,
        };
        self.root = Root::Incidents;
        self.focus = Pane::Incidents;
        if self.list.filter != RowFilter::Expired {
            self.list.filter = RowFilter::Expired;
            self.list.selected = 0;
            self.layout.list_offset = 0;
            self.rebuild_list();
            self.request_refresh();
            self.info("incidents group the expired leases: the list shows that filter now");
        }
    }

    /// What the incidents screen draws besides its own state.
    pub fn incident_rows(&self) -> IncidentRows<'_> {
        IncidentRows {
            marks: &self.list.marks,
            ready: self.loaded && self.scale.filter == Some(RowFilter::Expired),
        }
    }

    /// ⏎ on a worker: the list of its stuck submissions (the expired filter, narrowed to it).
    pub(super) fn open_incident(&mut self) {
        let Some(g) = self.incidents.selected_group() else {
            self.info("no worker left anything stuck");
            return;
        };
        let who = g.who();
        self.list.owner = Some(g.owner_id.clone());
        self.list.query.clear();
        self.list.selected = 0;
        self.layout.list_offset = 0;
        self.root = Root::Submissions;
        self.focus = Pane::List;
        self.rebuild_list();
        self.sync_list_selection();
        self.info(&format!(
            "the stuck submissions of {} · esc shows every row of the filter again",
            clean(&who)
        ));
    }

    /// Space on a worker: the incidents screen marks its submissions in the list's marks.
    pub(super) fn mark_incident(&mut self) {
        if let Some(said) = self.incidents.toggle_group_marks(&mut self.list.marks) {
            self.info(&said);
        }
    }

    /// `*`, `V`, `u`: the list's bulk marks.
    pub(super) fn bulk_mark(&mut self, a: Action) {
        let on_list = self.focus == Pane::List && self.inspect().is_none();
        if let Some(said) = self.list.bulk_mark(a, &self.items, on_list) {
            self.info(&said);
        }
    }
}

fn clean(s: &str) -> String {
    crate::tui::text::clean(s)
}
