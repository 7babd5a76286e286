//! The app's side of the list at production scale (the state is `list_state.rs`): status
//! counts, snapshots and verdict batches from the worker, flashes and the "changed under you"
//! banner, and the opened submission's siblings.

use super::*;
use crate::messages::VerdictBatch;

impl App {
    /// Rows of filter `f` in the database; `None` while not known yet (the failed count is
    /// computed in the background).
    pub fn count_known(&self, f: RowFilter) -> Option<usize> {
        let status = |s: SubmissionStatus| {
            self.counts
                .iter()
                .filter(|(k, _)| *k == s)
                .map(|(_, n)| (*n).max(0) as usize)
                .sum::<usize>()
        };
        if f != RowFilter::Expired && !self.scale.counts_known {
            return None;
        }
        match f {
            RowFilter::Expired => Some(self.scale.expired),
            RowFilter::All => Some(self.counts.iter().map(|(_, n)| (*n).max(0) as usize).sum()),
            RowFilter::Failed => self.scale.failed,
            status_filter => status_filter.status().map(status),
        }
    }

    /// The id prefix the list's query names for a lookup in the whole journal.
    pub(crate) fn wanted_id_lookup(&self) -> Option<String> {
        crate::list_query::parse(&self.list.query)
            .ok()
            .and_then(|q| q.id_lookup())
            .filter(|p| p.chars().count() >= crate::listing::ID_LOOKUP_MIN)
    }

    /// What a query on the list searched, when that is not every row of the filter: `None`
    /// when the whole filter is loaded (or no query is set).
    pub fn searched_label(&self) -> Option<String> {
        let total = self.scale.list_total?;
        if self.list.query.is_empty() {
            return None;
        }
        let page = crate::listing::PAGE.min(total);
        let mut text = format!(
            "searched: the newest {} of {}",
            turnscope_core::text::thousands(page as u64),
            turnscope_core::text::thousands(total as u64)
        );
        match (self.wanted_id_lookup(), &self.scale.id_lookup) {
            (Some(want), Some((done, n))) if &want == done => {
                text.push_str(&format!(" + every id {want}… ({n} more)"));
            }
            (Some(want), _) => {
                text.push_str(&format!(" · searching every id {want}…"));
            }
            (None, _) => text.push_str(" (id: searches every row)"),
        }
        Some(text)
    }

    /// A count as shown: `…` while it is being computed.
    pub fn count_label(&self, f: RowFilter) -> String {
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
    pub(crate) fn visible_ids(&self) -> Vec<String> {
        let height = self.layout.list.map_or(40, |l| l.rows.height as usize);
        self.list
            .visible_ids(&self.items, height, self.layout.list_offset)
    }

    /// After a key: if rows on screen still wait for their verdicts, have them computed next.
    pub(crate) fn prioritize_visible(&mut self) {
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
    pub(crate) fn on_verdicts(&mut self, batch: VerdictBatch) {
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
                        // A banner about this row that is up counts from what it saw first.
                        let up = self.banner.as_ref().and(self.banner_base.as_ref());
                        if let Some((c, base)) = ListScreen::verdict_changed(up, base, &it) {
                            self.banner = Some(c);
                            self.banner_base = Some(base);
                        }
                    }
                }
            }
            self.items[i] = it;
        }
        self.rebuild_list();
    }

    /// On the first load, once the counts are in: an empty expired list is worth a word.
    pub(crate) fn greet(&mut self) {
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
    pub(crate) fn want_siblings(&mut self, key: &str) {
        self.effects
            .push(Effect::Request(Request::Siblings(key.to_string())));
    }

    /// `(sequence, id)` of every submission of session `key`: from the worker when it has
    /// answered, else from the loaded rows.
    pub(crate) fn session_submissions(&self, key: &str) -> Vec<(i64, String)> {
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
