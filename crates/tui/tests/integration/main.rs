//! turnscope-tui's test binary, driving the TUI headless (the `test-harness` feature): rendering
//! snapshots (TestBackend + insta, 80x24 and 160x48) and key handling driven through event
//! sequences, on the crash fixtures, the demo and synthetic journals. The real binary in tmux and
//! the TUI on a scale database (the generator is in turnscope-bench) are tested at the root.
//!
//! Time is pinned in every test (the harness's `now`), and screens show a fixed database name,
//! so snapshots do not depend on the machine.

use std::path::{Path, PathBuf};
use std::time::Duration;
use turnscope_core::journal::status::SubmissionStatus;

use ratatui::style::Color;
use serde_json::Value;
use turnscope_store::{JournalStore, RowFilter, SqliteStore};
use turnscope_testkit::unpack_fixture;
use turnscope_tui::harness::{
    write_empty_journal, write_synthetic_journal, Harness, HarnessOptions, PopupKind,
    SYNTH_SUBMISSION,
};
use turnscope_tui::{NodeKind, Pane, Root, Theme};

mod audit;
mod chrome;
mod feedback;
mod health_repair;
mod incidents;
mod inspect;
mod list;
mod list_query;
mod popups;
mod sessions;
mod write;
mod write_safety;

/// Every test file of this folder is compiled.
#[test]
fn no_forgotten_test_files() {
    turnscope_testkit::assert_no_forgotten_test_files(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/integration"
    )));
}

/// The clock of the synthetic and demo databases.
const NOW: i64 = 1_767_604_800_000;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    // Relative to the test files (tests/integration/*.rs): the snapshots stay in one folder.
    s.set_snapshot_path("snapshots");
    s
}

/// "Now" for a crash fixture: just after its last lease expired (as the manifest was made).
fn fixture_now(db: &Path) -> i64 {
    let store = SqliteStore::open(db).unwrap();
    let rows = store.list_submissions(RowFilter::All, 0).unwrap();
    rows.iter().map(|r| r.lease_expires_at).max().unwrap_or(0) + 1
}

fn opts(name: &str, now: i64, (w, h): (u16, u16), export_dir: &Path) -> HarnessOptions {
    let mut o = HarnessOptions::new(now);
    o.width = w;
    o.height = h;
    o.display_name = name.to_string();
    o.export_dir = export_dir.to_path_buf();
    o.context_window = Some(200_000);
    o
}

fn fixture(dir: &Path, name: &str, size: (u16, u16)) -> Harness {
    let db = unpack_fixture(dir, name);
    let now = fixture_now(&db);
    Harness::open(&db, opts(&format!("{name}.db"), now, size, dir)).unwrap()
}

fn synthetic(dir: &Path, entries: usize, size: (u16, u16)) -> (PathBuf, Harness) {
    let db = dir.join(format!("synthetic-{entries}-{}x{}.db", size.0, size.1));
    write_synthetic_journal(&db, entries, NOW).unwrap();
    let h = Harness::open(&db, opts("synthetic.db", NOW, size, dir)).unwrap();
    (db, h)
}

/// The demo database (what `turnscope demo PATH` writes: the demo crate's `write_demo`), at the
/// pinned clock.
pub(crate) fn demo_db(dir: &Path) -> PathBuf {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, NOW).unwrap();
    path
}

fn screens(h: &mut Harness, steps: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (label, keys) in steps {
        h.press(keys);
        out.push_str(&format!("── {label} ──\n"));
        out.push_str(&h.render());
    }
    out
}

fn write_opts(name: &str, now: i64, size: (u16, u16), dir: &Path) -> HarnessOptions {
    let mut o = opts(name, now, size, dir);
    o.read_only = false;
    o
}

/// A fresh copy of the demo database (each write test gets its own).
fn demo_copy(dir: &Path, tag: &str) -> PathBuf {
    let src = dir.join("demo.db");
    if !src.exists() {
        demo_db(dir);
    }
    let dst = dir.join(format!("demo-{tag}.db"));
    std::fs::copy(&src, &dst).unwrap();
    dst
}

/// The main file and its WAL, byte for byte.
fn db_bytes(db: &Path) -> (Vec<u8>, Vec<u8>) {
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    (
        std::fs::read(db).unwrap(),
        std::fs::read(wal).unwrap_or_default(),
    )
}

/// Everything an action could change, as text: submissions, journals, sessions, entries, audit.
fn db_state(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut out = String::new();
    for sql in [
        "SELECT submission_id, status, attempt_id, error, settled_at, lease_expires_at, terminal_event_key FROM flue_agent_submissions ORDER BY sequence",
        "SELECT submission_id, phase, revision, committed, checkpoint_leaf_id FROM flue_agent_turn_journals ORDER BY submission_id",
        "SELECT id, data FROM flue_sessions ORDER BY id",
        "SELECT session_id, entry_id, position, data FROM flue_session_entries ORDER BY session_id, position",
        "SELECT name FROM sqlite_master WHERE name = 'turnscope_audit'",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut v = Vec::new();
                for i in 0..n {
                    v.push(format!("{:?}", r.get::<_, rusqlite::types::Value>(i)?));
                }
                Ok(v.join("|"))
            })
            .unwrap();
        for row in rows {
            out.push_str(&row.unwrap());
            out.push('\n');
        }
    }
    out
}

fn audit_rows(db: &Path) -> Vec<(String, String, Option<String>, String)> {
    let store = SqliteStore::open(db).unwrap();
    store
        .audit_records()
        .unwrap()
        .into_iter()
        .map(|a| (a.action, a.submission_id, a.reason, a.operator))
        .collect()
}

fn report_of(db: &Path, id: &str) -> turnscope_engine::report::SubmissionReport {
    let store = SqliteStore::open(db).unwrap();
    turnscope_engine::report::SubmissionReport::load(&store, id, Some(200_000), NOW).unwrap()
}

/// The id of the demo's stuck submission of `instance`.
fn demo_id(db: &Path, instance: &str) -> String {
    let store = SqliteStore::open(db).unwrap();
    store
        .list_submissions(RowFilter::All, 0)
        .unwrap()
        .into_iter()
        .find(|r| {
            r.instance_id().as_deref() == Some(instance) && r.status == SubmissionStatus::Running
        })
        .unwrap_or_else(|| panic!("no running submission for {instance}"))
        .submission_id
}

/// The popup's title and lines (panics when no confirm popup is open).
fn popup(h: &Harness) -> (String, String) {
    match h.popup() {
        Some(p)
            if matches!(
                p.kind,
                PopupKind::Info | PopupKind::WriteConfirm | PopupKind::NextStep
            ) =>
        {
            (p.title, p.body)
        }
        other => panic!("expected a confirm popup, got {other:?}"),
    }
}

/// Batch ids (`b` and 12 hex digits, from the clock) differ between runs: masked, same width.
fn mask_batch(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("batch b") {
        let (head, tail) = rest.split_at(i + "batch b".len());
        out.push_str(head);
        let hex = tail
            .chars()
            .take(12)
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        if hex == 12 {
            out.push_str("############");
            rest = &tail[12..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Lock-hold times and the version differ between runs: mask them in snapshots. The masked
/// number has a fixed width; the next run of spaces absorbs the difference, so borders and
/// right-aligned text stay where they were.
fn mask(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut done = String::new();
        let mut rest = line;
        let mut pad: isize = 0;
        while let Some(i) = rest.find(" ms") {
            let head = &rest[..i];
            let start = head
                .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map_or(0, |k| k + 1);
            let num = &head[start..];
            done.push_str(&head[..start]);
            if num.chars().any(|c| c.is_ascii_digit()) {
                done.push_str("#.##");
                pad += num.len() as isize - 4;
            } else {
                done.push_str(num);
            }
            done.push_str(" ms");
            rest = &rest[i + 3..];
        }
        let rest = if pad > 0 {
            let fill = " ".repeat(pad as usize);
            match rest.find("  ") {
                Some(k) => format!("{}{fill}{}", &rest[..k], &rest[k..]),
                None => format!("{rest}{fill}"),
            }
        } else {
            rest.to_string()
        };
        done.push_str(&rest);
        out.push_str(&done);
        out.push('\n');
    }
    out.replace(
        &format!("turnscope {}", env!("CARGO_PKG_VERSION")),
        "turnscope X.Y.Z",
    )
}
