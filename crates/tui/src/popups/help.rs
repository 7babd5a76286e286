//! `?` help: generated from the keymap, grouped by pane, plus the mouse and the tree's markers.
//! Its keys: j/k and the pages scroll, ⏎, y and esc close (see [`super::Popup::on_action`]).

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::env::{Env, PopupView};
use super::widgets::centered;
use crate::keymap;
use crate::theme::Theme;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Help {
    pub scroll: usize,
}

impl Help {
    pub fn render(&self, f: &mut Frame, area: Rect, env: &Env, view: &mut PopupView) {
        let t = env.theme;
        let lines = lines(t, !env.write_mode, env.keys);
        let r = centered(area, 96, area.height.saturating_sub(2));
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(Span::styled(" help · j/k scroll · esc closes ", t.title()));
        let inner = block.inner(r);
        let max = lines.len().saturating_sub(inner.height as usize);
        view.max_scroll = Some(max);
        let scroll = self.scroll.min(max);
        f.render_widget(Clear, r);
        f.render_widget(block, r);
        let visible: Vec<Line> = lines
            .into_iter()
            .skip(scroll)
            .take(inner.height as usize)
            .collect();
        f.render_widget(Paragraph::new(visible), inner);
    }
}

/// The `/` filter's syntax, with every field and verdict (from `list_query` and the verdict
/// enums, so the help cannot drift from the parser).
fn filter_syntax(t: Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(
        "Filter (/): every word must match",
        t.title(),
    ))];
    let verdicts = turnscope_engine::report::verdict_filter::VerdictFilter::names();
    let rows: Vec<(String, String)> = vec![
        (
            "word".into(),
            "id, instance, verdict, error, session or reason contains it".into(),
        ),
        (
            "field:value".into(),
            format!("one field: {}", crate::list_query::Field::names_line()),
        ),
        (
            "-term !term".into(),
            "negated: rows that do not match".into(),
        ),
        ("\"a b\"".into(), "one term with a space".into()),
        ("rule:".into(), "0 to 9, or none".into()),
    ];
    for (k, help) in rows {
        out.push(Line::from(vec![
            Span::styled(format!("  {k:<12} "), t.key()),
            Span::raw(help),
        ]));
    }
    // The verdicts, wrapped to the popup's width (the paragraph does not wrap).
    let mut line = String::new();
    let mut first = true;
    for v in verdicts {
        if !line.is_empty() && line.chars().count() + 1 + v.chars().count() > 76 {
            let key = if first { "verdict:" } else { "" };
            out.push(Line::from(vec![
                Span::styled(format!("  {key:<12} "), t.key()),
                Span::raw(std::mem::take(&mut line)),
            ]));
            first = false;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&v);
    }
    let key = if first { "verdict:" } else { "" };
    out.push(Line::from(vec![
        Span::styled(format!("  {key:<12} "), t.key()),
        Span::raw(line),
    ]));
    out.push(Line::from(
        "  e.g. /verdict:resume -rule:6 kind:direct · verdict:live · verdict:stuck",
    ));
    out.push(Line::default());
    out
}

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
    out.extend(filter_syntax(t));
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
