//! The scale generator's histories, classified by turnscope, against the runtime's own classifier.
//!
//! `tests/fixtures/scale-0.01-seed7-verdicts.jsonl.gz` holds what flue's `classifySubmissionState`
//! and `findTrailingPartialToolBatch` said about every submission of
//! `turnscope demo DB --scale 0.01 --seed 7` generated at `TURNSCOPE_NOW_MS=1780000000000`
//! (the harness's `inspect.sh`; how to remake it is in `tests/fixtures/README.md`), and
//! `scale-runtime-0.005-seed7-verdicts.jsonl.gz` the same for
//! `--profile runtime --scale 0.005 --seed 7 --whale-entries 5000` (its whale's stuck submission
//! has 5,000 entries after its input and 1,000 abandoned). Each test regenerates its database and
//! checks that both the list scan and the per-submission `show` agree with the runtime on every
//! submission: the generator writes what the runtime would read, and the fast list path gives the
//! same verdicts as the full one.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{fixtures_dir, gunzip, turnscope_command};

const NOW_MS: &str = "1780000000000";

struct RuntimeVerdict {
    status: String,
    classification: Value,
    trailing: Option<Vec<String>>,
}

fn runtime_verdicts(fixture: &str) -> BTreeMap<String, RuntimeVerdict> {
    let text = gunzip(&fixtures_dir().join(fixture));
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
    agrees_with_the_runtime(
        (0.01, 7, false, None),
        "scale-0.01-seed7-verdicts.jsonl.gz",
        2000,
        97,
    );
}

/// The runtime profile, whale included: `list` on every submission, `show` on every one not
/// settled (the whale's 5,000-entry history among them) and every fifth settled one.
#[test]
fn runtime_profile_classifies_as_the_runtime_did() {
    let whale = agrees_with_the_runtime(
        (0.005, 7, true, Some(5000)),
        "scale-runtime-0.005-seed7-verdicts.jsonl.gz",
        740,
        5,
    );
    // The whale's history after its input was shown whole, and it is the partly recorded batch.
    assert_eq!(whale["following"].as_array().map(Vec::len), Some(5000));
    assert_eq!(
        whale["classification"]["result"]["mode"],
        "tool_results_partial"
    );
}

/// Generate the scale database (factor, seed, runtime profile, whale entries), and check `list` (every submission) and `show`
/// (every one not settled and every `show_every`-th settled one) against the runtime's answers
/// in `fixture` (`count` submissions). Returns the whale's `show --json`.
fn agrees_with_the_runtime(
    (factor, seed, runtime, whale): (f64, u64, bool, Option<usize>),
    fixture: &str,
    count: usize,
    show_every: usize,
) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("scale.db");
    let summary = crate::support::scale_db(
        &db,
        factor,
        seed,
        runtime,
        whale,
        NOW_MS.parse().expect("NOW_MS"),
    );
    let whale_id = summary.whale_submission_id.as_str();

    let expected = runtime_verdicts(fixture);
    assert_eq!(
        expected.len(),
        count,
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
    // A long listing is inspected on two threads (two connections, one snapshot); with a limit
    // it is inspected on one. Both hand on the same items in the same order.
    let both = run_json(&db, &["list", "--status", "all", "--json"]);
    let one = run_json(
        &db,
        &["list", "--status", "all", "--json", "--limit", "100000"],
    );
    assert_eq!(
        both["submissions"].as_array().map(Vec::len),
        Some(expected.len())
    );
    assert!(
        both["submissions"] == one["submissions"],
        "two threads and one list different items"
    );
    // Read in pages of 97 rows (the view of thousands of rows in tens of pages, each inspected
    // before the next is read, the walks kept across pages): the same items.
    let paged = run_json(
        &db,
        &["list", "--status", "all", "--json", "--page-rows", "97"],
    );
    assert!(
        both["submissions"] == paged["submissions"],
        "a listing read in pages lists different items"
    );

    // `show` reads the whole session; check it on every submission that is not settled (the
    // ones an operator opens) and on a spread of settled ones.
    let mut whale = None;
    for (i, (id, want)) in expected.iter().enumerate() {
        if want.status == "settled" && i % show_every != 0 {
            continue;
        }
        let show = run_json(&db, &["show", id, "--json"]);
        if id == whale_id {
            whale = Some(show.clone());
        }
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
    whale.expect("the whale was shown")
}
