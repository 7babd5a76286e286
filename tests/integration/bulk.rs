//! Many submissions at once: the selection `list` and the bulk actions share (`--owner` among
//! the filters), and bulk actions over it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::turnscope_command;

/// A demo journal written at the real clock, so its leases stand as the demo meant them.
fn demo(dir: &Path) -> PathBuf {
    let db = dir.join("demo.db");
    turnscope::demo::write_demo(&db, turnscope::clock::now_ms()).unwrap();
    db
}

fn cmd(db: &Path, args: &[&str]) -> Command {
    let mut c = turnscope_command();
    c.env_remove("TURNSCOPE_NOW_MS")
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_OPERATOR", "bulk@test")
        .arg("--db")
        .arg(db)
        .args(args);
    c
}

fn run(db: &Path, args: &[&str]) -> Output {
    cmd(db, args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn listed(db: &Path, args: &[&str]) -> Vec<Value> {
    let o = run(db, &[&["list", "--json"], args].concat());
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["submissions"].as_array().unwrap().clone()
}

fn owner(s: &Value) -> &str {
    s["submission"]["ownerId"].as_str().unwrap_or("")
}

#[test]
fn owner_selects_one_workers_submissions_by_a_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let all = listed(&db, &[]);
    let mut owners: Vec<&str> = all.iter().map(owner).collect();
    owners.sort_unstable();
    owners.dedup();
    assert!(
        owners.len() >= 2,
        "the demo's stuck rows have several owners"
    );
    for o in &owners {
        let expected = all.iter().filter(|s| owner(s) == *o).count();
        let by_prefix = listed(&db, &["--owner", &o[..8]]);
        assert_eq!(by_prefix.len(), expected, "{o}");
        assert!(by_prefix.iter().all(|s| owner(s) == *o));
        assert_eq!(listed(&db, &["--owner", o]).len(), expected);
    }
    // With the other filters: the intersection.
    let first = owners[0];
    let with_kind = listed(&db, &["--owner", first, "--kind", "direct"]);
    assert!(with_kind
        .iter()
        .all(|s| owner(s) == first && s["submission"]["kind"] == "direct"));
    // An owner nobody has selects nothing.
    assert!(listed(&db, &["--owner", "no-such-worker"]).is_empty());
    // A prefix two owners share is a usage error naming them (the demo's ids are fixed: two of
    // its workers' ids start with the same character).
    let (a, b) = owners
        .iter()
        .flat_map(|a| owners.iter().map(move |b| (*a, *b)))
        .find(|(a, b)| a < b && a[..1] == b[..1])
        .expect("two demo workers share a first character");
    let o = run(&db, &["list", "--owner", &a[..1]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: --owner") && err.contains(a) && err.contains(b),
        "{err}"
    );
    assert!(err.lines().nth(1).unwrap().starts_with("hint: "), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
}
