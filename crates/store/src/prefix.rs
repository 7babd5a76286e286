//! The one rule for naming a submission on the command line and in the TUI: a full id, or a
//! prefix that exactly one id starts with. Each backend only says how it reads the two lookups.

use super::StoreError;
use turnscope_core::journal::submission_rows::SubmissionRow;

/// What a backend is asked to read for [`find_by_prefix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The row whose id is exactly the query.
    Exact,
    /// The rows whose id starts with the query (`%` and `_` literal).
    Prefix,
}

/// Resolve `query` with `read`: the exact id wins; else exactly one id must start with it.
pub fn find_by_prefix(
    query: &str,
    read: &mut dyn FnMut(Lookup) -> Result<Vec<SubmissionRow>, StoreError>,
) -> Result<SubmissionRow, StoreError> {
    let not_found = || StoreError::SubmissionNotFound {
        query: query.into(),
    };
    if query.is_empty() {
        return Err(not_found());
    }
    if let Some(row) = read(Lookup::Exact)?.into_iter().next() {
        return Ok(row);
    }
    let mut hits = read(Lookup::Prefix)?;
    // A backend's range scan may return neighbours; only real prefixes count.
    hits.retain(|r| r.submission_id.starts_with(query));
    match hits.len() {
        0 => Err(not_found()),
        1 => Ok(hits.remove(0)),
        _ => Err(StoreError::Ambiguous {
            query: query.into(),
            candidates: hits.into_iter().map(|r| r.submission_id).collect(),
        }),
    }
}
