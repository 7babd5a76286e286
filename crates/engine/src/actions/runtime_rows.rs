//! The runtime's rows, one builder per write it makes (spec §5.2, §5.3, §6): the session its
//! get-or-create saves, the advisory, the settlements, the journal update, the requeue, the
//! repaired batch. The planners (`fail`, `repair`, `requeue`, `step`, `reconcile`) compose them.

use serde_json::{Map, Value};

use super::common::Refusal;
use super::entries::{raw_message, Appender, EntryIds};
use crate::report::SubmissionReport;
use turnscope_core::journal::records::{format_offset, terminal_event_key, EventStore};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::js::stringify::to_js_string;
use turnscope_core::recovery::changes::{ColumnChange, RowChange, SqlValue};
use turnscope_core::recovery::failure::RuntimeFailure;
use turnscope_core::recovery::reconciler::DirectOutcome;
use turnscope_core::recovery::repair::ToolRepair;

pub use turnscope_core::recovery::runtime_text::INTERRUPTED_TEXT;

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
pub(crate) fn revision_bump(
    j: &turnscope_core::journal::submission_rows::JournalRow,
    now_ms: i64,
) -> [ColumnChange; 2] {
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
    j: &turnscope_core::journal::submission_rows::JournalRow,
    leaf: &str,
    now_ms: i64,
) -> Vec<ColumnChange> {
    let mut set = vec![ColumnChange::new(
        "phase",
        SqlValue::phase(&j.phase),
        SqlValue::phase(&turnscope_core::journal::status::JournalPhase::BeforeProvider),
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

/// `failSubmission(A, error)` for a dispatch; for a direct prompt `settleDirectSubmission`'s
/// rows with its `submission_settled` failure event.
pub(crate) fn settle_failed_rows(
    r: &SubmissionReport,
    failure: &RuntimeFailure,
    now_ms: i64,
) -> Result<Vec<RowChange>, Refusal> {
    let row = r.row();
    if row.is_direct() {
        return settle_direct_rows(
            r,
            DirectOutcome::Failed,
            Some(("error", failure.serialized())),
            now_ms,
        );
    }
    Ok(vec![RowChange::UpdateSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone().unwrap_or_default(),
        set: settle_columns(row, now_ms, SqlValue::text(&failure.message)),
    }])
}

/// `settleDirectSubmission(…, outcome)`: reserve the terminal outbox with the event (`ctx.createEvent`
/// of `{type, submissionId, outcome, result | error}`), append it once to the prompt's event stream
/// (creating the stream where it has no row, as the reconciler's pass does first), record its
/// offset, finalize. `field` is the event's `result` or `error` (`None`: a result the runtime's
/// reconstruction left `undefined`, which `JSON.stringify` leaves out). Where the database has no
/// event-stream tables, only the reservation: the runtime's next pass publishes it.
pub(crate) fn settle_direct_rows(
    r: &SubmissionReport,
    outcome: DirectOutcome,
    field: Option<(&str, Value)>,
    now_ms: i64,
) -> Result<Vec<RowChange>, Refusal> {
    let row = r.row();
    let attempt = row.attempt_id.clone().unwrap_or_default();
    let key = terminal_event_key(&row.submission_id);
    // The event's own keys, then instanceId, agentName (when known), v, eventIndex (a fresh
    // context's first event), timestamp.
    let mut event = Map::new();
    event.insert("type".into(), "submission_settled".into());
    event.insert("submissionId".into(), row.submission_id.clone().into());
    event.insert("outcome".into(), outcome.as_str().into());
    if let Some((name, value)) = field {
        event.insert(name.into(), value);
    }
    event.insert("instanceId".into(), row.instance_id().into());
    if let Some(agent) = row.agent() {
        event.insert("agentName".into(), agent.into());
    }
    event.insert("v".into(), 3.into());
    event.insert("eventIndex".into(), 0.into());
    event.insert("timestamp".into(), iso_from_ms(now_ms).into());
    let data = to_js_string(&Value::Object(event));
    let stream = r.bundle.event_stream.as_ref().ok_or_else(|| {
        Refusal::new(
            "the payload names no agent and instance, so the prompt has no event stream",
            "inspect the submission row",
        )
    })?;
    if stream.store == EventStore::Postgres
        && (row.owner_id.is_none() || row.terminal_key.is_some())
    {
        return Err(Refusal::new(
            "on PostgreSQL the runtime reserves the terminal outbox only for a row with an owner and no terminal key yet; this row's reservation would match nothing (the runtime's pass leaves it stale)",
            "inspect the submission row",
        ));
    }
    if row.terminal_offset.is_some() {
        return Err(Refusal::new(
            "the running row already holds a terminal event offset; the runtime's recording of a new one would match nothing",
            "inspect the submission row",
        ));
    }
    let mut changes = vec![RowChange::UpdateSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: attempt.clone(),
        set: vec![
            ColumnChange::new(
                "status",
                SqlValue::status(SubmissionStatus::Running),
                SqlValue::status(SubmissionStatus::Terminalizing),
            ),
            ColumnChange::new(
                "terminal_event_key",
                SqlValue::opt_text(row.terminal_key.as_deref()),
                SqlValue::text(&key),
            ),
            ColumnChange::new(
                "terminal_event_json",
                SqlValue::opt_text(row.terminal_event.as_deref()),
                SqlValue::text(&data),
            ),
        ],
    }];
    if stream.store == EventStore::Absent {
        return Ok(changes);
    }
    let seq = match (&stream.keyed, stream.head) {
        // `appendEventOnce` returns the offset of the same event appended before.
        (Some((seq, existing)), _) if *existing == data => *seq,
        (Some((seq, _)), _) => {
            return Err(Refusal::new(
                format!(
                    "the event stream {} already holds another event under {key} (seq {seq}); the runtime's append would fail with a conflicting payload and leave the row terminalizing",
                    stream.path
                ),
                "inspect the event stream",
            ))
        }
        (None, Some((_, true))) => {
            return Err(Refusal::new(
                format!(
                    "the event stream {} is closed; the runtime's append would fail and leave the row terminalizing",
                    stream.path
                ),
                "inspect the event stream",
            ))
        }
        (None, head) => {
            let seq = match head {
                Some((next, _)) => next,
                None => {
                    changes.push(RowChange::CreateEventStream {
                        path: stream.path.clone(),
                    });
                    0
                }
            };
            changes.push(RowChange::AppendEvent {
                path: stream.path.clone(),
                key: key.clone(),
                seq,
                data,
                store: stream.store,
            });
            seq
        }
    };
    changes.push(RowChange::UpdateTerminalizing {
        submission_id: row.submission_id.clone(),
        attempt_id: attempt.clone(),
        set: vec![ColumnChange::new(
            "terminal_event_offset",
            SqlValue::Null,
            SqlValue::text(format_offset(seq)),
        )],
    });
    // `@flue/postgres`'s finalize leaves `error` as it is; the SQLite stores clear it.
    let error = (stream.store != EventStore::Postgres).then_some(SqlValue::Null);
    changes.push(RowChange::UpdateTerminalizing {
        submission_id: row.submission_id.clone(),
        attempt_id: attempt,
        set: settled_columns(row, SubmissionStatus::Terminalizing, now_ms, error),
    });
    Ok(changes)
}

/// The columns `completeSubmission` (error NULL) and `failSubmission` (the failure's message)
/// both set on a running dispatch row.
pub(crate) fn settle_columns(
    row: &turnscope_core::journal::submission_rows::SubmissionRow,
    now_ms: i64,
    error: SqlValue,
) -> Vec<ColumnChange> {
    settled_columns(row, SubmissionStatus::Running, now_ms, Some(error))
}

/// A row's settlement from `from`, one place for its shape: the status, `settled_at`, and
/// `error` when the write sets it.
fn settled_columns(
    row: &turnscope_core::journal::submission_rows::SubmissionRow,
    from: SubmissionStatus,
    now_ms: i64,
    error: Option<SqlValue>,
) -> Vec<ColumnChange> {
    let mut set = vec![
        ColumnChange::new(
            "status",
            SqlValue::status(from),
            SqlValue::status(SubmissionStatus::Settled),
        ),
        ColumnChange::new(
            "settled_at",
            SqlValue::opt_int(row.settled_at),
            SqlValue::Int(now_ms),
        ),
    ];
    if let Some(error) = error {
        set.push(ColumnChange::new(
            "error",
            SqlValue::opt_text(row.error.as_deref()),
            error,
        ));
    }
    set
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
                .find(|e| e.id == entry_id)
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

#[cfg(test)]
mod settle_direct_tests {
    use super::*;
    use crate::actions::NextOutcome;
    use turnscope_core::journal::records::{EventStream, SubmissionBundle};
    use turnscope_core::journal::submission_rows::SubmissionRow;
    use turnscope_core::recovery::reconciler::RuleResult;
    use turnscope_core::testing::{sub, NOW, SID};

    fn report(
        store: EventStore,
        head: Option<(i64, bool)>,
        keyed: Option<(i64, String)>,
    ) -> SubmissionReport {
        // The shared running row, as a direct prompt.
        let row = SubmissionRow {
            session_key: r#"agent-session:["alice","default","default"]"#.into(),
            kind: "direct".into(),
            payload: format!(
                r#"{{"agent":"assistant","id":"alice","payload":{{"message":"hi"}},"acceptedAt":"2027-01-15T08:00:00.000Z","kind":"direct","submissionId":"{SID}"}}"#
            ),
            ..sub()
        };
        let event_stream = Some(EventStream {
            path: "agents/assistant/alice".into(),
            store,
            head,
            keyed,
        });
        SubmissionReport::build(
            SubmissionBundle {
                row,
                journal: None,
                journal_problem: None,
                session: None,
                stream_chunks: vec![],
                event_stream,
            },
            Some(200_000),
            NOW,
        )
    }

    fn settle(r: &SubmissionReport) -> Result<Vec<RowChange>, Refusal> {
        settle_direct_rows(
            r,
            DirectOutcome::Failed,
            Some(("error", Value::from("boom"))),
            NOW,
        )
    }

    fn names(changes: &[RowChange]) -> Vec<&'static str> {
        changes.iter().map(RowChange::name).collect()
    }

    #[test]
    fn reserve_append_record_finalize_and_the_copy_settles() {
        let r = report(EventStore::KeysTable, Some((5, false)), None);
        let changes = settle(&r).unwrap();
        assert_eq!(
            names(&changes),
            [
                "update_submission",
                "append_event",
                "update_terminalizing",
                "update_terminalizing"
            ]
        );
        let RowChange::AppendEvent { seq, data, key, .. } = &changes[1] else {
            panic!()
        };
        assert_eq!(
            (*seq, key.as_str()),
            (5, format!("direct-submission:{SID}:settled").as_str())
        );
        assert!(data.starts_with(&format!(
            r#"{{"type":"submission_settled","submissionId":"{SID}","outcome":"failed","error":"boom","instanceId":"alice","agentName":"assistant","v":3,"eventIndex":0,"timestamp":"#
        )));
        // The runtime's next pass, on the copy, finds it settled and failed.
        let after = r.with_changes(&changes);
        assert_eq!(after.row().status.as_str(), "settled");
        assert_eq!(after.row().settled_at, Some(NOW));
        assert_eq!(after.row().terminal_event.as_deref(), Some(data.as_str()));
        assert_eq!(
            after.row().terminal_offset.as_deref(),
            Some("0000000000000000_0000000000000005")
        );
        let stream = after.bundle.event_stream.as_ref().unwrap();
        assert_eq!(
            (stream.head, stream.keyed.clone()),
            (Some((6, false)), Some((5, data.clone())))
        );
        assert_eq!(
            super::super::predict::outcome(&after),
            NextOutcome::Result(RuleResult::Failed)
        );
    }

    #[test]
    fn a_missing_stream_is_created_and_the_same_event_is_not_appended_twice() {
        let changes = settle(&report(EventStore::EventKeyColumn, None, None)).unwrap();
        assert_eq!(
            names(&changes)[1..3],
            ["create_event_stream", "append_event"]
        );
        let RowChange::AppendEvent { seq: 0, data, .. } = &changes[2] else {
            panic!("{changes:?}")
        };
        // `appendEventOnce` of an event already under the key returns its offset.
        let again = settle(&report(
            EventStore::EventKeyColumn,
            Some((9, false)),
            Some((3, data.clone())),
        ))
        .unwrap();
        assert!(!names(&again).contains(&"append_event"));
        assert!(
            matches!(&again[1], RowChange::UpdateTerminalizing { set, .. }
            if set[0].new == SqlValue::text("0000000000000000_0000000000000003"))
        );
    }

    #[test]
    fn what_the_runtime_would_fail_on_is_refused() {
        let conflict = settle(&report(
            EventStore::KeysTable,
            Some((4, false)),
            Some((3, "{}".into())),
        ));
        assert!(conflict.unwrap_err().reason.contains("conflicting payload"));
        let closed = settle(&report(EventStore::KeysTable, Some((4, true)), None));
        assert!(closed.unwrap_err().reason.contains("is closed"));
        let mut r = report(EventStore::Postgres, Some((0, false)), None);
        r.bundle.row.owner_id = None;
        assert!(settle(&r).unwrap_err().reason.contains("with an owner"));
    }

    #[test]
    fn postgres_leaves_error_and_no_event_tables_reserve_only() {
        let changes = settle(&report(EventStore::Postgres, Some((0, false)), None)).unwrap();
        let RowChange::UpdateTerminalizing { set, .. } = changes.last().unwrap() else {
            panic!()
        };
        assert_eq!(
            set.iter().map(|c| c.column).collect::<Vec<_>>(),
            ["status", "settled_at"]
        );
        let reserved = settle(&report(EventStore::Absent, None, None)).unwrap();
        assert_eq!(names(&reserved), ["update_submission"]);
        assert_eq!(
            super::super::predict::outcome(
                &report(EventStore::Absent, None, None).with_changes(&reserved)
            ),
            NextOutcome::Result(RuleResult::Failed),
            "terminalizing with the failure event: the runtime's next pass publishes it"
        );
    }
}
