//! `?` help: generated from the keymap, grouped by pane, plus the mouse and the tree's markers.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::keymap;
use crate::tui::theme::Theme;

pub fn lines(t: Theme, read_only: bool, keys: &keymap::Overrides) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (title, rows) in keymap::help_groups_with(!read_only, keys) {
        if rows.is_empty() {
            continue;
        }
        out.push(Line::from(Span::styled(title.to_string(), t.title())));
        for (keys, help) in rows {
            out.push(Line::from(vec![
                Span::styled(format!("  {keys:<10} "), t.key()),
                Span::raw(help.to_string()),
            ]));
        }
        out.push(Line::default());
    }
    out.push(Line::from(Span::styled("Mouse", t.title())));
    out.push(Line::from(
        "  click selects · double-click opens · wheel scrolls the pane under it",
    ));
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        "Tree markers (they stay readable with NO_COLOR)",
        t.title(),
    )));
    for (m, what, style) in [
        (
            "‼ [partial batch]",
            "the trailing partial tool batch (spec §4.3): owner, results, missing calls",
            t.partial(),
        ),
        (
            "✓ ✗ ⧗",
            "tool call with an ok result, an error result, no result",
            Style::new(),
        ),
        (
            "◆ [matched]",
            "an entry that made the classifier's rule match",
            t.matched(),
        ),
        ("▶ [input]", "the submission's input entry", t.title()),
        ("⚑ [checkpoint]", "the journal's checkpoint leaf", t.key()),
        (
            "⎇ [off path]",
            "abandoned branch, folded under the entry it branches from",
            t.dim(),
        ),
        ("» ", "a search hit", t.key()),
    ] {
        out.push(Line::from(vec![
            Span::styled(format!("  {m:<18} "), style),
            Span::raw(what),
        ]));
    }
    out.push(Line::default());
    if read_only {
        out.push(Line::from(Span::styled(
            "READ-ONLY: nothing is ever written to the database.",
            t.dim(),
        )));
    } else {
        for l in [
            "WRITE: every action shows the exact rows first and asks, with No selected. It applies",
            "in one fenced transaction that writes nothing if the submission changed meanwhile, and",
            "it is recorded in the audit trail (a).",
        ] {
            out.push(Line::from(Span::styled(l, t.dim())));
        }
    }
    out
}
