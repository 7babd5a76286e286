//! An abort written by turnscope while the real flue 2.1.0 runtime runs the submission under its
//! own lease (`tests/runtime2/live.mjs`): the one write turnscope makes under a live lease, since
//! the owner reads it back itself (its deadline scan). The preview says the owner honours it and
//! plans step 3 at the lease's end; the runtime then aborts the running tool call through its
//! signal and settles the row `aborted` with the text and settlement that plan names, the call
//! run once. A second message queued behind it, aborted too, is settled `aborted` by the attempt
//! that claims it, before any model call, as its plan says.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::runtime_kit::runtime2;
use crate::support::turnscope_command;

fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "live")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// The side file's `live_ready` event: the submission whose tool call now runs, and the one
/// queued behind it.
fn ready(side: &Path) -> Option<(String, String)> {
    let f = std::fs::File::open(side).ok()?;
    std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find(|e| e["event"] == "live_ready")
        .and_then(|e| {
            Some((
                e["submissionId"].as_str()?.to_string(),
                e["queuedId"].as_str()?.to_string(),
            ))
        })
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn an_abort_under_the_live_owners_lease_is_honoured_by_the_running_runtime() {
    let rt = runtime2("runtime2_live_abort");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let side = dir.path().join("side.jsonl");
    let mut child = Command::new(&rt.node)
        .current_dir(&rt.drivers)
        .arg("--no-warnings")
        .arg(rt.drivers.join("live.mjs"))
        .arg("--db")
        .arg(&db)
        .arg("--side")
        .arg(&side)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let (id, queued) = loop {
        if let Some(ids) = ready(&side) {
            break ids;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "live.mjs ended ({status}) before its tool call ran:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the runtime never started the tool call"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let q = turnscope(&db, &["--write", "abort", &queued, "-y", "--json"]);
    let dry = turnscope(&db, &["--write", "abort", &id, "--dry-run", "--json"]);
    let abort = turnscope(&db, &["--write", "abort", &id, "-y", "--json"]);
    let out = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&abort.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&abort.stderr));
    });
    assert!(abort.status.success(), "{doc}");
    let dry: Value = serde_json::from_slice(&dry.stdout).unwrap();
    // Both were planned under the live lease: the owner's scan next, step 3 at the lease's end.
    for d in [&dry, &doc] {
        assert_eq!(d["preview"]["fence"]["liveLease"], true, "{d}");
        assert_eq!(d["next"]["name"], "lease_held", "{d}");
        assert!(d["next"]["reason"]
            .as_str()
            .unwrap()
            .contains("with an abort intent"));
        assert_eq!(d["thenWhen"], "lease_end");
        assert_eq!(d["then"]["name"], "abort");
    }
    assert!(doc["applied"]["auditId"].as_i64().is_some());
    let q: Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!(q["next"]["name"], "queued", "{q}");
    assert!(
        q["next"]["reason"]
            .as_str()
            .unwrap()
            .contains("that attempt settles it aborted before anything else"),
        "{q}"
    );
    assert!(q["applied"]["auditId"].as_i64().is_some(), "{q}");
    let ran: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "live.mjs printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        out.status.success() && ran["settled"] == true,
        "the runtime did not settle it: {ran}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = &ran["row"];
    let predicted = &doc["then"]["rowAfter"];
    assert_eq!(row["status"], "settled");
    assert_eq!(row["error"], predicted["error"], "{row}");
    assert_eq!(row["attempt_id"], doc["preview"]["fence"]["attemptId"]);
    let record: Value = serde_json::from_str(row["settlement_record"].as_str().unwrap()).unwrap();
    assert_eq!(
        record["outcome"], predicted["settlementOutcome"],
        "{record}"
    );
    // The call ran once, and its signal was aborted.
    let ends = ran["toolEnds"].as_array().unwrap();
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["aborted"], true);
    // The queued message: settled aborted by the attempt that claimed it, the model never called.
    let qrow = &ran["queuedRow"];
    assert_eq!(qrow["status"], "settled", "{qrow}");
    assert_eq!(qrow["error"], predicted["error"], "{qrow}");
    let calls = ran["modelCalls"].as_array().unwrap();
    assert!(calls.iter().all(|c| c["tag"] == "live"), "{calls:?}");
    // The runtime acted on both: undo is refused, nothing written.
    for audit in ["1", "2"] {
        let undo = turnscope(&db, &["--write", "undo", audit, "-y"]);
        assert_eq!(undo.status.code(), Some(3), "undo {audit}");
    }
}
