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
//!
//! The second test takes the other case, the batch still at the leaf behind a settled
//! submission (a journal built with turnscope-testkit that the runtime loads: one call with a
//! recorded result, one without). Unrepaired, the runtime's next turn leaves the whole batch out
//! as well (its context builder: the model receives the history without it, nothing for the
//! library to answer with "No result provided"), and that turn then follows the batch, so it is
//! no longer repairable in place. Repaired in place (`turnscope --write repair`, the runtime's
//! own repair rows), health finds nothing and the next turn sends the assistant with both calls,
//! each answered: the recorded result as it was, the runtime's `interrupted` result for the
//! other. Neither turn runs a tool of the batch.

use std::path::Path;

use serde_json::{json, Value};

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
    // Only the runtime's own entries follow it, named (its failure signal last); no turn was
    // built since, the next one is the first to leave it out. The refusal gives that reason.
    assert_eq!(f["laterTurns"], 0, "{f:#}");
    let followed = f["followedBy"].as_array().unwrap();
    assert_eq!(followed.len() as u64, f["laterEntries"].as_u64().unwrap());
    assert_eq!(
        followed.last().unwrap(),
        "its failure signal (submission_interrupted)",
        "{f:#}"
    );
    let effect = f["effect"].as_str().unwrap();
    assert!(
        effect.ends_with("the runtime's next turn will leave the whole batch out")
            && !effect.contains("without this batch"),
        "{effect}"
    );
    let why = f["repair"]["why"].as_str().unwrap();
    assert!(
        why.starts_with("the runtime's entries follow the batch on the active path ("),
        "{why}"
    );
    assert!(
        err.contains(why) && !err.contains("only running submissions"),
        "{err}"
    );
    let (code, again, _) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8));
    assert_eq!(again["sessions"], doc["sessions"]);

    // The runtime's next turn in that session, its context recorded.
    let tag = format!("next{}", &sub[..8]);
    let (prompt, call) = next_turn(rt, dir.path(), &db, &side, &session_key, &tag);
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

/// The settled submission of the journal [`leaf_batch_journal`] writes.
const LEAF_SUB: &str = "5b0c6f5e-3f1a-4c7e-9d2b-0a1b2c3d4e5f";
/// Its batch: the call with a recorded result, and the one without.
const ANSWERED: &str = "tc_leaf_0_0";
const UNANSWERED: &str = "tc_leaf_0_1";
/// The recorded result's text.
const RECORDED_TEXT: &str = "{\"ok\":true,\"tool\":\"fetch_record\",\"label\":\"a\"}";

/// A journal the runtime loads (its agent `worker`, its id formats, session data as it writes
/// it), built with turnscope-testkit: one session of instance `leafrt` whose settled (failed)
/// submission's batch ends the active path: the input, an assistant that stopped for two calls,
/// the result of the first. The side file says the first call ran once, as its result says.
/// Returns the session key.
fn leaf_batch_journal(db: &Path, side: &Path) -> String {
    use turnscope_demo::shapes;
    use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};

    const T: i64 = 1_795_000_000_000;
    let instance = "leafrt";
    let input = json!({"task": "[[script:three-tools#leafrt]] a turn whose batch was cut short"});
    let mut s = SessionBuilder::for_instance(instance, T).ids(
        "conv_01KT0000000000000000000000",
        "aff_01KT0000000000000000000000",
    );
    s.at(T + 20).message_with(
        "a0c1e2f4",
        shapes::dispatch_signal(
            &shapes::stable_pretty(&input),
            json!({"agent": "worker", "id": instance, "session": "default",
                   "dispatchId": LEAF_SUB, "acceptedAt": turnscope_core::journal::time::iso_from_ms(T)}),
            T + 20,
        ),
        vec![("dispatch", json!({"dispatchId": LEAF_SUB}))],
    );
    let call = |id: &str, name: &str, label: &str| {
        shapes::tool_call(id, name, json!({"label": label, "callId": id}))
    };
    s.at(T + 40).message(
        "b1d3f5a7",
        json!({"role": "assistant",
               "content": [call(ANSWERED, "fetch_record", "a"), call(UNANSWERED, "send_email", "c")],
               "api": "harness-scripted-api", "provider": "harness", "model": "scripted-1",
               "responseId": "resp_leafrt_1",
               "usage": {"input": 70, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 70,
                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
               "stopReason": "toolUse", "timestamp": T + 40}),
    );
    s.at(T + 60).message(
        "c2e4a6b8",
        shapes::tool_result(
            ANSWERED,
            "fetch_record",
            RECORDED_TEXT,
            Some(json!({})),
            false,
            T + 60,
        ),
    );
    let key = s.key().to_string();
    let mut j = JournalBuilder::new();
    j.session(s).submission(
        Submission::dispatch(LEAF_SUB, &key, "worker", instance, &input, T)
            .claimed(
                "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
                "7e6d5c4b-3a29-4180-9f7e-6d5c4b3a2918",
                T + 10,
                T + 30_010,
            )
            .input_applied(T + 20)
            .settled(T + 90, Some(&shapes::interrupted_error().to_string())),
    );
    j.write(db).unwrap();
    let ran = |event: &str| {
        json!({"ts": T + 50, "pid": 1, "run": "built:leafrt", "event": event,
               "tool": "fetch_record", "toolCallId": ANSWERED, "label": "a"})
    };
    std::fs::write(
        side,
        format!("{}\n{}\n", ran("tool_start"), ran("tool_end")),
    )
    .unwrap();
    key
}

/// The runtime's next turn in `session_key` (`prompt.mjs`), the model's context recorded: the
/// driver's report and the turn's first model call as recorded (`received`: how many messages
/// the runtime handed the model; `messages`: them after the library's `transformMessages`).
fn next_turn(
    rt: &crate::runtime_kit::Runtime,
    dir: &Path,
    db: &Path,
    side: &Path,
    session_key: &str,
    tag: &str,
) -> (Value, Value) {
    let record = dir.join(format!("{tag}.calls.jsonl"));
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
        .find(|c| c["tag"] == tag && c["summary"] == false)
        .unwrap_or_else(|| panic!("no model call for {tag}: {recorded:#?}"));
    let last = call["messages"].as_array().unwrap().last().unwrap();
    assert!(texts(last)[0].contains(tag), "{call:#}");
    (prompt, call.clone())
}

#[test]
#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
fn a_settled_submissions_leaf_batch_repaired_in_place_reaches_the_real_runtimes_next_turn() {
    let rt = runtime("health_runtime");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leaf.db");
    let side = dir.path().join("leaf.side.jsonl");
    let session_key = leaf_batch_journal(&db, &side);

    // health: the batch at the leaf behind the settled submission, repairable in place.
    let (code, doc, err) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8), "{err}");
    let f = &doc["sessions"][0]["findings"][0];
    assert_eq!(f["kind"], "unresolved_calls", "{doc:#}");
    assert_eq!(f["submission"]["id"], LEAF_SUB);
    assert_eq!(f["atLeaf"], true, "{f:#}");
    assert_eq!(f["missing"], json!([UNANSWERED]), "{f:#}");
    assert_eq!(f["repair"]["inPlace"], true, "{f:#}");

    // (a) Without the repair, on a copy: the runtime's context builder leaves the whole batch
    // out (the model receives the history without it, so the library has no call to answer
    // with "No result provided"); the turn settles and runs no tool.
    let db_a = dir.path().join("unrepaired.db");
    let side_a = dir.path().join("unrepaired.side.jsonl");
    std::fs::copy(&db, &db_a).unwrap();
    std::fs::copy(&side, &side_a).unwrap();
    let (prompt, call) = next_turn(rt, dir.path(), &db_a, &side_a, &session_key, "unrepaired");
    let messages = call["messages"].as_array().unwrap();
    assert_eq!(call["received"], messages.len(), "{call:#}");
    assert!(
        messages
            .iter()
            .flat_map(texts)
            .any(|t| t.contains("dispatch_input") && t.contains(LEAF_SUB)),
        "{messages:#?}"
    );
    for m in messages {
        for id in call_ids(m) {
            assert!(
                id != ANSWERED && id != UNANSWERED,
                "the runtime sent {id} of the unrepaired batch: {m:#}"
            );
        }
        assert!(
            texts(m).iter().all(|t| !t.contains(NO_RESULT)),
            "the library answered a call: {m:#}"
        );
    }
    assert_ran_once_at_most(&prompt);
    // That turn now follows the batch: no longer repairable in place, and repair refuses it.
    let (code, doc, err) = turnscope(&db_a, &["health", "--all", "--json"]);
    assert_eq!(code, Some(8), "{err}");
    let f = &doc["sessions"][0]["findings"][0];
    assert_eq!(f["atLeaf"], false, "{f:#}");
    assert_eq!(f["repair"]["inPlace"], false, "{f:#}");
    let (code, _, err) = turnscope(
        &db_a,
        &["--write", "repair", LEAF_SUB, "-y", "--ack-side-effects"],
    );
    assert_eq!(code, Some(3), "repair did not refuse: {err}");
    assert_eq!(f["laterTurns"], 1, "{f:#}");
    assert_eq!(f["followedBy"], json!([]), "{f:#}");
    assert!(
        f["effect"].as_str().unwrap().contains("without this batch"),
        "{f:#}"
    );
    assert!(
        err.contains(&format!(
            "{} later entries follow the batch",
            f["laterEntries"]
        )),
        "{err}"
    );

    // (b) Repaired in place: the runtime's own repair rows complete the batch, health finds
    // nothing, and the next turn sends the assistant with both calls, each answered: the
    // recorded result as it was, the runtime's interrupted text for the other.
    let (code, _, err) = turnscope(
        &db,
        &[
            "--write",
            "repair",
            LEAF_SUB,
            "-y",
            "--ack-side-effects",
            "--json",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, doc, err) = turnscope(&db, &["health", "--all", "--json"]);
    assert_eq!(code, Some(0), "{doc:#} {err}");
    let (prompt, call) = next_turn(rt, dir.path(), &db, &side, &session_key, "repaired");
    let messages = call["messages"].as_array().unwrap();
    assert_eq!(call["received"], messages.len(), "{call:#}");
    let at = messages
        .iter()
        .position(|m| m["role"] == "assistant" && !call_ids(m).is_empty())
        .unwrap_or_else(|| panic!("no assistant with the batch: {messages:#?}"));
    assert_eq!(call_ids(&messages[at]), [ANSWERED, UNANSWERED]);
    let result = |m: &Value, id: &str, text: &str| {
        assert_eq!(m["role"], "toolResult", "{m:#}");
        assert_eq!(m["toolCallId"], id, "{m:#}");
        assert_eq!(texts(m), [text], "{m:#}");
    };
    result(&messages[at + 1], ANSWERED, RECORDED_TEXT);
    result(
        &messages[at + 2],
        UNANSWERED,
        turnscope_engine::actions::INTERRUPTED_TEXT,
    );
    assert_eq!(messages.len(), at + 4, "{messages:#?}");
    for m in messages {
        assert!(
            texts(m).iter().all(|t| !t.contains(NO_RESULT)),
            "the library answered a call: {m:#}"
        );
    }
    assert_ran_once_at_most(&prompt);
}

/// No tool ran twice, and the new turn ran none of the batch: its answered call ran once (in
/// the run that recorded its result), the other never.
fn assert_ran_once_at_most(prompt: &Value) {
    assert_eq!(prompt["doubleExecuted"], Value::Array(vec![]), "{prompt:#}");
    assert_eq!(prompt["toolExecutions"][ANSWERED], 1, "{prompt:#}");
    assert_eq!(
        prompt["toolExecutions"][UNANSWERED],
        Value::Null,
        "{prompt:#}"
    );
}
