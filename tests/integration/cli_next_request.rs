//! `turnscope next-request` on the runtime's crash fixtures, at the moment each was left (the
//! clock pinned just after its last lease expired): what the text and the JSON say, and its
//! errors. The comparison with what the real runtime sends is `next_request.rs`.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{manifest, turnscope_command, unpack_fixture};

/// The instant just after the fixture's last lease expired (its deadlines still ahead).
fn moment(db: &str) -> String {
    let m = manifest();
    let f = m["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["db"] == db)
        .unwrap();
    (f["maxLeaseExpiresAt"].as_i64().unwrap() + 1).to_string()
}

fn run(db: &Path, now: &str, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn json(db: &Path, now: &str, args: &[&str]) -> Value {
    let o = run(db, now, args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn roles(doc: &Value) -> Vec<&str> {
    doc["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

fn hazards(doc: &Value) -> Vec<&str> {
    doc["hazards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect()
}

#[test]
fn a_stream_cut_mid_answer_is_continued_without_the_partial_recovery_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "mid-stream");
    let now = moment("mid-stream.db");
    let doc = json(&db, &now, &["next-request", "1fc306ca", "--json"]);
    assert_eq!(doc["schema"], "turnscope.next-request/1");
    assert_eq!(doc["rule"], "rule 4");
    assert_eq!(doc["turn"]["kind"], "continue");
    assert_eq!(doc["recovery"][0]["write"], "stream_recovery");
    assert_eq!(doc["recovery"][0]["messages"], 3);
    assert_eq!(roles(&doc), ["user", "user", "user"]);
    assert_eq!(doc["messages"][2]["source"]["from"], "recovery");
    assert_eq!(doc["messages"][2]["source"]["write"], "stream_signal");
    let left = &doc["leftOut"][0];
    assert_eq!(left["written"]["write"], "stream_partial");
    assert_eq!(left["by"], "library");
    assert_eq!(hazards(&doc), ["continuation_without_partial"]);
    let text = String::from_utf8(run(&db, &now, &["next-request", "1fc306ca"]).stdout).unwrap();
    assert!(text.contains("‼ continuation_without_partial"), "{text}");
    assert!(
        text.contains("recovery  written first: stream_recovery (3 messages)"),
        "{text}"
    );
}

#[test]
fn a_partial_batch_is_sent_repaired_and_a_failed_one_is_never_seen() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let now = moment("tool-batch-mid.db");
    // The stuck submission: rule 6 repairs its batch, the fresh attempt sends it whole.
    let doc = json(&db, &now, &["next-request", "74384fb4", "--json"]);
    assert_eq!(doc["turn"]["kind"], "continue");
    assert_eq!(doc["recovery"][0]["write"], "tool_repair");
    let last3: Vec<&Value> = doc["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .take(3)
        .collect();
    for m in &last3 {
        assert_eq!(m["source"]["from"], "recovery", "{m}");
        assert_eq!(m["isError"], true);
    }
    assert_eq!(hazards(&doc), ["interrupted_results"]);
    assert_eq!(doc["hazards"][0]["calls"].as_array().unwrap().len(), 3);
    // Aged (every deadline passed): rule 3 fails it, nothing repairs the batch, and the next
    // input of the session never sees those calls.
    let a_day_later = (now.parse::<i64>().unwrap() + 86_400_000).to_string();
    let aged = json(&db, &a_day_later, &["next-request", "74384fb4", "--json"]);
    assert_eq!(aged["rule"], "rule 3");
    assert_eq!(aged["turn"]["kind"], "no_call");
    assert_eq!(hazards(&aged), ["unseen_calls"]);
    assert_eq!(aged["leftOut"][0]["reason"], "incomplete_tool_batch");
    assert_eq!(aged["leftOut"][0]["by"], "runtime");
    // The session, by its key: as it stands, its next input after it.
    let key = doc["sessionKey"].as_str().unwrap();
    let session = json(&db, &now, &["next-request", key, "--json"]);
    assert!(session["submissionId"].is_null());
    assert_eq!(session["turn"]["kind"], "next_input");
    assert_eq!(hazards(&session), ["unseen_calls"]);
}

#[test]
fn a_target_that_matches_nothing_is_one_error_line_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "mid-stream");
    let o = run(&db, "0", &["next-request", "nomatch"]);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("error: no submission, session or instance matches"));
    assert!(lines[1].starts_with("hint: "));
    let o = run(&db, "0", &["next-request", "nomatch", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], "turnscope.error/1");
    assert_eq!(doc["exitCode"], 4);
    let o = run(&db, "0", &["next-request", "1fc306ca", "--vision", "maybe"]);
    assert_eq!(o.status.code(), Some(2));
}

/// On the demo (written and read at one pinned instant), one submission of each turn the view
/// can say: compaction first for an overflow, a continuation whose rebuilt partial the library
/// drops, a queued one with its note, a worker's live lease, and rule 3 failing a batch the next
/// input never sees.
#[test]
fn the_demo_shows_each_kind_of_turn() {
    const NOW: i64 = 1_796_018_889_175;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    turnscope_demo::write_demo(&db, NOW).unwrap();
    let now = NOW.to_string();
    let list = json(&db, &now, &["list", "--status", "all", "--json"]);
    let first = |pred: &dyn Fn(&Value) -> bool| -> Value {
        let row = list["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| pred(r))
            .unwrap_or_else(|| panic!("no such row in the demo"));
        let id = row["submission"]["submissionId"].as_str().unwrap();
        json(&db, &now, &["next-request", id, "--json"])
    };
    let overflow = first(&|r| r["verdict"] == "resume/overflow");
    assert_eq!(overflow["turn"]["kind"], "compaction_first", "{overflow}");
    let partial = first(&|r| r["verdict"] == "resume/aborted_partial");
    assert_eq!(partial["turn"]["kind"], "continue");
    assert_eq!(hazards(&partial), ["continuation_without_partial"]);
    let queued = first(&|r| r["verdict"] == "pending");
    assert_eq!(queued["turn"]["kind"], "continue");
    assert!(
        queued["note"].as_str().unwrap().starts_with("queued:"),
        "{queued}"
    );
    let live = first(&|r| r["plan"]["disposition"]["state"] == "live");
    assert_eq!(live["turn"]["kind"], "no_call");
    assert!(
        live["turn"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("a worker holds the lease"),
        "{live}"
    );
    let failed = first(&|r| r["verdict"] == "tool_use_unresolved" && r["plan"]["rule"] == 3);
    assert_eq!(failed["turn"]["kind"], "no_call");
    assert!(hazards(&failed).contains(&"unseen_calls"), "{failed}");
}

/// A dispatch whose attempts all ended in a retryable model error (`n` of them), running with an
/// expired lease and no turn journal (rule 5 hands it to a fresh attempt).
fn transient_errors(db: &Path, n: usize) -> String {
    use serde_json::json;
    use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};
    let sid = "00000000-0000-4000-8000-000000000042";
    let mut s = SessionBuilder::for_instance("retrying", 1_795_132_800_000).ids(
        "conv_01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "aff_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    );
    s.message_with(
        "in",
        json!({"role":"signal","type":"dispatch_input","tagName":"dispatch","content":"{}",
            "attributes":{"dispatchId":sid},"timestamp":1}),
        vec![("dispatch", json!({"dispatchId":sid}))],
    );
    for i in 0..n {
        s.message(
            &format!("err{i}"),
            json!({"role":"assistant","content":[],"provider":"anthropic","api":"anthropic-messages",
                "model":"claude-haiku-4-5","stopReason":"error",
                "errorMessage":"529 overloaded_error: Overloaded","timestamp":1}),
        );
    }
    let sub = Submission::dispatch(sid, s.key(), "a", "retrying", &json!({}), 1_794_999_000_000)
        .claimed("attempt-1", "worker", 1_794_999_000_002, 1_795_000_000_000)
        .input_applied(1_794_999_000_001)
        .timeout_at(1_899_999_999_999);
    let mut j = JournalBuilder::new();
    j.session(s).submission(sub);
    j.write(db).unwrap();
    sid.to_string()
}

/// A retryable error at the end is retried after a back-off, the error turns left out; past the
/// runtime's three retries in a row the fresh attempt fails before any model call.
#[test]
fn transient_errors_are_retried_without_the_error_turns_until_the_retries_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let now = "1795000000001";
    for (n, want) in [(3, "continue"), (4, "no_call")] {
        let db = dir.path().join(format!("retry-{n}.db"));
        let id = transient_errors(&db, n);
        let doc = json(&db, now, &["next-request", &id, "--json"]);
        assert_eq!(doc["verdict"], "resume/transient_retry", "{doc}");
        assert_eq!(doc["rule"], "rule 5");
        assert_eq!(doc["turn"]["kind"], want, "{n} errors: {doc}");
        assert_eq!(roles(&doc), ["user"]);
        let left: Vec<&str> = doc["leftOut"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["reason"].as_str().unwrap())
            .collect();
        assert_eq!(left, vec!["error_turn"; n]);
        if want == "no_call" {
            assert!(
                doc["turn"]["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("4 retryable model errors in a row"),
                "{doc}"
            );
        }
    }
}
