//! The flue 2.x screens' reads, off the UI thread: one read-only [`Flue2SqliteReader`] owned by
//! the worker, each request read in one snapshot and answered with the engine's own documents
//! (`item_json` per row, `show_json`), the very data `turnscope list --json` and `show --json` print, so
//! the screens show nothing the CLI would compute otherwise. `handle` is synchronous so the test
//! harness drives it in line.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};

use serde_json::Value;
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_engine::flue2::{item_json, row_json, Flue2Options, Streams};
use turnscope_engine::flue2_show::{CompactShow, ShowDocument, ShowView};

use super::opened::Opened;
use turnscope_engine::flue2_cost::{attempts_json, cost_json, cost_of};
use turnscope_engine::flue2_kept::KeptRows;

use super::list::{ListRow, View};
use std::path::PathBuf;

use turnscope_core::flue2::{Flue2ActionPlan, Flue2Refusal};
use turnscope_engine::flue2_actions::{audit_summary, plan_on};
use turnscope_store::{
    is_flue2_export, Applied, ApplyError, AuditInfo, Flue2SqliteReader, Flue2SqliteWriter,
    StoreError,
};

use super::bulk::Targets;
use super::screens_messages::{ScreenRequest, ScreenResponse};
use super::write::Ask;
use turnscope_engine::flue2_bulk::{apply_all, plan_ids, BulkAudit, BulkItem, BulkOutcome};

use crate::worker_error::WorkerError;

#[derive(Debug, Clone, PartialEq)]
pub enum Flue2Request {
    /// Every submission at `now_ms`, those of `view` classified and planned (`list --json`'s
    /// rows; the others carry their columns only, for the views' counts).
    List {
        now_ms: i64,
        view: View,
    },
    /// Every submission's columns at `now_ms`, no stream folded: the list's first frame, drawn
    /// while `List` folds the view's streams (a second and more on a 2 GB journal).
    Rows {
        now_ms: i64,
    },
    /// One submission's `show --json` at `now_ms`.
    Show {
        id: String,
        now_ms: i64,
    },
    /// Plan a write on one submission at the real clock (write mode only).
    Plan {
        id: String,
        ask: Ask,
    },
    /// Plan a write on several submissions at the real clock, as the CLI's bulk apply plans
    /// them (write mode only).
    PlanBulk {
        targets: Targets,
        ask: Ask,
    },
    /// Apply a previewed batch: one fenced, audited transaction per submission, one batch id.
    ApplyBulk {
        ask: Ask,
        items: Vec<BulkItem>,
        operator: String,
    },
    /// One submission's `next-request` view at `now_ms` (the pane's title and lines).
    NextRequest {
        id: String,
        now_ms: i64,
    },
    /// Apply a planned write, fenced, with its audit record.
    Apply {
        plan: Box<Flue2ActionPlan>,
        operator: String,
        reason: Option<String>,
    },
    /// `e`: one submission's agent instance exported, as `turnscope export ID` writes it, to
    /// a new file at `path` (never one replaced).
    Export {
        id: String,
        path: PathBuf,
        redact: bool,
        now_ms: i64,
    },
    /// `w`: open the writer (true: its checks, the file writable; false: let it go).
    WriteMode(bool),
    /// The sessions, incidents and audit screens' reads, and the undo (`screens_worker.rs`).
    Screen(ScreenRequest),
    Stop,
}

/// The list's answer: every row of the journal as the list shows it, each made from the item
/// `list --json` prints for it (its columns only, outside the view), and what the runtime did
/// since this session's writes.
#[derive(Debug, Clone)]
pub struct ListAnswer {
    pub rows: Vec<ListRow>,
    /// `{submissionId, mark, predicted, line}` per write the runtime acted on.
    pub runtime_acted: Vec<Value>,
}

#[derive(Debug, Clone)]
pub enum Flue2Response {
    List(Result<ListAnswer, WorkerError>),
    /// Every row's columns, none classified ([`Flue2Request::Rows`]).
    Rows(Result<Vec<ListRow>, WorkerError>),
    Show {
        id: String,
        result: Result<CompactShow, WorkerError>,
    },
    /// The plan (with the real clock it was made at), or the refusal.
    Planned {
        ask: Ask,
        result: Result<Result<(Box<Flue2ActionPlan>, i64), Flue2Refusal>, WorkerError>,
    },
    NextRequest(Result<(String, Vec<String>), WorkerError>),
    /// Every target planned (with the real clock they were planned at), or why not.
    PlannedBulk {
        ask: Ask,
        what: String,
        result: Result<(Vec<BulkItem>, i64), WorkerError>,
    },
    /// Each item's outcome under the batch id, or why nothing was written (the writer).
    AppliedBulk {
        ask: Ask,
        result: Result<(String, Vec<BulkItem>), String>,
    },
    /// Applied, or why nothing was written (the fence, a store error).
    Applied {
        plan: Box<Flue2ActionPlan>,
        result: Result<Applied, String>,
    },
    /// The file an export was written to, or why not.
    Exported(Result<PathBuf, String>),
    /// The writer opened (write mode on), or why not.
    WriteMode(Result<(), String>),
    Screen(ScreenResponse),
}

pub struct Flue2Worker {
    reader: Flue2SqliteReader,
    options: Flue2Options,
    /// The journal's file, for the writer (`None`: an export, read-only).
    path: Option<PathBuf>,
    writer: Option<Flue2SqliteWriter>,
    /// The last list's rows, inspected without their streams (`flue2_kept`): a refresh every
    /// 2 s on a 2 GB journal folds again only the streams appended to since (or whose rows
    /// changed), and plans every row again at its clock from what it kept.
    kept: KeptRows,
    /// The opened submission's stream, folded once (a whale's fold is a second and 150 MB):
    /// let go when another stream is opened, folded again when its head moves.
    opened: Opened,
    /// Rows written here that the runtime has not acted on yet, with their predictions.
    awaiting: HashMap<String, super::acted::Awaited>,
    /// The sessions screen's text search, on its own thread and connection
    /// (`screens_worker.rs`), and where its answers go.
    pub(super) search: Option<super::screens_search::Search>,
    pub(super) notify: Option<Notify>,
}

pub use super::screens_search::Notify;

impl Flue2Worker {
    pub fn new(reader: Flue2SqliteReader, options: Flue2Options) -> Flue2Worker {
        // An export's rows are in memory: its reader names the file, which is not a journal.
        let path = (!is_flue2_export(reader.path())).then(|| reader.path().to_path_buf());
        Flue2Worker {
            reader,
            options,
            path,
            writer: None,
            kept: KeptRows::default(),
            opened: Opened::default(),
            awaiting: HashMap::new(),
            search: None,
            notify: None,
        }
    }

    /// Where the worker's own threads (the text search) send their answers.
    pub fn set_notify(&mut self, notify: Notify) {
        self.notify = Some(notify);
    }

    pub fn format_version(&self) -> String {
        self.reader.format_version().to_string()
    }

    pub fn handle(&mut self, req: Flue2Request) -> Option<Flue2Response> {
        match req {
            Flue2Request::List { now_ms, view } => Some(Flue2Response::List(
                self.list(now_ms, view).map_err(WorkerError::from),
            )),
            Flue2Request::Rows { now_ms } => Some(Flue2Response::Rows(
                self.rows(now_ms).map_err(WorkerError::from),
            )),
            Flue2Request::Show { id, now_ms } => {
                let result = self.show(&id, now_ms).map_err(WorkerError::from);
                Some(Flue2Response::Show { id, result })
            }
            Flue2Request::Plan { id, ask } => Some(Flue2Response::Planned {
                result: self.plan(&id, &ask).map_err(WorkerError::from),
                ask,
            }),
            Flue2Request::Apply {
                plan,
                operator,
                reason,
            } => {
                let result = self.apply(&plan, operator, reason);
                if result.is_ok() {
                    if let Some(a) = super::acted::awaited(&plan) {
                        self.awaiting.insert(plan.fence.submission_id.clone(), a);
                    }
                }
                Some(Flue2Response::Applied { result, plan })
            }
            Flue2Request::PlanBulk { targets, ask } => {
                let now = turnscope_store::clock::now_ms();
                let result = plan_ids(
                    &self.reader,
                    &self.options,
                    &targets.ids,
                    |i| ask.action_on(i),
                    now,
                )
                .map(|items| (items, now))
                .map_err(WorkerError::from);
                Some(Flue2Response::PlannedBulk {
                    ask,
                    what: targets.what,
                    result,
                })
            }
            Flue2Request::ApplyBulk {
                ask,
                items,
                operator,
            } => Some(Flue2Response::AppliedBulk {
                result: self.apply_bulk(&ask, items, operator),
                ask,
            }),
            Flue2Request::Screen(r) => self.screen(r).map(Flue2Response::Screen),
            Flue2Request::NextRequest { id, now_ms } => Some(Flue2Response::NextRequest(
                super::next_request::read(&self.reader, &self.options, &id, now_ms)
                    .map_err(WorkerError::from),
            )),
            Flue2Request::Export {
                id,
                path,
                redact,
                now_ms,
            } => Some(Flue2Response::Exported(
                self.export(&id, &path, redact, now_ms)
                    .map_err(|e| e.to_string()),
            )),
            Flue2Request::WriteMode(true) => {
                Some(Flue2Response::WriteMode(self.writer().map(|_| ())))
            }
            Flue2Request::WriteMode(false) => {
                self.writer = None;
                None
            }
            Flue2Request::Stop => None,
        }
    }

    /// `id`'s agent instance as `turnscope export ID [--redact]` prints it, written to `path`.
    fn export(
        &self,
        id: &str,
        path: &std::path::Path,
        redact: bool,
        now_ms: i64,
    ) -> Result<PathBuf, WorkerError> {
        let redaction = redact.then_some(turnscope_engine::report::redact::Redaction::ALL);
        let built = turnscope_engine::flue2_export::build(
            &self.reader,
            &self.options,
            id,
            now_ms,
            redaction,
        )
        .map_err(WorkerError::from)?;
        let mut text = serde_json::to_string_pretty(&built.document).unwrap_or_default();
        text.push('\n');
        crate::worker::write_export(path, &text)
    }

    pub(super) fn reader(&self) -> &Flue2SqliteReader {
        &self.reader
    }

    pub(super) fn options(&self) -> &Flue2Options {
        &self.options
    }

    /// The writer, opened on first use (an export has none).
    pub(super) fn writer(&mut self) -> Result<&mut Flue2SqliteWriter, String> {
        let Some(path) = self.path.clone() else {
            return Err("an export is read-only: open the live database to act".into());
        };
        if self.writer.is_none() {
            self.writer = Some(Flue2SqliteWriter::open(&path).map_err(|e| e.to_string())?);
        }
        Ok(self.writer.as_mut().expect("opened above"))
    }

    /// One submission's row and joined deliveries, its stream folded as the opened one (the
    /// stream opened before is let go first; a stream held at its head is not folded again).
    fn read_one(&mut self, id: &str) -> Result<(Flue2SubmissionRow, Vec<String>), StoreError> {
        let opened = &mut self.opened;
        self.reader.in_snapshot(|reader| {
            let row = reader.find_submission(id)?;
            let joined = reader.joined_into(&row.submission_id)?;
            let heads = reader.stream_heads()?;
            opened.open(reader, &heads, &row)?;
            Ok((row, joined))
        })
    }

    /// `ask` planned on `id` as the CLI plans it: the row and its stream read in one snapshot,
    /// inspected and planned at the real clock (a pinned clock moves only what is shown).
    fn plan(
        &mut self,
        id: &str,
        ask: &Ask,
    ) -> Result<Result<(Box<Flue2ActionPlan>, i64), Flue2Refusal>, StoreError> {
        let now = turnscope_store::clock::now_ms();
        let (row, joined) = self.read_one(id)?;
        let i = self
            .opened
            .streams
            .inspect(&row, &self.options, joined, now);
        let action = ask.action_on(&i);
        Ok(plan_on(&action, &i, &self.options, now).map(|p| (Box::new(p), now)))
    }

    /// Write every planned item of a batch, as the CLI's bulk apply does, under a new batch id;
    /// each applied row's prediction awaited as one action's is.
    fn apply_bulk(
        &mut self,
        ask: &Ask,
        mut items: Vec<BulkItem>,
        operator: String,
    ) -> Result<(String, Vec<BulkItem>), String> {
        let batch = turnscope_engine::actions::run::new_batch_id();
        let audit = BulkAudit {
            operator,
            action: ask.name().to_string(),
            reason: match ask {
                Ask::Fail(r) => Some(r.clone()),
                _ => None,
            },
            batch_id: batch.clone(),
        };
        apply_all(self.writer()?, &mut items, &audit, |_| {}, || {});
        for i in &items {
            if let (BulkOutcome::Applied(_), Ok(plan)) = (&i.outcome, &i.plan) {
                if let Some(a) = super::acted::awaited(plan) {
                    self.awaiting.insert(i.id.clone(), a);
                }
            }
        }
        Ok((batch, items))
    }

    /// Write `plan` with its audit record (the writer opened on first use; an export has none).
    fn apply(
        &mut self,
        plan: &Flue2ActionPlan,
        operator: String,
        reason: Option<String>,
    ) -> Result<Applied, String> {
        let Some(path) = self.path.clone() else {
            return Err("an export is read-only: open the live database to act".into());
        };
        if self.writer.is_none() {
            self.writer = Some(Flue2SqliteWriter::open(&path).map_err(|e| e.to_string())?);
        }
        let writer = self.writer.as_mut().expect("opened above");
        let info = AuditInfo {
            operator,
            action: plan.action.to_string(),
            reason,
            summary: audit_summary(plan),
            now_ms: turnscope_store::clock::now_ms(),
            batch_id: None,
            side_effects: None,
        };
        match writer.apply(&plan.fence, &plan.changes, &info) {
            Ok(a) => Ok(a),
            Err(ApplyError::Fenced(changed)) => Err(format!(
                "refused, nothing written: the submission changed since the preview ({})",
                changed.join("; ")
            )),
            Err(e) => Err(format!("nothing written: {e}")),
        }
    }

    /// Every row of the journal with its columns only, read in one snapshot: what the list draws
    /// while [`Self::list`] folds.
    fn rows(&mut self, now_ms: i64) -> Result<Vec<ListRow>, StoreError> {
        let rows = self.reader.in_snapshot(|reader| reader.submissions())?;
        Ok(rows.iter().map(|r| columns_only(r, now_ms)).collect())
    }

    /// As `list --status VIEW --json` reads it, every row of the journal given: the rows and
    /// the view's streams in one snapshot, each row of the view planned at `now_ms` with the
    /// deliveries joined into it; a row outside the view has its columns (`row_json`) and a null
    /// `verdict`, `disposition` and `plan`. Only the view's streams are folded, and only where
    /// their rows or heads changed (`KeptRows`): all of a 2 GB journal's would be its
    /// whole history, each refresh.
    fn list(&mut self, now_ms: i64, view: View) -> Result<ListAnswer, StoreError> {
        let mut joined: HashMap<String, Vec<String>> = HashMap::new();
        let kept = &mut self.kept;
        let opened = &mut self.opened;
        let options = &self.options;
        let rows: Vec<Flue2SubmissionRow> = self.reader.in_snapshot(|reader| {
            let rows = reader.submissions()?;
            joined = turnscope_core::flue2::joined_by_host(&rows);
            let heads = reader.stream_heads()?;
            let in_view: Vec<&Flue2SubmissionRow> =
                rows.iter().filter(|r| view.keeps_row(r, now_ms)).collect();
            kept.keep_only(in_view.iter().copied());
            let j =
                |r: &Flue2SubmissionRow| joined.get(&r.submission_id).cloned().unwrap_or_default();
            let none = Streams::default();
            // Nothing opened yet: the view's largest stream (most batches, the slowest to open)
            // is folded as the opened one and held, so its open does not fold it again. It is
            // folded last, after the others were folded and let go: the list folds it once
            // either way, and the peak is one stream's fold.
            if opened.is_empty() {
                let path = |r: &Flue2SubmissionRow| r.session().map(|k| k.stream_path());
                let largest = in_view
                    .iter()
                    .filter_map(|r| Some((heads.get(&path(r)?)?.0, *r)))
                    .max_by_key(|(batches, _)| *batches)
                    .map(|(_, r)| r);
                if let Some(row) = largest {
                    let others = in_view.iter().copied().filter(|r| path(r) != path(row));
                    kept.update(reader, &heads, others, j, options, &none)?;
                    opened.open(reader, &heads, row)?;
                }
            }
            let held = opened.held_at(&heads).unwrap_or(&none);
            kept.update(reader, &heads, in_view, j, options, held)?;
            Ok(rows)
        })?;
        // Each item turned into its cells as soon as it is made: the 16,000 items of a 2 GB
        // journal held as JSON trees at once were 100 MB, more than the whale's fold.
        let items: Vec<ListRow> = rows
            .iter()
            .map(|r| {
                match view
                    .keeps_row(r, now_ms)
                    .then(|| self.kept.inspected(r, now_ms))
                    .flatten()
                {
                    Some(i) => {
                        let mut v = item_json(&i, now_ms);
                        if let Some(m) = v.as_object_mut() {
                            m.insert(
                                "cost".into(),
                                cost_of(&i).map_or(Value::Null, |c| cost_json(&c)),
                            );
                        }
                        ListRow::from_doc(&v)
                    }
                    None => columns_only(r, now_ms),
                }
            })
            .collect();
        // The TUI's own, only after a write of this session: what the runtime did since.
        let runtime_acted = if self.awaiting.is_empty() {
            Vec::new()
        } else {
            super::acted::settle(&mut self.awaiting, &rows)
        };
        Ok(ListAnswer {
            rows: items,
            runtime_acted,
        })
    }

    /// As `show ID --json` reads it: the stream folded once (where it is not held at its head),
    /// its attempts and step memos seen as the fold reads it.
    fn show(&mut self, id: &str, now_ms: i64) -> Result<CompactShow, StoreError> {
        let (row, joined) = self.read_one(id)?;
        let (attempts, memos) = self.opened.attempts_and_memos();
        let streams = &self.opened.streams;
        let i = streams.inspect(&row, &self.options, joined, now_ms);
        let folded = i.stream_path.as_deref().and_then(|p| streams.get(p));
        let batches = folded.map_or(0, |f| f.batches);
        let not_utf8 = folded.map_or(&[][..], |f| &f.not_utf8[..]);
        let view = ShowView {
            inspected: &i,
            batches,
            not_utf8,
            memos,
        };
        let mut doc = ShowDocument::new(&self.options, self.reader.format_version(), &view, now_ms);
        // As `show --json` adds them: the cost, and the attempts.
        doc.head.insert(
            "cost".into(),
            cost_of(&i).map_or(Value::Null, |c| cost_json(&c)),
        );
        doc.head
            .insert("attempts".into(), attempts_json(attempts, &row));
        Ok(doc.into_compact())
    }
}
/// Run `worker` on its own thread: requests in, answers out through `wrap`. A newer `List` makes
/// older queued ones moot (each reads everything), so only the last of a batch is read.
pub fn spawn<E: Send + 'static>(
    mut worker: Flue2Worker,
    events: Sender<E>,
    wrap: fn(Flue2Response) -> E,
) -> (Sender<Flue2Request>, std::thread::JoinHandle<()>) {
    let (tx, rx): (Sender<Flue2Request>, Receiver<Flue2Request>) = std::sync::mpsc::channel();
    let side = events.clone();
    worker.set_notify(std::sync::Arc::new(move |r| {
        let _ = side.send(wrap(Flue2Response::Screen(r)));
    }));
    let handle = std::thread::Builder::new()
        .name("turnscope-db".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                batch.extend(rx.try_iter());
                let last_list = batch
                    .iter()
                    .rposition(|r| matches!(r, Flue2Request::List { .. }));
                for (n, req) in batch.into_iter().enumerate() {
                    if req == Flue2Request::Stop {
                        return;
                    }
                    if matches!(req, Flue2Request::List { .. }) && Some(n) != last_list {
                        continue;
                    }
                    let asked = req.clone();
                    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker.handle(req)
                    }))
                    .unwrap_or_else(|_| {
                        // A bug, not the database: the screen says so instead of waiting.
                        crate::log::line("internal error reading the flue 2.x journal");
                        fn e<T>() -> Result<T, WorkerError> {
                            Err(WorkerError::message(
                                "internal error reading the journal (see --log)",
                            ))
                        }
                        match asked {
                            Flue2Request::List { .. } => Some(Flue2Response::List(e())),
                            Flue2Request::Rows { .. } => Some(Flue2Response::Rows(e())),
                            Flue2Request::Show { id, .. } => {
                                Some(Flue2Response::Show { id, result: e() })
                            }
                            Flue2Request::Plan { ask, .. } => Some(Flue2Response::Planned {
                                ask,
                                result: Err(WorkerError::message(
                                    "internal error reading the journal (see --log)",
                                )),
                            }),
                            Flue2Request::Apply { plan, .. } => Some(Flue2Response::Applied {
                                plan,
                                result: Err("internal error writing (see --log)".into()),
                            }),
                            Flue2Request::PlanBulk { targets, ask } => {
                                Some(Flue2Response::PlannedBulk {
                                    ask,
                                    what: targets.what,
                                    result: e(),
                                })
                            }
                            Flue2Request::ApplyBulk { ask, .. } => {
                                Some(Flue2Response::AppliedBulk {
                                    ask,
                                    result: Err("internal error writing (see --log)".into()),
                                })
                            }
                            Flue2Request::Screen(r) => {
                                r.internal_error().map(Flue2Response::Screen)
                            }
                            Flue2Request::NextRequest { .. } => {
                                Some(Flue2Response::NextRequest(Err(WorkerError::message(
                                    "internal error reading the journal (see --log)",
                                ))))
                            }
                            Flue2Request::Export { .. } => Some(Flue2Response::Exported(Err(
                                "internal error exporting (see --log)".into(),
                            ))),
                            Flue2Request::WriteMode(on) => on.then(|| {
                                Flue2Response::WriteMode(Err(
                                    "internal error opening the journal for writes (see --log)"
                                        .into(),
                                ))
                            }),
                            Flue2Request::Stop => None,
                        }
                    });
                    if let Some(resp) = answer {
                        if events.send(wrap(resp)).is_err() {
                            return;
                        }
                    }
                }
            }
        })
        .expect("spawning the database thread");
    (tx, handle)
}

/// A row's list cells from its columns alone (`row_json`), with no verdict, plan or cost.
fn columns_only(r: &Flue2SubmissionRow, now_ms: i64) -> ListRow {
    let mut v = row_json(r, now_ms);
    if let Some(m) = v.as_object_mut() {
        for key in ["verdict", "disposition", "plan", "cost"] {
            m.insert(key.into(), Value::Null);
        }
    }
    ListRow::from_doc(&v)
}
