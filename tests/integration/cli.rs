//! The CLI on the runtime's fixtures and on bad input: exit codes, one-line errors with a hint.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::unpack_fixture;

/// `now` for fixture runs: just after tool-batch-mid's leases expired (from its manifest).
const TOOL_BATCH_MID_NOW: &str = "1796014405862";

fn turnscope(db: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", TOOL_BATCH_MID_NOW);
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    cmd.args(args).output().expect("run turnscope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Assert a failure: the exit code, an `error:` line containing `needle`, and a `hint:` line.
fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one error line and one hint line, got: {err}"
    );
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(o.stdout.is_empty(), "nothing on stdout on error");
}

#[test]
fn list_expired_on_a_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let o = turnscope(Some(&db), &["list"]);
    assert!(o.status.success());
    insta::assert_snapshot!("list_expired_tool_batch_mid", stdout(&o));
    let all = stdout(&turnscope(Some(&db), &["list", "--status", "all"]));
    assert_eq!(
        all.lines().count(),
        6,
        "header + 3 submissions + the cost total + the pinned clock:\n{all}"
    );
    assert!(
        all.contains("pending") && all.contains("completed"),
        "{all}"
    );
}

#[test]
fn show_names_the_partial_batch_and_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let o = turnscope(Some(&db), &["--context-window", "200000", "show", "ec6474"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The runtime replaced this attempt (rule 5) and repaired at resume time (its resume report).
    insta::assert_snapshot!("show_tool_results_partial", stdout(&o));
    // The decision comes before the history (a whale's is thousands of lines).
    let text = stdout(&o);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    assert!(at("\nverdict ") < at("\nhistory"), "{text}");
    assert!(at("\nplan ") < at("\nhistory"), "{text}");
}

#[test]
fn json_outputs_are_stable_documents() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let o = turnscope(Some(&db), &["list", "--status", "all", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "turnscope.list/1");
    let subs = v["submissions"].as_array().unwrap();
    assert_eq!(subs.len(), 3);
    assert_eq!(subs[1]["classification"]["kind"], "tool_use_unresolved");
    assert_eq!(subs[1]["plan"]["rule"], 6);
    assert_eq!(subs[1]["plan"]["writes"][0]["op"], "repair_tool_calls");
    assert_eq!(subs[2]["verdict"], "pending");

    let show: Value =
        serde_json::from_slice(&turnscope(Some(&db), &["show", "74384fb4", "--json"]).stdout)
            .unwrap();
    assert_eq!(show["schema"], "turnscope.show/1");
    assert_eq!(show["journal"]["phase"], "tool_request_recorded");
    assert_eq!(
        show["classification"]["trailingPartialBatch"]["entry_id"],
        "8dd456d7"
    );
    assert_eq!(show["following"].as_array().unwrap().len(), 1);

    let c: Value =
        serde_json::from_slice(&turnscope(Some(&db), &["classify", "74384fb4", "--json"]).stdout)
            .unwrap();
    assert_eq!(c["schema"], "turnscope.classify/1");
    assert_eq!(c["classification"]["result"]["kind"], "tool_use_unresolved");
    assert_eq!(c["classification"]["explanation"]["step"], 9);
    assert_eq!(c["contextWindow"]["source"], "default");
}

/// Every document of a beta.7 read names the journal format right after its schema, as the 2.x
/// documents name theirs, whichever command made it (reads, a dry-run action, a dry-run bulk).
#[test]
fn every_document_names_the_journal_format_after_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let runs: [&[&str]; 11] = [
        &["list", "--status", "all", "--json"],
        &["show", "74384fb4", "--json"],
        &["classify", "74384fb4", "--json"],
        &["sessions", "74384fb4", "--json"],
        &["incidents", "--json"],
        &["audit", "--json"],
        &["--write", "repair", "74384fb4", "--dry-run", "--json"],
        &["--write", "repair", "--all", "--dry-run", "--json"],
        &["diff", "74384fb4", "74384fb4", "--json"],
        &["next-request", "74384fb4", "--json"],
        &["health", "--all", "--json"],
    ];
    for args in runs {
        let o = turnscope(Some(&db), args);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: {e}: {}{}",
                stdout(&o),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        let keys: Vec<&String> = v.as_object().unwrap().keys().take(2).collect();
        assert_eq!(keys, ["schema", "format"], "{args:?}");
        assert_eq!(v["format"], "flue-1.0.0-beta.7", "{args:?}");
    }
}

#[test]
fn classify_uses_the_context_window_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "overflow");
    let o = turnscope(Some(&db), &["--context-window", "200000", "classify", "a"]);
    // Either a unique prefix resolves or it is reported; try the full listing to get the id.
    let list: Value = serde_json::from_slice(
        &turnscope(Some(&db), &["list", "--status", "all", "--json"]).stdout,
    )
    .unwrap();
    let id = list["submissions"][0]["submission"]["submissionId"]
        .as_str()
        .unwrap()
        .to_string();
    drop(o);
    let o = turnscope(Some(&db), &["--context-window", "200000", "classify", &id]);
    let text = stdout(&o);
    assert!(text.contains("resume/overflow"), "{text}");
    assert!(text.contains("200000 (from --context-window)"), "{text}");
}

#[test]
fn missing_database_file() {
    let o = turnscope(Some(Path::new("/nonexistent/flue.db")), &["list"]);
    assert_fails(&o, 4, "no database at /nonexistent/flue.db");
    assert!(!Path::new("/nonexistent/flue.db").exists());
}

#[test]
fn no_database_given() {
    let o = turnscope(None, &["list"]);
    assert_fails(&o, 2, "no database given");
}

#[test]
fn empty_and_non_sqlite_files() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert_fails(&turnscope(Some(&empty), &["list"]), 1, "is empty");
    let text = dir.path().join("notes.db");
    std::fs::write(
        &text,
        "this is not a database, just some text that is long enough ".repeat(40),
    )
    .unwrap();
    assert_fails(
        &turnscope(Some(&text), &["list"]),
        1,
        "not an SQLite database",
    );
}

#[test]
fn truncated_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let bytes = std::fs::read(&db).unwrap();
    let cut = dir.path().join("cut.db");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let before = std::fs::read(&cut).unwrap();
    let o = turnscope(Some(&cut), &["list", "--status", "all"]);
    assert!(
        !o.status.success(),
        "a truncated database must not read as fine"
    );
    assert_fails(&o, 1, "");
    assert_eq!(std::fs::read(&cut).unwrap(), before, "never written to");
}

#[test]
fn sqlite_database_of_another_product() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE orders(id INTEGER);",
    )
    .unwrap();
    drop(conn);
    assert_fails(
        &turnscope(Some(&db), &["list"]),
        1,
        "not a flue journal (tables: orders, users)",
    );
}

#[test]
fn newer_runtime_format_and_unknown_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let newer = dir.path().join("newer.db");
    let conn = rusqlite::Connection::open(&newer).unwrap();
    conn.execute_batch(
        "CREATE TABLE flue_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO flue_meta VALUES ('format_version', '1');
         CREATE TABLE flue_conversation_streams(id TEXT);",
    )
    .unwrap();
    drop(conn);
    // list reads flue 2.x, and says which of its tables this one lacks; the rest refuse 2.x.
    assert_fails(
        &turnscope(Some(&newer), &["list"]),
        1,
        "this flue 2.x journal has no flue_agent_submissions table",
    );
    assert_fails(
        &turnscope(Some(&newer), &["--write", "step", "x", "--dry-run"]),
        1,
        "written by flue 2.x (flue_meta.format_version = 1): only list, show, classify, incidents, sessions, export, wait, diff, next-request, health, audit and the actions abort, requeue, extend, fail and undo read it yet",
    );

    let db = unpack_fixture(dir.path(), "before-provider");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE flue_meta SET value = '9' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    drop(conn);
    assert_fails(
        &turnscope(Some(&db), &["list"]),
        1,
        "unsupported journal schema version \"9\"",
    );
}

#[test]
fn malformed_entry_json_is_shown_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let conn = rusqlite::Connection::open(&db).unwrap();
    // Damage the last entry on the path (the trailing aborted assistant).
    let id: String = conn
        .query_row(
            "SELECT entry_id FROM flue_session_entries ORDER BY position DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE flue_session_entries SET data = '{\"type\":\"message\",' WHERE entry_id = ?1",
        [&id],
    )
    .unwrap();
    drop(conn);
    let o = turnscope(Some(&db), &["show", "ec6474"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    // The runtime cannot load this session, so turnscope predicts nothing and says why.
    assert!(text.contains("verdict         damaged"), "{text}");
    assert!(
        text.contains(&format!("entry {id} at position 3 is malformed")),
        "{text}"
    );
    assert!(
        !text.contains("  1. "),
        "no writes are planned on a damaged session:\n{text}"
    );
}

#[test]
fn unknown_submission_and_ambiguous_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    assert_fails(
        &turnscope(Some(&db), &["show", "ffffffff"]),
        4,
        "no submission matches \"ffffffff\"",
    );
    // Make two ids share a prefix.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE flue_agent_submissions SET submission_id = '74384fb4-0000' WHERE sequence = 3",
        [],
    )
    .unwrap();
    drop(conn);
    assert_fails(
        &turnscope(Some(&db), &["show", "7438"]),
        2,
        "\"7438\" matches 2 submissions",
    );
    // Ids with LIKE wildcards are matched literally.
    assert_fails(
        &turnscope(Some(&db), &["show", "%"]),
        4,
        "no submission matches \"%\"",
    );
}

#[test]
fn opening_is_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let before = std::fs::read(&db).unwrap();
    for args in [
        &["list", "--status", "all"][..],
        &["show", "74384fb4"],
        &["classify", "74384fb4"],
    ] {
        assert!(turnscope(Some(&db), args).status.success());
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database file is unchanged"
    );
}

#[test]
fn reads_a_crash_copy_with_its_wal() {
    // The exact files the SIGKILL left: a 4 KiB main file and the whole history in the -wal.
    let dir = tempfile::tempdir().unwrap();
    let raw = crate::support::fixtures_dir().join("flue-beta7/raw");
    for f in [
        "tool-batch-mid.db",
        "tool-batch-mid.db-wal",
        "tool-batch-mid.db-shm",
    ] {
        std::fs::write(
            dir.path().join(f),
            crate::support::gunzip(&raw.join(format!("{f}.gz"))),
        )
        .unwrap();
    }
    let db = dir.path().join("tool-batch-mid.db");
    let o = turnscope(Some(&db), &["list", "--status", "all", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["submissions"].as_array().unwrap().len(), 3);
}

#[test]
fn locked_database_gives_a_retry_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    // A rollback-journal database under an exclusive lock blocks readers (WAL would not).
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder
        .execute_batch("PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE;")
        .unwrap();
    holder
        .execute("UPDATE flue_meta SET value = value", [])
        .unwrap();
    let o = turnscope(Some(&db), &["list"]);
    assert_fails(&o, 1, "locked");
    holder.execute_batch("ROLLBACK").unwrap();
    assert!(
        turnscope(Some(&db), &["list"]).status.success(),
        "works once the lock is gone"
    );
}

#[test]
fn demo_writes_a_database_and_lists_every_stuck_case() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let o = turnscope(None, &["demo", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o).replace(dir.path().to_str().unwrap(), "<tmp>");
    insta::assert_snapshot!("demo_list", text);
    // The same file answers every command.
    let v: Value =
        serde_json::from_slice(&turnscope(Some(&db), &["list", "--json"]).stdout).unwrap();
    let rules: std::collections::BTreeSet<i64> = v["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["plan"]["rule"].as_i64())
        .collect();
    assert_eq!(
        rules,
        (1..=9).collect(),
        "every reconciler rule 1-9 fires somewhere in the demo"
    );
    let show = turnscope(Some(&db), &["show", "86bad5c1"]);
    assert!(
        stdout(&show).contains("[partial batch]"),
        "{}",
        stdout(&show)
    );
    // Refuses to overwrite.
    let again = turnscope(None, &["demo", db.to_str().unwrap()]);
    assert_fails(&again, 1, "could not write the demo database");
}

#[test]
fn demo_without_a_path_uses_a_new_temp_file() {
    let o = turnscope(None, &["demo", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let path = v["database"].as_str().unwrap().to_string();
    assert!(
        path.starts_with(std::env::temp_dir().to_str().unwrap()),
        "{path}"
    );
    assert!(v["submissions"].as_array().unwrap().len() >= 20);
    // A demo without a path leaves nothing behind.
    for ext in ["", "-wal", "-shm", "-journal"] {
        let p = format!("{path}{ext}");
        assert!(!Path::new(&p).exists(), "{p} left behind");
    }
    // In a pipe too, and it says so instead of pointing at a file that is gone.
    let o = turnscope(None, &["demo"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with("; removed when this run ends (give a PATH to keep it)"),
        "{first}"
    );
    let path = first
        .strip_prefix("demo journal database: ")
        .and_then(|r| r.split(" (").next())
        .unwrap();
    assert!(!Path::new(path).exists(), "{path} left behind");
    assert!(text.contains("next: turnscope demo ./demo.db"), "{text}");
}

#[test]
fn list_filters_the_way_operators_ask() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    assert!(turnscope(None, &["demo", db.to_str().unwrap(), "--json"])
        .status
        .success());
    let ids = |args: &[&str]| -> Vec<Value> {
        let o = turnscope(Some(&db), &[&["list", "--json"], args].concat());
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["submissions"].as_array().unwrap().clone()
    };
    let all_expired = ids(&[]);
    let resume = ids(&["--verdict", "resume"]);
    assert!(!resume.is_empty() && resume.len() < all_expired.len());
    assert!(resume
        .iter()
        .all(|s| s["verdict"].as_str().unwrap().starts_with("resume/")));
    let partial = ids(&["--verdict", "resume/tool_results_partial"]);
    assert_eq!(partial.len(), 2, "travel-desk and crm-sync");
    assert!(ids(&["--kind", "direct"])
        .iter()
        .all(|s| s["submission"]["kind"] == "direct"));
    let support = ids(&["--status", "all", "--instance", "support-7"]);
    assert!(
        support.len() >= 2
            && support
                .iter()
                .all(|s| s["submission"]["instanceId"] == "support-7")
    );
    assert_eq!(ids(&["--limit", "3"]).len(), 3);
    // The demo's leases expired 30 s, about 4 min or about 2 h before its clock.
    let old = ids(&["--older-than", "1h"]);
    assert!(!old.is_empty() && old.len() < all_expired.len());
    assert!(
        old.iter()
            .all(|s| s["submission"]["lease"].as_str().unwrap().contains('h')),
        "{old:?}"
    );
    let bad = turnscope(Some(&db), &["list", "--older-than", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn version_completions_and_man_page() {
    let v = crate::support::turnscope_command()
        .arg("--version")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(
        text.starts_with(&format!("turnscope {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    for shell in ["bash", "zsh", "fish"] {
        let o = turnscope(None, &["completions", shell]);
        assert!(o.status.success());
        let script = stdout(&o);
        assert!(
            script.contains("turnscope") && script.contains("repair") && script.contains("dry-run"),
            "{shell}"
        );
    }
    let man = stdout(&turnscope(None, &["man"]));
    assert!(
        man.contains(".TH turnscope 1") && man.contains("\\-\\-db") && man.contains("repair"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert_eq!(
        turnscope(None, &["completions", "tcsh"]).status.code(),
        Some(2)
    );
}

#[test]
fn scale_journals_are_deterministic_and_their_whale_is_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let now = 1_780_000_000_000;
    let a = crate::support::scale_db(&dir.path().join("a.db"), 0.001, 1, false, None, now);
    assert!(a.submissions >= 200 && a.expired >= 20);
    let b = crate::support::scale_db(&dir.path().join("b.db"), 0.001, 1, false, None, now);
    assert_eq!(
        (a.entries, &a.whale_submission_id),
        (b.entries, &b.whale_submission_id)
    );
    // The whale is stuck and classifies like the runtime would.
    let db = dir.path().join("a.db");
    let c: Value = serde_json::from_slice(
        &turnscope(Some(&db), &["classify", &a.whale_submission_id, "--json"]).stdout,
    )
    .unwrap();
    let label = c["classification"]["label"].as_str().unwrap();
    assert!(
        ["tool_use_unresolved", "resume/tool_results_partial"].contains(&label),
        "{label}"
    );
}

/// The documented JSON documents, pinned: a change to a field name, type or nesting shows up here
/// and must come with a new schema version.
#[test]
fn json_schemas_are_stable() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let tmp = dir.path().to_str().unwrap().to_string();
    let doc = |args: &[&str]| -> String {
        let o = turnscope(Some(&db), args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout(&o).replace(&tmp, "<tmp>")
    };
    insta::assert_snapshot!("json_list", doc(&["list", "--status", "all", "--json"]));
    insta::assert_snapshot!(
        "json_show",
        doc(&["--context-window", "200000", "show", "74384fb4", "--json"])
    );
    insta::assert_snapshot!("json_classify", doc(&["classify", "74384fb4", "--json"]));
    // Dry run: entry ids are random, so pin only the shape of the action document.
    let action: Value =
        serde_json::from_str(&doc(&["repair", "74384fb4", "--dry-run", "--json"])).unwrap();
    let keys: Vec<&String> = action.as_object().unwrap().keys().collect();
    insta::assert_snapshot!("json_action_keys", format!("{keys:?}"));
    insta::assert_snapshot!("json_audit_empty", doc(&["audit", "--json"]));
}

/// Without the `postgres` feature a URL is refused in one line that says how to get it.
#[cfg(not(feature = "postgres"))]
#[test]
fn a_postgres_url_without_the_feature_says_how_to_rebuild() {
    let url = Path::new("postgres://ops:pw-secret@db.example/journal");
    for args in [
        &["list"][..],
        &["show", "abc"],
        &["demo", "postgres://ops@db.example/x"],
    ] {
        let o = turnscope(Some(url), args);
        assert_fails(&o, 1, "this turnscope was built without PostgreSQL support");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--features postgres"), "{args:?}: {err}");
        assert!(!err.contains("pw-secret"), "{args:?}: {err}");
    }
}

/// `--help` says what no command does and shows the commands to start from; each command's help
/// keeps the global flags in their own section, after its own.
#[test]
fn help_has_examples_and_global_flags_apart() {
    let o = turnscope(None, &["--help"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("With no command, turnscope opens the TUI on the database"),
        "{text}"
    );
    assert!(text.contains("Examples:\n  turnscope demo "), "{text}");
    let o = turnscope(None, &["list", "--help"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let global = text
        .find("Global options:")
        .expect("a Global options section");
    let db = text.find("--db <PATH|URL>").expect("--db is listed");
    let verdict = text
        .find("--verdict <VERDICT>")
        .expect("--verdict is listed");
    assert!(verdict < global && global < db, "{text}");
}

/// Completions offer the values of `--verdict` and `--status`, no file names for an id, and never
/// the hidden clock; a reader that stops early (`| head`) ends them quietly.
#[test]
fn completions_offer_values_not_files_nor_hidden_flags() {
    let o = turnscope(None, &["completions", "bash"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains("now-ms"), "the hidden clock is offered");
    let arm = |flag: &str| -> String {
        let start = text
            .find(&format!("                {flag})"))
            .unwrap_or_else(|| panic!("{flag} has a case arm"));
        text[start..start + text[start..].find(";;").unwrap()].to_string()
    };
    let verdict = arm("--verdict");
    assert!(verdict.contains("resume/tool_results_partial") && verdict.contains("stuck"));
    assert!(arm("--status").contains("terminalizing"));
    assert!(
        !arm("--submission").contains("compgen -f"),
        "file names for an id"
    );
    // A reader gone before the first byte (`| head -0`): the write fails with a broken pipe.
    let mut child = crate::support::turnscope_command()
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}
