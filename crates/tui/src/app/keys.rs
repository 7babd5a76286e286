//! The keyboard: a key becomes an [`Action`] in the contexts of the focused pane (or the open
//! popup) and goes to [`App::dispatch`]; typed text (`/` filter, tree search) goes to the screen
//! it filters.

use super::*;

impl App {
    pub fn on_key(&mut self, ev: KeyEvent) {
        self.on_key_inner(ev);
        self.request_reads();
    }

    pub(super) fn on_key_inner(&mut self, ev: KeyEvent) {
        if let Some(mode) = self.input {
            self.on_input_key(mode, ev);
            return;
        }
        // Ctrl-C quits from anywhere, popups included.
        if ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        // A bulk's count is typed into its confirm dialog before any key is looked up.
        if let Some(Popup::Confirm(c)) = &mut self.popup {
            if c.on_count_key(ev.code) {
                return;
            }
        }
        if matches!(
            self.popup,
            Some(Popup::Reason(_) | Popup::Palette(_) | Popup::ExportPath(_))
        ) {
            // They read text: every key is theirs.
            if let Some(reply) = self.with_popup(|p, env, view| p.on_key(&ev, env, view)) {
                self.on_popup_reply(reply);
            }
            return;
        }
        let ctxs = self.contexts();
        if let Some(a) = keymap::lookup_with(&ctxs, &ev, self.write_mode(), &self.cfg.keys) {
            self.dispatch(a);
            return;
        }
        // A write key in read-only mode: dispatch says why nothing happens.
        if let Some(a) = keymap::lookup_with(&ctxs, &ev, true, &self.cfg.keys)
            .filter(|a| !self.write_mode() && keymap::is_write(*a))
        {
            self.dispatch(a);
            return;
        }
        if self.popup.is_none() {
            if let Some((key, help, pane)) =
                keymap::bound_elsewhere(&ctxs, &ev, self.write_mode(), &self.cfg.keys)
            {
                self.info(&format!("{key} ({help}) works in: {pane}"));
            }
        }
    }

    pub(super) fn on_input_key(&mut self, mode: InputMode, ev: KeyEvent) {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let fresh = std::mem::take(&mut self.input_fresh);
        match ev.code {
            KeyCode::Char('c') if ctrl => self.quit = true,
            KeyCode::Esc => {
                self.input = None;
                self.set_query(mode, String::new());
            }
            KeyCode::Enter => {
                self.input = None;
                if mode == InputMode::Search {
                    self.search_step(true, true);
                }
            }
            KeyCode::Backspace => {
                let mut q = self.query(mode);
                q.pop();
                self.set_query(mode, q);
            }
            KeyCode::Char('u') if ctrl => self.set_query(mode, String::new()),
            KeyCode::Char(c) if !ctrl => {
                // On a kept query, typing starts a new one (as a search box with its text
                // selected); Backspace first, to edit the kept one.
                let mut q = if fresh {
                    String::new()
                } else {
                    self.query(mode)
                };
                q.push(c);
                self.set_query(mode, q);
            }
            _ => {}
        }
    }

    /// The typed text of `mode`: the focused list's `/` query, or the tree's search.
    pub(super) fn query(&self, mode: InputMode) -> String {
        match mode {
            InputMode::Filter if self.focus == Pane::Sessions => self.sessions.query.clone(),
            InputMode::Filter if self.focus == Pane::Audit => self.audit.query.clone(),
            InputMode::Filter => self.list.query.clone(),
            InputMode::Search => self
                .inspect()
                .map(|i| i.search.query.clone())
                .unwrap_or_default(),
        }
    }

    /// Ask the worker to search the database for the sessions screen's query.
    pub(super) fn request_find(
        &mut self,
        find: Option<(String, u64, std::sync::Arc<std::sync::atomic::AtomicBool>)>,
    ) {
        if let Some((query, generation, cancel)) = find {
            self.effects.push(Effect::Request(Request::FindSessions {
                query,
                generation,
                cancel,
            }));
        }
    }

    /// The screen that takes the text filters (or searches) with it.
    pub(super) fn set_query(&mut self, mode: InputMode, q: String) {
        match mode {
            InputMode::Filter if self.focus == Pane::Sessions => {
                let find = self.sessions.set_query(q);
                self.request_find(find);
            }
            InputMode::Filter if self.focus == Pane::Audit => self.audit.set_query(q),
            InputMode::Filter => {
                self.list.query = q;
                // The incidents group the list's rows: both are rebuilt.
                self.rebuild_list();
                // Only a page of the filter is loaded: an id the query now names is looked up
                // in the whole journal by the next refresh, asked for now.
                if self.scale.list_total.is_some()
                    && self.wanted_id_lookup().as_deref()
                        != self.scale.id_lookup.as_ref().map(|(p, _)| p.as_str())
                    && !self.refresh_pending
                {
                    self.request_refresh();
                }
            }
            InputMode::Search => {
                if let Some(ins) = self.inspect_mut() {
                    ins.set_search(q);
                }
                // Incremental: jump to the first hit at or after the cursor as the text grows.
                self.search_step(true, true);
            }
        }
    }
}
