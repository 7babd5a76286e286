//! The flue 2.x screens' reads, off the UI thread: one read-only [`Flue2SqliteReader`] owned by
//! the worker, each request read in one snapshot and answered with the engine's own document
//! (`list_json`, `show_json`), the very data `turnscope list --json` and `show --json` print, so
//! the screens show nothing the CLI would compute otherwise. `handle` is synchronous so the test
//! harness drives it in line.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};

use serde_json::Value;
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_engine::flue2::{list_json, show_json, Flue2Options, ShowView, Streams};
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::worker_error::WorkerError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flue2Request {
    /// Every submission, classified and planned at `now_ms` (`list --status all --json`).
    List {
        now_ms: i64,
    },
    /// One submission's `show --json` at `now_ms`.
    Show {
        id: String,
        now_ms: i64,
    },
    Stop,
}

#[derive(Debug, Clone)]
pub enum Flue2Response {
    List(Result<Value, WorkerError>),
    Show {
        id: String,
        result: Result<Value, WorkerError>,
    },
}

pub struct Flue2Worker {
    reader: Flue2SqliteReader,
    options: Flue2Options,
}

impl Flue2Worker {
    pub fn new(reader: Flue2SqliteReader, options: Flue2Options) -> Flue2Worker {
        Flue2Worker { reader, options }
    }

    pub fn format_version(&self) -> String {
        self.reader.format_version().to_string()
    }

    pub fn handle(&mut self, req: Flue2Request) -> Option<Flue2Response> {
        match req {
            Flue2Request::List { now_ms } => Some(Flue2Response::List(
                self.list(now_ms).map_err(WorkerError::from),
            )),
            Flue2Request::Show { id, now_ms } => {
                let result = self.show(&id, now_ms).map_err(WorkerError::from);
                Some(Flue2Response::Show { id, result })
            }
            Flue2Request::Stop => None,
        }
    }

    /// As `list --status all --json` reads it: the rows and their streams in one snapshot, each
    /// row planned with the deliveries joined into it.
    fn list(&self, now_ms: i64) -> Result<Value, StoreError> {
        let mut streams = Streams::default();
        let mut joined: HashMap<String, Vec<String>> = HashMap::new();
        let rows: Vec<Flue2SubmissionRow> = self.reader.in_snapshot(|reader| {
            let rows = reader.submissions()?;
            for r in &rows {
                if let (Some(host), "joined") = (&r.joined_into, r.status.as_str()) {
                    joined
                        .entry(host.clone())
                        .or_default()
                        .push(r.submission_id.clone());
                }
            }
            streams.load(reader, &rows)?;
            Ok(rows)
        })?;
        let inspected: Vec<_> = rows
            .iter()
            .map(|r| {
                let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
                streams.inspect(r, &self.options, j, now_ms)
            })
            .collect();
        Ok(list_json(
            &self.options,
            self.reader.format_version(),
            "all",
            &inspected,
            now_ms,
        ))
    }

    /// As `show ID --json` reads it.
    fn show(&self, id: &str, now_ms: i64) -> Result<Value, StoreError> {
        let mut streams = Streams::default();
        let (row, joined) = self.reader.in_snapshot(|reader| {
            let row = reader.find_submission(id)?;
            let joined = reader.joined_into(&row.submission_id)?;
            streams.load(reader, [&row])?;
            Ok((row, joined))
        })?;
        let i = streams.inspect(&row, &self.options, joined, now_ms);
        let batches = i
            .stream_path
            .as_deref()
            .and_then(|p| streams.get(p))
            .map_or(0, |f| f.batches);
        Ok(show_json(
            &self.options,
            self.reader.format_version(),
            &ShowView {
                inspected: &i,
                batches,
            },
            now_ms,
        ))
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
                        let e = || {
                            Err(WorkerError::message(
                                "internal error reading the journal (see --log)",
                            ))
                        };
                        match asked {
                            Flue2Request::List { .. } => Some(Flue2Response::List(e())),
                            Flue2Request::Show { id, .. } => {
                                Some(Flue2Response::Show { id, result: e() })
                            }
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
