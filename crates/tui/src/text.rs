//! Small text helpers: terminal-safe one-line text, width-aware truncation, compact numbers, and
//! the OSC 52 clipboard sequence.

use ratatui::buffer::Buffer;
use ratatui::text::{Line, Span};

/// Text from the database made safe for one terminal line (escapes, newlines and bidi controls
/// are shown as visible escapes). Every view passes database text through this.
pub fn clean(text: &str) -> String {
    turnscope_core::text::sanitize(text)
}

/// A span with its text [`clean`]ed (unchanged when it already is: `clean` is idempotent).
pub fn clean_span(s: Span<'_>) -> Span<'_> {
    if s.content.chars().any(turnscope_core::text::is_hostile_char) {
        Span::styled(clean(&s.content), s.style)
    } else {
        s
    }
}

/// Lines with every span [`clean`]ed: views run whole documents through this before drawing.
pub fn clean_lines(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .map(|l| {
            let (style, alignment) = (l.style, l.alignment);
            let mut out = Line::from(l.spans.into_iter().map(clean_span).collect::<Vec<_>>());
            out.style = style;
            out.alignment = alignment;
            out
        })
        .collect()
}

/// The visible stand-in for a hostile character that reached a cell: a control picture for C0
/// (`␛` for ESC, `␀` for NUL, `␍` for CR), `␡` for DEL, `�` for the rest.
pub fn control_picture(c: char) -> char {
    match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
        0x7f => '\u{2421}',
        _ => '\u{FFFD}',
    }
}

/// The last step of every frame: no cell may hand a control character, bidi control or zero-width
/// character to the terminal. Views already show database text through [`clean`]; anything that
/// still slipped into a cell (a zero-width joiner glued to a grapheme, a symbol set directly) is
/// removed from the cell, and a cell made only of such characters shows [`control_picture`].
pub fn scrub(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let sym = cell.symbol();
        if !sym.chars().any(turnscope_core::text::is_hostile_char) {
            continue;
        }
        let kept: String = sym
            .chars()
            .filter(|c| !turnscope_core::text::is_hostile_char(*c))
            .collect();
        if kept.is_empty() {
            let first = sym.chars().next().map_or('\u{FFFD}', control_picture);
            cell.set_char(first);
        } else {
            cell.set_symbol(&kept);
        }
    }
}

/// Display width in terminal cells.
pub fn width(text: &str) -> usize {
    Span::raw(text).width()
}

/// Width of one character (ratatui's unicode width, without a direct dependency).
pub fn char_width(c: char) -> usize {
    // Printable ASCII, most of any text, is one cell: no span made to measure it.
    if (' '..='~').contains(&c) {
        return 1;
    }
    let mut buf = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

/// Cut `text` to at most `max` cells, marking the cut with `…`.
pub fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = char_width(c);
        if w + cw > max - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// `fit` then pad with spaces to exactly `n` cells.
pub fn pad(text: &str, n: usize) -> String {
    let mut s = fit(text, n);
    let w = width(&s);
    s.push_str(&" ".repeat(n.saturating_sub(w)));
    s
}

/// `1204` → `1.2k`, `2_500_000` → `2.5M`.
pub fn compact(n: f64) -> String {
    if n.is_nan() {
        return "?".into();
    }
    let a = n.abs();
    if a >= 1_000_000.0 {
        format!("{:.1}M", n / 1_000_000.0)
    } else if a >= 10_000.0 {
        format!("{:.0}k", n / 1000.0)
    } else if a >= 1000.0 {
        format!("{:.1}k", n / 1000.0)
    } else {
        format!("{n}")
    }
}

/// `$0.0016`: cost with four significant decimals.
pub fn dollars(n: f64) -> String {
    if n.is_nan() {
        return "$?".into();
    }
    if n >= 1.0 {
        format!("${n:.2}")
    } else {
        format!("${n:.4}")
    }
}

/// Relative time: `3m12s ago`, `in 18s`.
pub fn ago(now_ms: i64, t_ms: i64) -> String {
    let d = now_ms - t_ms;
    if d >= 0 {
        format!("{} ago", turnscope_core::journal::time::human_duration(d))
    } else {
        format!("in {}", turnscope_core::journal::time::human_duration(-d))
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        let idx = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for (i, v) in idx.iter().enumerate() {
            if i <= chunk.len() {
                out.push(B64[*v as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The OSC 52 sequence that puts `text` on the clipboard of the terminal (also over SSH; tmux
/// forwards it with `set-clipboard on`).
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let v = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (i, o) in v {
            assert_eq!(base64(i.as_bytes()), o);
        }
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }

    #[test]
    fn char_width_is_the_spans_width() {
        for c in (0u32..0x3000)
            .filter_map(char::from_u32)
            .chain(['😀', '\u{fe0f}', '界'])
        {
            let mut buf = [0u8; 4];
            assert_eq!(
                char_width(c),
                Span::raw(&*c.encode_utf8(&mut buf)).width(),
                "{c:?}"
            );
        }
    }

    #[test]
    fn fit_and_wrap_respect_cell_width() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(fit("✓✓✓", 2), "✓…");
        assert_eq!(compact(1204.0), "1.2k");
        assert_eq!(compact(88.0), "88");
        assert_eq!(dollars(0.001644), "$0.0016");
    }

    #[test]
    fn scrub_removes_hostile_characters_from_cells() {
        let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 4, 1));
        buf[(0, 0)].set_symbol("\x1b");
        buf[(1, 0)].set_symbol("a\u{200d}");
        buf[(2, 0)].set_symbol("\u{202e}");
        buf[(3, 0)].set_symbol("\u{9b}");
        scrub(&mut buf);
        let syms: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
        assert_eq!(syms, ["␛", "a", "\u{FFFD}", "\u{FFFD}"]);
        assert_eq!(clean("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
    }
}
