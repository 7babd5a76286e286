//! What the opened view reads from the worker as it is looked at (its entries are held compact
//! and without their text): the bodies the detail pane shows, the previews of the tree rows on
//! screen, and the text search.

use super::*;

impl App {
    /// Ask the worker for the bodies the detail pane is about to show, and for a text search
    /// the query asks for (after each key and each answer).
    pub(super) fn request_reads(&mut self) {
        let Some(ins) = self.stack.last_mut() else {
            return;
        };
        for (session, entry_id) in ins.take_body_requests() {
            self.effects
                .push(Effect::Request(Request::EntryBody { session, entry_id }));
        }
        if let Some((session, needle)) = ins.take_search_request() {
            self.effects
                .push(Effect::Request(Request::SearchText { session, needle }));
        }
    }

    /// Ask for the previews of the tree rows the last frame drew (after each frame; each is
    /// asked once while the view keeps it).
    pub(super) fn request_previews(&mut self) {
        let Some(hit) = self.layout.tree else {
            return;
        };
        let offset = self.layout.tree_offset();
        let rows = offset..offset + hit.rows.height as usize;
        let Some(ins) = self.stack.last_mut() else {
            return;
        };
        if let Some((session, entries)) = ins.take_preview_requests(rows) {
            self.effects
                .push(Effect::Request(Request::Previews { session, entries }));
        }
    }

    /// Ask for the health of the sessions screen's rows the last frame drew (after each frame;
    /// each is asked once while its `updatedAt` stays).
    pub(super) fn request_health(&mut self) {
        let Some(hit) = self.layout.sessions else {
            return;
        };
        let offset = self.layout.sessions_offset;
        let keys = self
            .sessions
            .take_health_requests(offset..offset + hit.rows.height as usize);
        if !keys.is_empty() {
            self.effects
                .push(Effect::Request(Request::SessionHealth(keys)));
        }
    }

    /// The worker's text search arrived: the hits change; with none chosen yet (nothing the tree
    /// holds matched), the cursor goes to the first at or after it, as typing does.
    pub(super) fn on_search_text(
        &mut self,
        session: &str,
        needle: &str,
        result: Result<Vec<i64>, WorkerError>,
    ) {
        let Some(ins) = self.inspect_mut() else {
            return;
        };
        match ins.on_search_text(session, needle, result) {
            // Nothing chosen yet: go to the first hit, or say now that nothing matched.
            Ok(true) if ins.search.current.is_none() => self.search_step(true, true),
            Ok(_) => {}
            Err(e) => self.error(&format!("search failed: {}", e.line())),
        }
    }
}
