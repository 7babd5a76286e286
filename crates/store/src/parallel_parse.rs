//! A whole session's rows parsed compactly on the thread pool while the backend reads them: the
//! reading thread copies rows into batches of a few megabytes and hands each to the pool, the
//! parsed batches are put back in position order. Parsing, not reading, is the cost of a big
//! session (a whale's 285 MB of JSON), so this roughly halves it on two cores.

use std::collections::{BTreeMap, HashMap};
use std::mem::MaybeUninit;
use std::sync::{mpsc, Arc};

use super::StoreError;
use crate::session_rows::{lossy_entry, PartRange, SessionRows, Split};
use turnscope_core::journal::compact::{parse_compact_previews, Previews};
use turnscope_core::journal::entry::Entry;

/// Bytes of row data per batch.
const BATCH_BYTES: usize = 2 << 20;

/// The parsed rows of one session, in position order.
pub(super) struct ParsedRows {
    /// Allocated once at its exact length: growing a `Vec` of 250,000 entries doubles it (and
    /// copies it) up to 18 times, and turning it into an `Arc<[Entry]>` copies it again, which
    /// put the peak at three times the entries' size.
    pub entries: Arc<[Entry]>,
    /// `entry_id` column values that differ from the entry's `data.id`, by index.
    pub column_ids: HashMap<usize, String>,
    /// Problem lines for rows that are not UTF-8, in position order.
    pub lossy: Vec<String>,
}

/// Rows copied out of the backend: `buf` holds each row's id then its data, one row after
/// another (one copy into a reused buffer instead of two allocations a row).
#[derive(Default)]
pub(super) struct Batch {
    buf: Vec<u8>,
    /// (id end, position, data end, stored as a BLOB) offsets into `buf`.
    rows: Vec<(usize, i64, usize, bool)>,
}

impl Batch {
    pub(super) fn push(&mut self, id: &[u8], position: i64, data: &[u8], blob: bool) {
        self.buf.extend_from_slice(id);
        let id_end = self.buf.len();
        self.buf.extend_from_slice(data);
        self.rows.push((id_end, position, self.buf.len(), blob));
    }

    pub(super) fn clear(&mut self) {
        self.buf.clear();
        self.rows.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Bytes of ids and data held.
    pub(super) fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// Rows `from..to` as (id, position, data, stored as a BLOB).
    pub(super) fn rows(
        &self,
        from: usize,
        to: usize,
    ) -> impl Iterator<Item = (&[u8], i64, &[u8], bool)> {
        let mut start = if from == 0 { 0 } else { self.rows[from - 1].2 };
        self.rows[from..to]
            .iter()
            .map(move |&(id_end, position, data_end, blob)| {
                let row = (
                    &self.buf[start..id_end],
                    position,
                    &self.buf[id_end..data_end],
                    blob,
                );
                start = data_end;
                row
            })
    }
}

type Parsed = Vec<(Entry, bool, Option<String>)>;

/// One row parsed: the entry, whether its id or data was not UTF-8, and its `entry_id` column
/// when that is not the entry's `data.id`. A row stored as a BLOB is not parsed (the runtime
/// never reads it: `Entry::blob_row`).
fn parse_one(
    id: &[u8],
    position: i64,
    data: &[u8],
    blob: bool,
    previews: Previews,
) -> (Entry, bool, Option<String>) {
    let id_text = String::from_utf8_lossy(id);
    if blob {
        return (Entry::blob_row(position, &id_text, data), false, None);
    }
    let (e, data_lossy) = parse_compact_previews(position, &id_text, data, previews);
    let lossy = data_lossy || std::str::from_utf8(id).is_err();
    let column = (e.id != id_text).then(|| id_text.into_owned());
    (e, lossy, column)
}

fn parse_batch(b: &Batch, previews: Previews) -> Parsed {
    b.rows(0, b.len())
        .map(|(id, position, data, blob)| parse_one(id, position, data, blob, previews))
        .collect()
}

/// The parsed entries, in position order, moved into one slice as each batch comes back.
#[derive(Default)]
struct Gathered {
    /// Allocated at the session's entry count before the read, when the backend gives it: the
    /// entries then exist once. Gathered into batches and copied into a slice at the end, a
    /// whale's entries existed twice at that moment (39 MB each at 288,000 entries, the peak of
    /// the whole read).
    slots: Option<Arc<[MaybeUninit<Entry>]>>,
    /// Slots written, from the first.
    filled: usize,
    /// Entries past the count (the count said less than the read found), or every entry when
    /// there is no count.
    batches: Vec<Vec<Entry>>,
    len: usize,
    column_ids: HashMap<usize, String>,
    lossy: Vec<String>,
}

impl Gathered {
    fn new(expected: Option<usize>) -> Gathered {
        Gathered {
            slots: expected.map(Arc::new_uninit_slice),
            ..Gathered::default()
        }
    }

    fn absorb(&mut self, parsed: Parsed) {
        let mut spill = Vec::new();
        for (e, lossy, column) in parsed {
            if lossy {
                self.lossy.push(lossy_entry(&e.id, e.position));
            }
            if let Some(c) = column {
                self.column_ids.insert(self.len, c);
            }
            self.len += 1;
            let slot = match self.slots.as_mut() {
                Some(slots) if self.batches.is_empty() && self.filled < slots.len() => {
                    Arc::get_mut(slots)
                        .expect("the slots are never shared before they are filled")
                        .get_mut(self.filled)
                }
                _ => None,
            };
            match slot {
                Some(slot) => {
                    slot.write(e);
                    self.filled += 1;
                }
                None => spill.push(e),
            }
        }
        if !spill.is_empty() {
            self.batches.push(spill);
        }
    }

    fn finish(mut self) -> ParsedRows {
        let filled = self.filled;
        let entries = match self.slots.take() {
            Some(slots) if filled == slots.len() && self.batches.is_empty() => {
                // SAFETY: every slot was written (`filled` counts the writes, in order, from
                // the first), and nothing else holds the slice.
                unsafe { slots.assume_init() }
            }
            slots => {
                // The count and the read disagree (or there was no count): the entries written
                // so far are moved out, then the rest follow, into a slice of the right length.
                let mut head: Vec<Entry> = Vec::with_capacity(filled);
                if let Some(mut slots) = slots {
                    let slots = Arc::get_mut(&mut slots).expect("not shared");
                    for slot in &mut slots[..filled] {
                        // SAFETY: slots before `filled` were written, and each is read once;
                        // the slice's memory is then freed without dropping its elements.
                        head.push(unsafe { slot.assume_init_read() });
                    }
                }
                let mut all = head
                    .into_iter()
                    .chain(std::mem::take(&mut self.batches).into_iter().flatten());
                // A range mapped is a trusted-length iterator: the slice is allocated once,
                // filled in place.
                (0..self.len)
                    .map(|_| all.next().expect("len counts every parsed entry"))
                    .collect()
            }
        };
        ParsedRows {
            entries,
            column_ids: self.column_ids,
            lossy: self.lossy,
        }
    }
}

/// Read and parse every row of session `key`.
pub(super) fn parse_rows(
    rows: &dyn SessionRows,
    key: &str,
    previews: Previews,
) -> Result<ParsedRows, StoreError> {
    let count = rows.entry_count(key)?;
    if let Some(split) = count.map(|len| rows.split(key, len)).transpose()?.flatten() {
        return parse_split(key, previews, split);
    }
    let mut out = Gathered::new(count);
    let mut count = 0usize;
    let read = rayon::in_place_scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<(usize, Parsed)>();
        // Parsed batches come back to be filled again: fresh 2 MB buffers cost page faults and
        // heap consolidation on every batch.
        let (spare_tx, spare_rx) = mpsc::channel::<Batch>();
        let mut pending: BTreeMap<usize, Parsed> = BTreeMap::new();
        let mut next = 0;
        let mut drain = |out: &mut Gathered, pending: &mut BTreeMap<usize, Parsed>, wait: bool| loop {
            let got = if wait {
                done_rx.recv().ok()
            } else {
                done_rx.try_recv().ok()
            };
            let Some((i, parsed)) = got else { break };
            pending.insert(i, parsed);
            while let Some(p) = pending.remove(&next) {
                out.absorb(p);
                next += 1;
            }
        };
        // At most this many batches exist (one being filled, two per pool thread in flight);
        // past it the reader waits for a parsed one to come back instead of allocating another
        // (the reader outpaced the parsers and held a dozen 4 MB buffers at once).
        let max_batches = 2 * rayon::current_num_threads() + 1;
        let fresh = || Batch {
            buf: Vec::with_capacity(BATCH_BYTES + (BATCH_BYTES >> 3)),
            rows: Vec::new(),
        };
        let mut batches = 1;
        let mut batch = fresh();
        let mut sent = 0;
        let send = |mut batch: Batch, sent: &mut usize| {
            let (i, done, spare) = (*sent, done_tx.clone(), spare_tx.clone());
            scope.spawn(move |_| {
                let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    parse_batch(&batch, previews)
                }));
                // Given back even when parsing panicked: the reader may be waiting for it.
                batch.clear();
                let _ = spare.send(batch);
                match parsed {
                    Ok(parsed) => {
                        let _ = done.send((i, parsed));
                    }
                    // The scope passes it on; the rows it had show up as missing.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            });
            *sent += 1;
        };
        let read = rows.for_each_entry(key, &mut |id, position, data, blob| {
            batch.push(id, position, data, blob);
            count += 1;
            if batch.bytes() >= BATCH_BYTES {
                let next = match spare_rx.try_recv() {
                    Ok(b) => b,
                    Err(_) if batches < max_batches => {
                        batches += 1;
                        fresh()
                    }
                    Err(_) => spare_rx.recv().unwrap_or_else(|_| fresh()),
                };
                send(std::mem::replace(&mut batch, next), &mut sent);
                drain(&mut out, &mut pending, false);
            }
        });
        if !batch.rows.is_empty() {
            send(std::mem::take(&mut batch), &mut sent);
        }
        // Only the parse jobs hold senders now: waiting for the results ends with the last.
        drop((done_tx, spare_tx));
        drain(&mut out, &mut pending, true);
        read
    });
    // Finished before any error is returned: the entries already in the slots are dropped
    // there, not leaked with them.
    let parsed_len = out.len;
    let parsed = out.finish();
    read?;
    if parsed_len != count {
        return Err(StoreError::Sqlite {
            context: "parsing session entries".into(),
            detail: format!("{parsed_len} of {count} rows were parsed"),
        });
    }
    Ok(parsed)
}

/// One half of a split read: the rows parsed straight into their part of the session's slice.
struct Fill<'s> {
    slots: &'s mut [MaybeUninit<Entry>],
    /// Slots written, from the first.
    filled: usize,
    /// Rows read (more than `filled` when the half had more rows than counted).
    read: usize,
    /// The index in the whole session of this half's first row.
    base: usize,
    previews: Previews,
    column_ids: Vec<(usize, String)>,
    lossy: Vec<String>,
}

impl<'s> Fill<'s> {
    fn new(slots: &'s mut [MaybeUninit<Entry>], base: usize, previews: Previews) -> Fill<'s> {
        Fill {
            slots,
            filled: 0,
            read: 0,
            base,
            previews,
            column_ids: Vec::new(),
            lossy: Vec::new(),
        }
    }

    fn push(&mut self, id: &[u8], position: i64, data: &[u8], blob: bool) {
        let (e, lossy, column) = parse_one(id, position, data, blob, self.previews);
        if lossy {
            self.lossy.push(lossy_entry(&e.id, e.position));
        }
        if let Some(c) = column {
            self.column_ids.push((self.base + self.read, c));
        }
        self.read += 1;
        if let Some(slot) = self.slots.get_mut(self.filled) {
            slot.write(e);
            self.filled += 1;
        }
    }

    /// Every slot written, by exactly as many rows.
    fn complete(&self) -> bool {
        self.filled == self.slots.len() && self.read == self.filled
    }
}

/// Whether both halves are complete; then their slots are the caller's (`Drop` no longer drops
/// them). When either is not, neither gives its slots up: each drops the entries it wrote. (A
/// first half that was complete used to give its slots up before the later half was asked, so
/// its entries were never dropped when the later half then failed.)
fn hand_over(a: &mut Fill<'_>, b: &mut Fill<'_>) -> bool {
    let done = a.complete() && b.complete();
    if done {
        a.filled = 0;
        b.filled = 0;
    }
    done
}

impl Drop for Fill<'_> {
    /// A half that is not handed over (an error, a count that was wrong, a panic on its thread)
    /// drops the entries it wrote.
    fn drop(&mut self) {
        for slot in &mut self.slots[..self.filled] {
            // SAFETY: the slots before `filled` were written, and nothing reads them after this.
            unsafe { slot.assume_init_drop() };
        }
    }
}

/// Read and parse the two halves of a split session at once, this thread reading the first and
/// another the later one, each row parsed where it is read into the session's one slice.
fn parse_split(key: &str, previews: Previews, split: Split<'_>) -> Result<ParsedRows, StoreError> {
    let mut slots: Arc<[MaybeUninit<Entry>]> = Arc::new_uninit_slice(split.len);
    let (column_ids, lossy) = fill_halves(
        Arc::get_mut(&mut slots).expect("a new slice is not shared"),
        key,
        previews,
        &split,
    )?;
    // SAFETY: both halves are complete: every slot of the slice was written once, and the halves
    // (the only borrows of it) are gone.
    let entries = unsafe { slots.assume_init() };
    Ok(ParsedRows {
        entries,
        column_ids,
        lossy,
    })
}

/// Fill `all` with the split session's rows, both halves at once; the column ids and problem
/// lines when every slot was written, each by one row. Otherwise nothing is left in `all`.
fn fill_halves(
    all: &mut [MaybeUninit<Entry>],
    key: &str,
    previews: Previews,
    split: &Split<'_>,
) -> Result<(HashMap<usize, String>, Vec<String>), StoreError> {
    let (first, later) = all.split_at_mut(split.first_len.min(split.len));
    let (at, first_len, later_part) = (split.at, split.first_len, split.later);
    let ((mut a, read_a), joined) = std::thread::scope(|scope| {
        let other = scope.spawn(move || {
            let mut fill = Fill::new(later, first_len, previews);
            let from_at = PartRange {
                lo: Some(at),
                hi: None,
                descending: false,
            };
            let read =
                later_part.for_each_entry_in(key, from_at, &mut |id, position, data, blob| {
                    fill.push(id, position, data, blob)
                });
            (fill, read)
        });
        let mut fill = Fill::new(first, 0, previews);
        let below_at = PartRange {
            lo: None,
            hi: Some(at),
            descending: false,
        };
        let read = split
            .first
            .for_each_entry_in(key, below_at, &mut |id, position, data, blob| {
                fill.push(id, position, data, blob)
            });
        ((fill, read), other.join())
    });
    let Ok((mut b, read_b)) = joined else {
        return Err(StoreError::Sqlite {
            context: "parsing session entries".into(),
            detail: "the thread reading the later half stopped".into(),
        });
    };
    read_a?;
    read_b?;
    let (read, len) = (a.read + b.read, split.len);
    if !hand_over(&mut a, &mut b) {
        return Err(StoreError::Sqlite {
            context: "parsing session entries".into(),
            detail: format!("{read} rows were read where {len} were counted"),
        });
    }
    let column_ids = a
        .column_ids
        .drain(..)
        .chain(b.column_ids.drain(..))
        .collect();
    let mut lossy = std::mem::take(&mut a.lossy);
    lossy.append(&mut b.lossy);
    Ok((column_ids, lossy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_core::journal::entry::EntryBody;

    fn entry(i: usize) -> Entry {
        let data = format!(
            r#"{{"type":"message","id":"e{i}","parentId":null,"message":{{"role":"user","content":"hi {i}"}}}}"#
        );
        Entry::parse(i as i64, &format!("e{i}"), &data)
    }

    fn batch(from: usize, to: usize) -> Parsed {
        (from..to)
            .map(|i| (entry(i), i == 3, (i == 4).then(|| "col4".to_string())))
            .collect()
    }

    /// Whatever the count said (right, too few, too many, nothing), the slice holds every parsed
    /// entry once, in order, with the problems and column ids at their indexes.
    #[test]
    fn gathered_entries_are_every_parsed_entry_in_order_whatever_the_count() {
        for expected in [Some(10), Some(6), Some(14), Some(0), None] {
            let mut g = Gathered::new(expected);
            g.absorb(batch(0, 4));
            g.absorb(batch(4, 7));
            g.absorb(batch(7, 10));
            let rows = g.finish();
            let ids: Vec<&str> = rows.entries.iter().map(|e| e.id.as_str()).collect();
            let want: Vec<String> = (0..10).map(|i| format!("e{i}")).collect();
            assert_eq!(ids, want, "count {expected:?}");
            assert_eq!(rows.column_ids.get(&4).map(String::as_str), Some("col4"));
            assert_eq!(rows.lossy.len(), 1, "count {expected:?}");
        }
    }

    /// A split whose first half read exactly its count but whose later half read one row more
    /// than its own: neither half gives up its slots, so each drops the entries it wrote (the
    /// first half's were leaked; found by the `parallel_rows` fuzz target under LeakSanitizer).
    #[test]
    fn a_complete_half_keeps_its_entries_when_the_other_half_is_not() {
        let row = |i: usize| {
            format!(
                r#"{{"type":"message","id":"e{i}","message":{{"role":"user","content":"hi"}}}}"#
            )
        };
        let mut slots: Vec<MaybeUninit<Entry>> = (0..3).map(|_| MaybeUninit::uninit()).collect();
        let (first, later) = slots.split_at_mut(1);
        let mut a = Fill::new(first, 0, Previews::Keep);
        a.push(b"e0", 0, row(0).as_bytes(), false);
        let mut b = Fill::new(later, 1, Previews::Keep);
        for i in 1..4 {
            b.push(
                format!("e{i}").as_bytes(),
                i as i64,
                row(i).as_bytes(),
                false,
            );
        }
        assert!(a.complete() && !b.complete());
        assert!(!hand_over(&mut a, &mut b));
        assert_eq!(
            (a.filled, b.filled),
            (1, 2),
            "each half still drops what it wrote"
        );
        // Both complete: the slots are handed over, and the halves drop nothing.
        let mut slots: Vec<MaybeUninit<Entry>> = (0..2).map(|_| MaybeUninit::uninit()).collect();
        let (first, later) = slots.split_at_mut(1);
        let (mut a, mut b) = (
            Fill::new(first, 0, Previews::Keep),
            Fill::new(later, 1, Previews::Keep),
        );
        a.push(b"e0", 0, row(0).as_bytes(), false);
        b.push(b"e1", 1, row(1).as_bytes(), false);
        assert!(hand_over(&mut a, &mut b));
        assert_eq!((a.filled, b.filled), (0, 0));
        drop((a, b));
        for slot in &mut slots {
            // SAFETY: both slots were written, and handed over undropped.
            unsafe { slot.assume_init_drop() };
        }
    }

    /// A read cut short (fewer entries than counted) drops what was written, with no double drop:
    /// each entry holds an `Arc` whose count shows it.
    #[test]
    fn a_partly_filled_slice_gives_back_what_was_written() {
        let mut g = Gathered::new(Some(8));
        g.absorb(batch(0, 5));
        let rows = g.finish();
        assert_eq!(rows.entries.len(), 5);
        let EntryBody::Message(m) = &rows.entries[2].body else {
            panic!("a message")
        };
        assert_eq!(Arc::strong_count(m), 1);
    }
}
