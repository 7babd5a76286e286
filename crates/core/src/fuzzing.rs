//! Entry points for the fuzz targets (`fuzz/` at the repository root), behind the non-default
//! `fuzzing` feature. The read path runs `unsafe` code over text that models and tools wrote (the
//! SIMD string scans, the compact scanner's `from_utf8_unchecked`, the terminal writer's SSE2
//! scan); their safe references (the serde visitors, the skeleton oracle, the scalar scans) are
//! private. The targets feed the same bytes to both and assert equal answers. Nothing here is
//! part of the public API: a build without the feature has no such module.

pub use crate::journal::fuzzing::{
    compact_fast, compact_oracle, compact_serde, scanner_takes, serde_takes, stop_byte,
    stop_byte_words, string_body, string_body_sse2,
};

/// Whether `s` holds a hostile character other than a newline or a tab, as the terminal-safe
/// writer asks it: SSE2 over ASCII, then the lead bytes that can begin one.
pub fn has_hostile_char_but_newline_or_tab(s: &str) -> bool {
    crate::text::has_hostile_char_but_newline_or_tab(s)
}

/// The first control other than a newline or a tab, DEL or non-ASCII byte at or after `i` (or
/// `b.len()`), sixteen bytes at a time with SSE2.
pub fn suspect_byte(b: &[u8], i: usize) -> usize {
    crate::text::suspect_byte(b, i)
}

/// `suspect_byte` a byte at a time.
pub fn suspect_byte_plain(b: &[u8], i: usize) -> usize {
    crate::text::suspect_byte_plain(b, i)
}
