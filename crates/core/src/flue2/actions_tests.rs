//! Tests of the 2.x operator actions: every refusal, the exact columns each accepted action
//! changes, and the next pass computed on the row after it.

use super::*;
use crate::flue2::classify::classify_conversation_submission;
use crate::flue2::reconciler::tests::{batch_one_of_three, row, Log, NOW, SUB};
use crate::flue2::reconciler::{AttemptChange, ABORTED_MESSAGE};

/// `action` on `row` over `log`, classified by 2.1.0's classifier, at `NOW`.
fn act(
    action: &Flue2Action,
    row: &Flue2SubmissionRow,
    log: &Log,
    joined: &[String],
) -> Result<Flue2ActionPlan, Flue2Refusal> {
    let state = log.state();
    let conv = state.conversation_for_scope("default", "default");
    let c = classify_conversation_submission(conv, &row.input_entry_id(), 0, Flue2Variant::LATEST)
        .unwrap();
    plan_action(
        action,
        &ActionInput {
            row,
            instance: Some(&state),
            conversation: conv,
            classification: Ok(&c),
            joined,
            now_ms: NOW,
            variant: Flue2Variant::LATEST,
        },
    )
}

/// An input and nothing after it (`resume/input_only`).
fn input_only() -> Log {
    let mut l = Log::new();
    l.input(SUB, "null");
    l
}

/// A conversation without the submission's input (`absent`).
fn absent() -> Log {
    Log::new()
}

/// The input answered by a `stop` assistant (`completed`).
fn completed() -> Log {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "stop", &[], None);
    l
}

fn columns(p: &Flue2ActionPlan) -> Vec<&'static str> {
    p.changes.iter().map(|c| c.column).collect()
}

fn refused(r: Result<Flue2ActionPlan, Flue2Refusal>) -> String {
    r.expect_err("refused").reason
}

#[test]
fn abort_sets_the_intent_and_the_next_pass_settles_it_aborted() {
    let p = act(&Flue2Action::Abort, &row(), &batch_one_of_three(), &[]).unwrap();
    assert_eq!(
        p.changes,
        vec![Flue2ColumnChange {
            column: "abort_requested_at",
            before: SqlValue::Null,
            after: SqlValue::Int(NOW),
        }]
    );
    assert_eq!(p.next.step, Flue2Step::Abort);
    let after = p.next.row_after.as_ref().unwrap();
    assert_eq!(after.status, "settled");
    assert_eq!(after.error.as_deref(), Some(ABORTED_MESSAGE));
    assert_eq!(after.settlement_outcome.as_deref(), Some("aborted"));
    // Without the intent the same pass would replace the attempt.
    assert!(
        act(&Flue2Action::Requeue, &row(), &batch_one_of_three(), &[])
            .unwrap_err()
            .reason
            .contains("6 replace")
    );
    assert_eq!(
        (
            p.fence.status.as_str(),
            p.fence.attempt_id.as_deref(),
            p.fence.lease_expires_at
        ),
        ("running", Some("att_1"), NOW - 1)
    );
}

#[test]
fn every_action_but_abort_is_refused_under_a_live_lease_and_where_no_pass_acts() {
    let fail = Flue2Action::Fail {
        reason: "stuck".into(),
    };
    let extend = Flue2Action::Extend {
        deadline_ms: Some(60_000),
        attempts: None,
    };
    let actions = [Flue2Action::Requeue, extend, fail];
    for a in &actions {
        let mut live = row();
        live.lease_expires_at = NOW + 5_000;
        assert!(
            refused(act(a, &live, &input_only(), &[])).contains("lease is live for 5000 ms"),
            "{a:?}"
        );
        // At the lease's end itself the lease is still held (the scan wants lease < now).
        live.lease_expires_at = NOW;
        assert!(
            refused(act(a, &live, &input_only(), &[])).contains("lease is live"),
            "{a:?}"
        );
        let mut no_lease = row();
        no_lease.lease_expires_at = 0;
        assert!(refused(act(a, &no_lease, &input_only(), &[])).contains("lease_expires_at 0"));
        let mut no_attempt = row();
        no_attempt.attempt_id = None;
        assert!(refused(act(a, &no_attempt, &input_only(), &[])).contains("no attempt_id"));
        for status in ["settled", "queued", "terminalizing", "joined"] {
            let mut r = row();
            r.status = status.into();
            r.joined_into = Some("other".into());
            let why = refused(act(a, &r, &input_only(), &[]));
            assert!(
                why.contains(&format!("it is {status}, not running")),
                "{a:?} {status}: {why}"
            );
        }
        let mut malformed = row();
        malformed.session_key = "nonsense".into();
        let state = input_only().state();
        let r = plan_action(
            a,
            &ActionInput {
                row: &malformed,
                instance: Some(&state),
                conversation: None,
                classification: Err((InspectFailure::SessionKey, "bad key")),
                joined: &[],
                now_ms: NOW,
                variant: Flue2Variant::LATEST,
            },
        );
        assert!(refused(r).contains("does not read this row"));
    }
    // Abort: refused where no pass acts and on rows whose end is decided elsewhere.
    let a = &Flue2Action::Abort;
    let mut no_lease = row();
    no_lease.lease_expires_at = 0;
    assert!(refused(act(a, &no_lease, &input_only(), &[])).contains("lease_expires_at 0"));
    let mut settled = row();
    settled.status = "settled".into();
    assert!(refused(act(a, &settled, &input_only(), &[]))
        .contains("settled: the runtime does nothing more"));
    let mut reserved = row();
    reserved.status = "terminalizing".into();
    assert!(refused(act(a, &reserved, &input_only(), &[])).contains("its settlement is reserved"));
    for status in ["joining", "joined"] {
        let mut r = row();
        r.status = status.into();
        r.joined_into = Some("sub_host".into());
        let no = act(a, &r, &input_only(), &[]).expect_err("refused");
        assert!(
            no.reason.starts_with(&format!("it is {status}")),
            "{}",
            no.reason
        );
        assert!(no.instead.contains("sub_host"), "{}", no.instead);
    }
}

#[test]
fn abort_under_a_live_lease_writes_the_intent_the_owner_honours_and_plans_the_lease_end() {
    let mut live = row();
    live.lease_expires_at = NOW + 5_000;
    let p = act(&Flue2Action::Abort, &live, &batch_one_of_three(), &[]).unwrap();
    assert_eq!(columns(&p), ["abort_requested_at"]);
    // The owner renews the lease: the fence holds neither it nor its end, only the attempt.
    assert!(p.fence.live_lease);
    assert_eq!(p.fence.attempt_id, live.attempt_id);
    assert_eq!(p.next.step, Flue2Step::LeaseHeld);
    assert!(
        p.next.why.contains("with an abort intent"),
        "{}",
        p.next.why
    );
    assert!(p.next.why.contains("deadline scan"), "{}", p.next.why);
    // Were the owner gone, the pass after the lease's end: step 3 on the row the write leaves.
    let then = p.then.as_ref().expect("the pass at the lease's end");
    assert_eq!(then.step, Flue2Step::Abort);
    let after = then.row_after.as_ref().unwrap();
    assert_eq!(after.error.as_deref(), Some(ABORTED_MESSAGE));
    assert!(p.then_heading().contains("stop renewing"));
    assert!(p.notes.iter().any(|n| n.contains("undo")), "{:?}", p.notes);
    // A lease that has ended is the reconciled case: the lease held as read, no `then`.
    let p = act(&Flue2Action::Abort, &row(), &batch_one_of_three(), &[]).unwrap();
    assert!(!p.fence.live_lease);
    assert!(p.then.is_none());
    // The fence is serialized without the flag unless it is set.
    assert!(!serde_json::to_string(&p.fence)
        .unwrap()
        .contains("liveLease"));
}

#[test]
fn abort_on_a_queued_row_is_settled_aborted_by_the_unready_pass_or_the_claiming_attempt() {
    for (ready, says) in [
        (
            None,
            "the unready pass settles it aborted without an attempt",
        ),
        (
            Some(NOW - 10),
            "that attempt settles it aborted before anything else",
        ),
    ] {
        let mut q = row();
        q.status = "queued".into();
        q.attempt_id = None;
        q.owner_id = None;
        q.started_at = None;
        q.lease_expires_at = 0;
        q.canonical_ready_at = ready;
        let p = act(&Flue2Action::Abort, &q, &absent(), &[]).unwrap();
        assert_eq!(columns(&p), ["abort_requested_at"]);
        assert!(!p.fence.live_lease);
        assert_eq!(p.fence.status, "queued");
        assert_eq!(p.next.step, Flue2Step::Queued);
        assert!(p.next.why.contains(says), "{}", p.next.why);
    }
}

#[test]
fn abort_is_refused_once_requested_and_where_the_runtime_settles_it_completed() {
    let mut r = row();
    r.abort_requested_at = Some(5);
    assert!(refused(act(&Flue2Action::Abort, &r, &input_only(), &[])).contains("already requested"));
    let why = refused(act(&Flue2Action::Abort, &row(), &completed(), &[]));
    assert!(why.contains("settles it completed"), "{why}");
}

#[test]
fn requeue_writes_the_runtimes_requeue_columns_only_where_the_input_is_absent() {
    let mut r = row();
    r.input_applied_at = None;
    let p = act(&Flue2Action::Requeue, &r, &absent(), &[]).unwrap();
    assert_eq!(
        columns(&p),
        vec![
            "status",
            "attempt_id",
            "started_at",
            "owner_id",
            "lease_expires_at"
        ]
    );
    assert_eq!(p.changes[0].after, SqlValue::text("queued"));
    assert_eq!(p.changes[1].after, SqlValue::Null);
    assert_eq!(p.changes[4].after, SqlValue::Int(0));
    assert_eq!(p.next.step, Flue2Step::Queued);
    let then = p.then.as_ref().unwrap();
    assert_eq!(then.step, Flue2Step::Requeue);
    assert_eq!(
        then.row_after.as_ref().unwrap().attempt_id,
        AttemptChange::Cleared
    );
    assert!(then.resume.is_some());
    assert!(p.notes[0].starts_with("the deadline is recomputed"));
    // With input_applied_at set, it is cleared too.
    let p = act(&Flue2Action::Requeue, &row(), &absent(), &[]).unwrap();
    assert!(columns(&p).contains(&"input_applied_at"));
    assert!(p.fence.no_joined);
}

#[test]
fn requeue_is_refused_with_joined_deliveries_input_present_intent_budget_or_deadline() {
    let joined = vec!["sub_j".to_string()];
    let why = refused(act(&Flue2Action::Requeue, &row(), &absent(), &joined));
    assert!(why.contains("joined into it (sub_j)"), "{why}");
    let why = refused(act(&Flue2Action::Requeue, &row(), &input_only(), &[]));
    assert!(why.contains("6 replace"), "{why}");
    let mut r = row();
    r.abort_requested_at = Some(5);
    assert!(refused(act(&Flue2Action::Requeue, &r, &absent(), &[])).contains("3 abort"));
    let mut r = row();
    r.attempt_count = 10;
    let e = act(&Flue2Action::Requeue, &r, &absent(), &[]).unwrap_err();
    assert!(e.reason.contains("4 budget") && e.instead.contains("extend"));
    let mut r = row();
    r.timeout_at = NOW;
    assert!(refused(act(&Flue2Action::Requeue, &r, &absent(), &[])).contains("5 timeout"));
}

#[test]
fn extend_lifts_the_budget_and_the_deadline_the_next_pass_would_fail_on() {
    let mut r = row();
    r.attempt_count = 10;
    r.timeout_at = NOW - 10;
    let both = Flue2Action::Extend {
        deadline_ms: Some(60_000),
        attempts: Some(2),
    };
    let p = act(&both, &r, &input_only(), &[]).unwrap();
    assert_eq!(
        p.changes,
        vec![
            Flue2ColumnChange {
                column: "timeout_at",
                before: SqlValue::Int(NOW - 10),
                after: SqlValue::Int(NOW + 60_000)
            },
            Flue2ColumnChange {
                column: "max_attempts",
                before: SqlValue::Int(10),
                after: SqlValue::Int(12)
            },
        ]
    );
    assert_eq!(p.next.step, Flue2Step::Replace);
    assert!(p.notes.is_empty());
    // Only the budget: the deadline still fails it.
    let budget = Flue2Action::Extend {
        deadline_ms: None,
        attempts: Some(1),
    };
    assert_eq!(
        act(&budget, &r, &input_only(), &[]).unwrap().next.step,
        Flue2Step::Timeout
    );
    // Input not applied: the note says the input application sets both again.
    let mut r = row();
    r.input_applied_at = None;
    let p = act(&budget, &r, &input_only(), &[]).unwrap();
    assert!(p.notes[0].contains("sets max_attempts and timeout_at again"));
    for (d, n) in [
        (None, None),
        (Some(0), None),
        (Some(MAX_EXTEND_MS + 1), None),
        (None, Some(0)),
    ] {
        let e = Flue2Action::Extend {
            deadline_ms: d,
            attempts: n,
        };
        assert!(act(&e, &row(), &input_only(), &[]).is_err(), "{d:?} {n:?}");
    }
}

#[test]
fn fail_reserves_the_runtimes_settlement_and_the_pass_finishes_it_failed() {
    let p = act(
        &Flue2Action::Fail {
            reason: "tool hangs".into(),
        },
        &row(),
        &input_only(),
        &[],
    )
    .unwrap();
    assert_eq!(
        columns(&p),
        vec!["status", "settlement_record_id", "settlement_record"]
    );
    let id = format!("record_dispatch-submission:{SUB}:settled");
    assert_eq!(p.changes[1].after, SqlValue::text(id.clone()));
    let SqlValue::Text(record) = &p.changes[2].after else {
        panic!("text")
    };
    let message = format!("dispatch({SUB}) failed: failed by an operator: tool hangs");
    assert_eq!(
        record,
        &format!(
            r#"{{"v":1,"id":"{id}","type":"submission_settled","conversationId":"c1","harness":"default","session":"default","timestamp":"1970-01-01T00:16:40.000Z","submissionId":"{SUB}","attemptId":"att_1","outcome":"failed","error":{{"name":"FlueError","message":"{message}","type":"operation_failed","details":"","meta":{{"operation":"dispatch({SUB})","reason":"failed by an operator: tool hangs"}}}}}}"#
        )
    );
    assert_eq!(p.next.step, Flue2Step::FinalizeSettlement);
    let after = p.next.row_after.as_ref().unwrap();
    assert_eq!(after.status, "settled");
    assert_eq!(after.error.as_deref(), Some(message.as_str()));
    assert_eq!(after.settlement_outcome.as_deref(), Some("failed"));
    assert!(p.fence.no_joined);
}

#[test]
fn fail_is_refused_with_a_batch_at_the_leaf_joined_deliveries_or_no_conversation() {
    let fail = Flue2Action::Fail { reason: "x".into() };
    let why = refused(act(&fail, &row(), &batch_one_of_three(), &[]));
    assert!(why.contains("tool batch is at the leaf"), "{why}");
    let why = refused(act(&fail, &row(), &input_only(), &["sub_j".into()]));
    assert!(why.contains("joined into it"), "{why}");
    let blank = Flue2Action::Fail {
        reason: "  ".into(),
    };
    assert!(refused(act(&blank, &row(), &input_only(), &[])).contains("needs a reason"));
    assert!(refused(act(&fail, &row(), &completed(), &[])).contains("settles it completed"));
    // A conversation of another scope only: no entry of the submission, no default one.
    let log = Log::scoped("h", "s");
    let state = log.state();
    let conv = state.conversation_for_scope("h", "s");
    let c =
        classify_conversation_submission(conv, &row().input_entry_id(), 0, Flue2Variant::LATEST)
            .unwrap();
    let r = plan_action(
        &fail,
        &ActionInput {
            row: &row(),
            instance: Some(&state),
            conversation: conv,
            classification: Ok(&c),
            joined: &[],
            now_ms: NOW,
            variant: Flue2Variant::LATEST,
        },
    );
    assert!(refused(r).contains("no conversation of the instance"));
}
