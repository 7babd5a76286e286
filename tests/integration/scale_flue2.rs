//! The scale generator's `flue2` profile writes what flue 2.1.0 writes: the runtime's schema
//! byte for byte (`sqlite_master` against a fixture the real runtime wrote), streams that fold
//! (turnscope's fold, the port checked against the runtime's reducer), every stuck shape and row
//! state it promises, `list --expired` exactly the expired rows, and, against the real 2.1.0
//! classifier (`tests/runtime2/classify.mjs`), the same classification and trailing batch for
//! every submission of a small journal.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};

use crate::runtime_kit::runtime2;
use crate::support::{turnscope_command, unpack_db};

const NOW_MS: i64 = 1_780_000_000_000;

fn generate(path: &Path, factor: f64, whale: usize) -> turnscope_bench::scale::ScaleSummary {
    let opts = ScaleOptions::for_profile(ScaleProfile::Flue2, factor, NOW_MS)
        .with_whale_entries(whale)
        .expect("a whale in range");
    write_scale(path, &opts).expect("the flue2 profile writes")
}

fn schema(db: &Path) -> Vec<(String, String, Option<String>)> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY rowid")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn run_json(db: &Path, args: &[&str]) -> Value {
    let out = turnscope_command()
        .env("TURNSCOPE_NOW_MS", NOW_MS.to_string())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run turnscope");
    assert!(
        out.status.success(),
        "turnscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn flue2_profile_has_the_runtimes_schema_and_every_stream_folds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flue2.db");
    let s = generate(&db, 0.002, 3_000);
    let fixture = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    assert_eq!(
        schema(&db),
        schema(&fixture),
        "sqlite_master as 2.1.0 writes it"
    );

    // Deterministic: the same options write the same rows.
    let again = dir.path().join("again.db");
    let t = generate(&again, 0.002, 3_000);
    assert_eq!(
        (s.entries, &s.whale_submission_id),
        (t.entries, &t.whale_submission_id)
    );
    let dump = |p: &Path| -> Vec<String> {
        let c = Connection::open(p).unwrap();
        let mut st = c
            .prepare("SELECT path || seq || data FROM flue_conversation_stream_batches ORDER BY path, seq")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(dump(&db), dump(&again));

    let reader = turnscope_store::Flue2SqliteReader::open(&db).unwrap();
    let c = Connection::open(&db).unwrap();
    let paths: Vec<String> = c
        .prepare("SELECT path FROM flue_conversation_streams ORDER BY path")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(paths.len(), s.sessions);
    let mut records = 0;
    let mut whale_records = 0;
    for p in &paths {
        let f = turnscope_engine::flue2::fold_stream(&reader, p).unwrap();
        let state = f.state.unwrap_or_else(|e| panic!("{p} does not fold: {e}"));
        assert_eq!(state.conversations.len(), 1, "{p}: one root conversation");
        let n: usize = reader
            .stream_batches(p)
            .unwrap()
            .iter()
            .map(|b| turnscope_core::flue2::parse_batch(&b.data).unwrap().len())
            .sum();
        records += n;
        if s.whale_session_key
            .contains(&format!("\"{}\"", p.rsplit('/').next().unwrap()))
        {
            whale_records = n;
        }
    }
    assert_eq!(records, s.entries, "every record written is read back");
    assert!(
        (2_960..3_040).contains(&whale_records),
        "the whale's stream holds ~3,000 records: {whale_records}"
    );

    // `list --expired` is exactly the running rows whose lease ended, each classified, every
    // stuck shape and row state among them.
    let want: BTreeSet<String> = c
        .prepare(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' \
             AND lease_expires_at > 0 AND lease_expires_at < ?1",
        )
        .unwrap()
        .query_map([NOW_MS], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(want.len(), s.expired);
    let list = run_json(&db, &["list", "--expired", "--json"]);
    let rows = list["submissions"].as_array().expect("submissions");
    let got: BTreeSet<String> = rows
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, want);
    let mut labels = BTreeSet::new();
    let mut steps = BTreeSet::new();
    for r in rows {
        assert!(
            r["verdict"]["classification"]["kind"].is_string(),
            "{} is classified: {r}",
            r["id"]
        );
        labels.insert(r["verdict"]["label"].as_str().unwrap().to_string());
        steps.insert(r["plan"]["name"].as_str().unwrap_or("?").to_string());
    }
    for l in [
        "absent",
        "completed",
        "terminal_error",
        "tool_use_unresolved",
        "resume/input_only",
        "resume/tool_results_partial",
        "resume/transient_retry",
        "resume/overflow",
    ] {
        assert!(labels.contains(l), "{l} among {labels:?}");
    }
    for step in [
        "completed",
        "abort",
        "budget",
        "timeout",
        "replace",
        "requeue",
    ] {
        assert!(steps.contains(step), "{step} among {steps:?}");
    }
    // The whale: its stuck submission ends in the trailing partial batch (3 calls, 1 outcome).
    let show = run_json(&db, &["show", &s.whale_submission_id, "--json"]);
    let calls = show["trailingPartialToolBatch"]
        .as_array()
        .unwrap_or_else(|| panic!("a trailing batch: {}", show["trailingPartialToolBatch"]));
    assert_eq!(calls.len(), 3);
    assert_eq!(show["classification"]["mode"], "tool_results_partial");
}

/// The real 2.1.0 classifier on a small generated journal: every submission classified as
/// turnscope classifies it, with the same trailing partial batch.
#[test]
#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "flue 2.1.0 cannot be installed here (see build.rs)"
)]
fn flue2_profile_classifies_as_the_real_runtime() {
    let rt = runtime2("scale_flue2");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flue2.db");
    generate(&db, 0.001, 600);
    let theirs = rt.drive("classify.mjs", &[db.as_os_str()]);
    let subs = theirs["submissions"].as_array().expect("submissions");
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for sub in subs {
        let id = sub["submissionId"].as_str().unwrap();
        let ours = run_json(&db, &["classify", id, "--json"]);
        assert_eq!(ours["classification"], sub["classification"], "{id}");
        assert_eq!(
            ours["trailingPartialToolBatch"], sub["trailingPartialToolBatch"],
            "{id}"
        );
        *by_kind
            .entry(
                sub["classification"]["kind"]
                    .as_str()
                    .unwrap_or("-")
                    .to_string(),
            )
            .or_default() += 1;
    }
    assert!(subs.len() >= 50, "{} submissions", subs.len());
    for k in [
        "absent",
        "completed",
        "resume",
        "terminal_error",
        "tool_use_unresolved",
    ] {
        assert!(by_kind.contains_key(k), "{k} among {by_kind:?}");
    }
}
