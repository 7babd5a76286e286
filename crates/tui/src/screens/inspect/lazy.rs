//! What an inspect view reads from the worker as it is looked at, because the tree's entries
//! are held compact and without their text: the previews of the rows on screen, and the text
//! search over the session's stored JSON.

use std::ops::Range;

use super::{Inspect, TextHits};
use crate::tree::NodeKind;
use crate::worker::FetchedPreview;
use crate::worker_error::WorkerError;
use turnscope_core::journal::entry::Entry;

impl Inspect {
    /// The text a tree row shows for message `e`: what the read kept, else the fetched body's,
    /// else the fetched preview; `None` while it has not arrived.
    pub fn preview_of(&self, e: &Entry) -> Option<String> {
        let m = e.message()?;
        if let Some(t) = m.text_if_read() {
            return Some(t);
        }
        if let Some(t) = self.body(e).message().and_then(|m| m.text_if_read()) {
            return Some(t);
        }
        match self.previews.get(&e.id) {
            Some((pos, t)) if *pos == e.position => Some(t.as_deref().unwrap_or("").to_string()),
            _ => None,
        }
    }

    /// The previews to ask the worker for the visible rows `rows` (those drawn), as
    /// `(session, [(entry id, position)])`; each asked once while it is kept.
    pub fn take_preview_requests(
        &mut self,
        rows: Range<usize>,
    ) -> Option<(String, Vec<(String, i64)>)> {
        let session = self.session_key()?;
        let h = self.history()?;
        let mut want = Vec::new();
        for &node in self
            .visible
            .get(rows.start..rows.end.min(self.visible.len()))?
        {
            let shown = match self.tree.nodes[node].kind {
                NodeKind::Entry { entry } => Some(entry),
                NodeKind::Call { result, .. } => result,
                _ => None,
            };
            let Some(e) = shown.and_then(|i| h.entries.get(i as usize)) else {
                continue;
            };
            if self.preview_of(e).is_none()
                && e.message().is_some()
                && !self.previews.was_asked(&e.id)
            {
                want.push((e.id.to_string(), e.position));
            }
        }
        for (id, _) in &want {
            self.previews.ask(id.clone());
        }
        (!want.is_empty()).then_some((session, want))
    }

    /// Previews arrived for `session`; `true` when this view keeps them (its rows redraw).
    pub fn on_previews(
        &mut self,
        session: &str,
        result: &Result<Vec<FetchedPreview>, WorkerError>,
    ) -> bool {
        if self.session_key().as_deref() != Some(session) {
            return false;
        }
        match result {
            Ok(got) => {
                for (id, position, text) in got {
                    self.previews.keep(id.clone(), (*position, text.clone()));
                }
                true
            }
            // Asked again after the next read of what is open (`rebuild`), not on the next
            // frame: a database that went away would be asked every frame.
            Err(_) => false,
        }
    }

    /// Where the entries of what is open are: the same address is the same read (a refresh
    /// that found nothing changed hands back the same entries; a new read is allocated while
    /// the one it replaces is still held, so it never has the old one's address).
    pub(super) fn entries_address(&self) -> Option<usize> {
        self.history().map(|h| h.entries.as_ptr() as usize)
    }

    /// Whether any entry of what is open is held without its text (then the text search is
    /// the worker's).
    fn holds_compact(&self) -> bool {
        self.history()
            .is_some_and(|h| h.entries.iter().any(|e| e.compact))
    }

    /// Ask the worker to search the session's stored JSON for the query, when what is open
    /// holds entries without their text.
    pub(super) fn ask_text_search(&mut self) {
        self.search.text_of = self.entries_address();
        let q = &self.search.query;
        self.search.want_text = (!q.is_empty() && self.holds_compact()).then(|| q.clone());
        if self.search.want_text.is_none() {
            self.search.asked_text = None;
        }
    }

    /// The worker is still to answer a text search of the stored JSON (asked, or about to be).
    pub fn text_search_pending(&self) -> bool {
        self.search.want_text.is_some() || self.search.asked_text.is_some()
    }

    /// The text search to send to the worker now, as `(session, needle)`.
    pub fn take_search_request(&mut self) -> Option<(String, String)> {
        let needle = self.search.want_text.take()?;
        let session = self.session_key()?;
        self.search.asked_text = Some(needle.clone());
        Some((session, needle))
    }

    /// The tree's hits for the query: what the tree holds, and the worker's text hits when they
    /// are for this query.
    pub(super) fn recompute_hits(&mut self) {
        let text = self
            .search
            .text
            .as_ref()
            .filter(|t| t.needle == self.search.query)
            .map(|t| &t.positions);
        self.search.hits = self.tree.search(self.history(), &self.search.query, text);
    }

    /// The worker's text search arrived. `true` when it is this view's current query (the hits
    /// changed); the cursor stays on the current hit if there is one.
    pub fn on_search_text(
        &mut self,
        session: &str,
        needle: &str,
        result: Result<Vec<i64>, WorkerError>,
    ) -> Result<bool, WorkerError> {
        if self.session_key().as_deref() != Some(session) || self.search.query != needle {
            return Ok(false);
        }
        if self.search.asked_text.as_deref() == Some(needle) {
            self.search.asked_text = None;
        }
        let positions = result?;
        let current = self
            .search
            .current
            .and_then(|c| self.search.hits.get(c).copied());
        self.search.text = Some(TextHits {
            needle: needle.to_string(),
            positions: positions.into_iter().collect(),
        });
        self.recompute_hits();
        self.search.current =
            current.and_then(|node| self.search.hits.iter().position(|&h| h == node));
        Ok(true)
    }
}
