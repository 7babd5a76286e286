//! `:` on a flue 2.x journal: every key these screens answer with what it does (the help's
//! rows), filtered as you type (every word, in the key or the text); `⏎` runs the chosen one by
//! handing its key to the screens, so the palette does exactly what the key does and nothing
//! else; esc closes. The write keys are listed only in write mode (absent in read-only, as
//! everywhere); a key that does nothing in the pane under the palette is marked `(not here)`
//! and says why instead of running.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::Frame;

use super::{write, Flue2App, HANDLED};
use crate::keymap::{Action, Key, KEYMAP};
// The state is beta.7's palette's (its query and the row chosen); the rows are these screens'.
use crate::popups::{Edit, Palette};

/// One row: a key, what it does, and whether it does anything in the pane under the palette.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub key: String,
    pub help: String,
    pub here: bool,
    event: KeyEvent,
}

/// The screens' keys that are not the list's (`HANDLED`): sessions, incidents, the audit trail.
const SCREENS: [(Action, &str); 4] = [
    (
        Action::ToggleSessions,
        "sessions: every agent instance, its health; ⏎ lists its submissions",
    ),
    (
        Action::FindSession,
        "find a session: an id, an instance, a submission, or text of its records",
    ),
    (
        Action::ToggleIncidents,
        "incidents: the expired leases per worker, the steps that fire next, their cost",
    ),
    (
        Action::ToggleAudit,
        "the audit trail: every write turnscope made, undone or not",
    ),
];

/// Whether `a` does anything with a submission's detail open (the detail's own keys).
fn in_detail(a: Action) -> bool {
    !matches!(
        a,
        Action::Enter
            | Action::Filter(_)
            | Action::SortNext
            | Action::SortReverse
            | Action::StartFilter
            | Action::ToggleSessions
            | Action::FindSession
            | Action::ToggleIncidents
            | Action::ToggleAudit
            | Action::ToggleMark
            | Action::MarkAll
            | Action::MarkRange
            | Action::ClearMarks
    )
}

/// Whether `a` does anything without a detail open (the detail's search needs one).
fn outside_detail(a: Action) -> bool {
    !matches!(a, Action::Search | Action::SearchNext | Action::SearchPrev)
}

fn event(k: Key) -> KeyEvent {
    KeyEvent::new(k.code, k.mods)
}

impl Flue2App {
    /// The key `a` is bound to here: the configuration file's, else the keymap's first.
    fn key_of(&self, a: Action) -> Option<Key> {
        self.cfg.keys.key_for(a).or_else(|| {
            KEYMAP
                .iter()
                .find(|b| b.action == a && (!b.write || self.cfg.write))
                .and_then(|b| b.keys.first().copied())
        })
    }

    /// The palette's rows for `query`, the keys that do something here first.
    pub fn palette_commands(&self, query: &str) -> Vec<Command> {
        let detail = self.detail.is_some();
        let here = |a: Action| {
            if detail {
                in_detail(a)
            } else {
                outside_detail(a)
            }
        };
        let mut all: Vec<(Command, Option<Action>)> = Vec::new();
        let keyed = HANDLED
            .iter()
            .copied()
            .filter(|(a, _)| *a != Action::Palette)
            .chain(SCREENS);
        for (a, help) in keyed {
            if let Some(k) = self.key_of(a) {
                all.push((
                    Command {
                        key: self.key_label(a),
                        help: help.to_string(),
                        here: here(a),
                        event: event(k),
                    },
                    Some(a),
                ));
            }
        }
        if self.cfg.write {
            for (c, help) in write::KEYS {
                all.push((
                    Command {
                        key: c.to_string(),
                        help: help.to_string(),
                        here: true,
                        event: KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT),
                    },
                    None,
                ));
            }
            for (a, help) in [
                (Action::ToggleMark, "mark or unmark the row"),
                (
                    Action::MarkAll,
                    "mark every row shown (the view and the / query)",
                ),
                (
                    Action::MarkRange,
                    "mark the rows from the last one marked to the cursor",
                ),
                (Action::ClearMarks, "unmark every row"),
            ] {
                if let Some(k) = self.key_of(a) {
                    all.push((
                        Command {
                            key: self.write_key_label(a),
                            help: help.to_string(),
                            here: here(a),
                            event: event(k),
                        },
                        Some(a),
                    ));
                }
            }
        }
        let words: Vec<String> = query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let mut rows: Vec<Command> = all
            .into_iter()
            .map(|(c, _)| c)
            .filter(|c| {
                let hay = format!("{} {}", c.key, c.help).to_lowercase();
                words.iter().all(|w| hay.contains(w))
            })
            .collect();
        rows.sort_by_key(|c| !c.here);
        rows
    }

    /// `:` opens the palette.
    pub(super) fn open_palette(&mut self) {
        self.palette = Some(Palette::default());
    }

    /// A key while the palette is open: the typing keys are every palette's
    /// ([`Palette::edit`]); ⏎ hands the chosen row's key to the screens.
    pub(super) fn palette_key(&mut self, ev: KeyEvent) {
        // Out while it is read, so the rows can be asked of `self`; put back unless closed.
        let Some(mut p) = self.palette.take() else {
            return;
        };
        match p.edit(&ev, |q| self.palette_commands(q).len()) {
            Edit::Close => {}
            Edit::Stay => self.palette = Some(p),
            Edit::Choose => {
                let rows = self.palette_commands(&p.query);
                match rows.get(p.selected.min(rows.len().saturating_sub(1))) {
                    Some(c) if c.here => self.on_key(c.event),
                    Some(c) => {
                        self.status = Some(format!(
                            "{} ({}) does nothing here: {}",
                            c.key,
                            c.help,
                            if self.detail.is_some() {
                                "close the detail first (esc)"
                            } else {
                                "open a submission first (⏎)"
                            }
                        ))
                    }
                    None => self.status = Some("no key matches".into()),
                }
            }
        }
    }

    /// The palette over `area`, where open (drawn as beta.7's).
    pub(super) fn draw_palette(&self, f: &mut Frame, area: Rect) {
        let Some(p) = &self.palette else {
            return;
        };
        let rows: Vec<(String, bool)> = self
            .palette_commands(&p.query)
            .into_iter()
            .map(|c| (format!("{:<10} {}", c.key, c.help), c.here))
            .collect();
        crate::popups::draw_palette(
            f,
            area,
            &self.cfg.theme,
            " keys · type to filter · ↑/↓ · ⏎ runs · esc closes ",
            p,
            &rows,
            None,
        );
    }
}
