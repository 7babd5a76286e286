//! The journal's fast paths and their safe references, side by side for the fuzz targets
//! (`fuzz/` at the repository root), re-exported by `crate::fuzzing`. Thin wrappers only: each
//! calls the code the read path runs, unchanged.

use crate::journal::compact::{parse_compact_previews, parse_compact_with, Previews};
use crate::journal::compact_de::parse_top;
use crate::journal::compact_oracle::skeleton_parse;
use crate::journal::compact_scan::scan_top_previews;
use crate::journal::entry::Entry;
use crate::journal::scan_string;

/// The compact parse as the read path runs it: the byte scanner (`compact_scan`, whose text is
/// cut with `from_utf8_unchecked`), falling back to the serde visitors when it declines.
pub fn compact_fast(
    position: i64,
    entry_id: &str,
    data: &[u8],
    previews: Previews,
) -> (Entry, bool) {
    parse_compact_previews(position, entry_id, data, previews)
}

/// The compact parse by the serde visitors alone (`compact_de`): no scanner, no `unsafe`.
pub fn compact_serde(
    position: i64,
    entry_id: &str,
    data: &[u8],
    previews: Previews,
) -> (Entry, bool) {
    parse_compact_with(position, entry_id, data, parse_top, previews)
}

/// The compact parser as first written (`compact_oracle`): a JSON skeleton of the kept keys read
/// by the full parse's accessors. Keeps previews.
pub fn compact_oracle(position: i64, entry_id: &str, data: &[u8]) -> (Entry, bool) {
    skeleton_parse(position, entry_id, data)
}

/// Whether the byte scanner takes the row itself (`false`: it leaves it to the serde visitors).
pub fn scanner_takes(data: &[u8], keep_previews: bool) -> bool {
    scan_top_previews(data, keep_previews).is_some()
}

/// Whether the serde visitors take the row as a compact entry (else the full parse reads it).
pub fn serde_takes(data: &[u8]) -> bool {
    std::str::from_utf8(data)
        .ok()
        .filter(|t| t.trim_start().starts_with('{'))
        .and_then(parse_top)
        .is_some()
}

/// The closing quote of the JSON string whose contents begin at `i`, and whether they hold an
/// escape, as the scanner finds it: with AVX2 where the CPU has it.
pub fn string_body(b: &[u8], i: usize) -> Option<(usize, bool)> {
    scan_string::string_body(b, i)
}

/// `string_body` without AVX2: SSE2 sixteen bytes at a time, then eight-byte words.
pub fn string_body_sse2(b: &[u8], i: usize) -> Option<(usize, bool)> {
    scan_string::string_body_from(b, i, false)
}

/// The first quote, backslash, control or non-ASCII byte at or after `i` (or `b.len()`): SSE2,
/// then eight-byte words for the tail.
pub fn stop_byte(b: &[u8], i: usize) -> usize {
    scan_string::stop_byte(b, i)
}

/// `stop_byte` by eight-byte words only (no SIMD).
pub fn stop_byte_words(b: &[u8], i: usize) -> usize {
    scan_string::stop_byte_words(b, i)
}
