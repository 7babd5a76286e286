//! Plain data for the submission and journal rows (spec §1.4, §3.1). Filled by the store, read by
//! the planner and the views. No I/O here.

use serde::Serialize;

use crate::journal::history::SubmissionKind;
use crate::journal::images::ChunkRow;
use crate::journal::status::{JournalPhase, SubmissionStatus};

/// One row of `flue_agent_submissions`. The terminal columns are read under either variant's names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubmissionRow {
    pub sequence: i64,
    pub submission_id: String,
    pub session_key: String,
    pub kind: String,
    pub payload: String,
    pub status: SubmissionStatus,
    pub accepted_at: Option<i64>,
    pub attempt_id: Option<String>,
    pub input_applied_at: Option<i64>,
    pub recovery_requested_at: Option<i64>,
    pub started_at: Option<i64>,
    pub settled_at: Option<i64>,
    pub error: Option<String>,
    pub attempt_count: i64,
    pub max_retry: i64,
    pub timeout_at: i64,
    pub owner_id: Option<String>,
    pub lease_expires_at: i64,
    pub terminal_key: Option<String>,
    pub terminal_event: Option<String>,
    pub terminal_offset: Option<String>,
    /// A column the runtime's row parser checks (`parseSubmission`: `typeof` text or number)
    /// stored in another SQLite storage class, e.g. a payload stored as a BLOB; the values above
    /// are read from it anyway. Such a row is malformed to the runtime.
    #[serde(skip)]
    pub stored_as: Option<StoredAs>,
    /// The submission's own image chunk rows (`owner_kind = 'submission'`, `owner_part = ''`; a
    /// direct prompt's images), in the order the runtime reads them. Its row parser reads them for
    /// every row, before its own checks ([`crate::recovery::reconciler::row_problem`]).
    #[serde(skip)]
    pub image_chunks: Vec<ChunkRow>,
}

/// A column a runtime row parser checks (`typeof` string or number), stored in a SQLite storage
/// class it rejects: SQLite keeps a BLOB in a TEXT column, and text that is not a number in an
/// INTEGER one. PostgreSQL's typed columns never hold one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAs {
    pub column: &'static str,
    /// What it holds instead: `a BLOB`, `text`, `a number`, `NULL`.
    pub class: &'static str,
    /// The column's value as SQLite stores it, where it was read: an export keeps it, so that
    /// the copy is stored, and judged, as the journal is (the values of the row are read from
    /// it into the row's types and would lose its class).
    pub value: Option<StoredValue>,
}

/// A value as SQLite stores it, with its storage class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredValue {
    Null,
    Integer(i64),
    /// The bits of an `f64` (`f64::to_bits`).
    Real(u64),
    /// Text's bytes (not always UTF-8 in a damaged journal).
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

/// One `flue_image_chunks` row as stored: the three owner columns as text (a row whose owner
/// columns are not text is never read), every other column as a JSON value of its class
/// so that an export's copy holds each in the class it had.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageChunk {
    pub owner_kind: String,
    pub owner_id: String,
    pub owner_part: String,
    pub image_id: StoredValue,
    pub chunk_index: StoredValue,
    pub chunk_count: StoredValue,
    pub data: StoredValue,
}

impl std::fmt::Display for StoredAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is stored as {}", self.column, self.class)
    }
}

impl SubmissionRow {
    /// Whether a column turnscope's writes are fenced on (`submission_id`, `attempt_id`) is
    /// stored in a class SQL does not match against text ([`SubmissionRow::stored_as`]).
    pub fn fence_column_stored_wrong(&self) -> bool {
        self.stored_as
            .as_ref()
            .is_some_and(|s| matches!(s.column, "submission_id" | "attempt_id"))
    }

    /// The runtime's expired-lease test: `status='running' AND 0 < lease_expires_at < now`.
    pub fn lease_expired(&self, now_ms: i64) -> bool {
        self.status == SubmissionStatus::Running
            && self.lease_expires_at > 0
            && self.lease_expires_at < now_ms
    }

    /// The row's `kind`; `None` for one the runtime does not write (the row check reports it).
    pub fn submission_kind(&self) -> Option<SubmissionKind> {
        SubmissionKind::parse(&self.kind)
    }

    /// Whether it is a direct prompt (settled through the terminal outbox), not a dispatch.
    pub fn is_direct(&self) -> bool {
        self.submission_kind() == Some(SubmissionKind::Direct)
    }

    /// Whether the row is `running` (the only status a recovery acts on).
    pub fn is_running(&self) -> bool {
        self.status == SubmissionStatus::Running
    }

    /// Why a settled row failed: its `error` (dispatch), or the message of a terminal event whose
    /// `outcome` is `failed` (direct submissions keep `error` NULL). `None`: it completed. The one
    /// definition of "failed": the planner's disposition, the list filters and their SQL use it.
    pub fn failure(&self) -> Option<String> {
        if let Some(err) = &self.error {
            return Some(err.clone());
        }
        failure_in_terminal_event(self.terminal_event.as_deref()?)
    }

    /// Whether the row is settled and failed ([`failure`](Self::failure)).
    pub fn is_failed(&self) -> bool {
        self.status == SubmissionStatus::Settled && self.failure().is_some()
    }

    /// The instance id from the session key `agent-session:["<instanceId>","default","default"]`.
    pub fn instance_id(&self) -> Option<String> {
        instance_id_of(&self.session_key)
    }

    /// The agent name from the payload (`agent`).
    pub fn agent(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(&self.payload).ok()?;
        v.get("agent").and_then(|a| a.as_str()).map(str::to_string)
    }
}

/// The message of a terminal event whose `outcome` is `failed` (`None`: not a failure, or not
/// JSON). The half of [`SubmissionRow::failure`] a backend without JSON functions decides in Rust.
pub fn failure_in_terminal_event(event: &str) -> Option<String> {
    let event: serde_json::Value = serde_json::from_str(event).ok()?;
    if event.get("outcome").and_then(|o| o.as_str()) != Some("failed") {
        return None;
    }
    Some(
        event
            .pointer("/error/message")
            .and_then(|m| m.as_str())
            .unwrap_or("failed (no message in the terminal event)")
            .to_string(),
    )
}

/// A submission id as lists, popups and confirmations show it: its first 8 characters (beta.7's
/// ids are random UUIDs). flue 2.x ids (`sub_…`, `owner_…`) are a type prefix and a ULID, whose
/// leading characters are its creation time: ids made in the same minute share them, so such
/// an id is shown whole.
pub fn short_id(id: &str) -> String {
    let typed_ulid = id.split_once('_').is_some_and(|(kind, ulid)| {
        !kind.is_empty()
            && kind.bytes().all(|b| b.is_ascii_lowercase())
            && ulid.len() == 26
            && ulid.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    if typed_ulid {
        return id.to_string();
    }
    id.chars().take(8).collect()
}

#[cfg(test)]
mod short_id_tests {
    use super::short_id;

    #[test]
    fn uuids_are_cut_and_typed_ulids_are_whole() {
        assert_eq!(short_id("a82b3d31-1044-4b16-a41d-2de0fc26ea1a"), "a82b3d31");
        assert_eq!(short_id("worker-9f2c1a0b"), "worker-9");
        for id in [
            "owner_01M92S7V4CBK69QJ9KARFDJK16",
            "sub_01M92S7VMD1J5J5A79SCZA3JAN",
        ] {
            assert_eq!(short_id(id), id);
        }
        assert_eq!(short_id("sub_short"), "sub_shor");
    }
}

/// Parse the instance id out of a session key.
pub fn instance_id_of(session_key: &str) -> Option<String> {
    let rest = session_key.strip_prefix("agent-session:")?;
    let parts: Vec<serde_json::Value> = serde_json::from_str(rest).ok()?;
    parts.first().and_then(|p| p.as_str()).map(str::to_string)
}

/// One row of `flue_agent_turn_journals`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JournalRow {
    pub submission_id: String,
    pub session_key: String,
    pub kind: String,
    pub attempt_id: String,
    pub operation_id: String,
    pub turn_id: String,
    pub phase: JournalPhase,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub checkpoint_leaf_id: Option<String>,
    pub tool_request_json: Option<String>,
    pub stream_key: Option<String>,
    pub stream_consumed_at: Option<i64>,
    pub committed: bool,
    pub committed_leaf_id: Option<String>,
    /// A column the runtime's journal parser checks (`typeof`, `committed` 0 or 1) stored in
    /// another SQLite storage class or value; the values above are read from it anyway.
    #[serde(skip)]
    pub stored_as: Option<StoredAs>,
}

/// What the runtime's turn journal parser throws on a row it rejects (`sql-run-store`).
pub const MALFORMED_JOURNAL: &str = "[flue] Persisted turn journal row is malformed.";

impl JournalRow {
    /// Why the runtime's journal parser rejects this row (it throws [`MALFORMED_JOURNAL`] when the
    /// reconciler reads it, before any rule): a column in another storage class, a phase or kind
    /// it does not write. `None` for a row it reads.
    pub fn runtime_rejects(&self) -> Option<String> {
        if let Some(stored) = &self.stored_as {
            return Some(stored.to_string());
        }
        if !self.phase.is_known() {
            return Some(format!(
                "phase {:?} is not one the runtime writes",
                self.phase.to_string()
            ));
        }
        if SubmissionKind::parse(&self.kind).is_none() {
            return Some(format!(
                "kind {:?} is not one the runtime writes",
                self.kind
            ));
        }
        None
    }
}

/// `{id, name}` of a journaled tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestedCall {
    pub id: String,
    pub name: String,
}

impl JournalRow {
    /// The journal's tool request (`{"toolCalls":[…]}`): `Ok(None)` when the column is NULL.
    pub fn tool_request(&self) -> Result<Option<Vec<RequestedCall>>, String> {
        let Some(json) = &self.tool_request_json else {
            return Ok(None);
        };
        let v: serde_json::Value = crate::js::lone_surrogates::from_str(json)
            .map_err(|e| format!("tool_request_json is not valid JSON: {e}"))?;
        let calls = v
            .get("toolCalls")
            .and_then(|c| c.as_array())
            .ok_or_else(|| "tool_request_json has no toolCalls array".to_string())?;
        Ok(Some(
            calls
                .iter()
                .map(|c| RequestedCall {
                    id: c
                        .get("id")
                        .map(crate::journal::entry::js_to_string)
                        .unwrap_or_default(),
                    name: c
                        .get("name")
                        .map(crate::journal::entry::js_to_string)
                        .unwrap_or_default(),
                })
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_id_from_session_key() {
        assert_eq!(
            instance_id_of(r#"agent-session:["guild-42","default","default"]"#).as_deref(),
            Some("guild-42")
        );
        assert_eq!(instance_id_of("other"), None);
        assert_eq!(instance_id_of("agent-session:[oops"), None);
    }
}
