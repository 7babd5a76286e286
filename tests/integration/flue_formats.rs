//! Journals of the formats after beta.7, as the real runtimes wrote them: the crash databases of
//! flue 2.1.0 (`tests/fixtures/flue-2.1.0/`) and the empty databases beta.9's and 2.0.0's own
//! adapters create (`tests/fixtures/flue-formats/`). Each is told apart by `detect_format`. A
//! beta.8/9 journal is refused in one `error:` line naming its writer, with a hint and exit code 1,
//! by every command; a 2.x journal is read by `list`, `show`, `classify`, `incidents`, `sessions`, `export` and `wait` (`flue2_*.rs`) and
//! refused that way by every other command, reading or writing. Neither is ever written.

use std::path::{Path, PathBuf};
use std::process::Output;

use turnscope_store::{JournalFormat, SqliteStore, SqliteWriter, StoreError};

use crate::support::{db_fixture_names, unpack_db};

const FLUE2_LINE: &str = "error: this journal was written by flue 2.x (flue_meta.format_version = 1): only list, show, classify, incidents, sessions, export, wait, diff, next-request, health, audit and the actions abort, requeue, extend, fail and undo read it yet (SQLite files), not this command";
const FLUE2_HINT: &str =
    "hint: run `turnscope list`, `turnscope show ID` or `turnscope classify ID` on it";
const BETA7_HINT: &str = "hint: turnscope reads flue 1.0.0-beta.7 journals";
const BETA8_LINE: &str = "error: this journal was written by flue 1.0.0-beta.8 or beta.9 (flue_meta.schema_version = 4), a format turnscope does not read";

/// Every `NAME.db.gz` of a fixtures folder, unpacked into `dir`.
fn unpack_all(folder: &str, dir: &Path) -> Vec<PathBuf> {
    db_fixture_names(folder)
        .iter()
        .map(|name| unpack_db(folder, name, dir))
        .collect()
}

fn turnscope(db: &Path, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_OPERATOR", "cli@test")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run turnscope")
}

/// Exit code 1, exactly the `error:` line `line` and one `hint:` line starting with `hint`,
/// nothing on stdout, no panic.
fn assert_refused(o: &Output, line: &str, hint: &str, db: &Path) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}: {err}", db.display());
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error and one hint line: {err}");
    assert_eq!(lines[0], line, "{}", db.display());
    assert!(lines[1].starts_with(hint), "{err}");
    assert!(
        o.stdout.is_empty(),
        "nothing on stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The bytes of the database and any side file beside it.
fn files(db: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = db.parent().unwrap();
    let stem = db.file_name().unwrap().to_string_lossy().into_owned();
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&stem))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // SQLite may leave an empty -wal/-shm after a read; their contents are its own.
            let bytes = if name.ends_with("-shm") {
                vec![]
            } else {
                std::fs::read(&p).unwrap()
            };
            (name, bytes)
        })
        .filter(|(name, bytes)| !(name.ends_with("-wal") && bytes.is_empty()))
        .collect();
    out.sort();
    out
}

#[test]
fn every_flue_2_1_0_crash_database_is_detected_as_flue2() {
    let dir = tempfile::tempdir().unwrap();
    let dbs = unpack_all("flue-2.1.0", dir.path());
    assert!(dbs.len() >= 15, "{dbs:?}");
    for db in &dbs {
        assert_eq!(
            SqliteStore::detect_format(db).unwrap(),
            JournalFormat::Flue2 {
                format_version: "1".into()
            },
            "{}",
            db.display()
        );
    }
}

#[test]
fn list_incidents_and_health_read_and_step_refuses_each_flue_2_1_0_crash_database_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for db in unpack_all("flue-2.1.0", dir.path()) {
        let before = files(&db);
        let o = turnscope(&db, &["list", "--status", "all"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("format: flue 2.x"));
        let o = turnscope(&db, &["incidents"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Exit 0 healthy, 8 with findings (flue2_health.rs checks which).
        let o = turnscope(&db, &["health", "--all"]);
        assert!(
            matches!(o.status.code(), Some(0 | 8)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_refused(
            &turnscope(&db, &["--write", "step", "x", "--dry-run"]),
            FLUE2_LINE,
            FLUE2_HINT,
            &db,
        );
        assert!(matches!(
            SqliteStore::open(&db),
            Err(StoreError::NewerFormat { .. })
        ));
        assert_eq!(files(&db), before, "{} was changed", db.display());
    }
}

#[test]
fn writes_and_json_are_refused_the_same_way_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_all("flue-2.1.0", dir.path())
        .into_iter()
        .find(|p| p.ends_with("tool-batch-1-of-3.db"))
        .unwrap();
    let before = files(&db);
    assert!(matches!(
        SqliteWriter::open(&db),
        Err(StoreError::NewerFormat { .. })
    ));
    for args in [
        &["--write", "step", "x", "-y"][..],
        &["--write", "step", "x", "--dry-run"],
    ] {
        let o = turnscope(&db, args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.lines().next() == Some(FLUE2_LINE), "{args:?}: {err}");
    }
    let o = turnscope(&db, &["--write", "step", "x", "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("an error document");
    assert_eq!(doc["schema"], "turnscope.error/1");
    assert_eq!(doc["error"].as_str(), FLUE2_LINE.strip_prefix("error: "));
    assert_eq!(files(&db), before);
}

#[test]
fn beta9_and_2_0_0_databases_are_named_by_their_writer() {
    let dir = tempfile::tempdir().unwrap();
    let dbs = unpack_all("flue-formats", dir.path());
    let find = |name: &str| dbs.iter().find(|p| p.ends_with(name)).unwrap().clone();
    let beta9 = find("beta.9-empty.db");
    assert_eq!(
        SqliteStore::detect_format(&beta9).unwrap(),
        JournalFormat::Beta8or9
    );
    let before = files(&beta9);
    assert_refused(
        &turnscope(&beta9, &["list"]),
        BETA8_LINE,
        BETA7_HINT,
        &beta9,
    );
    assert!(matches!(
        SqliteStore::open(&beta9),
        Err(StoreError::Beta8or9Format { .. })
    ));
    assert_eq!(files(&beta9), before);

    let v200 = find("2.0.0-empty.db");
    assert_eq!(
        SqliteStore::detect_format(&v200).unwrap(),
        JournalFormat::Flue2 {
            format_version: "1".into()
        }
    );
    // Read (it holds no submission) by list; refused by the other commands.
    let o = turnscope(&v200, &["list", "--status", "all"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no submissions"));
    assert_refused(
        &turnscope(&v200, &["--write", "step", "x", "--dry-run"]),
        FLUE2_LINE,
        FLUE2_HINT,
        &v200,
    );
}

#[test]
fn beta7_crash_databases_are_detected_as_beta7() {
    let dir = tempfile::tempdir().unwrap();
    for db in unpack_all("flue-beta7", dir.path()) {
        assert!(
            matches!(
                SqliteStore::detect_format(&db).unwrap(),
                JournalFormat::Beta7 { .. }
            ),
            "{}",
            db.display()
        );
    }
}
