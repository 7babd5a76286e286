//! Popups drawn over the screen: help, the confirm dialog of write actions (preview, No
//! selected) and its informational results, the command palette, and the one-line reason input
//! of `fail`. Each owns its keys and its drawing; the app holds at most one (its popup slot) and
//! carries out what a key asks for ([`Reply`]).

pub(crate) mod env;
mod export_path;
mod help;
mod palette;
pub(crate) mod widgets;

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use super::keymap::{self, Action, Ctx};

pub use super::popup_line::{text_of, PopupLine, Tone};
pub use crate::write::confirm::{Confirm, Note, PopupAction};
pub use crate::write::reason::Reason;
pub use env::{Env, PopupView, Reply};
pub use export_path::ExportPath;
pub use help::Help;
pub use palette::{draw as draw_palette, Edit, Palette, PaletteEntry, PaletteScope};

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    Help(Help),
    Confirm(Confirm),
    /// The command palette (`:`): every action with its key, filtered as you type.
    Palette(Palette),
    /// A one-line text input: the reason of a `fail` (required).
    Reason(Reason),
    /// `e`: the export's path and the redact toggle.
    ExportPath(ExportPath),
}

/// The scroll of a popup body after `delta`. The first key after a draw starts from what that
/// draw showed (the body's end at most); keys between two draws add up, as they always did.
fn scrolled(scroll: usize, delta: isize, view: &mut PopupView) -> usize {
    let cur = scroll.min(view.max_scroll.take().unwrap_or(usize::MAX));
    (cur as isize).saturating_add(delta).clamp(0, 500) as usize
}

impl Popup {
    /// An informational popup with one button.
    pub fn info(title: impl Into<String>, lines: Vec<PopupLine>) -> Popup {
        Popup::Confirm(Confirm::info(title, lines))
    }

    /// Whether the popup asks before writing (two buttons, No selected first).
    pub fn is_write_confirm(&self) -> bool {
        matches!(self, Popup::Confirm(c) if c.is_write())
    }

    /// A key while the popup is open. The palette and the reason input read text; help and the
    /// confirm dialog use the keymap's popup bindings.
    pub fn on_key(&mut self, ev: &KeyEvent, env: &Env, view: &mut PopupView) -> Reply {
        match self {
            Popup::Palette(p) => p.on_key(ev, &env.palette()),
            Popup::Reason(r) => r.on_key(ev),
            Popup::ExportPath(e) => e.on_key(ev),
            Popup::Help(_) | Popup::Confirm(_) => {
                match keymap::lookup_with(&[Ctx::Popup], ev, env.write_mode, env.keys) {
                    Some(a) => self.on_action(a, env, view),
                    None => Reply::Stay,
                }
            }
        }
    }

    /// An action while the popup is open (a key of the popup's bindings, or the mouse wheel).
    pub fn on_action(&mut self, a: Action, env: &Env, view: &mut PopupView) -> Reply {
        let delta = match a {
            Action::Up => Some(-1),
            Action::Down => Some(1),
            Action::PageUp => Some(-(env.page as isize)),
            Action::PageDown => Some(env.page as isize),
            _ => None,
        };
        if let Some(d) = delta {
            self.scroll_by(d, env, view);
            return Reply::Stay;
        }
        match self {
            Popup::Confirm(c) => c.on_action(a),
            Popup::Help(_) => match a {
                Action::Confirm | Action::Yes | Action::Cancel | Action::Back => Reply::Close,
                _ => Reply::Stay,
            },
            Popup::Palette(_) | Popup::Reason(_) | Popup::ExportPath(_) => match a {
                Action::Cancel | Action::Back => Reply::Close,
                _ => Reply::Stay,
            },
        }
    }

    /// Scroll the body (help, confirm) or move the palette's selection (the wheel too).
    pub fn scroll_by(&mut self, delta: isize, env: &Env, view: &mut PopupView) {
        match self {
            Popup::Help(h) => h.scroll = scrolled(h.scroll, delta, view),
            Popup::Confirm(c) => c.scroll = scrolled(c.scroll, delta, view),
            Popup::Palette(p) => p.move_by(delta, &env.palette()),
            Popup::Reason(_) | Popup::ExportPath(_) => {}
        }
    }

    pub fn render(&self, f: &mut Frame, area: Rect, env: &Env, view: &mut PopupView) {
        match self {
            Popup::Help(h) => h.render(f, area, env, view),
            Popup::Confirm(c) => c.render(f, area, env.theme, view),
            Popup::Palette(p) => p.render(f, area, env),
            Popup::Reason(r) => r.render(f, area, env.theme),
            Popup::ExportPath(e) => e.render(f, area, env.theme),
        }
    }

    /// The footer's hints while this popup has the keyboard, when they are not the keymap's.
    pub fn footer_hints(&self) -> Option<Vec<(&'static str, &'static str)>> {
        match self {
            Popup::Reason(_) => Some(vec![("⏎", "preview"), ("esc", "cancel"), ("^u", "erase")]),
            Popup::ExportPath(_) => Some(vec![
                ("⏎", "export"),
                ("tab", "redact"),
                ("esc", "cancel"),
                ("^u", "erase"),
            ]),
            Popup::Palette(_) => Some(vec![
                ("⏎", "run"),
                ("↑/↓", "choose"),
                ("esc", "close"),
                ("^u", "erase"),
            ]),
            // An information or a refusal: nothing to confirm, so no "apply" or "select" either.
            Popup::Confirm(c) if !c.is_write() && c.action == PopupAction::Close => {
                Some(vec![("⏎/esc", "close"), ("j/k", "scroll")])
            }
            Popup::Help(_) | Popup::Confirm(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keymap::Overrides;
    use crate::theme::Theme;

    fn env(keys: &Overrides) -> Env<'_> {
        Env {
            theme: Theme::default(),
            write_mode: false,
            keys,
            here: vec![Ctx::List, Ctx::Nav, Ctx::Global],
            page: 10,
        }
    }

    #[test]
    fn scrolling_starts_from_what_the_last_draw_showed() {
        let keys = Overrides::default();
        let env = env(&keys);
        let mut p = Popup::Help(Help::default());
        let mut view = PopupView::default();
        // No draw yet: keys add up (bounded at 500).
        for _ in 0..5 {
            p.on_action(Action::Down, &env, &mut view);
        }
        assert!(matches!(&p, Popup::Help(h) if h.scroll == 5));
        // A draw that could show at most 2: the next key starts there, the one after adds up.
        view.max_scroll = Some(2);
        p.on_action(Action::Up, &env, &mut view);
        assert!(matches!(&p, Popup::Help(h) if h.scroll == 1));
        p.on_action(Action::PageDown, &env, &mut view);
        assert!(matches!(&p, Popup::Help(h) if h.scroll == 11));
        assert_eq!(
            p.on_action(Action::Confirm, &env, &mut view),
            Reply::Close,
            "⏎ closes help"
        );
    }

    #[test]
    fn palette_keeps_its_selection_on_a_row() {
        let keys = Overrides::default();
        let env = env(&keys);
        let mut p = Popup::Palette(Palette::default());
        let mut view = PopupView::default();
        let n = env.palette().entries("").len();
        p.scroll_by(10_000, &env, &mut view);
        assert!(matches!(&p, Popup::Palette(x) if x.selected == n - 1));
        let esc = KeyEvent::new(
            crossterm::event::KeyCode::Esc,
            crossterm::event::KeyModifiers::NONE,
        );
        assert_eq!(p.on_key(&esc, &env, &mut view), Reply::Close);
    }
}
