//! Moving around: paging, back, panes and roots, the cursor, opening and expanding, search and
//! stepping between submissions. Split from the router (`mod.rs`) so that it stays a router.

use super::*;
use crate::screens::inspect::Said;

impl App {
    pub(super) fn page(&self) -> usize {
        let hit = self.layout.hit(self.focus);
        hit.map_or(10, |h| h.rows.height.max(2) as usize - 1)
    }

    /// Esc with a view opened: back to the one under it, or to the root screen.
    pub(super) fn close_inspect(&mut self) {
        if self.stack.pop().is_some() {
            self.layout.tree_offsets.truncate(self.stack.len());
            self.focus = match (self.stack.is_empty(), self.root) {
                (false, _) => Pane::Tree,
                (true, root) => root_pane(root),
            };
        }
    }

    /// A popup open that scrolls with the cursor keys.
    pub(super) fn popup_scrolls(&self) -> bool {
        matches!(
            self.popup,
            Some(Popup::Help(_) | Popup::Confirm(_) | Popup::Palette(_))
        )
    }

    pub(super) fn cycle_pane(&mut self) {
        if self.inspect().is_some() {
            self.focus = if self.focus == Pane::Tree {
                Pane::Detail
            } else {
                Pane::Tree
            };
        }
    }

    pub(super) fn toggle_root(&mut self) {
        self.stack.clear();
        self.layout.tree_offsets.clear();
        self.banner = None;
        self.root = match self.root {
            Root::Submissions | Root::Audit | Root::Incidents => Root::Sessions,
            Root::Sessions => Root::Submissions,
        };
        self.focus = root_pane(self.root);
        if self.root == Root::Sessions {
            // Sessions are read when their view opens, not before.
            self.request_refresh();
        }
    }

    /// `f`, from any screen: the sessions screen, its filter cleared and asking for a key, an
    /// instance, an id or text (what `/` there matches).
    pub(super) fn find_session(&mut self) {
        self.stack.clear();
        self.layout.tree_offsets.clear();
        self.banner = None;
        let was = self.root;
        self.root = Root::Sessions;
        self.focus = Pane::Sessions;
        let find = self.sessions.set_query(String::new());
        self.request_find(find);
        self.input = Some(InputMode::Filter);
        if was != Root::Sessions {
            // Sessions are read when their view opens, not before.
            self.request_refresh();
        }
    }

    /// `a`: the audit trail, or back to where it was opened from.
    pub(super) fn toggle_audit(&mut self) {
        self.stack.clear();
        self.layout.tree_offsets.clear();
        self.banner = None;
        if self.root == Root::Audit {
            self.root = self.audit_return;
        } else {
            self.audit_return = self.root;
            self.root = Root::Audit;
            self.effects.push(Effect::Request(Request::Audit));
        }
        self.focus = root_pane(self.root);
    }

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
        if self.list.show_expired() {
            self.carry_out(vec![
                Ask::Reread,
                Ask::Info(
                    "incidents group the expired leases: the list shows that filter now".into(),
                ),
            ]);
        }
    }

    pub(super) fn move_by(&mut self, delta: isize) {
        if self.popup_scrolls() {
            self.with_popup(|p, env, view| p.scroll_by(delta, env, view));
            return;
        }
        match self.focus {
            Pane::List => self.list.move_cursor(delta, &self.items),
            Pane::Sessions => self.sessions.move_cursor(delta),
            Pane::Audit => self.audit.move_cursor(delta),
            Pane::Incidents => self.incidents.move_cursor(delta),
            Pane::Tree => {
                if let Some(ins) = self.inspect_mut() {
                    ins.move_cursor(delta);
                }
            }
            Pane::Detail => {
                // The first key after a draw starts from what it showed (see `scroll_detail`).
                let (lines, shown) = (
                    self.layout.detail_lines,
                    self.layout.detail_max_scroll.take(),
                );
                if let Some(ins) = self.inspect_mut() {
                    ins.scroll_detail(delta, lines, shown);
                }
            }
        }
    }

    pub(super) fn open(&mut self, target: Target) {
        self.stack.push(Inspect::new(target.clone()));
        self.layout.tree_offsets.resize(self.stack.len() - 1, 0);
        self.layout.tree_offsets.push(0);
        self.focus = Pane::Tree;
        self.banner = None;
        self.effects.push(Effect::Request(Request::Open {
            target,
            now_ms: self.now_ms,
        }));
    }

    /// ⏎ (or a double click) on the focused screen.
    pub(super) fn enter(&mut self) {
        let asks = self.route_to_screen(Action::Enter);
        self.carry_out(asks);
    }

    /// l on the opened view (or a click on a fold mark).
    pub(super) fn expand(&mut self) {
        let asks = self.route_to_screen(Action::Expand);
        self.carry_out(asks);
    }

    /// What the inspect screen said after an action, and whether its tree takes the keyboard.
    pub(super) fn hear(&mut self, said: Option<Said>, focus_tree: bool) {
        if focus_tree {
            self.focus = Pane::Tree;
        }
        match said {
            Some(Said::Info(m)) => self.info(&m),
            Some(Said::Error(m)) => self.error(&m),
            None => {}
        }
    }

    pub(super) fn search_step(&mut self, forward: bool, from_cursor: bool) {
        if let Some(said) = self
            .inspect_mut()
            .map(|i| i.search_step(forward, from_cursor))
        {
            self.hear(said, false);
        }
    }

    pub(super) fn step_submission(&mut self, delta: isize) {
        let Some(ins) = self.inspect() else { return };
        match &ins.data {
            Some(Opened::Submission(s)) => {
                let key = s.report.row().session_key.clone();
                let id = s.report.row().submission_id.clone();
                let subs = self.session_submissions(&key);
                let Some(pos) = subs.iter().position(|(_, i)| *i == id) else {
                    return;
                };
                let next = pos as isize + delta;
                if next < 0 || next >= subs.len() as isize {
                    self.info(&format!(
                        "no {} submission in this session ({} in all)",
                        if delta < 0 { "earlier" } else { "later" },
                        subs.len()
                    ));
                    return;
                }
                let target = Target::Submission(subs[next as usize].1.clone());
                let n = subs.len();
                if let Some(top) = self.stack.last_mut() {
                    *top = Inspect::new(target.clone());
                    if let Some(off) = self.layout.tree_offsets.last_mut() {
                        *off = 0;
                    }
                }
                self.banner = None;
                self.effects.push(Effect::Request(Request::Open {
                    target,
                    now_ms: self.now_ms,
                }));
                self.info(&format!("submission {} of {n} in this session", next + 1));
            }
            Some(Opened::Session(_)) => {
                if let Some((said, focus)) = self.inspect_mut().map(|i| i.step_input(delta)) {
                    self.hear(said, focus);
                }
            }
            None => {}
        }
    }
}
