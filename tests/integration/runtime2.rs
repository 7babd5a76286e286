//! The flue 2.1.0 fixtures stay true to the runtime: the real `@flue/runtime` 2.1.0 (installed by
//! `tests/runtime2/setup.sh`) regenerates a crash database and classifies it as the committed
//! JSON says, and classifies and folds every committed database exactly as its JSON says. A freshly killed
//! database (with its write-ahead log beside it) is refused by turnscope in one line, unwritten.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::runtime_kit::{runtime2, Runtime};
use crate::support::{fixtures_dir, gunzip};

fn fixture_dir() -> PathBuf {
    fixtures_dir().join("flue-2.1.0")
}

fn committed(name: &str) -> Value {
    committed_json(name, "classification")
}

fn committed_json(name: &str, what: &str) -> Value {
    let path = fixture_dir().join(format!("{name}.{what}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn classify(rt: &Runtime, db: &Path) -> Value {
    rt.drive("classify.mjs", &[db.as_os_str()])
}

/// Without what changes from run to run: submission ids, and the input entry ids made from them.
fn without_ids(mut report: Value) -> Value {
    for sub in report["submissions"].as_array_mut().unwrap() {
        let sub = sub.as_object_mut().unwrap();
        sub.remove("submissionId");
        sub.remove("inputEntryId");
    }
    report
}

/// `crash.mjs --scenario NAME` against a fresh database in `dir`: the runtime must die by the
/// scenario's SIGKILL. The database is left as the kill left it (with its -wal and -shm).
fn crash(rt: &Runtime, scenario: &str, dir: &Path) -> PathBuf {
    let db = dir.join(format!("{scenario}.db"));
    let out = Command::new(&rt.node)
        .arg("--no-warnings")
        .arg(rt.drivers.join("crash.mjs"))
        .args([
            OsStr::new("--scenario"),
            OsStr::new(scenario),
            OsStr::new("--db"),
            db.as_os_str(),
        ])
        .current_dir(&rt.drivers)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "{scenario}: not killed at its crash point ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    db
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn a_regenerated_fixture_classifies_as_the_committed_json() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    // All three outcomes recorded, the commit not: no timing window (the kill follows the third
    // outcome's append), the runtime's answer tool_use_unresolved with all 3 calls.
    let name = "tool-batch-all-outcomes";
    let db = crash(rt, name, dir.path());
    let fresh = classify(rt, &db);
    assert_eq!(without_ids(fresh.clone()), without_ids(committed(name)));
    assert_eq!(fresh["meta"]["format_version"], "1");

    // turnscope on the database exactly as the kill left it, -wal included: one line, exit 1,
    // nothing written.
    let wal = dir.path().join(format!("{name}.db-wal"));
    assert!(
        wal.is_file(),
        "the killed runtime leaves its write-ahead log"
    );
    let before = (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap());
    let o = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(&db)
        .arg("list")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error: this journal was written by flue 2.x (flue_meta.format_version = 1)"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert_eq!(
        (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap()),
        before
    );
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn every_committed_fixture_classifies_and_folds_as_its_json() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".db.gz").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 15, "{names:?}");
    let mut differ = Vec::new();
    for name in &names {
        let db = dir.path().join(format!("{name}.db"));
        std::fs::write(&db, gunzip(&fixture_dir().join(format!("{name}.db.gz")))).unwrap();
        if classify(rt, &db) != committed(name) {
            differ.push(format!("{name} (classification)"));
        }
        if rt.drive("fold.mjs", &[db.as_os_str()]) != committed_json(name, "fold") {
            differ.push(format!("{name} (fold)"));
        }
    }
    assert!(
        differ.is_empty(),
        "the runtime classifies or folds these differently from their committed JSON: {differ:?} \
         (regenerate with tests/runtime2/make-fixtures.sh)"
    );
}
