//! `turnscope audit` filters, run by the database on SQLite and PostgreSQL: by submission prefix
//! (`_` and `%` are themselves), time (an age or a time), operator (typed on the command line
//! only), batch and the newest N; batch and reason in the table and the JSON.

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use turnscope_core::journal::time::iso_from_ms;

use crate::backends::{kinds, Kind, TestDb};
use crate::cli_export::db_arg;
use crate::support::turnscope_command;

const NOW: i64 = 1_796_018_889_175;
const MIN: i64 = 60_000;

/// (at, operator, action, submission, reason, batch, undoes)
type Record = (
    i64,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Option<i64>,
);

const TRAIL: [Record; 7] = [
    (
        NOW - 300 * MIN,
        "alice",
        "repair",
        "aaaa1111-0000",
        Some("provider outage"),
        None,
        None,
    ),
    (
        NOW - 180 * MIN,
        "bob",
        "fail",
        "aaaa2222-0000",
        Some("gave up"),
        None,
        None,
    ),
    (
        NOW - 90 * MIN,
        "alice",
        "reconcile",
        "bbbb1111-0000",
        Some("incident 42"),
        Some("batch-7"),
        None,
    ),
    (
        NOW - 89 * MIN,
        "alice",
        "reconcile",
        "bbbb2222-0000",
        Some("incident 42"),
        Some("batch-7"),
        None,
    ),
    (
        NOW - 10 * MIN,
        "carol",
        "undo",
        "bbbb1111-0000",
        None,
        Some("batch-8"),
        Some(3),
    ),
    (
        NOW - MIN,
        "bob",
        "extend",
        "cccc_%ab-0000",
        Some("more time"),
        None,
        None,
    ),
    (
        NOW - MIN / 2,
        "dave",
        "repair",
        "ccccxyab-0000",
        None,
        None,
        None,
    ),
];

fn sql_text(v: Option<&str>) -> String {
    v.map_or("NULL".into(), |t| format!("'{t}'"))
}

/// The demo journal with `TRAIL` in its audit table (written by hand: the times, operators and
/// batches are the point), as SQLite or copied into PostgreSQL.
fn trail_db(dir: &Path, kind: Kind) -> TestDb {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, NOW).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(turnscope_store::AUDIT_DDL).unwrap();
    for (at, op, action, sub, reason, batch, undoes) in TRAIL {
        c.execute_batch(&format!(
            "INSERT INTO turnscope_audit (at, operator, action, submission_id, reason, summary, version, batch_id, undoes)
             VALUES ({at}, '{op}', '{action}', '{sub}', {}, '{action} {sub}', 'test', {}, {})",
            sql_text(reason),
            sql_text(batch),
            undoes.map_or("NULL".into(), |n| n.to_string())
        ))
        .unwrap();
    }
    drop(c);
    TestDb::from_sqlite(kind, &path)
}

fn audit(db: &TestDb, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_OPERATOR")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .args(["--db", &db_arg(&db.target), "audit"])
        .args(args)
        .output()
        .unwrap()
}

/// The audit ids `args` list, from the JSON document.
fn ids(db: &TestDb, args: &[&str]) -> Vec<i64> {
    let mut a = args.to_vec();
    a.push("--json");
    let o = audit(db, &a);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], "turnscope.audit/1");
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn audit_filters_run_in_the_database_on_every_backend() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let db = trail_db(dir.path(), kind);
        let k = format!("{kind:?}");
        assert_eq!(ids(&db, &[]), [7, 6, 5, 4, 3, 2, 1], "{k}");
        assert_eq!(ids(&db, &["--submission", "aaaa"]), [2, 1], "{k}");
        assert_eq!(ids(&db, &["--submission", "bbbb1111-0000"]), [5, 3], "{k}");
        // `_` and `%` in a prefix are characters of the id, not wildcards.
        assert_eq!(ids(&db, &["--submission", "cccc_%"]), [6], "{k}");
        assert_eq!(
            ids(&db, &["--submission", "CCCC"]),
            Vec::<i64>::new(),
            "{k}"
        );
        assert_eq!(ids(&db, &["--since", "2h"]), [7, 6, 5, 4, 3], "{k}");
        // A time: records at that very instant count.
        let three_hours = iso_from_ms(NOW - 180 * MIN);
        assert_eq!(
            ids(&db, &["--since", &three_hours]),
            [7, 6, 5, 4, 3, 2],
            "{k}"
        );
        assert_eq!(ids(&db, &["--operator", "alice"]), [4, 3, 1], "{k}");
        assert_eq!(ids(&db, &["--batch", "batch-7"]), [4, 3], "{k}");
        assert_eq!(ids(&db, &["--limit", "2"]), [7, 6], "{k}");
        assert_eq!(
            ids(
                &db,
                &["--operator", "alice", "--since", "2h", "--limit", "1"]
            ),
            [4],
            "{k}"
        );
        // The global flag before the subcommand filters too.
        let o = turnscope_command()
            .env("TURNSCOPE_NOW_MS", NOW.to_string())
            .args([
                "--db",
                &db_arg(&db.target),
                "--operator",
                "carol",
                "audit",
                "--json",
            ])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["records"].as_array().unwrap().len(), 1, "{k}");
        assert_eq!(doc["records"][0]["batch_id"], "batch-8", "{k}");
        assert_eq!(doc["records"][0]["undoes"], 3, "{k}");
        // TURNSCOPE_OPERATOR names who writes, not whose records to show.
        let o = turnscope_command()
            .env("TURNSCOPE_OPERATOR", "alice")
            .env("TURNSCOPE_NOW_MS", NOW.to_string())
            .args(["--db", &db_arg(&db.target), "audit", "--json"])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["records"].as_array().unwrap().len(), 7, "{k}");
        // Batch and reason in the JSON.
        let o = audit(&db, &["--batch", "batch-7", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["records"][0]["reason"], "incident 42", "{k}");
        assert_eq!(doc["records"][0]["batch_id"], "batch-7", "{k}");
    }
}

#[test]
fn audit_table_shows_batch_and_reason_and_says_what_matched_nothing() {
    let mut tables = Vec::new();
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let db = trail_db(dir.path(), kind);
        let o = audit(&db, &["--since", "2h"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        tables.push(String::from_utf8(o.stdout).unwrap());
        let o = audit(&db, &["--operator", "zed", "--since", "2026-01-01"]);
        assert!(o.status.success());
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).lines().next().unwrap(),
            "no audit record matches --since 2026-01-01T00:00:00.000Z --operator zed (`turnscope audit` lists them all)",
            "{kind:?}"
        );
    }
    // The same table from both databases.
    assert!(tables.windows(2).all(|w| w[0] == w[1]), "{tables:#?}");
    insta::assert_snapshot!("audit_since_2h", tables[0]);
}

#[test]
fn audit_bad_filters_are_usage_errors_and_an_empty_trail_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = trail_db(dir.path(), Kind::Sqlite);
    for (args, needle) in [
        (&["--since", "soon"][..], "neither an age nor a time"),
        (&["--since", "2026-02-31"], "not a time"),
        (&["--limit", "0"], "--limit"),
    ] {
        let o = audit(&db, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
    let fresh = dir.path().join("fresh.db");
    turnscope_demo::write_demo(&fresh, NOW).unwrap();
    let db = TestDb::from_sqlite(Kind::Sqlite, &fresh);
    let o = audit(&db, &["--operator", "alice"]);
    assert!(String::from_utf8_lossy(&o.stdout)
        .starts_with("no turnscope action was ever applied to this database"));
}

/// An audit table of a turnscope older than batches: a batch filter matches nothing, the rest
/// works.
#[test]
fn audit_filters_on_an_older_audit_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    turnscope_demo::write_demo(&path, NOW).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE TABLE turnscope_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
           operator TEXT NOT NULL, action TEXT NOT NULL, submission_id TEXT NOT NULL, attempt_id TEXT,
           reason TEXT, summary TEXT NOT NULL, version TEXT NOT NULL);
         INSERT INTO turnscope_audit (at, operator, action, submission_id, summary, version)
           VALUES (1, 'alice', 'repair', 'x1', 's', 'old');",
    )
    .unwrap();
    drop(c);
    let db = TestDb::from_sqlite(Kind::Sqlite, &path);
    assert_eq!(ids(&db, &["--batch", "b"]), Vec::<i64>::new());
    assert_eq!(ids(&db, &["--operator", "alice"]), [1]);
}
