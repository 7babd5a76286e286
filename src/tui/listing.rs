//! The list's reads, server-side on either backend (`store::ListQueries`): only the rows the
//! current filter shows, the counts per filter, and the journal phase of just those rows. A filter
//! with more rows than [`PAGE`] loads its newest page only, so memory stays bounded on a
//! production journal.

use std::collections::HashMap;

use super::keymap::StatusFilter;
use crate::core::rows::SubmissionRow;
use crate::store::{Backend, ListRows, StoreError};

/// The most rows one filter loads (its newest by sequence).
pub const PAGE: usize = 5_000;

fn list_rows(filter: StatusFilter, now_ms: i64) -> ListRows<'static> {
    match filter {
        StatusFilter::Expired => ListRows::Expired { now_ms },
        StatusFilter::All => ListRows::All,
        StatusFilter::Queued => ListRows::Status("queued"),
        StatusFilter::Running => ListRows::Status("running"),
        StatusFilter::Terminalizing => ListRows::Status("terminalizing"),
        StatusFilter::Settled => ListRows::Status("settled"),
        StatusFilter::Failed => ListRows::Failed,
    }
}

/// The rows `filter` shows at `now_ms`, in sequence order: at most [`PAGE`], the newest (the
/// expired list is never cut: it is what the operator is there for). The second value is the
/// filter's total when only a page was loaded.
pub fn rows(
    store: &dyn Backend,
    filter: StatusFilter,
    now_ms: i64,
) -> Result<(Vec<SubmissionRow>, Option<usize>), StoreError> {
    let which = list_rows(filter, now_ms);
    if filter == StatusFilter::Expired {
        return Ok((store.submissions_where(which, None)?, None));
    }
    let mut rows = store.submissions_where(which, Some(PAGE + 1))?;
    if rows.len() > PAGE {
        rows.drain(..rows.len() - PAGE);
        return Ok((rows, Some(store.count_where(which)?)));
    }
    Ok((rows, None))
}

/// Expired-lease submissions at `now_ms` (the `(status, sequence)` index narrows to `running`).
pub fn expired_count(store: &dyn Backend, now_ms: i64) -> Result<usize, StoreError> {
    store.count_where(ListRows::Expired { now_ms })
}

/// Failed submissions: reads every settled row, so the worker runs it in the background.
pub fn failed_count(store: &dyn Backend) -> Result<usize, StoreError> {
    store.count_where(ListRows::Failed)
}

/// `(phase, revision)` of the turn journals of these submissions (primary-key lookups).
pub fn phases(
    store: &dyn Backend,
    ids: &[&str],
) -> Result<HashMap<String, (String, i64)>, StoreError> {
    store.phases_of(ids)
}

/// Every submission of one session, in sequence order (the `(session_key, status, sequence)`
/// index).
pub fn session_rows(store: &dyn Backend, key: &str) -> Result<Vec<SubmissionRow>, StoreError> {
    store.session_submissions(key)
}

/// `(sequence, submission id)` of every submission of one session, for stepping between them.
pub fn session_ids(store: &dyn Backend, key: &str) -> Result<Vec<(i64, String)>, StoreError> {
    Ok(store
        .session_submissions(key)?
        .into_iter()
        .map(|r| (r.sequence, r.submission_id))
        .collect())
}
