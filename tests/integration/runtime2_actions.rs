//! The flue 2.x operator actions against the real 2.1.0 runtime: on every crash fixture, every
//! action turnscope accepts on its stuck submission (abort, extend, fail; requeue after an extend
//! where the deadline had passed) is applied to a copy through the binary, then the runtime's own
//! reconciliation pass runs on the copy at the real clock and works until idle
//! (`tests/runtime2/reconcile-once.mjs`). It must raise no error, make exactly the change the
//! action's `next` plan predicted (the decisive row write, status, attempt id, error text,
//! settlement outcome, the records appended in order), resume a requeued submission as its `then`
//! plan predicted, and run no tool call twice (the tools' side file). `undo` is then refused: the
//! runtime has acted.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::runtime2_reconcile::{predicted_records, predicted_resume_records};
use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, turnscope_command, unpack_db};

/// `turnscope ARGS` on `db` at the real clock, the harness model's context window.
fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "roundtrip")
        .arg("--db")
        .arg(db)
        .args(["--context-window", "200000"])
        .args(args)
        .output()
        .unwrap()
}

/// The running rows of `db`.
fn running(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' ORDER BY sequence")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Apply `args` (an action and its flags) to `id` with `--write -y --json`: `Some(doc)` when
/// accepted and written, `None` when refused (exit 3, nothing written).
fn apply(db: &Path, args: &[&str], id: &str) -> Option<Value> {
    let mut full = vec!["--write"];
    full.extend_from_slice(&args[..1]);
    full.push(id);
    full.extend_from_slice(&args[1..]);
    full.extend(["-y", "--json"]);
    let o = turnscope(db, &full);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{full:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(doc["format"], "flue-2.x");
    assert_eq!(doc["schema"], "turnscope.flue2.action/1");
    match o.status.code() {
        Some(0) => {
            assert!(doc["applied"]["auditId"].as_i64().is_some(), "{doc}");
            Some(doc)
        }
        Some(3) => {
            assert!(doc["refused"]["reason"].is_string() && doc["applied"].is_null());
            None
        }
        other => panic!(
            "{full:?}: exit {other:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
    }
}

/// The tool calls executed per call id, in the side file the tools write.
fn executions(side: &Path) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for line in std::fs::read_to_string(side).unwrap_or_default().lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["event"] == "tool_start" {
            *n.entry(e["toolCallId"].as_str().unwrap_or("?").to_string())
                .or_default() += 1;
        }
    }
    n
}

/// The tool call ids that already have an outcome in `db`'s streams (recorded or committed):
/// run before the crash, never to be run again.
fn calls_with_outcomes(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT data FROM flue_conversation_stream_batches")
        .unwrap();
    let mut ids = Vec::new();
    for data in s.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let Ok(Value::Array(records)) = serde_json::from_str(&data.unwrap()) else {
            continue;
        };
        for r in records {
            if r["type"] == "tool_outcome" {
                ids.push(r["toolCallId"].as_str().unwrap().to_string());
            }
        }
    }
    ids
}

/// The ids of the records of `db`'s streams owned by `submission`, in stream order.
fn records_of(db: &Path, submission: &str) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT data FROM flue_conversation_stream_batches ORDER BY path, seq")
        .unwrap();
    let mut ids = Vec::new();
    for data in s.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let Ok(Value::Array(records)) = serde_json::from_str(&data.unwrap()) else {
            continue;
        };
        ids.extend(
            records
                .iter()
                .filter(|r| r["submissionId"] == submission)
                .map(|r| r["id"].as_str().unwrap().to_string()),
        );
    }
    ids
}

/// The final row against how the predicted resume ends: a model turn (the scripted model answers,
/// settled completed), completed without a call, or failed with the predicted text.
fn compare_end(end: &Value, last: &Value, side: &str) -> Vec<String> {
    let mut miss = Vec::new();
    match end["end"].as_str().unwrap() {
        "model_turn" => {
            if !side.contains("\"model_call\"") {
                miss.push("a model turn was predicted and the side file saw no model call".into());
            }
        }
        "settle_completed" => {
            if last["status"] != "settled" || !last["error"].is_null() {
                miss.push(format!("predicted settled completed, the row is {last}"));
            }
        }
        _ => {
            if last["status"] != "settled" || last["error"] != end["error"] {
                miss.push(format!(
                    "predicted failed with {}, the row is {} with {}",
                    end["error"], last["status"], last["error"]
                ));
            }
        }
    }
    miss
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// What the runtime did differs from the action's `next` plan: each difference in words.
fn compare(next: &Value, state: &Value) -> Vec<String> {
    let mut miss = Vec::new();
    let after = &next["rowAfter"];
    let decisive = &state["decisive"];
    let method = decisive["method"].as_str();
    let expected_method = match next["step"].as_u64() {
        Some(6) => Some("replaceSubmissionAttempt"),
        Some(7) => Some("requeueSubmission"),
        _ if after.is_null() => None,
        _ => Some("finalizeSubmissionSettlement"),
    };
    if method != expected_method {
        return vec![format!(
            "the runtime's write is {method:?}, predicted {expected_method:?}"
        )];
    }
    if after.is_null() {
        return miss;
    }
    let row = &decisive["row"];
    for (got, want, what) in [
        (&row["status"], &after["status"], "status"),
        (&row["attempt_count"], &after["attemptCount"], "attempts"),
        (&row["error"], &after["error"], "error"),
    ] {
        if got != want {
            miss.push(format!("{what} {got}, predicted {want}"));
        }
    }
    let outcome = row["settlement_record"]
        .as_str()
        .and_then(|r| serde_json::from_str::<Value>(r).ok())
        .map_or(Value::Null, |r| r["outcome"].clone());
    if outcome != after["settlementOutcome"] {
        miss.push(format!(
            "settlement outcome {outcome}, predicted {}",
            after["settlementOutcome"]
        ));
    }
    let before = &state["before"]["attempt_id"];
    let attempt_ok = match after["attemptId"].as_str().unwrap() {
        "same" => row["attempt_id"] == *before,
        "new" => row["attempt_id"].is_string() && row["attempt_id"] != *before,
        _ => row["attempt_id"].is_null(),
    };
    if !attempt_ok {
        miss.push(format!(
            "attempt id {} (was {before}), predicted {}",
            row["attempt_id"], after["attemptId"]
        ));
    }
    let appended: Vec<String> = state["appended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let expected = predicted_records(next["writes"].as_array().unwrap());
    if appended != expected {
        miss.push(format!("appended {appended:?}, predicted {expected:?}"));
    }
    miss
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn every_accepted_action_is_resumed_by_the_real_runtime_as_turnscope_predicted() {
    let rt = runtime2("runtime2");
    let root = tempfile::tempdir().unwrap();
    // Each case: the actions applied in order, the last one the one checked.
    let cases: [(&str, &[&[&str]]); 5] = [
        ("abort", &[&["abort"]]),
        (
            "extend",
            &[&["extend", "--deadline", "1h", "--attempts", "3"]],
        ),
        ("fail", &[&["fail", "--reason", "round trip"]]),
        ("requeue", &[&["extend", "--deadline", "1h"], &["requeue"]]),
        ("undo", &[&["abort"]]),
    ];
    let mut accepted: BTreeMap<&str, usize> = BTreeMap::new();
    let mut steps: BTreeMap<String, usize> = BTreeMap::new();
    let mut differ = Vec::new();
    for name in db_fixture_names("flue-2.1.0") {
        for (label, actions) in cases {
            let dir = root.path().join(format!("{name}-{label}"));
            std::fs::create_dir_all(&dir).unwrap();
            let db = unpack_db("flue-2.1.0", &name, &dir);
            let Some(id) = running(&db).into_iter().next() else {
                continue;
            };
            let mut doc = None;
            for a in actions {
                doc = apply(&db, a, &id);
                if doc.is_none() {
                    break;
                }
            }
            let Some(doc) = doc else { continue };
            *accepted.entry(label).or_default() += 1;
            let mut miss = |what: String| differ.push(format!("{name} {label} {id}: {what}"));
            let next = &doc["next"];
            *steps
                .entry(next["column"].as_str().unwrap().to_string())
                .or_default() += 1;
            let before_outcomes = calls_with_outcomes(&db);
            let before_records = records_of(&db, &id);
            let timeout_before: i64 = rusqlite::Connection::open(&db)
                .unwrap()
                .query_row(
                    "SELECT timeout_at FROM flue_agent_submissions WHERE submission_id = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .unwrap();
            let side = dir.join("side.jsonl");
            let now = turnscope_store::clock::now_ms();
            let ran = rt.drive_with_env(
                "reconcile-once.mjs",
                &[
                    "--db".as_ref(),
                    db.as_os_str(),
                    "--now".as_ref(),
                    now.to_string().as_ref(),
                    "--until-idle".as_ref(),
                ],
                &[("HARNESS_SIDE_FILE", side.as_os_str())],
            );
            if ran["unattributed"] != Value::Array(Vec::new()) {
                miss(format!(
                    "records appended for no row: {}",
                    ran["unattributed"]
                ));
            }
            let state = ran["states"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["submissionId"] == id.as_str())
                .unwrap_or_else(|| panic!("{name}: the runtime has no row {id}"))
                .clone();
            for d in compare(next, &state) {
                miss(d);
            }
            // A requeued row is claimed again: its resume as `then` predicted it.
            if let Some(resume) = doc["then"]["resume"].as_object() {
                let resume = Value::Object(resume.clone());
                let sub = serde_json::json!({"kind": state["before"]["kind"], "id": id});
                // The reconciler makes no write for a queued row (the claim is not its), so the
                // records the resume appended are read from the stream.
                let recovery: Vec<String> = records_of(&db, &id)
                    .into_iter()
                    .filter(|r| !before_records.contains(r))
                    .filter(|r| {
                        r.starts_with("record_recovery_")
                            || r.starts_with("record_tool_repair_")
                            || r.starts_with("record_tool_truncated_")
                            || r.contains("_input_")
                    })
                    .collect();
                let expected = predicted_resume_records(&resume, &sub);
                if recovery != expected {
                    miss(format!("resumed {recovery:?}, predicted {expected:?}"));
                }
                for d in compare_end(&resume["end"], &state["final"], &read(&side)) {
                    miss(d);
                }
                // The deadline is recomputed (the preview's note): the input application after
                // the claim stamps a new one, later than the one the row had, and the budget.
                let last = &state["final"];
                if last["timeout_at"].as_i64().unwrap() <= timeout_before
                    || last["max_attempts"] != 10
                    || last["input_applied_at"].is_null()
                {
                    miss(format!(
                        "deadline {} (was {timeout_before}), budget {}, input applied {}: not recomputed",
                        last["timeout_at"], last["max_attempts"], last["input_applied_at"]
                    ));
                }
            }
            if let Some(resume) = next["resume"].as_object() {
                for d in compare_end(&resume["end"], &state["final"], &read(&side)) {
                    miss(d);
                }
            }
            // No tool call ran twice, and none that had an outcome before ran again.
            for (call, n) in executions(&side) {
                if n > 1 {
                    miss(format!("tool call {call} ran {n} times"));
                }
                if before_outcomes.contains(&call) {
                    miss(format!("tool call {call} had an outcome and ran again"));
                }
            }
            if label == "undo" {
                // The runtime has acted: the row no longer holds what turnscope wrote.
                let audit = doc["applied"]["auditId"].as_i64().unwrap().to_string();
                let o = turnscope(&db, &["--write", "undo", &audit, "-y"]);
                assert_eq!(
                    o.status.code(),
                    Some(3),
                    "{name}: undo after the runtime acted"
                );
                assert!(String::from_utf8_lossy(&o.stderr)
                    .contains("changed since turnscope wrote them"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} round trip(s) differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    for label in ["abort", "extend", "fail", "requeue", "undo"] {
        assert!(
            accepted.get(label).copied().unwrap_or(0) > 0,
            "no fixture accepted {label}: {accepted:?}"
        );
    }
    for step in ["3 abort", "6 replace", "- finalize", "- queued"] {
        assert!(
            steps.contains_key(step),
            "no round trip predicted {step}: {steps:?}"
        );
    }
    eprintln!("accepted: {accepted:?}; next steps: {steps:?}");
}
