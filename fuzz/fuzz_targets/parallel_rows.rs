//! The store's whole-session parse (`parallel_parse`): rows parsed on two threads into one slice
//! of `MaybeUninit` slots that is then `assume_init`'d, or, for a session split in two halves,
//! each half read on its own thread into its part of the slice. Driven through the public row
//! interface (`SessionRows`, `PartRows`) by an in-memory session, with an entry count and split
//! that may be right or wrong (as a backend's could be), against a plain reference: each row
//! parsed on its own, in order. The read must give exactly those entries and problem lines, or
//! an error when the halves do not hold the rows they were counted with. AddressSanitizer and
//! LeakSanitizer watch the slots: an entry dropped twice or never dropped fails the run, and a
//! slot handed out unwritten shows as a wrong entry or a bad free.
//!
//! Input: five header bytes (flags, count, split point, first half's length, whole length; the
//! lengths as small offsets from the true ones, so right and wrong counts are both common), then
//! the rows' data, one per line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use turnscope_core::journal::compact::{parse_compact_previews, Previews};
use turnscope_core::journal::images::ChunkRow;
use turnscope_core::journal::submission_rows::ImageChunk;
use turnscope_store::{
    load_compact, EntryRow, EntryVisitor, PartRange, PartRows, SessionData, SessionRows, Split,
    StoreError,
};

/// Rows at most, to keep each run short (inputs of a few KB are always one 2 MB batch).
const MAX_ROWS: usize = 64;
/// Session data the store finds no problem with: its problem lines are then the rows' own.
const SESSION_DATA: &str = r#"{"version":8,"conversationId":"conv_01ARZ3NDEKTSV4RRFFQ69G5FAV","affinityKey":"aff_01ARZ3NDEKTSV4RRFFQ69G5FAV"}"#;

struct Session {
    /// (entry_id, position, data), in position order.
    rows: Vec<(String, i64, Vec<u8>)>,
    count: Option<usize>,
    /// (at, first_len, len) of `split`.
    split: Option<(i64, usize, usize)>,
}

impl PartRows for Session {
    fn for_each_entry_in(
        &self,
        _session: &str,
        range: PartRange,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        let inside = |p: i64| range.lo.is_none_or(|lo| p >= lo) && range.hi.is_none_or(|hi| p < hi);
        let mut rows: Vec<_> = self.rows.iter().filter(|r| inside(r.1)).collect();
        if range.descending {
            rows.reverse();
        }
        for (id, position, data) in rows {
            f(id.as_bytes(), *position, data, false);
        }
        Ok(())
    }
}

impl SessionRows for Session {
    fn session_data(&self, _key: &str) -> Result<Option<SessionData>, StoreError> {
        Ok(Some(SessionData {
            text: SESSION_DATA.into(),
            lossy: false,
            blob: false,
        }))
    }

    /// No row is found by id: the input entry keeps its compact form (`load_compact` reads it
    /// whole only when this finds it), so every entry is the parse's own.
    fn entry_by_id(&self, _session: &str, _entry_id: &str) -> Result<Option<EntryRow>, StoreError> {
        Ok(None)
    }

    /// No image chunk rows: the fuzzed rows are the entries.
    fn image_chunks(&self, _session: &str) -> Result<Vec<(String, ChunkRow)>, StoreError> {
        Ok(Vec::new())
    }

    fn stored_image_chunks(&self, _session: &str) -> Result<Vec<ImageChunk>, StoreError> {
        Ok(Vec::new())
    }

    fn stored_submission_chunks(&self, _submission: &str) -> Result<Vec<ImageChunk>, StoreError> {
        Ok(Vec::new())
    }

    fn for_each_entry(&self, session: &str, f: &mut EntryVisitor<'_>) -> Result<(), StoreError> {
        let all = PartRange {
            lo: None,
            hi: None,
            descending: false,
        };
        self.for_each_entry_in(session, all, f)
    }

    fn entry_count(&self, _session: &str) -> Result<Option<usize>, StoreError> {
        Ok(self.count)
    }

    fn entries_before(
        &self,
        session: &str,
        below: i64,
        limit: usize,
        f: &mut EntryVisitor<'_>,
    ) -> Result<(), StoreError> {
        let mut n = 0;
        let range = PartRange {
            lo: None,
            hi: Some(below),
            descending: true,
        };
        self.for_each_entry_in(session, range, &mut |id, position, data, blob| {
            if n < limit {
                f(id, position, data, blob);
                n += 1;
            }
        })
    }

    fn split(&self, _session: &str, _len: usize) -> Result<Option<Split<'_>>, StoreError> {
        Ok(self.split.map(|(at, first_len, len)| Split {
            at,
            first_len,
            len,
            first: self,
            later: self,
        }))
    }
}

/// `truth` plus a small signed offset (-2..=2, zero most often) picked by `b`.
fn near(truth: usize, b: u8) -> usize {
    let offset = match b % 8 {
        5 => -2,
        6 => -1,
        7 => 1,
        4 => 2,
        _ => 0,
    };
    truth.saturating_add_signed(offset)
}

/// This process's threads, as the kernel lists them.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Wait (a second at most) until the read's threads have exited, not only been joined: each frees
/// its per-thread data (std's thread-locals and thread handle, glibc's destructor list) as it
/// exits, which can be just after the scope joined it, and LeakSanitizer's check after the input
/// would take that for a leak.
fn wait_for_threads(before: usize) {
    for _ in 0..1000 {
        if threads() <= before {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((header, body)) = data.split_first_chunk::<5>() else {
        return;
    };
    let [flags, count, at, first_len, len] = *header;
    let rows: Vec<(String, i64, Vec<u8>)> = body
        .split(|&c| c == b'\n')
        .take(MAX_ROWS)
        .enumerate()
        .map(|(i, line)| (format!("c{i}"), i as i64, line.to_vec()))
        .collect();
    let n = rows.len();
    let previews = if flags & 4 == 0 {
        Previews::Keep
    } else {
        Previews::Drop
    };
    let at = i64::from(at) % (n as i64 + 2);
    let below = rows.iter().filter(|r| r.1 < at).count();
    let session = Session {
        count: (flags & 1 != 0).then(|| near(n, count)),
        split: (flags & 2 != 0).then(|| {
            let len = near(n, len);
            (at, near(below, first_len), len)
        }),
        rows,
    };

    // The reference: each row parsed on its own, in the order the read gives them.
    let parse = |rows: Vec<&(String, i64, Vec<u8>)>| -> Vec<(String, Option<i64>)> {
        rows.into_iter()
            .map(|(id, position, data)| {
                let (e, lossy) = parse_compact_previews(*position, id, data, previews);
                // Debug text: usage figures that are missing are NaN, and NaN != NaN.
                (format!("{e:?}"), lossy.then_some(*position))
            })
            .collect()
    };
    let want = match (session.count, session.split) {
        (Some(_), Some((at, first_len, len))) => {
            let (first, later): (Vec<_>, Vec<_>) = session.rows.iter().partition(|r| r.1 < at);
            let first_len = first_len.min(len);
            (first.len() == first_len && later.len() == len - first_len)
                .then(|| parse(first.into_iter().chain(later).collect()))
        }
        _ => Some(parse(session.rows.iter().collect())),
    };

    let before = threads();
    let got = load_compact(&session, "s", "dispatch", "none", previews);
    wait_for_threads(before);
    match (got, want) {
        (Ok(Some(record)), Some(want)) => {
            let entries: Vec<String> = record.entries.iter().map(|e| format!("{e:?}")).collect();
            let want_entries: Vec<&String> = want.iter().map(|(e, _)| e).collect();
            assert_eq!(entries.iter().collect::<Vec<_>>(), want_entries);
            // A line for each row that is not UTF-8, in order (and none for the data, which is
            // valid): read as the runtime reads it, so not among the problems that stop its load.
            let lossy: Vec<i64> = want.iter().filter_map(|(_, lossy)| *lossy).collect();
            assert!(
                record.data_problems.is_empty(),
                "{:?}",
                record.data_problems
            );
            assert_eq!(record.not_utf8.len(), lossy.len(), "{:?}", record.not_utf8);
            for (line, position) in record.not_utf8.iter().zip(lossy) {
                assert!(
                    line.contains(&format!(" at position {position} ")),
                    "{line}"
                );
            }
        }
        (Err(_), None) => {}
        (got, want) => panic!(
            "read {:?}, expected {}",
            got.map(|r| r.map(|r| r.entries.len())),
            match want {
                Some(w) => format!("{} entries", w.len()),
                None => "an error".into(),
            }
        ),
    }
});
