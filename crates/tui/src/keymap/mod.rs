//! The typed actions and the one keymap table. `?` help and the footer are generated from it, so
//! what the screen says is what the keys do.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod action;
mod table;

pub use action::{Action, Ctx, FilterLabel, Key};
pub use table::KEYMAP;

use Action as A;
use Ctx as C;

fn key_matches(key: &Key, ev: &KeyEvent) -> bool {
    if key.code != ev.code {
        return false;
    }
    // Shifted characters arrive with SHIFT on some terminals: compare the character only.
    let relevant = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(_) => relevant == key.mods,
        KeyCode::BackTab => true,
        _ => ev.modifiers == key.mods || relevant == key.mods,
    }
}

/// The action for `ev` in the given contexts (innermost first). Write bindings only match in
/// `--write` mode.
pub fn lookup(ctxs: &[Ctx], ev: &KeyEvent, write_mode: bool) -> Option<Action> {
    ctxs.iter().find_map(|ctx| {
        KEYMAP
            .iter()
            .filter(|b| b.ctx == *ctx && b.active(write_mode))
            .find(|b| b.keys.iter().any(|k| key_matches(k, ev)))
            .map(|b| b.action)
    })
}

/// Whether `a` is a write action (its bindings exist only in `--write` mode).
pub fn is_write(a: Action) -> bool {
    KEYMAP.iter().any(|b| b.action == a && b.write)
}

/// What the status line says when a write key is pressed in read-only mode: the write keys are
/// not bound there (k9s's rule), but a key that does nothing must say why.
pub fn read_only_refusal(a: Action) -> String {
    let what = match a {
        Action::ToggleMark => "mark rows".to_string(),
        other => action_name(other).replace('_', " "),
    };
    format!("read-only: press w (write mode) to {what}")
}

/// Where a key that does nothing here works instead: `(key label, help, pane titles)` of its
/// first binding in another context of this mode.
pub fn bound_elsewhere(
    here: &[Ctx],
    ev: &KeyEvent,
    write_mode: bool,
    ov: &Overrides,
) -> Option<(String, &'static str, &'static str)> {
    let all = [
        C::Global,
        C::Nav,
        C::List,
        C::Sessions,
        C::Inspect,
        C::Tree,
        C::Detail,
        C::Audit,
        C::Incidents,
    ];
    all.iter().filter(|c| !here.contains(c)).find_map(|ctx| {
        let a = lookup_with(&[*ctx], ev, write_mode, ov)?;
        let b = KEYMAP.iter().find(|b| b.ctx == *ctx && b.action == a)?;
        let key = ov
            .key_for(a)
            .map_or_else(|| b.label.to_string(), |k| key_label(&k));
        Some((key, b.help, ctx.title()))
    })
}

/// Footer hints for the given contexts, innermost first, without duplicates: (keys, text, action).
pub fn footer(ctxs: &[Ctx], write_mode: bool) -> Vec<(&'static str, &'static str, Action)> {
    let mut out: Vec<(&str, &str, Action)> = Vec::new();
    for ctx in ctxs {
        for bnd in KEYMAP
            .iter()
            .filter(|b| b.ctx == *ctx && b.active(write_mode))
        {
            if let Some(text) = bnd.footer {
                let (label, text) = text.split_once('\t').unwrap_or((bnd.label, text));
                if !out.iter().any(|(_, t, _)| *t == text) {
                    out.push((label, text, bnd.action));
                }
            }
        }
    }
    out
}

/// The contexts in the order the help, the man page and `docs/tui.md` list them.
const HELP_ORDER: [Ctx; 10] = [
    C::Global,
    C::Nav,
    C::List,
    C::Sessions,
    C::Inspect,
    C::Tree,
    C::Detail,
    C::Audit,
    C::Incidents,
    C::Popup,
];

/// Help groups in display order: (title, [(keys, description)]), for this mode.
pub fn help_groups(write_mode: bool) -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    HELP_ORDER
        .into_iter()
        .map(|ctx| {
            let rows = KEYMAP
                .iter()
                .filter(|b| b.ctx == ctx && b.active(write_mode))
                .map(|b| (b.label, b.help))
                .collect();
            (ctx.title(), rows)
        })
        .collect()
}

/// The key tables of `docs/tui.md` (between its `keys:begin` and `keys:end` markers), made from
/// this table so the documentation cannot drift from the keys: one table per context in the help's
/// order, a write-mode key marked *write*. `tests.rs` fails when the file is stale.
pub fn key_tables_markdown() -> String {
    let mut out = String::new();
    for ctx in HELP_ORDER {
        out.push_str(&format!(
            "**{}**\n\n| key | action |\n| --- | --- |\n",
            ctx.title()
        ));
        for b in KEYMAP.iter().filter(|b| b.ctx == ctx) {
            let label = b.label.replace('|', "\\|");
            let tick = if label.contains('`') { "``" } else { "`" };
            let write = if b.write { "*write*: " } else { "" };
            out.push_str(&format!(
                "| {tick}{label}{tick} | {write}{} |\n",
                b.help.replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    out
}

/// The name of an action in the configuration file's `[keys]` table and in the command palette:
/// the variant's name in snake case (`Action`'s strum names), a filter's `filter_<label>`, a
/// write action's own name.
pub fn action_name(a: Action) -> String {
    match a {
        A::Filter(f) => format!("filter_{}", f.label()),
        A::Act(kind) => kind.as_str().to_string(),
        A::Undo { batch: true } => "undo_batch".to_string(),
        other => <&'static str>::from(other).to_string(),
    }
}

/// Every action that can be rebound, by name (outside popups), sorted by name.
pub fn rebindable() -> Vec<(String, Action)> {
    let mut out: Vec<(String, Action)> = Vec::new();
    for b in KEYMAP.iter().filter(|b| b.ctx != Ctx::Popup) {
        let name = action_name(b.action);
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, b.action));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Parse a key as written in the configuration file: `x`, `X`, `ctrl-x`, `enter`, `esc`, `tab`,
/// `space`, `up`, `down`, `left`, `right`, `home`, `end`, `pgup`, `pgdn`, `f1`…`f12`.
pub fn parse_key(text: &str) -> Result<Key, String> {
    let t = text.trim();
    let (mods, rest) = match t.strip_prefix("ctrl-").or_else(|| t.strip_prefix("C-")) {
        Some(r) => (KeyModifiers::CONTROL, r),
        None => (KeyModifiers::NONE, t),
    };
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) if !c.is_control() => KeyCode::Char(c),
        _ => match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            f if f.starts_with('f') && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) => {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => {
                return Err(format!(
                    "{text:?} is not a key (use a character, ctrl-x, enter, esc, tab, space, up, down, left, right, home, end, pgup, pgdn or f1-f12)"
                ))
            }
        },
    };
    Ok(Key { code, mods })
}

/// How a key is written back (palette, help).
pub fn key_label(key: &Key) -> String {
    let base = match key.code {
        KeyCode::Char(' ') => "space".to_string(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "⏎".into(),
        KeyCode::Esc => "esc".into(),
        KeyCode::Tab => "Tab".into(),
        KeyCode::BackTab => "S-Tab".into(),
        KeyCode::Up => "↑".into(),
        KeyCode::Down => "↓".into(),
        KeyCode::Left => "←".into(),
        KeyCode::Right => "→".into(),
        KeyCode::Home => "Home".into(),
        KeyCode::End => "End".into(),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        KeyCode::F(n) => format!("F{n}"),
        other => format!("{other:?}"),
    };
    if key.mods.contains(KeyModifiers::CONTROL) {
        format!("^{base}")
    } else {
        base
    }
}

/// Key overrides from the configuration file: each replaces every default key of its action
/// (outside popups).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides(pub Vec<(Action, Key)>);

impl Overrides {
    /// Validate `name = "key"` pairs against the keymap.
    pub fn parse<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Overrides, String> {
        let names = rebindable();
        let mut out = Vec::new();
        for (name, key) in pairs {
            let Some((_, action)) = names.iter().find(|(n, _)| n == name) else {
                return Err(format!(
                    "unknown action {name:?} in [keys] (known: {})",
                    names
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            out.push((*action, parse_key(key)?));
        }
        Ok(Overrides(out))
    }

    pub fn key_for(&self, a: Action) -> Option<Key> {
        self.0.iter().find(|(x, _)| *x == a).map(|(_, k)| *k)
    }

    /// The first override whose key is already another action's default key where both are
    /// looked up together (that action not rebound itself): `(index of the override, the other
    /// action)`. Such a key would do one of the two and make the other unreachable (`quit = "j"`
    /// quit on j and took "down" away).
    pub fn default_conflict(&self) -> Option<(usize, Action)> {
        self.0.iter().enumerate().find_map(|(i, (action, key))| {
            let ctxs: Vec<Ctx> = KEYMAP
                .iter()
                .filter(|b| b.action == *action && b.ctx != Ctx::Popup)
                .map(|b| b.ctx)
                .collect();
            KEYMAP
                .iter()
                .filter(|b| b.ctx != Ctx::Popup && b.action != *action)
                .filter(|b| self.key_for(b.action).is_none())
                .filter(|b| ctxs.iter().any(|c| c.active_with(b.ctx)))
                .find(|b| b.keys.contains(key))
                .map(|b| (i, b.action))
        })
    }
}

/// [`lookup`] with the configuration file's overrides: an overridden action answers only to its
/// new key; popups keep their keys.
pub fn lookup_with(
    ctxs: &[Ctx],
    ev: &KeyEvent,
    write_mode: bool,
    ov: &Overrides,
) -> Option<Action> {
    if ov.0.is_empty() || ctxs == [Ctx::Popup] {
        return lookup(ctxs, ev, write_mode);
    }
    for ctx in ctxs {
        for (action, key) in &ov.0 {
            let available = KEYMAP
                .iter()
                .any(|b| b.ctx == *ctx && b.action == *action && b.active(write_mode));
            if available && key_matches(key, ev) {
                return Some(*action);
            }
        }
    }
    ctxs.iter().find_map(|ctx| {
        KEYMAP
            .iter()
            .filter(|b| b.ctx == *ctx && b.active(write_mode))
            .filter(|b| ov.key_for(b.action).is_none())
            .find(|b| b.keys.iter().any(|k| key_matches(k, ev)))
            .map(|b| b.action)
    })
}

/// [`help_groups`] with the configuration file's overrides shown as the keys.
pub fn help_groups_with(
    write_mode: bool,
    ov: &Overrides,
) -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    help_groups(write_mode)
        .into_iter()
        .map(|(title, rows)| {
            let rows = rows
                .into_iter()
                .map(|(label, help)| {
                    let bnd = KEYMAP
                        .iter()
                        .find(|b| b.label == label && b.help == help && b.ctx != Ctx::Popup);
                    let key = bnd.and_then(|b| ov.key_for(b.action));
                    (
                        key.map_or_else(|| label.to_string(), |k| key_label(&k)),
                        help,
                    )
                })
                .collect();
            (title, rows)
        })
        .collect()
}

#[cfg(test)]
mod tests;
