//! The runtime's own rows for each rule, by `step`, `reconcile`, `fail`, `repair`, `requeue` and
//! `extend`, on SQLite and PostgreSQL; and every preview's prediction computed from those rows.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::reconciler::{messages, RuleResult};
use turnscope_engine::actions::{
    plan_extend, plan_fail, plan_reconcile, plan_repair, plan_requeue, plan_step, ActionPlan,
    Extension, NextOutcome,
};
use turnscope_engine::report::SubmissionReport;

use crate::actions::{apply_on, demo, demo_id_in, ids, inserted, report_on, DEMO_NOW};
use crate::backends::{kinds, TestDb};

/// The demo with `sql` run on it first, on each backend.
fn demos(dir: &Path, sql: &str) -> Vec<TestDb> {
    kinds()
        .into_iter()
        .map(|kind| {
            let sub = dir.join(format!("{kind:?}"));
            std::fs::create_dir_all(&sub).unwrap();
            let db = demo(&sub);
            if !sql.is_empty() {
                Connection::open(&db).unwrap().execute_batch(sql).unwrap();
            }
            TestDb::from_sqlite(kind, &db)
        })
        .collect()
}

fn id_of(db: &TestDb, instance: &str) -> String {
    demo_id_in(db.open().reader(), instance)
}

fn apply_plan(db: &TestDb, plan: &ActionPlan) {
    apply_on(db, plan, DEMO_NOW).unwrap_or_else(|e| panic!("{:?}: {e}", db.kind));
}

fn submission_sets(plan: &ActionPlan) -> Vec<(String, String)> {
    plan.changes
        .iter()
        .flat_map(|c| match c {
            RowChange::UpdateSubmission { set, .. } => set
                .iter()
                .map(|c| (c.column.to_string(), serde_json::to_string(&c.new).unwrap()))
                .collect(),
            _ => vec![],
        })
        .collect()
}

fn terminal_event(r: &SubmissionReport) -> Value {
    serde_json::from_str(r.row().terminal_event.as_deref().expect("terminal event")).unwrap()
}

/// A direct prompt failed by rule 3 gets the runtime's timeout failure, not rule 8/9's: the
/// advisory's reason, the event's error type, message and (absent) meta.
#[test]
fn a_direct_prompt_past_its_deadline_gets_the_timeout_failure() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!(
        "UPDATE flue_agent_submissions SET timeout_at = {} WHERE kind = 'direct' AND status = 'running' AND session_key LIKE '%support-7%'",
        DEMO_NOW - 1
    );
    for db in demos(dir.path(), &sql) {
        let id = id_of(&db, "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(3), "{}", r.plan.reason);
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let advisory = &inserted(&plan)[0];
        assert_eq!(
            advisory["message"]["attributes"]["reason"],
            "exceeded_timeout"
        );
        assert_eq!(advisory["message"]["content"], messages::TIMEOUT);
        assert_eq!(advisory["submissionTerminal"]["reason"], "exceeded_timeout");
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_published(&after, &db);
        let event = terminal_event(&after);
        let error = &event["error"];
        assert_eq!(error["type"], "submission_timeout");
        assert_eq!(error["message"], messages::TIMEOUT);
        assert_eq!(error["name"], "FlueError");
        assert!(error.get("meta").is_none(), "the timeout error has no meta");
        let keys: Vec<&String> = event.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "type",
                "submissionId",
                "outcome",
                "error",
                "instanceId",
                "agentName",
                "v",
                "eventIndex",
                "timestamp"
            ]
        );
        // Settled: nothing is left to fail.
        assert!(
            plan_fail(&after, "x", DEMO_NOW, &mut ids(&after)).is_err(),
            "now settled"
        );
    }
}

/// The runtime's `settleDirectSubmission` happened in full: the row settled (no error) with its
/// offset recorded, and the stream holds the very event of `terminal_event_json` at that offset,
/// its head moved past it.
pub(crate) fn assert_published(after: &SubmissionReport, db: &TestDb) {
    let row = after.row();
    assert_eq!(row.status.as_str(), "settled", "{:?}", db.kind);
    assert!(row.settled_at.is_some(), "{:?}", db.kind);
    assert_eq!(
        row.error, None,
        "{:?}: a direct prompt keeps error NULL",
        db.kind
    );
    let stream = after.bundle.event_stream.as_ref().expect("an event stream");
    let (seq, data) = stream.keyed.clone().expect("the event was appended");
    assert_eq!(
        Some(data.as_str()),
        row.terminal_event.as_deref(),
        "{:?}",
        db.kind
    );
    assert_eq!(
        row.terminal_offset.as_deref(),
        Some(format!("0000000000000000_{seq:016}").as_str())
    );
    assert_eq!(stream.head, Some((seq + 1, false)), "{:?}", db.kind);
    assert_eq!(
        db.int(&format!(
            "SELECT COUNT(*) FROM flue_event_stream_entries WHERE path = '{}' AND seq = {seq}",
            stream.path
        )),
        1,
        "{:?}: the entry itself",
        db.kind
    );
}

/// Rule 2: the budget event with attemptCount/maxAttempts, by `step` and by `fail`.
#[test]
fn a_spent_budget_gets_the_retry_exhausted_failure() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "UPDATE flue_agent_submissions SET attempt_count = 12, max_retry = 10 WHERE kind = 'direct' AND status = 'running' AND session_key LIKE '%support-7%'";
    for db in demos(dir.path(), sql) {
        let id = id_of(&db, "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(2), "{}", r.plan.reason);
        // `fail` picks the rule that applies: rule 2's failure, not rule 9's.
        let fail = plan_fail(&r, "budget spent, giving up", DEMO_NOW, &mut ids(&r)).unwrap();
        assert_eq!(
            inserted(&fail)[0]["message"]["attributes"]["reason"],
            "exhausted_retry_budget"
        );
        let event: Value = serde_json::from_str(
            &submission_sets(&fail)
                .into_iter()
                .find(|(c, _)| c == "terminal_event_json")
                .map(|(_, v)| serde_json::from_str::<String>(&v).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(event["error"]["type"], "submission_retry_exhausted");
        assert_eq!(
            event["error"]["message"],
            "Submission exceeded maximum recovery attempts (12/10)."
        );
        assert_eq!(
            event["error"]["meta"].to_string(),
            r#"{"attemptCount":12,"maxAttempts":10}"#
        );
        // `step`: the advisory, then the settlement with the same event, published.
        let first = plan_step(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        apply_plan(&db, &first);
        let r = report_on(&db, &id, DEMO_NOW);
        let second = plan_step(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert_eq!(
            second.prediction.outcome,
            NextOutcome::Result(RuleResult::Failed)
        );
        apply_plan(&db, &second);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_published(&after, &db);
        assert_eq!(
            terminal_event(&after)["error"]["type"],
            "submission_retry_exhausted"
        );
        assert!(fail.prediction.rule.is_none());
        assert_eq!(
            fail.prediction.outcome,
            NextOutcome::Result(RuleResult::Failed)
        );
        assert_eq!(fail.prediction.verdict, "failed");
    }
}

/// Rule 6 by `step`: the repaired batch and the journal's `before_provider` update (phase,
/// checkpoint, revision) in one step, so the runtime's next pass resumes it (rule 5).
#[test]
fn step_on_rule_6_writes_the_journal_update_with_the_repair() {
    let dir = tempfile::tempdir().unwrap();
    for db in demos(dir.path(), "") {
        let id = id_of(&db, "billing-bot");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(6), "{}", r.plan.reason);
        let j = r.bundle.journal.clone().unwrap();
        let plan = plan_step(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert_eq!(plan.prediction.rule, Some(5), "{:?}", plan.prediction);
        assert_eq!(
            plan.prediction.outcome,
            NextOutcome::Result(RuleResult::Replacement)
        );
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        let j2 = after.bundle.journal.clone().unwrap();
        assert_eq!(j2.phase.as_str(), "before_provider");
        assert_eq!(j2.revision, j.revision + 1);
        assert_eq!(j2.updated_at, DEMO_NOW);
        assert_eq!(
            j2.checkpoint_leaf_id,
            after.history.as_ref().unwrap().leaf_id
        );
        assert_eq!(j2.attempt_id, j.attempt_id);
        // What the preview predicted is what the re-read says.
        assert_eq!(after.plan.rule, Some(5));
        // And the next step does not offer a write the runtime would not make: nothing to
        // write, the attempt replacement left to the runtime.
        let next = plan_step(&after, DEMO_NOW, &mut ids(&after)).unwrap();
        assert!(next.is_noop(), "{:?}", next.changes);
        assert!(
            next.summary
                .contains("left to the runtime: replace the attempt"),
            "{}",
            next.summary
        );
    }
}

/// No session row: the runtime creates it (empty, its get-or-create) and then writes the
/// advisory; so does `reconcile`.
#[test]
fn a_missing_session_is_created_as_the_runtime_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    // onboarding-17 has no session row; with its input applied the runtime fails it (rule 9).
    let sql = format!(
        "UPDATE flue_agent_submissions SET input_applied_at = {} WHERE status = 'running' AND session_key LIKE '%onboarding-17%'",
        DEMO_NOW - 60_000
    );
    let ulid = regex::Regex::new("^(conv|aff)_[0-7][0-9A-HJKMNP-TV-Z]{25}$").unwrap();
    for db in demos(dir.path(), &sql) {
        let id = id_of(&db, "onboarding-17");
        let r = report_on(&db, &id, DEMO_NOW);
        assert!(r.bundle.session.is_none());
        assert_eq!(r.plan.rule, Some(9));
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let RowChange::InsertSession { session_id, data } = &plan.changes[0] else {
            panic!("{:?}", plan.changes[0])
        };
        assert_eq!(session_id, &r.row().session_key);
        let v: Value = serde_json::from_str(data).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "version",
                "conversationId",
                "affinityKey",
                "leafId",
                "childSessions",
                "metadata",
                "createdAt",
                "updatedAt"
            ]
        );
        assert!(
            ulid.is_match(v["conversationId"].as_str().unwrap()),
            "{data}"
        );
        assert!(ulid.is_match(v["affinityKey"].as_str().unwrap()), "{data}");
        assert_eq!(v["leafId"], Value::Null);
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        let s = after
            .bundle
            .session
            .as_ref()
            .expect("the session row exists now");
        assert!(s.data_problems.is_empty(), "{:?}", s.data_problems);
        assert_eq!(s.entries.len(), 1, "the advisory, as the first entry");
        assert_eq!(s.entries[0].parent_id, None);
        assert_eq!(s.leaf_id.as_deref(), Some(s.entries[0].id.as_str()));
        assert_eq!(after.row().status.as_str(), "settled");
        assert_eq!(
            after.row().error.as_deref(),
            Some(messages::AFTER_INPUT_APPLICATION)
        );
    }
}

/// Rule 7 with no session: `requeue` and `reconcile` write the session the runtime creates, then
/// the requeue; `fail` refuses (its failure would be false) and offers the requeue.
#[test]
fn requeue_creates_the_session_and_fail_refuses_a_requeued_state() {
    let dir = tempfile::tempdir().unwrap();
    for db in demos(dir.path(), "") {
        let id = id_of(&db, "onboarding-17");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(7));
        let refusal = plan_fail(&r, "give up", DEMO_NOW, &mut ids(&r)).unwrap_err();
        assert!(refusal.instead.contains("requeue"), "{}", refusal.instead);
        let requeue = plan_requeue(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let reconcile = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let shape = |p: &ActionPlan| -> Vec<&'static str> {
            p.changes
                .iter()
                .map(|c| match c {
                    RowChange::InsertSession { .. } => "session",
                    RowChange::UpdateSubmission { .. } => "submission",
                    _ => "other",
                })
                .collect()
        };
        assert_eq!(shape(&requeue), ["session", "submission"]);
        assert_eq!(shape(&reconcile), shape(&requeue));
        assert_eq!(
            requeue.prediction.outcome,
            NextOutcome::Result(RuleResult::Requeued)
        );
        apply_plan(&db, &reconcile);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status.as_str(), "queued");
        assert!(after.bundle.session.is_some());
        assert!(turnscope_core::recovery::reconciler::row_problem(after.row()).is_none());
    }
}

/// A recovered partial's numbers are written as JavaScript writes them (`0.00009`, not `9e-5`).
#[test]
fn a_recovered_partial_keeps_javascript_number_forms() {
    let dir = tempfile::tempdir().unwrap();
    let exponent = regex::Regex::new(r"[0-9]e-[0-9]").unwrap();
    for db in demos(dir.path(), "") {
        let id = db
            .open()
            .reader()
            .list_submissions(turnscope_store::RowFilter::All, 0)
            .unwrap()
            .into_iter()
            .find(|r| {
                r.instance_id().as_deref() == Some("standup-bot") && r.status.as_str() == "running"
            })
            .unwrap()
            .submission_id;
        let now = report_on(&db, &id, DEMO_NOW)
            .row()
            .lease_expires_at
            .max(DEMO_NOW)
            + 1;
        let r = report_on(&db, &id, now);
        assert_eq!(r.plan.rule, Some(4), "{}", r.plan.reason);
        let plan = plan_step(&r, now, &mut ids(&r)).unwrap();
        let RowChange::InsertEntry { data, .. } = &plan.changes[0] else {
            panic!()
        };
        assert!(data.contains(r#""output":0.00009,"#), "{data}");
        assert!(!exponent.is_match(data), "{data}");
    }
}

/// Rule 4's `markStreamConsumed` is fenced on the submission's attempt: with the journal under
/// another attempt the runtime's update matches nothing, and turnscope writes none either.
#[test]
fn mark_stream_consumed_is_fenced_on_the_submission_s_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "UPDATE flue_agent_turn_journals SET attempt_id = 'another-attempt' WHERE submission_id IN (SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' AND session_key LIKE '%podcast-notes%')";
    for db in demos(dir.path(), sql) {
        let id = id_of(&db, "podcast-notes");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(4));
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert!(
            !plan
                .changes
                .iter()
                .any(|c| matches!(c, RowChange::UpdateJournal { .. })),
            "{:?}",
            plan.changes
        );
        assert!(plan
            .changes
            .iter()
            .any(|c| matches!(c, RowChange::DeleteStreamChunks { .. })));
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        let j = after.bundle.journal.as_ref().unwrap();
        assert_eq!(j.stream_consumed_at, None);
        assert_eq!(j.attempt_id, "another-attempt");
    }
}

/// After recovering a stream whose input is not on the active path, marking it consumed alone
/// would turn the runtime's replacement into a failure (rule 9): `step` and `reconcile` stop
/// before that write and leave it, with the replacement, to the runtime.
#[test]
fn a_recovered_stream_is_left_for_the_runtime_to_replace() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "UPDATE flue_sessions SET data = json_set(data, '$.leafId', json('null')) WHERE id LIKE '%podcast-notes%'";
    for db in demos(dir.path(), sql) {
        let id = id_of(&db, "podcast-notes");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.classification().state.label(), "absent");
        assert_eq!(
            (r.plan.rule, r.plan.result),
            (Some(4), Some(RuleResult::Replacement))
        );
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert_eq!(
            plan.prediction.outcome,
            NextOutcome::Result(RuleResult::Replacement),
            "{:?}",
            plan.prediction
        );
        assert!(
            plan.summary.contains("left to the runtime"),
            "{}",
            plan.summary
        );
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(
            (after.plan.rule, after.plan.result),
            (Some(4), Some(RuleResult::Replacement))
        );
        let refusal = plan_step(&after, DEMO_NOW, &mut ids(&after)).unwrap_err();
        assert!(
            refusal.reason.contains("from replacement into failed"),
            "{}",
            refusal.reason
        );
    }
}

/// `reconcile` on rule 9 writes what two `step`s write, in one transaction with one audit row.
#[test]
fn reconcile_applies_a_whole_rule_in_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    for db in demos(dir.path(), "") {
        let id = id_of(&db, "translator-eu");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(9));
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert!(!plan.prediction.fails_anyway, "settled: no next pass");
        assert_eq!(
            plan.prediction.outcome,
            NextOutcome::Result(RuleResult::Failed)
        );
        let before = db.open().audit_records().unwrap().len();
        apply_plan(&db, &plan);
        assert_eq!(db.open().audit_records().unwrap().len(), before + 1);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status.as_str(), "settled");
        assert!(after.inspection.advisory_present);
        assert_eq!(
            after.row().error.as_deref(),
            Some(messages::AFTER_INPUT_APPLICATION)
        );
        // Nothing left: a second reconcile is refused.
        assert!(plan_reconcile(&after, DEMO_NOW, &mut ids(&after)).is_err());
    }
}

/// `repair` where the deadline passed: the preview says first that the runtime fails it anyway
/// and names `extend`; `extend` then previews the rule it leads to (6 instead of 3) and writes
/// only the deadline, fenced on its old value.
#[test]
fn a_repair_past_the_deadline_warns_and_extend_changes_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    for db in demos(dir.path(), "") {
        let id = id_of(&db, "etl-nightly");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(3), "{}", r.plan.reason);
        let repair = plan_repair(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert!(repair.prediction.fails_anyway);
        assert_eq!(repair.prediction.rule, Some(3));
        assert!(repair
            .prediction
            .way_out
            .as_deref()
            .unwrap()
            .contains("extend"));
        let ext = Extension {
            deadline_ms: Some(3_600_000),
            attempts: None,
        };
        let plan = plan_extend(&r, ext, DEMO_NOW).unwrap();
        assert_eq!(plan.prediction.rule, Some(6), "{:?}", plan.prediction);
        assert!(!plan.prediction.fails_anyway);
        assert_eq!(
            submission_sets(&plan),
            [("timeout_at".to_string(), (DEMO_NOW + 3_600_000).to_string())]
        );
        apply_plan(&db, &plan);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().timeout_at, DEMO_NOW + 3_600_000);
        assert_eq!(after.plan.rule, Some(6));
        assert!(turnscope_core::recovery::reconciler::row_problem(after.row()).is_none());
        // The fence: the old value changed since this preview, so it writes nothing.
        let stale = plan_extend(&r, ext, DEMO_NOW).unwrap();
        assert!(apply_on(&db, &stale, DEMO_NOW).is_err());
    }
}

/// `extend --attempts`: N more than are left, counted from the attempts used when spent.
#[test]
fn extend_attempts_moves_a_spent_budget_past_rule_2() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "UPDATE flue_agent_submissions SET attempt_count = 12, max_retry = 10 WHERE status = 'running' AND session_key LIKE '%translator-eu%'";
    for db in demos(dir.path(), sql) {
        let id = id_of(&db, "translator-eu");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(2));
        let ext = Extension {
            deadline_ms: None,
            attempts: Some(3),
        };
        let plan = plan_extend(&r, ext, DEMO_NOW).unwrap();
        assert_eq!(
            submission_sets(&plan),
            [("max_retry".to_string(), "15".to_string())]
        );
        // translator-eu's history ends in a terminal error: past rule 2 it is rule 9.
        assert_eq!(plan.prediction.rule, Some(9));
        apply_plan(&db, &plan);
        assert_eq!(report_on(&db, &id, DEMO_NOW).row().max_retry, 15);
        assert!(plan_extend(&r, Extension::default(), DEMO_NOW).is_err());
    }
}

/// Entry rows under a key that has no session row: the runtime's first save of the session it
/// creates would delete them, so turnscope's insert of that session matches nothing and the
/// whole transaction writes nothing.
#[test]
fn a_session_is_not_created_over_entry_rows_it_did_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let sql = r#"INSERT INTO flue_session_entries (session_id, entry_id, position, data)
        SELECT session_key, 'orphan01', 0, '{"type":"message","id":"orphan01","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}'
        FROM flue_agent_submissions WHERE status = 'running' AND session_key LIKE '%onboarding-17%'"#;
    for db in demos(dir.path(), sql) {
        let id = id_of(&db, "onboarding-17");
        let r = report_on(&db, &id, DEMO_NOW);
        assert!(r.bundle.session.is_none());
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let err = apply_on(&db, &plan, DEMO_NOW).unwrap_err().to_string();
        assert!(err.contains("insert session"), "{:?}: {err}", db.kind);
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status.as_str(), "running");
        assert!(after.bundle.session.is_none());
    }
}
