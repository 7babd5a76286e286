//! The round trip through the real runtime: for every crash fixture, every stuck submission and
//! every action turnscope accepts on it, apply the action with the CLI (`--write -y --json`) to a
//! copy, hand the copy to the real runtime (`tests/runtime/resume.mjs`: its startup recovery and
//! queue drain), and check that
//! - the runtime settled every submission and logged no error,
//! - no tool call ran twice (the fixture's side file holds the crash run's executions, the resume
//!   appends its own),
//! - the acted-on submission ended the way turnscope predicted right after its write (the plan it
//!   printed in `after`: the rule the runtime's next pass applies, or the settled outcome).
//!
//! Each fixture runs twice: "as crashed", with every deadline moved by the time since the crash
//! so the runtime meets the state the fixture was made to show (its deadlines were an hour
//! after admission), and "aged", as the file is, where every deadline has long passed and the
//! runtime's rule 3 fails what a write did not settle.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::runtime_kit::{runtime, Runtime};
use crate::support::{fixtures_dir, gunzip, manifest, turnscope_command};

/// The actions tried on every stuck submission (`step-all`: `step` until nothing is offered), and
/// `reconcile` where this turnscope has it.
const ACTIONS: [&str; 6] = ["repair", "requeue", "fail", "step", "step-all", "reconcile"];

#[derive(Clone, Copy, Debug)]
enum Clock {
    AsCrashed,
    Aged,
}

struct Case {
    fixture: String,
    submission: String,
    action: &'static str,
    clock: Clock,
}

fn db_name(manifest_db: &str) -> String {
    match manifest_db {
        "large.db" => "large-tail".into(),
        other => other.trim_end_matches(".db").into(),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `<dir>/<name>.db` and `<dir>/<name>.side.jsonl`, writable copies.
fn copy_fixture(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let src = fixtures_dir().join("flue-beta7");
    let db = dir.join(format!("{name}.db"));
    let side = dir.join(format!("{name}.side.jsonl"));
    std::fs::write(&db, gunzip(&src.join(format!("{name}.db.gz")))).unwrap();
    std::fs::write(&side, gunzip(&src.join(format!("{name}.side.jsonl.gz")))).unwrap();
    (db, side)
}

/// Move every deadline by the time between the moment the manifest describes (every lease just
/// expired) and now, so the runtime sees the deadlines as they were at the crash.
fn rebase_deadlines(db: &Path, manifest_moment: i64) {
    let shift = now_ms() - manifest_moment;
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(
        "UPDATE flue_agent_submissions SET timeout_at = timeout_at + ?1 WHERE timeout_at > 0",
        [shift],
    )
    .unwrap();
}

/// Run one turnscope action; `Some(document)` when it wrote, `None` when it refused or had
/// nothing to do.
fn act(db: &Path, action: &str, id: &str) -> Option<Value> {
    let mut cmd = turnscope_command();
    cmd.arg("--db")
        .arg(db)
        .args(["--write", "--operator", "round-trip"])
        // Every call the write answers `interrupted` is acknowledged: the round trip is what
        // checks that no tool runs twice.
        .args([action, id, "-y", "--json", "--ack-side-effects"]);
    if action == "fail" {
        cmd.args(["--reason", "round trip through the real runtime"]);
    }
    let out = cmd.output().unwrap();
    if !out.status.success() {
        return None;
    }
    let doc: Value = serde_json::from_slice(&out.stdout).ok()?;
    (doc["noop"] != Value::Bool(true)).then_some(doc)
}

/// The last document of a successful run of the action, `step-all` stepping until turnscope has
/// no next write to offer (at most ten steps).
fn apply(db: &Path, action: &str, id: &str) -> Option<Value> {
    if action != "step-all" {
        return act(db, action, id);
    }
    let mut last = None;
    for _ in 0..10 {
        match act(db, "step", id) {
            Some(doc) => last = Some(doc),
            None => break,
        }
    }
    last
}

/// What turnscope said the runtime does next, as one of the outcomes the resume report shows.
fn predicted(doc: &Value, db: &Path, id: &str) -> Result<&'static str, String> {
    let after = &doc["after"];
    if after.is_null() {
        return Err("the action's document has no `after` (the re-read failed)".into());
    }
    match after["rule"].as_u64() {
        Some(1) => return Ok("completed"),
        Some(2 | 3 | 8 | 9) => return Ok("failed"),
        // Rule 7's requeue starts attempt n+1 in the same pass, like a replacement.
        Some(4..=7) => return Ok("new attempt"),
        Some(r) => return Err(format!("unknown rule {r}")),
        None => {}
    }
    match after["verdict"].as_str() {
        Some("pending") => Ok("requeued"),
        Some("completed") => Ok("completed"),
        Some("failed") => Ok("failed"),
        Some("publishing") => {
            // The outcome is decided in the reserved terminal event the runtime publishes.
            let c = rusqlite::Connection::open(db).unwrap();
            let event: String = c
                .query_row(
                    "SELECT terminal_event_json FROM flue_agent_submissions WHERE submission_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .map_err(|e| e.to_string())?;
            let event: Value = serde_json::from_str(&event).map_err(|e| e.to_string())?;
            Ok(if event["outcome"] == "completed" {
                "completed"
            } else {
                "failed"
            })
        }
        other => Err(format!("no prediction in `after`: {other:?}")),
    }
}

/// The outcomes a rule of the reconciler leads to on these fixtures.
fn outcome_of_rule(rule: u32) -> &'static [&'static str] {
    match rule {
        1 => &["completed"],
        2 | 3 | 8 | 9 => &["failed"],
        _ => &["new attempt", "requeued"],
    }
}

/// What the runtime did with the acted-on submission.
fn observed(s: &Value) -> &'static str {
    let before = s["attemptCountBefore"].as_i64().unwrap_or(0);
    let after = s["attemptCountAfter"].as_i64().unwrap_or(0);
    match s["statusBefore"].as_str() {
        Some("queued") => "requeued",
        Some("running" | "terminalizing") if after > before => "new attempt",
        _ => match s["outcome"].as_str() {
            Some("completed") => "completed",
            Some("failed") => "failed",
            _ => "unsettled",
        },
    }
}

/// The round trip of one case; `Ok(None)` when turnscope refused the action.
fn round_trip(rt: &Runtime, case: &Case, moment: i64) -> Result<Option<String>, String> {
    let dir = tempfile::tempdir().unwrap();
    let (db, side) = copy_fixture(dir.path(), &case.fixture);
    if matches!(case.clock, Clock::AsCrashed) {
        rebase_deadlines(&db, moment);
    }
    let Some(doc) = apply(&db, case.action, &case.submission) else {
        return Ok(None);
    };
    let want = predicted(&doc, &db, &case.submission)?;
    let report = rt.drive(
        "resume.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--side".as_ref(),
            side.as_os_str(),
        ],
    );
    let mut problems = Vec::new();
    for e in report["runtimeErrorsLogged"]
        .as_array()
        .into_iter()
        .flatten()
    {
        problems.push(format!("runtime error: {e}"));
    }
    let subs = report["submissions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for s in &subs {
        let sid = s["submissionId"].as_str().unwrap_or("?");
        if s["statusAfter"] != "settled" {
            problems.push(format!("{sid} left {}", s["statusAfter"]));
        }
        if s["doubleExecuted"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
        {
            problems.push(format!(
                "{sid} ran tool calls twice: {}",
                s["doubleExecuted"]
            ));
        }
    }
    let Some(acted) = subs
        .iter()
        .find(|s| s["submissionId"] == case.submission.as_str())
    else {
        return Err("the acted-on submission is missing from the resume report".into());
    };
    let got = observed(acted);
    if got != want {
        problems.push(format!(
            "turnscope predicted {want} (after: {}), the runtime: {got} (error {}, attempts {} -> {})",
            doc["after"], acted["error"], acted["attemptCountBefore"], acted["attemptCountAfter"]
        ));
    }
    if report["waitedForLeasesMs"].as_i64().unwrap_or(0) > 0 {
        problems.push(format!(
            "the runtime had to wait {} ms for a lease turnscope's write left live",
            report["waitedForLeasesMs"]
        ));
    }
    // The preview's prediction (computed from the planned rows before the write), where it names
    // a rule, is reported beside the result.
    let preview_rule = doc["prediction"]["rule"].as_u64().map(|r| r as u32);
    let note = match preview_rule {
        Some(r) if !outcome_of_rule(r).contains(&got) => {
            format!("; the preview said rule {r}, which contradicts it")
        }
        _ => String::new(),
    };
    if problems.is_empty() {
        Ok(Some(format!(
            "{want} (rule {}){note}",
            doc["after"]["rule"]
        )))
    } else {
        Err(problems.join("; "))
    }
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn every_accepted_action_round_trips_through_the_real_runtime() {
    let rt = runtime("runtime_roundtrip");
    let m = manifest();
    let mut cases = Vec::new();
    let mut moments = std::collections::HashMap::new();
    for fixture in m["fixtures"].as_array().unwrap() {
        let name = db_name(fixture["db"].as_str().unwrap());
        moments.insert(
            name.clone(),
            fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1,
        );
        for s in fixture["submissions"].as_array().unwrap() {
            if s["status"] == "settled" {
                continue;
            }
            for clock in [Clock::AsCrashed, Clock::Aged] {
                for action in ACTIONS {
                    if action == "reconcile" && !crate::runtime_kit::turnscope_has("reconcile") {
                        continue;
                    }
                    cases.push(Case {
                        fixture: name.clone(),
                        submission: s["submissionId"].as_str().unwrap().to_string(),
                        action,
                        clock,
                    });
                }
            }
        }
    }
    let started = std::time::Instant::now();
    let next = Mutex::new(cases.iter());
    let results = Mutex::new(Vec::new());
    // Each run is a Node process that mostly waits on SQLite; three at a time keep two cores busy.
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| loop {
                let Some(case) = next.lock().unwrap().next() else {
                    break;
                };
                let r = round_trip(rt, case, moments[&case.fixture]);
                results.lock().unwrap().push((case, r));
            });
        }
    });
    let results = results.into_inner().unwrap();
    // One line per case (shown with --nocapture or when the test fails).
    for (c, r) in &results {
        let what = match r {
            Ok(None) => "refused by turnscope".to_string(),
            Ok(Some(outcome)) => format!("ok: {outcome}"),
            Err(e) => format!("FAILED: {e}"),
        };
        eprintln!(
            "{:<32} {} {:<9} {:<10} {what}",
            c.fixture,
            &c.submission[..8],
            c.action,
            format!("{:?}", c.clock)
        );
    }
    let accepted: Vec<_> = results
        .iter()
        .filter(|(_, r)| !matches!(r, Ok(None)))
        .collect();
    let failures: Vec<String> = accepted
        .iter()
        .filter_map(|(c, r)| {
            r.as_ref().err().map(|e| {
                format!(
                    "{} {} {} ({:?}): {e}",
                    c.fixture,
                    &c.submission[..8],
                    c.action,
                    c.clock
                )
            })
        })
        .collect();
    let contradicted = results
        .iter()
        .filter(|(_, r)| {
            r.as_ref()
                .is_ok_and(|o| o.as_ref().is_some_and(|o| o.contains("contradicts")))
        })
        .count();
    eprintln!(
        "runtime_roundtrip: {} cases, {} accepted by turnscope and resumed by the runtime, {} failed, {contradicted} previews (`prediction`) contradicted by the runtime, {:.1} s",
        results.len(),
        accepted.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    // Both clocks, every fixture: the suite is void if turnscope accepted (almost) nothing.
    assert!(
        accepted.len() >= 40,
        "only {} actions were accepted",
        accepted.len()
    );
    assert!(
        failures.is_empty(),
        "{} round trips failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The check above can fail: a copy of `tool-batch-mid` whose crashed submission lost its journal
/// and has its leaf moved back to the input looks to the runtime like a turn never started
/// (`resume`/`input_only`, rule 5), so it replays the turn and the model asks for the same tool
/// calls again, which the side file shows as second executions.
#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn a_replayed_tool_batch_shows_as_double_execution() {
    let rt = runtime("runtime_roundtrip (double-execution control)");
    let dir = tempfile::tempdir().unwrap();
    let (db, side) = copy_fixture(dir.path(), "tool-batch-mid");
    let m = manifest();
    let fixture = m["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["db"] == "tool-batch-mid.db")
        .unwrap();
    rebase_deadlines(&db, fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1);
    let crashed = fixture["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["status"] == "running")
        .unwrap();
    let id = crashed["submissionId"].as_str().unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        let session: String = c
            .query_row(
                "SELECT session_key FROM flue_agent_submissions WHERE submission_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        let input: String = c
            .query_row(
                "SELECT entry_id FROM flue_session_entries WHERE session_id = ?1 AND json_extract(data, '$.dispatch.dispatchId') = ?2",
                [&session, id],
                |r| r.get(0),
            )
            .unwrap();
        c.execute(
            "UPDATE flue_sessions SET data = json_set(data, '$.leafId', ?2) WHERE id = ?1",
            [&session, &input],
        )
        .unwrap();
        c.execute(
            "DELETE FROM flue_agent_turn_journals WHERE submission_id = ?1",
            [id],
        )
        .unwrap();
    }
    let report = rt.drive(
        "resume.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--side".as_ref(),
            side.as_os_str(),
        ],
    );
    let acted = report["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["submissionId"] == id)
        .unwrap();
    assert_eq!(acted["outcome"], "completed", "{acted}");
    assert_eq!(
        acted["doubleExecuted"],
        json!(["tc_crash_0_0", "tc_crash_0_1", "tc_crash_0_2"]),
        "{acted}"
    );
}

/// `turnscope wait` started beside the real runtime's resume: its JSON document and exit code.
fn wait_beside_the_runtime(
    rt: &Runtime,
    db: &Path,
    side: &Path,
    id: &str,
    meanwhile: impl FnOnce(),
) -> (i32, Value) {
    let child = turnscope_command()
        .env_remove("TURNSCOPE_NOW_MS")
        .arg("--db")
        .arg(db)
        .args([
            "wait",
            id,
            "--timeout",
            "120s",
            "--interval",
            "200ms",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its prediction is read before it first sleeps.
    std::thread::sleep(std::time::Duration::from_millis(800));
    meanwhile();
    let report = rt.drive(
        "resume.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--side".as_ref(),
            side.as_os_str(),
        ],
    );
    assert!(
        report["runtimeErrorsLogged"]
            .as_array()
            .is_none_or(|e| e.is_empty()),
        "{report:#}"
    );
    let o = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code().unwrap(), doc)
}

/// `wait` follows a stuck submission while the real runtime resumes it: after a repair the
/// runtime's pass replaces the attempt (rule 5), as predicted, exit 0; with its deadline moved
/// into the past after the prediction was made, the runtime fails it by rule 3 instead of rule
/// 6's replacement, and `wait` says so, exit 6.
#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn wait_reports_what_the_real_runtime_did_beside_the_prediction() {
    let rt = runtime("runtime_wait");
    let m = manifest();
    let fixture = m["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["db"] == "tool-batch-mid.db")
        .expect("the tool-batch-mid fixture");
    let moment = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
    let id = fixture["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["status"] != "settled")
        .and_then(|s| s["submissionId"].as_str())
        .unwrap()
        .to_string();

    // A write, then the runtime resumes: as predicted.
    let dir = tempfile::tempdir().unwrap();
    let (db, side) = copy_fixture(dir.path(), "tool-batch-mid");
    rebase_deadlines(&db, moment);
    let doc = act(&db, "repair", &id).expect("the repair applies");
    assert_eq!(doc["after"]["rule"], 5, "{doc:#}");
    let (code, w) = wait_beside_the_runtime(rt, &db, &side, &id, || {});
    let s = &w["submissions"][0];
    assert_eq!(s["predicted"]["rule"], 5, "{w:#}");
    assert_eq!(s["observed"]["rule"], 5, "{w:#}");
    assert_eq!(s["outcome"], "as_predicted", "{w:#}");
    assert_eq!(code, 0, "{w:#}");

    // A forced mismatch: predicted from the rows as they are (rule 6), then the deadline moved
    // into the past before the runtime's pass.
    let dir = tempfile::tempdir().unwrap();
    let (db, side) = copy_fixture(dir.path(), "tool-batch-mid");
    rebase_deadlines(&db, moment);
    let (code, w) = wait_beside_the_runtime(rt, &db, &side, &id, || {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE flue_agent_submissions SET timeout_at = 1 WHERE submission_id = ?1",
                [&id],
            )
            .unwrap();
    });
    let s = &w["submissions"][0];
    assert_eq!(s["predicted"]["rule"], 6, "{w:#}");
    assert_eq!(s["observed"]["rule"], 3, "{w:#}");
    assert_eq!(s["observed"]["what"], "failed", "{w:#}");
    assert_eq!(s["outcome"], "not_as_predicted", "{w:#}");
    assert_eq!(code, 6, "{w:#}");
}
