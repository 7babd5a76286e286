//! Popups drawn over the screen: help, the confirm dialog of write actions (preview, No selected),
//! informational results, and the one-line reason input of `fail`.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::help;
use crate::tui::app::{App, Popup, PopupAction};
use crate::tui::text::{char_width, clean, fit, width};
use crate::tui::theme::Theme;

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(10);
    let h = h.min(area.height.saturating_sub(2)).max(3);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The style of a popup line, from how it starts (the text carries the meaning; colour repeats it).
fn tone(t: Theme, line: &str) -> Style {
    let s = line.trim_start();
    if s.starts_with('✗') || s.starts_with("refused") || s.starts_with("- ") {
        t.error().remove_modifier(Modifier::BOLD)
    } else if s.starts_with('✓') || s.starts_with("applied:") || s.starts_with("+ ") {
        t.ok()
    } else if s.starts_with('▶') || s.starts_with("next write:") {
        t.key()
    } else if s.starts_with("nothing written") || s.starts_with("instead:") {
        t.warn()
    } else if [
        "runtime plan:",
        "afterwards:",
        "before → now:",
        "writes, in one",
        "what changed:",
    ]
    .iter()
    .any(|p| s.starts_with(p))
    {
        t.title()
    } else if ["insert entry", "update ", "delete "]
        .iter()
        .any(|p| s.starts_with(p))
    {
        Style::new().add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    }
}

/// Wrap `line` to `w` cells: prose after a space near the edge, row data (JSON, SQL values)
/// exactly at the edge so every byte stays visible; continuation lines keep the line's
/// indentation plus two, so a long row stays visibly one row.
fn wrap(line: &str, w: usize) -> Vec<String> {
    let line = clean(line);
    if width(&line) <= w || w < 8 {
        return vec![line];
    }
    let words = !line.contains(['{', '\'']);
    let lead = line.chars().take_while(|c| *c == ' ').count().min(w / 2) + 2;
    let mut out = Vec::new();
    let mut cur: Vec<char> = Vec::new();
    let mut used = 0;
    let mut first = true;
    for c in line.chars() {
        let cw = char_width(c);
        if used + cw > w {
            let start = if first { 0 } else { lead };
            let mut carry: Vec<char> = Vec::new();
            if let Some(sp) = cur.iter().rposition(|&x| x == ' ').filter(|_| words) {
                if sp > start && cur.len() - sp < w / 3 {
                    carry = cur.split_off(sp + 1);
                }
            }
            let piece: String = cur.iter().collect();
            out.push(if words {
                piece.trim_end().to_string()
            } else {
                piece
            });
            cur = " ".repeat(lead).chars().chain(carry).collect();
            used = cur.iter().map(|&x| char_width(x)).sum();
            first = false;
        }
        cur.push(c);
        used += cw;
    }
    if cur.iter().any(|c| *c != ' ') {
        out.push(cur.into_iter().collect());
    }
    out
}

fn button(t: Theme, label: &str, selected: bool) -> Span<'static> {
    if selected {
        Span::styled(format!("[> {label} <]"), t.selected())
    } else {
        Span::styled(format!("[  {label}  ]"), Style::new())
    }
}

pub fn draw(f: &mut Frame, app: &mut App, area: Rect) {
    let t = app.cfg.theme;
    let palette_rows = match &app.popup {
        Some(Popup::Palette { query, .. }) => app.palette_entries(query),
        _ => Vec::new(),
    };
    let Some(popup) = &mut app.popup else { return };
    match popup {
        Popup::Palette { query, selected } => {
            let r = centered(area, 90, area.height.saturating_sub(4));
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(t.border(true))
                .title(Span::styled(
                    " commands · type to filter · ↑/↓ · ⏎ runs · esc closes ",
                    t.title(),
                ));
            let inner = block.inner(r);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let mut lines = vec![
                Line::from(vec![
                    Span::styled(" : ", t.key()),
                    Span::raw(clean(query)),
                    Span::styled("▏", t.key()),
                ]),
                Line::default(),
            ];
            let room = (inner.height as usize).saturating_sub(lines.len());
            let sel = (*selected).min(palette_rows.len().saturating_sub(1));
            let skip = (sel + 1).saturating_sub(room);
            if palette_rows.is_empty() {
                lines.push(Line::from(Span::styled(
                    " no action matches (backspace to widen)",
                    t.warn(),
                )));
            }
            let w = inner.width as usize;
            for (i, e) in palette_rows.iter().enumerate().skip(skip).take(room) {
                let marker = if i == sel { "▶" } else { " " };
                let tail = if e.available { "" } else { "  (not here)" };
                let text = fit(
                    &format!("{marker} {:<8} {:<20} {}{tail}", e.key, e.name, e.help),
                    w,
                );
                let style = if i == sel {
                    t.selected()
                } else if e.available {
                    Style::new()
                } else {
                    t.dim()
                };
                lines.push(Line::from(Span::styled(text, style)));
            }
            f.render_widget(Paragraph::new(lines), inner);
        }
        Popup::Help { scroll } => {
            let lines = help::lines(t, app.cfg.read_only, &app.cfg.keys);
            let r = centered(area, 96, area.height.saturating_sub(2));
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(t.border(true))
                .title(Span::styled(" help · j/k scroll · esc closes ", t.title()));
            let inner = block.inner(r);
            let max = lines.len().saturating_sub(inner.height as usize);
            *scroll = (*scroll).min(max);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let visible: Vec<Line> = lines
                .into_iter()
                .skip(*scroll)
                .take(inner.height as usize)
                .collect();
            f.render_widget(Paragraph::new(visible), inner);
        }
        Popup::Confirm {
            title,
            lines,
            confirm_label,
            action,
            scroll,
            yes,
        } => {
            let pw = area.width.saturating_sub(2).min(120);
            let text_w = pw.saturating_sub(4) as usize;
            let wrapped: Vec<Line> = lines
                .iter()
                .flat_map(|l| {
                    let style = tone(t, l);
                    wrap(l, text_w)
                        .into_iter()
                        .map(move |piece| Line::from(Span::styled(format!(" {piece}"), style)))
                })
                .collect();
            // Borders, the body, a blank line and the buttons.
            let h = (wrapped.len() as u16 + 4).min(area.height.saturating_sub(2));
            let r = centered(area, pw, h);
            let writes = matches!(action, PopupAction::Apply { .. });
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Double)
                .border_style(if writes { t.partial() } else { t.border(true) })
                .title(Span::styled(
                    format!(" {} ", fit(&clean(title), pw.saturating_sub(4) as usize)),
                    t.title(),
                ));
            let inner = block.inner(r);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let body_h = inner.height.saturating_sub(2) as usize;
            let total = wrapped.len();
            let max = total.saturating_sub(body_h);
            *scroll = (*scroll).min(max);
            let visible: Vec<Line> = wrapped.into_iter().skip(*scroll).take(body_h).collect();
            f.render_widget(
                Paragraph::new(visible),
                Rect {
                    height: body_h as u16,
                    ..inner
                },
            );
            if total > body_h {
                let pos = format!(
                    " {}-{}/{} · j/k scroll ",
                    *scroll + 1,
                    (*scroll + body_h).min(total),
                    total
                );
                let x = r.right().saturating_sub(width(&pos) as u16 + 1);
                f.render_widget(
                    Paragraph::new(Span::styled(pos, t.dim())),
                    Rect {
                        x,
                        y: r.bottom().saturating_sub(1),
                        width: r.right().saturating_sub(x),
                        height: 1,
                    },
                );
            }
            let keys = match action {
                PopupAction::Close => vec![
                    Span::raw(" "),
                    button(t, confirm_label, true),
                    Span::styled("   esc close", t.dim()),
                ],
                PopupAction::Apply { .. } => vec![
                    Span::raw(" "),
                    button(t, "No", !*yes),
                    Span::raw("  "),
                    button(t, confirm_label, *yes),
                    Span::styled("   y yes · Tab switch · esc cancel", t.dim()),
                ],
                PopupAction::NextStep { .. } => vec![
                    Span::raw(" "),
                    button(t, "stop here", !*yes),
                    Span::raw("  "),
                    button(t, confirm_label, *yes),
                    Span::styled("   y next step · Tab switch · esc stop", t.dim()),
                ],
            };
            f.render_widget(
                Paragraph::new(Line::from(keys)),
                Rect {
                    y: inner.bottom().saturating_sub(1),
                    height: 1,
                    ..inner
                },
            );
        }
        Popup::Reason {
            kind,
            ids,
            text,
            error,
        } => {
            let r = centered(area, 80, 8);
            let what = if ids.len() == 1 {
                clean(&crate::core::rows::short_id(&ids[0]))
            } else {
                format!("{} marked submissions", ids.len())
            };
            let block = Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Double)
                .border_style(t.partial())
                .title(Span::styled(
                    format!(" {} {what}: why? ", crate::tui::act::title_word(*kind)),
                    t.title(),
                ));
            let inner = block.inner(r);
            f.render_widget(Clear, r);
            f.render_widget(block, r);
            let room = (inner.width as usize).saturating_sub(4);
            // Show the end of a long reason: that is where the operator types.
            let shown: String = {
                let chars: Vec<char> = clean(text).chars().collect();
                let mut w = 0;
                let mut start = chars.len();
                while start > 0 && w + char_width(chars[start - 1]) <= room.saturating_sub(1) {
                    start -= 1;
                    w += char_width(chars[start]);
                }
                chars[start..].iter().collect()
            };
            let mut lines = vec![
                Line::from(Span::styled(
                    " A reason is required; it is recorded in the audit trail.",
                    t.dim(),
                )),
                Line::default(),
                Line::from(vec![
                    Span::styled(" > ", t.key()),
                    Span::raw(shown),
                    Span::styled("▏", t.key()),
                ]),
            ];
            lines.push(match error {
                Some(e) => Line::from(Span::styled(format!(" ✗ {}", clean(e)), t.error())),
                None => Line::default(),
            });
            lines.push(Line::from(vec![
                Span::styled(" ⏎", t.key()),
                Span::styled(" preview the writes", t.dim()),
                Span::styled("   esc", t.key()),
                Span::styled(" cancel", t.dim()),
            ]));
            f.render_widget(Paragraph::new(lines), inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_the_indent_of_long_rows() {
        let out = wrap("    abcdefghijklmnop", 10);
        assert_eq!(out, ["    abcdef", "      ghij", "      klmn", "      op"]);
        assert_eq!(wrap("short", 10), ["short"]);
        // Prose breaks after a space near the edge.
        assert_eq!(
            wrap("the quick brown fox jumps", 12),
            ["the quick", "  brown fox", "  jumps"]
        );
        // Row data wraps at the edge, spaces kept.
        assert_eq!(
            wrap("{\"a\":\"b c d e f\"}", 10),
            ["{\"a\":\"b c ", "  d e f\"}"]
        );
    }
}
