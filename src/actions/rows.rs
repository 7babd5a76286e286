//! The runtime's rows, one builder per write it makes (spec §5.2, §5.3, §6): the session its
//! get-or-create saves, the advisory, the settlements, the journal update, the requeue, the
//! repaired batch. The planners (`fail`, `repair`, `requeue`, `step`, `reconcile`) compose them.

use serde_json::{Map, Value};

use super::common::Refusal;
use super::entries::{raw_message, Appender, EntryIds};
use crate::core::changes::{ColumnChange, RowChange, SqlValue};
use crate::core::failure::RuntimeFailure;
use crate::core::jsjson::to_js_string;
use crate::core::repair::ToolRepair;
use crate::core::status::SubmissionStatus;
use crate::core::time::iso_from_ms;
use crate::report::SubmissionReport;

pub use crate::core::runtime_text::INTERRUPTED_TEXT;

/// The synthetic `interrupted` toolResult message, keys in the runtime's order, no `details`.
pub fn synthetic_result(call_id: &str, tool_name: &str, timestamp_ms: i64) -> String {
    format!(
        r#"{{"role":"toolResult","toolCallId":{},"toolName":{},"content":[{{"type":"text","text":{}}}],"isError":true,"timestamp":{timestamp_ms}}}"#,
        Value::String(call_id.into()),
        Value::String(tool_name.into()),
        Value::String(INTERRUPTED_TEXT.into())
    )
}

/// Crockford's base32, as the runtime's `ulid()` writes it.
const ULID_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A ULID: 10 characters of the time in ms, 16 of randomness.
fn ulid(now_ms: i64, ids: &mut EntryIds) -> String {
    let mut out = String::with_capacity(26);
    let t = now_ms.max(0) as u64;
    for i in (0..10).rev() {
        out.push(ULID_ALPHABET[((t >> (i * 5)) & 31) as usize] as char);
    }
    let random = (u128::from(ids.next_random()) << 64) | u128::from(ids.next_random());
    for i in (0..16).rev() {
        out.push(ULID_ALPHABET[((random >> (i * 5)) & 31) as usize] as char);
    }
    out
}

/// The empty session the runtime's get-or-create saves when `flue_sessions` has no row for the
/// key (`createEmptySessionData`, stored without `entries`).
pub(crate) fn create_session_rows(
    r: &SubmissionReport,
    ids: &mut EntryIds,
    now_ms: i64,
) -> Vec<RowChange> {
    if r.bundle.session.is_some() {
        return vec![];
    }
    let now = iso_from_ms(now_ms);
    let mut data = Map::new();
    data.insert("version".into(), 8.into());
    data.insert(
        "conversationId".into(),
        format!("conv_{}", ulid(now_ms, ids)).into(),
    );
    data.insert(
        "affinityKey".into(),
        format!("aff_{}", ulid(now_ms, ids)).into(),
    );
    data.insert("leafId".into(), Value::Null);
    data.insert("childSessions".into(), Value::Array(vec![]));
    data.insert("metadata".into(), Value::Object(Map::new()));
    data.insert("createdAt".into(), now.clone().into());
    data.insert("updatedAt".into(), now.into());
    vec![RowChange::InsertSession {
        session_id: r.row().session_key.clone(),
        data: to_js_string(&Value::Object(data)),
    }]
}

/// `updateTurnJournalPhase(A, 'before_provider', {checkpointLeafId})`: phase, revision + 1,
/// updated_at, and the checkpoint (COALESCE keeps the old one only when none is given).
/// What every journal update of the runtime sets besides its own columns: `revision + 1` and
/// `updated_at`.
pub(crate) fn revision_bump(j: &crate::core::rows::JournalRow, now_ms: i64) -> [ColumnChange; 2] {
    [
        ColumnChange::new(
            "revision",
            SqlValue::Int(j.revision),
            SqlValue::Int(j.revision + 1),
        ),
        ColumnChange::new(
            "updated_at",
            SqlValue::Int(j.updated_at),
            SqlValue::Int(now_ms),
        ),
    ]
}

pub(crate) fn journal_before_provider(
    j: &crate::core::rows::JournalRow,
    leaf: &str,
    now_ms: i64,
) -> Vec<ColumnChange> {
    let mut set = vec![ColumnChange::new(
        "phase",
        SqlValue::phase(&j.phase),
        SqlValue::phase(&crate::core::status::JournalPhase::BeforeProvider),
    )];
    set.extend(revision_bump(j, now_ms));
    set.push(ColumnChange::new(
        "checkpoint_leaf_id",
        SqlValue::opt_text(j.checkpoint_leaf_id.as_deref()),
        SqlValue::text(leaf),
    ));
    set
}

/// `recordSubmissionTerminal`: the `submission_interrupted` signal at the current leaf.
pub(crate) fn advisory_rows(
    r: &SubmissionReport,
    failure: &RuntimeFailure,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<Vec<RowChange>, Refusal> {
    let row = r.row();
    let mut terminal = Map::new();
    terminal.insert("submissionId".into(), row.submission_id.clone().into());
    terminal.insert("kind".into(), row.kind.clone().into());
    terminal.insert("reason".into(), failure.reason.into());
    let mut signal = Map::new();
    signal.insert("role".into(), "signal".into());
    signal.insert("type".into(), "submission_interrupted".into());
    signal.insert("content".into(), failure.advisory_content().into());
    signal.insert("attributes".into(), Value::Object(terminal.clone()));
    signal.insert("timestamp".into(), now_ms.into());
    let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone());
    let mut app = Appender::new(r, leaf, ids, now_ms);
    app.append(
        &to_js_string(&Value::Object(signal)),
        &[("submissionTerminal", to_js_string(&Value::Object(terminal)))],
    );
    app.finish(r)
        .map_err(|e| Refusal::new(e, "inspect the session row"))
}

/// `failSubmission(A, error)` for a dispatch; for a direct prompt the terminal outbox
/// reservation with its `submission_settled` event (the runtime's next pass publishes it).
pub(crate) fn settle_failed_row(
    r: &SubmissionReport,
    failure: &RuntimeFailure,
    now_ms: i64,
) -> RowChange {
    let row = r.row();
    let set = if row.is_direct() {
        // `ctx.createEvent({type, submissionId, outcome, error})`: the event's own keys, then
        // instanceId, agentName (when known), v, eventIndex, timestamp.
        let mut event = Map::new();
        event.insert("type".into(), "submission_settled".into());
        event.insert("submissionId".into(), row.submission_id.clone().into());
        event.insert("outcome".into(), "failed".into());
        event.insert("error".into(), failure.serialized());
        event.insert("instanceId".into(), row.instance_id().into());
        if let Some(agent) = row.agent() {
            event.insert("agentName".into(), agent.into());
        }
        event.insert("v".into(), 3.into());
        event.insert("eventIndex".into(), 0.into());
        event.insert("timestamp".into(), iso_from_ms(now_ms).into());
        vec![
            ColumnChange::new(
                "status",
                SqlValue::status(SubmissionStatus::Running),
                SqlValue::status(SubmissionStatus::Terminalizing),
            ),
            ColumnChange::new(
                "terminal_event_key",
                SqlValue::opt_text(row.terminal_key.as_deref()),
                SqlValue::text(format!("direct-submission:{}:settled", row.submission_id)),
            ),
            ColumnChange::new(
                "terminal_event_json",
                SqlValue::opt_text(row.terminal_event.as_deref()),
                SqlValue::text(to_js_string(&Value::Object(event))),
            ),
        ]
    } else {
        settle_columns(row, now_ms, SqlValue::text(&failure.message))
    };
    RowChange::UpdateSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone().unwrap_or_default(),
        set,
    }
}

/// The columns `completeSubmission` (error NULL) and `failSubmission` (the failure's message)
/// both set on a running dispatch row: one place for the settlement's shape.
pub(crate) fn settle_columns(
    row: &crate::core::rows::SubmissionRow,
    now_ms: i64,
    error: SqlValue,
) -> Vec<ColumnChange> {
    vec![
        ColumnChange::new(
            "status",
            SqlValue::status(SubmissionStatus::Running),
            SqlValue::status(SubmissionStatus::Settled),
        ),
        ColumnChange::new(
            "settled_at",
            SqlValue::opt_int(row.settled_at),
            SqlValue::Int(now_ms),
        ),
        ColumnChange::new("error", SqlValue::opt_text(row.error.as_deref()), error),
    ]
}

/// `deleteStreamChunkSegments(journal.streamKey)`, when there is anything to delete.
pub(crate) fn delete_chunks_row(r: &SubmissionReport) -> Option<RowChange> {
    let key = r.bundle.journal.as_ref()?.stream_key.clone()?;
    (!r.bundle.stream_chunks.is_empty()).then_some(RowChange::DeleteStreamChunks {
        stream_key: key,
        segments: r.bundle.stream_chunks.len(),
    })
}
/// `UPDATE … SET status='queued', attempt_id=NULL, recovery_requested_at=NULL, started_at=NULL,
/// owner_id=NULL, lease_expires_at=0`, fenced on the running attempt.
pub(crate) fn requeue_rows(r: &SubmissionReport) -> Vec<RowChange> {
    let row = r.row();
    let set = vec![
        ColumnChange::new(
            "status",
            SqlValue::status(SubmissionStatus::Running),
            SqlValue::status(SubmissionStatus::Queued),
        ),
        ColumnChange::new(
            "attempt_id",
            SqlValue::opt_text(row.attempt_id.as_deref()),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "recovery_requested_at",
            SqlValue::opt_int(row.recovery_requested_at),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "started_at",
            SqlValue::opt_int(row.started_at),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "owner_id",
            SqlValue::opt_text(row.owner_id.as_deref()),
            SqlValue::Null,
        ),
        ColumnChange::new(
            "lease_expires_at",
            SqlValue::Int(row.lease_expires_at),
            SqlValue::Int(0),
        ),
    ];
    vec![RowChange::UpdateSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone().unwrap_or_default(),
        set,
    }]
}
/// The entry rows and session update of a repair: the batch appended after its assistant.
pub(crate) fn repair_rows(
    r: &SubmissionReport,
    repair: &ToolRepair,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<(Vec<RowChange>, String), Refusal> {
    let session = r
        .bundle
        .session
        .as_ref()
        .ok_or_else(|| Refusal::new("the submission has no session row", "fail it instead"))?;
    // Two calls with one id: which result answers which call is ambiguous, and a repair would
    // leave that id with two results on the active path.
    let mut seen = std::collections::HashSet::new();
    let duplicates: Vec<&str> = repair
        .results
        .iter()
        .filter(|c| !seen.insert(c.call_id.as_str()))
        .map(|c| c.call_id.as_str())
        .collect();
    if !duplicates.is_empty() {
        return Err(Refusal::new(
            format!(
                "the tool batch is damaged: duplicate tool-call ids ({})",
                duplicates.join(", ")
            ),
            "resolve the batch by hand, or fail the submission",
        ));
    }
    let mut app = Appender::new(r, Some(repair.assistant_id.clone()), ids, now_ms);
    for result in &repair.results {
        let message = match &result.copied_from {
            Some(entry_id) => session
                .entries
                .iter()
                .find(|e| &e.id == entry_id)
                .and_then(|e| raw_message(&e.raw))
                .ok_or_else(|| {
                    Refusal::new(
                        format!("recorded result {entry_id} cannot be copied"),
                        "inspect the entry",
                    )
                })?,
            None => synthetic_result(&result.call_id, &result.tool_name, now_ms),
        };
        app.append(&message, &[]);
    }
    let new_leaf = app.leaf.clone().unwrap_or_default();
    let changes = app
        .finish(r)
        .map_err(|e| Refusal::new(e, "inspect the session row"))?;
    Ok((changes, new_leaf))
}
