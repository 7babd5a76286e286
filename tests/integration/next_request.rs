//! `turnscope next-request` against the real runtime: for every crash fixture, the view of each
//! stuck submission is computed on a copy (its deadlines moved as the round trip's "as crashed"
//! clock moves them, so the runtime meets the state the fixture was made to show), then the
//! runtime resumes the copy with its fake model recording the context of every call
//! (`TURNSCOPE_RECORD_CONTEXT`, after the model library's `transformMessages`, as its built-in
//! providers apply it). For each stuck submission:
//! - a view that says the runtime continues must equal the first call the model received for
//!   that submission's script tag, message by message: role, tool call ids, result ids and names,
//!   and the text;
//! - a view that says compaction comes first must see a summary request first;
//! - a view that says no model call must see none for that tag.
//!
//! Queued submissions behind a stuck one are not compared: their request holds the answer of
//! the turn before them, which no journal can know.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::runtime_kit::runtime;
use crate::support::{fixtures_dir, gunzip, manifest};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A tool call id list, result id and name, and text of a message, as both sides print them.
#[derive(Debug, PartialEq)]
struct Shape {
    role: String,
    calls: Vec<String>,
    result: Option<(String, String)>,
    text: String,
}

fn text_of(v: &Value) -> String {
    match v.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(b)) => b
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The recorded message's shape, its text cut as turnscope's document cuts it (240 characters).
fn recorded_shape(m: &Value) -> Shape {
    let calls = m["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|b| b["type"] == "toolCall")
                .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let text = text_of(m);
    let cut: String = text.chars().take(240).collect();
    Shape {
        role: m["role"].as_str().unwrap_or_default().into(),
        calls,
        result: m["toolCallId"].as_str().map(|id| {
            (
                id.to_string(),
                m["toolName"].as_str().unwrap_or_default().to_string(),
            )
        }),
        text: if text.chars().count() > 240 {
            format!("{cut}…")
        } else {
            cut
        },
    }
}

fn view_shape(m: &Value) -> Shape {
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
        text: m["text"].as_str().unwrap_or_default().into(),
    }
}

fn copy(dir: &Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let src = fixtures_dir().join("flue-beta7");
    let db = dir.join(format!("{name}.db"));
    let side = dir.join(format!("{name}.side.jsonl"));
    std::fs::write(&db, gunzip(&src.join(format!("{name}.db.gz")))).unwrap();
    std::fs::write(&side, gunzip(&src.join(format!("{name}.side.jsonl.gz")))).unwrap();
    (db, side)
}

#[test]
#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
fn the_next_request_view_equals_what_the_real_runtime_sends_after_each_crash() {
    let rt = runtime("next_request");
    let m = manifest();
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    let mut no_call = 0;
    let mut failures = Vec::new();
    for f in m["fixtures"].as_array().unwrap() {
        let file = f["db"].as_str().unwrap();
        let name = if file == "large.db" {
            "large-tail"
        } else {
            file.trim_end_matches(".db")
        };
        let (db, side) = copy(dir.path(), name);
        let shift = now_ms() - (f["maxLeaseExpiresAt"].as_i64().unwrap() + 1);
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE flue_agent_submissions SET timeout_at = timeout_at + ?1 WHERE timeout_at > 0",
                [shift],
            )
            .unwrap();
        let tags: HashMap<String, String> = std::fs::read_to_string(&side)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["event"] == "admitted")
            .map(|l| {
                (
                    l["submissionId"].as_str().unwrap().to_string(),
                    l["tag"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let stuck: Vec<String> = f["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["status"] == "running")
            .map(|s| s["submissionId"].as_str().unwrap().to_string())
            .collect();
        let views: Vec<(String, Value)> = stuck
            .iter()
            .map(|id| {
                let doc =
                    crate::support::turnscope_json(&db, None, &["next-request", id, "--json"]);
                assert_eq!(doc["schema"], "turnscope.next-request/1");
                (id.clone(), doc)
            })
            .collect();
        let record = dir.path().join(format!("{name}.calls.jsonl"));
        rt.drive_with_env(
            "resume.mjs",
            &[
                "--db".as_ref(),
                db.as_os_str(),
                "--side".as_ref(),
                side.as_os_str(),
            ],
            &[("TURNSCOPE_RECORD_CONTEXT", record.as_os_str())],
        );
        let calls: Vec<Value> = std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (id, doc) in views {
            let tag = tags
                .get(&id)
                .unwrap_or_else(|| panic!("{name}: no script tag for {id}"));
            let first = calls.iter().find(|c| c["tag"] == tag.as_str());
            let turn = doc["turn"]["kind"].as_str().unwrap();
            let case = format!("{name} {} ({turn})", &id[..8]);
            match (turn, first) {
                ("continue", Some(call)) if call["summary"] == false => {
                    let want: Vec<Shape> = call["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(recorded_shape)
                        .collect();
                    let got: Vec<Shape> = doc["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(view_shape)
                        .collect();
                    if want != got {
                        failures.push(format!(
                            "{case}: the runtime sent\n{want:#?}\nturnscope says\n{got:#?}"
                        ));
                    }
                    compared += 1;
                }
                ("compaction_first", Some(call)) if call["summary"] == true => compared += 1,
                ("no_call", None) => no_call += 1,
                (_, call) => failures.push(format!(
                    "{case}: turnscope says {turn}, the runtime's first call for tag {tag}: {}",
                    call.map_or("none".to_string(), |c| format!(
                        "summary request {}",
                        c["summary"]
                    ))
                )),
            }
        }
    }
    eprintln!("next_request: {compared} requests equal to the runtime's, {no_call} without a call as predicted");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every fixture's stuck submission was accounted for, and most resume with a call.
    assert!(compared >= 10, "only {compared} requests compared");
    assert!(no_call >= 1);
}
