//! The side-effect ledger: a write that answers tool calls with the runtime's synthetic
//! `interrupted` result lists each call (tool, arguments, attempt, worker, trace), is refused
//! until the operator acknowledges it, and records the acknowledgment in its audit row.

use std::path::Path;

use serde_json::Value;
use turnscope_engine::actions::{run, ActionKind, IdSource, INTERRUPTED_TEXT};
use turnscope_store::ApplyError;

use crate::backends::{kinds, TestDb};
use crate::support::unpack_fixture;

/// The CLI on `db` at the real clock, as an operator.
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

/// The killed runtime's `tool-batch-mid` journal, its deadline an hour ahead so the repair is
/// planned at the real clock.
fn tool_batch_mid(dir: &Path) -> std::path::PathBuf {
    let db = unpack_fixture(dir, "tool-batch-mid");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET timeout_at = ?1",
            [turnscope_store::clock::now_ms() + 3_600_000],
        )
        .unwrap();
    db
}

/// `(toolCallId, toolName)` of every synthetic `interrupted` result a plan's JSON inserts.
fn synthetic_results(action: &Value) -> Vec<(String, String)> {
    action["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            if c["change"] != "insert_entry" {
                return None;
            }
            let data: Value = serde_json::from_str(c["data"].as_str()?).ok()?;
            let m = &data["message"];
            (m["role"] == "toolResult"
                && m["isError"] == true
                && m["content"][0]["text"] == INTERRUPTED_TEXT)
                .then(|| {
                    (
                        m["toolCallId"].as_str().unwrap().to_string(),
                        m["toolName"].as_str().unwrap().to_string(),
                    )
                })
        })
        .collect()
}

/// The `arguments` of call `id` in the stored assistant entry `entry`, read straight from SQLite.
fn stored_arguments(db: &Path, entry: &str, id: &str) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    let data: String = c
        .query_row(
            "SELECT data FROM flue_session_entries WHERE entry_id = ?1",
            [entry],
            |r| r.get(0),
        )
        .unwrap();
    let v: Value = serde_json::from_str(&data).unwrap();
    let call = v["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "toolCall" && b["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not a call of {entry}"));
    call["arguments"].to_string()
}

#[test]
fn a_repair_lists_the_calls_it_answers_interrupted_and_needs_them_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let db = tool_batch_mid(dir.path());
    let dry = turnscope(&db, &["repair", "74384fb4", "--dry-run", "--json"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let plan: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let synthetic = synthetic_results(&plan);
    assert!(
        !synthetic.is_empty(),
        "the fixture's repair answers calls `interrupted`"
    );
    let ledger = plan["sideEffects"].as_array().unwrap();
    // One entry per synthetic result, the same call and tool, in the order written.
    let listed: Vec<(String, String)> = ledger
        .iter()
        .map(|c| {
            (
                c["call_id"].as_str().unwrap().to_string(),
                c["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(listed, synthetic);
    let journal_attempt: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT attempt_id FROM flue_agent_turn_journals WHERE submission_id LIKE '74384fb4%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    for c in ledger {
        let entry = c["requested_by"]
            .as_str()
            .expect("the requesting assistant is found");
        assert_eq!(
            c["arguments"].as_str().unwrap(),
            stored_arguments(&db, entry, c["call_id"].as_str().unwrap()),
            "the arguments are the stored call's"
        );
        // The journal recorded this batch's request: the attempt is the journal's.
        assert_eq!(c["attempt_id"], journal_attempt.as_str());
        assert_eq!(c["attempt_source"], "turn journal");
        assert!(
            c["trace"]
                .as_str()
                .unwrap()
                .contains("tool_request_recorded"),
            "{c}"
        );
    }
    let text = turnscope(&db, &["repair", "74384fb4", "--dry-run"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("side effects: "), "{text}");
    for (id, tool) in &synthetic {
        assert!(
            text.contains(&format!("  {id} {tool} ")),
            "{id} {tool}: {text}"
        );
    }

    // Without the acknowledgment: refused, nothing written, even with -y.
    let bytes = std::fs::read(&db).unwrap();
    let o = turnscope(&db, &["--write", "repair", "74384fb4", "-y"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("may already have run") && err.contains("--ack-side-effects"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "nothing written");

    let o = turnscope(
        &db,
        &[
            "--write",
            "repair",
            "74384fb4",
            "-y",
            "--ack-side-effects",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let applied: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(applied["sideEffectsAcknowledged"], true);
    let audit = turnscope(&db, &["audit", "--json"]);
    let audit: Value = serde_json::from_slice(&audit.stdout).unwrap();
    let record = &audit["records"][0];
    assert_eq!(record["action"], "repair");
    let acked: Vec<&str> = record["side_effects"]
        .as_array()
        .unwrap_or_else(|| panic!("the audit row records the ledger: {record}"))
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = synthetic.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(acked, expected);
}

/// The engine refuses an unacknowledged plan on every backend, and the audit row of an
/// acknowledged one holds the ledger there too.
#[test]
fn every_backend_refuses_unacknowledged_side_effects_and_audits_acknowledged_ones() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        // A fresh copy each: the SQLite pass writes into its file.
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &tool_batch_mid(&sub));
        let store = db.open();
        let now = turnscope_store::clock::now_ms();
        let prepared = run::prepare(
            store.reader(),
            ActionKind::Repair,
            "74384fb4",
            None,
            None,
            None,
            now,
            IdSource::Seeded(7),
        )
        .unwrap();
        let mut plan = prepared.plan.unwrap();
        assert!(!plan.side_effects.is_empty(), "{kind:?}: {}", plan.summary);
        let mut writer = db.writer();
        match run::apply(&mut *writer, &plan, "tester@host", now) {
            Err(ApplyError::Refused(why)) => assert!(why.contains("--ack-side-effects"), "{why}"),
            other => panic!("{kind:?}: {other:?}"),
        }
        assert!(
            store.audit_records().unwrap().is_empty(),
            "{kind:?}: nothing audited"
        );
        plan.acknowledge_side_effects();
        run::apply(&mut *writer, &plan, "tester@host", now).unwrap();
        let records = db.open().audit_records().unwrap();
        let ledger = records[0]
            .side_effects
            .as_ref()
            .expect("the ledger is audited");
        assert_eq!(
            ledger.as_array().unwrap().len(),
            plan.side_effects.len(),
            "{kind:?}"
        );
        assert_eq!(ledger[0]["call_id"], plan.side_effects[0].call_id.as_str());
    }
}

/// A write that answers no call `interrupted` (a requeue, an extend) has no ledger and needs
/// no acknowledgment.
#[test]
fn writes_that_answer_no_call_have_no_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let db = tool_batch_mid(dir.path());
    let o = turnscope(
        &db,
        &[
            "extend",
            "74384fb4",
            "--attempts",
            "20",
            "--dry-run",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["sideEffects"], serde_json::json!([]));
    let o = turnscope(
        &db,
        &["--write", "extend", "74384fb4", "--attempts", "20", "-y"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
