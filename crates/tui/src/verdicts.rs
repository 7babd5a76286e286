//! Verdicts of running rows, computed off the refresh: a refresh draws running rows from their
//! submission rows at once (placeholders, or the cached verdict when the row is unchanged) and
//! queues them here; the worker then works through the queue between requests, visible rows
//! first, and sends the results in small batches. Each verdict is cached per submission with the
//! fingerprint of everything it read, so a later refresh only re-reads what changed.
//!
//! The cache keeps what the list needs to re-plan at a new time (the row, the journal row and the
//! session inspection), never the session's entries.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use super::messages::{ListItem, VerdictBatch};
use turnscope_core::journal::submission_rows::{JournalRow, SubmissionRow};
use turnscope_core::recovery::reconciler::{plan_recovery, SessionInspection};
use turnscope_engine::listing::RowInspector;
use turnscope_store::{Backend, StoreError};

/// A verdict whose read held at least this many entries gives their pages back when it drops
/// them (`turnscope_store::memory::release_freed_memory`): a whale's, not the thousands of short sessions'.
const RELEASE_AFTER_ENTRIES: usize = 20_000;

/// How long one background step may run before the worker looks for requests again.
pub const STEP_BUDGET: Duration = Duration::from_millis(40);

/// The failed count reads every settled row (about half a second on a production journal): when
/// it took longer than `FAILED_CHEAP`, it is recounted at most every `FAILED_RECOUNT` while the
/// runtime keeps settling rows (else whenever the status counts move).
const FAILED_RECOUNT: Duration = Duration::from_secs(30);
const FAILED_CHEAP: Duration = Duration::from_millis(50);

struct Cached {
    fingerprint: String,
    row: SubmissionRow,
    journal: Option<JournalRow>,
    inspection: SessionInspection,
    entry_count: Option<usize>,
    /// The cost since the input on the path read.
    cost: Option<f64>,
}

impl Cached {
    fn item(&self, now_ms: i64) -> ListItem {
        let plan = plan_recovery(&self.row, self.journal.as_ref(), &self.inspection, now_ms);
        ListItem::from_parts(
            &self.row,
            self.journal.as_ref(),
            &self.inspection,
            self.entry_count,
            self.cost,
            &plan,
            true,
        )
    }
}

/// One queued row: a placeholder to replace, or a cached verdict to re-validate.
struct Job {
    row: SubmissionRow,
    /// The item the snapshot showed was the cached one (send only if it changed).
    validated: bool,
}

#[derive(Default)]
pub struct Verdicts {
    /// The listing's inspection (the engine's, as `list` does it), made for the first row and
    /// kept: its walk cache spares rows of one session a second walk.
    inspector: Option<(Option<u64>, RowInspector)>,
    cache: HashMap<String, Cached>,
    queue: VecDeque<Job>,
    total: usize,
    now_ms: i64,
    /// The status counts are to be read (first thing after a refresh).
    counts_due: bool,
    /// The failed count is still to be computed (after the queue).
    failed_due: bool,
    /// The status counts last read, and the failed count computed for them.
    counts: Option<Vec<(turnscope_core::journal::status::SubmissionStatus, i64)>>,
    failed: Option<usize>,
    /// When the failed count was last computed, and how long it took.
    failed_at: Option<(Instant, Duration)>,
    /// At most this many rows per step (tests: small batches); 0 is no limit.
    pub batch_rows: usize,
}

impl Verdicts {
    /// Work is waiting.
    pub fn busy(&self) -> bool {
        !self.queue.is_empty() || self.failed_due || self.counts_due
    }

    pub fn remaining(&self) -> usize {
        self.queue.len()
    }

    /// Rows the last refresh queued.
    pub fn total(&self) -> usize {
        self.total
    }

    /// A refresh's running rows at `now_ms`: the item to draw now for each (the cached verdict
    /// re-planned at `now_ms` when the row is unchanged, a placeholder otherwise). Every row is
    /// queued: placeholders to compute, cached ones to check against their fingerprint.
    /// Forgets cached rows this refresh did not list. The status counts are read first, and the
    /// failed count after the rows when the status counts moved.
    pub fn start(
        &mut self,
        rows: Vec<(SubmissionRow, Option<(String, i64)>)>,
        now_ms: i64,
    ) -> Vec<ListItem> {
        self.now_ms = now_ms;
        self.counts_due = true;
        self.queue.clear();
        let listed: HashSet<&str> = rows.iter().map(|(r, _)| r.submission_id.as_str()).collect();
        self.cache.retain(|id, _| listed.contains(id.as_str()));
        let mut items = Vec::with_capacity(rows.len());
        for (row, phase) in rows {
            match self.cache.get(&row.submission_id) {
                Some(c) if c.row == row => {
                    items.push(c.item(now_ms));
                    self.queue.push_back(Job {
                        row,
                        validated: true,
                    });
                }
                _ => {
                    items.push(ListItem::placeholder(row.clone(), phase));
                    self.queue.push_back(Job {
                        row,
                        validated: false,
                    });
                }
            }
        }
        self.total = self.queue.len();
        items
    }

    /// Move these submissions to the front of the queue (the rows on screen), in this order.
    pub fn prioritize(&mut self, ids: &[String]) {
        if ids.is_empty() || self.queue.is_empty() {
            return;
        }
        let want: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i))
            .collect();
        let (mut front, back): (Vec<Job>, Vec<Job>) = self
            .queue
            .drain(..)
            .partition(|j| want.contains_key(j.row.submission_id.as_str()));
        front.sort_by_key(|j| want[j.row.submission_id.as_str()]);
        self.queue = front.into_iter().chain(back).collect();
    }

    /// Work through the queue for up to `budget` (at least one row); `None` when idle.
    pub fn step(
        &mut self,
        store: &dyn Backend,
        context_window: Option<u64>,
        budget: Duration,
    ) -> Option<VerdictBatch> {
        if !self.busy() {
            return None;
        }
        let t0 = Instant::now();
        let mut items = Vec::new();
        let mut counts = None;
        if self.counts_due {
            self.counts_due = false;
            if let Ok(c) = store.status_counts() {
                // Failed rows only change when rows settle (or go): recount when the counts move.
                let stale = self
                    .failed_at
                    .is_none_or(|(t, cost)| cost < FAILED_CHEAP || t.elapsed() >= FAILED_RECOUNT);
                if self.failed.is_none() || (self.counts.as_ref() != Some(&c) && stale) {
                    self.failed_due = true;
                }
                self.counts = Some(c.clone());
                counts = Some(c);
            }
        }
        while let Some(job) = self.queue.pop_front() {
            match self.one(store, context_window, &job) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {}
                // A row that cannot be read keeps its placeholder's columns; say why.
                Err(e) => {
                    let mut it = ListItem::placeholder(job.row.clone(), None);
                    it.pending = false;
                    it.verdict = "unreadable".into();
                    it.disposition = super::messages::ItemDisposition::Error;
                    it.reason = format!("{e} · {}", e.hint());
                    items.push(it);
                }
            }
            if t0.elapsed() >= budget || (self.batch_rows > 0 && items.len() >= self.batch_rows) {
                break;
            }
        }
        // The failed count reads every settled row (a tenth of the time to all verdicts on a
        // runtime-shaped journal): it runs in a step of its own, after the step that delivers
        // the last verdicts, so they are not held back by it.
        if self.queue.is_empty() && self.failed_due && items.is_empty() && t0.elapsed() < budget {
            self.failed_due = false;
            let t = Instant::now();
            self.failed = crate::listing::failed_count(store).ok();
            self.failed_at = Some((t, t.elapsed()));
        }
        Some(VerdictBatch {
            items,
            remaining: self.queue.len(),
            total: self.total,
            counts,
            failed: self.failed,
        })
    }

    /// The verdict of one row; `None` when the cached one is still current.
    fn one(
        &mut self,
        store: &dyn Backend,
        context_window: Option<u64>,
        job: &Job,
    ) -> Result<Option<ListItem>, StoreError> {
        let id = &job.row.submission_id;
        let fp = store.bundle_fingerprint(id, &job.row.session_key)?;
        if let Some(c) = self.cache.get(id) {
            if c.fingerprint == fp && c.row == job.row {
                return Ok((!job.validated).then(|| c.item(self.now_ms)));
            }
        }
        let c = {
            // The CLI list's inspection: only the active path from the input to the leaf is read
            // (whole sessions would cost seconds and gigabytes on a production journal).
            let inspector = match &mut self.inspector {
                Some((w, i)) if *w == context_window => i,
                slot => {
                    &mut slot
                        .insert((context_window, RowInspector::new(context_window)))
                        .1
                }
            };
            let r = inspector.inspect(store, &job.row, self.now_ms)?;
            Cached {
                fingerprint: fp,
                // The row of the refresh, so the next refresh's comparison is like for like.
                row: job.row.clone(),
                journal: r.bundle.journal.clone(),
                entry_count: r.bundle.session.as_ref().map(|s| s.entries.len()),
                cost: r.path_cost().map(|c| c.cost),
                inspection: r.inspection,
            }
            // The read is dropped here.
        };
        if c.entry_count.unwrap_or(0) >= RELEASE_AFTER_ENTRIES {
            turnscope_store::memory::release_freed_memory();
        }
        let item = c.item(self.now_ms);
        self.cache.insert(id.clone(), c);
        Ok(Some(item))
    }
}
