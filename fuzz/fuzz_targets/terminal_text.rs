//! `text`: the terminal-safe writer, whose check for hostile characters skips safe ASCII sixteen
//! bytes at a time with SSE2 (`unsafe` loads), against a character-at-a-time reference: the
//! writer's output for any bytes, written in chunks of any sizes (a character may be split
//! between writes), must be the reference escaping of the whole input (`\uXXXX` for a hostile
//! character but a newline or a tab, `\xNN` for each byte of an invalid sequence). The fast
//! check and the SSE2 scan are also compared with their scalar forms directly.

#![no_main]

use std::fmt::Write as _;
use std::io::Write as _;

use libfuzzer_sys::fuzz_target;
use turnscope_core::fuzzing::{
    has_hostile_char_but_newline_or_tab, suspect_byte, suspect_byte_plain,
};
use turnscope_core::text::{is_hostile_char, TerminalSafe};

fn escaped(c: char) -> bool {
    c != '\n' && c != '\t' && is_hostile_char(c)
}

/// The writer's output, character by character.
fn reference(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if escaped(c) {
                write!(out, "\\u{:04x}", c as u32).unwrap();
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            write!(out, "\\x{b:02x}").unwrap();
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, bytes)) = data.split_first() else {
        return;
    };
    // Chunk sizes from the first byte: 0 writes the input at once, anything else picks sizes
    // of 1 to 32 bytes (xorshift), so characters are split between writes.
    let mut out = Vec::new();
    {
        let mut w = TerminalSafe::new(&mut out);
        let mut state = u32::from(seed) | 0x5a00;
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = if seed == 0 {
                rest.len()
            } else {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 32 + 1) as usize
            };
            let (now, later) = rest.split_at(n.min(rest.len()));
            w.write_all(now).unwrap();
            rest = later;
        }
        w.finish().unwrap();
    }
    let out = String::from_utf8(out).expect("the writer writes UTF-8");
    assert_eq!(
        out,
        reference(bytes),
        "{:?}",
        String::from_utf8_lossy(bytes)
    );

    for chunk in bytes.utf8_chunks() {
        let s = chunk.valid();
        assert_eq!(
            has_hostile_char_but_newline_or_tab(s),
            s.chars().any(escaped),
            "{s:?}"
        );
    }
    // From every start up to 64, then every 61st byte (a scan from each start is quadratic).
    for i in (0..=bytes.len()).filter(|&i| i <= 64 || i % 61 == 0) {
        let want = (i..bytes.len())
            .find(|&k| !matches!(bytes[k], b'\n' | b'\t' | 0x20..=0x7e))
            .unwrap_or(bytes.len());
        assert_eq!(suspect_byte(bytes, i), want, "from {i}");
        assert_eq!(suspect_byte_plain(bytes, i), want, "from {i}");
    }
});
