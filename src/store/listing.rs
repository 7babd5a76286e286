//! The TUI list's reads, server-side on both backends: only the rows the current filter shows
//! (through the runtime's `(status, sequence)` and `(session_key, status, sequence)` indexes), the
//! counts per filter, and the journal phase of just the listed rows.

use std::collections::HashMap;

use super::StoreError;
use crate::core::rows::SubmissionRow;

/// Which submissions a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRows<'a> {
    /// `status='running' AND 0 < lease_expires_at < now_ms` (the runtime's predicate).
    Expired {
        now_ms: i64,
    },
    All,
    Status(&'a str),
    /// `settled` rows that failed: an error (dispatch), or a terminal event whose `outcome` is
    /// `failed` (direct) — the planner's rule.
    Failed,
}

pub trait ListQueries {
    /// The rows of `rows` in sequence order; with `newest`, only the newest that many.
    fn submissions_where(
        &self,
        rows: ListRows<'_>,
        newest: Option<usize>,
    ) -> Result<Vec<SubmissionRow>, StoreError>;
    /// How many rows `rows` has.
    fn count_where(&self, rows: ListRows<'_>) -> Result<usize, StoreError>;
    /// `(phase, revision)` of the turn journals of these submissions (primary-key lookups).
    fn phases_of(&self, ids: &[&str]) -> Result<HashMap<String, (String, i64)>, StoreError>;
    /// Every submission of one session, in sequence order.
    fn session_submissions(&self, key: &str) -> Result<Vec<SubmissionRow>, StoreError>;
    /// One submission by its full id.
    fn submission_by_id(&self, id: &str) -> Result<Option<SubmissionRow>, StoreError>;
}

/// Whether a settled row's terminal event JSON says the submission failed.
pub(crate) fn terminal_outcome_failed(event: Option<&str>) -> bool {
    event
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .is_some_and(|v| v.get("outcome").and_then(|o| o.as_str()) == Some("failed"))
}
