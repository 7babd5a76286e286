//! `health` on flue 2.x journals, through the binary, on every 2.1.0 crash fixture. The findings
//! are checked against the real runtime's own fold of each stream (`NAME.fold.json`, written by
//! 2.1.0's reducer through `tests/runtime2/fold.mjs`): the unresolved batches are exactly the
//! tool-call assistants of the runtime's active path whose calls the run of tool results after
//! them does not all answer (what 2.1.0's `pathToContextEntries` leaves out), their missing calls
//! those with neither a result nor a recorded outcome, and the in-progress assistants exactly the
//! runtime's `inProgressMessages`. What the runtime does about each is the plan `classify`
//! prints at the owner's lease end. `repair` is refused on 2.x and writes nothing.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde_json::Value;

use crate::support::{db_fixture_names, fixtures_dir, unpack_db};

fn run(db: &Path, now: Option<i64>, args: &[&str]) -> std::process::Output {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB");
    if let Some(now) = now {
        cmd.env("TURNSCOPE_NOW_MS", now.to_string());
    }
    cmd.arg("--db").arg(db).args(args).output().unwrap()
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Every `assistant_tool_call` record's arguments by (message id, call id), the first of each,
/// read with plain SQL (a spilled batch's chunks put back together) and parsed whole.
fn recorded_arguments(db: &Path) -> HashMap<(String, String), Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT coalesce((SELECT group_concat(data, '') FROM (SELECT data FROM \
             flue_conversation_stream_batch_chunks c WHERE c.path = b.path AND c.seq = b.seq \
             ORDER BY chunk_index)), data) FROM flue_conversation_stream_batches b \
             ORDER BY path, seq",
        )
        .unwrap();
    let mut out = HashMap::new();
    for data in st.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let records: Vec<Value> = serde_json::from_str(&data.unwrap()).unwrap();
        for r in records {
            if r["type"] == "assistant_tool_call" {
                let key = (
                    r["messageId"].as_str().unwrap().to_string(),
                    r["toolCallId"].as_str().unwrap().to_string(),
                );
                out.entry(key).or_insert_with(|| r["arguments"].clone());
            }
        }
    }
    out
}

fn fold(name: &str) -> Value {
    let p = fixtures_dir().join(format!("flue-2.1.0/{name}.fold.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// (assistant entry id, missing call ids) of every unresolved batch, and every in-progress
/// message id, from the runtime's fold.
fn expected(fold: &Value) -> (BTreeSet<(String, Vec<String>)>, BTreeSet<String>) {
    let mut batches = BTreeSet::new();
    let mut ghosts = BTreeSet::new();
    for s in fold["streams"].as_array().unwrap() {
        for c in s["conversations"].as_array().unwrap() {
            let path = c["activePath"].as_array().unwrap();
            let recorded: Vec<(String, String)> = c["uncommittedToolOutcomes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["assistantMessageId"].as_str().unwrap().to_string(),
                        o["toolCallId"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            for (i, e) in path.iter().enumerate() {
                let calls = e["toolCalls"].as_array().cloned().unwrap_or_default();
                let stop = e["stopReason"].as_str().unwrap_or("");
                if e["role"] != "assistant"
                    || calls.is_empty()
                    || stop == "error"
                    || stop == "aborted"
                {
                    continue;
                }
                let answered: Vec<&str> = path[i + 1..]
                    .iter()
                    .take_while(|r| r["role"] == "toolResult")
                    .map(|r| r["toolCallId"].as_str().unwrap())
                    .collect();
                let id = e["id"].as_str().unwrap().to_string();
                let unanswered: Vec<&Value> = calls
                    .iter()
                    .filter(|c| !answered.contains(&c["id"].as_str().unwrap()))
                    .collect();
                if unanswered.is_empty() {
                    continue;
                }
                let missing = unanswered
                    .iter()
                    .map(|c| c["id"].as_str().unwrap().to_string())
                    .filter(|call| !recorded.contains(&(id.clone(), call.clone())))
                    .collect();
                batches.insert((id, missing));
            }
            for g in c["inProgressMessages"].as_array().unwrap() {
                ghosts.insert(g["messageId"].as_str().unwrap().to_string());
            }
        }
    }
    (batches, ghosts)
}

#[test]
fn health_finds_what_the_runtimes_own_fold_leaves_out_of_the_next_request_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen_batches = 0;
    let mut seen_ghosts = 0;
    let mut seen_arguments = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let before = std::fs::read(&db).unwrap();
        let o = run(&db, None, &["health", "--all", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
        assert_eq!(doc["schema"], "turnscope.health/1");
        assert_eq!(doc["format"], "flue-2.x");
        let (batches, ghosts) = expected(&fold(&name));
        let arguments = recorded_arguments(&db);
        let mut got_batches = BTreeSet::new();
        let mut got_ghosts = BTreeSet::new();
        for s in doc["sessions"].as_array().unwrap() {
            for f in s["findings"].as_array().unwrap() {
                match f["kind"].as_str().unwrap() {
                    "unresolved_calls" => {
                        got_batches.insert((
                            f["assistant"]["entry"].as_str().unwrap().to_string(),
                            f["missing"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|m| m.as_str().unwrap().to_string())
                                .collect::<Vec<_>>(),
                        ));
                        // Every call named with its arguments, read back from its record.
                        let assistant = f["assistant"]["entry"].as_str().unwrap();
                        for c in f["calls"].as_array().unwrap() {
                            let key = (assistant.to_string(), c["id"].as_str().unwrap().into());
                            assert_eq!(Some(&c["arguments"]), arguments.get(&key), "{name}: {c}");
                            assert!(c["arguments"].is_object(), "{name}: {c}");
                            seen_arguments += 1;
                        }
                    }
                    "in_progress_assistant" => {
                        assert!(f["stopReason"].is_null(), "{name}: {f}");
                        got_ghosts.insert(f["at"]["entry"].as_str().unwrap().to_string());
                    }
                    other => panic!("{name}: an unexpected finding {other}: {f}"),
                }
                // Never repaired by turnscope: every note says the runtime's records repair it.
                let why = f["repair"]["why"].as_str().unwrap();
                assert!(
                    why.contains("turnscope does not write a 2.x stream"),
                    "{name}: {why}"
                );
            }
        }
        assert_eq!(got_batches, batches, "{name}");
        assert_eq!(got_ghosts, ghosts, "{name}");
        let findings = batches.len() + ghosts.len();
        assert_eq!(doc["totals"]["findings"], findings, "{name}");
        assert_eq!(
            o.status.code(),
            Some(if findings > 0 { 8 } else { 0 }),
            "{name}"
        );
        seen_batches += batches.len();
        seen_ghosts += ghosts.len();
        assert_eq!(std::fs::read(&db).unwrap(), before, "{name}: health wrote");
    }
    // The fixtures hold both kinds (else this test would check nothing).
    assert!(
        seen_batches >= 5 && seen_ghosts >= 1 && seen_arguments >= 5,
        "{seen_batches} {seen_ghosts} {seen_arguments}"
    );
}

#[test]
fn a_running_owners_note_names_the_step_its_plan_takes_at_the_lease_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        // Pinned before every lease ends: each running owner is planned at its lease's end.
        let o = run(&db, Some(1000), &["health", "--all", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        for s in doc["sessions"].as_array().unwrap() {
            for f in s["findings"].as_array().unwrap() {
                let owner = &f["submission"];
                if owner["status"] != "running" {
                    continue;
                }
                let id = owner["id"].as_str().unwrap();
                let c = run(&db, Some(1000), &["classify", id, "--json"]);
                let c: Value = serde_json::from_slice(&c.stdout).unwrap();
                let lease = c["submission"]["leaseExpiresAt"].as_i64().unwrap();
                let now = lease + 1;
                let later = run(&db, Some(now), &["classify", id, "--json"]);
                let plan: Value = serde_json::from_slice(&later.stdout).unwrap();
                let step = &plan["plan"]["step"];
                let why = f["repair"]["why"].as_str().unwrap();
                assert!(lease > 0, "{name}");
                assert!(
                    why.contains(&format!(
                        "(step {step}: {}",
                        plan["plan"]["name"].as_str().unwrap()
                    )),
                    "{name}: {why} / {}",
                    plan["plan"]
                );
                assert_eq!(f["repair"]["inPlace"], true, "{name}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "{checked}");
}

#[test]
fn repair_is_refused_on_a_2_x_journal_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let before = std::fs::read(&db).unwrap();
    for args in [
        &["--write", "repair", "sub_01M92S7VMD", "-y"][..],
        &["--write", "repair", "--all", "--dry-run"],
    ] {
        let o = run(&db, None, args);
        assert_eq!(o.status.code(), Some(3), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with(
                "error: repair does not write a flue 2.x journal: turnscope never appends"
            ),
            "{err}"
        );
        assert!(err.contains("hint: run `turnscope health ID`"), "{err}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn health_by_id_lists_the_instance_healthy_or_not_and_refuses_an_unknown_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "completed-unsettled", dir.path());
    let o = run(&db, None, &["health", "--json", "--all"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(doc["sessions"].as_array().unwrap().is_empty());
    let conversations = doc["totals"]["sessions"].as_u64().unwrap();
    assert!(conversations >= 1);
    let rows = run(&db, None, &["list", "--status", "all", "--json"]);
    let rows: Value = serde_json::from_slice(&rows.stdout).unwrap();
    let id = rows["submissions"][0]["id"].as_str().unwrap();
    let o = run(&db, None, &["health", &id[..10]]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("0 findings") || text.contains("healthy"),
        "{text}"
    );
    let o = run(&db, None, &["health", "nothing-like-it"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: no agent instance matches"));
}

/// A submission settled with its tool batch still unresolved at the leaf (written here: the
/// crashed row of `tool-batch-1-of-3` settled failed by SQL, as a settlement that skipped the
/// markers would leave it). Health says the runtime's next submission on the conversation
/// marker-settles the batch before its input; the real 2.1.0 runtime, run until idle on a copy,
/// claims the queued submission and appends exactly those markers, owned by it, then the commit,
/// then its input; health then finds nothing.
#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_next_submission_repairs_a_settled_submissions_batch_as_health_says_with_the_real_runtime() {
    let rt = crate::runtime_kit::runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let owner: String = conn
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let queued: String = conn
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'queued'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE flue_agent_submissions SET status = 'settled', settled_at = lease_expires_at, \
         error = 'settled without repairing its batch' WHERE submission_id = ?1",
        [&owner],
    )
    .unwrap();
    drop(conn);
    let doc: Value =
        serde_json::from_slice(&run(&db, None, &["health", "--all", "--json"]).stdout).unwrap();
    let findings: Vec<&Value> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["findings"].as_array().unwrap())
        .collect();
    assert_eq!(findings.len(), 1, "{doc}");
    let f = findings[0];
    assert_eq!(f["kind"], "unresolved_calls");
    assert_eq!(f["submission"]["id"], owner.as_str());
    assert_eq!(f["submission"]["status"], "failed");
    assert_eq!(f["repair"]["inPlace"], true);
    let why = f["repair"]["why"].as_str().unwrap();
    assert!(
        why.contains(&format!(
            "the claim of the next queued submission on this conversation, {queued}, does"
        )) && why.contains("before the input: settle the trailing batch")
            && why.contains("interrupted marker"),
        "{why}"
    );
    let assistant = f["assistant"]["entry"].as_str().unwrap().to_string();
    let mut missing: Vec<String> = f["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    missing.sort();
    assert!(!missing.is_empty());

    rt.reconcile_at(&db, wall_ms(), true);
    // The records the runtime appended, in stream order.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut q = conn
        .prepare(
            "SELECT r.value FROM flue_conversation_stream_batches b, json_each(b.data) r \
             ORDER BY b.path, b.seq, CAST(r.key AS INTEGER)",
        )
        .unwrap();
    let records: Vec<Value> = q
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|s| serde_json::from_str(&s.unwrap()).unwrap())
        .collect();
    let at = |pred: &dyn Fn(&Value) -> bool| records.iter().position(pred);
    let mut markers: Vec<String> = records
        .iter()
        .filter(|r| {
            r["type"] == "tool_outcome"
                && r["assistantMessageId"] == assistant.as_str()
                && r["id"]
                    .as_str()
                    .unwrap()
                    .starts_with("record_tool_repair_outcome_")
        })
        .map(|r| {
            assert_eq!(
                r["submissionId"],
                queued.as_str(),
                "owned by the next submission: {r}"
            );
            r["toolCallId"].as_str().unwrap().to_string()
        })
        .collect();
    markers.sort();
    assert_eq!(markers, missing);
    let commit = at(&|r| {
        r["type"] == "tool_results_committed" && r["assistantMessageId"] == assistant.as_str()
    })
    .expect("the batch committed");
    let input = at(&|r| r["type"] == "user_message" && r["submissionId"] == queued.as_str())
        .expect("the next submission's input");
    assert!(commit < input, "the batch is settled before the input");
    let after: Value =
        serde_json::from_slice(&run(&db, None, &["health", "--all", "--json"]).stdout).unwrap();
    assert_eq!(after["totals"]["byKind"]["unresolved_calls"], 0, "{after}");
}
