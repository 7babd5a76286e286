//! `/` in a 2.x submission's detail: the lines holding a text (an id a customer gave, a tool's
//! name, a phrase of an assistant's text), as drawn, case aside; `⏎` goes to the first at or
//! below the top row, `n` and `N` to the next and the previous (round the end). Found again
//! when a refresh brings a new document, so the rows stay the document's. The keys are the
//! history tree's (`/`, `n`, `N`), beta.7's search of a session's entries.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::detail::{self, DetailSearch};
use super::Flue2App;
use crate::keymap::{self, Action, Ctx};
use crate::text::clean;

impl Flue2App {
    /// A key of the opened detail's search; whether it took it.
    pub(super) fn detail_search_key(&mut self, ev: &KeyEvent) -> bool {
        let Some(d) = self.detail.as_mut() else {
            return false;
        };
        if let Some(s) = d.search.as_mut().filter(|s| s.typing) {
            match ev.code {
                KeyCode::Enter => {
                    s.typing = false;
                    if s.query.is_empty() {
                        d.search = None;
                        self.status = None;
                    } else {
                        self.find_in_detail();
                    }
                }
                KeyCode::Esc => {
                    d.search = None;
                    self.status = None;
                }
                KeyCode::Backspace => {
                    s.query.pop();
                    self.status = Some(format!("/{}▏", clean(&s.query)));
                }
                KeyCode::Char(c) if !ev.modifiers.contains(KeyModifiers::CONTROL) => {
                    s.query.push(c);
                    self.status = Some(format!("/{}▏", clean(&s.query)));
                }
                _ => {}
            }
            return true;
        }
        match keymap::lookup_with(&[Ctx::Tree], ev, false, &self.cfg.keys) {
            Some(Action::Search) => {
                d.search = Some(DetailSearch {
                    typing: true,
                    ..DetailSearch::default()
                });
                self.status = Some("/▏  (⏎ find · esc cancel)".into());
                true
            }
            Some(a @ (Action::SearchNext | Action::SearchPrev)) => {
                match d.search.as_mut().filter(|s| !s.hits.is_empty()) {
                    Some(s) => {
                        let n = s.hits.len();
                        s.at = if a == Action::SearchNext {
                            (s.at + 1) % n
                        } else {
                            (s.at + n - 1) % n
                        };
                        d.scroll = s.hits[s.at];
                        self.status = Some(s.found());
                    }
                    None => self.status = Some("nothing found to go to: / finds a text".into()),
                }
                true
            }
            _ => false,
        }
    }

    /// Find the search's text in the opened document, and go to the first line holding it at or
    /// below the top row (else the first of all).
    fn find_in_detail(&mut self) {
        let (t, now) = (self.cfg.theme, self.now_ms);
        let Some(d) = self.detail.as_mut() else {
            return;
        };
        let Some(s) = d.search.as_mut() else {
            return;
        };
        let Some(doc) = d.doc.as_ref() else {
            self.status = Some("the detail is still being read: / again once it is drawn".into());
            d.search = None;
            return;
        };
        s.hits = detail::find(doc, t, now, d.width, &s.query);
        if s.hits.is_empty() {
            self.status = Some(format!(
                "no line of this detail holds “{}”",
                clean(&s.query)
            ));
            return;
        }
        s.at = s.hits.iter().position(|r| *r >= d.scroll).unwrap_or(0);
        d.scroll = s.hits[s.at];
        self.status = Some(s.found());
    }

    /// A new document for the opened detail: its search found again in it, staying at the
    /// hit it was at where there still is one.
    pub(super) fn refind_in_detail(&mut self) {
        let (t, now) = (self.cfg.theme, self.now_ms);
        let Some(d) = self.detail.as_mut() else {
            return;
        };
        let (Some(doc), Some(s)) = (d.doc.as_ref(), d.search.as_mut()) else {
            return;
        };
        if s.typing || s.query.is_empty() {
            return;
        }
        s.hits = detail::find(doc, t, now, d.width, &s.query);
        s.at = s.at.min(s.hits.len().saturating_sub(1));
    }
}
