//! Terminal-safe text, shared by the CLI and the TUI: which characters must never reach a
//! terminal raw, how database text is shown instead, and the writer that is the CLI's last line
//! of defence. A leaf: it imports nothing from the crate, so every layer above `core` may use it.

use std::io::Write;

/// Whether `c` must never reach a terminal raw: control characters (C0 including ESC, CR, BS and
/// NUL; DEL; C1 such as the 8-bit CSI U+009B), bidi embeddings/overrides/isolates and marks, and
/// zero-width characters (they hide or reorder what the operator reads).
pub fn is_hostile_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Make text from the database safe to print: control characters (ANSI/OSC escapes, CR, BS, NUL),
/// bidi overrides and zero-width characters are shown as visible escapes instead of acting on the
/// terminal.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(is_hostile_char) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            // Cc characters (C0, DEL, C1) are all below U+0100.
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_hostile_char(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A last line of defence for everything the CLI prints: any hostile character (see
/// [`is_hostile_char`]) other than newline and tab that still reaches the writer is written as a
/// JSON-style `\uXXXX` escape, which is visible text in human output and an equivalent escape
/// inside JSON strings (serde_json leaves DEL, C1, bidi and zero-width characters raw). Bytes that
/// are not UTF-8 are written as `\xNN`. Call [`TerminalSafe::finish`] at the end.
pub struct TerminalSafe<'a> {
    inner: &'a mut dyn Write,
    pending: Vec<u8>,
}

impl<'a> TerminalSafe<'a> {
    pub fn new(inner: &'a mut dyn Write) -> TerminalSafe<'a> {
        TerminalSafe {
            inner,
            pending: Vec::new(),
        }
    }

    /// Write out a trailing incomplete UTF-8 sequence (escaped) and flush.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        for b in rest {
            write!(self.inner, "\\x{b:02x}")?;
        }
        self.inner.flush()
    }

    fn emit(&mut self, s: &str) -> std::io::Result<()> {
        if !has_hostile_char_but_newline_or_tab(s) {
            return self.inner.write_all(s.as_bytes());
        }
        let mut out = String::with_capacity(s.len() + 16);
        for c in s.chars() {
            if c != '\n' && c != '\t' && is_hostile_char(c) {
                out.push_str(&format!("\\u{:04x}", c as u32));
            } else {
                out.push(c);
            }
        }
        self.inner.write_all(out.as_bytes())
    }
}

/// `s.chars().any(|c| c != '\n' && c != '\t' && is_hostile_char(c))`, skipping printable ASCII,
/// newlines and tabs (nearly all of a pretty JSON document) sixteen bytes at a time; a non-ASCII
/// character is decoded and asked of `is_hostile_char` only when its lead byte can begin a
/// hostile one.
pub(crate) fn has_hostile_char_but_newline_or_tab(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        i = suspect_byte(b, i);
        let Some(&c) = b.get(i) else {
            return false;
        };
        // Every hostile character but a C0 control or DEL starts with one of these: C1 controls
        // (U+0080–U+009F) with 0xC2, U+061C with 0xD8, the zero-width and bidi controls of
        // U+200B–U+2069 with 0xE2, U+FEFF with 0xEF.
        if c < 0x80 || matches!(c, 0xc2 | 0xd8 | 0xe2 | 0xef) {
            let ch = s[i..].chars().next().expect("a character starts here");
            if is_hostile_char(ch) {
                return true;
            }
            i += ch.len_utf8();
        } else {
            // `s` is UTF-8: the lead byte gives the character's length.
            i += match c {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
        }
    }
}

/// The index of the first byte at or after `i` that is a control other than a newline or a tab,
/// DEL, or not ASCII; or `b.len()`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn suspect_byte(b: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in the x86-64 baseline, and each load reads 16 bytes inside `b`
    // (`i + 16 <= b.len()`), unaligned loads being allowed.
    unsafe {
        let control = _mm_set1_epi8(0x1f);
        let newline = _mm_set1_epi8(b'\n' as i8);
        let tab = _mm_set1_epi8(b'\t' as i8);
        let del = _mm_set1_epi8(0x7f);
        while i + 16 <= b.len() {
            let w = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
            // `max(w, 0x1f) == 0x1f` (unsigned): a control byte; a byte's top bit, which
            // `movemask` takes as it is, marks a non-ASCII byte.
            let controls = _mm_andnot_si128(
                _mm_or_si128(_mm_cmpeq_epi8(w, newline), _mm_cmpeq_epi8(w, tab)),
                _mm_cmpeq_epi8(_mm_max_epu8(w, control), control),
            );
            let stop = _mm_or_si128(_mm_or_si128(controls, _mm_cmpeq_epi8(w, del)), w);
            let mask = _mm_movemask_epi8(stop) as u32;
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    suspect_byte_plain(b, i)
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn suspect_byte(b: &[u8], i: usize) -> usize {
    suspect_byte_plain(b, i)
}

pub(crate) fn suspect_byte_plain(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b'\n' | b'\t' | 0x20..=0x7e) {
        i += 1;
    }
    i
}

impl Write for TerminalSafe<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Only a sequence split across writes needs a copy; the common case reads `buf` itself.
        let data = if self.pending.is_empty() {
            None
        } else {
            self.pending.extend_from_slice(buf);
            Some(std::mem::take(&mut self.pending))
        };
        let mut rest: &[u8] = data.as_deref().unwrap_or(buf);
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.emit(s)?;
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // `good` was just validated.
                    self.emit(std::str::from_utf8(good).unwrap_or_default())?;
                    match e.error_len() {
                        None => {
                            // An incomplete sequence at the end: wait for the next write.
                            self.pending = bad.to_vec();
                            break;
                        }
                        Some(n) => {
                            for b in &bad[..n] {
                                write!(self.inner, "\\x{b:02x}")?;
                            }
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time check answers as the character-by-character one, wherever a hostile or
    /// harmless character falls in the text.
    #[test]
    fn the_fast_hostile_check_agrees_with_the_characters() {
        let base = "{\n  \"text\": \"24°C é€😀 abc\tdefghijklmnop\"\n}";
        for c in [
            '\0', '\u{1b}', '\r', '\u{7f}', '\u{80}', '\u{9b}', '\u{9f}', '\u{a0}', '\u{61c}',
            '\u{200b}', '\u{200f}', '\u{2028}', '\u{202e}', '\u{2060}', '\u{2069}', '\u{feff}',
            '\n', '\t', ' ', '~', '°', '\u{2070}',
        ] {
            for (at, _) in base.char_indices() {
                let s = format!("{}{c}{}", &base[..at], &base[at..]);
                let want = s
                    .chars()
                    .any(|c| c != '\n' && c != '\t' && is_hostile_char(c));
                assert_eq!(has_hostile_char_but_newline_or_tab(&s), want, "{s:?}");
            }
        }
    }

    /// Every character, at every offset of a sixteen-byte window (both ways of finding a
    /// suspect byte), is found hostile exactly when `is_hostile_char` says so.
    #[test]
    fn the_fast_hostile_check_agrees_on_every_character() {
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            let want = c != '\n' && c != '\t' && is_hostile_char(c);
            for at in [0, 15, 17] {
                let s = format!("{}{c}{}", "a".repeat(at), " é".repeat(9));
                assert_eq!(
                    has_hostile_char_but_newline_or_tab(&s),
                    want,
                    "{c:?} at {at}"
                );
            }
        }
        let b = "ab\n\tcd\u{1}e\u{7f}fé".repeat(3);
        for from in 0..=b.len() {
            let naive = (from..b.len())
                .find(|&k| !matches!(b.as_bytes()[k], b'\n' | b'\t' | 0x20..=0x7e))
                .unwrap_or(b.len());
            assert_eq!(suspect_byte(b.as_bytes(), from), naive, "from {from}");
            assert_eq!(suspect_byte_plain(b.as_bytes(), from), naive, "from {from}");
        }
    }

    #[test]
    fn sanitize_escapes_terminal_controls() {
        assert_eq!(sanitize("a\x1b[31mb"), "a\\x1b[31mb");
        assert_eq!(sanitize("x\ry\u{8}"), "x\\x0dy\\x08");
        assert_eq!(sanitize("\u{202E}evil"), "\\u{202e}evil");
        assert_eq!(sanitize("ok ✓"), "ok ✓");
        assert_eq!(sanitize("\u{9b}"), "\\x9b");
        assert_eq!(
            sanitize("a\u{200b}\u{feff}\u{2066}b"),
            "a\\u{200b}\\u{feff}\\u{2066}b"
        );
        assert_eq!(sanitize("\x7f\0"), "\\x7f\\x00");
    }

    #[test]
    fn terminal_safe_writer_escapes_what_slips_through() {
        let mut buf = Vec::new();
        {
            let mut w = TerminalSafe::new(&mut buf);
            // A character split across two writes, a raw ESC, a C1 CSI, an RLO and a bad byte.
            let bytes = "é\x1b[2J\u{9b}\u{202e}x\n\tok".as_bytes();
            w.write_all(&bytes[..1]).unwrap();
            w.write_all(&bytes[1..]).unwrap();
            w.write_all(&[0xff, b'!']).unwrap();
            w.write_all(&[0xc3]).unwrap();
            w.finish().unwrap();
        }
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text, "é\\u001b[2J\\u009b\\u202ex\n\tok\\xff!\\xc3");
        // In JSON the escape is equivalent to the raw character.
        let v: serde_json::Value = serde_json::from_str("\"\\u009b\\u202e\"").unwrap();
        assert_eq!(v.as_str().unwrap(), "\u{9b}\u{202e}");
    }
}

/// `n` and the noun in agreement with it: `1 entry`, `2 entries`, `0 rows`.
/// `7400` as `7,400`: counts an operator compares at a glance.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod plural_tests {
    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(super::plural(1u32, "entry", "entries"), "1 entry");
        assert_eq!(super::plural(0u32, "entry", "entries"), "0 entries");
        assert_eq!(super::plural(11u32, "row", "rows"), "11 rows");
    }

    #[test]
    fn thousands_are_grouped() {
        for (n, s) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (7400, "7,400"),
            (148000, "148,000"),
            (1234567, "1,234,567"),
        ] {
            assert_eq!(super::thousands(n), s);
        }
    }
}
