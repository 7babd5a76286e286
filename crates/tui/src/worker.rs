//! Database I/O off the UI thread. The worker owns its own read-only store (connections
//! are not `Sync`), answers requests in order, coalesces queued refreshes, and never panics the UI:
//! every failure becomes a [`WorkerError`] (message and hint) the status line shows.
//!
//! In `--write` mode (and only then) it also plans and applies operator actions; the read-write
//! connection is opened on the first apply, so a read-only session never opens one.
//!
//! `Worker::handle` is synchronous so tests can drive the app without threads.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "worker_actions.rs"]
mod actions;
pub(crate) use actions::write_export;

use super::listing;
use super::messages::{
    ListItem, Opened, OpenedSession, OpenedSubmission, Snapshot, Target, VerdictBatch,
};
use super::verdicts::{Verdicts, STEP_BUDGET};
pub use super::worker_error::WorkerError;
use crate::write::popup_text::{Outcome, OutcomeResult, PlanItem, Planned, StateSummary};
use turnscope_core::journal::compact::Previews;
use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::search::Needle;
use turnscope_core::recovery::reconciler::plan_recovery;
use turnscope_engine::actions::{run, ActionKind, IdSource, Refusal};
use turnscope_engine::report::export::{self, ExportTarget};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::RowFilter;
use turnscope_store::{
    fetch_full, fetch_previews, load_compact, search_positions, ApplyError, AuditRecord, Backend,
    CompactLoader, DbTarget, JournalWriter, SessionMatch, SessionRows, SubmissionBundle,
    TextSearched, TextSink,
};

#[derive(Debug, Clone)]
pub enum Request {
    /// Reload the rows `filter` shows, the counts, the sessions when `sessions` (the sessions
    /// view is open), and the opened target if any. Running rows' verdicts follow in the
    /// background, the rows in `visible` (on screen) first.
    Refresh {
        now_ms: i64,
        open: Option<Target>,
        filter: RowFilter,
        sessions: bool,
        visible: Vec<String>,
        /// The selected row: read even when it left the filter.
        selected: Option<String>,
        /// An id prefix the list's query names: when only the newest page of the filter is
        /// loaded, the rows of the filter with this prefix are read from the whole journal too.
        id_lookup: Option<String>,
    },
    /// Compute the verdicts of these rows next (they scrolled into view).
    Prioritize(Vec<String>),
    /// Switch writes on (opening the writer now, so a database that takes none says so at
    /// once) or off.
    WriteMode(bool),
    /// The `(sequence, id)` of every submission of a session (stepping between them).
    Siblings(String),
    Open {
        target: Target,
        now_ms: i64,
    },
    /// Export `target`'s session to `path` (never replacing a file), redacted when asked.
    Export {
        target: Target,
        path: PathBuf,
        redact: bool,
        now_ms: i64,
    },
    /// Re-read each submission at `now_ms` and plan `kind` on it (write mode).
    Plan {
        kind: ActionKind,
        ids: Vec<String>,
        reason: Option<String>,
        now_ms: i64,
    },
    /// Apply each planned item in its own fenced transaction (write mode).
    Apply {
        kind: ActionKind,
        items: Vec<PlanItem>,
        operator: String,
        now_ms: i64,
    },
    /// Check (and preview) an undo, or with `commit` apply it (write mode).
    Undo {
        target: turnscope_store::UndoTarget,
        operator: String,
        reason: Option<String>,
        commit: bool,
    },
    /// The audit trail, newest first.
    Audit,
    /// The next request of `target` at `now_ms` (`turnscope next-request`), read whole.
    NextRequest {
        target: Target,
        now_ms: i64,
    },
    /// One entry's stored text, fully parsed (the tree keeps compact entries).
    EntryBody {
        session: String,
        entry_id: String,
    },
    /// The text previews of these `(entry id, position)`: the rows on screen (the tree's
    /// entries are read without them).
    Previews {
        session: String,
        entries: Vec<(String, i64)>,
    },
    /// The positions of the session's entries whose stored JSON contains `needle` (the tree
    /// search: the entries it holds are compact). Of several queued, only the newest is read.
    SearchText {
        session: String,
        needle: String,
    },
    /// The sessions `query` names (key, instance, ids: `SessionFinder::find_sessions`), then,
    /// for a query of [`FIND_TEXT_FROM`] characters or more, its text in every session's
    /// entries, searched in the background a step at a time (`Response::SessionText`) until
    /// finished, `cancel` is set, or another `FindSessions` replaces it. Of several queued, only
    /// the newest is read.
    FindSessions {
        query: String,
        /// Which search of the screen this is: answers to an older one are dropped.
        generation: u64,
        cancel: Arc<AtomicBool>,
    },
    /// The health of these sessions (`engine::report::health`): the sessions screen's rows on
    /// screen, each asked once while its `updatedAt` stays.
    SessionHealth(Vec<String>),
    Stop,
}

/// The shortest query whose text is searched across every session (a letter or two would
/// match nearly every session and read the whole database for it).
pub const FIND_TEXT_FROM: usize = 3;

/// About how long one background step of a text search across sessions reads.
const FIND_STEP: Duration = Duration::from_millis(100);

#[derive(Debug, Clone)]
pub enum Response {
    Snapshot(Result<Box<Snapshot>, WorkerError>),
    /// Writes switched on (`true`) or off, or why they could not be switched on.
    WriteMode(bool, Result<(), WorkerError>),
    /// Background verdicts since the last snapshot.
    Verdicts(VerdictBatch),
    Siblings {
        key: String,
        ids: Vec<(i64, String)>,
    },
    Opened {
        target: Target,
        result: Result<Opened, WorkerError>,
    },
    Exported(Result<PathBuf, WorkerError>),
    /// The next request's title and lines, or why it could not be read.
    NextRequest(Result<(String, Vec<String>), WorkerError>),
    Planned(Planned),
    Applied {
        kind: ActionKind,
        outcomes: Vec<Outcome>,
    },
    Audit(Result<Vec<AuditRecord>, WorkerError>),
    /// An undo checked (`commit` false) or applied: what it restores, or why not.
    Undo {
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
        commit: bool,
        result: Result<turnscope_store::Undone, WorkerError>,
    },
    EntryBody {
        session: String,
        entry_id: String,
        result: Result<Option<Box<Entry>>, WorkerError>,
    },
    /// Each asked entry's preview (`None`: gone, moved or not a message).
    Previews {
        session: String,
        result: Result<Vec<FetchedPreview>, WorkerError>,
    },
    SearchText {
        session: String,
        needle: String,
        result: Result<Vec<i64>, WorkerError>,
    },
    /// The sessions a `FindSessions` query names by key, instance or id.
    FoundSessions {
        generation: u64,
        result: Result<Vec<SessionMatch>, WorkerError>,
    },
    /// A step of a text search across sessions: the sessions it found since the last step, and
    /// how far it got (`finished`, `cancelled`); `error` ends it.
    SessionText {
        generation: u64,
        matches: Vec<SessionMatch>,
        searched: TextSearched,
        error: Option<WorkerError>,
    },
    /// Each asked session's health mark (`None`: the session is gone).
    SessionHealth(Vec<(String, Result<Option<HealthMark>, WorkerError>)>),
}

/// A text search across sessions, between its background steps.
struct FindText {
    generation: u64,
    needle: Needle,
    searched: TextSearched,
    cancel: Arc<AtomicBool>,
}

/// One step's matches, and when it pauses.
struct StepSink {
    matches: Vec<SessionMatch>,
    until: Instant,
    sessions_left: usize,
}

impl TextSink for StepSink {
    fn found(&mut self, m: SessionMatch) -> bool {
        self.matches.push(m);
        true
    }

    fn progress(&mut self, _: &TextSearched) -> bool {
        self.sessions_left = self.sessions_left.saturating_sub(1);
        self.sessions_left > 0 && Instant::now() < self.until
    }
}

pub use crate::messages::HealthMark;
pub use turnscope_store::FetchedPreview;

struct Cached {
    fingerprint: String,
    report: Arc<SubmissionReport>,
}

pub struct Worker {
    target: DbTarget,
    store: Option<Box<dyn Backend>>,
    context_window: Option<u64>,
    cache: HashMap<String, Cached>,
    /// `--write` mode: plans and applies are allowed.
    writable: bool,
    /// The read-write connection, opened on the first apply.
    writer: Option<Box<dyn JournalWriter>>,
    /// A fixed seed for new entry ids (tests: reproducible previews); random otherwise.
    id_source: IdSource,
    /// Running rows' verdicts, computed between requests.
    verdicts: Verdicts,
    /// When the sessions were last read, and how long that took.
    sessions_read: Option<(Instant, std::time::Duration)>,
    /// The clock every plan and apply is checked at (live lease, expiry, deadline, fence): the
    /// real clock, never the app's pinned display clock. Only the headless test harness fixes it.
    safety_clock: Option<i64>,
    /// The text search across sessions under way.
    find: Option<FindText>,
    /// At most this many sessions per background step of it (tests watch it advance).
    find_step_sessions: usize,
    /// Submissions this session wrote to, as the write left them: each refresh reads their rows
    /// again until the runtime acts (`RuntimeActed`). Rows and marks only, not the sessions.
    after_write: HashMap<String, turnscope_engine::report::observed::Baseline>,
}

/// Sessions read faster than this are re-read on every refresh; slower, every `SESSIONS_RECOUNT`.
const SESSIONS_CHEAP: std::time::Duration = std::time::Duration::from_millis(200);
const SESSIONS_RECOUNT: std::time::Duration = std::time::Duration::from_secs(30);

/// Rows looked up in full before the first frame (more than a tall terminal shows).
const FIRST_SCREEN: usize = 120;

/// What [`Worker::list_items`] reads: the rows, the filter's total when only its newest page was
/// read, and for an id lookup beyond that page the prefix and how many rows it added.
type ListPage = (Vec<ListItem>, Option<usize>, Option<(String, usize)>);

impl Worker {
    pub fn new(store: Box<dyn Backend>, target: DbTarget, context_window: Option<u64>) -> Worker {
        Worker {
            target,
            store: Some(store),
            context_window,
            cache: HashMap::new(),
            writable: false,
            writer: None,
            id_source: IdSource::Random,
            verdicts: Verdicts::default(),
            sessions_read: None,
            safety_clock: None,
            find: None,
            find_step_sessions: usize::MAX,
            after_write: HashMap::new(),
        }
    }

    /// Check plans and applies at `now_ms` instead of the real clock: for the headless test
    /// harness's reproducible snapshots only (the binary never calls it; `TURNSCOPE_NOW_MS`
    /// only pins what the screens show).
    #[cfg(feature = "test-harness")]
    pub fn with_safety_clock(mut self, now_ms: i64) -> Worker {
        self.safety_clock = Some(now_ms);
        self
    }

    /// The time plans and applies are checked at.
    fn safety_now(&self) -> i64 {
        self.safety_clock
            .unwrap_or_else(turnscope_store::clock::now_ms)
    }

    /// Allow write actions (`--write`).
    pub fn allow_writes(mut self) -> Worker {
        self.writable = true;
        self
    }

    /// New entry ids from a fixed sequence (reproducible previews in tests).
    pub fn with_id_seed(mut self, seed: u64) -> Worker {
        self.id_source = IdSource::Seeded(seed);
        self
    }

    /// The store, reopened if it was dropped; an error when the file is gone.
    fn store(&mut self) -> Result<&dyn Backend, WorkerError> {
        self.ensure_store()?;
        Ok(self.store.as_deref().expect("ensured"))
    }

    fn ensure_store(&mut self) -> Result<(), WorkerError> {
        if let Some(name) = self.target.vanished() {
            self.store = None;
            self.cache.clear();
            return Err(WorkerError::message(format!(
                "the database vanished: {name} no longer exists (showing the last data read)"
            )));
        }
        if self.store.is_none() {
            self.store = Some(turnscope_store::open(&self.target).map_err(WorkerError::from)?);
        }
        Ok(())
    }

    pub fn handle(&mut self, req: Request) -> Option<Response> {
        match req {
            Request::Refresh {
                now_ms,
                open,
                filter,
                sessions,
                visible,
                selected,
                id_lookup,
            } => {
                let snap = self.refresh(now_ms, open, filter, sessions, selected, id_lookup);
                self.verdicts.prioritize(&visible);
                Some(Response::Snapshot(snap.map(Box::new)))
            }
            Request::WriteMode(on) => {
                if !on {
                    self.writable = false;
                    self.writer = None;
                    return Some(Response::WriteMode(false, Ok(())));
                }
                self.writable = true;
                let opened = self.writer().map(|_| ());
                if opened.is_err() {
                    self.writable = false;
                }
                Some(Response::WriteMode(true, opened))
            }
            Request::Prioritize(ids) => {
                self.verdicts.prioritize(&ids);
                Some(Response::Verdicts(VerdictBatch {
                    items: Vec::new(),
                    remaining: self.verdicts.remaining(),
                    total: self.verdicts.total(),
                    counts: None,
                    failed: None,
                }))
            }
            Request::Siblings(key) => {
                let ids = self
                    .store()
                    .and_then(|s| listing::session_ids(s, &key).map_err(WorkerError::from));
                Some(Response::Siblings {
                    key,
                    ids: ids.unwrap_or_default(),
                })
            }
            Request::Open { target, now_ms } => {
                let result = self.open(&target, now_ms);
                Some(Response::Opened { target, result })
            }
            Request::Export {
                target,
                path,
                redact,
                now_ms,
            } => Some(Response::Exported(
                self.export(&target, &path, redact, now_ms),
            )),
            Request::NextRequest { target, now_ms } => {
                Some(Response::NextRequest(self.next_request(&target, now_ms)))
            }
            // The request's time is the screen's; the checks use the safety clock.
            Request::Plan {
                kind, ids, reason, ..
            } => Some(Response::Planned(self.plan(
                kind,
                &ids,
                reason,
                self.safety_now(),
            ))),
            Request::Apply {
                kind,
                items,
                operator,
                ..
            } => Some(Response::Applied {
                kind,
                outcomes: self.apply(&items, &operator, self.safety_now()),
            }),
            Request::Undo {
                target,
                operator,
                reason,
                commit,
            } => {
                let now = self.safety_now();
                let result = self.writer().and_then(|w| {
                    super::worker_undo::undo(
                        &mut **w,
                        &target,
                        &operator,
                        reason.as_deref(),
                        now,
                        commit,
                    )
                });
                Some(Response::Undo {
                    target,
                    reason,
                    commit,
                    result,
                })
            }
            Request::Audit => Some(Response::Audit(
                self.store()
                    .and_then(|s| s.audit_records().map_err(WorkerError::from)),
            )),
            Request::EntryBody { session, entry_id } => {
                let result = self.session_rows().and_then(|rows| {
                    fetch_full(rows, &session, &entry_id)
                        .map(|e| e.map(Box::new))
                        .map_err(WorkerError::from)
                });
                Some(Response::EntryBody {
                    session,
                    entry_id,
                    result,
                })
            }
            Request::Previews { session, entries } => {
                let result = self.session_rows().and_then(|rows| {
                    fetch_previews(rows, &session, &entries).map_err(WorkerError::from)
                });
                Some(Response::Previews { session, result })
            }
            Request::SearchText { session, needle } => {
                let result = match Needle::new(&needle) {
                    None => Ok(Vec::new()),
                    Some(n) => self.session_rows().and_then(|rows| {
                        search_positions(rows, &session, &n).map_err(WorkerError::from)
                    }),
                };
                Some(Response::SearchText {
                    session,
                    needle,
                    result,
                })
            }
            Request::FindSessions {
                query,
                generation,
                cancel,
            } => {
                self.find = None;
                let result = self
                    .store()
                    .and_then(|s| s.find_sessions(&query).map_err(WorkerError::from));
                let query = query.trim();
                if result.is_ok() && query.chars().count() >= FIND_TEXT_FROM {
                    self.find = Needle::new(query).map(|needle| FindText {
                        generation,
                        needle,
                        searched: TextSearched::default(),
                        cancel,
                    });
                }
                Some(Response::FoundSessions { generation, result })
            }
            Request::SessionHealth(keys) => {
                let mut out = Vec::with_capacity(keys.len());
                for key in keys {
                    let result = self.store().and_then(|s| {
                        turnscope_engine::report::health::session_health(s.reader(), &key)
                            .map(|h| h.as_ref().map(HealthMark::of))
                            .map_err(|e| match e {
                                turnscope_engine::report::health::HealthError::Store(e) => {
                                    WorkerError::from(e)
                                }
                                other => WorkerError::message(other.to_string()),
                            })
                    });
                    out.push((key, result));
                }
                Some(Response::SessionHealth(out))
            }
            Request::Stop => None,
        }
    }

    /// At most `n` sessions per background step of a text search across sessions.
    pub fn set_find_step_sessions(&mut self, n: usize) {
        self.find_step_sessions = n.max(1);
    }

    /// One background step of the text search across sessions.
    fn find_step(&mut self) -> Option<Response> {
        let mut f = self.find.take()?;
        let mut sink = StepSink {
            matches: Vec::new(),
            until: Instant::now() + FIND_STEP,
            sessions_left: self.find_step_sessions,
        };
        let from = std::mem::take(&mut f.searched);
        let result = self.store().and_then(|s| {
            s.search_text(&f.needle, from, &mut sink, &f.cancel)
                .map_err(WorkerError::from)
        });
        let generation = f.generation;
        Some(match result {
            Ok(mut searched) => {
                searched.cancelled |= f.cancel.load(Ordering::Relaxed);
                if !searched.finished && !searched.cancelled {
                    f.searched = searched.clone();
                    self.find = Some(f);
                }
                Response::SessionText {
                    generation,
                    matches: sink.matches,
                    searched,
                    error: None,
                }
            }
            Err(e) => Response::SessionText {
                generation,
                matches: sink.matches,
                searched: TextSearched::default(),
                error: Some(e),
            },
        })
    }

    /// The store's by-entry reads (bodies, previews, the text search).
    fn session_rows(&mut self) -> Result<&dyn SessionRows, WorkerError> {
        self.ensure_store()?;
        let store = self.store.as_deref().expect("ensured");
        store
            .session_rows()
            .ok_or_else(|| "this database cannot read single entries".into())
    }

    /// The full report of a submission, from the cache when nothing it reads has changed.
    fn report(
        &mut self,
        row_id: &str,
        session_key: &str,
    ) -> Result<Arc<SubmissionReport>, WorkerError> {
        let cw = self.context_window;
        self.ensure_store()?;
        let store = self.store.as_deref().expect("ensured");
        let fp = store
            .bundle_fingerprint(row_id, session_key)
            .map_err(WorkerError::from)?;
        let row = store.find_submission(row_id).map_err(WorkerError::from)?;
        if let Some(c) = self.cache.get(row_id) {
            if c.fingerprint == fp && *c.report.row() == row {
                return Ok(c.report.clone());
            }
        }
        // Compact: full bodies for the input and what follows it; others are fetched when shown
        // (`Request::EntryBody`). Actions re-read the submission whole (`plan`, `apply`).
        let bundle = store
            .load_bundle_with(
                row_id,
                &mut CompactLoader {
                    previews: Previews::Drop,
                },
            )
            .map_err(WorkerError::from)?;
        // `now` only matters for the plan, which callers recompute; inspection does not use it.
        let report = Arc::new(SubmissionReport::build(bundle, cw, 0));
        self.cache.insert(
            row_id.to_string(),
            Cached {
                fingerprint: fp,
                report: report.clone(),
            },
        );
        Ok(report)
    }

    /// At most `n` verdicts per background step (tests and the bench watch them arrive).
    pub fn set_batch_rows(&mut self, n: usize) {
        self.verdicts.batch_rows = n;
    }

    /// Background work is waiting (verdicts of running rows, the failed count).
    pub fn busy(&self) -> bool {
        self.verdicts.busy() || self.find.is_some()
    }

    /// One step of background work (about [`STEP_BUDGET`]); `None` when there is none.
    pub fn background(&mut self) -> Option<Response> {
        if self.find.is_some() {
            // An operator waits on it; verdicts follow.
            return self.find_step();
        }
        if !self.verdicts.busy() {
            return None;
        }
        let cw = self.context_window;
        if self.ensure_store().is_err() {
            // The database vanished: the next refresh says so; drop the queue.
            self.verdicts = Verdicts::default();
            return None;
        }
        let store = self.store.as_deref().expect("ensured");
        let batch = self.verdicts.step(store, cw, STEP_BUDGET)?;
        Some(Response::Verdicts(batch))
    }

    /// A row whose plan depends on the row only (not running): no need to read the session.
    fn row_item(
        &self,
        row: turnscope_core::journal::submission_rows::SubmissionRow,
        now_ms: i64,
    ) -> ListItem {
        let bundle = SubmissionBundle {
            row,
            journal: None,
            journal_problem: None,
            session: None,
            stream_chunks: Vec::new(),
            event_stream: None,
        };
        let r = SubmissionReport::build(bundle, self.context_window, now_ms);
        ListItem::from_report(&r, &r.plan, false)
    }

    /// The rows `filter` shows: non-running ones complete, running ones from the verdict cache or
    /// as placeholders (their verdicts follow in the background). Also the filter's total when
    /// only its newest page was read.
    fn list_items(
        &mut self,
        filter: RowFilter,
        now_ms: i64,
        id_lookup: Option<&str>,
    ) -> Result<ListPage, WorkerError> {
        let (rows, total, phases, looked_up) = {
            let store = self.store()?;
            let (mut rows, total) =
                listing::rows(store, filter, now_ms).map_err(WorkerError::from)?;
            // Only the newest page is loaded: the id the query names is looked up in the whole
            // journal, so an older row is found rather than reported missing.
            let looked_up = match (total, id_lookup) {
                (Some(_), Some(prefix)) => {
                    let found = listing::rows_with_id_prefix(store, filter, now_ms, prefix)
                        .map_err(WorkerError::from)?;
                    let loaded: std::collections::HashSet<&str> =
                        rows.iter().map(|r| r.submission_id.as_str()).collect();
                    let extra: Vec<_> = found
                        .into_iter()
                        .filter(|r| !loaded.contains(r.submission_id.as_str()))
                        .collect();
                    let n = extra.len();
                    rows.extend(extra);
                    rows.sort_by_key(|r| r.sequence);
                    Some((prefix.to_string(), n))
                }
                _ => None,
            };
            // Running rows get their journal phase with their verdict; only the first screenful
            // is looked up now.
            let mut running = 0;
            let ids: Vec<&str> = rows
                .iter()
                .filter(|r| {
                    running += usize::from(r.is_running());
                    !r.is_running() || running <= FIRST_SCREEN
                })
                .map(|r| r.submission_id.as_str())
                .collect();
            let phases = listing::phases(store, &ids).map_err(WorkerError::from)?;
            (rows, total, phases, looked_up)
        };
        let mut items: Vec<Option<ListItem>> = Vec::with_capacity(rows.len());
        let mut running = Vec::new();
        let mut slots = Vec::new();
        for row in rows {
            let phase = phases.get(&row.submission_id).cloned();
            if row.is_running() {
                slots.push(items.len());
                items.push(None);
                running.push((row, phase));
            } else {
                let mut item = self.row_item(row, now_ms);
                item.journal = phase;
                items.push(Some(item));
            }
        }
        let done = self.verdicts.start(running, now_ms);
        for (slot, item) in slots.into_iter().zip(done) {
            items[slot] = Some(item);
        }
        Ok((items.into_iter().flatten().collect(), total, looked_up))
    }

    /// One submission, complete (the selected row after it left the filter); `None` when it is
    /// gone or unreadable.
    fn watched_item(&mut self, id: &str, now_ms: i64) -> Option<ListItem> {
        let row = self.store().ok()?.submission_by_id(id).ok()??;
        if row.is_running() {
            let r = self.report(&row.submission_id, &row.session_key).ok()?;
            let plan = plan_recovery(r.row(), r.bundle.journal.as_ref(), &r.inspection, now_ms);
            Some(ListItem::from_report(&r, &plan, true))
        } else {
            let mut item = self.row_item(row, now_ms);
            let store = self.store().ok()?;
            item.journal = listing::phases(store, &[id]).ok()?.remove(id);
            Some(item)
        }
    }

    /// Every submission of one session, complete (an opened session lists them all).
    fn session_items(&mut self, key: &str, now_ms: i64) -> Result<Vec<ListItem>, WorkerError> {
        let rows = {
            let store = self.store()?;
            listing::session_rows(store, key).map_err(WorkerError::from)?
        };
        let mut items = Vec::with_capacity(rows.len());
        for row in rows {
            if row.is_running() {
                let r = self.report(&row.submission_id, &row.session_key)?;
                let plan = plan_recovery(r.row(), r.bundle.journal.as_ref(), &r.inspection, now_ms);
                items.push(ListItem::from_report(&r, &plan, true));
            } else {
                let id = row.submission_id.clone();
                let mut item = self.row_item(row, now_ms);
                let store = self.store()?;
                item.journal = listing::phases(store, &[id.as_str()])
                    .map_err(WorkerError::from)?
                    .remove(&id);
                items.push(item);
            }
        }
        Ok(items)
    }

    fn refresh(
        &mut self,
        now_ms: i64,
        open: Option<Target>,
        filter: RowFilter,
        sessions: bool,
        selected: Option<String>,
        id_lookup: Option<String>,
    ) -> Result<Snapshot, WorkerError> {
        let t0 = Instant::now();
        // The expired count is cheap (the index narrows to running rows); the status counts and
        // the failed count follow in the background.
        let expired = {
            let store = self.store()?;
            listing::expired_count(store, now_ms).map_err(WorkerError::from)?
        };
        let (items, list_total, id_lookup) =
            self.list_items(filter, now_ms, id_lookup.as_deref())?;
        // Full reports are kept for the opened submission only (they hold whole sessions).
        let open_id = match &open {
            Some(Target::Submission(id)) => Some(id.clone()),
            _ => None,
        };
        self.cache.retain(|k, _| Some(k) == open_id.as_ref());
        let watched = match selected {
            Some(id) if !items.iter().any(|i| i.row.submission_id == id) => {
                self.watched_item(&id, now_ms)
            }
            _ => None,
        };
        // Every session's summary counts all entries (seconds on a production journal): when
        // that was slow, the open sessions view is re-read at most every `SESSIONS_RECOUNT`.
        let due = self
            .sessions_read
            .is_none_or(|(at, cost)| cost < SESSIONS_CHEAP || at.elapsed() >= SESSIONS_RECOUNT);
        let sessions = if sessions && due {
            let t = Instant::now();
            let store = self.store()?;
            let rows = store.list_sessions().map_err(WorkerError::from)?;
            self.sessions_read = Some((t, t.elapsed()));
            Some(rows)
        } else {
            None
        };
        let open = match open {
            Some(t) => {
                let subs = match &t {
                    Target::Session(key) => self.session_items(key, now_ms)?,
                    Target::Submission(_) => Vec::new(),
                };
                let r = self.open_with(&t, now_ms, &subs);
                Some((t, r))
            }
            None => None,
        };
        let runtime_acted = self.runtime_acted();
        Ok(Snapshot {
            now_ms,
            items,
            counts: None,
            list_total,
            filter,
            id_lookup,
            expired,
            sessions,
            pending: self.verdicts.remaining(),
            watched,
            open,
            took: t0.elapsed(),
            runtime_acted,
        })
    }

    fn open(&mut self, target: &Target, now_ms: i64) -> Result<Opened, WorkerError> {
        let items = match target {
            Target::Submission(_) => Vec::new(),
            Target::Session(key) => self.session_items(key, now_ms)?,
        };
        self.open_with(target, now_ms, &items)
    }

    fn open_with(
        &mut self,
        target: &Target,
        now_ms: i64,
        items: &[ListItem],
    ) -> Result<Opened, WorkerError> {
        match target {
            Target::Submission(id) => {
                let key = self
                    .store()?
                    .find_submission(id)
                    .map_err(WorkerError::from)?
                    .session_key;
                let report = self.report(id, &key)?;
                Ok(Opened::Submission(OpenedSubmission::new(report, now_ms)))
            }
            Target::Session(key) => {
                let store = self.store()?;
                // Compact (bodies are fetched when shown): a whale session would otherwise be
                // parsed whole into memory.
                let record = match store.session_rows() {
                    Some(rows) => load_compact(rows, key, "", "", Previews::Drop),
                    None => store.load_session(key),
                }
                .map_err(WorkerError::from)?;
                let summary = store
                    .list_sessions()
                    .map_err(WorkerError::from)?
                    .into_iter()
                    .find(|s| &s.id == key);
                let subs: Vec<ListItem> = items
                    .iter()
                    .filter(|i| &i.row.session_key == key)
                    .cloned()
                    .collect();
                if record.is_none() && subs.is_empty() {
                    return Err(WorkerError::message(format!("no session {key}")));
                }
                Ok(Opened::Session(Arc::new(OpenedSession::build(
                    key, record, summary, subs,
                ))))
            }
        }
    }
}

/// Which requests of a queued batch are carried out: of several refreshes, and of several text
/// searches (typed a letter at a time), only the newest; each would read the whole database or
/// session again for an answer nobody waits for.
fn carried_out(batch: &[Request]) -> Vec<bool> {
    let last = |is: fn(&Request) -> bool| batch.iter().rposition(is);
    let refresh = last(|r| matches!(r, Request::Refresh { .. }));
    let search = last(|r| matches!(r, Request::SearchText { .. }));
    let find = last(|r| matches!(r, Request::FindSessions { .. }));
    batch
        .iter()
        .enumerate()
        .map(|(i, r)| match r {
            Request::Refresh { .. } => Some(i) == refresh,
            Request::SearchText { .. } => Some(i) == search,
            Request::FindSessions { .. } => Some(i) == find,
            _ => true,
        })
        .collect()
}

/// Run `worker` on its own thread: requests in, responses out through `wrap` into the UI's event
/// channel. Queued refreshes are coalesced into the newest one.
pub fn spawn<E: Send + 'static>(
    mut worker: Worker,
    events: Sender<E>,
    wrap: fn(Response) -> E,
) -> (Sender<Request>, std::thread::JoinHandle<()>) {
    let (tx, rx): (Sender<Request>, Receiver<Request>) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("turnscope-db".into())
        .spawn(move || {
            loop {
                // Requests first; background verdicts only while none is waiting.
                let first = if worker.busy() {
                    match rx.try_recv() {
                        Ok(r) => r,
                        Err(TryRecvError::Disconnected) => return,
                        Err(TryRecvError::Empty) => {
                            let resp =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    worker.background()
                                }));
                            match resp {
                                Ok(Some(r)) => {
                                    if events.send(wrap(r)).is_err() {
                                        return;
                                    }
                                }
                                Ok(None) => {}
                                Err(_) => super::log::line("internal error computing verdicts"),
                            }
                            continue;
                        }
                    }
                } else {
                    match rx.recv() {
                        Ok(r) => r,
                        Err(_) => return,
                    }
                };
                let mut batch = vec![first];
                batch.extend(rx.try_iter());
                let carry = carried_out(&batch);
                for (req, carry) in batch.into_iter().zip(carry) {
                    if matches!(req, Request::Stop) {
                        return;
                    }
                    if !carry {
                        continue;
                    }
                    let resp = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker.handle(req)
                    }));
                    let resp = match resp {
                        Ok(Some(r)) => r,
                        Ok(None) => return,
                        Err(_) => Response::Snapshot(Err(
                            "internal error while reading the database (see the log)".into(),
                        )),
                    };
                    if events.send(wrap(resp)).is_err() {
                        return;
                    }
                }
            }
        })
        .expect("spawning the database thread");
    (tx, handle)
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
