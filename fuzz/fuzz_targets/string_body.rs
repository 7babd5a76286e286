//! `scan_string`: the body of a JSON string found with AVX2 (where the CPU has it), with SSE2 and
//! with eight-byte words (each an `unsafe` load or a bit trick over model-written text), against
//! a byte-at-a-time reading whose verdict is `serde_json`'s own: a string is accepted when
//! `std::str::from_utf8` takes its contents and `serde_json` skips it (`IgnoredAny`), which is
//! what the scanner promises. Checked from the start of the input and after every quote (every
//! string's contents, and the runs between strings).

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use turnscope_core::fuzzing::{stop_byte, stop_byte_words, string_body, string_body_sse2};

/// The closing quote of the string whose contents begin at `i` and whether they hold an escape,
/// or `None` when there is none or the string is not one `serde_json` skips or not UTF-8.
fn reference(b: &[u8], i: usize) -> Option<(usize, bool)> {
    // The first quote that no backslash escapes.
    let (mut k, mut escaped) = (i, false);
    let end = loop {
        match *b.get(k)? {
            b'"' => break k,
            b'\\' => {
                escaped = true;
                k += 2;
            }
            _ => k += 1,
        }
    };
    let contents = std::str::from_utf8(&b[i..end]).ok()?;
    serde_json::from_str::<IgnoredAny>(&format!("\"{contents}\"")).ok()?;
    Some((end, escaped))
}

/// The first quote, backslash, control byte or non-ASCII byte at or after `i`, or `b.len()`.
fn first_stop(b: &[u8], i: usize) -> usize {
    (i..b.len())
        .find(|&k| matches!(b[k], b'"' | b'\\' | 0..=0x1f | 0x80..))
        .unwrap_or(b.len())
}

fuzz_target!(|data: &[u8]| {
    let starts = std::iter::once(0).chain(
        data.iter()
            .enumerate()
            .filter(|&(_, &c)| c == b'"')
            .map(|(k, _)| k + 1),
    );
    for i in starts.take(512) {
        let want = reference(data, i);
        let text = || String::from_utf8_lossy(&data[i..]);
        assert_eq!(string_body(data, i), want, "from {i}: {:?}", text());
        assert_eq!(string_body_sse2(data, i), want, "from {i}: {:?}", text());
        let stop = first_stop(data, i);
        assert_eq!(stop_byte(data, i), stop, "from {i}: {:?}", text());
        assert_eq!(stop_byte_words(data, i), stop, "from {i}: {:?}", text());
    }
});
