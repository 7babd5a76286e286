//! A fold's read of 2.x streams: batches appended to one text buffer a chunk at a time
//! ([`Flue2SqliteReader::read_stream_into`]), the buffer used again for a later chunk once the
//! fold is done with it ([`BatchChunk::clear`] keeps its capacity).
//!
//! Why one buffer, used again: a `String` made for every batch lands, chunk after chunk, in
//! memory the allocator has just given back to the system (its purge delay: `memory.rs`), and
//! every page is faulted in and zeroed again. Reading a whale's 165 MB and parsing each batch,
//! one thread: 345–370 ms with a string per batch, 272 ms with one buffer used again (the
//! allocator configured as turnscope's, 3 runs each).

use std::borrow::Cow;
use std::ops::Range;

use super::flue2::{opt_text, spill_count, Flue2SqliteReader};
use crate::StoreError;

/// One batch of a [`BatchChunk`]: its row, its text borrowed from the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchView<'a> {
    pub seq: i64,
    /// The submission and attempt that wrote it (`None` for unowned batches such as the first).
    pub submission_id: Option<&'a str>,
    pub attempt_id: Option<&'a str>,
    /// The JSON array of records, as stored (the chunks concatenated for a spilled batch).
    pub data: &'a str,
    /// How many chunks it was spilled into (0: stored inline).
    pub chunk_count: usize,
    /// Some of its text (data or ids) is not valid UTF-8: read with U+FFFD in place of each bad
    /// sequence, as the runtime's `node:sqlite` reads it.
    pub not_utf8: bool,
    /// Why the runtime's read of its stream fails on this batch (its `data` is not text, its
    /// spill's chunks are not all there): `data` is then empty, and the stream cannot be loaded.
    /// One such row makes its stream unloadable, not the journal unreadable.
    pub unreadable: Option<&'a str>,
}

/// What a chunk holds, in reading order: a batch of the stream tagged `stream`, or the end of
/// that stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkItem<'a> {
    Batch(usize, BatchView<'a>),
    End(usize),
}

/// Batches of one or more streams, their texts one after another in one buffer.
#[derive(Debug, Default)]
pub struct BatchChunk {
    text: String,
    /// The batches' submission and attempt ids, one after another (a string each was two
    /// allocations per batch).
    ids: String,
    items: Vec<Item>,
}

#[derive(Debug)]
enum Item {
    Batch {
        stream: usize,
        seq: i64,
        /// Where each id is in `ids`.
        submission_id: Option<Range<usize>>,
        attempt_id: Option<Range<usize>>,
        chunk_count: usize,
        not_utf8: bool,
        /// In `ids`, as the ids are.
        unreadable: Option<Range<usize>>,
        /// Where its text ends in `text` (it begins where the batch before ends).
        end: usize,
    },
    End(usize),
}

/// The largest buffer [`BatchChunk::clear`] keeps: twice the folds' largest chunk (2 MB), so a
/// chunk grown by a spilled batch of many MB is not held for the rare next one.
const KEPT_CAPACITY: usize = 4 << 20;

impl BatchChunk {
    /// The bytes of batch text it holds.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many batches it holds.
    pub fn batch_count(&self) -> usize {
        self.items
            .iter()
            .filter(|i| matches!(i, Item::Batch { .. }))
            .count()
    }

    /// Mark the end of the stream tagged `stream`.
    pub fn end_stream(&mut self, stream: usize) {
        self.items.push(Item::End(stream));
    }

    /// Empty, its buffers kept (up to [`KEPT_CAPACITY`]) for the next chunk.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ids.clear();
        self.items.clear();
        if self.text.capacity() > KEPT_CAPACITY {
            self.text.shrink_to(KEPT_CAPACITY);
        }
    }

    /// What it holds, in reading order.
    pub fn items(&self) -> impl Iterator<Item = ChunkItem<'_>> {
        let mut start = 0;
        self.items.iter().map(move |i| match i {
            Item::Batch {
                stream,
                seq,
                submission_id,
                attempt_id,
                chunk_count,
                not_utf8,
                unreadable,
                end,
            } => {
                let data = &self.text[start..*end];
                start = *end;
                let id = |r: &Option<Range<usize>>| r.clone().map(|r| &self.ids[r]);
                ChunkItem::Batch(
                    *stream,
                    BatchView {
                        seq: *seq,
                        submission_id: id(submission_id),
                        attempt_id: id(attempt_id),
                        data,
                        chunk_count: *chunk_count,
                        not_utf8: *not_utf8,
                        unreadable: id(unreadable),
                    },
                )
            }
            Item::End(stream) => ChunkItem::End(*stream),
        })
    }

    /// Its batches, in reading order.
    pub fn batches(&self) -> impl Iterator<Item = BatchView<'_>> {
        self.items().filter_map(|i| match i {
            ChunkItem::Batch(_, b) => Some(b),
            ChunkItem::End(_) => None,
        })
    }

    fn push(&mut self, stream: usize, b: BatchView<'_>) {
        self.text.push_str(b.data);
        let mut id = |s: Option<&str>| {
            s.map(|s| {
                let start = self.ids.len();
                self.ids.push_str(s);
                start..self.ids.len()
            })
        };
        let (submission_id, attempt_id) = (id(b.submission_id), id(b.attempt_id));
        let unreadable = id(b.unreadable);
        let (seq, chunk_count, not_utf8) = (b.seq, b.chunk_count, b.not_utf8);
        self.items.push(Item::Batch {
            stream,
            seq,
            submission_id,
            attempt_id,
            chunk_count,
            not_utf8,
            unreadable,
            end: self.text.len(),
        });
    }
}

impl super::flue2::Flue2Batch {
    /// This batch as a chunk's batches are seen.
    pub fn view(&self) -> BatchView<'_> {
        BatchView {
            seq: self.seq,
            submission_id: self.submission_id.as_deref(),
            attempt_id: self.attempt_id.as_deref(),
            data: &self.data,
            chunk_count: self.chunk_count,
            not_utf8: self.not_utf8,
            unreadable: self.unreadable.as_deref(),
        }
    }
}

impl Flue2SqliteReader {
    /// Every batch of the stream at `path`, in `seq` order (spilled batches put back together),
    /// appended to `chunk` tagged `stream`, `each` called after each (to hand a full chunk on and
    /// go on in an empty one); an error from `each` stops the read and is returned. The batches
    /// of [`Flue2SqliteReader::each_stream_batch`], without a string each.
    pub fn read_stream_into(
        &self,
        path: &str,
        stream: usize,
        chunk: &mut BatchChunk,
        mut each: impl FnMut(&mut BatchChunk) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.each_batch_row(path, |b| {
            chunk.push(stream, b);
            each(chunk)
        })
    }

    /// Every batch of the stream at `path`, in `seq` order, its text borrowed from SQLite's row
    /// (a spilled batch's put back together first): the one reading of batch rows, which
    /// [`Flue2SqliteReader::read_stream_into`] appends to a chunk and
    /// [`Flue2SqliteReader::each_stream_batch`] copies out.
    pub(super) fn each_batch_row(
        &self,
        path: &str,
        each: impl FnMut(BatchView<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.batch_rows(
            "SELECT seq, submission_id, attempt_id, data FROM flue_conversation_stream_batches \
             WHERE path = ?1 ORDER BY seq",
            rusqlite::params![path],
            path,
            each,
        )
    }

    /// The batches of the stream at `path` whose `seq` is in `seqs`, in `seq` order, each read
    /// by its key (a spilled one put back together): what a caller reads again of a stream it
    /// folded, knowing where to look (`health`: the batches of the calls it names).
    pub fn each_batch_at(
        &self,
        path: &str,
        seqs: &[i64],
        mut each: impl FnMut(BatchView<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut seqs = seqs.to_vec();
        seqs.sort_unstable();
        seqs.dedup();
        for seq in seqs {
            self.batch_rows(
                "SELECT seq, submission_id, attempt_id, data FROM flue_conversation_stream_batches \
                 WHERE path = ?1 AND seq = ?2",
                rusqlite::params![path, seq],
                path,
                &mut each,
            )?;
        }
        Ok(())
    }

    /// The rows `sql` selects (`seq, submission_id, attempt_id, data` of the stream at `path`),
    /// each handed to `each` as a borrowed [`BatchView`].
    fn batch_rows(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        path: &str,
        mut each: impl FnMut(BatchView<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let err = |e| StoreError::sqlite("reading flue_conversation_stream_batches", e);
        let mut stmt = self.connection().prepare_cached(sql).map_err(err)?;
        let mut rows = stmt.query(params).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let seq: i64 = r.get(0).map_err(err)?;
            // Text that is not UTF-8 is read as the runtime's `node:sqlite` reads it.
            let submission_id = opt_text(r, 1).map_err(err)?;
            let attempt_id = opt_text(r, 2).map_err(err)?;
            // `data` that is not text fails the runtime's read of the whole stream (its
            // `stored.startsWith` is not a function): the stream is unloadable, the rest read.
            let text = match r.get_ref(3).map_err(err)? {
                rusqlite::types::ValueRef::Text(t) => Ok(crate::parse::lossy_text(t)),
                other => Err(not_text(other.data_type())),
            };
            let lossy = [&submission_id, &attempt_id]
                .iter()
                .any(|t| matches!(t, Some(Cow::Owned(_))))
                || matches!(text, Ok(Cow::Owned(_)));
            let (submission_id, attempt_id) = (submission_id.as_deref(), attempt_id.as_deref());
            let view = |data, chunk_count, spill_lossy: bool, unreadable| BatchView {
                seq,
                submission_id,
                attempt_id,
                data,
                chunk_count,
                not_utf8: lossy || spill_lossy,
                unreadable,
            };
            let text = match text {
                Ok(t) => t,
                Err(why) => {
                    each(view("", 0, false, Some(&why)))?;
                    continue;
                }
            };
            match spill_count(&text) {
                Some(n) => match self.unspill(path, seq, n)? {
                    Ok((whole, spill_lossy)) => each(view(&whole, n, spill_lossy, None))?,
                    Err(why) => each(view("", n, false, Some(&why)))?,
                },
                None => each(view(&text, 0, false, None))?,
            }
        }
        Ok(())
    }
}

/// Why a batch's `data` of SQLite type `t` fails the runtime's read (checked with 2.1.0's own
/// reader, `fold.mjs`, on a copy whose `data` was cast to a BLOB).
pub(super) fn not_text(t: rusqlite::types::Type) -> String {
    format!(
        "its data is stored as {t}, not text: the runtime's read of the stream fails on it \
         (TypeError: stored.startsWith is not a function)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches come back as pushed, each text its own, ends in their places; a cleared chunk
    /// keeps its buffer (up to [`KEPT_CAPACITY`]) and holds nothing.
    #[test]
    fn a_chunk_gives_back_its_batches_in_order_and_keeps_its_buffer() {
        let batch = |seq, submission_id, attempt_id, data, chunk_count| BatchView {
            seq,
            submission_id,
            attempt_id,
            data,
            chunk_count,
            not_utf8: chunk_count == 3,
            unreadable: (seq == 7).then_some("its data is stored as Blob"),
        };
        let mut c = BatchChunk::default();
        c.push(0, batch(1, Some("sub_a"), None, "[1]", 0));
        c.push(0, batch(2, None, Some("att"), "", 0));
        c.end_stream(0);
        c.end_stream(1);
        c.push(2, batch(7, None, None, "[{\"é\":2}]", 3));
        c.end_stream(2);
        let items: Vec<ChunkItem<'_>> = c.items().collect();
        assert_eq!(
            items,
            [
                ChunkItem::Batch(0, batch(1, Some("sub_a"), None, "[1]", 0)),
                ChunkItem::Batch(0, batch(2, None, Some("att"), "", 0)),
                ChunkItem::End(0),
                ChunkItem::End(1),
                ChunkItem::Batch(2, batch(7, None, None, "[{\"é\":2}]", 3)),
                ChunkItem::End(2),
            ]
        );
        assert_eq!(c.batch_count(), 3);
        assert_eq!(c.text_len(), "[1][{\"é\":2}]".len());
        let buffer = c.text.as_ptr();
        c.clear();
        assert!(c.is_empty() && c.text_len() == 0 && c.batches().next().is_none());
        c.push(0, batch(9, None, None, "[]", 0));
        assert_eq!(c.text.as_ptr(), buffer, "the buffer is used again");
        let big = "x".repeat(KEPT_CAPACITY + 1);
        c.push(0, batch(10, None, None, &big, 0));
        c.clear();
        assert!(c.text.capacity() <= KEPT_CAPACITY);
    }
}
