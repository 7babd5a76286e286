//! How the 2.x app opens, feeds and leaves its sessions, incidents and audit screens
//! (`screens.rs`) and the undo flow (`undo.rs`): the keys that reach them, the worker's answers,
//! and the list narrowed to an instance's or a worker's submissions.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::list::{Narrow, View};
use super::screens::{Out, Screen, TextSearch};
use super::screens_messages::{ScreenRequest, ScreenResponse, TextState};
use super::undo::{UndoFlow, UndoStep};
use super::{Flue2App, Flue2Request};
use crate::keymap::{self, Action, Ctx};
use crate::text::clean;

impl Flue2App {
    /// A key for the undo flow, a screen, or one of the keys that open a screen; `true` when it
    /// was taken.
    pub(super) fn screen_key(&mut self, ev: KeyEvent) -> bool {
        if let Some(flow) = self.undo.as_mut() {
            match flow.on_key(ev) {
                UndoStep::Stay => {}
                UndoStep::Close => {
                    if matches!(flow, UndoFlow::Confirm { .. } | UndoFlow::Reason { .. }) {
                        self.status = Some("declined: nothing written".into());
                    }
                    self.undo = None;
                }
                UndoStep::Ask {
                    target,
                    reason,
                    commit,
                } => {
                    self.undo = Some(UndoFlow::Waiting(format!(
                        "{} undo {}…",
                        if commit { "applying" } else { "checking" },
                        clean(&target)
                    )));
                    self.requests
                        .push(Flue2Request::Screen(ScreenRequest::Undo {
                            target,
                            operator: self.cfg.operator.clone(),
                            reason,
                            commit,
                        }));
                }
            }
            return true;
        }
        if self.detail.is_some() {
            return false;
        }
        if let Some(s) = self.screen.as_mut() {
            if s.typing() {
                let out = s.type_key(ev.code);
                self.screen_out(out);
                return true;
            }
        }
        if ev.modifiers.contains(KeyModifiers::CONTROL) && self.screen.is_none() {
            return false;
        }
        let ctxs: Vec<Ctx> = match &self.screen {
            Some(s) => vec![s.ctx(), Ctx::Nav, Ctx::Global],
            None => vec![Ctx::List, Ctx::Nav, Ctx::Global],
        };
        // The write keys of a screen (the audit trail's undo) only in write mode.
        let action = keymap::lookup_with(&ctxs, &ev, self.cfg.write, &self.cfg.keys);
        // The incidents screen's write keys (write mode only): the marks, else the worker's
        // submissions.
        if let (true, Some(Screen::Incidents { .. }), KeyCode::Char(c), false) = (
            self.cfg.write,
            &self.screen,
            ev.code,
            ev.modifiers.contains(KeyModifiers::CONTROL),
        ) {
            if let Some(ask) = super::write::ask_of(c) {
                self.start_write(ask);
                return true;
            }
        }
        let Some(a) = action else {
            return self.screen.is_some();
        };
        let toggle = |app: &mut Flue2App, want: Screen| {
            let same = app.screen.as_ref().is_some_and(|s| s.name() == want.name());
            if same {
                app.screen = None;
            } else {
                app.open_screen(want);
            }
        };
        match a {
            Action::ToggleSessions => toggle(self, Screen::sessions(false)),
            Action::FindSession => self.open_screen(Screen::sessions(true)),
            Action::ToggleIncidents => toggle(self, Screen::incidents()),
            Action::ToggleAudit => toggle(self, Screen::audit()),
            Action::Quit | Action::Help | Action::Refresh => return false,
            // Bound in write mode only: the lookup above gives them nothing else.
            Action::ToggleMark if matches!(self.screen, Some(Screen::Incidents { .. })) => {
                self.toggle_group_marks()
            }
            Action::ClearMarks if matches!(self.screen, Some(Screen::Incidents { .. })) => {
                self.clear_marks()
            }
            _ if self.screen.is_none() => return false,
            a => {
                self.status = None;
                let out = self.screen.as_mut().map_or(Out::Nothing, |s| s.act(a));
                self.screen_out(out);
                // The rows the cursor brought into view.
                self.ask_health();
            }
        }
        true
    }

    /// Ask the worker for the health of the sessions rows in view not asked yet.
    fn ask_health(&mut self) {
        let streams = self
            .screen
            .as_mut()
            .map(Screen::take_health_asks)
            .unwrap_or_default();
        if !streams.is_empty() {
            self.requests
                .push(Flue2Request::Screen(ScreenRequest::Health {
                    streams,
                    now_ms: self.now_ms,
                }));
        }
    }

    fn open_screen(&mut self, s: Screen) {
        self.stop_search();
        self.status = None;
        self.requests
            .push(Flue2Request::Screen(s.read(self.now_ms)));
        self.screen = Some(s);
    }

    /// The screen's read again (every --refresh, `r`): the incidents and the audit trail; the
    /// sessions' search only when asked (a text search reads every record).
    pub(super) fn refresh_screen(&mut self) {
        if let Some(s) = &self.screen {
            if !matches!(s, Screen::Sessions { .. }) {
                self.requests
                    .push(Flue2Request::Screen(s.read(self.now_ms)));
            }
        }
    }

    fn screen_out(&mut self, out: Out) {
        match out {
            Out::Nothing => {}
            Out::Close => {
                self.stop_search();
                self.screen = None;
            }
            Out::Ask(r) => self.requests.push(Flue2Request::Screen(r)),
            Out::Narrow { label, ids, view } => self.narrow(label, ids, view),
            Out::Open(id) => self.open_id(id),
            Out::Undo(target) => {
                if self.cfg.write {
                    self.undo = Some(UndoFlow::Reason {
                        target,
                        text: String::new(),
                    });
                }
            }
            Out::Status(s) => self.status = Some(s),
            Out::Copy(s) => {
                self.status = Some(format!("copied {s}"));
                self.copies.push(s);
            }
        }
    }

    /// The sessions screen's text search stopped, where it leaves (it would go on reading every
    /// record for a screen no longer shown).
    fn stop_search(&mut self) {
        if let Some(Screen::Sessions {
            text:
                Some(
                    t @ TextSearch {
                        state: TextState::Running,
                        ..
                    },
                ),
            ..
        }) = self.screen.as_mut()
        {
            t.state = TextState::Stopped;
            self.requests
                .push(Flue2Request::Screen(ScreenRequest::StopSearch));
        }
    }

    /// The list in `view`, showing only `ids` (esc there widens it again).
    fn narrow(&mut self, label: String, ids: Vec<String>, view: View) {
        self.stop_search();
        self.screen = None;
        let changed = self.list.view != view;
        self.list.view = view;
        self.list.query.clear();
        self.list.narrow = Some(Narrow { label, ids });
        self.list.select_id(None, self.now_ms);
        if changed {
            self.requests.push(Flue2Request::List {
                now_ms: self.now_ms,
                view,
            });
        }
    }

    pub(super) fn on_screen_response(&mut self, r: ScreenResponse) {
        match r {
            ScreenResponse::Sessions {
                query,
                result,
                text,
            } => {
                if let Some(Screen::Sessions {
                    asked,
                    rows,
                    text: searching,
                    ..
                }) = self.screen.as_mut()
                {
                    if asked.clone().unwrap_or_default() == query {
                        *rows = Some(result);
                        *searching = text.then(TextSearch::default);
                    }
                }
                self.ask_health();
            }
            ScreenResponse::SessionsText {
                query,
                found,
                searched,
                total,
                state,
            } => {
                if let Some(s) = self.screen.as_mut() {
                    s.on_text(&query, found, searched, total, state);
                }
                self.ask_health();
            }
            ScreenResponse::InstanceRows { stream, result } => match result {
                Ok(ids) => self.narrow(format!("instance {}", clean(&stream)), ids, View::All),
                Err(e) => self.status = Some(e.line()),
            },
            ScreenResponse::Health(answers) => {
                if let Some(s) = self.screen.as_mut() {
                    s.on_health(answers);
                }
            }
            ScreenResponse::Incidents(result) => {
                if let Some(Screen::Incidents { doc, .. }) = self.screen.as_mut() {
                    *doc = Some(result);
                }
            }
            ScreenResponse::Audit(result) => {
                if let Some(Screen::Audit { records, .. }) = self.screen.as_mut() {
                    *records = Some(result);
                }
            }
            ScreenResponse::Undo {
                target,
                reason,
                commit,
                result,
            } => {
                self.undo = Some(match (commit, result) {
                    (false, Ok(lines)) => UndoFlow::Confirm {
                        target,
                        reason,
                        lines,
                        yes: false,
                    },
                    (true, Ok(lines)) => UndoFlow::Done {
                        title: format!("Undo {} applied", clean(&target)),
                        lines,
                    },
                    (_, Err(why)) => UndoFlow::Done {
                        title: format!("Undo {} not applied", clean(&target)),
                        lines: vec![why],
                    },
                });
                if commit {
                    self.request_refresh();
                }
            }
        }
    }

    // ----- what tests ask -------------------------------------------------------------------

    /// The screen open over the list (`Sessions`, `Incidents`, `Audit trail`).
    pub fn screen_name(&self) -> Option<&'static str> {
        self.screen.as_ref().map(Screen::name)
    }

    /// The rows the open screen shows, as the CLI's `--json` holds them.
    pub fn screen_rows(&self) -> Vec<serde_json::Value> {
        self.screen.as_ref().map(Screen::rows).unwrap_or_default()
    }

    /// The sessions screen's HEALTH cells, by stream path, as drawn.
    pub fn health_cells(&self) -> Vec<(String, String)> {
        self.screen
            .as_ref()
            .map(Screen::health_cells)
            .unwrap_or_default()
    }

    /// The undo popup's title and text.
    pub fn undo_popup(&self) -> Option<(String, Vec<String>)> {
        self.undo.as_ref().map(|u| (u.title(), u.body()))
    }

    /// What the list is narrowed to.
    pub fn narrowed(&self) -> Option<(&str, &[String])> {
        self.list
            .narrow
            .as_ref()
            .map(|n| (n.label.as_str(), n.ids.as_slice()))
    }
}
