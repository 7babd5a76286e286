//! Tests of the 2.x reconciler port: each step's condition on both sides of its edge, its writes,
//! and the resume the replaced or requeued attempt will make. Histories are record logs folded as
//! the runtime folds them.

use super::*;
use crate::flue2::classify::{
    classify_conversation_submission, encode_canonical_id, submission_entry_id,
};
use crate::flue2::records::parse_batch;
use crate::flue2::resume::{ResumeAction, ResumeEnd};

pub(crate) const SUB: &str = "sub_a";
pub(crate) const NOW: i64 = 1_000_000;

/// A record log of one conversation (`c1`, default/default unless scoped), built record by
/// record.
pub(crate) struct Log {
    records: Vec<String>,
    n: usize,
    scope: (&'static str, &'static str),
}

impl Log {
    pub(crate) fn new() -> Log {
        Log::scoped("default", "default")
    }

    pub(crate) fn scoped(harness: &'static str, session: &'static str) -> Log {
        let mut l = Log {
            records: Vec::new(),
            n: 0,
            scope: (harness, session),
        };
        l.push(r#""type":"conversation_created","kind":"root""#, None);
        l
    }

    pub(crate) fn push(&mut self, fields: &str, owner: Option<&str>) {
        self.n += 1;
        let id = format!("r{}", self.n);
        self.push_id(&id, fields, owner);
    }

    pub(crate) fn push_id(&mut self, id: &str, fields: &str, owner: Option<&str>) {
        let owner = owner.map_or(String::new(), |s| {
            format!(r#","submissionId":"{s}","attemptId":"att_1""#)
        });
        let (harness, session) = self.scope;
        self.records.push(format!(
            r#"{{"v":1,"id":"{id}","conversationId":"c1","harness":"{harness}","session":"{session}","timestamp":"2026-01-01T00:00:00.000Z"{owner},{fields}}}"#
        ));
    }

    pub(crate) fn input(&mut self, sub: &str, parent: &str) -> String {
        let id = submission_entry_id("dispatch", sub);
        self.push(
            &format!(r#""type":"user_message","messageId":"{id}","parentId":{parent},"content":[{{"type":"text","text":"go"}}]"#),
            Some(sub),
        );
        id
    }

    /// A completed assistant: `stop` with text, or `toolUse` with calls.
    pub(crate) fn assistant(
        &mut self,
        id: &str,
        parent: &str,
        stop: &str,
        calls: &[(&str, &str)],
        error: Option<&str>,
    ) {
        self.push(
            &format!(
                r#""type":"assistant_message_started","messageId":"{id}","parentId":"{parent}""#
            ),
            Some(SUB),
        );
        self.push(
            &format!(r#""type":"assistant_text_started","messageId":"{id}","blockId":"b0","blockIndex":0"#),
            Some(SUB),
        );
        self.push(
            &format!(r#""type":"assistant_text_delta","messageId":"{id}","blockId":"b0","sequence":0,"delta":"hello""#),
            Some(SUB),
        );
        self.push(
            &format!(r#""type":"assistant_text_completed","messageId":"{id}","blockId":"b0","deltaCount":1"#),
            Some(SUB),
        );
        for (i, (call, name)) in calls.iter().enumerate() {
            self.push(
                &format!(r#""type":"assistant_tool_call","messageId":"{id}","blockId":"t{i}","blockIndex":{},"toolCallId":"{call}","name":"{name}","arguments":{{}}"#, i + 1),
                Some(SUB),
            );
        }
        let error = error.map_or(String::new(), |e| format!(r#","error":"{e}""#));
        self.push(
            &format!(r#""type":"assistant_message_completed","messageId":"{id}","stopReason":"{stop}","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}}{error}"#),
            Some(SUB),
        );
    }

    /// A ghost: started, one text block with a delta, never completed.
    pub(crate) fn ghost(&mut self, id: &str, parent: &str, text: &str) {
        self.push(
            &format!(
                r#""type":"assistant_message_started","messageId":"{id}","parentId":"{parent}""#
            ),
            Some(SUB),
        );
        self.push(
            &format!(r#""type":"assistant_text_started","messageId":"{id}","blockId":"g0","blockIndex":0"#),
            Some(SUB),
        );
        if !text.is_empty() {
            self.push(
                &format!(r#""type":"assistant_text_delta","messageId":"{id}","blockId":"g0","sequence":0,"delta":"{text}""#),
                Some(SUB),
            );
        }
    }

    pub(crate) fn outcome(&mut self, assistant: &str, call: &str, name: &str) {
        self.push(
            &format!(r#""type":"tool_outcome","assistantMessageId":"{assistant}","toolCallId":"{call}","toolName":"{name}","isError":false,"content":[]"#),
            Some(SUB),
        );
    }

    /// The log's records, parsed.
    pub(crate) fn parsed(&self) -> Vec<crate::flue2::records::Record> {
        parse_batch(&format!("[{}]", self.records.join(","))).unwrap()
    }

    pub(crate) fn state(&self) -> InstanceState {
        let batch = parse_batch(&format!("[{}]", self.records.join(","))).unwrap();
        InstanceState::fold(&batch).unwrap()
    }
}

pub(crate) fn row() -> Flue2SubmissionRow {
    Flue2SubmissionRow {
        sequence: 1,
        submission_id: SUB.into(),
        session_key: r#"agent-session:["worker","i1","default","default"]"#.into(),
        kind: "dispatch".into(),
        status: "running".into(),
        accepted_at: Some(1),
        canonical_ready_at: Some(1),
        attempt_id: Some("att_1".into()),
        input_applied_at: Some(2),
        abort_requested_at: None,
        started_at: Some(2),
        joined_into: None,
        settled_at: None,
        error: None,
        attempt_count: 1,
        max_attempts: 10,
        timeout_at: NOW + 3_600_000,
        owner_id: Some("owner".into()),
        lease_expires_at: NOW - 1,
        settlement_record_id: None,
        settlement_record: None,
        not_utf8: Vec::new(),
        stored_as: None,
        parse: crate::flue2::rows::ParseOutcome::Parses,
        pass_fails: None,
    }
}

/// The plan for `row` over `log`'s folded state, classified by 2.1.0's classifier.
fn plan(row: &Flue2SubmissionRow, log: &Log) -> Flue2Plan {
    plan_joined(row, log, &[])
}

fn plan_joined(row: &Flue2SubmissionRow, log: &Log, joined: &[String]) -> Flue2Plan {
    let state = log.state();
    let conv = state.conversation_for_scope("default", "default");
    let c = classify_conversation_submission(conv, &row.input_entry_id(), 0, Flue2Variant::LATEST)
        .unwrap();
    plan_flue2(&ReconcileInput {
        row,
        instance: Some(&state),
        conversation: conv,
        classification: Ok(&c),
        joined,
        now_ms: NOW,
        variant: Flue2Variant::LATEST,
    })
}

/// An input followed by a `toolUse` assistant with three calls, the first outcome recorded.
pub(crate) fn batch_one_of_three() -> Log {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant(
        "entry_a1",
        &input,
        "toolUse",
        &[("tc0", "fetch"), ("tc1", "note"), ("tc2", "email")],
        None,
    );
    l.outcome("entry_a1", "tc0", "fetch");
    l
}

fn kinds(writes: &[Flue2Write]) -> Vec<&'static str> {
    writes
        .iter()
        .map(|w| match w {
            Flue2Write::ConvergeGhost { .. } => "converge",
            Flue2Write::MarkerSettleBatch { .. } => "markers",
            Flue2Write::TerminalSignal { .. } => "signal",
            Flue2Write::SettleJoined { .. } => "joined",
            Flue2Write::ReserveSettlement { .. } => "reserve",
            Flue2Write::AppendSettled { .. } => "append_settled",
            Flue2Write::Finalize { .. } => "finalize",
            Flue2Write::SettleRowOnly { .. } => "row_only",
            Flue2Write::ReplaceAttempt { .. } => "replace",
            Flue2Write::Requeue => "requeue",
        })
        .collect()
}

#[test]
fn only_an_expired_running_row_reaches_the_step_table() {
    let log = batch_one_of_three();
    let mut r = row();
    r.lease_expires_at = NOW;
    assert_eq!(plan(&r, &log).step, Flue2Step::LeaseHeld);
    r.lease_expires_at = NOW - 1;
    assert_eq!(plan(&r, &log).step, Flue2Step::Replace);
    r.lease_expires_at = 0;
    assert_eq!(plan(&r, &log).step, Flue2Step::NoLease);
    for (status, step) in [
        ("queued", Flue2Step::Queued),
        ("settled", Flue2Step::Settled),
        ("joined", Flue2Step::Joined),
    ] {
        let mut r = row();
        r.status = status.into();
        assert_eq!(plan(&r, &log).step, step, "{status}");
    }
}

#[test]
fn step_0_a_row_without_an_attempt_is_left_alone() {
    let mut r = row();
    r.attempt_id = None;
    let p = plan(&r, &batch_one_of_three());
    assert_eq!((p.step, p.step.number()), (Flue2Step::NoAttempt, Some(0)));
    assert!(p.writes.is_empty() && p.row_after.is_none());
}

#[test]
fn step_2_completed_settles_even_past_the_budget_and_deadline() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "stop", &[], None);
    let mut r = row();
    r.attempt_count = 10;
    r.timeout_at = NOW - 5;
    r.abort_requested_at = Some(3);
    let p = plan_joined(&r, &l, &["sub_j".to_string()]);
    assert_eq!(p.step, Flue2Step::Completed);
    assert_eq!(
        kinds(&p.writes),
        ["joined", "reserve", "append_settled", "finalize"]
    );
    let after = p.row_after.unwrap();
    assert_eq!(
        (
            after.status.as_str(),
            after.error,
            after.settlement_outcome.as_deref()
        ),
        ("settled", None, Some("completed"))
    );
    assert!(
        matches!(&p.writes[1], Flue2Write::ReserveSettlement { record_id, .. }
        if record_id == "record_dispatch-submission:sub_a:settled")
    );
}

#[test]
fn step_3_an_abort_intent_settles_aborted_after_markers_and_its_signal() {
    let mut r = row();
    r.abort_requested_at = Some(5);
    let p = plan(&r, &batch_one_of_three());
    assert_eq!(p.step, Flue2Step::Abort);
    assert_eq!(
        kinds(&p.writes),
        ["markers", "signal", "reserve", "append_settled", "finalize"]
    );
    let Flue2Write::MarkerSettleBatch { kept, markers, .. } = &p.writes[0] else {
        unreachable!()
    };
    assert_eq!(kept, &["tc0"]);
    assert_eq!(
        markers.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["tc1", "tc2"]
    );
    let Flue2Write::TerminalSignal {
        signal_type,
        content,
        record_id,
        ..
    } = &p.writes[1]
    else {
        unreachable!()
    };
    assert_eq!(*signal_type, "submission_aborted");
    assert_eq!(record_id, "record_submission_aborted_sub_a");
    assert_eq!(
        content,
        "Submission was aborted.\n\nInterrupted tool call(s):\n  - note (tc1)\n  - email (tc2)"
    );
    let after = p.row_after.unwrap();
    assert_eq!(after.error.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(after.settlement_outcome.as_deref(), Some("aborted"));
}

#[test]
fn step_4_the_budget_is_spent_at_attempt_count_equal_to_max() {
    let log = batch_one_of_three();
    let mut r = row();
    r.attempt_count = 9;
    assert_eq!(plan(&r, &log).step, Flue2Step::Replace);
    r.attempt_count = 10;
    let p = plan(&r, &log);
    assert_eq!(p.step, Flue2Step::Budget);
    assert_eq!(
        p.row_after.unwrap().error.as_deref(),
        Some("Submission exceeded maximum recovery attempts (10/10).")
    );
    assert!(matches!(
        &p.writes[1],
        Flue2Write::TerminalSignal {
            signal_type: "submission_interrupted",
            ..
        }
    ));
    // Before the input was applied the error is the interruption one, and there is no batch.
    let mut l = Log::new();
    l.input("sub_other", "null");
    let p = plan(&r, &l);
    assert_eq!(p.step, Flue2Step::Budget);
    assert_eq!(
        p.row_after.unwrap().error.as_deref(),
        Some(INTERRUPTED_BEFORE_INPUT_MESSAGE)
    );
    assert_eq!(
        kinds(&p.writes),
        ["signal", "reserve", "append_settled", "finalize"]
    );
}

#[test]
fn step_5_the_deadline_passes_at_timeout_at_itself() {
    let log = batch_one_of_three();
    let mut r = row();
    r.timeout_at = NOW + 1;
    assert_eq!(plan(&r, &log).step, Flue2Step::Replace);
    r.timeout_at = NOW;
    let p = plan(&r, &log);
    assert_eq!(p.step, Flue2Step::Timeout);
    assert_eq!(p.row_after.unwrap().error.as_deref(), Some(TIMEOUT_MESSAGE));
    // timeout_at 0 is no deadline.
    r.timeout_at = 0;
    assert_eq!(plan(&r, &log).step, Flue2Step::Replace);
}

#[test]
fn a_terminal_path_converges_its_own_ghost_and_no_other() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g", &input, "par");
    let mut r = row();
    r.timeout_at = NOW - 1;
    let p = plan(&r, &l);
    assert_eq!(
        kinds(&p.writes),
        [
            "converge",
            "signal",
            "reserve",
            "append_settled",
            "finalize"
        ]
    );
    assert!(
        matches!(&p.writes[0], Flue2Write::ConvergeGhost { record_ids, .. }
        if record_ids == &["record_recovery_entry_g_g0_completed", "record_recovery_entry_g_aborted"])
    );
    // Another submission's ghost is out of the scope.
    let mut r = row();
    r.submission_id = "sub_b".into();
    r.timeout_at = NOW - 1;
    let mut l = Log::new();
    l.input("sub_b", "null");
    let leaf = submission_entry_id("dispatch", "sub_b");
    l.ghost("entry_g", &leaf, "par");
    assert_eq!(
        kinds(&plan(&r, &l).writes),
        ["signal", "reserve", "append_settled", "finalize"]
    );
}

#[test]
fn step_6_replaces_the_attempt_and_the_resume_repairs_the_batch() {
    let p = plan(&row(), &batch_one_of_three());
    assert_eq!(p.step.column(), "6 replace");
    assert_eq!(
        p.writes,
        [Flue2Write::ReplaceAttempt {
            attempt_count: 2,
            lease_expires_at: NOW + LEASE_DURATION_MS
        }]
    );
    let after = p.row_after.unwrap();
    assert_eq!(
        (after.attempt_count, after.attempt_id),
        (2, AttemptChange::New)
    );
    let resume = p.resume.unwrap();
    assert_eq!(resume.after, "replacement");
    assert!(
        matches!(&resume.actions[1], ResumeAction::RepairBatch { kept, unresolved, truncated: false, .. }
        if kept == &["tc0"] && unresolved.len() == 2)
    );
    // After the repair the batch is complete: the model turn continues from the tool results.
    assert_eq!(resume.classification, "resume/tool_results");
    assert_eq!(
        resume.end,
        ResumeEnd::ModelTurn {
            from: "resume/tool_results".into()
        }
    );
}

#[test]
fn the_resume_converges_a_ghost_and_continues_its_text() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g", &input, "partial text");
    let p = plan(&row(), &l);
    assert_eq!(p.step, Flue2Step::Replace);
    let resume = p.resume.unwrap();
    assert!(matches!(resume.actions[0], ResumeAction::Converge { .. }));
    assert!(resume
        .actions
        .iter()
        .any(|a| matches!(a, ResumeAction::UpgradeToContinuation { partial_entry_id } if partial_entry_id == "entry_g")));
    assert_eq!(resume.classification, "resume/stream_continuation");
    // A ghost without text is converged but not continued: the turn is replayed.
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g", &input, "");
    let resume = plan(&row(), &l).resume.unwrap();
    assert!(!resume
        .actions
        .iter()
        .any(|a| matches!(a, ResumeAction::UpgradeToContinuation { .. })));
    assert_eq!(resume.classification, "resume/aborted_partial");
}

#[test]
fn the_resume_fails_a_terminal_error_after_spending_an_attempt() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant(
        "entry_a1",
        &input,
        "error",
        &[],
        Some("invalid_request_error: bad"),
    );
    let p = plan(&row(), &l);
    assert_eq!(p.step, Flue2Step::Replace);
    assert_eq!(
        p.resume.unwrap().end,
        ResumeEnd::Fails {
            error: "dispatch(sub_a) failed: invalid_request_error: bad".into()
        }
    );
}

#[test]
fn step_7_requeues_an_absent_input_and_the_next_claim_settles_the_batch_before_it() {
    // The instance's leaf is another submission's uncommitted batch; ours never got its input.
    let mut l = Log::new();
    let other = l.input("sub_prev", "null");
    l.assistant("entry_p", &other, "toolUse", &[("tcp", "fetch")], None);
    let p = plan(&row(), &l);
    assert_eq!(p.step, Flue2Step::Requeue);
    assert_eq!(p.writes, [Flue2Write::Requeue]);
    let after = p.row_after.unwrap();
    assert_eq!(after.status, "queued");
    assert!(after.input_applied_cleared && after.attempt_id == AttemptChange::Cleared);
    let resume = p.resume.unwrap();
    assert_eq!(resume.after, "next_claim");
    assert!(
        matches!(&resume.actions[0], ResumeAction::SettleBatchBeforeInput { write: Flue2Write::MarkerSettleBatch { markers, .. } } if markers.len() == 1)
    );
    assert!(matches!(
        &resume.actions[1],
        ResumeAction::AppendInput { .. }
    ));
    assert_eq!(resume.classification, "resume/input_only");
}

#[test]
fn step_1_an_inspection_that_throws_waits_for_the_deadline() {
    let log = batch_one_of_three();
    let state = log.state();
    let mut r = row();
    let run = |r: &Flue2SubmissionRow, kind| {
        plan_flue2(&ReconcileInput {
            row: r,
            instance: Some(&state),
            conversation: state.conversation_for_scope("default", "default"),
            classification: Err((kind, "TypeError: x")),
            joined: &[],
            now_ms: NOW,
            variant: Flue2Variant::LATEST,
        })
    };
    let p = run(&r, InspectFailure::ClassifierThrows);
    assert_eq!((p.step, p.writes.len()), (Flue2Step::Inspect, 0));
    r.timeout_at = NOW;
    let p = run(&r, InspectFailure::ClassifierThrows);
    assert_eq!(p.step, Flue2Step::Inspect);
    assert_eq!(p.row_after.unwrap().error.as_deref(), Some(TIMEOUT_MESSAGE));
    let p = run(&r, InspectFailure::Unloadable);
    assert!(p.writes.is_empty() && p.row_after.is_none());
}

#[test]
fn a_terminalizing_row_is_finalized_once_its_lease_ended() {
    let log = batch_one_of_three();
    let mut r = row();
    r.status = "terminalizing".into();
    r.settlement_record_id = Some("record_x".into());
    r.settlement_record =
        Some(r#"{"id":"record_x","outcome":"failed","error":{"message":"boom"}}"#.into());
    r.lease_expires_at = NOW + 1;
    assert_eq!(plan(&r, &log).step, Flue2Step::LeaseHeld);
    r.lease_expires_at = NOW;
    let p = plan(&r, &log);
    assert_eq!(p.step, Flue2Step::FinalizeSettlement);
    assert_eq!(p.row_after.unwrap().error.as_deref(), Some("boom"));
    r.settlement_record = Some(r#"{"id":"record_x","outcome":"failed"}"#.into());
    assert_eq!(
        plan(&r, &log).row_after.unwrap().error.as_deref(),
        Some("The submission did not complete.")
    );
}

#[test]
fn a_length_batch_is_repaired_with_the_truncation_error() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant(
        "entry_a1",
        &input,
        "length",
        &[("tc0", "fetch"), ("tc1", "note")],
        None,
    );
    l.outcome("entry_a1", "tc0", "fetch");
    let resume = plan(&row(), &l).resume.unwrap();
    let Some(ResumeAction::RepairBatch {
        truncated,
        unresolved,
        marker_record_ids,
        ..
    }) = resume.actions.last()
    else {
        panic!("{resume:?}")
    };
    assert!(*truncated);
    assert_eq!(unresolved.len(), 1);
    assert_eq!(
        marker_record_ids,
        &[format!(
            "record_tool_truncated_outcome_{}_{}",
            encode_canonical_id("entry_a1"),
            encode_canonical_id("tc1")
        )]
    );
    // A toolUse batch's marker is the interrupted one.
    let resume = plan(&row(), &batch_one_of_three()).resume.unwrap();
    assert!(
        matches!(resume.actions.last(), Some(ResumeAction::RepairBatch { truncated: false, marker_record_ids, .. })
        if marker_record_ids.iter().all(|id| id.starts_with("record_tool_repair_outcome_")))
    );
}

#[test]
fn the_terminal_signal_is_written_once() {
    let mut l = batch_one_of_three();
    let mut r = row();
    r.timeout_at = NOW;
    let first = plan(&r, &l);
    assert!(matches!(
        &first.writes[1],
        Flue2Write::TerminalSignal {
            already_present: false,
            ..
        }
    ));
    // A record under the signal's id already in the stream (the runtime looks the id up in its
    // records, whatever the record): the markers come again, the signal not.
    l.push_id(
        "record_submission_interrupted_sub_a",
        r#""type":"state_write","key":"k","value":1"#,
        Some(SUB),
    );
    let again = plan(&r, &l);
    assert!(matches!(
        &again.writes[1],
        Flue2Write::TerminalSignal {
            already_present: true,
            ..
        }
    ));
    assert_eq!(kinds(&again.writes), kinds(&first.writes));
}

#[test]
fn joined_deliveries_settle_before_the_host_on_every_terminal_path() {
    let mut r = row();
    r.abort_requested_at = Some(1);
    let joined = ["sub_j1".to_string(), "sub_j2".to_string()];
    let p = plan_joined(&r, &batch_one_of_three(), &joined);
    assert_eq!(
        kinds(&p.writes),
        [
            "markers",
            "signal",
            "joined",
            "reserve",
            "append_settled",
            "finalize"
        ]
    );
    assert!(
        matches!(&p.writes[2], Flue2Write::SettleJoined { submission_ids, outcome: "aborted" } if submission_ids.len() == 2)
    );
}

#[test]
fn without_a_conversation_for_its_record_the_row_is_settled_alone() {
    // The instance's only conversation is another scope's, and holds nothing of this submission.
    let mut l = Log::scoped("other", "s");
    l.input("sub_other", "null");
    let mut r = row();
    r.attempt_count = 10;
    let p = plan(&r, &l);
    assert_eq!(p.step, Flue2Step::Budget);
    assert_eq!(kinds(&p.writes), ["row_only"]);
    assert_eq!(p.row_after.unwrap().settlement_outcome, None);
    // With the default conversation there, the outbox is used.
    let mut l = Log::new();
    l.input("sub_other", "null");
    assert_eq!(
        kinds(&plan(&r, &l).writes),
        ["signal", "reserve", "append_settled", "finalize"]
    );
}

#[test]
fn queued_rows_wait_for_the_claim_or_the_unready_pass() {
    let log = batch_one_of_three();
    let mut r = row();
    r.status = "queued".into();
    assert!(plan(&r, &log).why.contains("claim loop"));
    r.canonical_ready_at = None;
    assert!(plan(&r, &log).why.contains("materializes"));
    r.abort_requested_at = Some(1);
    assert!(plan(&r, &log).why.contains("settles it aborted"));
    assert!(plan(&r, &log).writes.is_empty());
}

#[test]
fn a_session_key_the_runtime_does_not_write_is_malformed() {
    let log = batch_one_of_three();
    let state = log.state();
    let p = plan_flue2(&ReconcileInput {
        row: &row(),
        instance: Some(&state),
        conversation: None,
        classification: Err((InspectFailure::SessionKey, "bad key")),
        joined: &[],
        now_ms: NOW,
        variant: Flue2Variant::LATEST,
    });
    assert_eq!(
        (p.step, p.step.column()),
        (Flue2Step::Malformed, "- malformed".to_string())
    );
}

#[test]
fn a_status_the_runtime_does_not_write_is_never_selected_so_never_written() {
    let log = batch_one_of_three();
    // `paused`, and what a BLOB status is read as: every pass selects by status.
    for status in ["paused", "TEXT stored as a BLOB"] {
        let mut r = row();
        r.status = status.into();
        r.lease_expires_at = NOW - 1;
        let p = plan(&r, &log);
        assert_eq!(p.step, Flue2Step::Malformed, "{status}");
        assert!(p.writes.is_empty() && p.row_after.is_none() && p.resume.is_none());
        assert!(p.why.contains("never settles or writes it"), "{}", p.why);
    }
}

/// A row the runtime's row parser rejects is planned `malformed`, naming the pass that parses it;
/// a running row with a lease of 0 is listed by no pass, so never parsed.
#[test]
fn a_row_the_row_parser_rejects_is_malformed_when_a_pass_lists_it() {
    use crate::flue2::rows::ParseOutcome;
    let log = batch_one_of_three();
    let rejected = |mut r: Flue2SubmissionRow| {
        r.parse = ParseOutcome::Fails {
            problem: "payload message: not an object".into(),
            error: Some("[flue] Persisted agent submission payload is malformed.".into()),
        };
        plan(&r, &log)
    };
    let expired = rejected(row());
    assert_eq!(expired.step, Flue2Step::Malformed);
    assert!(expired.why.contains("throws \"[flue] Persisted agent submission payload is malformed.\", and its pass settles the row as failed with that message"), "{}", expired.why);
    assert!(expired.writes.is_empty() && expired.row_after.is_none());
    let mut held = row();
    held.lease_expires_at = NOW + 5_000;
    let held = rejected(held);
    assert_eq!(held.step, Flue2Step::Malformed);
    assert!(held.why.contains("once its lease ends"), "{}", held.why);
    let mut no_lease = row();
    no_lease.lease_expires_at = 0;
    assert_eq!(rejected(no_lease).step, Flue2Step::NoLease);
    let mut queued = row();
    queued.status = "queued".into();
    queued.canonical_ready_at = None;
    assert!(rejected(queued.clone())
        .why
        .contains("the unready pass settles"));
    queued.canonical_ready_at = Some(1);
    assert!(rejected(queued.clone())
        .why
        .contains("the claim loop, once it lists the row"));
    // Undecided: said so, with the message where it does not parse.
    let mut r = row();
    r.parse = ParseOutcome::Undecided {
        why: "acceptedAt in another form".into(),
    };
    let p = plan(&r, &log);
    assert_eq!(p.step, Flue2Step::Malformed);
    assert!(
        p.why.starts_with("turnscope cannot tell whether"),
        "{}",
        p.why
    );
    // Parsed: the step table as before.
    assert_eq!(plan(&row(), &log).step, Flue2Step::Replace);
}

/// Where every pass throws before its expired-lease scan, an expired running row and a
/// terminalizing row whose lease ended are reached by none; a live lease is still `lease_held`.
#[test]
fn no_pass_reaches_an_expired_row_of_a_journal_whose_pass_throws() {
    let log = batch_one_of_three();
    let mut r = row();
    r.pass_fails = Some("the settlement obligation of terminalizing row t does not parse".into());
    let p = plan(&r, &log);
    assert_eq!(
        (p.step, p.step.column()),
        (Flue2Step::PassFails, "- pass_fails".to_string())
    );
    assert!(
        p.why.contains("terminalizing row t") && p.writes.is_empty(),
        "{}",
        p.why
    );
    r.status = "terminalizing".into();
    assert_eq!(plan(&r, &log).step, Flue2Step::PassFails);
    r.status = "running".into();
    r.lease_expires_at = NOW + 1;
    assert_eq!(plan(&r, &log).step, Flue2Step::LeaseHeld);
}
