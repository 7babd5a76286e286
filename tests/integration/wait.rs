//! `turnscope wait`: the rule the runtime's writes show beside the one predicted. Here the
//! runtime's writes are made the way it makes them (turnscope's own `reconcile` writes the rule's
//! data, the attempt replacement is the runtime's row update); `runtime_roundtrip` has the real
//! runtime.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::backends::{kinds, TestDb};
use crate::support::turnscope_command;
use turnscope_store::DbTarget;

fn demo(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("demo.db");
    turnscope_demo::write_demo(&db, turnscope_store::clock::now_ms()).unwrap();
    db
}

fn cmd(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
    let mut c = turnscope_command();
    c.env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "wait@test")
        .arg("--db")
        .arg(db)
        .args(args);
    c
}

/// `wait … --json` started in the background.
fn start_wait(db: impl AsRef<std::ffi::OsStr>, id: &str, timeout: &str) -> Child {
    cmd(
        db,
        &[
            "wait",
            id,
            "--timeout",
            timeout,
            "--interval",
            "100ms",
            "--json",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}

/// Its exit code and document.
fn finish(child: Child) -> (i32, Value) {
    let o = child.wait_with_output().unwrap();
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap(), doc)
}

/// Wait until `wait` has read its prediction (its first read happens before it sleeps).
fn settle_in() {
    std::thread::sleep(std::time::Duration::from_millis(600));
}

/// The runtime's `replaceTurnJournalAttempt` on the submission row: a new attempt, one more
/// counted, a live lease.
fn replace_attempt(db: &TestDb, id: &str) {
    let n = db.exec(&format!(
        "UPDATE flue_agent_submissions SET attempt_id = 'attempt-from-wait-test', attempt_count = attempt_count + 1, lease_expires_at = {} WHERE submission_id = '{id}'",
        turnscope_store::clock::now_ms() + 30_000
    ));
    assert_eq!(n, 1);
}

fn db_arg(db: &TestDb) -> String {
    match &db.target {
        DbTarget::Sqlite(p) | DbTarget::Export(p) => p.display().to_string(),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres(t) => t.url(),
        #[cfg(not(feature = "postgres"))]
        DbTarget::Postgres(_) => unreachable!("no PostgreSQL without the feature"),
    }
}

/// The stuck submission of `instance` at the real clock (the demo is written at it).
fn demo_id(db: &Path, instance: &str) -> String {
    use turnscope_store::JournalStore;
    turnscope_store::SqliteStore::open(db)
        .unwrap()
        .list_submissions(
            turnscope_store::RowFilter::Expired,
            turnscope_store::clock::now_ms(),
        )
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some(instance))
        .unwrap_or_else(|| panic!("no stuck submission for {instance}"))
        .submission_id
}

/// On every backend: rule 6's data written, then the attempt replaced, is rule 6 as predicted;
/// the replacement alone is rule 5's, not as predicted.
#[test]
fn rule_6_as_predicted_and_a_bare_replacement_not_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        for answered in [true, false] {
            let sub = dir.path().join(format!("{kind:?}-{answered}"));
            std::fs::create_dir(&sub).unwrap();
            let sqlite = demo(&sub);
            let id = demo_id(&sqlite, "travel-desk");
            let db = TestDb::from_sqlite(kind, &sqlite);
            let target = db_arg(&db);
            let child = start_wait(&target, &id[..8], "30s");
            settle_in();
            if answered {
                // Rule 6's data, as the runtime writes it, then its attempt replacement.
                let o = cmd(
                    &target,
                    &["--write", "reconcile", &id, "-y", "--ack-side-effects"],
                )
                .output()
                .unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            }
            replace_attempt(&db, &id);
            let (code, doc) = finish(child);
            let s = &doc["submissions"][0];
            assert_eq!(s["predicted"]["rule"], 6, "{kind:?} {doc:#}");
            assert_eq!(s["observed"]["what"], "replacement", "{kind:?} {doc:#}");
            if answered {
                assert_eq!(s["observed"]["rule"], 6, "{kind:?} {doc:#}");
                assert_eq!(s["outcome"], "as_predicted");
                assert_eq!(code, 0);
            } else {
                assert_eq!(s["observed"]["rule"], 5, "a bare replacement is rule 5's");
                assert_eq!(s["outcome"], "not_as_predicted");
                assert_eq!(code, 6);
            }
        }
    }
}

#[test]
fn a_failure_is_read_from_its_advisory() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    // The demo's etl-nightly is past its deadline: rule 3.
    let id = demo_id(&db, "etl-nightly");
    let child = start_wait(&db, &id, "30s");
    settle_in();
    let o = cmd(&db, &["--write", "fail", &id, "--reason", "deadline", "-y"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, doc) = finish(child);
    let s = &doc["submissions"][0];
    assert_eq!(s["predicted"]["rule"], 3, "{doc:#}");
    assert_eq!(s["observed"]["rule"], 3, "{doc:#}");
    assert_eq!(s["observed"]["what"], "failed");
    assert_eq!(code, 0);
}

#[test]
fn nothing_happening_times_out_with_its_own_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = demo_id(&db, "travel-desk");
    let (code, doc) = finish(start_wait(&db, &id, "300ms"));
    assert_eq!(code, 7, "{doc:#}");
    assert_eq!(doc["submissions"][0]["outcome"], "timed_out");
    assert!(doc["submissions"][0]["observed"].is_null());
    // Text: the prediction first, then what did not happen.
    let o = cmd(&db, &["wait", &id[..8], "--timeout", "200ms"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("predicted: rule 6 → replacement"), "{text}");
    assert!(text.contains("not acted on within 200ms"), "{text}");
    assert_eq!(o.status.code(), Some(7));
}
