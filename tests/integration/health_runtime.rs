//! `turnscope health` against the real runtime's next turn, on the batch a deadline failure
//! leaves behind (issue 32: rules 2 and 3 fail the submission and leave its unresolved calls in
//! the history without results).
//!
//! The crash fixture `tool-results-partial` (a 3-call batch with one recorded result), "aged" as
//! the file is (every deadline passed), is handed to the runtime's startup recovery
//! (`tests/runtime/resume.mjs`): its reconciler's rule 3 fails the submission. It also appends
//! its own `submission_interrupted` signal after the batch (`recordSubmissionTerminal`), so the
//! batch does not end the active path: no crash fixture's rule 2 or 3 failure leaves it at the
//! leaf. `health` must then report the batch behind the failed submission with that later
//! entry, say it cannot be repaired in place, and `repair` must refuse it. Then the runtime
//! takes a new turn in that session (`tests/runtime/prompt.mjs`, the runtime's `dispatch()`),
//! its fake model recording the context (`TURNSCOPE_RECORD_CONTEXT`, after the model library's
//! `transformMessages`): as `health` says, the runtime's context builder leaves the batch out
//! (the assistant and its recorded result; the library synthesises no "No result provided"
//! either, as no call reaches it), while the rest of the history, the signal included, is sent.
//! No tool runs twice.

use std::path::Path;

use serde_json::Value;

use crate::runtime_kit::runtime;
use crate::support::{fixtures_dir, gunzip, turnscope_command};

const FIXTURE: &str = "tool-results-partial";

/// The library's text for a call without a result (`transformMessages`).
const NO_RESULT: &str = "No result provided";

fn turnscope(db: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .args(["--operator", "health-runtime"])
        .args(args)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        doc,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn texts(m: &Value) -> Vec<String> {
    match &m["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(b) => b
            .iter()
            .filter_map(|b| b["text"].as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every tool call id a recorded message carries: its calls' and its result's.
fn call_ids(m: &Value) -> Vec<String> {
    let mut ids: Vec<String> = m["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|b| b["type"] == "toolCall")
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    ids.extend(m["toolCallId"].as_str().map(str::to_string));
    ids
}

#[test]
#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
fn a_deadline_failures_batch_is_left_out_of_the_real_runtimes_next_turn_as_health_says() {
    let rt = runtime("health_runtime");
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures_dir().join("flue-beta7");
    let db = dir.path().join(format!("{FIXTURE}.db"));
    let side = dir.path().join(format!("{FIXTURE}.side.jsonl"));
    std::fs::write(&db, gunzip(&src.join(format!("{FIXTURE}.db.gz")))).unwrap();
    std::fs::write(&side, gunzip(&src.join(format!("{FIXTURE}.side.jsonl.gz")))).unwrap();

    // Before: the crash's batch behind a running submission, its recovery's to complete.
    let (code, before, err) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8), "{err}");
    assert_eq!(
        before["sessions"][0]["findings"][0]["submission"]["status"],
        "running"
    );

    // The runtime's startup recovery, deadlines as the file has them: rule 3 fails it.
    let report = rt.drive(
        "resume.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--side".as_ref(),
            side.as_os_str(),
        ],
    );
    let subs = report["submissions"].as_array().unwrap();
    assert_eq!(subs.len(), 1, "{report:#}");
    let failed = &subs[0];
    let sub = failed["submissionId"].as_str().unwrap().to_string();
    assert_eq!(failed["statusAfter"], "settled", "{report:#}");
    assert_eq!(failed["outcome"], "failed", "{report:#}");
    assert!(
        failed["error"].as_str().unwrap().contains("timeout"),
        "not rule 3: {report:#}"
    );
    assert_eq!(report["runtimeErrorsLogged"], Value::Array(vec![]));

    // health: the unresolved batch behind the failed submission, not at the leaf (the runtime's
    // signal follows it), not repairable in place; the next turn leaves it out.
    let (code, doc, err) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8), "{err}");
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{doc:#}");
    let session_key = sessions[0]["session"].as_str().unwrap().to_string();
    let findings = sessions[0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{doc:#}");
    let f = &findings[0];
    assert_eq!(f["kind"], "unresolved_calls", "{f:#}");
    assert_eq!(f["submission"]["id"], sub.as_str());
    assert_eq!(f["submission"]["status"], "failed");
    let calls: Vec<String> = f["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let missing = f["missing"].as_array().unwrap();
    assert!(!missing.is_empty() && missing.len() < calls.len(), "{f:#}");
    assert_eq!(f["recorded"], calls.len() - missing.len(), "{f:#}");
    assert_eq!(f["atLeaf"], false, "{f:#}");
    assert!(f["laterEntries"].as_u64().unwrap() >= 1, "{f:#}");
    assert_eq!(f["repair"]["inPlace"], false, "{f:#}");
    assert!(
        f["effect"]
            .as_str()
            .unwrap()
            .contains("leaves the whole batch out"),
        "{f:#}"
    );

    // repair refuses it (exit 3), and writes nothing.
    let (code, _, err) = turnscope(
        &db,
        &[
            "--write",
            "repair",
            &sub,
            "-y",
            "--ack-side-effects",
            "--json",
        ],
    );
    assert_eq!(code, Some(3), "repair did not refuse: {err}");
    let (code, again, _) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8));
    assert_eq!(again["sessions"], doc["sessions"]);

    // The runtime's next turn in that session, its context recorded.
    let record = dir.path().join("calls.jsonl");
    let tag = format!("next{}", &sub[..8]);
    let text = format!("[[script:text#{tag}]] a new prompt after the failed turn");
    let prompt = rt.drive_with_env(
        "prompt.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--side".as_ref(),
            side.as_os_str(),
            "--session-key".as_ref(),
            session_key.as_ref(),
            "--text".as_ref(),
            text.as_ref(),
        ],
        &[("TURNSCOPE_RECORD_CONTEXT", record.as_os_str())],
    );
    let new = prompt["submissions"].as_array().unwrap();
    assert_eq!(new.len(), 1, "{prompt:#}");
    assert_eq!(new[0]["status"], "settled", "{prompt:#}");
    assert_eq!(new[0]["error"], Value::Null, "{prompt:#}");
    assert_eq!(prompt["runtimeErrorsLogged"], Value::Array(vec![]));
    let recorded: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = recorded
        .iter()
        .find(|c| c["tag"] == tag.as_str() && c["summary"] == false)
        .unwrap_or_else(|| panic!("no model call for {tag}: {recorded:#?}"));
    let messages = call["messages"].as_array().unwrap();
    // The history before and after the batch is sent: the failed submission's input, the
    // runtime's signal for it, the new prompt last.
    let all_text: Vec<String> = messages.iter().flat_map(texts).collect();
    assert!(
        all_text
            .iter()
            .any(|t| t.contains("dispatch_input") && t.contains(&sub)),
        "{messages:#?}"
    );
    assert!(
        all_text
            .iter()
            .any(|t| t.contains("submission_interrupted") && t.contains(&sub)),
        "{messages:#?}"
    );
    assert!(texts(messages.last().unwrap())[0].contains(&tag));
    // The batch is not: no call of it, no result for it, nothing synthesised by the library.
    for m in messages {
        for id in call_ids(m) {
            assert!(
                !calls.contains(&id),
                "the runtime sent {id} of the unresolved batch: {m:#}"
            );
        }
        assert!(
            texts(m).iter().all(|t| !t.contains(NO_RESULT)),
            "the library answered a call: {m:#}"
        );
    }

    // No tool ran twice over the crash run, the recovery and the new turn.
    assert_eq!(prompt["doubleExecuted"], Value::Array(vec![]), "{prompt:#}");
    assert!(
        calls
            .iter()
            .all(|id| prompt["toolExecutions"][id].as_u64().unwrap_or(0) <= 1),
        "{prompt:#}"
    );
}
