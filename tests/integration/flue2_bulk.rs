//! Bulk applies on a flue 2.x journal through the binary, on copies of the 2.1.0 crash fixtures
//! at the real clock: several ids or `--all` with list's filters, one grouped preview (what is
//! written and the next pass, the refusals with their reasons), exit 3 when any is refused, one
//! batch id on every audit record, only the previewed columns written, and `undo BATCH`
//! restoring every row.

use std::path::Path;

use serde_json::Value;

use crate::support::{db_fixture_names, flue2_submission_rows, turnscope_as, unpack_db};

fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    turnscope_as(db, "bulk", args)
}

/// Every row, every column, as text (for byte-for-byte comparisons).
fn rows(db: &Path) -> Vec<Vec<String>> {
    flue2_submission_rows(db, &[])
}

fn column(db: &Path, id: &str, col: &str) -> Option<i64> {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            &format!("SELECT {col} FROM flue_agent_submissions WHERE submission_id = ?1"),
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn abort_all_previews_groups_and_refusals_then_writes_one_batch_that_undo_reverts() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let before = rows(&db);
    let file = std::fs::read(&db).unwrap();
    // Every row: the settled one is refused, so the dry run exits 3 and writes nothing.
    let dry = turnscope(
        &db,
        &[
            "--write",
            "abort",
            "--all",
            "--status",
            "all",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(dry.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(doc["schema"], "turnscope.flue2.bulk/1");
    assert_eq!(doc["format"], "flue-2.x");
    assert_eq!(doc["counts"]["selected"], 3);
    assert_eq!(doc["counts"]["refused"], 1);
    let by_status: Vec<(String, String)> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["outcome"].as_str().unwrap().to_string(),
                i["next"]["name"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    assert_eq!(
        by_status,
        [
            ("refused".to_string(), "-".to_string()),
            ("planned".to_string(), "abort".to_string()),
            ("planned".to_string(), "queued".to_string()),
        ]
    );
    assert_eq!(std::fs::read(&db).unwrap(), file, "a dry run wrote");
    // The text preview: one group per write and next pass, the refusal with its reason.
    let text = turnscope(
        &db,
        &["--write", "abort", "--all", "--status", "all", "--dry-run"],
    );
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(
        t.contains("abort on 3 submissions (--all --status all)"),
        "{t}"
    );
    assert!(
        t.contains("1 to write abort_requested_at; next: 3 abort"),
        "{t}"
    );
    assert!(
        t.contains("1 to write abort_requested_at; next: - queued"),
        "{t}"
    );
    assert!(t.contains("1 refused (nothing written to them):"), "{t}");
    assert!(
        t.contains("settled: the runtime does nothing more with it"),
        "{t}"
    );
    // The running and the queued row by id: one batch, both written, nothing else.
    let ids: Vec<String> = doc["items"].as_array().unwrap()[1..]
        .iter()
        .map(|i| i["submissionId"].as_str().unwrap().to_string())
        .collect();
    let applied = turnscope(&db, &["--write", "abort", &ids[0], &ids[1], "-y", "--json"]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let doc: Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(doc["counts"]["applied"], 2, "{doc}");
    let batch = doc["batchId"].as_str().unwrap().to_string();
    let after = rows(&db);
    let abort_col = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let s = c.prepare("SELECT * FROM flue_agent_submissions").unwrap();
        s.column_names()
            .iter()
            .position(|n| *n == "abort_requested_at")
            .unwrap()
    };
    for (b, a) in before.iter().zip(&after) {
        for (k, (x, y)) in b.iter().zip(a).enumerate() {
            if k != abort_col {
                assert_eq!(x, y, "column {k} changed");
            }
        }
    }
    for id in &ids {
        assert!(column(&db, id, "abort_requested_at").is_some());
    }
    let audit = turnscope(&db, &["audit", "--batch", &batch, "--json"]);
    let audit: Value = serde_json::from_slice(&audit.stdout).unwrap();
    let records = audit["records"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{audit}");
    assert!(records.iter().all(|r| r["batch_id"] == batch.as_str()));
    // The batch undone as a whole: every row as it was.
    let undo = turnscope(&db, &["--write", "undo", &batch, "-y"]);
    assert!(
        undo.status.success(),
        "{}",
        String::from_utf8_lossy(&undo.stderr)
    );
    assert_eq!(rows(&db), before);
}

#[test]
fn extend_all_with_a_filter_acts_on_every_stuck_row_the_filter_selects() {
    let dir = tempfile::tempdir().unwrap();
    let mut selected = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let sub = dir.path().join(&name);
        std::fs::create_dir_all(&sub).unwrap();
        let db = unpack_db("flue-2.1.0", &name, &sub);
        // What `list` selects with the same filter is what the bulk plans.
        let list = turnscope(&db, &["list", "--expired", "--rule", "5", "--json"]);
        let list: Value = serde_json::from_slice(&list.stdout).unwrap();
        let want: Vec<String> = list["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        let o = turnscope(
            &db,
            &[
                "--write",
                "extend",
                "--all",
                "--rule",
                "5",
                "--deadline",
                "1h",
                "-y",
                "--json",
            ],
        );
        if want.is_empty() {
            assert_eq!(o.status.code(), Some(3), "{name}: an empty selection");
            assert!(String::from_utf8_lossy(&o.stderr).contains("the selection is empty"));
            continue;
        }
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        let got: Vec<String> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["submissionId"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, want, "{name}");
        selected += got.len();
        // The deadline moved an hour ahead: the next pass is no longer the timeout.
        for i in doc["items"].as_array().unwrap() {
            assert_eq!(i["outcome"], "applied");
            assert_ne!(i["next"]["name"], "timeout", "{name}: {i}");
            let id = i["submissionId"].as_str().unwrap();
            assert!(column(&db, id, "timeout_at").unwrap() > turnscope_store::clock::now_ms());
        }
    }
    assert!(selected > 0, "no fixture has a row whose deadline passed");
}
