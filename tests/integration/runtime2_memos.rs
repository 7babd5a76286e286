//! Step memos in `show` on a stream the real flue 2.1.0 wrote: the `durable-step` scenario
//! (`tests/runtime2/scenarios.mjs`) kills the runtime between the two `step.do` steps of a
//! `durable: true` tool, so its stream holds one `tool_step_settled` record. `show --json` puts
//! it under its tool call (in the conversation and in the trailing batch) with the record's own
//! id, step name and batch, the text `show` and the TUI's detail print it under the call, and no
//! committed fixture (which hold no memo) shows one.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, unpack_db};

/// `crash.mjs --scenario durable-step` on a fresh database in `dir`, killed at its crash point;
/// its write-ahead log then checkpointed into the file (as `make-fixtures.sh` does; no row is
/// changed), so turnscope reads it.
fn durable_step_db(dir: &Path) -> PathBuf {
    let rt = runtime2("runtime2_memos");
    let db = dir.join("durable-step.db");
    let out = Command::new(&rt.node)
        .arg("--no-warnings")
        .arg(rt.drivers.join("crash.mjs"))
        .args([
            OsStr::new("--scenario"),
            OsStr::new("durable-step"),
            OsStr::new("--db"),
            db.as_os_str(),
        ])
        .current_dir(&rt.drivers)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "not killed at its crash point ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = Connection::open(&db).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    conn.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    db
}

fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn show_json(db: &Path, id: &str) -> Value {
    let out = turnscope(db, &["show", id, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every `tool_step_settled` record of the journal as stored: (id, toolCallId, stepName, seq).
fn stored_memos(db: &Path) -> Vec<(String, String, String, i64)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT seq, data FROM flue_conversation_stream_batches ORDER BY path, seq")
        .unwrap();
    let rows: Vec<(i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = Vec::new();
    for (seq, data) in rows {
        let records: Vec<Value> = serde_json::from_str(&data).unwrap();
        for r in records.iter().filter(|r| r["type"] == "tool_step_settled") {
            out.push((
                r["id"].as_str().unwrap().to_string(),
                r["toolCallId"].as_str().unwrap().to_string(),
                r["stepName"].as_str().unwrap().to_string(),
                seq,
            ));
        }
    }
    out
}

/// base64url without padding, as the runtime's `encodeCanonicalId` (DSP:33).
fn b64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn show_puts_a_durable_tools_step_memo_under_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = durable_step_db(dir.path());
    let stored = stored_memos(&db);
    assert_eq!(stored.len(), 1, "the kill lands after the first memo only");
    let (record_id, call_id, step, seq) = stored[0].clone();
    // The runtime's id for it (toolStepRecordId, DSP:30).
    assert_eq!(
        record_id,
        format!("record_tool_step_{}_{}", b64(&call_id), b64(&step))
    );
    assert_eq!(step, "authorize");

    let id: String = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let doc = show_json(&db, &id);
    assert_eq!(doc["stepMemos"], 1);
    let calls: Vec<&Value> = doc["following"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["toolCalls"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(calls.len(), 1, "{doc:#}");
    assert_eq!(calls[0]["id"], call_id.as_str());
    assert_eq!(calls[0]["name"], "charge_card");
    let steps = calls[0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["recordId"], record_id.as_str());
    assert_eq!(steps[0]["stepName"], "authorize");
    assert_eq!(steps[0]["toolName"], "charge_card");
    assert_eq!(steps[0]["seq"], seq);
    assert_eq!(steps[0]["submissionId"], id.as_str());
    // The trailing batch (the tool has no outcome yet) carries it too.
    assert_eq!(doc["label"], "tool_use_unresolved", "{doc:#}");
    assert_eq!(
        doc["trailingBatch"]["toolCalls"][0]["steps"][0]["recordId"],
        record_id.as_str()
    );

    // The text: under the call.
    let out = turnscope(&db, &["show", &id]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("call") && l.contains(&call_id))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lines[at + 1].contains("step   authorize")
            && lines[at + 1].contains(&record_id)
            && lines[at + 1].contains(&format!("in batch {seq}")),
        "{text}"
    );

    // The TUI's detail: under the call, in the trailing batch's mark.
    let mut o = HarnessOptions::new(0);
    o.width = 200;
    o.height = 60;
    let mut h = Flue2Harness::open(&db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap();
    h.press("2<Enter>");
    let detail = h.app.detail_text();
    let at = detail
        .iter()
        .position(|(l, _)| l.contains("call") && l.contains(&call_id))
        .unwrap_or_else(|| panic!("{detail:?}"));
    let (line, partial) = &detail[at + 1];
    assert!(
        line.contains("step   authorize") && line.contains(&record_id),
        "{line}"
    );
    assert!(
        partial,
        "the memo's line is not marked with its trailing batch"
    );
}

#[test]
fn no_committed_fixture_has_a_step_memo_and_show_says_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut calls = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        assert!(stored_memos(&db).is_empty(), "{name}");
        let ids: Vec<String> = Connection::open(&db)
            .unwrap()
            .prepare("SELECT submission_id FROM flue_agent_submissions")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for id in ids {
            let doc = show_json(&db, &id);
            assert_eq!(doc["stepMemos"], 0, "{name} {id}");
            for e in doc["following"].as_array().unwrap() {
                for c in e["toolCalls"].as_array().into_iter().flatten() {
                    assert_eq!(c["steps"], serde_json::json!([]), "{name} {id}");
                    calls += 1;
                }
            }
        }
    }
    assert!(calls > 20, "{calls} calls checked");
}
