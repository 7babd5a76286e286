//! The compact parse of one stored row, as the read path runs it (the byte scanner of
//! `compact_scan`, whose kept text is cut with `from_utf8_unchecked` after its own UTF-8 checks,
//! over `scan_string`'s SIMD scans), against its safe references: the serde visitors
//! (`compact_de`) and the skeleton oracle (`compact_oracle`). Any bytes: invalid UTF-8 and
//! invalid JSON included. The entries must be equal (so both take or both decline the row as a
//! compact entry, and keep the same fields), with previews kept and dropped.

#![no_main]

use libfuzzer_sys::fuzz_target;
use turnscope_core::fuzzing::{
    compact_fast, compact_oracle, compact_serde, scanner_takes, serde_takes,
};
use turnscope_core::journal::compact::Previews;

/// Deepest nesting the scanner reads itself (`compact_scan::MAX_DEPTH`).
const MAX_DEPTH: usize = 100;

fuzz_target!(|data: &[u8]| {
    let row = || String::from_utf8_lossy(data);
    // Debug text: usage figures that are missing are NaN, and NaN != NaN.
    let fast = format!("{:?}", compact_fast(4, "col", data, Previews::Keep));
    let serde = format!("{:?}", compact_serde(4, "col", data, Previews::Keep));
    assert_eq!(fast, serde, "scanner against serde visitors: {:?}", row());
    let oracle = format!("{:?}", compact_oracle(4, "col", data));
    assert_eq!(
        fast,
        oracle,
        "scanner against the skeleton oracle: {:?}",
        row()
    );

    let fast = format!("{:?}", compact_fast(4, "col", data, Previews::Drop));
    let serde = format!("{:?}", compact_serde(4, "col", data, Previews::Drop));
    assert_eq!(fast, serde, "previews dropped: {:?}", row());

    // The scanner takes the same rows whether it builds previews or not, and only rows the
    // serde visitors take.
    let takes = scanner_takes(data, true);
    assert_eq!(takes, scanner_takes(data, false), "{:?}", row());
    if takes {
        assert!(serde_takes(data), "taken by the scanner only: {:?}", row());
    } else if serde_takes(data) {
        // What it declines of what serde takes is only what it documents: an escaped key
        // (a backslash somewhere) or nesting deeper than it reads.
        let opens = data.iter().filter(|&&c| c == b'{' || c == b'[').count();
        assert!(
            data.contains(&b'\\') || opens > MAX_DEPTH,
            "declined by the scanner, taken by serde: {:?}",
            row()
        );
    }
});
