//! The messages between the 2.x sessions, incidents and audit screens and the worker thread:
//! what a screen asks for and what comes back (the reads themselves: `screens_worker.rs`).

use serde_json::Value;

use crate::worker_error::WorkerError;

/// An instance's health as the HEALTH cell shows it: its findings (`turnscope health`'s, every
/// conversation of the stream) and the first one's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCell {
    pub findings: usize,
    pub first: Option<String>,
}

/// What a screen asks the worker for.
#[derive(Debug, Clone, PartialEq)]
pub enum ScreenRequest {
    /// The instances `query` names by an id and, from 3 characters, those whose records hold
    /// it as text (`sessions QUERY --text QUERY`); every instance for an empty query.
    Sessions { query: String },
    /// The submission ids of one instance (its stream path), for the list to narrow to.
    InstanceRows { stream: String },
    /// `incidents --json` at `now_ms`.
    Incidents { now_ms: i64 },
    /// `audit --json`: every record, newest first.
    Audit,
    /// `health` of the instances at these stream paths at `now_ms` (the sessions screen's
    /// HEALTH column, asked for the rows in view).
    Health { streams: Vec<String>, now_ms: i64 },
    /// `undo TARGET`: checked and previewed in a transaction rolled back (`commit` false), or
    /// written with its own audit record.
    Undo {
        target: String,
        operator: String,
        reason: Option<String>,
        commit: bool,
    },
    /// Stop the text search running (esc, another query, the screen closed).
    StopSearch,
}

/// Where a sessions text search stands.
#[derive(Debug, Clone, PartialEq)]
pub enum TextState {
    Running,
    Done,
    Stopped,
    Failed(String),
}

#[derive(Debug, Clone)]
pub enum ScreenResponse {
    /// The matches (`sessions --json`'s `matches`) by id, or every instance as `{stream,
    /// instance}`; `text`: a text search of every record follows, on its own thread
    /// ([`ScreenResponse::SessionsText`]).
    Sessions {
        query: String,
        result: Result<Vec<Value>, WorkerError>,
        text: bool,
    },
    /// A text search's progress: the matches found since the last message (in the order
    /// `sessions --text` lists them), how many instances of how many were searched, and whether
    /// it ended.
    SessionsText {
        query: String,
        found: Vec<Value>,
        searched: usize,
        total: usize,
        state: TextState,
    },
    InstanceRows {
        stream: String,
        result: Result<Vec<String>, WorkerError>,
    },
    Incidents(Result<Value, WorkerError>),
    Audit(Result<Vec<Value>, WorkerError>),
    /// Each stream's health: how many findings, and the first one's kind.
    Health(Vec<(String, Result<HealthCell, WorkerError>)>),
    /// The undo's lines (what it restores), or why it is refused.
    Undo {
        target: String,
        reason: Option<String>,
        commit: bool,
        result: Result<Vec<String>, String>,
    },
}

impl ScreenRequest {
    /// The answer when the read panicked (a bug): the screen says so instead of waiting.
    pub fn internal_error(self) -> Option<ScreenResponse> {
        let e = || WorkerError::message("internal error reading the journal (see --log)");
        Some(match self {
            ScreenRequest::Sessions { query } => ScreenResponse::Sessions {
                query,
                result: Err(e()),
                text: false,
            },
            ScreenRequest::InstanceRows { stream } => ScreenResponse::InstanceRows {
                stream,
                result: Err(e()),
            },
            ScreenRequest::Incidents { .. } => ScreenResponse::Incidents(Err(e())),
            ScreenRequest::Audit => ScreenResponse::Audit(Err(e())),
            ScreenRequest::Health { streams, .. } => {
                ScreenResponse::Health(streams.into_iter().map(|s| (s, Err(e()))).collect())
            }
            ScreenRequest::Undo {
                target,
                reason,
                commit,
                ..
            } => ScreenResponse::Undo {
                target,
                reason,
                commit,
                result: Err("internal error (see --log)".into()),
            },
            ScreenRequest::StopSearch => return None,
        })
    }
}
