//! The list at production scale: the app holds only the rows of the current filter (the newest
//! page of a big one), the counts come from SQL, running rows' verdicts arrive in background
//! batches after the first frame (visible rows first), and the sessions are read when their view
//! opens. This is the app's side of it; `listing.rs` and `verdicts.rs` are the worker's.

use std::collections::{HashMap, HashSet};

use super::app::{App, Effect, Level, Root, Status, FLASH};
use super::data::{ListItem, Snapshot, VerdictBatch};
use super::keymap::StatusFilter;
use super::screens::list::describe_item_change;
use super::worker::Request;

#[derive(Debug, Clone, Default)]
pub struct ScaleState {
    /// The filter the loaded rows were read for.
    pub filter: Option<StatusFilter>,
    /// The filter's total when only its newest page is loaded.
    pub list_total: Option<usize>,
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

impl App {
    /// Rows of filter `f` in the database; `None` while not known yet (the failed count is
    /// computed in the background).
    pub fn count_known(&self, f: StatusFilter) -> Option<usize> {
        let status = |s: &str| {
            self.counts
                .iter()
                .filter(|(k, _)| k == s)
                .map(|(_, n)| (*n).max(0) as usize)
                .sum::<usize>()
        };
        if f != StatusFilter::Expired && !self.scale.counts_known {
            return None;
        }
        match f {
            StatusFilter::Expired => Some(self.scale.expired),
            StatusFilter::All => Some(self.counts.iter().map(|(_, n)| (*n).max(0) as usize).sum()),
            StatusFilter::Queued => Some(status("queued")),
            StatusFilter::Running => Some(status("running")),
            StatusFilter::Terminalizing => Some(status("terminalizing")),
            StatusFilter::Settled => Some(status("settled")),
            StatusFilter::Failed => self.scale.failed,
        }
    }

    /// A count as shown: `…` while it is being computed.
    pub fn count_label(&self, f: StatusFilter) -> String {
        self.count_known(f)
            .map_or_else(|| "…".to_string(), |n| n.to_string())
    }

    /// The progress of the background verdicts, while rows wait for theirs (re-checking cached
    /// verdicts against their fingerprints is not shown).
    pub fn progress_label(&self) -> Option<String> {
        let waiting = self.scale.remaining > 0 && self.items.iter().any(|i| i.pending);
        (waiting && self.scale.total > 0).then(|| {
            format!(
                "verdicts {}/{}",
                self.scale.total - self.scale.remaining,
                self.scale.total
            )
        })
    }

    /// The ids of the rows on screen (the selected one first), for visible-first verdicts.
    pub(super) fn visible_ids(&self) -> Vec<String> {
        let h = self
            .layout
            .list
            .map_or(40, |l| l.rows.height as usize)
            .max(1);
        // Where the next draw puts the viewport (as the list view scrolls the selection into it).
        let (sel, mut start) = (self.list.selected, self.layout.list_offset);
        if sel < start {
            start = sel;
        } else if sel >= start + h {
            start = sel + 1 - h;
        }
        let end = (start + h).min(self.list.view.len());
        let mut ids: Vec<String> = self
            .list
            .view
            .get(start.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|&i| self.items[i].row.submission_id.clone())
            .collect();
        if let Some(p) = self
            .list
            .selected_id
            .as_ref()
            .and_then(|s| ids.iter().position(|i| i == s))
        {
            let sel = ids.remove(p);
            ids.insert(0, sel);
        }
        ids
    }

    /// After a key: if rows on screen still wait for their verdicts, have them computed next.
    pub(super) fn prioritize_visible(&mut self) {
        if self.scale.remaining == 0 || self.root != Root::Submissions || !self.stack.is_empty() {
            return;
        }
        let ids: Vec<String> = self
            .visible_ids()
            .into_iter()
            .filter(|id| {
                self.items
                    .iter()
                    .any(|i| &i.row.submission_id == id && i.pending)
            })
            .collect();
        if ids.is_empty() || ids == self.scale.prioritized {
            return;
        }
        self.scale.prioritized = ids.clone();
        self.effects.push(Effect::Request(Request::Prioritize(ids)));
    }

    /// Background verdicts arrived: replace the placeholders (or the previous verdicts), flash
    /// rows whose verdict changed, and say so when it is the selected row.
    pub(super) fn on_verdicts(&mut self, batch: VerdictBatch) {
        self.scale.remaining = batch.remaining;
        self.scale.total = self.scale.total.max(batch.total);
        if let Some(n) = batch.failed {
            self.scale.failed = Some(n);
        }
        if let Some(c) = batch.counts {
            self.counts = c;
            self.scale.counts_known = true;
            self.greet();
        }
        if batch.items.is_empty() {
            return;
        }
        let index: HashMap<String, usize> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| (it.row.submission_id.clone(), i))
            .collect();
        let selected = self.list.selected_id.clone();
        let until = self.ui_now + FLASH;
        for it in batch.items {
            let Some(&i) = index.get(&it.row.submission_id) else {
                continue;
            };
            let id = it.row.submission_id.clone();
            // What the operator saw before: the verdict shown before the refresh, or the row as
            // it is (a cached verdict that its fingerprint proved stale).
            let base = self.scale.pending_base.remove(&id).or_else(|| {
                let cur = &self.items[i];
                (!cur.pending && !self.scale.own_recent.contains(&id)).then(|| cur.clone())
            });
            if let Some(base) = base {
                if base.signature() != it.signature() {
                    self.flashes.insert(id.clone(), until);
                    if self.stack.is_empty() && selected.as_deref() == Some(id.as_str()) {
                        if let Some(c) = describe_item_change(&base, &it) {
                            self.banner = Some(c);
                        }
                    }
                }
            }
            self.items[i] = it;
        }
        self.rebuild_list();
    }

    /// On the first load, once the counts are in: an empty expired list is worth a word.
    pub(super) fn greet(&mut self) {
        if !self.scale.greet || !self.scale.counts_known {
            return;
        }
        self.scale.greet = false;
        if self.list.view.is_empty() && self.counts.iter().any(|(_, n)| *n > 0) {
            self.status = Some(Status {
                text: "no expired lease: nothing for the reconciler to pick up (2 shows all)"
                    .into(),
                level: Level::Info,
            });
        }
    }

    /// Ask for the submissions of the opened submission's session (stepping between them).
    pub(super) fn want_siblings(&mut self, key: &str) {
        self.effects
            .push(Effect::Request(Request::Siblings(key.to_string())));
    }

    /// `(sequence, id)` of every submission of session `key`: from the worker when it has
    /// answered, else from the loaded rows.
    pub(super) fn session_submissions(&self, key: &str) -> Vec<(i64, String)> {
        if let Some((k, ids)) = &self.scale.siblings {
            if k == key {
                return ids.clone();
            }
        }
        let mut subs: Vec<(i64, String)> = self
            .items
            .iter()
            .filter(|i| i.row.session_key == key)
            .map(|i| (i.row.sequence, i.row.submission_id.clone()))
            .collect();
        subs.sort();
        subs
    }
}
