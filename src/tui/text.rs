//! Small text helpers: terminal-safe one-line text, width-aware truncation, compact numbers, and
//! the OSC 52 clipboard sequence.

use ratatui::text::Span;

/// Text from the database made safe for one terminal line (escapes, newlines and bidi controls
/// are shown as visible escapes).
pub fn clean(text: &str) -> String {
    crate::cli::sanitize(text)
}

/// Display width in terminal cells.
pub fn width(text: &str) -> usize {
    Span::raw(text).width()
}

/// Width of one character (ratatui's unicode width, without a direct dependency).
pub fn char_width(c: char) -> usize {
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
        format!("{} ago", crate::core::time::human_duration(d))
    } else {
        format!("in {}", crate::core::time::human_duration(-d))
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
    fn fit_and_wrap_respect_cell_width() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(fit("✓✓✓", 2), "✓…");
        assert_eq!(compact(1204.0), "1.2k");
        assert_eq!(compact(88.0), "88");
        assert_eq!(dollars(0.001644), "$0.0016");
    }
}
