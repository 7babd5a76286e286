//! Database I/O off the UI thread. The worker owns its own read-only `SqliteStore` (connections
//! are not `Sync`), answers requests in order, coalesces queued refreshes, and never panics the UI:
//! every failure becomes an error message the status line shows.
//!
//! `Worker::handle` is synchronous so tests can drive the app without threads.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::data::{ListItem, Opened, OpenedSession, OpenedSubmission, Snapshot, Target};
use crate::core::plan::plan_recovery;
use crate::core::time::iso_from_ms;
use crate::report::SubmissionReport;
use crate::store::{JournalStore, ListFilter, SqliteStore, StoreError, SubmissionBundle};

#[derive(Debug, Clone)]
pub enum Request {
    /// Reload the list, counts and sessions, and the opened target if any.
    Refresh {
        now_ms: i64,
        open: Option<Target>,
    },
    Open {
        target: Target,
        now_ms: i64,
    },
    Export {
        target: Target,
        dir: PathBuf,
        now_ms: i64,
    },
    Stop,
}

#[derive(Debug, Clone)]
pub enum Response {
    Snapshot(Result<Box<Snapshot>, String>),
    Opened {
        target: Target,
        result: Result<Opened, String>,
    },
    Exported(Result<PathBuf, String>),
}

struct Cached {
    fingerprint: String,
    report: Arc<SubmissionReport>,
}

pub struct Worker {
    path: PathBuf,
    store: Option<SqliteStore>,
    context_window: Option<u64>,
    cache: HashMap<String, Cached>,
}

fn store_error(e: &StoreError) -> String {
    format!("{e} · {}", e.hint())
}

impl Worker {
    pub fn new(store: SqliteStore, context_window: Option<u64>) -> Worker {
        Worker {
            path: store.path().to_path_buf(),
            store: Some(store),
            context_window,
            cache: HashMap::new(),
        }
    }

    /// The store, reopened if it was dropped; an error when the file is gone.
    fn store(&mut self) -> Result<&SqliteStore, String> {
        self.ensure_store()?;
        Ok(self.store.as_ref().expect("ensured"))
    }

    fn ensure_store(&mut self) -> Result<(), String> {
        if !self.path.exists() {
            self.store = None;
            self.cache.clear();
            let name = self.path.file_name().map_or_else(
                || self.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            return Err(format!(
                "the database vanished: {name} no longer exists (showing the last data read)"
            ));
        }
        if self.store.is_none() {
            self.store = Some(SqliteStore::open(&self.path).map_err(|e| store_error(&e))?);
        }
        Ok(())
    }

    pub fn handle(&mut self, req: Request) -> Option<Response> {
        match req {
            Request::Refresh { now_ms, open } => {
                Some(Response::Snapshot(self.refresh(now_ms, open).map(Box::new)))
            }
            Request::Open { target, now_ms } => {
                let result = self.open(&target, now_ms);
                Some(Response::Opened { target, result })
            }
            Request::Export {
                target,
                dir,
                now_ms,
            } => Some(Response::Exported(self.export(&target, &dir, now_ms))),
            Request::Stop => None,
        }
    }

    /// The full report of a submission, from the cache when nothing it reads has changed.
    fn report(&mut self, row_id: &str, session_key: &str) -> Result<Arc<SubmissionReport>, String> {
        let cw = self.context_window;
        self.ensure_store()?;
        let store = self.store.as_ref().expect("ensured");
        let fp = store
            .bundle_fingerprint(row_id, session_key)
            .map_err(|e| store_error(&e))?;
        let row = store.find_submission(row_id).map_err(|e| store_error(&e))?;
        if let Some(c) = self.cache.get(row_id) {
            if c.fingerprint == fp && *c.report.row() == row {
                return Ok(c.report.clone());
            }
        }
        let bundle = store.load_bundle(row_id).map_err(|e| store_error(&e))?;
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

    fn items(&mut self, now_ms: i64) -> Result<Vec<ListItem>, String> {
        let (rows, phases) = {
            let store = self.store()?;
            let rows = store
                .list_submissions(&ListFilter::All)
                .map_err(|e| store_error(&e))?;
            let phases = store.journal_phases().map_err(|e| store_error(&e))?;
            (rows, phases)
        };
        let mut items = Vec::with_capacity(rows.len());
        let mut live_ids = Vec::new();
        for row in rows {
            if row.status == "running" {
                live_ids.push(row.submission_id.clone());
                let r = self.report(&row.submission_id, &row.session_key)?;
                let plan = plan_recovery(r.row(), r.bundle.journal.as_ref(), &r.inspection, now_ms);
                items.push(ListItem::from_report(&r, &plan, true));
            } else {
                // Outside `running` the plan depends on the row only: no need to read the session.
                let bundle = SubmissionBundle {
                    row,
                    journal: None,
                    journal_problem: None,
                    session: None,
                    stream_chunks: Vec::new(),
                };
                let r = SubmissionReport::build(bundle, self.context_window, now_ms);
                let mut item = ListItem::from_report(&r, &r.plan, false);
                item.journal = phases.get(&r.row().submission_id).cloned();
                items.push(item);
            }
        }
        self.cache.retain(|k, _| live_ids.contains(k));
        Ok(items)
    }

    fn refresh(&mut self, now_ms: i64, open: Option<Target>) -> Result<Snapshot, String> {
        let t0 = Instant::now();
        let items = self.items(now_ms)?;
        let store = self.store()?;
        let counts = store.status_counts().map_err(|e| store_error(&e))?;
        let sessions = store.list_sessions().map_err(|e| store_error(&e))?;
        let open = open.map(|t| {
            let r = self.open_with(&t, now_ms, &items);
            (t, r)
        });
        Ok(Snapshot {
            now_ms,
            items,
            counts,
            sessions,
            open,
            took: t0.elapsed(),
        })
    }

    fn open(&mut self, target: &Target, now_ms: i64) -> Result<Opened, String> {
        let items = match target {
            Target::Submission(_) => Vec::new(),
            Target::Session(_) => self.items(now_ms)?,
        };
        self.open_with(target, now_ms, &items)
    }

    fn open_with(
        &mut self,
        target: &Target,
        now_ms: i64,
        items: &[ListItem],
    ) -> Result<Opened, String> {
        match target {
            Target::Submission(id) => {
                let key = self
                    .store()?
                    .find_submission(id)
                    .map_err(|e| store_error(&e))?
                    .session_key;
                let report = self.report(id, &key)?;
                Ok(Opened::Submission(OpenedSubmission::new(report, now_ms)))
            }
            Target::Session(key) => {
                let store = self.store()?;
                let record = store.load_session(key).map_err(|e| store_error(&e))?;
                let summary = store
                    .list_sessions()
                    .map_err(|e| store_error(&e))?
                    .into_iter()
                    .find(|s| &s.id == key);
                let subs: Vec<ListItem> = items
                    .iter()
                    .filter(|i| &i.row.session_key == key)
                    .cloned()
                    .collect();
                if record.is_none() && subs.is_empty() {
                    return Err(format!("no session {key}"));
                }
                Ok(Opened::Session(Arc::new(OpenedSession::build(
                    key, record, summary, subs,
                ))))
            }
        }
    }

    fn export(&mut self, target: &Target, dir: &Path, now_ms: i64) -> Result<PathBuf, String> {
        let cw = self.context_window;
        let store = self.store()?;
        let (session_key, selected) = match target {
            Target::Submission(id) => (
                store
                    .find_submission(id)
                    .map_err(|e| store_error(&e))?
                    .session_key,
                Some(id.clone()),
            ),
            Target::Session(key) => (key.clone(), None),
        };
        let record = store
            .load_session(&session_key)
            .map_err(|e| store_error(&e))?;
        let rows: Vec<_> = store
            .list_submissions(&ListFilter::All)
            .map_err(|e| store_error(&e))?
            .into_iter()
            .filter(|r| r.session_key == session_key)
            .collect();
        let mut submissions = Vec::new();
        for row in &rows {
            let r = SubmissionReport::load(store, &row.submission_id, cw, now_ms)
                .map_err(|e| store_error(&e))?;
            submissions.push(r.to_json());
        }
        let session = record.as_ref().map(|s| {
            let h = crate::core::history::History::new(s.entries.clone(), s.leaf_id.clone());
            json!({
                "id": s.id,
                "data": serde_json::from_str::<Value>(&s.data).unwrap_or(Value::String(s.data.clone())),
                "leafId": s.leaf_id,
                "problems": s.data_problems,
                "activePath": h.active_path().iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
                "entries": s.entries.iter().enumerate().map(|(i, e)| json!({
                    "position": e.position,
                    "id": e.id,
                    "onActivePath": h.is_on_active_path(i),
                    "kind": e.kind_label(),
                    "data": e.json().unwrap_or(Value::String(e.raw.clone())),
                })).collect::<Vec<_>>(),
            })
        });
        let doc = json!({
            "schema": "turnscope.export/1",
            "exportedAt": iso_from_ms(now_ms),
            "database": store.location(),
            "sessionKey": session_key,
            "selectedSubmission": selected,
            "session": session,
            "submissions": submissions,
        });
        let instance =
            crate::core::rows::instance_id_of(&session_key).unwrap_or_else(|| "session".into());
        let safe: String = instance
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let stamp: String = iso_from_ms(now_ms)
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == 'T')
            .take(15)
            .collect();
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        for n in 1..1000 {
            let name = if n == 1 {
                format!("turnscope-export-{safe}-{stamp}.json")
            } else {
                format!("turnscope-export-{safe}-{stamp}-{n}.json")
            };
            let path = dir.join(name);
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(text.as_bytes())
                        .and_then(|_| f.write_all(b"\n"))
                        .map_err(|e| format!("could not write {}: {e}", path.display()))?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("could not create {}: {e}", path.display())),
            }
        }
        Err(format!(
            "too many exports named turnscope-export-{safe}-{stamp}*.json in {}",
            dir.display()
        ))
    }
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
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                batch.extend(rx.try_iter());
                let last_refresh = batch
                    .iter()
                    .rposition(|r| matches!(r, Request::Refresh { .. }));
                for (i, req) in batch.into_iter().enumerate() {
                    if matches!(req, Request::Stop) {
                        return;
                    }
                    if matches!(req, Request::Refresh { .. }) && Some(i) != last_refresh {
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
