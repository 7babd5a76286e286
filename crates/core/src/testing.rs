//! Rows shared by the tests of this crate and of the crates above it (the `testing` feature, as
//! jj-lib's): a running dispatch with an expired lease, and the clock it is read at.

use crate::journal::submission_rows::SubmissionRow;

pub const NOW: i64 = 1_800_000_000_000;
pub const SID: &str = "2b0f6c8e-8a41-4d3e-9d6a-1f2c3b4a5d6e";

/// A dispatch running under `att-1`, its input applied, its lease expired a second before `NOW`
/// (the action tests build other rows from it).
pub fn sub() -> SubmissionRow {
    SubmissionRow {
        sequence: 1,
        submission_id: SID.into(),
        session_key: r#"agent-session:["guild-42","default","default"]"#.into(),
        kind: "dispatch".into(),
        payload: format!(
            r#"{{"dispatchId":"{SID}","agent":"moderator","id":"guild-42","input":{{}},"acceptedAt":"2027-01-15T08:00:00.000Z","kind":"dispatch","submissionId":"{SID}"}}"#
        ),
        status: "running".into(),
        accepted_at: crate::journal::time::ms_from_iso("2027-01-15T08:00:00.000Z"),
        attempt_id: Some("att-1".into()),
        input_applied_at: Some(NOW - 60_000),
        recovery_requested_at: None,
        started_at: Some(NOW - 60_000),
        settled_at: None,
        error: None,
        attempt_count: 1,
        max_retry: 10,
        timeout_at: NOW + 3_600_000,
        owner_id: Some("owner".into()),
        lease_expires_at: NOW - 1000,
        terminal_key: None,
        terminal_event: None,
        terminal_offset: None,
        stored_as: None,
        image_chunks: Vec::new(),
    }
}
