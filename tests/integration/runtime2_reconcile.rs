//! turnscope's port of the flue 2.x reconciler against the real one: on every 2.1.0 crash
//! fixture, `list --json` at a pinned clock predicts for each submission the step the runtime's
//! reconciliation pass takes, the row it leaves and the records it appends; one pass of the real
//! 2.1.0 runtime at the same clock (`tests/runtime2/reconcile-once.mjs`, on a copy) must make
//! exactly that change. Then, run on until idle, the replaced and requeued attempts' resumes must
//! append the recovery records turnscope predicted (convergence, continuation signals, markers,
//! the commit, the input) and end as predicted (a model turn, or the failure with its text).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, unpack_db};

/// `list --json --status all` on `db` at `now` (the harness model's context window, as the
/// runtime's inspection asks with).
pub(crate) fn list(db: &Path, now: Option<i64>) -> Value {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_NOW_MS")
        .arg("--db")
        .arg(db)
        .args([
            "list",
            "--status",
            "all",
            "--json",
            "--context-window",
            "200000",
        ]);
    if let Some(now) = now {
        cmd.env("TURNSCOPE_NOW_MS", now.to_string());
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The record ids a plan's writes append, in order (those already in the stream left out).
pub(crate) fn predicted_records(writes: &[Value]) -> Vec<String> {
    let mut ids = Vec::new();
    for w in writes {
        let strings = |key: &str| -> Vec<String> {
            w[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        match w["op"].as_str().unwrap() {
            "converge_ghost" => ids.extend(strings("record_ids")),
            "marker_settle_batch" => {
                ids.extend(strings("marker_record_ids"));
                ids.push(w["commit_record_id"].as_str().unwrap().into());
            }
            "terminal_signal" | "append_settled" if w["already_present"] == false => {
                ids.push(w["record_id"].as_str().unwrap().into())
            }
            _ => {}
        }
    }
    ids
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn one_pass_of_the_runtimes_reconciler_makes_the_change_turnscope_predicted() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let names = db_fixture_names("flue-2.1.0");
    assert!(names.len() >= 15, "{names:?}");
    let mut steps_seen = BTreeSet::new();
    let mut differ = Vec::new();
    for name in &names {
        let db = unpack_db("flue-2.1.0", name, dir.path());
        // A second after the last lease of a running or terminalizing row ended: the pass acts
        // on every stuck row, before any 1 h default deadline.
        let rows = list(&db, None);
        let now = rows["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| matches!(s["status"].as_str(), Some("running" | "terminalizing")))
            .map(|s| s["leaseExpiresAt"].as_i64().unwrap())
            .max()
            .expect("every fixture has a stuck submission")
            + 1000;
        let predicted = list(&db, Some(now));
        let ran = rt.reconcile_at(&db, now, false);
        assert_eq!(
            ran["unattributed"],
            Value::Array(Vec::new()),
            "{name}: records the pass appended for no row"
        );
        let started = ran["now"].as_i64().unwrap();
        assert!(
            started >= now,
            "{name}: the runtime's clock starts at {started}, not {now}"
        );
        for sub in predicted["submissions"].as_array().unwrap() {
            let id = sub["id"].as_str().unwrap();
            let plan = &sub["plan"];
            let state = ran["states"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["submissionId"] == id)
                .unwrap_or_else(|| panic!("{name}: the runtime has no row {id}"));
            let mut miss =
                |what: String| differ.push(format!("{name} {id} ({}): {what}", plan["column"]));
            let decisive = &state["decisive"];
            let row = &decisive["row"];
            let appended: Vec<String> = state["appended"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_string())
                .collect();
            let Some(step) = plan["step"].as_u64() else {
                // No reconciler step: the pass writes nothing for it.
                if !state["calls"].as_array().unwrap().is_empty() || !appended.is_empty() {
                    miss(format!(
                        "the runtime wrote {} and appended {appended:?}",
                        state["calls"]
                    ));
                }
                continue;
            };
            steps_seen.insert(step);
            let after = &plan["rowAfter"];
            let method = decisive["method"].as_str();
            let expected_method = match step {
                6 => Some("replaceSubmissionAttempt"),
                7 => Some("requeueSubmission"),
                _ if after.is_null() => None,
                _ => Some("finalizeSubmissionSettlement"),
            };
            if method != expected_method {
                miss(format!(
                    "the runtime's write is {method:?}, predicted {expected_method:?}"
                ));
                continue;
            }
            if after.is_null() {
                continue;
            }
            if row["status"] != after["status"] || row["attempt_count"] != after["attemptCount"] {
                miss(format!(
                    "row after: status {} attempts {}, predicted {} {}",
                    row["status"], row["attempt_count"], after["status"], after["attemptCount"]
                ));
            }
            if row["error"] != after["error"] {
                miss(format!(
                    "error {}, predicted {}",
                    row["error"], after["error"]
                ));
            }
            let outcome = row["settlement_record"]
                .as_str()
                .and_then(|r| serde_json::from_str::<Value>(r).ok())
                .map_or(Value::Null, |r| r["outcome"].clone());
            if outcome != after["settlementOutcome"] {
                miss(format!(
                    "settlement outcome {outcome}, predicted {}",
                    after["settlementOutcome"]
                ));
            }
            let before_attempt = &state["before"]["attempt_id"];
            let attempt_ok = match after["attemptId"].as_str().unwrap() {
                "same" => row["attempt_id"] == *before_attempt,
                "new" => row["attempt_id"].is_string() && row["attempt_id"] != *before_attempt,
                _ => row["attempt_id"].is_null(),
            };
            if !attempt_ok {
                miss(format!(
                    "attempt id {} (was {before_attempt}), predicted {}",
                    row["attempt_id"], after["attemptId"]
                ));
            }
            if after["inputAppliedCleared"] == true && !row["input_applied_at"].is_null() {
                miss("input_applied_at not cleared".into());
            }
            if step == 6 {
                // The lease the pass gave: 30 s after the runtime's clock at the write.
                let lease = row["lease_expires_at"].as_i64().unwrap();
                let predicted_lease = plan["writes"][0]["lease_expires_at"].as_i64().unwrap();
                if !(predicted_lease..predicted_lease + 30_000).contains(&lease) {
                    miss(format!(
                        "lease until {lease}, predicted {predicted_lease} (+ the pass's time)"
                    ));
                }
            }
            let expected = predicted_records(plan["writes"].as_array().unwrap());
            if appended != expected {
                miss(format!("appended {appended:?}, predicted {expected:?}"));
            }
            // The terminal signal's text, with its interrupted tools.
            for w in plan["writes"].as_array().unwrap() {
                if w["op"] != "terminal_signal" || w["already_present"] == true {
                    continue;
                }
                let got = state["appended"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["id"] == w["record_id"]);
                if got.map(|r| (&r["signalType"], &r["content"]))
                    != Some((&w["signal_type"], &w["content"]))
                {
                    miss(format!(
                        "signal {got:?}, predicted {} {}",
                        w["signal_type"], w["content"]
                    ));
                }
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} prediction(s) missed:\n{}",
        differ.len(),
        differ.join("\n")
    );
    // The fixtures reach every step that writes: completed, abort, budget, timeout, replace, requeue.
    for step in [2, 3, 4, 5, 6, 7] {
        assert!(
            steps_seen.contains(&step),
            "no fixture reached step {step}: {steps_seen:?}"
        );
    }
}

/// The recovery record ids a predicted resume appends, in order: converged ghosts, a batch
/// settled before a missing input, the input, continuation signals, the repaired batch.
pub(crate) fn predicted_resume_records(resume: &Value, row: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for a in resume["actions"].as_array().unwrap() {
        match a["op"].as_str().unwrap() {
            "converge" | "settle_batch_before_input" => {
                ids.extend(predicted_records(std::slice::from_ref(&a["write"])))
            }
            "append_input" => ids.push(format!(
                "record_{}_input_{}",
                row["kind"].as_str().unwrap(),
                row["id"].as_str().unwrap()
            )),
            "upgrade_to_continuation" => {
                let partial = a["partial_entry_id"].as_str().unwrap();
                for signal in ["stream_interrupted", "stream_continued"] {
                    ids.push(format!("record_recovery_{partial}_{signal}"));
                }
            }
            "repair_batch" => {
                ids.extend(
                    a["marker_record_ids"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string()),
                );
                ids.push(a["commit_record_id"].as_str().unwrap().into());
            }
            _ => {}
        }
    }
    ids
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_runtimes_resume_of_a_replaced_or_requeued_attempt_does_what_turnscope_predicted() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let mut ends = BTreeSet::new();
    let mut differ = Vec::new();
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let rows = list(&db, None);
        let now = rows["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| matches!(s["status"].as_str(), Some("running" | "terminalizing")))
            .map(|s| s["leaseExpiresAt"].as_i64().unwrap())
            .max()
            .unwrap()
            + 1000;
        let predicted = list(&db, Some(now));
        let ran = rt.reconcile_at(&db, now, true);
        for sub in predicted["submissions"].as_array().unwrap() {
            let resume = &sub["plan"]["resume"];
            if resume.is_null() {
                continue;
            }
            let id = sub["id"].as_str().unwrap();
            let state = ran["states"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["submissionId"] == id)
                .unwrap();
            let mut miss = |what: String| {
                differ.push(format!(
                    "{name} {id} ({}): {what}",
                    resume["classification"]
                ))
            };
            let recovery: Vec<String> = state["resumed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_string())
                .filter(|r| {
                    r.starts_with("record_recovery_")
                        || r.starts_with("record_tool_repair_")
                        || r.starts_with("record_tool_truncated_")
                        || r.starts_with(&format!(
                            "record_{}_input_",
                            sub["kind"].as_str().unwrap()
                        ))
                })
                .collect();
            let expected = predicted_resume_records(resume, sub);
            if recovery != expected {
                miss(format!(
                    "the resume appended {recovery:?}, predicted {expected:?}"
                ));
            }
            let model_turn = state["resumed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["type"] == "assistant_message_started");
            let end = &resume["end"];
            ends.insert(end["end"].as_str().unwrap().to_string());
            let last = &state["final"];
            match end["end"].as_str().unwrap() {
                "fails" => {
                    // The resume throws before any model call.
                    if last["status"] != "settled" || last["error"] != end["error"] || model_turn {
                        miss(format!(
                            "ended {} {}, predicted the failure {}",
                            last["status"], last["error"], end["error"]
                        ));
                    }
                }
                what => {
                    // The scripted model answers every script to its end: the turn completes.
                    if last["status"] != "settled" || !last["error"].is_null() {
                        miss(format!("ended {} {}", last["status"], last["error"]));
                    }
                    if model_turn != (what == "model_turn") {
                        miss(format!("a model call: {model_turn}, predicted {what}"));
                    }
                }
            }
            let sets_deadline = resume["actions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["op"] == "mark_input_applied" && a["sets_deadline"] == true);
            if (last["timeout_at"] != state["before"]["timeout_at"]) != sets_deadline {
                miss(format!(
                    "timeout_at {} → {}, predicted a new deadline: {sets_deadline}",
                    state["before"]["timeout_at"], last["timeout_at"]
                ));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} prediction(s) missed:\n{}",
        differ.len(),
        differ.join("\n")
    );
    for end in ["model_turn", "fails"] {
        assert!(
            ends.contains(end),
            "no fixture's resume ends {end}: {ends:?}"
        );
    }
}
