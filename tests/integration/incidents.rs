//! `turnscope incidents`: the demo's stuck submissions grouped by the worker that held their
//! lease, checked against `list --json` (the same rows, owners and plans), on SQLite and on a
//! PostgreSQL copy.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::turnscope_command;

/// The demo's clock: its leases expired 30 s, about 4 min and about 2 h before.
const NOW: &str = "1767604800000";

fn run(db: &str, args: &[&str]) -> (i32, String) {
    let o = turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW)
        .args(["--db", db])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn demo(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("demo.db");
    let o = turnscope_command()
        .env("TURNSCOPE_NOW_MS", NOW)
        .args(["demo", db.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    db
}

fn json(db: &str, args: &[&str]) -> Value {
    serde_json::from_str(&run(db, args).1).unwrap()
}

#[cfg(feature = "postgres")]
/// The document without the one field that names where it was read.
fn without_database(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("database");
    v
}

/// Every group of `incidents --json` is exactly the expired rows of one owner in `list --json`,
/// with their plans counted.
fn assert_matches_list(doc: &Value, list: &Value) {
    let mut by_owner: BTreeMap<Option<String>, Vec<&Value>> = BTreeMap::new();
    for s in list["submissions"].as_array().unwrap() {
        let owner = s["submission"]["ownerId"].as_str().map(str::to_string);
        by_owner.entry(owner).or_default().push(s);
    }
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), by_owner.len());
    assert_eq!(
        doc["stuck"],
        list["submissions"].as_array().unwrap().len(),
        "every expired row is in a group"
    );
    for g in groups {
        let owner = g["ownerId"].as_str().map(str::to_string);
        let rows = &by_owner[&owner];
        let mut ids: Vec<&str> = rows
            .iter()
            .map(|s| s["submission"]["submissionId"].as_str().unwrap())
            .collect();
        let mut listed: Vec<&str> = g["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        ids.sort();
        listed.sort();
        assert_eq!(ids, listed, "{owner:?}");
        assert_eq!(g["count"], rows.len());
        let expiries: Vec<i64> = rows
            .iter()
            .map(|s| s["submission"]["leaseExpiresAt"].as_i64().unwrap())
            .collect();
        assert_eq!(g["firstLeaseExpiresAt"], *expiries.iter().min().unwrap());
        assert_eq!(g["lastLeaseExpiresAt"], *expiries.iter().max().unwrap());
        let mut rules: BTreeMap<i64, usize> = BTreeMap::new();
        for s in rows {
            *rules
                .entry(s["plan"]["rule"].as_i64().unwrap_or(-1))
                .or_default() += 1;
        }
        let counted: BTreeMap<i64, usize> = g["plans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["rule"].as_i64().unwrap_or(-1),
                    p["count"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(rules, counted, "{owner:?}");
    }
}

#[test]
fn incidents_group_the_demo_by_the_worker_that_held_the_lease() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let db_s = db.to_str().unwrap();
    let (code, text) = run(db_s, &["incidents"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("cli_incidents_demo", text);
    let doc = json(db_s, &["incidents", "--json"]);
    assert_eq!(doc["schema"], "turnscope.incidents/1");
    assert_eq!(doc["leaseMs"], 30_000);
    assert_matches_list(&doc, &json(db_s, &["list", "--json"]));
    // The worker that died 4 minutes before renewed its leases together: it has a stop time,
    // one lease before its last expiry. The one whose leases spread wider has none.
    let groups = doc["groups"].as_array().unwrap();
    let stopped: Vec<&Value> = groups
        .iter()
        .filter(|g| !g["stoppedRenewingAt"].is_null())
        .collect();
    assert!(!stopped.is_empty() && stopped.len() < groups.len());
    for g in &stopped {
        let (first, last) = (
            g["firstLeaseExpiresAt"].as_i64().unwrap(),
            g["lastLeaseExpiresAt"].as_i64().unwrap(),
        );
        assert!(last - first <= 10_000, "{g}");
        assert_eq!(g["stoppedRenewingAt"], last - 30_000);
        assert!(g["summary"]
            .as_str()
            .unwrap()
            .contains("stopped renewing at"));
    }
    // Each worker's act command selects exactly its group (a dry run writes nothing).
    for g in groups {
        let cmd = g["command"].as_str().unwrap();
        let args: Vec<&str> = cmd.split(' ').skip(1).collect();
        assert_eq!(
            args[..4],
            ["--write", "reconcile", "--all", "--owner"],
            "{cmd}"
        );
        // Exit 3 where some would be refused (the document still lists every one selected).
        let o = turnscope_command()
            .env("TURNSCOPE_NOW_MS", NOW)
            .args(["--db", db_s])
            .args(&args)
            .args(["--dry-run", "--json"])
            .output()
            .unwrap();
        assert!(matches!(o.status.code(), Some(0 | 3)), "{cmd}: {o:?}");
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["counts"]["selected"], g["count"], "{cmd}");
        let mut ids: Vec<&str> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["submissionId"].as_str().unwrap())
            .collect();
        let mut want: Vec<&str> = g["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        ids.sort();
        want.sort();
        assert_eq!(ids, want, "{cmd}");
        assert_eq!(doc["dryRun"], true);
    }
    // Each worker's list command lists exactly its group.
    for g in groups {
        let cmd = g["listCommand"].as_str().unwrap();
        let owner = cmd.strip_prefix("turnscope list --owner ").unwrap();
        let listed = json(db_s, &["list", "--owner", owner, "--json"]);
        let ids: Vec<&Value> = listed["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["submission"]["submissionId"])
            .collect();
        let mut ids: Vec<&str> = ids.iter().map(|v| v.as_str().unwrap()).collect();
        let mut want: Vec<&str> = g["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        ids.sort();
        want.sort();
        assert_eq!(ids, want, "{cmd}");
    }
}

#[test]
fn incidents_on_a_database_with_nothing_stuck_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    turnscope_tui::harness::write_empty_journal(&db).unwrap();
    let (_, text) = run(db.to_str().unwrap(), &["incidents"]);
    assert_eq!(
        text.lines().next().unwrap(),
        "no submission has an expired lease: no worker left anything stuck"
    );
    let doc = json(db.to_str().unwrap(), &["incidents", "--json"]);
    assert_eq!(doc["stuck"], 0);
    assert_eq!(doc["groups"], Value::Array(vec![]));
}

#[cfg(feature = "postgres")]
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_incidents_are_the_same_document_as_on_sqlite() {
    use crate::backends::{pg_admin, Kind, TestDb};
    use turnscope_store::DbTarget;
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let pg = TestDb::from_sqlite(Kind::Postgres, &db);
    let url = match &pg.target {
        DbTarget::Postgres(t) => t.url(),
        DbTarget::Sqlite(_) | DbTarget::Export(_) => unreachable!(),
    };
    let on_pg = json(&url, &["incidents", "--json"]);
    assert_matches_list(&on_pg, &json(&url, &["list", "--json"]));
    assert_eq!(
        without_database(on_pg),
        without_database(json(db.to_str().unwrap(), &["incidents", "--json"]))
    );
    let (_, text) = run(&url, &["incidents"]);
    let (_, lite) = run(db.to_str().unwrap(), &["incidents"]);
    assert_eq!(text, lite);
    // The TUI's incidents screen groups the same rows the same way on both backends.
    use turnscope_tui::harness::{Harness, HarnessOptions};
    let now: i64 = NOW.parse().unwrap();
    let groups = |target: &DbTarget| {
        let mut h = Harness::open_target(target, HarnessOptions::new(now)).unwrap();
        h.press("I");
        h.incident_groups().to_vec()
    };
    let on_pg = groups(&pg.target);
    assert_eq!(on_pg.len(), 3);
    assert_eq!(on_pg, groups(&DbTarget::Sqlite(db.clone())));
    // And as the CLI does: the same workers, submissions and plans, in the same order.
    let doc = json(&url, &["incidents", "--json"]);
    let cli: Vec<(Option<String>, Vec<String>, Vec<String>)> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let strs = |v: &Value, key: Option<&str>| -> Vec<String> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| key.map_or(x, |k| &x[k]).as_str().unwrap().to_string())
                    .collect()
            };
            (
                g["ownerId"].as_str().map(str::to_string),
                strs(&g["submissions"], None),
                strs(&g["plans"], Some("label")),
            )
        })
        .collect();
    let tui: Vec<(Option<String>, Vec<String>, Vec<String>)> = on_pg
        .iter()
        .map(|g| {
            (
                g.owner_id.clone(),
                g.submissions.clone(),
                g.plans.iter().map(|p| p.plan.label()).collect(),
            )
        })
        .collect();
    assert_eq!(tui, cli);
}

#[test]
fn the_man_page_has_the_incidents_command_and_every_tui_key() {
    let o = turnscope_command().arg("man").output().unwrap();
    let man = String::from_utf8_lossy(&o.stdout);
    assert!(man.contains("turnscope\\-incidents(1)"), "{man}");
    assert!(man.contains(".SH \"TUI KEYS\""), "{man}");
    // Every binding of the keymap, with the write-only ones tagged.
    for b in turnscope_tui::KEYMAP {
        assert!(
            man.contains(&b.help.replace('-', "\\-")),
            "{} missing from the man page",
            b.help
        );
    }
    assert!(man.contains("mark every row shown (the filter and the / query) (\\-\\-write only)"));
    assert!(man.contains("\\fBI\\fR\nincidents: the stuck submissions grouped by the worker"));
}

#[test]
fn the_scale_data_strands_several_submissions_per_dead_worker_with_close_expiries() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s01.db");
    let now = "1780000000000";
    crate::support::scale_db(&db, 0.01, 7, false, None, now.parse().unwrap());
    let o = turnscope_command()
        .env("TURNSCOPE_NOW_MS", now)
        .args(["--db", db.to_str().unwrap(), "incidents", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let groups = doc["groups"].as_array().unwrap();
    // The generator's crashed coordinators: each left its rows with leases renewed together.
    assert!(groups.len() >= 5, "{doc}");
    assert!(groups.iter().all(|g| !g["ownerId"].is_null()));
    assert!(
        groups.iter().all(|g| !g["stoppedRenewingAt"].is_null()),
        "every dead worker's leases expired within one heartbeat: {doc}"
    );
    assert!(
        groups
            .iter()
            .filter(|g| g["count"].as_u64() >= Some(3))
            .count()
            >= 3,
        "several stuck submissions share a dead worker: {doc}"
    );
    assert_eq!(
        groups
            .iter()
            .map(|g| g["count"].as_u64().unwrap())
            .sum::<u64>(),
        doc["stuck"].as_u64().unwrap()
    );
}

#[test]
fn a_hostile_owner_id_is_shown_escaped_and_pasted_as_one_quoted_word() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n = conn
        .execute(
            "UPDATE flue_agent_submissions SET owner_id = ?1 WHERE owner_id LIKE 'a82b3d31%'",
            ["w\u{1b}[31m; touch pwned"],
        )
        .unwrap();
    assert!(n >= 2);
    drop(conn);
    let (_, text) = run(db.to_str().unwrap(), &["incidents"]);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        text.contains("reconcile --all --owner 'w\\x1b[31m; touch pwned'"),
        "{text}"
    );
    assert!(
        text.contains("turnscope list --owner 'w\\x1b[31m; touch pwned'"),
        "{text}"
    );
    let doc = json(db.to_str().unwrap(), &["incidents", "--json"]);
    let g = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["ownerId"] == "w\u{1b}[31m; touch pwned")
        .expect("the group keeps the owner id as stored");
    assert_eq!(g["count"], n);
}
