//! A 2.x stream read and folded: the batches read from SQLite in `seq` order on the calling
//! thread, parsed on every core ([`read_batch`] is pure, one batch at a time), and applied in
//! order. Parsing is most of a stream's cost (a whale's 165 MB of batch text), so it runs in
//! parallel; the fold itself is sequential (each record checked against those before it).
//!
//! A stream that fits in one chunk (most of them) is parsed and folded on the calling thread; a
//! longer one gets two more threads, a parser and an applier, so reading the next chunk from
//! SQLite overlaps parsing the last (on every core) and folding the one before. At most four
//! chunks are in flight (a few MB of text and their records). Paired against reading and
//! parsing on one thread, on the 2 GB journal's whale `show` (12 runs) and the doubled whale's
//! (6): 0.95x and 0.94x the wall time, 1.05x and 1.04x the CPU, 8 and 5 MB more at the peak.
//!
//! A caller that needs more from the records than the fold keeps (`show`'s attempts and step
//! memos) observes each batch with its parsed records as it is applied
//! ([`fold_stream_observed`]): the stream is read once.
//!
//! Many streams (`health --all`, `list`, the TUI's list, `incidents`) go through one pipeline
//! instead ([`fold_streams`]), parsed on the applying thread, or on the reading thread when the
//! applier is behind: for many small streams the rayon pool cost more than it gave.
//!
//! Both read records without their digests ([`read_batch_undigested`]): a fold compares digests
//! only where a record id repeats, which is rare (the runtime looks its deterministic ids up
//! before it appends them), and a stream where one does is folded again, whole, with them.
//! Paired on the 2 GB journal: `list --expired` 0.85×, `health --all` 0.89×, the whale's `show`
//! 0.92× the wall time.
//!
//! Both read a chunk's batches into one text buffer ([`BatchChunk`]), which the applying thread
//! sends back once it is done with it, to be read into again: a string per batch landed in
//! freshly faulted pages chunk after chunk. Paired on the 2 GB journal (alternating runs):
//! `health --all` 0.92× the wall time and 0.91× the CPU (4 runs), `list --expired` 0.95× and
//! 0.93× (6), the whale's `show` 0.95× (8); the peak 6–9 MB higher (`health --all` 102 MB).

use std::sync::mpsc::{channel, sync_channel, SyncSender, TrySendError};
use std::thread::ScopedJoinHandle;

use rayon::prelude::*;
use turnscope_core::flue2::records::RecordError;
use turnscope_core::flue2::{
    read_batch, read_batch_undigested, InstanceState, ReadRecord, ReadRefusal,
};
use turnscope_store::{BatchChunk, BatchView, ChunkItem, Flue2SqliteReader, StoreError};

/// A stream's fold, and how many batches it has.
pub struct FoldedStream {
    pub batches: usize,
    /// The `seq` of each batch whose text is not valid UTF-8, read (and folded) as the runtime
    /// reads it, with U+FFFD in place of each bad sequence ([`BatchView::not_utf8`]).
    pub not_utf8: Vec<i64>,
    pub state: Result<InstanceState, String>,
}

/// The text parsed per chunk: enough to keep both cores busy, small enough that two chunks in
/// flight stay a few MB.
const CHUNK_BYTES: usize = 2 << 20;

/// The text [`fold_streams`] hands over at a time: half a chunk of one stream's, each parsed on
/// one thread while the other reads or applies. Paired against 2 MB (`health --all` on the 2 GB
/// journal, 10 alternating runs): 0.93–0.94× the wall time and CPU, 3 MB less at
/// the peak; `list --expired` 0.98×; 512 KB and 256 KB no better.
const STREAMS_CHUNK_BYTES: usize = 1 << 20;

/// The chunks of [`fold_streams`] that wait for the applying thread, read or parsed; one more is
/// being applied and one read.
const QUEUED_CHUNKS: usize = 2;

/// The records of a chunk's batches as [`read_batch`] reads them, in the chunk's order.
type Reads = Vec<Result<Vec<ReadRecord>, RecordError>>;

/// Read and fold the stream at `path`.
///
/// The answer is the whole-stream one: the first batch that does not parse wins over a record
/// that does not fold (every batch is parsed), else the first record that does not fold.
pub fn fold_stream(reader: &Flue2SqliteReader, path: &str) -> Result<FoldedStream, StoreError> {
    fold_stream_observed(reader, path, |_, _| {})
}

/// [`fold_stream`], `observe` called on every batch in `seq` order, before its records are
/// applied, with its records (`None`: the batch does not parse).
pub fn fold_stream_observed<F>(
    reader: &Flue2SqliteReader,
    path: &str,
    observe: F,
) -> Result<FoldedStream, StoreError>
where
    F: FnMut(&BatchView<'_>, Option<&[ReadRecord]>) + Send,
{
    fold_stream_in_chunks(reader, path, CHUNK_BYTES, observe)
}

/// [`fold_stream_observed`] parsing `chunk_bytes` of text at a time: the tests' way to run the
/// applying thread on small streams (1: one batch per chunk).
///
/// Records are read without their digests ([`read_batch_undigested`]); a stream where a record
/// id repeats is then folded again with them, not observed again: `observe` saw every batch of
/// the first read.
#[doc(hidden)]
pub fn fold_stream_in_chunks<F>(
    reader: &Flue2SqliteReader,
    path: &str,
    chunk_bytes: usize,
    observe: F,
) -> Result<FoldedStream, StoreError>
where
    F: FnMut(&BatchView<'_>, Option<&[ReadRecord]>) + Send,
{
    match fold_chunked(reader, path, chunk_bytes, false, observe)? {
        Some(folded) => Ok(folded),
        None => fold_stream_digested(reader, path),
    }
}

/// [`fold_stream`] reading every record with its digest.
fn fold_stream_digested(
    reader: &Flue2SqliteReader,
    path: &str,
) -> Result<FoldedStream, StoreError> {
    let folded = fold_chunked(reader, path, CHUNK_BYTES, true, unobserved)?;
    // With every digest taken a repeat is always decided: never `None`.
    Ok(folded.unwrap_or_else(|| FoldedStream {
        batches: 0,
        not_utf8: Vec::new(),
        state: Err(format!(
            "{path}: a repeated record id was read without its digest"
        )),
    }))
}

/// The fold of [`fold_stream_in_chunks`], records read with their digests or not (`None`: a
/// record id repeated where one was not taken).
fn fold_chunked<F>(
    reader: &Flue2SqliteReader,
    path: &str,
    chunk_bytes: usize,
    digests: bool,
    observe: F,
) -> Result<Option<FoldedStream>, StoreError>
where
    F: FnMut(&BatchView<'_>, Option<&[ReadRecord]>) + Send,
{
    let mut folding = Some(Folding::new(path, observe));
    std::thread::scope(|scope| {
        let mut stages: Option<Stages<'_, '_, F>> = None;
        // The chunks the applier is done with come back, to be read into again.
        let (back_tx, back_rx) = channel::<BatchChunk>();
        let mut chunk = BatchChunk::default();
        let read = reader.read_stream_into(path, 0, &mut chunk, |chunk| {
            if chunk.text_len() >= chunk_bytes {
                let next = back_rx.try_recv().unwrap_or_default();
                let full = std::mem::replace(chunk, next);
                let stages = stages.get_or_insert_with(|| {
                    let mut f = folding.take().expect("folded on one thread at a time");
                    let back = back_tx.clone();
                    let (apply_tx, apply_rx) = sync_channel::<(BatchChunk, Reads)>(1);
                    let applier = scope.spawn(move || {
                        for (mut chunk, reads) in apply_rx {
                            f.apply(&chunk, reads);
                            chunk.clear();
                            let _ = back.send(chunk);
                        }
                        f
                    });
                    let (parse_tx, parse_rx) = sync_channel::<BatchChunk>(1);
                    let parser = scope.spawn(move || {
                        for chunk in parse_rx {
                            let reads = parse(&chunk, digests);
                            // The applier stops only when this sender is dropped.
                            let _ = apply_tx.send((chunk, reads));
                        }
                    });
                    Stages {
                        parse_tx,
                        parser,
                        applier,
                    }
                });
                // The parser only stops when the sender is dropped: a send cannot fail.
                let _ = stages.parse_tx.send(full);
            }
            Ok(())
        });
        let f = match stages {
            Some(Stages {
                parse_tx,
                parser,
                applier,
            }) => {
                let _ = parse_tx.send(chunk);
                drop(parse_tx);
                if let Err(panic) = parser.join() {
                    std::panic::resume_unwind(panic);
                }
                match applier.join() {
                    Ok(f) => f,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            None => {
                let reads = parse(&chunk, digests);
                let mut f = folding.take().expect("not handed to an applier");
                f.apply(&chunk, reads);
                f
            }
        };
        read?;
        Ok(f.finish())
    })
}

/// Every batch of `chunk` read ([`read_batch`], or [`read_batch_undigested`] without
/// `digests`), on every core, in order.
fn parse(chunk: &BatchChunk, digests: bool) -> Reads {
    let read = |b: BatchView<'_>| {
        if let Some(why) = b.unreadable {
            return Err(unreadable(why));
        }
        if digests {
            read_batch(b.data)
        } else {
            read_batch_undigested(b.data)
        }
    };
    if chunk.batch_count() < 2 {
        return chunk.batches().map(read).collect();
    }
    let batches: Vec<BatchView<'_>> = chunk.batches().collect();
    batches.into_par_iter().map(read).collect()
}

/// The threads of a long stream: its chunks go to the parser, which hands them parsed to the
/// applier, which gives back the fold.
struct Stages<'s, 'p, F> {
    parse_tx: SyncSender<BatchChunk>,
    parser: ScopedJoinHandle<'s, ()>,
    applier: ScopedJoinHandle<'s, Folding<'p, F>>,
}

/// The fold in progress.
struct Folding<'p, F> {
    path: &'p str,
    batches: usize,
    not_utf8: Vec<i64>,
    state: InstanceState,
    fold_error: Option<String>,
    parse_error: Option<String>,
    /// A record id repeated where a digest was not taken ([`ReadRefusal::Undigested`]): the
    /// stream is to be read again with digests.
    undigested_repeat: bool,
    observe: F,
}

impl<'p, F: FnMut(&BatchView<'_>, Option<&[ReadRecord]>)> Folding<'p, F> {
    fn new(path: &'p str, observe: F) -> Folding<'p, F> {
        Folding {
            path,
            batches: 0,
            not_utf8: Vec::new(),
            state: InstanceState::new(),
            fold_error: None,
            parse_error: None,
            undigested_repeat: false,
            observe,
        }
    }

    /// Apply `chunk`'s batches, `reads` their records.
    fn apply(&mut self, chunk: &BatchChunk, reads: Reads) {
        for (b, records) in chunk.batches().zip(reads) {
            self.apply_one(&b, records);
        }
    }

    fn apply_one(&mut self, b: &BatchView<'_>, records: Result<Vec<ReadRecord>, RecordError>) {
        self.batches += 1;
        if b.not_utf8 {
            self.not_utf8.push(b.seq);
        }
        match records {
            Ok(records) => {
                (self.observe)(b, Some(&records));
                if self.parse_error.is_some() || self.fold_error.is_some() || self.undigested_repeat
                {
                    return;
                }
                self.state.begin_batch(b.seq);
                for r in records {
                    match self.state.apply_read(r) {
                        Ok(()) => {}
                        Err(ReadRefusal::Fold(e)) => {
                            self.fold_error = Some(format!("{}: {e}", self.path));
                            break;
                        }
                        Err(ReadRefusal::Undigested) => {
                            self.undigested_repeat = true;
                            break;
                        }
                    }
                }
                self.state.end_batch();
            }
            Err(e) => {
                (self.observe)(b, None);
                if self.parse_error.is_none() {
                    self.parse_error = Some(format!("batch {} of {}: {e}", b.seq, self.path));
                }
            }
        }
    }

    /// The whole-stream answer: the first batch that does not parse, else the first record that
    /// does not fold, else the fold. `None`: a record id repeated where a digest was not taken,
    /// the answer needs the stream read again with digests.
    fn finish(self) -> Option<FoldedStream> {
        if self.undigested_repeat {
            return None;
        }
        Some(FoldedStream {
            batches: self.batches,
            not_utf8: self.not_utf8,
            state: match self.parse_error.or(self.fold_error) {
                Some(e) => Err(e),
                None => Ok(self.state),
            },
        })
    }
}

/// Every batch of `chunk` read ([`read_batch_undigested`]), in order, on the applying thread:
/// the records are then made and dropped by one thread. Parsed on the rayon pool instead, a
/// journal's many small streams cost more than they gained (`list --expired` on the 2 GB
/// journal: 1.63 s wall, 2.19 s CPU against 1.48 s and 2.01 s, whole-process timing, 4
/// alternating runs): records made on the pool's threads and freed on this one, and the pool
/// woken for every chunk. Measured again under mimalloc, where freeing on another thread is
/// cheap: still 1.04× the wall time of `health --all` and 1.02× of `list --expired`. The reading
/// thread also parses a chunk when the applier is behind ([`hand_over`]); first tried for any
/// chunk, it put `health --all`'s peak at 140–149 MB in 1 run of 15 (the others ≤ 97 MB), so a
/// chunk grown past its size by a big batch is not. Two applying threads, each stream parsed and
/// folded whole on one of them (a long stream alone, the folds handed over in order): `health
/// --all` 0.86× and `list --expired` 0.90× (paired, 4 and 6 runs), but a peak of 155 MB in 1 run
/// of 14, the short streams folded while a long one folded all held until it was handed over;
/// bounded to 16 streams ahead, 0.92× and 0.98× for a peak of 96–105 MB against 95: not kept,
/// for what it gave.
fn parse_here(chunk: &BatchChunk) -> Reads {
    chunk
        .batches()
        .map(|b| match b.unreadable {
            Some(why) => Err(unreadable(why)),
            None => read_batch_undigested(b.data),
        })
        .collect()
}

/// A batch the runtime's read of the stream fails on ([`BatchView::unreadable`]): to the fold,
/// a batch that does not parse (the stream cannot be loaded; the runtime reads every batch
/// before it folds one).
fn unreadable(why: &str) -> RecordError {
    RecordError {
        record_id: String::new(),
        record_type: String::new(),
        reason: why.to_string(),
    }
}

/// A chunk of [`fold_streams`]' batches on its way to the applying thread: as read, or parsed
/// by the reading thread.
enum Chunk {
    Text(BatchChunk),
    Parsed(BatchChunk, Reads),
}

/// Hand `chunk` (`bytes` of text) to the applying thread; when that thread is behind (the chunk
/// before still waits), parse it here first rather than wait idle. Why: the applying thread
/// parses and applies, the reading thread only reads, so one waited on the other (`health
/// --all`: 1.45 of 2 cores busy). Only a chunk of about `chunk_bytes` is parsed here: a chunk
/// grown by a spilled batch of many MB, parsed, would be held while the applier catches up, a
/// few times its text in records (the resident peak once reached 149 MB when any chunk could be).
fn hand_over(tx: &SyncSender<Chunk>, chunk: BatchChunk, chunk_bytes: usize, parses: ReaderParses) {
    if parses == ReaderParses::Always {
        let reads = parse_here(&chunk);
        let _ = tx.send(Chunk::Parsed(chunk, reads));
        return;
    }
    match tx.try_send(Chunk::Text(chunk)) {
        Ok(()) => {}
        Err(TrySendError::Full(Chunk::Text(chunk))) => {
            let next = if chunk.text_len() <= chunk_bytes + chunk_bytes / 4 {
                let reads = parse_here(&chunk);
                Chunk::Parsed(chunk, reads)
            } else {
                Chunk::Text(chunk)
            };
            // The applier only stops when the sender is dropped, or on the caller's error.
            let _ = tx.send(next);
        }
        Err(_) => {}
    }
}

/// The observer of a fold nobody observes.
type Unobserved = fn(&BatchView<'_>, Option<&[ReadRecord]>);

fn unobserved(_: &BatchView<'_>, _: Option<&[ReadRecord]>) {}

/// Every stream of `paths` folded ([`fold_stream`]'s answer for each), `each` called with each
/// stream's index in `paths` and its fold, in order, on the calling thread and between the reads
/// of two streams (so it may read the journal itself), each fold dropped after its call; an error
/// of `each` stops the reading and is the answer.
///
/// One pipeline for all of them (`health --all`, `list`): a journal's streams are mostly small,
/// so chunks of batch text span streams, read here and parsed and folded on an applying thread
/// while the next are read. At most four chunks of text and the folds not yet handed to `each`
/// are held.
pub fn fold_streams<E, Er>(reader: &Flue2SqliteReader, paths: &[String], each: E) -> Result<(), Er>
where
    E: FnMut(usize, FoldedStream) -> Result<(), Er>,
    Er: From<StoreError>,
{
    fold_streams_in_chunks(
        reader,
        paths,
        STREAMS_CHUNK_BYTES,
        ReaderParses::WhenBehind,
        each,
    )
}

/// Which chunks [`fold_streams`]' reading thread parses itself ([`hand_over`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderParses {
    /// Those of about the chunk size, when the applying thread is behind: what it does.
    WhenBehind,
    /// Every one: the tests' way to apply parsed chunks in every order and size.
    Always,
}

/// [`fold_streams`] parsing `chunk_bytes` of text at a time (the tests': 1 is a chunk per batch).
#[doc(hidden)]
pub fn fold_streams_in_chunks<E, Er>(
    reader: &Flue2SqliteReader,
    paths: &[String],
    chunk_bytes: usize,
    parses: ReaderParses,
    mut each: E,
) -> Result<(), Er>
where
    E: FnMut(usize, FoldedStream) -> Result<(), Er>,
    Er: From<StoreError>,
{
    std::thread::scope(|scope| {
        // Two chunks may wait for the applier: with one, the reading thread (never idle) parsed
        // a chunk whenever the applier was behind by one, and the applier then waited for it
        // (`perf sched`: 393 waits, 0.3 s of `health --all`'s 1.6 s). Paired on the 2 GB
        // journal: 0.96-0.97x the wall time of `health --all` for a peak 8-9 MB higher.
        let (tx, rx) = sync_channel::<Chunk>(QUEUED_CHUNKS);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Option<FoldedStream>)>();
        // A stream whose fold needs digests ([`Folding::finish`]) is read again, whole, here.
        let folded = |k: usize, f: Option<FoldedStream>| -> Result<FoldedStream, Er> {
            match f {
                Some(f) => Ok(f),
                None => fold_stream_digested(reader, &paths[k]).map_err(Er::from),
            }
        };
        // The chunks the applier is done with come back, to be read into again.
        let (back_tx, back_rx) = channel::<BatchChunk>();
        let applier = scope.spawn(move || {
            let mut folding: Option<(usize, Folding<'_, Unobserved>)> = None;
            for chunk in rx {
                let (mut chunk, reads) = match chunk {
                    Chunk::Text(chunk) => {
                        let reads = parse_here(&chunk);
                        (chunk, reads)
                    }
                    Chunk::Parsed(chunk, reads) => (chunk, reads),
                };
                let mut reads = reads.into_iter();
                for item in chunk.items() {
                    match item {
                        ChunkItem::Batch(i, b) => {
                            let (_, f) = folding.get_or_insert_with(|| {
                                (i, Folding::new(&paths[i], unobserved as Unobserved))
                            });
                            let records = reads.next().expect("a read for every batch");
                            f.apply_one(&b, records);
                        }
                        ChunkItem::End(i) => {
                            let f = match folding.take() {
                                Some((_, f)) => f,
                                None => Folding::new(&paths[i], unobserved as Unobserved),
                            };
                            // The caller stopped (an error): nothing more is wanted.
                            if done_tx.send((i, f.finish())).is_err() {
                                return;
                            }
                        }
                    }
                }
                chunk.clear();
                let _ = back_tx.send(chunk);
            }
        });
        let mut chunk = BatchChunk::default();
        let result = (|| {
            for (i, path) in paths.iter().enumerate() {
                reader
                    .read_stream_into(path, i, &mut chunk, |chunk| {
                        if chunk.text_len() >= chunk_bytes {
                            let next = back_rx.try_recv().unwrap_or_default();
                            let full = std::mem::replace(chunk, next);
                            hand_over(&tx, full, chunk_bytes, parses);
                        }
                        Ok(())
                    })
                    .map_err(Er::from)?;
                chunk.end_stream(i);
                while let Ok((k, f)) = done_rx.try_recv() {
                    each(k, folded(k, f)?)?;
                }
            }
            let _ = tx.send(Chunk::Text(std::mem::take(&mut chunk)));
            drop(tx);
            for (k, f) in done_rx.iter() {
                each(k, folded(k, f)?)?;
            }
            Ok(())
        })();
        // On an error the sender is dropped with the closure and the applier stops at the end of
        // what it was sent.
        match applier.join() {
            Ok(()) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
