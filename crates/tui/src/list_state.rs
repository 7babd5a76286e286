//! The list at production scale: the app holds only the rows of the current filter (the newest
//! page of a big one), the counts come from SQL, running rows' verdicts arrive in background
//! batches after the first frame (visible rows first), and the sessions are read when their view
//! opens. This is the state the app keeps for it (`app/scale.rs` updates it from the worker's
//! answers); `listing.rs` and `verdicts.rs` are the worker's side.

use std::collections::{HashMap, HashSet};

use super::messages::{ListItem, Snapshot};
use turnscope_store::RowFilter;

#[derive(Debug, Clone, Default)]
pub struct ScaleState {
    /// The filter the loaded rows were read for.
    pub filter: Option<RowFilter>,
    /// The filter's total when only its newest page is loaded.
    pub list_total: Option<usize>,
    /// The id prefix the last refresh looked up in the whole journal, and the rows beyond the
    /// page it added.
    pub id_lookup: Option<(String, usize)>,
    pub expired: usize,
    /// `None` until the worker has counted them (a recount keeps showing the last count).
    pub failed: Option<usize>,
    /// Verdicts still being computed, of `total` queued by the last refresh.
    pub remaining: usize,
    pub total: usize,
    pub sessions_loaded: bool,
    /// The status counts have been read at least once.
    pub counts_known: bool,
    /// The first load's message is still to be said (when the counts are in).
    pub greet: bool,
    /// `(sequence, id)` of the opened submission's session.
    pub siblings: Option<(String, Vec<(i64, String)>)>,
    /// Rows shown with their previous verdict while it is re-computed: that verdict, to tell
    /// what changed (flash, banner) when the new one arrives.
    pub pending_base: HashMap<String, ListItem>,
    /// Rows this app wrote to before the last refresh: their re-read verdicts are ours.
    pub own_recent: HashSet<String>,
    /// The ids last sent to be computed first.
    pub prioritized: Vec<String>,
}

impl ScaleState {
    /// Rows of a refresh of the same filter that are being re-computed keep their previous
    /// verdict on screen (with the new row) instead of a bare placeholder.
    pub fn merge_pending(
        &mut self,
        old: &[ListItem],
        new: &mut [ListItem],
        own_writes: &HashSet<String>,
    ) {
        if !new.iter().any(|i| i.pending) {
            return;
        }
        let by_id: HashMap<&str, &ListItem> = old
            .iter()
            .map(|i| (i.row.submission_id.as_str(), i))
            .collect();
        for it in new.iter_mut().filter(|i| i.pending) {
            let id = it.row.submission_id.as_str();
            let Some(prev) = by_id.get(id) else { continue };
            if prev.verdict == "…" {
                continue;
            }
            if !prev.pending && !own_writes.contains(id) {
                self.pending_base.insert(id.to_string(), (*prev).clone());
            }
            let mut stale = (*prev).clone();
            stale.row = it.row.clone();
            stale.journal = it.journal.clone();
            stale.pending = true;
            *it = stale;
        }
    }

    pub fn on_snapshot(&mut self, snap: &Snapshot) {
        self.filter = Some(snap.filter);
        self.list_total = snap.list_total;
        self.id_lookup = snap.id_lookup.clone();
        self.expired = snap.expired;
        self.remaining = snap.pending;
        self.total = snap.pending;
        self.prioritized.clear();
        let pending: HashSet<&str> = snap
            .items
            .iter()
            .filter(|i| i.pending)
            .map(|i| i.row.submission_id.as_str())
            .collect();
        self.pending_base
            .retain(|id, _| pending.contains(id.as_str()));
    }
}
