//! The list scan's session read: walk the active path back from `leafId` by primary-key lookups
//! and stop at the submission's input entry (spec §2.8), instead of reading the whole session.
//!
//! The runtime's input is the FIRST marked entry on the active path; the walk finds the NEAREST
//! one to the leaf. The runtime never applies an input that is already on the active path, so the
//! two agree on every database it wrote. They can differ only on a damaged or hand-made session:
//! - a second entry with the same input marker earlier on the active path (detected only when the
//!   walk goes past the input anyway, for the model, below);
//! - damage off the walked path: an entry elsewhere in the session whose JSON does not parse or is
//!   not UTF-8 (the runtime cannot load the session, so the full read says `damaged`), or a row
//!   whose `data.id` repeats the id of a walked entry (the runtime's id map takes the later row);
//! - a `stream_continued` signal or an interruption advisory of this submission before its input;
//! - an image marker without its chunk rows before the input (`image_chunks.rs`: every entry that
//!   owns chunk rows is checked whatever was walked).
//!
//! Damage ON the walked path (a missing leaf or parent, a parent whose position is not smaller
//! than its child's, which is how a cycle shows, JSON that does not parse, text that is not UTF-8,
//! `data.id` differing from `entry_id`) makes the walk give up and read the session whole and
//! compact (`compact_load`), which classifies exactly like a full read.
//!
//! The context window comes from the last assistant's model on the whole active path; when the
//! walked part has no assistant with a model but does have an assistant (so the window matters),
//! the walk continues until it finds one, noting a repeated input marker on the way.
//!
//! Walks are cached per session and reused while the session row's `data` (which holds `leafId`
//! and `updatedAt`) is unchanged: the submissions of one session share one walk, and their
//! records are views into one allocation of its entries (`EntrySlice`), each from its own input.
//! A session of 2,500 submissions over 120,000 entries was walked once per submission (hours for
//! `list --status all`); a long walk is now also kept while shorter sessions come and go.

use crate::image_chunks::SessionImages;
use std::collections::VecDeque;
use std::sync::Arc;

use compact_str::CompactString;

use super::{SessionRecord, StoreError};
use crate::compact_load::load_compact;
use crate::parallel_parse::Batch;
use crate::session_rows::{
    lossy_entry, PartRange, SessionData, SessionLoader, SessionRows, SessionScope, SplitBelow,
    LOSSY_DATA,
};
use turnscope_core::journal::compact::{parse_compact_previews, Previews};
use turnscope_core::journal::entry::{Entry, EntryBody, Role};
use turnscope_core::journal::entry_slice::EntrySlice;
use turnscope_core::journal::history::SubmissionKind;

/// Sessions whose walks are kept: the sessions of a listing interleave (the scale database's
/// eight longest, 1,000 submissions each, run through the whole of it), and a long session's walk
/// evicted between two of its submissions was walked again for each.
const CACHED_SESSIONS: usize = 32;
/// Entries the kept walks hold at most (about 28 MB of compact entries), beyond the most recent
/// walk, which is kept whatever its length.
const CACHED_ENTRIES: usize = 200_000;

/// Primary-key lookups a walk makes before it reads on backwards by position in chunks: most
/// walks stop within a few entries, a whale submission's goes on for 100,000 (one range scan of
/// the position index is several times cheaper than a lookup per entry).
const KEY_LOOKUPS: usize = 64;
/// Rows per backward chunk, growing to `MAX_CHUNK` while a chunk's rows fit in about
/// `CHUNK_BYTES`: the rows are copied, then parsed while they are still in the cache (chunks of
/// 8,192 rows, ~16 MB of a whale's tool results, were out of it by the time they were parsed).
const FIRST_CHUNK: usize = 256;
const MAX_CHUNK: usize = 8192;
const CHUNK_BYTES: usize = 1 << 20;
/// Rows per segment of a long walk read in two halves at once (`SessionRows::split_below`):
/// about 32 MB of a whale's rows, parsed where they are read.
const SEGMENT: usize = 16384;

/// Reads sessions for `list` (a `SessionLoader`), keeping recent walks.
#[derive(Default)]
pub struct PathWalker {
    /// `--context-window` was given: the model need not be looked up.
    window_given: bool,
    cache: VecDeque<Walk>,
    /// Sessions read whole because the walk met damage (for the caller to report).
    pub fallbacks: Vec<(String, String)>,
    /// Segments of long walks read in two halves at once.
    pub segments_read: usize,
    /// Entries walked, over all walks (a session's walk shared by its submissions counts once).
    pub entries_walked: usize,
    /// The buffer each read-ahead chunk is copied into, reused.
    scratch: Batch,
}

struct Walk {
    key: String,
    data: SessionData,
    leaf_id: Option<String>,
    data_problems: Vec<String>,
    /// The entries nearest the leaf, oldest first, as the records' views share them
    /// (`EntrySlice::path_from`).
    near: Arc<[Entry]>,
    /// Entries walked beyond `near`, nearest the leaf first.
    chain: Vec<Entry>,
    /// The nearest entry walked carrying each input marker (dispatch ids, then direct
    /// submission ids), over the first `marked` entries walked: each submission of a session
    /// looked for its input from the leaf, a pass over the path for each.
    inputs: [foldhash::HashMap<String, usize>; 2],
    marked: usize,
    next: Next,
    /// Primary-key lookups made so far.
    lookups: usize,
    /// Rows read ahead by position (descending), parsed, not yet reached by the walk.
    ahead: VecDeque<AheadRow>,
    /// Rows below this position have not been read ahead yet; `None` before the first chunk.
    fetched_below: Option<i64>,
    /// The backward read reached the session's first row.
    exhausted: bool,
    chunk: usize,
    /// Chunks read so far: from the third on, the next one is read while this one is parsed.
    chunks_read: usize,
    prefetched: Option<Prefetch>,
    /// The buffer the next prefetch is read into.
    spare: Batch,
    /// Segments may be read in two halves at once (until the backend once says it cannot); no
    /// chunk is prefetched meanwhile.
    segments: bool,
    /// Segments read so far (not yet counted in `PathWalker::segments_read`).
    segments_read: usize,
    /// The session's image chunk rows checked against their entries (`image_chunks.rs`).
    images: SessionImages,
    /// Entries looked at for image markers without chunk rows so far (the first this many of
    /// the walk), and those found: `(index in the walk, position, problem)`.
    images_seen: usize,
    unowned_images: Vec<(usize, i64, String)>,
}

impl Walk {
    /// The image damage a submission whose input is walk entry `upto` meets: every entry owning
    /// chunk rows, and the entries from the leaf to its input with markers and no row (each
    /// entry of the walk looked at once, however many submissions share it).
    fn image_problems(&mut self, upto: usize) -> Vec<String> {
        while self.images_seen < self.len() {
            let i = self.images_seen;
            self.images_seen += 1;
            if let Some((position, problem)) = self.images.unowned_markers(self.at(i)) {
                self.unowned_images.push((i, position, problem));
            }
        }
        let walked = self
            .unowned_images
            .iter()
            .filter(|(i, ..)| *i <= upto)
            .map(|(_, position, problem)| (*position, problem.clone()));
        self.images.problems_with(walked)
    }
}

/// A row read ahead: its position, compact parse (`None`: not UTF-8) and `entry_id`.
struct AheadRow {
    position: i64,
    entry: Option<Entry>,
    /// The `entry_id` column when it is not the parsed entry's `data.id` (or there is no parse);
    /// otherwise the entry's id is it, and no copy is kept.
    other_id: Option<Vec<u8>>,
}

impl AheadRow {
    fn new(id: &[u8], position: i64, data: &[u8], blob: bool) -> AheadRow {
        let entry = parse_row(position, &String::from_utf8_lossy(id), data, blob);
        let other_id = match &entry {
            Some(e) if e.id.as_bytes() == id => None,
            _ => Some(id.to_vec()),
        };
        AheadRow {
            position,
            entry,
            other_id,
        }
    }

    fn has_id(&self, id: &str) -> bool {
        match (&self.other_id, &self.entry) {
            (Some(other), _) => other.as_slice() == id.as_bytes(),
            (None, Some(e)) => e.id == id,
            (None, None) => false,
        }
    }
}

/// A row's compact parse, `None` when it is not UTF-8 (the walk then gives up on the path, as
/// it does on a row stored as a BLOB, which is `Entry::blob_row`, malformed).
fn parse_row(position: i64, id: &str, data: &[u8], blob: bool) -> Option<Entry> {
    if blob {
        return Some(Entry::blob_row(position, id, data));
    }
    // The parse checks the UTF-8 itself (a second check cost a whale walk 4 % of its time). The
    // list prints no message text: previews are not kept.
    let (entry, lossy) = parse_compact_previews(position, id, data, Previews::Drop);
    (!lossy).then_some(entry)
}

/// Parse a read-ahead chunk on two threads (parsing, not reading, is most of a long walk),
/// appending its rows to `ahead` in order. `meanwhile` runs on this thread while they parse (the
/// next chunk's read, which only this thread's connection can make).
fn parse_chunk<T>(raw: &Batch, ahead: &mut VecDeque<AheadRow>, meanwhile: impl FnOnce() -> T) -> T {
    let parse = |from: usize, to: usize| -> Vec<AheadRow> {
        raw.rows(from, to)
            .map(|(id, position, data, blob)| AheadRow::new(id, position, data, blob))
            .collect()
    };
    let len = raw.len();
    if len < 256 {
        ahead.extend(parse(0, len));
        return meanwhile();
    }
    let half = len / 2;
    std::thread::scope(|scope| {
        let first = scope.spawn(|| parse(0, half));
        let later = scope.spawn(|| parse(half, len));
        let out = meanwhile();
        ahead.extend(first.join().unwrap_or_else(|_| parse(0, half)));
        ahead.extend(later.join().unwrap_or_else(|_| parse(half, len)));
        out
    })
}

/// A chunk read while the one before it was parsed: the rows below `from`, up to `asked`.
struct Prefetch {
    from: i64,
    asked: usize,
    rows: Batch,
    lowest: i64,
}

/// Read up to `limit` rows of `key` below `from` into `raw` (cleared first); their lowest
/// position (`from` when there is none).
fn read_chunk(
    rows: &dyn SessionRows,
    key: &str,
    from: i64,
    limit: usize,
    raw: &mut Batch,
) -> Result<i64, StoreError> {
    let mut lowest = from;
    raw.clear();
    rows.entries_before(key, from, limit, &mut |id, pos, data, blob| {
        lowest = lowest.min(pos);
        raw.push(id, pos, data, blob);
    })?;
    Ok(lowest)
}

enum Next {
    /// Continue with this parent id; the child's position bounds the parent's. A
    /// `CompactString`, like the entry's: copying the runtime's ids allocates nothing.
    Parent { id: CompactString, below: i64 },
    /// The root was reached.
    Root,
    /// The path is damaged here: read the session whole.
    Damaged(String),
}

impl PathWalker {
    pub fn new(window_given: bool) -> PathWalker {
        PathWalker {
            window_given,
            ..PathWalker::default()
        }
    }

    fn walk_for(&mut self, rows: &dyn SessionRows, key: &str) -> Result<Option<usize>, StoreError> {
        let Some(data) = rows.session_data(key)? else {
            self.cache.retain(|w| w.key != key);
            return Ok(None);
        };
        if let Some(i) = self
            .cache
            .iter()
            .position(|w| w.key == key && w.data == data)
        {
            // The most recently used walk first, for `make_room`.
            if let Some(w) = self.cache.remove(i) {
                self.cache.push_front(w);
            }
            return Ok(Some(0));
        }
        self.cache.retain(|w| w.key != key);
        self.make_room();
        let (leaf_id, data_problems) = data.parse();
        let images = SessionImages::read(rows, key)?;
        let next = match &leaf_id {
            Some(leaf) if !leaf.is_empty() => Next::Parent {
                id: leaf.as_str().into(),
                below: i64::MAX,
            },
            _ => Next::Root,
        };
        self.cache.push_front(Walk {
            key: key.to_string(),
            data,
            leaf_id,
            data_problems,
            near: Arc::from([]),
            chain: Vec::new(),
            inputs: Default::default(),
            marked: 0,
            next,
            lookups: 0,
            ahead: VecDeque::new(),
            fetched_below: None,
            exhausted: false,
            chunk: FIRST_CHUNK,
            chunks_read: 0,
            prefetched: None,
            spare: Batch::default(),
            segments: true,
            segments_read: 0,
            images,
            images_seen: 0,
            unowned_images: Vec::new(),
        });
        Ok(Some(0))
    }

    /// Room for one more walk. Beyond `CACHED_ENTRIES`, the least recent walks go (the most
    /// recent stays); beyond `CACHED_SESSIONS`, the walk with the fewest entries goes (the least
    /// recent of those), being the cheapest to walk again.
    fn make_room(&mut self) {
        let mut held: usize = self.cache.iter().map(Walk::len).sum();
        while self.cache.len() > 1 && held > CACHED_ENTRIES {
            held -= self.cache.pop_back().map_or(0, |w| w.len());
        }
        if self.cache.len() >= CACHED_SESSIONS {
            let victim = (0..self.cache.len())
                .min_by_key(|&i| (self.cache[i].len(), std::cmp::Reverse(i)))
                .expect("the cache is full");
            self.cache.remove(victim);
        }
    }
}

impl Walk {
    /// Entries walked so far.
    fn len(&self) -> usize {
        self.near.len() + self.chain.len()
    }

    /// The `i`th entry walked, counting back from the leaf (0).
    fn at(&self, i: usize) -> &Entry {
        let n = self.near.len();
        if i < n {
            &self.near[n - 1 - i]
        } else {
            &self.chain[i - n]
        }
    }

    /// The path from the `upto`th entry walked to the leaf, oldest first, as a view into `near`;
    /// `near` first takes in the walked entries up to the `through`th (`through >= upto`).
    fn path_since(&mut self, upto: usize, through: usize) -> EntrySlice {
        let n = self.near.len();
        if through >= n {
            let deeper = self.chain.split_off(through + 1 - n);
            let nearer = std::mem::replace(&mut self.chain, deeper);
            self.near = input_first(nearer, &self.near);
        }
        EntrySlice::path_from(self.near.clone(), self.near.len() - 1 - upto)
    }

    /// Take one step back; false when the walk cannot go further.
    fn step(&mut self, rows: &dyn SessionRows, raw: &mut Batch) -> Result<bool, StoreError> {
        let Next::Parent { id, below } = &self.next else {
            return Ok(false);
        };
        let (id, below) = (id.clone(), *below);
        let lookup = |rows: &dyn SessionRows, key: &str| -> Result<_, StoreError> {
            Ok(rows
                .entry_by_id(key, &id)?
                .map(|r| (r.position, parse_row(r.position, &id, &r.data, r.blob))))
        };
        let found = if self.lookups < KEY_LOOKUPS {
            self.lookups += 1;
            lookup(rows, &self.key)?
        } else {
            match self.read_ahead(rows, raw, &id, below)? {
                Some(row) => Some(row),
                // Not among the rows below the child (a damaged path, or positions that repeat
                // across a chunk boundary): the lookup decides, as for the first steps.
                None => lookup(rows, &self.key)?,
            }
        };
        let (id, below) = (&id, &below);
        let Some((position, parsed)) = found else {
            self.next = Next::Damaged(if self.len() == 0 {
                format!("leafId {id} names no entry")
            } else {
                format!("parentId {id} names no entry")
            });
            return Ok(true);
        };
        if position >= *below || position < 0 {
            self.next = Next::Damaged(format!(
                "entry {id} has position {position} after its child's"
            ));
            return Ok(true);
        }
        let Some(e) = parsed else {
            self.next = Next::Damaged(lossy_entry(id, position));
            return Ok(true);
        };
        if matches!(e.body, EntryBody::Malformed { .. }) || e.id != id {
            self.next = Next::Damaged(format!("entry {id} is malformed or has another data.id"));
            return Ok(true);
        }
        self.next = match &e.parent_id {
            Some(p) if !p.is_empty() => Next::Parent {
                id: p.clone(),
                below: e.position,
            },
            _ => Next::Root,
        };
        self.chain.push(e);
        Ok(true)
    }

    /// The row `id` among the rows below position `below` (its position and parse), read
    /// backwards in chunks; rows the walk passes over (abandoned branches, other submissions'
    /// entries) are dropped.
    fn read_ahead(
        &mut self,
        rows: &dyn SessionRows,
        raw: &mut Batch,
        id: &str,
        below: i64,
    ) -> Result<Option<(i64, Option<Entry>)>, StoreError> {
        if self.fetched_below.is_none() {
            self.fetched_below = Some(below);
        }
        loop {
            while let Some(row) = self.ahead.front() {
                if row.position >= below {
                    self.ahead.pop_front();
                } else if row.has_id(id) {
                    let row = self.ahead.pop_front().expect("front exists");
                    return Ok(Some((row.position, row.entry)));
                } else {
                    self.ahead.pop_front();
                }
            }
            if self.exhausted {
                return Ok(None);
            }
            let from = self.fetched_below.unwrap_or(below).min(below);
            // A long walk (past its third chunk) reads on in segments, two halves at once, where
            // the backend can.
            if self.chunks_read >= 3 && self.segments {
                match rows.split_below(&self.key, from, SEGMENT)? {
                    Some(split) => {
                        self.read_segment(from, split)?;
                        continue;
                    }
                    None => self.segments = false,
                }
            }
            // The chunk read ahead is used only when it is the one this read asks for (a lookup
            // outside the rows read ahead may have moved the walk further down).
            let lowest = match self.prefetched.take() {
                Some(mut p) if p.from == from && p.asked == self.chunk => {
                    // The buffers trade places: a fresh megabyte per chunk costs page faults.
                    std::mem::swap(raw, &mut p.rows);
                    self.spare = p.rows;
                    p.lowest
                }
                _ => read_chunk(rows, &self.key, from, self.chunk, raw)?,
            };
            let got = raw.len();
            self.exhausted = got < self.chunk;
            self.fetched_below = Some(lowest);
            self.chunks_read += 1;
            let fit = CHUNK_BYTES / (raw.bytes() / got.max(1)).max(1);
            self.chunk = (self.chunk * 2).min(MAX_CHUNK).min(fit).max(FIRST_CHUNK);
            // A walk past its third chunk is a long one (a whale submission's): read the next
            // chunk while this one is parsed. Shorter walks stop within a chunk or two, and a
            // read they never use would cost them.
            let (key, next) = (&self.key, self.chunk);
            let ahead = &mut self.ahead;
            self.prefetched = if self.chunks_read >= 3 && !self.exhausted && !self.segments {
                let mut spare = std::mem::take(&mut self.spare);
                let next_lowest = parse_chunk(raw, ahead, || {
                    read_chunk(rows, key, lowest, next, &mut spare)
                })?;
                Some(Prefetch {
                    from: lowest,
                    asked: next,
                    rows: spare,
                    lowest: next_lowest,
                })
            } else {
                parse_chunk(raw, ahead, || ());
                None
            };
        }
    }

    /// Read the segment `split` of the rows below `below` into `ahead`: the upper half on this
    /// thread, the lower half on another, each row parsed where it is read.
    fn read_segment(&mut self, below: i64, split: SplitBelow<'_>) -> Result<(), StoreError> {
        let key = self.key.as_str();
        let part = |lo, hi| PartRange {
            lo,
            hi: Some(hi),
            descending: true,
        };
        let (lower_part, lo, mid) = (split.lower, split.lo, split.mid);
        let (upper, lower) = std::thread::scope(|scope| {
            let lower = scope.spawn(move || {
                let mut out = Vec::new();
                lower_part
                    .for_each_entry_in(key, part(lo, mid), &mut |id, position, data, blob| {
                        out.push(AheadRow::new(id, position, data, blob))
                    })
                    .map(|()| out)
            });
            let mut out = Vec::new();
            let upper = split
                .upper
                .for_each_entry_in(
                    key,
                    part(Some(split.mid), below),
                    &mut |id, position, data, blob| {
                        out.push(AheadRow::new(id, position, data, blob))
                    },
                )
                .map(|()| out);
            (upper, lower.join())
        });
        let lower = lower.map_err(|_| StoreError::Sqlite {
            context: "reading session entries".into(),
            detail: "the thread reading a segment's lower half stopped".into(),
        })??;
        self.ahead.extend(upper?);
        self.ahead.extend(lower);
        self.chunks_read += 1;
        self.segments_read += 1;
        match split.lo {
            Some(lo) => self.fetched_below = Some(lo),
            None => self.exhausted = true,
        }
        Ok(())
    }

    /// Index in `chain` of the nearest entry carrying the submission's input marker, walking as
    /// far as needed; `Err(reason)` when the path is damaged before it is found.
    fn find_input(
        &mut self,
        rows: &dyn SessionRows,
        raw: &mut Batch,
        kind: SubmissionKind,
        id: &str,
    ) -> Result<Result<Option<usize>, String>, StoreError> {
        let slot = |kind| match kind {
            SubmissionKind::Dispatch => 0,
            SubmissionKind::Direct => 1,
        };
        loop {
            if let Some(&i) = self.inputs[slot(kind)].get(id) {
                return Ok(Ok(Some(i)));
            }
            while self.marked < self.len() {
                let i = self.marked;
                self.marked += 1;
                let Some(m) = self.at(i).message() else {
                    continue;
                };
                let marks = m.markers();
                let found = [
                    marks.dispatch_id.clone(),
                    marks.direct_submission_id.clone(),
                ];
                // Nothing before this entry carries `id` (the lookup above said so).
                let hit = found[slot(kind)].as_deref() == Some(id);
                for (k, marker) in found.into_iter().enumerate() {
                    if let Some(marker) = marker {
                        self.inputs[k].entry(marker).or_insert(i);
                    }
                }
                if hit {
                    return Ok(Ok(Some(i)));
                }
            }
            if !self.step(rows, raw)? {
                return Ok(match &self.next {
                    Next::Damaged(why) => Err(why.clone()),
                    _ => Ok(None),
                });
            }
        }
    }

    /// Walk on past `from` until an assistant with a non-empty model is in `chain`; `Err` when a
    /// repeated input marker or damage is met on the way.
    fn extend_for_model(
        &mut self,
        rows: &dyn SessionRows,
        raw: &mut Batch,
        from: usize,
        kind: SubmissionKind,
        id: &str,
    ) -> Result<Result<usize, String>, StoreError> {
        let mut i = from + 1;
        loop {
            while i < self.len() {
                if is_input(self.at(i), kind, id) {
                    return Ok(Err(
                        "the input marker appears twice on the active path".into()
                    ));
                }
                if has_model(self.at(i)) {
                    return Ok(Ok(i));
                }
                i += 1;
            }
            if !self.step(rows, raw)? {
                return Ok(match &self.next {
                    Next::Damaged(why) => Err(why.clone()),
                    _ => Ok(i - 1),
                });
            }
        }
    }
}

fn is_input(e: &Entry, kind: SubmissionKind, id: &str) -> bool {
    let Some(m) = e.message() else { return false };
    match kind {
        SubmissionKind::Dispatch => m.markers().dispatch_id.as_deref() == Some(id),
        SubmissionKind::Direct => m.markers().direct_submission_id.as_deref() == Some(id),
    }
}

/// Entries moved from a chain into the record's slice per step, the chain's buffer shrunk after
/// each (about half a megabyte of a whale's compact entries).
const HAND_OVER_STEP: usize = 4096;

/// A walked chain (leaf first) as the oldest part of a path, then `nearer` (oldest first), in one
/// slice. The chain is moved, never held twice: the slice is filled from the chain's end, whose
/// buffer is shrunk as it empties. A 240,000-entry whale's chain is 33 MB; reversing it and then
/// converting it into the record's slice held it twice, the peak of the whole list
/// (`list --expired` on that journal: 133 MB of heap). `nearer`'s entries are cloned (shallow:
/// their bodies are shared); a path is extended so only when a submission's input lies beyond it.
fn input_first(mut chain: Vec<Entry>, nearer: &[Entry]) -> Arc<[Entry]> {
    let len = chain.len();
    // A range mapped is a trusted-length iterator: the slice is allocated once, filled in place.
    (0..len + nearer.len())
        .map(|i| {
            if i >= len {
                return nearer[i - len].clone();
            }
            if i > 0 && i % HAND_OVER_STEP == 0 {
                // Shrinking reallocates in place (the allocator gives the tail back).
                chain.shrink_to_fit();
            }
            chain.pop().expect("one entry for each slot")
        })
        .collect()
}

fn has_model(e: &Entry) -> bool {
    e.message_with_role(&Role::Assistant)
        .and_then(|m| m.model())
        .is_some_and(|m| !m.is_empty())
}

impl SessionLoader for PathWalker {
    fn load(
        &mut self,
        rows: &dyn SessionRows,
        key: &str,
        kind: &str,
        submission_id: &str,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let Some(w) = self.walk_for(rows, key)? else {
            return Ok(None);
        };
        let k = SubmissionKind::parse(kind).unwrap_or(SubmissionKind::Dispatch);
        let walk = &mut self.cache[w];
        let walked_before = walk.len();
        let raw = &mut self.scratch;
        let found = walk.find_input(rows, raw, k, submission_id);
        self.segments_read += std::mem::take(&mut walk.segments_read);
        let found = found?;
        let upto = match found {
            Ok(Some(i)) => {
                let nearer = || (0..i).map(|j| walk.at(j));
                let any_assistant =
                    nearer().any(|e| e.message_with_role(&Role::Assistant).is_some());
                if self.window_given || !any_assistant || nearer().any(has_model) {
                    Ok(i)
                } else {
                    walk.extend_for_model(rows, raw, i, k, submission_id)?
                }
            }
            // Not on the path: the walk reached the root.
            Ok(None) => Ok(walk.len().saturating_sub(1)),
            Err(why) => Err(why),
        };
        self.segments_read += std::mem::take(&mut walk.segments_read);
        self.entries_walked += walk.len() - walked_before;
        let upto = match upto {
            Ok(i) => i,
            Err(why) => {
                self.fallbacks.push((submission_id.to_string(), why));
                return load_compact(rows, key, kind, submission_id, Previews::Drop);
            }
        };
        let shared = walk.near.len();
        let through = if shared > 0 && upto >= shared {
            // The shared path is extended for an input beyond it. Submissions met newest first
            // would each extend it a little and copy it whole (quadratic): it is extended to at
            // least twice its length, so the copies add up to a few times the path.
            let before = walk.len();
            while walk.len() <= 2 * shared && walk.step(rows, raw)? {}
            self.segments_read += std::mem::take(&mut walk.segments_read);
            self.entries_walked += walk.len() - before;
            upto.max((2 * shared).min(walk.len() - 1))
        } else {
            upto
        };
        let entries = if walk.len() == 0 {
            EntrySlice::default()
        } else {
            walk.path_since(upto, through)
        };
        let (data, leaf_id) = (walk.data.text.clone(), walk.leaf_id.clone());
        let mut data_problems = walk.data_problems.clone();
        data_problems.extend(walk.image_problems(upto));
        Ok(Some(SessionRecord {
            id: key.to_string(),
            data,
            leaf_id,
            data_problems,
            not_utf8: if walk.data.lossy {
                vec![LOSSY_DATA.to_string()]
            } else {
                Vec::new()
            },
            entries,
            scope: SessionScope::PathSinceInput,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(position: i64) -> Entry {
        let raw = format!(
            r#"{{"type":"message","id":"e{position}","parentId":null,"message":{{"role":"user","content":"x"}}}}"#
        );
        Entry::parse(position, &format!("e{position}"), &raw)
    }

    #[test]
    fn a_chain_is_handed_over_input_first_across_every_shrink_step() {
        for len in [
            0,
            1,
            2,
            HAND_OVER_STEP - 1,
            HAND_OVER_STEP,
            2 * HAND_OVER_STEP + 3,
        ] {
            for nearer in [0, 3] {
                // Leaf first, as the walk builds it: the highest position first; the entries
                // nearer the leaf, already shared, oldest first.
                let top = len as i64 + nearer;
                let chain: Vec<Entry> = (0..len as i64).rev().map(entry).collect();
                let near: Vec<Entry> = (len as i64..top).map(entry).collect();
                let entries = input_first(chain.clone(), &near);
                let expected: Vec<Entry> = chain.into_iter().rev().chain(near).collect();
                assert_eq!(
                    &entries[..],
                    &expected[..],
                    "{len} entries, {nearer} nearer"
                );
                assert!(entries.windows(2).all(|w| w[0].position < w[1].position));
            }
        }
    }
}
