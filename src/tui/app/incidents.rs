//! The incidents screen's and the bulk marks' side of the router: `I` opens the stuck
//! submissions per worker (on the list's expired rows), ⏎ narrows the list to one worker, and
//! the marks (space on a row or a worker, `*` every row shown, `V` a range, `u` none) that the
//! write keys act on.

use super::*;
use crate::tui::screens::incidents::IncidentRows;
use crate::tui::screens::list::marked_in_order;

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

    /// Space on a worker: mark every submission of it, or unmark them when all are marked.
    pub(super) fn mark_incident(&mut self) {
        let Some(g) = self.incidents.selected_group() else {
            return;
        };
        let all = g.submissions.iter().all(|s| self.list.marks.contains(s));
        let (who, ids) = (g.who(), g.submissions.clone());
        for id in ids {
            if all {
                self.list.marks.remove(&id);
            } else {
                self.list.marks.insert(id);
            }
        }
        self.incidents.move_cursor(1);
        let n = self.list.marks.len();
        self.info(&format!(
            "{} {} · {n} marked · C/R/Q/F/S/E act on every marked row · u unmarks all",
            if all {
                "unmarked"
            } else {
                "marked every submission of"
            },
            clean(&who)
        ));
    }

    /// The incidents screen's targets: the marks, else every submission of the selected worker.
    pub(super) fn incident_targets(&self) -> Result<Vec<String>, &'static str> {
        if !self.list.marks.is_empty() {
            return Ok(marked_in_order(&self.items, &self.list.marks));
        }
        match self.incidents.selected_group() {
            Some(g) => Ok(g.submissions.clone()),
            None => Err("no worker left anything stuck"),
        }
    }

    /// `*`, `V`, `u`: the list's bulk marks, and what the status line says about them.
    pub(super) fn bulk_mark(&mut self, a: Action) {
        let on_list = self.focus == Pane::List && self.inspect().is_none();
        let said = match a {
            Action::MarkAll if on_list => Ok(format!(
                "marked {} more: every row shown",
                self.list.mark_all(&self.items)
            )),
            Action::MarkRange if on_list => self
                .list
                .mark_range(&self.items)
                .map(|n| format!("marked {n} more: the range up to the cursor")),
            Action::ClearMarks => {
                let n = self.list.clear_marks();
                Ok(format!("unmarked {n} row{}", if n == 1 { "" } else { "s" }))
            }
            Action::MarkAll | Action::MarkRange => {
                Err("* and V mark the list's rows: they work in the submissions list")
            }
            _ => return,
        };
        match said {
            Ok(m) => {
                let (n, hidden) = (
                    self.list.marks.len(),
                    self.list.hidden_marks(&self.items).len(),
                );
                let hidden = if hidden > 0 {
                    format!(", {hidden} hidden by the filter")
                } else {
                    String::new()
                };
                self.info(&format!("{m} · {n} marked{hidden}"));
            }
            Err(e) => self.info(e),
        }
    }
}

fn clean(s: &str) -> String {
    crate::tui::text::clean(s)
}
