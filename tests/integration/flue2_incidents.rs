//! `incidents` on flue 2.x journals, through the binary, on every 2.1.0 crash fixture: the
//! expired running rows (computed here with SQL) grouped by owner, each group's steps counted as
//! `list` plans them, the stop time only where the runtime's lease protocol allows it, and
//! nothing stuck before the leases end.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

/// Exit code and stdout (stderr says the clock is pinned).
fn run(db: &Path, now: i64, args: &[&str]) -> (Option<i32>, String) {
    let o = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn json(db: &Path, now: i64, args: &[&str]) -> Value {
    let (code, text) = run(db, now, args);
    assert_eq!(code, Some(0), "{args:?}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

#[test]
fn incidents_group_the_expired_rows_by_owner_with_the_steps_list_plans() {
    let dir = tempfile::tempdir().unwrap();
    let mut groups_seen = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let leases: Vec<(String, Option<String>, i64)> = conn
            .prepare(
                "SELECT submission_id, owner_id, lease_expires_at FROM flue_agent_submissions \
                 WHERE status = 'running' AND lease_expires_at > 0 ORDER BY sequence",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let Some(first) = leases.iter().map(|l| l.2).min() else {
            continue;
        };
        // Before any lease ended: nothing stuck.
        let (code, text) = run(&db, first - 1, &["incidents"]);
        assert_eq!(code, Some(0), "{text}");
        assert!(
            text.contains("no submission has an expired lease"),
            "{name}: {text}"
        );
        let now = leases.iter().map(|l| l.2).max().unwrap() + 1_000;
        let doc = json(&db, now, &["incidents", "--json"]);
        assert_eq!(doc["schema"], "turnscope.flue2.incidents/1");
        assert_eq!(doc["format"], "flue-2.x");
        assert_eq!(doc["stuck"], leases.len(), "{name}");
        // The owners and their rows, as SQL has them.
        let mut want: BTreeMap<Option<String>, BTreeSet<String>> = BTreeMap::new();
        for (id, owner, _) in &leases {
            want.entry(owner.clone()).or_default().insert(id.clone());
        }
        let mut got: BTreeMap<Option<String>, BTreeSet<String>> = BTreeMap::new();
        // Each group's step counts, as list plans its rows.
        let list = json(&db, now, &["list", "--json"]);
        let step_of: BTreeMap<String, Value> = list["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_string(),
                    s["plan"]["step"].clone(),
                )
            })
            .collect();
        for g in doc["groups"].as_array().unwrap() {
            groups_seen += 1;
            let ids: BTreeSet<String> = g["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            let mut counted: BTreeMap<String, usize> = BTreeMap::new();
            for id in &ids {
                *counted.entry(step_of[id].to_string()).or_default() += 1;
            }
            let plans: BTreeMap<String, usize> = g["plans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["step"].to_string(), p["count"].as_u64().unwrap() as usize))
                .collect();
            assert_eq!(plans, counted, "{name}");
            let owner = g["ownerId"].as_str().map(str::to_string);
            if let Some(o) = &owner {
                assert_eq!(g["listCommand"], format!("turnscope list --owner {o}"));
                // One lease each here: renewed together, so the stop time is its last write.
                assert_eq!(
                    g["stoppedRenewingAt"].as_i64(),
                    g["lastLeaseExpiresAt"].as_i64().map(|t| t - 30_000),
                    "{name}"
                );
            }
            got.insert(owner, ids);
        }
        assert_eq!(got, want, "{name}");
        let (_, text) = run(&db, now, &["incidents"]);
        assert!(text.starts_with("format: flue 2.x"), "{text}");
        assert!(text.contains("stuck ·"), "{name}: {text}");
    }
    assert!(groups_seen > 10, "{groups_seen}");
}
