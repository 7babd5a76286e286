//! The 2.x sessions screen's text search, on a thread and connection of its own: what
//! `sessions QUERY --text QUERY` finds, sent to the screen as it is found, with its progress,
//! until it ends or is stopped (a new query, esc, the screen closed, the worker ended).

use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use turnscope_core::journal::search::Needle;
use turnscope_engine::flue2_find::search_text;
use turnscope_store::{is_flue2_export, Flue2SqliteReader};

use super::screens_messages::{ScreenResponse, TextState};
use crate::worker_error::WorkerError;

/// Where the search sends what it finds (the app's event channel).
pub type Notify = Arc<dyn Fn(ScreenResponse) + Send + Sync>;

/// A text search running: dropped (another query, esc, the screen closed, the worker ended), it
/// is told to stop between two instances and its last message says so.
pub struct Search {
    cancel: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Search {
    /// The search of `query` for `needle` in the journal at `path`, on its own thread, its
    /// messages sent to `notify`; `None` where the thread could not be started.
    pub fn start(path: &Path, query: &str, needle: Needle, notify: Notify) -> Option<Search> {
        let path = path.to_path_buf();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        let query = query.to_string();
        let handle = std::thread::Builder::new()
            .name("turnscope-search".into())
            .spawn(move || search(&path, &query, &needle, &stop, &*notify))
            .ok()?;
        Some(Search {
            cancel,
            handle: Some(handle),
        })
    }

    /// Wait for it to end.
    pub fn wait(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Search {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// How often a running search reports (its matches so far and its progress).
const EVERY: Duration = Duration::from_millis(100);

/// `sessions QUERY --text QUERY`'s text search, on a connection of its own to the journal at
/// `path`, each message carrying the matches found since the last.
fn search(
    path: &std::path::Path,
    query: &str,
    needle: &Needle,
    cancel: &AtomicBool,
    notify: &dyn Fn(ScreenResponse),
) {
    let send = |found: Vec<Value>, searched: usize, total: usize, state: TextState| {
        notify(ScreenResponse::SessionsText {
            query: query.to_string(),
            found,
            searched,
            total,
            state,
        })
    };
    let reader = if is_flue2_export(path) {
        Flue2SqliteReader::open_export(path)
    } else {
        Flue2SqliteReader::open(path)
    };
    let reader = match reader {
        Ok(r) => r,
        Err(e) => {
            return send(
                Vec::new(),
                0,
                0,
                TextState::Failed(WorkerError::from(e).line()),
            )
        }
    };
    let found = RefCell::new(Vec::new());
    let mut last = Instant::now();
    let result = search_text(
        &reader,
        needle,
        &mut |m| {
            found.borrow_mut().push(m.json());
            true
        },
        &mut |s| {
            if last.elapsed() >= EVERY {
                last = Instant::now();
                send(found.take(), s.streams, s.streams_total, TextState::Running);
            }
        },
        cancel,
    );
    match result {
        Ok(s) => send(
            found.take(),
            s.streams,
            s.streams_total,
            if s.cancelled {
                TextState::Stopped
            } else {
                TextState::Done
            },
        ),
        Err(e) => send(
            found.take(),
            0,
            0,
            TextState::Failed(WorkerError::from(e).line()),
        ),
    }
}
