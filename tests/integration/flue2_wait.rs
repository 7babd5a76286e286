//! `wait` on flue 2.x journals: the step predicted for each submission, then what the runtime
//! did. With the real 2.1.0 runtime: one pass of its reconciler on a copy of every crash
//! fixture, while `wait` follows every stuck submission, and each is reported as predicted
//! (exit 0). Without it: a change other than the predicted one is reported as such (exit 6), a
//! submission nothing happens to times out (exit 7), a deleted row is reported as vanished, and
//! a renewed lease is not taken for an action.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use rusqlite::Connection;
use serde_json::Value;

use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, unpack_db};

fn wait(db: &Path, now: i64, ids: &[String], timeout: &str) -> Child {
    let mut cmd: Command = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .arg("--db")
        .arg(db)
        .arg("wait")
        .args(ids)
        .args(["--timeout", timeout, "--interval", "100ms", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

fn finished(child: Child) -> (Option<i32>, Value) {
    let o = child.wait_with_output().unwrap();
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), doc)
}

/// The running rows and the clock a second after the last of their leases ended.
fn stuck(db: &Path) -> (Vec<String>, i64) {
    let conn = Connection::open(db).unwrap();
    let rows: Vec<(String, i64)> = conn
        .prepare("SELECT submission_id, lease_expires_at FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at > 0")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let now = rows.iter().map(|r| r.1).max().unwrap_or(0) + 1_000;
    (rows.into_iter().map(|r| r.0).collect(), now)
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_runtimes_pass_does_what_wait_predicted_on_every_fixture() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let mut followed = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let (ids, now) = stuck(&db);
        if ids.is_empty() {
            continue;
        }
        // Text output: the predictions are printed before the first poll, so the pass runs
        // only once every prediction is made (on a loaded machine a fixed pause was too short).
        let mut cmd: Command = crate::support::turnscope_command();
        let mut child = cmd
            .env_remove("TURNSCOPE_DB")
            .env("TURNSCOPE_NOW_MS", now.to_string())
            .arg("--db")
            .arg(&db)
            .arg("wait")
            .args(&ids)
            .args(["--timeout", "60s", "--interval", "100ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut predicted: BTreeMap<String, String> = BTreeMap::new();
        while predicted.len() < ids.len() {
            let line = lines.next().expect("a prediction line").unwrap();
            if let Some((id, rest)) = line.trim_start().split_once("  predicted: ") {
                // `6 replace: …` → the step's number (`-` outside the table).
                predicted.insert(id.to_string(), rest.split(' ').next().unwrap().to_string());
            }
        }
        rt.reconcile_at(&db, now, false);
        let rest: Vec<String> = lines.map(Result::unwrap).collect();
        let code = child.wait().unwrap().code();
        for (id, step) in &predicted {
            let outcome = rest
                .iter()
                .find(|l| l.trim_start().starts_with(&format!("{id}  ")))
                .unwrap_or_else(|| panic!("{name}: no outcome for {id}: {rest:?}"));
            assert!(
                outcome.contains(&format!("✓ as predicted: step {step} → ")),
                "{name}: {outcome}"
            );
            followed += 1;
        }
        assert_eq!(code, Some(0), "{name}: {rest:?}");
    }
    assert!(followed >= 15, "{followed}");
}

#[test]
fn another_change_a_timeout_and_a_vanished_row_are_each_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "timeout-passed", dir.path());
    let (ids, now) = stuck(&db);
    assert_eq!(ids.len(), 1);
    let id = &ids[0];
    // Predicted: step 5 settles it failed. Requeued by hand instead: not as predicted.
    let child = wait(&db, now, &ids, "20s");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let conn = Connection::open(&db).unwrap();
    // A renewed lease first: no action.
    conn.execute(
        "UPDATE flue_agent_submissions SET lease_expires_at = lease_expires_at + 30000 WHERE submission_id = ?1",
        [id],
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    conn.execute(
        "UPDATE flue_agent_submissions SET status = 'queued', attempt_id = NULL WHERE submission_id = ?1",
        [id],
    )
    .unwrap();
    let (code, doc) = finished(child);
    let s = &doc["submissions"][0];
    assert_eq!(s["predicted"]["step"], 5);
    assert_eq!(s["observed"]["what"], "requeued", "{s}");
    assert_eq!(s["outcome"], "not_as_predicted");
    assert_eq!(code, Some(6));

    // Nothing happens: timed out.
    std::fs::create_dir(dir.path().join("b")).unwrap();
    let db = unpack_db("flue-2.1.0", "timeout-passed", &dir.path().join("b"));
    let (code, doc) = finished(wait(&db, now, &ids, "600ms"));
    assert_eq!(doc["submissions"][0]["outcome"], "timed_out");
    assert_eq!(code, Some(7));

    // The row deleted: vanished.
    let child = wait(&db, now, &ids, "20s");
    std::thread::sleep(std::time::Duration::from_millis(500));
    Connection::open(&db)
        .unwrap()
        .execute(
            "DELETE FROM flue_agent_submissions WHERE submission_id = ?1",
            [id],
        )
        .unwrap();
    let (code, doc) = finished(child);
    assert_eq!(doc["submissions"][0]["observed"]["what"], "vanished");
    assert_eq!(code, Some(6));
}
