//! The opened submission's stream, held by the worker: folded once, its attempts and step memos
//! seen as the fold reads it (`Streams::load_observed` + `AttemptsAndMemos`, as the CLI's `show`),
//! kept while its head does not move (the detail is read again every refresh), and let go before
//! another stream is folded, so the worker holds at most one stream's fold. Before anything is
//! opened, the list folds its view's largest stream here (`worker.rs`), the open that would wait
//! longest.

use std::collections::HashMap;

use turnscope_core::flue2::cost::Flue2Attempt;
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_engine::flue2::Streams;
use turnscope_engine::flue2_cost::AttemptsAndMemos;
use turnscope_engine::flue2_memos::StepMemo;
use turnscope_store::{Flue2SqliteReader, StoreError};

/// What a fold of the opened stream saw for one submission of it.
struct Observed {
    submission_id: String,
    attempts: Vec<Flue2Attempt>,
    memos: Vec<StepMemo>,
}

#[derive(Default)]
pub(super) struct Opened {
    /// The opened stream's fold (empty before one is opened, or for a row with no stream).
    pub(super) streams: Streams,
    path: Option<String>,
    /// The head it was folded at (`None`: no head row, folded again each time).
    head: Option<(i64, String)>,
    observed: Option<Observed>,
}

impl Opened {
    /// Hold `row`'s stream folded at `heads` (read in the caller's snapshot), with `row`'s
    /// attempts and the stream's step memos: folded again only where another stream was held,
    /// the head moved, or the fold held saw another submission's attempts. How many folds it
    /// took (0 or 1).
    pub(super) fn open(
        &mut self,
        reader: &Flue2SqliteReader,
        heads: &HashMap<String, (i64, String)>,
        row: &Flue2SubmissionRow,
    ) -> Result<usize, StoreError> {
        let path = row.session().map(|k| k.stream_path());
        let head = path.as_ref().and_then(|p| heads.get(p)).cloned();
        let current = path.is_some()
            && self.path == path
            && head.is_some()
            && self.head == head
            && self
                .observed
                .as_ref()
                .is_some_and(|o| o.submission_id == row.submission_id);
        if current {
            return Ok(0);
        }
        // Let the old fold go before the new one is read: one whale at a time.
        *self = Opened::default();
        let Some(p) = path else {
            return Ok(0);
        };
        let mut seen = AttemptsAndMemos::new(row);
        self.streams
            .load_observed(reader, &p, |b, r| seen.observe(b, r))?;
        let (attempts, memos) = seen.finish();
        self.path = Some(p);
        self.head = head;
        self.observed = Some(Observed {
            submission_id: row.submission_id.clone(),
            attempts,
            memos,
        });
        Ok(1)
    }

    /// Whether no stream is held (nothing opened, nor folded ahead by the list).
    pub(super) fn is_empty(&self) -> bool {
        self.path.is_none()
    }

    /// The attempts of the submission last opened and its stream's step memos (empty where it
    /// has no stream).
    pub(super) fn attempts_and_memos(&self) -> (&[Flue2Attempt], &[StepMemo]) {
        match &self.observed {
            Some(o) => (&o.attempts, &o.memos),
            None => (&[], &[]),
        }
    }

    /// The fold held, where it is at `heads` (the list may inspect from it instead of folding
    /// the stream again); else nothing.
    pub(super) fn held_at(&self, heads: &HashMap<String, (i64, String)>) -> Option<&Streams> {
        let path = self.path.as_ref()?;
        (self.head.is_some() && heads.get(path) == self.head.as_ref()).then_some(&self.streams)
    }
}
