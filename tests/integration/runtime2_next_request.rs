//! `turnscope next-request` on flue 2.x against the real 2.1.0 runtime: on a copy of every crash
//! fixture, at a clock a second after the last lease ended, the view of each stuck (`running`)
//! submission is computed; then the runtime's own reconciler and the resumes it hands the rows to
//! run until idle (`tests/runtime2/reconcile-once.mjs --until-idle`) with the scripted model
//! recording the context of every call (`TURNSCOPE_RECORD_CONTEXT`, after pi-ai 0.83.0's
//! `transformMessages`, as the built-in providers apply it). For each stuck submission:
//! - a view that says the runtime continues must equal the first call whose context holds the
//!   submission's input, role by role and id by id (tool call ids; a result's call id and tool
//!   name; a stored user message's text);
//! - a view that says compaction comes first must see the summary request before that call;
//! - a view that says no model call must see no call answering the submission's input.
//!
//! Deliveries the runtime joins at the turn boundary (`applyQueuedJoins`: a queued dispatch of
//! the instance appended to the resumed turn) are not predicted (docs/flue2.md): the inputs of
//! rows the runtime left `joined_into` the submission are taken off the end of the recorded call
//! before comparing, and counted.

use std::path::Path;

use serde_json::Value;

use crate::runtime2_reconcile::list;
use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, turnscope_command, unpack_db};

#[derive(Debug, PartialEq)]
struct Shape {
    role: String,
    calls: Vec<String>,
    result: Option<(String, String)>,
    /// A stored user message's text (compared where turnscope shows one).
    text: Option<String>,
}

fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(b) => b
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn recorded_shape(m: &Value, with_text: bool) -> Shape {
    Shape {
        role: m["role"].as_str().unwrap_or_default().into(),
        calls: m["content"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter(|b| b["type"] == "toolCall")
                    .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        result: m["toolCallId"].as_str().map(|id| {
            (
                id.to_string(),
                m["toolName"].as_str().unwrap_or_default().to_string(),
            )
        }),
        text: with_text.then(|| text_of(m)),
    }
}

/// The view's message, and whether its text is a stored user message's (the fold keeps it).
fn view_shape(m: &Value) -> (Shape, bool) {
    let stored_user = m["role"] == "user" && m["source"]["from"] == "stored";
    (
        Shape {
            role: m["role"].as_str().unwrap_or_default().into(),
            calls: m["toolCalls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap_or_default().to_string())
                .collect(),
            result: m["toolCallId"].as_str().map(|id| {
                (
                    id.to_string(),
                    m["toolName"].as_str().unwrap_or_default().to_string(),
                )
            }),
            text: stored_user.then(|| m["text"].as_str().unwrap_or_default().to_string()),
        },
        stored_user,
    )
}

/// The script marker's tag in a submission's payload: `[[script:NAME#TAG]]`.
fn tag_of(payload: &str) -> Option<String> {
    let start = payload.find("[[script:")?;
    let rest = &payload[start..];
    let hash = rest.find('#')?;
    let end = rest.find("]]")?;
    Some(rest[hash + 1..end].to_string())
}

fn tags(db: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT submission_id, payload FROM flue_agent_submissions")
        .unwrap();
    st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .filter_map(|r| {
            let (id, p) = r.unwrap();
            tag_of(&p).map(|t| (id, t))
        })
        .collect()
}

fn holds(call: &Value, tag: &str) -> bool {
    let marker = format!("#{tag}]]");
    call["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["role"] == "user" && text_of(m).contains(&marker))
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_2x_next_request_equals_the_first_call_the_real_runtime_makes_after_each_crash() {
    let rt = runtime2("runtime2_next_request");
    let dir = tempfile::tempdir().unwrap();
    let names = db_fixture_names("flue-2.1.0");
    assert!(names.len() >= 15, "{names:?}");
    let (mut compared, mut compaction, mut no_call, mut joined_seen) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for name in &names {
        let db = unpack_db("flue-2.1.0", name, dir.path());
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
        let stuck: Vec<String> = rows["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["status"] == "running")
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        let tags = tags(&db);
        let views: Vec<(String, Value)> = stuck
            .iter()
            .map(|id| {
                let out = turnscope_command()
                    .env_remove("TURNSCOPE_DB")
                    .env("TURNSCOPE_NOW_MS", now.to_string())
                    .arg("--db")
                    .arg(&db)
                    .args(["next-request", id, "--json", "--context-window", "200000"])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{name} {id}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(doc["schema"], "turnscope.next-request/1");
                assert_eq!(doc["format"], "flue-2.x");
                assert_eq!(doc["modelLibrary"], "pi-ai@0.83.0");
                (id.clone(), doc)
            })
            .collect();
        let record = dir.path().join(format!("{name}.calls.jsonl"));
        let ran = rt.drive_with_env(
            "reconcile-once.mjs",
            &[
                "--db".as_ref(),
                db.as_os_str(),
                "--now".as_ref(),
                now.to_string().as_ref(),
                "--until-idle".as_ref(),
            ],
            &[("TURNSCOPE_RECORD_CONTEXT", record.as_os_str())],
        );
        let calls: Vec<Value> = std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (id, doc) in views {
            let tag = &tags
                .iter()
                .find(|(s, _)| *s == id)
                .unwrap_or_else(|| panic!("{name}: no script marker in {id}'s payload"))
                .1;
            let first = calls
                .iter()
                .position(|c| c["summary"] == false && holds(c, tag));
            let turn = doc["turn"]["kind"].as_str().unwrap().to_string();
            let case = format!("{name} {id} ({turn}, {})", doc["rule"]);
            match (turn.as_str(), first) {
                ("continue", Some(at)) => {
                    // Rows the runtime joined into this one: their inputs ride on its turn.
                    let joined: Vec<&String> = ran["states"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|s| s["final"]["joined_into"] == id.as_str())
                        .filter_map(|s| {
                            let sid = s["submissionId"].as_str()?;
                            tags.iter().find(|(x, _)| x == sid).map(|(_, t)| t)
                        })
                        .collect();
                    let mut sent: Vec<&Value> =
                        calls[at]["messages"].as_array().unwrap().iter().collect();
                    while let Some(last) = sent.last() {
                        let t = text_of(last);
                        if last["role"] == "user"
                            && joined.iter().any(|j| t.contains(&format!("#{j}]]")))
                        {
                            sent.pop();
                            joined_seen += 1;
                        } else {
                            break;
                        }
                    }
                    let got: Vec<(Shape, bool)> = doc["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(view_shape)
                        .collect();
                    let want: Vec<Shape> = sent
                        .iter()
                        .enumerate()
                        .map(|(i, m)| recorded_shape(m, got.get(i).is_some_and(|g| g.1)))
                        .collect();
                    let got: Vec<Shape> = got.into_iter().map(|g| g.0).collect();
                    if want != got {
                        failures.push(format!(
                            "{case}: the runtime sent\n{want:#?}\nturnscope says\n{got:#?}"
                        ));
                    }
                    compared += 1;
                }
                ("compaction_first", Some(at)) => {
                    if calls[..at].iter().any(|c| c["summary"] == true) {
                        compaction += 1;
                    } else {
                        failures.push(format!(
                            "{case}: no summary request before the first call for it"
                        ));
                    }
                }
                ("no_call", None) => no_call += 1,
                (_, call) => failures.push(format!(
                    "{case}: turnscope says {turn}, the runtime's first call holding its input: {}",
                    call.map_or("none".into(), |c| format!("#{c}"))
                )),
            }
        }
    }
    eprintln!(
        "runtime2_next_request: {compared} requests equal to the runtime's, {compaction} compaction first, {no_call} without a call as predicted, {joined_seen} joined input(s) taken off"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared >= 8, "only {compared} requests compared");
    assert!(no_call >= 1 && compaction >= 1);
}
