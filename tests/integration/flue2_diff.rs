//! `diff` on flue 2.x, through the binary, on copies of the 2.1.0 fixtures: an export and its
//! journal are equal (exit 0); after an `extend` the row's changed columns are exactly the
//! difference, with the values SQL reads (exit 1); an export of an earlier state of the stream
//! (its last batch not yet written) differs from the journal by exactly the conversation entries
//! `show --json` has in one and not the other, and the stream's batch count; bad sides are one
//! line (exit 4 for a submission not found, as `show`; 2 for a file that is not a 2.x export).

use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::unpack_db;

fn turnscope(db: &Path, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", "1767604800000")
        .env("TURNSCOPE_OPERATOR", "diff-test@host")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)))
}

fn first_id(db: &Path) -> String {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' ORDER BY sequence LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

fn export(db: &Path, id: &str, to: &Path) {
    let o = turnscope(db, &["export", id, "-o", to.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn an_export_equals_its_journal_and_an_extend_is_exactly_the_columns_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-call-no-outcome", dir.path());
    let id = first_id(&db);
    let before = dir.path().join("before.json");
    export(&db, &id, &before);
    let b = before.to_str().unwrap();

    let same = turnscope(&db, &["diff", b, &id, "--json"]);
    assert_eq!(same.status.code(), Some(0));
    let doc = json_of(&same);
    assert_eq!(doc["schema"], "turnscope.flue2.diff/1");
    assert_eq!(doc["equal"], true);
    assert_eq!(doc["differences"], serde_json::json!([]));
    let text = turnscope(&db, &["diff", b, &id]);
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains("equal:"));

    let columns = |db: &Path| -> (i64, i64) {
        Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT max_attempts, timeout_at FROM flue_agent_submissions WHERE submission_id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    let (max_before, timeout_before) = columns(&db);
    let o = turnscope(&db, &["--write", "extend", &id, "--attempts", "3", "-y"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (max_after, timeout_after) = columns(&db);
    assert_ne!(max_before, max_after);
    assert_eq!(timeout_before, timeout_after);

    let changed = turnscope(&db, &["diff", b, &id, "--json"]);
    assert_eq!(changed.status.code(), Some(1), "different exits 1");
    let doc = json_of(&changed);
    assert_eq!(doc["equal"], false);
    let fields: Vec<&str> = doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    // The row's column, and what follows from it at this clock (the budget no longer spent
    // changes nothing here: 1 of 10 attempts), nothing else.
    assert_eq!(fields, ["submission.maxAttempts"], "{doc:#}");
    let d = &doc["differences"][0];
    assert_eq!(
        (d["a"].as_i64(), d["b"].as_i64()),
        (Some(max_before), Some(max_after))
    );
    // Two exports and no --db: the same difference, the first export read as the database.
    let after = dir.path().join("after.json");
    export(&db, &id, &after);
    let two = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", "1767604800000")
        .args(["diff", b, after.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(
        two.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&two.stderr)
    );
    assert_eq!(json_of(&two)["differences"], doc["differences"]);
    let text = turnscope(&db, &["diff", b, &id]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("~ submission.maxAttempts")
                && l.contains(&format!("{max_before} → {max_after}"))),
        "{text}"
    );
}

#[test]
fn an_earlier_stream_differs_by_exactly_the_entries_show_has_in_one_and_not_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut total_added = 0;
    for name in [
        "completed-unsettled",
        "tool-batch-all-outcomes",
        "mid-stream",
        "transient-overloaded",
    ] {
        let db = unpack_db("flue-2.1.0", name, dir.path());
        let id = first_id(&db);
        // The earlier state: the same journal without its stream's last batch.
        let early = dir.path().join(format!("{name}-early.db"));
        std::fs::copy(&db, &early).unwrap();
        let conn = Connection::open(&early).unwrap();
        let path: String = conn
            .query_row(
                "SELECT path FROM flue_conversation_stream_batches ORDER BY seq DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        conn.execute(
            "DELETE FROM flue_conversation_stream_batches WHERE path = ?1 AND seq = (SELECT MAX(seq) FROM flue_conversation_stream_batches WHERE path = ?1)",
            [&path],
        )
        .unwrap();
        conn.execute(
            "UPDATE flue_conversation_streams SET next_offset = next_offset - 1 WHERE path = ?1",
            [&path],
        )
        .unwrap();
        drop(conn);
        let before = dir.path().join(format!("{name}-early.json"));
        export(&early, &id, &before);

        let show = |db: &Path| json_of(&turnscope(db, &["show", &id, "--json"]));
        let (a, b) = (show(&early), show(&db));
        let o = turnscope(&db, &["diff", before.to_str().unwrap(), &id, "--json"]);
        let doc = json_of(&o);
        let diffs = doc["differences"].as_array().unwrap();
        let ids = |d: &Value| -> Vec<String> {
            d["following"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (ia, ib) = (ids(&a), ids(&b));
        let added: Vec<String> = ib.iter().filter(|x| !ia.contains(x)).cloned().collect();
        let removed: Vec<String> = ia.iter().filter(|x| !ib.contains(x)).cloned().collect();
        let in_diff = |side: &str| -> Vec<String> {
            diffs
                .iter()
                .filter(|d| {
                    d["field"].as_str().unwrap().starts_with("following.") && d[side].is_null()
                })
                .map(|d| d["field"].as_str().unwrap()["following.".len()..].to_string())
                .collect()
        };
        assert_eq!(in_diff("a"), added, "{name}");
        total_added += added.len();
        assert_eq!(in_diff("b"), removed, "{name}");
        assert!(
            diffs.iter().any(|d| d["field"] == "streamBatches"
                && d["b"].as_i64() == Some(d["a"].as_i64().unwrap() + 1)),
            "{name}: {doc:#}"
        );
        assert_eq!(o.status.code(), Some(1));
        for (k, v) in [("label", "label"), ("plan", "plan")] {
            let differs = a[k] != b[k];
            assert_eq!(
                diffs.iter().any(|d| d["field"] == v),
                differs,
                "{name}: {k}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 4);
    assert!(total_added > 0, "no fixture's last batch added an entry");
}

#[test]
fn bad_sides_are_one_line_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-call-no-outcome", dir.path());
    let id = first_id(&db);
    let not_export = dir.path().join("notes.json");
    std::fs::write(&not_export, "{\"hello\":1}").unwrap();
    // Not found exits 4, as `show`; a file that is not a 2.x export is a usage error.
    for (args, code) in [
        (vec!["diff", "sub_NO_SUCH_SUBMISSION", id.as_str()], 4),
        (vec!["diff", not_export.to_str().unwrap(), id.as_str()], 2),
    ] {
        let o = turnscope(&db, &args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error: ") && err.contains("hint: "),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

/// Two exports without `--db`, of an instance holding several submissions: each export's own
/// submission (`selected`) is compared, and an `extend` between them is the only difference.
#[test]
fn two_exports_compare_without_db_by_the_submission_each_was_made_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let id = "sub_01M92S7VMD1J5J5A79SCZA3JAN";
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    export(&db, id, &a);
    let o = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_OPERATOR", "diff-test@host")
        .args([
            "--db",
            db.to_str().unwrap(),
            "--write",
            "extend",
            id,
            "--attempts",
            "2",
            "-y",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    export(&db, id, &b);
    let diff = |x: &Path, y: &Path| {
        crate::support::turnscope_command()
            .env_remove("TURNSCOPE_DB")
            .env("TURNSCOPE_NOW_MS", "1767604800000")
            .args(["diff", x.to_str().unwrap(), y.to_str().unwrap(), "--json"])
            .output()
            .unwrap()
    };
    let same = diff(&a, &a);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let changed = diff(&a, &b);
    assert_eq!(
        changed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    let doc = json_of(&changed);
    let fields: Vec<&str> = doc["differences"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"submission.maxAttempts"), "{fields:?}");
    assert!(
        fields
            .iter()
            .all(|f| f.starts_with("submission.") || *f == "plan"),
        "{fields:?}"
    );
}
