//! The mouse: a click selects (a double click opens) in the pane under it, the wheel scrolls
//! that pane, or the popup when one is open. Hit areas come from the last draw.

use super::*;

impl App {
    pub fn on_mouse(&mut self, ev: MouseEvent) {
        self.on_mouse_inner(ev);
        self.request_reads();
    }

    pub(super) fn on_mouse_inner(&mut self, ev: MouseEvent) {
        let (x, y) = (ev.column, ev.row);
        let pane = self.layout.pane_at(x, y);
        if self.popup.is_some() {
            match ev.kind {
                MouseEventKind::ScrollDown => self.move_by(3),
                MouseEventKind::ScrollUp => self.move_by(-3),
                _ => {}
            }
            return;
        }
        let Some(pane) = pane else { return };
        match ev.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let saved = self.focus;
                self.focus = pane;
                self.move_by(if ev.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                });
                self.focus = saved;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                let Some(hit) = self.layout.hit(pane) else {
                    return;
                };
                if !hit.rows.contains((x, y).into()) {
                    return;
                }
                let row = (y - hit.rows.y) as usize;
                let double = self.last_click.is_some_and(|(t, cx, cy)| {
                    cx == x && cy == y && self.ui_now.duration_since(t) < Duration::from_millis(400)
                });
                self.last_click = Some((self.ui_now, x, y));
                match pane {
                    Pane::List => {
                        if self.list.click_row(row, self.layout.list_offset) {
                            self.sync_list_selection();
                            if double {
                                self.enter();
                            }
                        }
                    }
                    Pane::Sessions => {
                        if self.sessions.click_row(row, self.layout.sessions_offset) && double {
                            self.enter();
                        }
                    }
                    Pane::Tree => {
                        let offset = self.layout.tree_offset();
                        if self.inspect_mut().is_some_and(|i| i.click_row(row, offset)) && double {
                            self.expand();
                        }
                    }
                    Pane::Audit => {
                        if self.audit.click_row(row, self.layout.audit_offset) && double {
                            self.enter();
                        }
                    }
                    Pane::Incidents => {
                        if self.incidents.click_row(row, self.layout.incidents_offset) && double {
                            self.enter();
                        }
                    }
                    Pane::Detail => {}
                }
            }
            _ => {}
        }
    }
}
