//! The scale generator's histories, classified by turnscope, against the runtime's own classifier.
//!
//! `tests/fixtures/scale-0.01-seed7-verdicts.jsonl.gz` holds what flue's `classifySubmissionState`
//! and `findTrailingPartialToolBatch` said about every submission of
//! `turnscope demo DB --scale 0.01 --seed 7` generated at `TURNSCOPE_NOW_MS=1780000000000`
//! (the harness's `inspect.sh`; how to remake it is in `tests/fixtures/README.md`). The test
//! regenerates that database and checks that both the list scan and the per-submission `show`
//! agree with the runtime on every submission: the generator writes what the runtime would
//! read, and the fast list path gives the same verdicts as the full one.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{fixtures_dir, gunzip, turnscope_command};

const NOW_MS: &str = "1780000000000";

struct RuntimeVerdict {
    status: String,
    classification: Value,
    trailing: Option<Vec<String>>,
}

fn runtime_verdicts() -> BTreeMap<String, RuntimeVerdict> {
    let text = gunzip(&fixtures_dir().join("scale-0.01-seed7-verdicts.jsonl.gz"));
    let text = String::from_utf8(text).expect("utf-8 verdicts");
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("verdict line");
            let trailing = v["trailingPartialToolBatch"].as_array().map(|ids| {
                ids.iter()
                    .map(|id| id.as_str().expect("call id").to_string())
                    .collect()
            });
            (
                v["submissionId"].as_str().expect("id").to_string(),
                RuntimeVerdict {
                    status: v["status"].as_str().expect("status").to_string(),
                    classification: v["classification"].clone(),
                    trailing,
                },
            )
        })
        .collect()
}

fn run_json(db: &std::path::Path, args: &[&str]) -> Value {
    let out = turnscope_command()
        .env("TURNSCOPE_NOW_MS", NOW_MS)
        .arg("--db")
        .arg(db)
        .args(["--context-window", "200000"])
        .args(args)
        .output()
        .expect("run turnscope");
    assert!(
        out.status.success(),
        "turnscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

fn trailing_ids(batch: &Value) -> Option<Vec<String>> {
    batch.as_object().map(|b| {
        b["tool_calls"]
            .as_array()
            .expect("tool_calls")
            .iter()
            .map(|c| c["id"].as_str().expect("call id").to_string())
            .collect()
    })
}

#[test]
fn scale_database_classifies_as_the_runtime_did() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("scale.db");
    let gen = turnscope_command()
        .env("TURNSCOPE_NOW_MS", NOW_MS)
        .arg("demo")
        .arg(&db)
        .args(["--scale", "0.01", "--seed", "7"])
        .output()
        .expect("run demo --scale");
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );

    let expected = runtime_verdicts();
    assert_eq!(
        expected.len(),
        2000,
        "the recorded answers cover every submission"
    );

    // The list scan, status by status, must cover and agree on every submission.
    let mut seen = 0;
    let mut disagreements = Vec::new();
    for status in ["running", "queued", "settled", "terminalizing"] {
        let list = run_json(&db, &["list", "--status", status, "--json"]);
        for s in list["submissions"].as_array().expect("submissions") {
            let id = s["submission"]["submissionId"].as_str().expect("id");
            let want = expected
                .get(id)
                .unwrap_or_else(|| panic!("{id} is not in the runtime's answers"));
            assert_eq!(want.status, status, "{id}: status");
            seen += 1;
            if s["classification"] != want.classification
                || trailing_ids(&s["trailingPartialBatch"]) != want.trailing
            {
                disagreements.push(format!(
                    "list {id}: turnscope {} {} / runtime {} {:?}",
                    s["classification"],
                    s["trailingPartialBatch"],
                    want.classification,
                    want.trailing
                ));
            }
        }
    }
    assert_eq!(seen, expected.len(), "every submission was listed once");

    // `show` reads the whole session; check it on every submission that is not settled (the
    // ones an operator opens) and on a spread of settled ones.
    for (i, (id, want)) in expected.iter().enumerate() {
        if want.status == "settled" && i % 97 != 0 {
            continue;
        }
        let show = run_json(&db, &["show", id, "--json"]);
        let c = &show["classification"];
        if c["result"] != want.classification
            || trailing_ids(&c["trailingPartialBatch"]) != want.trailing
        {
            disagreements.push(format!(
                "show {id}: turnscope {} {} / runtime {} {:?}",
                c["result"], c["trailingPartialBatch"], want.classification, want.trailing
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreement(s) with the runtime:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
