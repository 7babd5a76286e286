//! The command palette (`:`): every action of this mode with its key, filtered as you type;
//! ↑/↓ (or ^p/^n, Tab) choose, ⏎ runs the chosen action, esc closes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::env::{Env, Reply};
use super::widgets::centered;
use crate::keymap::{self, Action, Ctx, Overrides};
use crate::text::{clean, fit};
use crate::theme::Theme;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Palette {
    pub query: String,
    pub selected: usize,
}

/// One row of the command palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaletteEntry {
    /// The action's name (as in the configuration file's `[keys]`).
    pub name: String,
    /// Its key as shown (the configuration file's override, if any).
    pub key: String,
    pub help: &'static str,
    pub action: Action,
    /// Whether it applies in the current pane.
    pub available: bool,
}

/// What the palette lists: the actions of this mode, and which of them work in the pane under it.
pub struct PaletteScope<'a> {
    pub here: &'a [Ctx],
    pub write_mode: bool,
    pub keys: &'a Overrides,
}

impl PaletteScope<'_> {
    /// The palette's rows for this query: every action of this mode (write actions only in write
    /// mode), with its key (overrides applied), filtered by name, key or description.
    pub fn entries(&self, query: &str) -> Vec<PaletteEntry> {
        let q = query.trim().to_lowercase();
        let mut out: Vec<PaletteEntry> = Vec::new();
        for b in keymap::KEYMAP.iter().filter(|b| {
            b.ctx != Ctx::Popup && b.active(self.write_mode) && b.action != Action::Palette
        }) {
            if out.iter().any(|e| e.action == b.action) {
                continue;
            }
            let name = keymap::action_name(b.action);
            let key = match self.keys.key_for(b.action) {
                Some(k) => keymap::key_label(&k),
                None => b.label.to_string(),
            };
            let hay = format!("{name} {key} {}", b.help).to_lowercase();
            if !q.is_empty() && !q.split_whitespace().all(|w| hay.contains(w)) {
                continue;
            }
            out.push(PaletteEntry {
                name,
                key,
                help: b.help,
                action: b.action,
                available: keymap::KEYMAP.iter().any(|x| {
                    x.action == b.action && self.here.contains(&x.ctx) && x.active(self.write_mode)
                }),
            });
        }
        // What works here first; within, the help's order (everywhere, moving, then the panes).
        let rank = |a: Action| {
            let ctx = keymap::KEYMAP
                .iter()
                .find(|b| b.action == a && b.ctx != Ctx::Popup)
                .map(|b| b.ctx);
            [
                Ctx::Global,
                Ctx::Nav,
                Ctx::List,
                Ctx::Sessions,
                Ctx::Inspect,
                Ctx::Tree,
                Ctx::Detail,
                Ctx::Audit,
                Ctx::Incidents,
            ]
            .iter()
            .position(|c| Some(*c) == ctx)
            .unwrap_or(10)
        };
        out.sort_by_key(|e| (!e.available, rank(e.action)));
        out
    }
}

impl PaletteScope<'_> {
    /// In read-only mode, the write actions this query would list in `--write` mode: the
    /// palette says they need `--write` rather than matching nothing silently.
    pub fn write_only(&self, query: &str) -> Vec<String> {
        if self.write_mode || query.trim().is_empty() {
            return Vec::new();
        }
        PaletteScope {
            here: self.here,
            write_mode: true,
            keys: self.keys,
        }
        .entries(query)
        .into_iter()
        .filter(|e| keymap::is_write(e.action))
        .map(|e| e.name)
        .collect()
    }

    /// What the palette says about the write actions this query matches in read-only mode.
    pub fn write_only_note(&self, query: &str) -> Option<String> {
        let names = self.write_only(query);
        (!names.is_empty()).then(|| {
            format!(
                "read-only: press w (write mode) to use {}",
                names.join(", ")
            )
        })
    }
}

/// The palette's view of the pane under it.
impl Env<'_> {
    pub fn palette(&self) -> PaletteScope<'_> {
        PaletteScope {
            here: &self.here,
            write_mode: self.write_mode,
            keys: self.keys,
        }
    }
}

/// What a key did to a palette ([`Palette::edit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Esc: close it.
    Close,
    /// ⏎: run the chosen row.
    Choose,
    /// The query or the chosen row moved (or nothing happened).
    Stay,
}

impl Palette {
    /// The keys every palette answers the same way: esc, ⏎, ↑/↓ (^p/^n, Tab), typing,
    /// backspace and ^u. The chosen row is kept among the `rows` the query then lists.
    pub fn edit(&mut self, ev: &KeyEvent, rows: impl Fn(&str) -> usize) -> Edit {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Esc => return Edit::Close,
            KeyCode::Enter => return Edit::Choose,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Tab => self.selected += 1,
            KeyCode::Char('n') if ctrl => self.selected += 1,
            KeyCode::Backspace => {
                self.query.pop();
                self.selected = 0;
            }
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                self.selected = 0;
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if self.query.chars().count() < 60 {
                    self.query.push(c);
                }
                self.selected = 0;
            }
            _ => {}
        }
        // Keep the selection on a row.
        self.selected = self.selected.min(rows(&self.query).saturating_sub(1));
        Edit::Stay
    }

    pub fn on_key(&mut self, ev: &KeyEvent, scope: &PaletteScope) -> Reply {
        match self.edit(ev, |q| scope.entries(q).len()) {
            Edit::Close => Reply::Close,
            Edit::Stay => Reply::Stay,
            Edit::Choose => {
                let entries = scope.entries(&self.query);
                let chosen = self.selected.min(entries.len().saturating_sub(1));
                match entries.get(chosen) {
                    Some(e) if e.available => Reply::Run(e.action),
                    Some(e) => Reply::CloseWith(format!(
                        "{} is not available here ({}): open a submission or switch panes first",
                        e.name, e.help
                    )),
                    None => Reply::CloseWith(
                        scope
                            .write_only_note(&self.query)
                            .unwrap_or_else(|| "no action matches".into()),
                    ),
                }
            }
        }
    }

    /// The wheel moves the palette's selection, not the list under it.
    pub fn move_by(&mut self, delta: isize, scope: &PaletteScope) {
        let n = scope.entries(&self.query).len();
        self.selected = if n == 0 {
            0
        } else {
            (self.selected as isize)
                .saturating_add(delta)
                .clamp(0, n as isize - 1) as usize
        };
    }

    pub fn render(&self, f: &mut Frame, area: Rect, env: &Env) {
        let rows: Vec<(String, bool)> = env
            .palette()
            .entries(&self.query)
            .into_iter()
            .map(|e| {
                (
                    format!("{:<8} {:<20} {}", e.key, e.name, e.help),
                    e.available,
                )
            })
            .collect();
        draw(
            f,
            area,
            &env.theme,
            " commands · type to filter · ↑/↓ · ⏎ runs · esc closes ",
            self,
            &rows,
            env.palette().write_only_note(&self.query),
        );
    }
}

/// A palette over `area`: `title` on its border, its query, then `rows` (each its text and
/// whether it works in the pane under it, `(not here)` where not) scrolled to keep the chosen
/// one in view, and `note` on the last line. Both formats' palettes are drawn by it.
pub fn draw(
    f: &mut Frame,
    area: Rect,
    t: &Theme,
    title: &str,
    p: &Palette,
    rows: &[(String, bool)],
    note: Option<String>,
) {
    let r = centered(area, 90, area.height.saturating_sub(4));
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.border(true))
        .title(Span::styled(title.to_string(), t.title()));
    let inner = block.inner(r);
    f.render_widget(Clear, r);
    f.render_widget(block, r);
    let mut lines = vec![
        Line::from(vec![
            Span::styled(" : ", t.key()),
            Span::raw(clean(&p.query)),
            Span::styled("▏", t.key()),
        ]),
        Line::default(),
    ];
    // The note takes the last line.
    let room = (inner.height as usize)
        .saturating_sub(lines.len())
        .saturating_sub(usize::from(note.is_some()));
    let sel = p.selected.min(rows.len().saturating_sub(1));
    let skip = (sel + 1).saturating_sub(room);
    if rows.is_empty() && note.is_none() {
        lines.push(Line::from(Span::styled(
            " no action matches (backspace to widen)",
            t.warn(),
        )));
    }
    let w = inner.width as usize;
    for (i, (text, here)) in rows.iter().enumerate().skip(skip).take(room) {
        let marker = if i == sel { "▶" } else { " " };
        let tail = if *here { "" } else { "  (not here)" };
        let text = fit(&format!("{marker} {text}{tail}"), w);
        let style = if i == sel {
            t.selected()
        } else if *here {
            Style::new()
        } else {
            t.dim()
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    if let Some(note) = note {
        lines.push(Line::from(Span::styled(
            fit(&format!(" {note}"), w),
            t.warn(),
        )));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
