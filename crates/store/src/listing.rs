//! The TUI list's reads, server-side on both backends: only the rows the current filter shows
//! (through the runtime's `(status, sequence)` and `(session_key, status, sequence)` indexes), the
//! counts per filter, and the journal phase of just the listed rows.

use std::collections::HashMap;

use super::StoreError;
use crate::filter::RowFilter;
use turnscope_core::journal::submission_rows::SubmissionRow;

pub trait ListQueries {
    /// The rows `filter` shows at `now_ms`, in sequence order; with `newest`, only the newest
    /// that many.
    fn submissions_where(
        &self,
        filter: RowFilter,
        now_ms: i64,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError>;
    /// How many rows `filter` shows at `now_ms`.
    fn count_where(&self, filter: RowFilter, now_ms: i64) -> Result<usize, StoreError>;
    /// `(phase, revision)` of the turn journals of these submissions (primary-key lookups).
    fn phases_of(&self, ids: &[&str]) -> Result<HashMap<String, (String, i64)>, StoreError>;
    /// Every submission of one session, in sequence order.
    fn session_submissions(&self, key: &str) -> Result<Vec<SubmissionRow>, StoreError>;
    /// One submission by its full id.
    fn submission_by_id(&self, id: &str) -> Result<Option<SubmissionRow>, StoreError>;
}
