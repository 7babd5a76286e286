//! Errors a newcomer meets first: each is one `error:` line that says what was found and one
//! `hint:` line that is true for it.

use std::path::Path;
use std::process::Output;

use crate::support::unpack_fixture;

fn turnscope(db: &str, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .args(["--db", db])
        .args(args)
        .output()
        .expect("run turnscope")
}

/// The `error:` and `hint:` lines, after checking there are exactly those two and the code.
fn error_and_hint(o: &Output, code: i32) -> (String, String) {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error line and one hint line: {err}");
    let e = lines[0].strip_prefix("error: ").expect("error: line");
    let h = lines[1].strip_prefix("hint: ").expect("hint: line");
    assert!(o.stdout.is_empty());
    (e.to_string(), h.to_string())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_directory_is_called_a_directory_and_the_hint_names_its_databases() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (e, h) = error_and_hint(&turnscope(s(&data), &["list"]), 1);
    assert_eq!(
        e,
        format!("{} is a directory, not a database file", s(&data))
    );
    assert!(!h.contains("truncated"), "{h}");
    assert!(h.contains("e.g. ./data/flue.db"), "{h}");
    unpack_fixture(&data, "tool-batch-mid");
    let (_, h) = error_and_hint(&turnscope(s(&data), &["list"]), 1);
    assert_eq!(
        h,
        format!(
            "give --db the journal file itself; {} holds tool-batch-mid.db",
            s(&data)
        )
    );
}

/// A WAL database whose tables are still in its `-wal`, copied without it: the error names the
/// missing file instead of calling the database empty.
#[test]
fn a_database_copied_without_its_wal_names_the_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    // This connection keeps the WAL from being checkpointed and removed while the journal's
    // tables are written into it by another.
    let holder = rusqlite::Connection::open(&live).unwrap();
    let mode: String = holder
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // A first write puts the WAL mode in the main file's header; the checkpoint leaves the
    // main file with no tables and everything after it in the WAL.
    holder
        .execute_batch(
            "PRAGMA wal_autocheckpoint=0; CREATE TABLE scratch(x); DROP TABLE scratch; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
    turnscope_tui::harness::write_empty_journal(&live).unwrap();
    let wal = dir.path().join("live.db-wal");
    assert!(
        std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0),
        "the tables are in the WAL"
    );
    let copy = dir.path().join("copy.db");
    std::fs::copy(&live, &copy).unwrap();
    // Twice: the first open leaves an empty -wal behind, which is no WAL either.
    for _ in 0..2 {
        let (e, h) = error_and_hint(&turnscope(s(&copy), &["list"]), 1);
        assert_eq!(
            e,
            format!(
                "{0} reads as empty and its write-ahead log {0}-wal is missing or empty (the database is in WAL mode)",
                s(&copy)
            )
        );
        assert!(h.starts_with("copy copy.db-wal (and -shm)"), "{h}");
    }
    // With its WAL beside it, the copy opens.
    std::fs::copy(&wal, dir.path().join("copy.db-wal")).unwrap();
    let o = turnscope(s(&copy), &["list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A database that is empty for real still says so.
    drop(holder);
    let empty = dir.path().join("empty.db");
    rusqlite::Connection::open(&empty)
        .unwrap()
        .execute_batch("PRAGMA user_version = 1;")
        .unwrap();
    let (e, _) = error_and_hint(&turnscope(s(&empty), &["list"]), 1);
    assert!(e.ends_with("is empty: not a flue journal database"), "{e}");
}

#[test]
fn an_ambiguous_prefix_says_how_many_it_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::tui::demo_db(dir.path());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE flue_agent_submissions SET submission_id = 'dead' || printf('%04d', sequence) WHERE sequence <= 11",
        [],
    )
    .unwrap();
    drop(conn);
    let (e, h) = error_and_hint(&turnscope(s(&db), &["show", "dead"]), 2);
    assert_eq!(
        e,
        "\"dead\" matches 11 submissions: dead0001, dead0002, dead0003, dead0004 and 7 more"
    );
    assert_eq!(h, "type more characters of the submission id");
}

#[test]
fn a_url_of_another_database_is_an_unsupported_scheme() {
    for url in ["mysql://root@localhost/flue", "sqlite://flue.db"] {
        let (e, h) = error_and_hint(&turnscope(url, &["list"]), 2);
        let scheme = url.split("://").next().unwrap();
        assert_eq!(
            e,
            format!("unsupported URL scheme {scheme}:// in --db (turnscope reads SQLite files and postgres:// or postgresql:// URLs)")
        );
        assert!(!e.contains("no database at"));
        assert!(h.contains("postgres://"), "{h}");
    }
}

/// A preview lists the columns that change; one written with the value it holds is named as
/// unchanged, not shown as `NULL → NULL`; the summary names its action once.
#[test]
fn previews_leave_out_no_op_changes_and_name_the_action_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::tui::demo_db(dir.path());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let id: String = conn
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE session_key LIKE '%onboarding-17%' AND status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let o = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", "1767604800000")
        .args(["--db", s(&db), "--write", "requeue", &id, "--dry-run"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.starts_with(&format!("requeue {id}: back to queued")),
        "{out}"
    );
    assert!(!out.contains("requeue: "), "{out}");
    assert!(!out.contains("NULL → NULL"), "{out}");
    assert!(
        out.contains("      unchanged: recovery_requested_at\n"),
        "{out}"
    );
    assert!(
        out.contains("      status: 'running' → 'queued'\n"),
        "{out}"
    );
}

/// A merge left half-done shows up as text: no tracked file keeps a conflict marker (one once
/// sat in the README's commands table, which no compiler reads).
#[test]
fn no_tracked_file_keeps_a_merge_conflict_marker() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z"])
        .output()
        .expect("git runs in the checkout");
    assert!(files.status.success(), "git ls-files failed");
    let mut found = Vec::new();
    for name in files.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let path = root.join(String::from_utf8_lossy(name).as_ref());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // binary fixtures
        };
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") {
                found.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "merge conflict markers:\n{}",
        found.join("\n")
    );
}

/// Under `--json` an error is also a `turnscope.error/1` document on stdout, with the same text
/// and exit code as the `error:`/`hint:` lines on stderr; without it, stdout stays empty.
#[test]
fn errors_under_json_are_json_too() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    for args in [
        &["list", "--json"][..],
        &["list", "-o", "json"],
        &["show", "abc", "--json"],
    ] {
        let o = turnscope(s(&missing), args);
        assert_eq!(o.status.code(), Some(4));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON document");
        assert_eq!(doc["schema"], "turnscope.error/1");
        assert_eq!(doc["exitCode"], 4);
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err.lines().next().unwrap();
        assert_eq!(line, format!("error: {}", doc["error"].as_str().unwrap()));
        assert!(err.contains(&format!("hint: {}", doc["hint"].as_str().unwrap())));
    }
    let (e, _) = error_and_hint(&turnscope(s(&missing), &["list"]), 4);
    assert!(e.starts_with("no database at "), "{e}");
    // Arguments that do not parse, under --json: the document too, with clap's suggestion.
    for args in [
        &["list", "--kind", "dirct", "--json"][..],
        &["list", "-o", "json", "--kind", "dirct"],
    ] {
        let o = turnscope(s(&missing), args);
        assert_eq!(o.status.code(), Some(2));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON document");
        assert_eq!(doc["schema"], "turnscope.error/1");
        assert_eq!(doc["exitCode"], 2);
        assert!(
            doc["error"]
                .as_str()
                .unwrap()
                .contains("invalid value 'dirct'"),
            "{doc}"
        );
        assert!(doc["hint"].as_str().unwrap().contains("'direct'"), "{doc}");
    }
    let o = turnscope(s(&missing), &["list", "--kind", "dirct"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}
