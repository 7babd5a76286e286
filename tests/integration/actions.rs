//! Repair, requeue and fail: byte-exact writes, preconditions per reconciler state, fencing,
//! idempotence, first-write-wins and the audit trail.

use std::path::{Path, PathBuf};
use turnscope_core::journal::status::{JournalPhase, SubmissionStatus};

use rusqlite::Connection;
use serde_json::Value;
use turnscope_core::journal::entry::Role;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_engine::actions::{
    plan_fail, plan_repair, plan_requeue, ActionPlan, EntryIds, NextOutcome,
};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{ApplyError, AuditInfo, JournalStore, RowFilter, SqliteStore, SqliteWriter};

use turnscope_testkit::{JournalBuilder, SessionBuilder};

use crate::backends::{kinds, TestDb};
use crate::support::unpack_fixture;

/// Just after tool-batch-mid's leases expired (from its manifest).
const FIXTURE_NOW: i64 = 1_796_014_405_862;
/// The demo's clock.
pub(crate) const DEMO_NOW: i64 = 1_796_018_889_175;

pub(crate) fn report(db: &Path, id: &str, now: i64) -> SubmissionReport {
    let store = SqliteStore::open(db).unwrap();
    SubmissionReport::load(&store, id, Some(200_000), now).unwrap()
}

/// `report` on any backend.
pub(crate) fn report_on(db: &TestDb, id: &str, now: i64) -> SubmissionReport {
    let store = db.open();
    SubmissionReport::load(store.reader(), id, Some(200_000), now).unwrap()
}

/// `apply` on any backend.
pub(crate) fn apply_on(
    db: &TestDb,
    plan: &ActionPlan,
    now: i64,
) -> Result<turnscope_store::Applied, ApplyError> {
    db.writer().apply(
        &plan.fence,
        &plan.changes,
        &audit(plan.action.as_str(), now),
    )
}

/// Rows in turnscope's audit table (0 when there is none).
fn audit_rows(db: &TestDb) -> usize {
    db.open().audit_records().unwrap().len()
}

pub(crate) fn ids(r: &SubmissionReport) -> EntryIds {
    let mut n = 0x1000u64;
    EntryIds::with_source(
        r,
        Box::new(move || {
            n += 0x1111;
            n
        }),
    )
}

pub(crate) fn audit(action: &str, now: i64) -> AuditInfo {
    AuditInfo {
        operator: "tester@host".into(),
        action: action.into(),
        reason: Some("test".into()),
        summary: "s".into(),
        now_ms: now,
        batch_id: None,
        side_effects: None,
    }
}

pub(crate) fn apply(
    db: &Path,
    plan: &ActionPlan,
    now: i64,
) -> Result<turnscope_store::Applied, ApplyError> {
    SqliteWriter::open(db).unwrap().apply(
        &plan.fence,
        &plan.changes,
        &audit(plan.action.as_str(), now),
    )
}

pub(crate) fn inserted(plan: &ActionPlan) -> Vec<Value> {
    plan.changes
        .iter()
        .filter_map(|c| match c {
            RowChange::InsertEntry { data, .. } => Some(serde_json::from_str(data).unwrap()),
            _ => None,
        })
        .collect()
}

pub(crate) fn demo(dir: &Path) -> PathBuf {
    let db = dir.join("demo.db");
    turnscope_demo::write_demo(&db, DEMO_NOW).unwrap();
    db
}

fn demo_id(db: &Path, instance: &str) -> String {
    let store = SqliteStore::open(db).unwrap();
    demo_id_in(&store, instance)
}

pub(crate) fn demo_id_in(store: &dyn JournalStore, instance: &str) -> String {
    store
        .list_submissions(RowFilter::Expired, DEMO_NOW)
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some(instance))
        .unwrap_or_else(|| panic!("no stuck submission for {instance}"))
        .submission_id
}

#[test]
fn synthetic_results_are_byte_identical_in_form_to_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let r = report(&db, "74384fb4", FIXTURE_NOW);
    let plan = plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap();
    let entries: Vec<&str> = plan
        .changes
        .iter()
        .filter_map(|c| match c {
            RowChange::InsertEntry { data, .. } => Some(data.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(entries.len(), 3);
    // Spec §2.6 example 5, with this repair's ids, parent, times and call.
    let example = r#"{"type":"message","id":"9b1e44c0","parentId":"3aa0c5d1","timestamp":"2026-01-05T09:20:03.442Z","message":{"role":"toolResult","toolCallId":"toolu_01AbC","toolName":"get_time","content":[{"type":"text","text":"{\"type\":\"interrupted\",\"message\":\"Tool execution was interrupted before completion. The outcome is unknown.\"}"}],"isError":true,"timestamp":1767604803441}}"#;
    let v: Value = serde_json::from_str(entries[1]).unwrap();
    let expected = example
        .replace("9b1e44c0", v["id"].as_str().unwrap())
        .replace("3aa0c5d1", v["parentId"].as_str().unwrap())
        .replace("2026-01-05T09:20:03.442Z", v["timestamp"].as_str().unwrap())
        .replace("toolu_01AbC", "tc_crash_0_1")
        .replace("get_time", "write_note")
        .replace("1767604803441", &FIXTURE_NOW.to_string());
    assert_eq!(entries[1], expected);
    // Parent chain from the assistant; one shared message timestamp; 8-hex ids; positions after the last.
    let vs: Vec<Value> = entries
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(vs[0]["parentId"], "8dd456d7");
    assert_eq!(vs[1]["parentId"], vs[0]["id"]);
    assert_eq!(vs[2]["parentId"], vs[1]["id"]);
    assert!(vs.iter().all(|v| v["message"]["timestamp"] == FIXTURE_NOW));
    assert!(vs.iter().all(|v| v["id"].as_str().unwrap().len() == 8
        && v["id"]
            .as_str()
            .unwrap()
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())));
    let positions: Vec<i64> = plan
        .changes
        .iter()
        .filter_map(|c| match c {
            RowChange::InsertEntry { position, .. } => Some(*position),
            _ => None,
        })
        .collect();
    assert_eq!(positions, [8, 9, 10]);
}

#[test]
fn recorded_results_are_copied_verbatim_and_the_result_reads_as_the_runtime_expects() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let r = report(&db, "ec6474", FIXTURE_NOW);
    let original = r
        .following()
        .unwrap()
        .iter()
        .find(|e| e.message_with_role(&Role::ToolResult).is_some())
        .unwrap()
        .raw
        .clone();
    let plan = plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap();
    let first = inserted(&plan)[0].clone();
    let orig: Value = serde_json::from_str(&original).unwrap();
    assert_eq!(first["message"], orig["message"]);
    // Byte for byte: the copied message text appears unchanged inside the new row.
    let raw_msg = &original[original.find("\"message\":").unwrap() + 10..original.len() - 1];
    let RowChange::InsertEntry { data, .. } = &plan.changes[0] else {
        panic!()
    };
    assert!(data.contains(raw_msg), "{data}\n{raw_msg}");
    let applied = apply(&db, &plan, FIXTURE_NOW).unwrap();
    assert!(applied.lock_held.as_millis() < 2000);
    let after = report(&db, "ec6474", FIXTURE_NOW);
    assert_eq!(after.classification().state.label(), "resume/tool_results");
    assert_eq!(after.plan.rule, Some(5));
    // The partial results and the aborted assistant stay in the table, off the active path.
    let h = after.history.as_ref().unwrap();
    assert_eq!(
        h.entries.len(),
        r.history.as_ref().unwrap().entries.len() + 3
    );
    assert_eq!(h.abandoned_branches().len(), 1);
}

#[test]
fn repair_twice_writes_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let src = unpack_fixture(dir.path(), "tool-batch-mid");
    for kind in kinds() {
        let copy = dir.path().join(format!("{kind:?}.db"));
        std::fs::copy(&src, &copy).unwrap();
        let db = TestDb::from_sqlite(kind, &copy);
        let r = report_on(&db, "74384fb4", FIXTURE_NOW);
        apply_on(
            &db,
            &plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap(),
            FIXTURE_NOW,
        )
        .unwrap();
        let r2 = report_on(&db, "74384fb4", FIXTURE_NOW);
        let again = plan_repair(&r2, FIXTURE_NOW, &mut ids(&r2)).unwrap();
        assert!(again.is_noop(), "{kind:?}: {:?}", again.changes);
        assert_eq!(r2.classification().state.label(), "resume/tool_results");
        assert_eq!(r2.plan.rule, Some(5), "{kind:?}");
        assert_eq!(
            r2.bundle.journal.as_ref().unwrap().phase,
            JournalPhase::BeforeProvider
        );
        assert_eq!(audit_rows(&db), 1, "{kind:?}");
    }
}

#[test]
fn each_action_on_each_reconciler_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    // instance → (repair allowed, requeue allowed); fail is allowed on every expired row whose
    // session does not already hold a completed answer.
    let table = [
        ("guild-42", false, true),       // rule 7: absent, input not applied
        ("onboarding-17", false, true),  // rule 7, no session row
        ("support-7", false, false),     // rule 9: absent, input applied
        ("ci-runner-5", false, false),   // rule 9: advanced past input
        ("weather-desk", false, false),  // rule 1: completed
        ("billing-bot", true, false),    // rule 6: tool_use_unresolved
        ("etl-nightly", true, false),    // rule 3, but the batch is unresolved
        ("translator-eu", false, false), // rule 9: terminal error
        ("newsroom-2", false, false),    // rule 5: input only
        ("intake-form", false, false),   // rule 8: input persisted, not marked
        ("warehouse-3", false, false), // rule 5: complete batch → repair is a no-op, not a refusal
        ("travel-desk", true, false),  // rule 6: partial batch
        ("crm-sync", true, false),     // rule 5: graceful-shutdown shape (§6.2 batch)
        ("podcast-notes", false, false), // rule 4: stream recovery
    ];
    for (instance, repair_ok, requeue_ok) in table {
        let id = demo_id(&db, instance);
        let r = report(&db, &id, DEMO_NOW);
        let repair = plan_repair(&r, DEMO_NOW, &mut ids(&r));
        match (&repair, repair_ok) {
            (Ok(p), true) => assert!(!p.is_noop(), "{instance}: repair should write"),
            (Ok(p), false) => assert!(
                p.is_noop(),
                "{instance}: repair should refuse or do nothing, got {}",
                p.summary
            ),
            (Err(refusal), false) => assert!(!refusal.instead.is_empty(), "{instance}"),
            (Err(refusal), true) => panic!("{instance}: repair refused: {}", refusal.reason),
        }
        let requeue = plan_requeue(&r, DEMO_NOW, &mut ids(&r));
        assert_eq!(
            requeue.is_ok(),
            requeue_ok,
            "{instance}: {:?}",
            requeue.err()
        );
        if let Err(refusal) = requeue {
            assert!(
                refusal.reason.contains("input"),
                "{instance}: {}",
                refusal.reason
            );
        }
        let completed = r.classification().state.kind() == "completed";
        // Where the runtime requeues (rule 7), no failure would be true: fail offers requeue.
        let requeued = r.plan.rule == Some(7);
        let fail = plan_fail(&r, "operator gave up", DEMO_NOW, &mut ids(&r));
        assert_eq!(fail.is_ok(), !completed && !requeued, "{instance}");
        if requeued {
            let refusal = fail.unwrap_err();
            assert!(refusal.reason.contains("rule 7"), "{}", refusal.reason);
            assert!(refusal.instead.contains("requeue"), "{}", refusal.instead);
        }
        assert!(
            plan_fail(&r, " ", DEMO_NOW, &mut ids(&r)).is_err(),
            "a reason is required"
        );
    }
    // A live lease and settled rows are refused for every action.
    let store = SqliteStore::open(&db).unwrap();
    for row in store.list_submissions(RowFilter::All, 0).unwrap() {
        if row.lease_expired(DEMO_NOW) {
            continue;
        }
        let r = SubmissionReport::load(&store, &row.submission_id, None, DEMO_NOW).unwrap();
        assert!(
            plan_fail(&r, "x", DEMO_NOW, &mut ids(&r)).is_err(),
            "{} {}",
            row.status,
            row.submission_id
        );
        assert!(plan_repair(&r, DEMO_NOW, &mut ids(&r)).is_err());
        assert!(plan_requeue(&r, DEMO_NOW, &mut ids(&r)).is_err());
    }
}

#[test]
fn requeue_and_fail_write_the_runtime_rows() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        let id = demo_id_in(db.open().reader(), "guild-42");
        let r = report_on(&db, &id, DEMO_NOW);
        apply_on(
            &db,
            &plan_requeue(&r, DEMO_NOW, &mut ids(&r)).unwrap(),
            DEMO_NOW,
        )
        .unwrap();
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status, SubmissionStatus::Queued);
        assert_eq!(
            (
                after.row().attempt_id.clone(),
                after.row().owner_id.clone(),
                after.row().started_at,
                after.row().lease_expires_at
            ),
            (None, None, None, 0)
        );
        assert_eq!(
            after.plan.disposition.label(),
            "pending",
            "the row is well-formed for the runtime's parser"
        );

        let id = demo_id_in(db.open().reader(), "travel-desk");
        let r = report_on(&db, &id, DEMO_NOW);
        let plan = plan_fail(&r, "customer cancelled", DEMO_NOW, &mut ids(&r)).unwrap();
        let advisory = &inserted(&plan)[0];
        assert_eq!(advisory["message"]["type"], "submission_interrupted");
        assert_eq!(
            advisory["submissionTerminal"]["reason"],
            "interrupted_after_input_application"
        );
        assert!(advisory["message"]["content"]
            .as_str()
            .unwrap()
            .contains("Interrupted tool call(s):\n  - search_flights ("));
        apply_on(&db, &plan, DEMO_NOW).unwrap();
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status, SubmissionStatus::Settled);
        assert!(after.row().error.as_deref().unwrap().starts_with("Submission was interrupted with pending tool call(s): search_flights, search_hotels, check_visa."));
        // Failing again is refused (settled), and the advisory is never doubled.
        assert!(plan_fail(&after, "again", DEMO_NOW, &mut ids(&after)).is_err());

        // Direct: the runtime's whole settlement, its terminal event appended to the stream.
        let id = demo_id_in(db.open().reader(), "dana-phone");
        let r = report_on(&db, &id, DEMO_NOW);
        apply_on(
            &db,
            &plan_fail(&r, "stuck", DEMO_NOW, &mut ids(&r)).unwrap(),
            DEMO_NOW,
        )
        .unwrap();
        let after = report_on(&db, &id, DEMO_NOW);
        crate::fidelity::assert_published(&after, &db);
        assert_eq!(after.row().status, SubmissionStatus::Settled);
        assert_eq!(
            after.row().terminal_key.as_deref(),
            Some(format!("direct-submission:{id}:settled").as_str())
        );
        let event: Value =
            serde_json::from_str(after.row().terminal_event.as_deref().unwrap()).unwrap();
        assert_eq!(
            (
                event["type"].as_str(),
                event["outcome"].as_str(),
                event["v"].as_i64()
            ),
            (Some("submission_settled"), Some("failed"), Some(3))
        );
        assert_eq!(after.row().error, None, "direct failures keep error NULL");

        // The audit trail has all three, newest first.
        let trail = db.open().audit_records().unwrap();
        assert_eq!(
            trail.iter().map(|a| a.action.as_str()).collect::<Vec<_>>(),
            ["fail", "fail", "requeue"]
        );
        assert_eq!(trail[0].operator, "tester@host");
    }
}

#[test]
fn fencing_refuses_when_anything_changed_since_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    // Written in SQL both backends accept: the same change, made by "someone else".
    let changes: [(&str, &str); 5] = [
        ("row", "UPDATE flue_agent_submissions SET attempt_id = 'other' WHERE sequence = 2"),
        ("lease", "UPDATE flue_agent_submissions SET lease_expires_at = 9999999999999 WHERE sequence = 2"),
        ("journal", "UPDATE flue_agent_turn_journals SET revision = revision + 1 WHERE phase = 'tool_request_recorded'"),
        ("session", "UPDATE flue_sessions SET data = replace(data, '\"leafId\":\"', '\"leafId\":\"dc5ea03d')"),
        ("entries", "INSERT INTO flue_session_entries VALUES ('agent-session:[\"s1\",\"default\",\"default\"]', 'zzzz0000', 99, '{}')"),
    ];
    for kind in kinds() {
        for (what, sql) in changes {
            let src = unpack_fixture(dir.path(), "tool-batch-mid");
            let db = TestDb::from_sqlite(kind, &src);
            let r = report_on(&db, "74384fb4", FIXTURE_NOW);
            let plan = plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap();
            assert!(db.exec(sql) >= 1, "{kind:?} {what}");
            let count = || db.int("SELECT COUNT(*) FROM flue_session_entries");
            let before = count();
            match apply_on(&db, &plan, FIXTURE_NOW) {
                Err(ApplyError::Fenced(diffs)) => assert!(!diffs.is_empty(), "{kind:?} {what}"),
                other => panic!("{kind:?} {what}: expected a fenced refusal, got {other:?}"),
            }
            assert_eq!(count(), before, "{kind:?} {what}: nothing written");
            assert_eq!(
                audit_rows(&db),
                0,
                "{kind:?} {what}: no audit row, nothing committed"
            );
        }
    }
}

#[test]
fn a_result_that_arrives_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let r = report(&db, "74384fb4", FIXTURE_NOW);
    let plan = plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap();
    // Another writer records a real result for tc_crash_0_0 before our commit (a session save:
    // the entry under the leaf 8dd456d7, the leaf moved to it).
    let conn = Connection::open(&db).unwrap();
    let mut s =
        SessionBuilder::continuing(&conn, r#"agent-session:["s1","default","default"]"#).unwrap();
    assert_eq!(s.leaf(), Some("8dd456d7"));
    s.at(1_796_014_376_000).message(
        "feed0001",
        turnscope_demo::shapes::tool_result(
            "tc_crash_0_0",
            "fetch_record",
            "real",
            Some(serde_json::json!({})),
            false,
            1_796_014_376_000,
        ),
    );
    JournalBuilder::new().session(s).append_to(&db).unwrap();
    assert!(matches!(
        apply(&db, &plan, FIXTURE_NOW),
        Err(ApplyError::Fenced(_))
    ));
    // Re-plan: the real result is kept (copied), only the others are synthetic.
    let r = report(&db, "74384fb4", FIXTURE_NOW);
    let plan = plan_repair(&r, FIXTURE_NOW, &mut ids(&r)).unwrap();
    let new = inserted(&plan);
    assert_eq!(new[0]["message"]["content"][0]["text"], "real");
    assert_eq!(new[1]["message"]["isError"], true);
    apply(&db, &plan, FIXTURE_NOW).unwrap();
    let after = report(&db, "74384fb4", FIXTURE_NOW);
    let mut seen = std::collections::HashMap::new();
    for e in after.following().unwrap() {
        if let Some(m) = e.message_with_role(&Role::ToolResult) {
            *seen
                .entry(turnscope_core::journal::entry::js_key_text(
                    &m.tool_call_id(),
                ))
                .or_insert(0) += 1;
        }
    }
    assert_eq!(seen.len(), 3);
    assert!(
        seen.values().all(|n| *n == 1),
        "no call has two results on the active path: {seen:?}"
    );
}

/// The CLI on `db` with the real clock: the fixture's leases expired long ago.
fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "cli@test")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_is_read_only_by_default_and_previews_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    // Writes plan at the real clock: a deadline an hour from now keeps the runtime's answer rule 5.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET timeout_at = ?1",
            [turnscope_store::clock::now_ms() + 3_600_000],
        )
        .unwrap();
    let bytes = std::fs::read(&db).unwrap();
    let o = turnscope(&db, &["repair", "74384fb4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("hint: add --write to apply it, or --dry-run")
    );
    let dry = turnscope(&db, &["repair", "74384fb4", "--dry-run"]);
    assert!(dry.status.success());
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        text.contains("insert entry")
            && text.contains("phase: 'tool_request_recorded' → 'before_provider'")
            && text.ends_with("dry run: nothing written.\n"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "dry run and refusal wrote nothing"
    );

    let o = turnscope(
        &db,
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "74384fb4",
            "--json",
            "-y",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "turnscope.action/1");
    assert_eq!(v["after"]["verdict"], "resume/tool_results");
    assert_eq!(v["after"]["rule"], 5);
    assert!(v["applied"]["lockHeldMs"].as_f64().unwrap() > 0.0);

    // Refusals exit 3 with the action that fits instead.
    let o = turnscope(&db, &["--write", "requeue", "74384fb4"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: refused: the input was already applied"),
        "{err}"
    );
    let o = turnscope(&db, &["--write", "fail", "74384fb4"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "fail without a reason is a usage error"
    );

    let audit = turnscope(&db, &["audit", "--json"]);
    let v: Value = serde_json::from_slice(&audit.stdout).unwrap();
    assert_eq!(v["records"][0]["action"], "repair");
    assert_eq!(v["records"][0]["operator"], "cli@test");
}

fn step_on(
    db: &TestDb,
    id: &str,
    now: i64,
) -> Result<ActionPlan, turnscope_engine::actions::Refusal> {
    let r = report_on(db, id, now);
    let plan = turnscope_engine::actions::plan_step(&r, now, &mut ids(&r))?;
    apply_on(db, &plan, now).unwrap();
    Ok(plan)
}

#[allow(dead_code)]
fn step(db: &Path, id: &str, now: i64) -> Result<ActionPlan, turnscope_engine::actions::Refusal> {
    let r = report(db, id, now);
    let plan = turnscope_engine::actions::plan_step(&r, now, &mut ids(&r))?;
    apply(db, &plan, now).unwrap();
    Ok(plan)
}

#[test]
fn step_applies_the_runtime_writes_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));

        // Rule 9: the advisory, then the settlement; then nothing is left.
        let id = demo_id_in(db.open().reader(), "translator-eu");
        let first = step_on(&db, &id, DEMO_NOW).unwrap();
        assert!(
            first.summary.contains("submission_interrupted advisory"),
            "{}",
            first.summary
        );
        assert_eq!(
            report_on(&db, &id, DEMO_NOW).row().status,
            SubmissionStatus::Running,
            "one write at a time"
        );
        step_on(&db, &id, DEMO_NOW).unwrap();
        let after = report_on(&db, &id, DEMO_NOW);
        assert_eq!(after.row().status, SubmissionStatus::Settled);
        assert_eq!(
            after.row().error.as_deref(),
            Some(turnscope_core::recovery::reconciler::messages::AFTER_INPUT_APPLICATION)
        );
        assert!(after.inspection.advisory_present);
        assert!(
            step_on(&db, &id, DEMO_NOW).is_err(),
            "settled: nothing left to step"
        );

        // Rule 4: the stream signals, then consumed + chunk cleanup; the replacement is left to the runtime.
        let id = demo_id_in(db.open().reader(), "podcast-notes");
        let first = step_on(&db, &id, DEMO_NOW).unwrap();
        // Every step counts what is left of the plan it reads, in the same words.
        assert!(
            first.summary.starts_with(
                "rule 4, the next write of 4 left in the runtime's plan: append stream_interrupted"
            ),
            "{}",
            first.summary
        );
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(
            r.classification().state.label(),
            "resume/stream_continuation"
        );
        assert_eq!(
            r.plan.rule,
            Some(4),
            "still rule 4: the chunks are there and not yet consumed"
        );
        let second = step_on(&db, &id, DEMO_NOW).unwrap();
        assert!(
            second
                .summary
                .starts_with("rule 4, the next 2 writes of 3 left in the runtime's plan: mark the stream consumed"),
            "{}",
            second.summary
        );
        assert!(second
            .changes
            .iter()
            .any(|c| matches!(c, RowChange::DeleteStreamChunks { .. })));
        let r = report_on(&db, &id, DEMO_NOW);
        assert!(r.bundle.stream_chunks.is_empty());
        assert!(r
            .bundle
            .journal
            .as_ref()
            .unwrap()
            .stream_consumed_at
            .is_some());
        assert_eq!(r.plan.rule, Some(5));
        // Rule 5: the attempt replacement is the runtime's: nothing to write, as reconcile says,
        // not a refusal.
        let step = turnscope_engine::actions::plan_step(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let reconcile =
            turnscope_engine::actions::plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert!(step.is_noop() && reconcile.is_noop());
        assert_eq!(step.summary, reconcile.summary);
        assert!(
            step.summary.contains(
                "nothing for turnscope to write; left to the runtime: replace the attempt"
            ),
            "{}",
            step.summary
        );

        // Rule 7: the requeue.
        let id = demo_id_in(db.open().reader(), "guild-42");
        step_on(&db, &id, DEMO_NOW).unwrap();
        assert_eq!(
            report_on(&db, &id, DEMO_NOW).row().status,
            SubmissionStatus::Queued
        );

        let trail = db.open().audit_records().unwrap();
        assert_eq!(trail.len(), 5);
        assert!(trail.iter().all(|a| a.action == "step"));
    }
}

#[test]
fn step_recovers_a_stream_with_its_partial() {
    // The runtime's own crash fixture: provider started, chunks stored, nothing in history yet.
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "mid-stream");
    let id = SqliteStore::open(&db)
        .unwrap()
        .list_submissions(RowFilter::All, 0)
        .unwrap()[0]
        .submission_id
        .clone();
    // Just after this fixture's lease expired (its manifest's maxLeaseExpiresAt + 1).
    let now = 1_796_014_408_531;
    let r = report(&db, &id, now);
    assert_eq!(r.plan.rule, Some(4), "{}", r.plan.reason);
    let plan = step(&db, &id, now).unwrap();
    let rows = inserted(&plan);
    assert_eq!(
        rows.len(),
        3,
        "partial, stream_interrupted, stream_continued"
    );
    assert_eq!(rows[0]["message"]["stopReason"], "aborted");
    assert_eq!(
        rows[0]["message"]["errorMessage"],
        "Stream interrupted before completion."
    );
    assert_eq!(rows[2]["message"]["type"], "stream_continued");
    let key = r
        .bundle
        .journal
        .as_ref()
        .unwrap()
        .stream_key
        .clone()
        .unwrap();
    assert_eq!(rows[2]["message"]["attributes"]["streamKey"], key.as_str());
    let after = report(&db, &id, now);
    assert_eq!(
        after.classification().state.label(),
        "resume/stream_continuation"
    );
}

/// Every entry a repair writes, on every repairable demo and fixture submission, has the runtime's
/// exact form: a verbatim copy of the first recorded result, or the synthetic `interrupted` result
/// with the runtime's key order and text; compact JSON; parents chained from the assistant.
#[test]
fn every_repair_on_demo_and_fixtures_has_the_runtime_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(PathBuf, String, i64)> = Vec::new();
    let db = demo(dir.path());
    for instance in ["billing-bot", "etl-nightly", "travel-desk", "crm-sync"] {
        cases.push((db.clone(), demo_id(&db, instance), DEMO_NOW));
    }
    let m = crate::support::manifest();
    for fixture in m["fixtures"].as_array().unwrap() {
        let name = match fixture["db"].as_str().unwrap() {
            "large.db" => "large-tail".to_string(),
            other => other.trim_end_matches(".db").to_string(),
        };
        let path = unpack_fixture(dir.path(), &name);
        let now = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
        for s in fixture["submissions"].as_array().unwrap() {
            if s["status"] == "running" && !s["trailingPartialToolBatch"].is_null() {
                cases.push((
                    path.clone(),
                    s["submissionId"].as_str().unwrap().to_string(),
                    now,
                ));
            }
        }
    }
    assert!(cases.len() >= 10, "{} cases", cases.len());
    for (db, id, now) in cases {
        let r = report(&db, &id, now);
        let plan =
            plan_repair(&r, now, &mut ids(&r)).unwrap_or_else(|e| panic!("{id}: {}", e.reason));
        let session = r.bundle.session.as_ref().unwrap();
        let mut parent = None::<String>;
        for change in &plan.changes {
            let RowChange::InsertEntry { data, entry_id, .. } = change else {
                continue;
            };
            let v: Value = serde_json::from_str(data).unwrap();
            assert_eq!(
                &v.to_string(),
                data,
                "{id}: compact JSON with the runtime's key order"
            );
            let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                ["type", "id", "parentId", "timestamp", "message"],
                "{id}"
            );
            assert_eq!(v["id"], entry_id.as_str());
            if let Some(p) = &parent {
                assert_eq!(v["parentId"], p.as_str(), "{id}: chained");
            }
            parent = Some(entry_id.clone());
            let msg = &v["message"];
            if msg["isError"] == true
                && msg["content"][0]["text"] == turnscope_engine::actions::INTERRUPTED_TEXT
            {
                let expected = turnscope_engine::actions::synthetic_result(
                    msg["toolCallId"].as_str().unwrap(),
                    msg["toolName"].as_str().unwrap(),
                    now,
                );
                assert_eq!(msg.to_string(), expected, "{id}: synthetic result");
            } else {
                // A copy: byte-identical to the first recorded result for that call.
                let original = session
                    .entries
                    .iter()
                    .find(|e| {
                        e.message()
                            .is_some_and(|m| m.tool_call_id() == Some(msg["toolCallId"].clone()))
                    })
                    .unwrap();
                let raw_message = &original.raw
                    [original.raw.find("\"message\":").unwrap() + 10..original.raw.len() - 1];
                assert!(
                    data.ends_with(&format!("\"message\":{raw_message}}}")),
                    "{id}: verbatim copy\n{data}\n{raw_message}"
                );
            }
        }
    }
}

/// A malformed row (spec fact 8): `step` and `reconcile` write what the runtime's parser writes
/// when the reconciler lists it (`failSubmissionSequence`), on every backend (for a payload that
/// is not JSON, V8's `JSON.parse` message; for a direct prompt, V8's `TypeError` or the image
/// checks' error where they throw first).
#[test]
fn step_and_reconcile_settle_a_malformed_row_as_the_runtime_s_parser_does() {
    use turnscope_core::recovery::reconciler::messages::{MALFORMED_PAYLOAD, MALFORMED_ROW};
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        let cases: [(&str, &str, &str); 6] = [
            ("translator-eu", "started_at = NULL", MALFORMED_ROW),
            // No attempt to fence on: the update matches `attempt_id IS NULL`.
            ("billing-bot", "attempt_id = NULL", MALFORMED_ROW),
            (
                "travel-desk",
                "payload = replace(payload, '\"acceptedAt\":\"', '\"acceptedAt\":\"1')",
                MALFORMED_PAYLOAD,
            ),
            // Not JSON: V8's own JSON.parse message, as the runtime's parser stores it.
            (
                "crm-sync",
                "payload = '{\"kind\": '",
                "Unexpected end of JSON input",
            ),
            // A direct prompt without its inner payload: the image hydration throws V8's
            // TypeError first.
            (
                "docs-bot",
                "payload = replace(payload, '\"payload\":{', '\"payloadX\":{')",
                "Cannot read properties of undefined (reading 'images')",
            ),
            // Images (none, no chunk rows) hydrate, then the payload check finds no message.
            (
                "support-7",
                "payload = replace(payload, '\"payload\":{\"message\":', '\"payload\":{\"images\":[],\"text\":')",
                MALFORMED_PAYLOAD,
            ),
        ];
        for (n, (instance, damage, error)) in cases.into_iter().enumerate() {
            let id = demo_id_in(db.open().reader(), instance);
            db.exec(&format!(
                "UPDATE flue_agent_submissions SET {damage} WHERE submission_id = '{id}'"
            ));
            let r = report_on(&db, &id, DEMO_NOW);
            assert!(
                matches!(
                    r.plan.disposition,
                    turnscope_core::recovery::reconciler::Disposition::Malformed { .. }
                ),
                "{instance}: {:?}",
                r.plan.disposition
            );
            let audits = audit_rows(&db);
            let planned = if n % 2 == 0 {
                turnscope_engine::actions::plan_step(&r, DEMO_NOW, &mut ids(&r))
            } else {
                turnscope_engine::actions::plan_reconcile(&r, DEMO_NOW, &mut ids(&r))
            };
            let plan = planned.unwrap_or_else(|e| panic!("{kind:?} {instance}: {e:?}"));
            assert!(
                matches!(
                    plan.changes.as_slice(),
                    [RowChange::AutoFailSubmission { .. }]
                ),
                "only the submission row: {:?}",
                plan.changes
            );
            assert_eq!(
                plan.prediction.outcome,
                NextOutcome::Result(RuleResult::Failed),
                "{:?}",
                plan.prediction
            );
            apply_on(&db, &plan, DEMO_NOW).unwrap_or_else(|e| panic!("{kind:?} {instance}: {e}"));
            let after = report_on(&db, &id, DEMO_NOW);
            assert_eq!(
                after.row().status,
                SubmissionStatus::Settled,
                "{kind:?} {instance}"
            );
            assert_eq!(
                after.row().error.as_deref(),
                Some(error),
                "{kind:?} {instance}"
            );
            assert_eq!(after.row().settled_at, Some(DEMO_NOW));
            assert_eq!(
                audit_rows(&db),
                audits + 1,
                "audited in the same transaction"
            );
            assert!(
                turnscope_engine::actions::plan_step(&after, DEMO_NOW, &mut ids(&after)).is_err()
            );
        }
    }
}

/// `repair`'s summary names the new leaf; the rows below must name the same one: the last
/// inserted entry, the session data's `leafId` and the journal's checkpoint. Over every stuck
/// submission of the demo and of the runtime's crash fixtures, with the random ids the CLI uses.
#[test]
fn repair_summary_and_rows_name_the_same_new_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let mut dbs = vec![(demo(dir.path()), DEMO_NOW)];
    for name in [
        "tool-batch-mid",
        "tool-results-partial",
        "large-tail",
        "timeout-exceeded",
    ] {
        let sub = dir.path().join(name);
        std::fs::create_dir(&sub).unwrap();
        dbs.push((unpack_fixture(&sub, name), i64::MAX / 2));
    }
    let mut checked = 0;
    for (db, now) in dbs {
        let store = SqliteStore::open(&db).unwrap();
        for row in store.list_submissions(RowFilter::Expired, now).unwrap() {
            let prepared = turnscope_engine::actions::run::prepare(
                &store,
                turnscope_engine::actions::ActionKind::Repair,
                &row.submission_id,
                None,
                None,
                Some(200_000),
                now,
                turnscope_engine::actions::IdSource::Random,
            )
            .unwrap();
            let Ok(plan) = prepared.plan else { continue };
            if plan.is_noop() {
                continue;
            }
            let named = plan
                .summary
                .rsplit("leaf → ")
                .next()
                .unwrap_or_else(|| panic!("{}", plan.summary))
                .to_string();
            let last = inserted(&plan).last().unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string();
            let data_leaf = plan.changes.iter().find_map(|c| match c {
                RowChange::UpdateSessionData { new, .. } => {
                    let v: Value = serde_json::from_str(new).unwrap();
                    v["leafId"].as_str().map(str::to_string)
                }
                _ => None,
            });
            let checkpoint = plan.changes.iter().find_map(|c| match c {
                RowChange::UpdateJournal { set, .. } => set
                    .iter()
                    .find(|s| s.column == "checkpoint_leaf_id")
                    .map(|s| format!("{:?}", s.new)),
                _ => None,
            });
            assert_eq!(named, last, "{}", plan.summary);
            assert_eq!(
                data_leaf.as_deref(),
                Some(named.as_str()),
                "{}",
                plan.summary
            );
            if let Some(c) = checkpoint {
                assert!(c.contains(&named), "{c} vs {}", plan.summary);
            }
            checked += 1;
        }
    }
    assert!(checked >= 6, "{checked} repairs checked");
}
