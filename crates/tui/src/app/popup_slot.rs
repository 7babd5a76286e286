//! The popup slot: opening a popup, handing it the keys with what it needs from the app
//! ([`Env`]), carrying out its [`Reply`], drawing it.

use super::*;

impl App {
    /// Open `p` in the popup slot (its scroll bounds are its own, from its first draw).
    pub(super) fn show(&mut self, p: Popup) {
        self.popup = Some(p);
        self.layout.popup = PopupView::default();
    }

    /// Carry out what the open popup asked for.
    pub(super) fn on_popup_reply(&mut self, reply: Reply) {
        match reply {
            Reply::Stay => {}
            Reply::StayWith(msg) => self.info(&msg),
            Reply::Close => self.popup = None,
            Reply::CloseWith(msg) => {
                self.popup = None;
                self.info(&msg);
            }
            Reply::Run(a) => {
                self.popup = None;
                self.dispatch(a);
            }
            Reply::Apply { kind, items } if Confirm::needs_side_effect_ack(&items) => {
                self.show(Popup::Confirm(Confirm::for_side_effects(kind, items)));
            }
            Reply::Apply { kind, items } => {
                self.popup = None;
                self.request_apply(kind, items);
            }
            Reply::PlanUndo { target, reason } => {
                self.popup = None;
                self.request_undo(target, reason, false);
            }
            Reply::AskUndo(target) => {
                self.popup = None;
                self.ask_undo(target);
            }
            Reply::Undo { target, reason } => {
                self.popup = None;
                self.request_undo(target, reason, true);
            }
            Reply::EnableWrites => {
                self.popup = None;
                self.request_write_mode();
            }
            Reply::Export {
                target,
                path,
                redact,
            } => {
                self.popup = None;
                self.effects.push(Effect::Request(Request::Export {
                    target,
                    path,
                    redact,
                    now_ms: self.now_ms,
                }));
                self.info("exporting…");
            }
            Reply::Plan { kind, ids, reason } => {
                self.popup = None;
                self.request_plan(kind, ids, reason);
            }
        }
    }

    /// Call `f` with the open popup and what it needs from the app (the pane under it, the
    /// theme, the keys); `None` without a popup.
    pub(super) fn with_popup<R>(
        &mut self,
        f: impl FnOnce(&mut Popup, &Env, &mut PopupView) -> R,
    ) -> Option<R> {
        let here = contexts_of(self.focus);
        let page = self.page();
        let env = Env {
            theme: self.cfg.theme,
            write_mode: !self.cfg.read_only,
            keys: &self.cfg.keys,
            here,
            page,
        };
        let p = self.popup.as_mut()?;
        Some(f(p, &env, &mut self.layout.popup))
    }

    /// Draw the open popup over the screen.
    pub fn draw_popup(&self, f: &mut ratatui::Frame, area: Rect, view: &mut PopupView) {
        let env = Env {
            theme: self.cfg.theme,
            write_mode: !self.cfg.read_only,
            keys: &self.cfg.keys,
            here: contexts_of(self.focus),
            page: 0,
        };
        if let Some(p) = &self.popup {
            p.render(f, area, &env, view);
        }
    }

    /// The command palette's rows for this query (what `:` lists in the current pane).
    pub fn palette_entries(&self, query: &str) -> Vec<PaletteEntry> {
        let here = contexts_of(self.focus);
        PaletteScope {
            here: &here,
            write_mode: self.write_mode(),
            keys: &self.cfg.keys,
        }
        .entries(query)
    }
}

/// The contexts keys are looked up in for a focused pane, innermost first.
pub(super) fn contexts_of(focus: Pane) -> Vec<Ctx> {
    match focus {
        Pane::List => vec![Ctx::List, Ctx::Nav, Ctx::Global],
        Pane::Sessions => vec![Ctx::Sessions, Ctx::Nav, Ctx::Global],
        Pane::Tree => vec![Ctx::Tree, Ctx::Inspect, Ctx::Nav, Ctx::Global],
        Pane::Detail => vec![Ctx::Detail, Ctx::Inspect, Ctx::Nav, Ctx::Global],
        Pane::Audit => vec![Ctx::Audit, Ctx::Nav, Ctx::Global],
        Pane::Incidents => vec![Ctx::Incidents, Ctx::Nav, Ctx::Global],
    }
}
