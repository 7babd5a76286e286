//! The list's reads, server-side on either backend (`store::ListQueries`): only the rows the
//! current filter shows, the counts per filter, and the journal phase of just those rows. A filter
//! with more rows than [`PAGE`] loads its newest page only, so memory stays bounded on a
//! production journal.

use std::collections::HashMap;

use turnscope_core::journal::submission_rows::SubmissionRow;
use turnscope_store::{Backend, RowFilter, StoreError};

/// The most rows one filter loads (its newest by sequence).
pub const PAGE: usize = 5_000;

/// The rows `filter` shows at `now_ms`, in sequence order: at most [`PAGE`], the newest (the
/// expired list is never cut: it is what the operator is there for). The second value is the
/// filter's total when only a page was loaded.
pub fn rows(
    store: &dyn Backend,
    filter: RowFilter,
    now_ms: i64,
) -> Result<(Vec<SubmissionRow>, Option<usize>), StoreError> {
    if filter == RowFilter::Expired {
        return Ok((store.submissions_where(filter, now_ms, None)?, None));
    }
    let mut rows = store.submissions_where(filter, now_ms, Some(PAGE + 1))?;
    if rows.len() > PAGE {
        rows.drain(..rows.len() - PAGE);
        return Ok((rows, Some(store.count_where(filter, now_ms)?)));
    }
    Ok((rows, None))
}

/// The most rows an id lookup beyond the loaded page adds to the list.
pub const ID_LOOKUP_ROWS: usize = 50;
/// The shortest id prefix looked up in the whole journal (a shorter one names too many rows).
pub const ID_LOOKUP_MIN: usize = 4;

/// The rows of `filter` at `now_ms` whose id starts with `prefix`, from the whole journal (the
/// primary key's range): at most [`ID_LOOKUP_ROWS`], none for a prefix shorter than
/// [`ID_LOOKUP_MIN`].
pub fn rows_with_id_prefix(
    store: &dyn Backend,
    filter: RowFilter,
    now_ms: i64,
    prefix: &str,
) -> Result<Vec<SubmissionRow>, StoreError> {
    if prefix.chars().count() < ID_LOOKUP_MIN {
        return Ok(Vec::new());
    }
    let rows = match store.find_submission(prefix) {
        Ok(row) => vec![row],
        Err(StoreError::Ambiguous { candidates, .. }) => {
            let mut rows = Vec::new();
            for id in candidates.iter().take(ID_LOOKUP_ROWS) {
                if let Some(row) = store.submission_by_id(id)? {
                    rows.push(row);
                }
            }
            rows
        }
        Err(StoreError::SubmissionNotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(rows
        .into_iter()
        .filter(|r| filter.matches(r, now_ms))
        .collect())
}

/// Expired-lease submissions at `now_ms` (the `(status, sequence)` index narrows to `running`).
pub fn expired_count(store: &dyn Backend, now_ms: i64) -> Result<usize, StoreError> {
    store.count_where(RowFilter::Expired, now_ms)
}

/// Failed submissions: reads every settled row, so the worker runs it in the background.
pub fn failed_count(store: &dyn Backend) -> Result<usize, StoreError> {
    // The failed filter does not depend on the time.
    store.count_where(RowFilter::Failed, 0)
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
