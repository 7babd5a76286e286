//! The one popup of the 2.x screens' writes (an action's, `write.rs`, and an undo's, `undo.rs`):
//! a reason typed, the preview with No selected and the choice line, the result; its keys and its
//! drawing, so that every write asks the same way (gitui's one confirm popup).

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::text::clean;
use crate::theme::Theme;

/// What a key does while a reason is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    Stay,
    /// ⏎: the reason is given (the caller decides whether a blank one will do).
    Submit,
    Close,
}

/// A key on the reason line: the text edited, or what it asks.
pub fn reason_key(code: KeyCode, text: &mut String) -> Typed {
    match code {
        KeyCode::Esc => Typed::Close,
        KeyCode::Enter => Typed::Submit,
        KeyCode::Backspace => {
            text.pop();
            Typed::Stay
        }
        KeyCode::Char(c) => {
            text.push(c);
            Typed::Stay
        }
        _ => Typed::Stay,
    }
}

/// What a key does on the preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Stay,
    Apply,
    Close,
}

/// A key on the preview: ←/→ (tab) moves between Yes and No, `A` or ⏎ on Yes applies, ⏎ on No,
/// esc or `n` closes.
pub fn confirm_key(code: KeyCode, yes: &mut bool) -> Choice {
    match code {
        KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab => {
            *yes = !*yes;
            Choice::Stay
        }
        KeyCode::Char('A') => Choice::Apply,
        KeyCode::Enter if *yes => Choice::Apply,
        KeyCode::Enter | KeyCode::Esc | KeyCode::Char('n') => Choice::Close,
        _ => Choice::Stay,
    }
}

/// The reason step's lines: what the write does, the text typed, the keys.
pub fn reason_body(what: &str, text: &str, keys: &str) -> Vec<String> {
    vec![
        what.to_string(),
        String::new(),
        format!("reason: {text}▏"),
        String::new(),
        keys.to_string(),
    ]
}

/// The preview's lines and the choice line under them.
pub fn confirm_body(lines: &[String], yes: bool) -> Vec<String> {
    let mut v = lines.to_vec();
    v.push(String::new());
    v.push(format!(
        "{}   {}      A applies · ←/→ choose · esc/n cancel",
        if yes { "[ Yes ]" } else { "  Yes  " },
        if yes { "  No  " } else { "[ No ]" }
    ));
    v
}

/// The result's lines and how to close it.
pub fn done_body(lines: &[String]) -> Vec<String> {
    let mut v = lines.to_vec();
    v.push(String::new());
    v.push("any key closes".into());
    v
}

/// The rows `lines` take once wrapped inside a popup `width` wide (its border aside): a reason
/// a line long wraps, and the popup grows to show it rather than cut it.
fn wrapped_rows(lines: &[String], width: u16) -> u16 {
    let text: Vec<Line> = lines
        .iter()
        .map(|l| Line::from(Span::raw(clean(l))))
        .collect();
    let rows = Paragraph::new(text)
        .wrap(Wrap { trim: false })
        .line_count(width.saturating_sub(2));
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// The popup, centred over `area`: `title` on its border, `body` wrapped (raw text: drawn
/// through `clean`).
pub fn draw(f: &mut Frame, t: &Theme, area: Rect, title: &str, body: Vec<String>) {
    draw_scrolled(f, t, area, title, &body, 0, Vec::new());
}

/// A long popup (a bulk preview, its result): `lines` from `scroll` on, wrapped, over `tail`,
/// which stays in view (the choice line must not scroll away).
pub fn draw_scrolled(
    f: &mut Frame,
    t: &Theme,
    area: Rect,
    title: &str,
    lines: &[String],
    scroll: usize,
    tail: Vec<String>,
) {
    let w = area.width.saturating_sub(4).min(120);
    let h = (wrapped_rows(lines, w) + wrapped_rows(&tail, w) + 2)
        .min(area.height.saturating_sub(2))
        .max(5);
    let rect = Rect::new(
        area.x + (area.width.saturating_sub(w)) / 2,
        area.y + (area.height.saturating_sub(h)) / 2,
        w,
        h,
    );
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), t.title()));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    let [top, bottom] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(wrapped_rows(&tail, w).min(inner.height)),
    ])
    .areas(inner);
    let text =
        |v: &[String]| -> Vec<Line> { v.iter().map(|l| Line::from(Span::raw(clean(l)))).collect() };
    let from = scroll.min(lines.len());
    f.render_widget(
        Paragraph::new(text(&lines[from..])).wrap(Wrap { trim: false }),
        top,
    );
    f.render_widget(
        Paragraph::new(text(&tail)).wrap(Wrap { trim: false }),
        bottom,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_popup_counts_the_rows_its_lines_wrap_to() {
        let short = vec!["abc".to_string(), String::new()];
        assert_eq!(wrapped_rows(&short, 22), 2);
        // 20 columns inside the border: a 45-column reason takes 3 rows, not 1.
        let reason = vec!["word ".repeat(9).trim_end().to_string()];
        assert_eq!(wrapped_rows(&reason, 22), 3);
        assert_eq!(wrapped_rows(&reason, 102), 1);
    }
}
