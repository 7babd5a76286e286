//! What the CLI does around a write: an explicit yes at a terminal (or `-y`), the real clock for
//! every safety check, write access checked before any preview, refusals as JSON documents and
//! their exit codes, the live-runtime warning.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use turnscope_store::{JournalStore, RowFilter, SqliteStore};

use crate::support::{turnscope_command, unpack_fixture};

/// tool-batch-mid's stuck submission: its lease expired long ago by the real clock.
const SUB: &str = "74384fb4";

fn cmd(db: &Path, args: &[&str]) -> Command {
    let mut c = turnscope_command();
    c.env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "safety@test")
        .arg("--db")
        .arg(db)
        .args(args);
    c
}

fn run_with_stdin(db: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = cmd(db, args);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        None => {
            c.stdin(Stdio::null());
        }
        Some(_) => {
            c.stdin(Stdio::piped());
        }
    }
    let mut child = c.spawn().unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A digest of the database file and of its WAL's frames, byte for byte (a digest: a failure
/// message stays short). Opening for writing may leave an empty WAL behind: that wrote nothing.
fn bytes(db: &Path) -> (u64, Option<u64>) {
    use std::hash::{Hash, Hasher};
    let digest = |b: Vec<u8>| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        b.hash(&mut h);
        h.finish()
    };
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    (
        digest(std::fs::read(db).unwrap()),
        std::fs::read(wal).ok().filter(|w| w.len() > 32).map(digest),
    )
}

fn audit_count(db: &Path) -> usize {
    SqliteStore::open(db)
        .unwrap()
        .audit_records()
        .unwrap()
        .len()
}

#[test]
fn a_pipe_or_dev_null_never_answers_yes() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let before = bytes(&db);
    for stdin in [Some("n\n"), Some("y\n"), None] {
        let o = run_with_stdin(
            &db,
            &["--write", "repair", "--ack-side-effects", SUB],
            stdin,
        );
        assert_eq!(o.status.code(), Some(2), "{stdin:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("error: refusing to write without an explicit yes")
                && err.contains("hint: run it at a terminal and answer y, or add -y"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 2, "one error and one hint: {err}");
        assert_eq!(bytes(&db), before, "{stdin:?}: nothing written");
    }
    // -y is the explicit yes of a script.
    let o = run_with_stdin(
        &db,
        &["--write", "repair", "--ack-side-effects", SUB, "-y"],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(audit_count(&db), 1);
}

/// Run the command in a pseudo-terminal (util-linux `script`), answering `answer`.
fn at_terminal(db: &Path, args: &[&str], answer: &str) -> Output {
    let line = std::iter::once(env!("CARGO_BIN_EXE_turnscope").to_string())
        .chain(["--db".into(), db.display().to_string()])
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut c = Command::new("script");
    c.args(["-qec", &line, "/dev/null"])
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "safety@test")
        .env(
            "XDG_CONFIG_HOME",
            crate::support::fixtures_dir().join("no-config-here"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .expect("util-linux `script` runs the terminal tests");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_person_at_a_terminal_answers_and_no_is_its_own_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let before = bytes(&db);
    let o = at_terminal(
        &db,
        &["--write", "repair", "--ack-side-effects", SUB],
        "n\n",
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "{text}");
    assert!(
        text.contains("apply these writes? [y/N]") && text.contains("declined: nothing written"),
        "{text}"
    );
    assert_eq!(bytes(&db), before, "declined: nothing written");
    let o = at_terminal(
        &db,
        &["--write", "repair", "--ack-side-effects", SUB],
        "y\n",
    );
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("applied: ") && text.contains(" rows written"),
        "{text}"
    );
    assert_eq!(audit_count(&db), 1);
}

#[test]
fn usage_errors_exit_2_and_refusals_print_their_json_document() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let before = bytes(&db);
    for args in [
        &["--write", "fail", SUB, "-y"][..],
        &["--write", "fail", SUB, "-y", "--reason", "  "],
        &["fail", SUB, "--dry-run"],
    ] {
        let o = run_with_stdin(&db, args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("error: fail needs a reason"),
            "{}",
            stderr(&o)
        );
    }
    let o = run_with_stdin(
        &db,
        &["--write", "--operator", " ", "repair", SUB, "-y"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("error: the operator name is empty"));

    let o = run_with_stdin(&db, &["--write", "requeue", SUB, "-y", "--json"], None);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("a refusal prints its document");
    assert_eq!(v["schema"], "turnscope.action/1");
    assert_eq!(v["action"], "requeue");
    assert!(v["submissionId"].as_str().unwrap().starts_with(SUB));
    assert!(
        v["refused"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("the input was already applied"),
        "{v}"
    );
    assert!(v["applied"].is_null());
    assert_eq!(bytes(&db), before);

    // The fence speaks the documents' language.
    let o = run_with_stdin(&db, &["repair", SUB, "--dry-run", "--json"], None);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fence = &v["fence"];
    assert!(fence["submissionId"].as_str().unwrap().starts_with(SUB));
    assert!(fence["leaseExpiresAt"].as_i64().unwrap() > 0);
    assert_eq!(fence["requireExpiredLease"], true);
    assert_eq!(fence["journal"]["phase"], "tool_request_recorded");
    assert!(fence["journal"]["attemptId"].is_string());
    assert!(fence["session"]["entryCount"].as_i64().unwrap() > 0);
}

#[test]
fn the_man_page_documents_every_exit_status() {
    let o = turnscope_command().arg("man").output().unwrap();
    let man = String::from_utf8_lossy(&o.stdout);
    let section = man
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .expect("an EXIT STATUS section");
    for code in 0..=5 {
        assert!(
            section.contains(&format!("\\fB{code}\\fR")),
            "{code}: {section}"
        );
    }
    assert!(section.contains("declined"), "{section}");
}

fn demo_now(dir: &Path) -> (PathBuf, i64) {
    let now = turnscope_store::clock::now_ms();
    let db = dir.join("demo.db");
    turnscope_demo::write_demo(&db, now).unwrap();
    (db, now)
}

/// The demo's submission whose lease is live for another 30 minutes by the real clock.
fn live_id(db: &Path, now: i64) -> String {
    SqliteStore::open(db)
        .unwrap()
        .list_submissions(RowFilter::Running, now)
        .unwrap()
        .into_iter()
        .find(|r| r.lease_expires_at > now + 60_000)
        .expect("the demo has a live submission")
        .submission_id
}

#[test]
fn a_pinned_clock_never_moves_the_live_lease_guard_and_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = demo_now(dir.path());
    let live = live_id(&db, now);
    let before = bytes(&db);
    let two_hours_ahead = (now + 2 * 3_600_000).to_string();
    for kind in [
        &["fail", &live, "--reason", "r"][..],
        &["repair", "--ack-side-effects", &live],
        &["step", "--ack-side-effects", &live],
        &["requeue", &live],
    ] {
        let mut args = vec!["--write"];
        args.extend_from_slice(kind);
        args.push("-y");
        let o = cmd(&db, &args)
            .env("TURNSCOPE_NOW_MS", &two_hours_ahead)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{kind:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("the lease is live"),
            "{kind:?}: {}",
            stderr(&o)
        );
    }
    assert_eq!(bytes(&db), before, "nothing written under a live lease");
    // Every output says the clock is pinned: last on stdout, or on stderr beside JSON.
    let o = cmd(&db, &["list"])
        .env("TURNSCOPE_NOW_MS", &two_hours_ahead)
        .output()
        .unwrap();
    assert!(
        stdout(&o)
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("clock: pinned to "),
        "{}",
        stdout(&o)
    );
    let o = cmd(&db, &["list", "--json"])
        .env("TURNSCOPE_NOW_MS", &two_hours_ahead)
        .output()
        .unwrap();
    serde_json::from_slice::<Value>(&o.stdout).expect("the document stays JSON");
    assert!(
        stderr(&o).starts_with("clock: pinned to "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_live_runtime_is_named_before_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = demo_now(dir.path());
    let store = SqliteStore::open(&db).unwrap();
    let expired = store.list_submissions(RowFilter::Expired, now).unwrap();
    let translator = expired
        .iter()
        .find(|r| r.instance_id().as_deref() == Some("translator-eu"))
        .expect("the demo's rule 9 submission")
        .submission_id
        .clone();
    let o = cmd(
        &db,
        &["--write", "step", "--ack-side-effects", &translator, "-y"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("warning: a runtime is live: 1 submission(s) hold a live lease"),
        "{text}"
    );
    assert!(text.contains("its SQLite busy timeout is 0"), "{text}");
    // Its lease expired two hours ago beside a live runtime: no "within 15 s" for it, what is
    // true of its state instead.
    assert!(
        text.contains("lease expired 2h00m ago and it is still running: the live runtime has not reconciled it")
            && text.contains("a pass that does would apply rule 9 → failed"),
        "{text}"
    );
    assert!(!text.contains("within 15 s"), "{text}");
    // Where no lease is live, nothing is said.
    let quiet = tempfile::tempdir().unwrap();
    let fixture = unpack_fixture(quiet.path(), "tool-batch-mid");
    let o = cmd(
        &fixture,
        &["--write", "repair", "--ack-side-effects", SUB, "-y"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("a runtime is live"), "{}", stdout(&o));
}

/// Run as `nobody` when the tests run as root (root writes any file regardless of its mode).
fn as_unprivileged(db: &Path, args: &[&str]) -> Output {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_turnscope"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_turnscope"))
    };
    c.env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "safety@test")
        .env(
            "XDG_CONFIG_HOME",
            crate::support::fixtures_dir().join("no-config-here"),
        )
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn write_access_is_checked_before_any_preview() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("journal");
    std::fs::create_dir(&sub).unwrap();
    let db = unpack_fixture(&sub, "tool-batch-mid");
    // A rollback-journal database: reading it needs no side file, writing needs one (-journal)
    // in the directory.
    rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
        .unwrap();
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set(dir.path(), 0o755);
    set(&sub, 0o755);
    set(&db, 0o644);
    let before = bytes(&db);
    // The file is not the user's: one error line, the hint, no preview, no question.
    let o = as_unprivileged(&db, &["--write", "repair", "--ack-side-effects", SUB]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the database file is not writable by this user"),
        "{err}"
    );
    assert!(err.contains("hint: run turnscope as the user the runtime writes as"));
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(stdout(&o).is_empty(), "no preview: {}", stdout(&o));
    // The file is, the directory (where SQLite creates its -wal and -shm) is not.
    set(&db, 0o666);
    let o = as_unprivileged(&db, &["--write", "repair", "--ack-side-effects", SUB]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the database's directory is not writable"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "no preview: {}", stdout(&o));
    // Reading needs neither.
    let o = as_unprivileged(&db, &["repair", SUB, "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(bytes(&db), before);
}
