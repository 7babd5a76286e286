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
}
