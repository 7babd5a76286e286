//! The body of a JSON string in an entry's stored bytes, checked as `serde_json` checks a
//! string it skips (known escapes, four hex digits after `\u`, no control byte) and as UTF-8
//! (`std::str::from_utf8`'s rules), found at SIMD speed: skipping tool results and arguments is
//! most of reading a whale session, and the runtime's texts (logs, command output) hold an escape
//! (`\n`) or a non-ASCII character every few dozen bytes.

/// The closing quote's index of the string whose contents begin at `i` (just after its opening
/// quote), and whether the contents hold an escape; `None` when the string is not closed, holds
/// an escape `serde_json` refuses or a control byte, or is not UTF-8.
pub(super) fn string_body(b: &[u8], i: usize) -> Option<(usize, bool)> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { string_body_avx2(b, i) };
    }
    string_body_from(b, i, false)
}

/// `string_body` by `plain_end` (sixteen bytes at a time), `escaped` carried in.
pub(super) fn string_body_from(b: &[u8], mut i: usize, mut escaped: bool) -> Option<(usize, bool)> {
    loop {
        i = plain_end(b, i);
        match *b.get(i)? {
            b'"' => return Some((i, escaped)),
            b'\\' => {
                escaped = true;
                i = escape_end(b, i)?;
            }
            _ => return None,
        }
    }
}

/// The index just past the escape that begins at `b[i]` (a backslash), or `None` when it is not
/// one `serde_json` accepts.
fn escape_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 2),
        b'u' => {
            let hex = b.get(i + 2..i + 6)?;
            hex.iter().all(u8::is_ascii_hexdigit).then_some(i + 6)
        }
        _ => None,
    }
}

/// `string_body` thirty-two bytes at a time: each window's stop bytes (a quote, a backslash, a
/// control byte, a non-ASCII byte) are found at once, then taken in turn from the window's mask,
/// so an escape or a character costs a few instructions rather than another load and compare of
/// the bytes after it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn string_body_avx2(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let control = _mm256_set1_epi8(0x1f);
    let mut escaped = false;
    while i + 32 <= b.len() {
        // SAFETY: the load reads the 32 bytes at `i`, inside `b` (unaligned loads are allowed).
        let w = unsafe { _mm256_loadu_si256(b.as_ptr().add(i).cast::<__m256i>()) };
        // `max(w, 0x1f) == 0x1f` (unsigned): the byte is at most 0x1f; a byte's top bit, which
        // `movemask` takes as it is, marks a non-ASCII byte.
        let stop = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(w, quote), _mm256_cmpeq_epi8(w, backslash)),
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(w, control), control), w),
        );
        let mut mask = _mm256_movemask_epi8(stop) as u32;
        let base = i;
        i = base + 32;
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            let end = match b[at] {
                b'"' => return Some((at, escaped)),
                b'\\' => {
                    escaped = true;
                    escape_end(b, at)?
                }
                c if c >= 0x80 => at + utf8_char_len(&b[at..])?,
                _ => return None,
            };
            if end >= base + 32 {
                // The escape or character ends past the window: the next window starts there.
                i = end;
                break;
            }
            // The stops it covered (a character's continuation bytes, an escaped quote) are
            // passed over with it.
            mask &= u32::MAX << (end - base);
        }
    }
    string_body_from(b, i, escaped)
}

/// The index of the first byte at or after `i` that ends a string's plain run (a quote, a
/// backslash, a control byte, or a byte that does not begin a valid UTF-8 character), or
/// `b.len()`. Each non-ASCII character on the way is checked as `std::str::from_utf8` checks it.
fn plain_end(b: &[u8], mut i: usize) -> usize {
    loop {
        i = stop_byte(b, i);
        match b.get(i) {
            Some(&c) if c >= 0x80 => match utf8_char_len(&b[i..]) {
                Some(len) => i += len,
                None => return i,
            },
            _ => return i,
        }
    }
}

/// The length of the valid UTF-8 character `b` begins with (its first byte is not ASCII), or
/// `None`: the well-formed byte sequences of the Unicode standard (table 3-7), which are what
/// `std::str::from_utf8` accepts (no overlong forms, no surrogates, nothing above U+10FFFF).
fn utf8_char_len(b: &[u8]) -> Option<usize> {
    let cont =
        |k: usize, range: std::ops::RangeInclusive<u8>| b.get(k).is_some_and(|c| range.contains(c));
    let tail = |k: usize| cont(k, 0x80..=0xbf);
    match b[0] {
        0xc2..=0xdf => tail(1).then_some(2),
        0xe0 => (cont(1, 0xa0..=0xbf) && tail(2)).then_some(3),
        0xe1..=0xec | 0xee..=0xef => (tail(1) && tail(2)).then_some(3),
        0xed => (cont(1, 0x80..=0x9f) && tail(2)).then_some(3),
        0xf0 => (cont(1, 0x90..=0xbf) && tail(2) && tail(3)).then_some(4),
        0xf1..=0xf3 => (tail(1) && tail(2) && tail(3)).then_some(4),
        0xf4 => (cont(1, 0x80..=0x8f) && tail(2) && tail(3)).then_some(4),
        _ => None,
    }
}

/// The index of the first byte at or after `i` that is a quote, a backslash, a control byte or
/// not ASCII, or `b.len()`. Sixteen bytes at a time with SSE2 (part of every x86-64 CPU), the
/// rest by `stop_byte_words`: skipping bodies is most of the scan.
#[cfg(target_arch = "x86_64")]
pub(super) fn stop_byte(b: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in the x86-64 baseline, and each load reads 16 bytes inside `b`
    // (`i + 16 <= b.len()`), unaligned loads being allowed.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control = _mm_set1_epi8(0x1f);
        while i + 16 <= b.len() {
            let w = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
            // `max(w, 0x1f) == 0x1f` (unsigned): the byte is at most 0x1f; a byte's top bit,
            // which `movemask` takes as it is, marks a non-ASCII byte.
            let stop = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, backslash)),
                _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(w, control), control), w),
            );
            let mask = _mm_movemask_epi8(stop) as u32;
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    stop_byte_words(b, i)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn stop_byte(b: &[u8], i: usize) -> usize {
    stop_byte_words(b, i)
}

/// `stop_byte` eight bytes at a time: a byte of the word is flagged when it equals `"` or `\`,
/// is below 0x20 or is 0x80 and above (the flag of a lower byte can carry into a higher one,
/// never the other way, so the lowest flag is exact).
pub(super) fn stop_byte_words(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let flags = ((w ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES)
            | (w ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES)
            | w.wrapping_sub(ONES * 0x20)
            | w)
            & HIGH;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !matches!(b[i], b'"' | b'\\' | 0..=0x1f | 0x80..) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The string body a byte-by-byte reading finds: the closing quote and whether an escape came
    /// before it, `None` for a bad escape, a control byte, text that is not UTF-8 or no quote.
    fn naive_body(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
        let mut escaped = false;
        loop {
            match *b.get(i)? {
                b'"' => return Some((i, escaped)),
                b'\\' => {
                    escaped = true;
                    i = escape_end(b, i)?;
                }
                0..=0x1f => return None,
                c if c >= 0x80 => i += utf8_char_len(&b[i..])?,
                _ => i += 1,
            }
        }
    }

    /// Both ways of reading a string body agree with the byte-by-byte reading, on strings long
    /// enough for several windows, with every stop (each escape, non-ASCII characters of two to
    /// four bytes, an escaped quote, a bad escape, a control byte, a byte no character begins
    /// with, a character cut short) at every offset, so each crosses a window's edge somewhere.
    #[test]
    fn string_bodies_are_read_as_byte_by_byte() {
        let stops: [&[u8]; 16] = [
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\\x",
            b"\\u12g4",
            b"\x01",
            b"\x1f",
            b"\xff",
            b"\xe2\x82",
            b"\"",
        ];
        let filler = "abcdefghijklmnopqrstuvwxyzé0123456789\\n".repeat(3);
        let mut checked = 0;
        for stop in stops {
            for at in 0..70 {
                let mut s = b"\"".to_vec();
                s.extend_from_slice(&filler.as_bytes()[..at]);
                s.extend_from_slice(stop);
                s.extend_from_slice(filler.as_bytes());
                s.extend_from_slice(b"\" tail");
                let want = naive_body(&s, 1);
                assert_eq!(
                    string_body_from(&s, 1, false),
                    want,
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
                assert_eq!(
                    string_body(&s, 1),
                    want,
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
                // Cut short: no closing quote.
                let cut = &s[..s.len() - 6];
                assert_eq!(string_body(cut, 1), naive_body(cut, 1));
                checked += 1;
            }
        }
        assert_eq!(checked, 16 * 70);
        // The filler itself has escapes: a clean string reads to its quote, escaped.
        let clean = format!("\"{filler}{filler}\"");
        assert_eq!(
            string_body(clean.as_bytes(), 1),
            Some((clean.len() - 1, true))
        );
    }

    #[test]
    fn plain_end_finds_the_first_stop_byte() {
        let text = "abcdefghé€😀 ijklmnopqrstuvwxyz".repeat(3);
        for stop in ["\"", "\\", "\n", "\u{1}", "\u{1f}"] {
            for at in 0..text.len() {
                if !text.is_char_boundary(at) {
                    continue;
                }
                let s = format!("{}{stop}{}", &text[..at], &text[at..]);
                assert_eq!(plain_end(s.as_bytes(), 0), at, "{stop:?} at {at}");
            }
        }
        assert_eq!(plain_end("é\u{7f} ~".as_bytes(), 0), 5);
        let long = format!("{}\u{80}\u{ff}{}\"", "~".repeat(20), "é".repeat(20));
        assert_eq!(plain_end(long.as_bytes(), 0), long.len() - 1);
    }

    /// Both ways of finding a stop byte agree with a byte-by-byte search, from every start.
    #[test]
    fn stop_byte_finds_the_first_quote_backslash_control_or_non_ascii_byte() {
        let text = "abc\u{7f}~ é€😀 ijklmnopq\"rst\\uvw\u{1f}xyz \u{10ffff}".repeat(3);
        let b = text.as_bytes();
        for from in 0..=b.len() {
            let naive = (from..b.len())
                .find(|&k| matches!(b[k], b'"' | b'\\' | 0..=0x1f | 0x80..))
                .unwrap_or(b.len());
            assert_eq!(stop_byte(b, from), naive, "from {from}");
            assert_eq!(stop_byte_words(b, from), naive, "from {from}");
        }
    }

    /// A character is taken exactly when `std::str::from_utf8` takes it, with every lead byte
    /// and every second byte, and the boundaries of the ranges for the third and fourth.
    #[test]
    fn utf8_char_len_is_the_standard_librarys_check() {
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for lead in 0x80..=0xffu8 {
            for second in 0..=0xffu8 {
                for third in edges {
                    for fourth in edges {
                        let seq = [lead, second, third, fourth];
                        let std_len = (2..=4).find(|&n| std::str::from_utf8(&seq[..n]).is_ok());
                        assert_eq!(utf8_char_len(&seq), std_len, "{seq:x?}");
                    }
                }
                // Cut short: a character needs all its bytes.
                assert_eq!(
                    utf8_char_len(&[lead, second]),
                    std::str::from_utf8(&[lead, second]).ok().map(|_| 2)
                );
            }
            assert_eq!(utf8_char_len(&[lead]), None);
        }
    }
}
