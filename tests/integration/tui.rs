//! The TUI: rendering snapshots (TestBackend + insta, 80x24 and 160x48), key handling driven
//! through event sequences, and one end-to-end run of the real binary in tmux.
//!
//! Time is pinned in every test (the harness's `now`), and screens show a fixed database name,
//! so snapshots do not depend on the machine.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ratatui::style::Color;
use serde_json::Value;
use turnscope::store::{JournalStore, ListFilter, SqliteStore};
use turnscope::tui::harness::{
    write_empty_journal, write_synthetic_journal, Harness, HarnessOptions, SYNTH_SUBMISSION,
};
use turnscope::tui::{NodeKind, Pane, Popup, Theme};

use crate::support::unpack_fixture;

/// The clock of the synthetic and demo databases.
const NOW: i64 = 1_767_604_800_000;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_snapshot_path("snapshots");
    s
}

/// "Now" for a crash fixture: just after its last lease expired (as the manifest was made).
fn fixture_now(db: &Path) -> i64 {
    let store = SqliteStore::open(db).unwrap();
    let rows = store.list_submissions(&ListFilter::All).unwrap();
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

/// The demo database, written by the real binary (`turnscope demo PATH`). `None`, with a notice,
/// while the CLI does not write it yet.
fn demo_db(dir: &Path) -> Option<PathBuf> {
    let path = dir.join("demo.db");
    let out = Command::new(env!("CARGO_BIN_EXE_turnscope"))
        .args(["demo", path.to_str().unwrap(), "--json"])
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .output()
        .unwrap();
    if !out.status.success() || !path.exists() {
        eprintln!(
            "NOTICE: skipping the demo-database TUI snapshots: `turnscope demo PATH` did not write a database ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(path)
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

// ----- snapshots --------------------------------------------------------------------------------

const FILTERS: [(&str, &str); 7] = [
    ("1 expired", "1"),
    ("2 all", "2"),
    ("3 pending", "3"),
    ("4 running", "4"),
    ("5 terminalizing", "5"),
    ("6 settled", "6"),
    ("7 failed", "7"),
];

#[test]
fn list_with_each_filter() {
    let dir = tempfile::tempdir().unwrap();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-batch-mid", size);
        let text = screens(&mut h, &FILTERS);
        settings()
            .bind(|| insta::assert_snapshot!(format!("list_filters_{}x{}", size.0, size.1), text));
    }
}

#[test]
fn demo_list_with_each_filter() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_db(dir.path()) else {
        return;
    };
    for size in SIZES {
        let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir.path())).unwrap();
        let text = screens(&mut h, &FILTERS);
        settings().bind(|| {
            insta::assert_snapshot!(format!("demo_list_filters_{}x{}", size.0, size.1), text)
        });
    }
}

/// One crash fixture per classification the runtime produced for it.
const KINDS: [(&str, &str); 10] = [
    ("claimed-before-input", "absent"),
    ("completed-before-settle", "completed"),
    ("before-provider", "resume/input_only"),
    ("overflow", "resume/overflow"),
    ("transient-retry", "resume/transient_retry"),
    ("tool-results-complete", "resume/tool_results"),
    ("tool-results-partial", "resume/tool_results_partial"),
    ("stream-abort", "resume/aborted_partial"),
    ("timeout-exceeded", "tool_use_unresolved"),
    ("terminal-error", "terminal_error"),
];

#[test]
fn tree_for_each_classification_kind() {
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in KINDS {
        let mut text = String::new();
        for size in SIZES {
            let mut h = fixture(dir.path(), name, size);
            // Open the first running submission.
            h.press("4<Enter>");
            let verdict = h
                .app
                .inspect()
                .unwrap()
                .submission()
                .unwrap()
                .report
                .classification()
                .state
                .label();
            assert_eq!(verdict, kind, "{name}");
            text.push_str(&h.render());
        }
        settings()
            .bind(|| insta::assert_snapshot!(format!("tree_{}", kind.replace('/', "_")), text));
    }
}

#[test]
fn demo_tree_for_each_classification_kind() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_db(dir.path()) else {
        return;
    };
    let mut h = Harness::open(&db, opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("4");
    let mut seen: Vec<String> = Vec::new();
    let rows: Vec<(usize, String)> = h
        .app
        .list
        .view
        .iter()
        .enumerate()
        .map(|(pos, &i)| (pos, h.app.items[i].verdict.clone()))
        .collect();
    for (pos, verdict) in rows {
        if seen.contains(&verdict) {
            continue;
        }
        seen.push(verdict.clone());
        h.press("g");
        for _ in 0..pos {
            h.press("j");
        }
        h.press("<Enter>");
        let text = h.render();
        settings().bind(|| {
            insta::assert_snapshot!(format!("demo_tree_{}", verdict.replace('/', "_")), text)
        });
        h.press("<Esc>");
    }
    assert!(
        seen.len() >= 10,
        "the demo covers every classification: {seen:?}"
    );
}

#[test]
fn abandoned_branch_is_folded_dimmed_and_expandable() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let (_, mut h) = synthetic(dir.path(), 60, size);
        h.press("<Enter>");
        let ins = h.app.inspect().unwrap();
        let fold = ins
            .visible
            .iter()
            .position(|&n| matches!(ins.tree.nodes[n].kind, NodeKind::Abandoned { .. }))
            .expect("the abandoned branch is visible, folded");
        for _ in 0..fold {
            h.press("j");
        }
        text.push_str("── folded ──\n");
        text.push_str(&h.render());
        h.press("<Enter>j");
        text.push_str("── expanded, off-path entry selected ──\n");
        text.push_str(&h.render());
        assert!(h.detail_text().contains("off the active path"));
    }
    settings().bind(|| insta::assert_snapshot!("abandoned_branch", text));
}

#[test]
fn verdict_panel() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-results-partial", size);
        h.press("<Enter><Tab>");
        assert_eq!(h.app.focus, Pane::Detail);
        text.push_str(&h.render());
        let detail = h.detail_text();
        for part in [
            "VERDICT resume/tool_results_partial",
            "because",
            "PLAN  rule 5 → replacement",
            "JOURNAL",
            "checkpoint leaf",
        ] {
            assert!(detail.contains(part), "{part} missing in:\n{detail}");
        }
    }
    settings().bind(|| insta::assert_snapshot!("verdict_panel", text));
}

#[test]
fn help_is_generated_from_the_keymap() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-results-partial", size);
        h.press("?");
        assert!(matches!(h.app.popup, Some(Popup::Help { .. })));
        text.push_str(&h.render());
    }
    settings().bind(|| insta::assert_snapshot!("help", text));
    // Every binding's description appears in the help.
    let mut h = fixture(dir.path(), "tool-results-partial", (160, 200));
    h.press("?");
    let screen = h.render();
    for b in turnscope::tui::KEYMAP {
        assert!(screen.contains(b.help), "help lacks {:?}", b.help);
    }
}

#[test]
fn error_status_line_when_the_database_vanishes() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let sub = dir.path().join(format!("{}x{}", size.0, size.1));
        std::fs::create_dir_all(&sub).unwrap();
        let db = unpack_fixture(&sub, "tool-results-partial");
        let now = fixture_now(&db);
        let mut h = Harness::open(&db, opts("tool-results-partial.db", now, size, &sub)).unwrap();
        std::fs::remove_file(&db).unwrap();
        h.refresh();
        assert!(h.app.db_error.as_deref().unwrap().contains("vanished"));
        // The app keeps running and keeps the last data.
        h.press("<Enter>");
        text.push_str(&h.render());
    }
    settings().bind(|| insta::assert_snapshot!("error_status_line", text));
}

#[test]
fn empty_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    write_empty_journal(&db).unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = Harness::open(&db, opts("empty.db", NOW, size, dir.path())).unwrap();
        text.push_str(&h.render());
        h.press("s");
        text.push_str(&h.render());
        h.press("s<Enter>y");
        assert!(h.app.inspect().is_none(), "nothing to open");
    }
    settings().bind(|| insta::assert_snapshot!("empty_database", text));
}

#[test]
fn sessions_view_and_session_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-batch-mid", size);
        h.press("s");
        text.push_str(&h.render());
        h.press("<Enter>");
        text.push_str(&h.render());
    }
    settings().bind(|| insta::assert_snapshot!("sessions", text));
}

// ----- key handling -----------------------------------------------------------------------------

#[test]
fn select_filter_and_sort() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (80, 24));
    // Default: expired leases only (the runtime's definition).
    let ids = |h: &Harness| -> Vec<String> {
        h.app
            .list
            .view
            .iter()
            .map(|&i| h.app.items[i].row.status.clone())
            .collect()
    };
    assert_eq!(ids(&h), ["running"]);
    h.press("2");
    assert_eq!(ids(&h), ["settled", "running", "queued"]);
    h.press("jj");
    assert_eq!(h.app.selected_item().unwrap().row.status, "queued");
    h.press("k");
    assert_eq!(h.app.selected_item().unwrap().row.status, "running");
    // Incremental filter over ids, instance, verdict and error text.
    let settled_id = h
        .app
        .items
        .iter()
        .find(|i| i.row.status == "settled")
        .unwrap()
        .row
        .submission_id
        .clone();
    h.press(&format!("/{}", &settled_id[..6]));
    assert_eq!(ids(&h), ["settled"]);
    h.press("<Enter>");
    assert_eq!(h.app.list.query, settled_id[..6]);
    h.press("<Esc>");
    assert!(h.app.list.query.is_empty());
    assert_eq!(ids(&h).len(), 3);
    h.press("/tool_use_unresolved<Enter>");
    assert_eq!(ids(&h), ["running"]);
    h.press("<Esc>");
    // Sort: `o` cycles through the columns, `O` reverses.
    h.press("o");
    h.press("O");
    let seqs: Vec<i64> = h
        .app
        .list
        .view
        .iter()
        .map(|&i| h.app.items[i].row.sequence)
        .collect();
    assert_eq!(seqs, [3, 2, 1]);
    h.press("oooo"); // status
    let st = ids(&h);
    assert_eq!(st, ["settled", "running", "queued"], "status, descending");
    // Selection follows the row, not the position.
    let selected = h.app.selected_item().unwrap().row.submission_id.clone();
    h.press("O");
    assert_eq!(h.app.selected_item().unwrap().row.submission_id, selected);
}

#[test]
fn expand_collapse_and_jumps() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    h.press("<Enter>");
    assert_eq!(h.app.focus, Pane::Tree);
    let ins = h.app.inspect().unwrap();
    let all = ins.visible.len();
    let roots = ins.tree.roots.len();
    assert!(all > roots, "the assistant's tool calls are shown");
    h.press("z");
    assert_eq!(h.app.inspect().unwrap().visible.len(), roots);
    h.press("Z");
    assert_eq!(h.app.inspect().unwrap().visible.len(), all);
    // Enter on the assistant folds its calls, Enter again opens them.
    let assistant = {
        let ins = h.app.inspect().unwrap();
        ins.visible
            .iter()
            .position(|&n| !ins.tree.nodes[n].children.is_empty())
            .unwrap()
    };
    h.press("g");
    for _ in 0..assistant {
        h.press("j");
    }
    h.press("<Enter>");
    assert_eq!(h.app.inspect().unwrap().visible.len(), all - 3);
    h.press("<Right>");
    assert_eq!(h.app.inspect().unwrap().visible.len(), all);
    h.press("j<Left>");
    assert_eq!(
        h.app.inspect().unwrap().sel,
        assistant,
        "h/← on a leaf goes to the parent"
    );

    // Jump to the checkpoint leaf (the journal names it).
    h.press("c");
    let ins = h.app.inspect().unwrap();
    let leaf = ins
        .submission()
        .unwrap()
        .report
        .bundle
        .journal
        .as_ref()
        .unwrap()
        .checkpoint_leaf_id
        .clone()
        .unwrap();
    assert_eq!(h.app.selected_id().as_deref(), Some(leaf.as_str()));
    // Jump through the entries that made the rule match.
    let matched = ins
        .submission()
        .unwrap()
        .report
        .classification()
        .explanation
        .entry_ids
        .clone();
    for id in &matched {
        h.press("m");
        assert_eq!(h.app.selected_id().as_deref(), Some(id.as_str()));
    }
    h.press("i");
    let input = h
        .app
        .inspect()
        .unwrap()
        .submission()
        .unwrap()
        .report
        .inspection
        .input_entry_id
        .clone();
    assert_eq!(h.app.selected_id(), input);
    h.press("v");
    assert_eq!(h.app.inspect().unwrap().sel, 0);
    assert!(h.detail_text().starts_with("VERDICT"));
    // Raw bytes are one key away.
    h.press("i<Tab>b");
    assert!(h.detail_text().contains("RAW STORED BYTES"));
    h.press("b");
    assert!(h.detail_text().contains("ENTRY JSON"));
    // The write actions' confirm popup shows the plan and writes nothing.
    h.press("W");
    assert!(matches!(h.app.popup, Some(Popup::Confirm { .. })));
    h.render();
    h.press("<Enter>");
    assert!(h.app.popup.is_none());
    h.press("<Esc>");
    assert!(h.app.inspect().is_none());
    assert_eq!(h.app.focus, Pane::List);
}

#[test]
fn export_writes_the_session_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    h.press("e");
    let status = h.app.status.clone().unwrap().text;
    let path = PathBuf::from(status.strip_prefix("exported to ").expect(&status));
    assert_eq!(path.parent().unwrap(), dir.path());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["schema"], "turnscope.export/1");
    let sub = &doc["submissions"][0];
    assert_eq!(
        sub["classification"]["label"],
        "resume/tool_results_partial"
    );
    assert_eq!(sub["journal"]["phase"], "provider_started");
    assert_eq!(sub["plan"]["rule"], 5);
    let entries = doc["session"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|e| e["data"]["type"] == "message"));
    // A second export does not overwrite the first.
    h.press("<Enter>e");
    let second = h.app.status.clone().unwrap().text;
    assert_ne!(second, status);
    assert!(path.exists());
}

#[test]
fn copy_puts_the_selected_id_on_the_clipboard() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    let id = h.app.selected_item().unwrap().row.submission_id.clone();
    h.press("y");
    assert_eq!(h.copied, [id]);
    h.press("<Enter>jy");
    let entry = h.app.selected_id().unwrap();
    assert_eq!(h.copied.last(), Some(&entry));
    assert_eq!(entry.len(), 8, "an entry id");
}

#[test]
fn mouse_click_selects_and_wheel_scrolls() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (80, 24));
    h.press("2");
    h.render();
    let rows = h.app.layout.list.unwrap().rows;
    h.click(5, rows.y + 2);
    assert_eq!(h.app.list.selected, 2);
    h.mouse(crossterm::event::MouseEventKind::ScrollUp, 5, rows.y);
    assert_eq!(h.app.list.selected, 0);
    // Double click opens.
    h.click(5, rows.y + 1);
    h.click(5, rows.y + 1);
    assert!(h.app.inspect().is_some());
}

#[test]
fn search_in_a_session_steps_through_hits() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut h) = synthetic(dir.path(), 200, (100, 30));
    h.press("s<Enter>");
    assert!(h.app.inspect().unwrap().session().is_some());
    h.press("/get_time");
    let hits = h.app.inspect().unwrap().search.hits.len();
    assert!(hits > 10, "{hits}");
    h.press("<Enter>");
    let first = h.app.inspect().unwrap().sel;
    h.press("n");
    let second = h.app.inspect().unwrap().sel;
    assert!(second > first);
    h.press("N");
    assert_eq!(h.app.inspect().unwrap().sel, first);
    // ] jumps to the session's submission input; Enter on it opens the submission.
    h.press("g]");
    assert_eq!(h.app.inspect().unwrap().search.query, "get_time");
    h.press("<Enter>");
    assert_eq!(h.app.stack.len(), 2);
    assert_eq!(h.app.inspect().unwrap().target.id(), SYNTH_SUBMISSION);
    h.press("<Esc>");
    assert_eq!(h.app.stack.len(), 1);
}

#[test]
fn live_refresh_flashes_changed_rows_and_warns_about_the_open_submission() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 60, (100, 30));
    h.press("<Enter>");
    h.refresh();
    assert!(h.app.banner.is_none(), "nothing changed");
    assert!(!h.app.is_flashing(SYNTH_SUBMISSION));
    {
        // Another process: a new attempt and a new entry.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE flue_agent_submissions SET attempt_id = 'att-2', attempt_count = 2 WHERE submission_id = ?1",
            [SYNTH_SUBMISSION],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO flue_session_entries SELECT session_id, 'ffffffff', 9999, data FROM flue_session_entries WHERE position = 0",
            [],
        )
        .unwrap();
    }
    h.refresh();
    let banner = h.app.banner.clone().expect("a banner");
    assert!(banner.contains("new attempt (2/10)"), "{banner}");
    assert!(banner.contains("1 new entry"), "{banner}");
    assert!(h.app.is_flashing(SYNTH_SUBMISSION));
    assert!(h.render().contains("changed under you"));
    h.advance(Duration::from_secs(2));
    assert!(!h.app.is_flashing(SYNTH_SUBMISSION), "flashes once");
    h.press("<Esc>");
    assert!(h.app.banner.is_none());
    assert!(h.app.inspect().is_some(), "esc dismissed the banner first");
    // The selected list row is watched too.
    h.press("<Esc>");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE flue_agent_submissions SET status = 'settled', error = 'x', settled_at = 1 WHERE submission_id = ?1",
            [SYNTH_SUBMISSION],
        )
        .unwrap();
    }
    h.refresh();
    let banner = h.app.banner.clone().expect("a banner for the selected row");
    assert!(banner.contains("now settled (failed)"), "{banner}");
}

#[test]
fn long_sessions_scroll_and_lay_out_only_the_viewport() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut h) = synthetic(dir.path(), 5000, (80, 24));
    h.press("<Enter>");
    let total = h.app.inspect().unwrap().visible.len();
    assert!(total > 4900, "{total}");
    h.press("G");
    let screen = h.render();
    let ins = h.app.inspect().unwrap();
    assert_eq!(ins.sel, total - 1);
    assert!(ins.offset > 4000, "the viewport follows the selection");
    // The partial batch at the very end is on screen.
    assert!(screen.contains("‼"), "{screen}");
    h.press("<PgUp><PgUp>g");
    h.render();
    assert_eq!(h.app.inspect().unwrap().offset, 0);
}

#[test]
fn resize_and_narrow_terminals_degrade_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (160, 48));
    h.press("2");
    let wide = h.render();
    assert!(wide.contains("LAST ERROR") && wide.contains("JOURNAL"));
    h.resize(80, 24);
    let narrow = h.render();
    assert!(
        narrow.contains("VERDICT") && !narrow.contains("JOURNAL"),
        "{narrow}"
    );
    h.resize(50, 12);
    let tiny = h.render();
    assert!(tiny.contains("ID") && tiny.contains("VERDICT"), "{tiny}");
    h.resize(20, 5);
    let small = h.render();
    assert!(small.contains("needs at"), "{small}");
    h.resize(80, 24);
    h.press("<Enter>");
    h.render();
}

#[test]
fn partial_batch_marker_survives_no_color() {
    let dir = tempfile::tempdir().unwrap();
    for color in [true, false] {
        let db = unpack_fixture(dir.path(), "tool-results-partial");
        let mut o = opts("x.db", fixture_now(&db), (100, 30), dir.path());
        o.theme = Theme { color };
        let mut h = Harness::open(&db, o).unwrap();
        h.press("<Enter>");
        let screen = h.render();
        assert!(screen.contains("[partial batch]") && screen.contains("‼") && screen.contains("⧗"));
        let buf = h.terminal.backend().buffer();
        let (x, y) = (0..buf.area.height)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            .find(|&(x, y)| buf[(x, y)].symbol() == "‼")
            .unwrap();
        let fg = buf[(x, y)].fg;
        if color {
            assert_eq!(fg, Color::Yellow);
        } else {
            assert_eq!(fg, Color::Reset, "NO_COLOR: no colour at all");
        }
    }
}

// ----- end to end -------------------------------------------------------------------------------

struct Tmux {
    name: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn capture(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", &self.name])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    fn wait_for(&self, needle: &str) -> Option<String> {
        for _ in 0..100 {
            let screen = self.capture();
            if screen.contains(needle) {
                return Some(screen);
            }
            if screen.contains("EXIT=") {
                return None; // the program ended
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    fn flag(&self, f: &str) -> String {
        self.cmd(&["display-message", "-p", "-t", &self.name, f])
            .trim()
            .to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .output();
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run the real binary in tmux on the database, drive it with `keys_then_quit`, and check the
/// terminal was restored afterwards (cooked mode, main screen, cursor shown, mouse off).
fn run_e2e(db: &Path, quit: &[&str], tag: &str) -> Option<String> {
    let dir = db.parent().unwrap();
    let stty = dir.join(format!("stty-{tag}.txt"));
    let name = format!("turnscope-e2e-{}-{tag}", std::process::id());
    let script = format!(
        "TURNSCOPE_NOW_MS={NOW} {bin} --db '{db}'; echo \"EXIT=$?\"; stty -a > '{stty}'; sleep 60",
        bin = env!("CARGO_BIN_EXE_turnscope"),
        db = db.display(),
        stty = stty.display()
    );
    let t = Tmux { name: name.clone() };
    let status = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "120",
            "-y",
            "36",
            "sh",
            "-c",
            &script,
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let Some(home) = t.wait_for("READ-ONLY") else {
        let screen = t.capture();
        eprintln!("NOTICE: skipping the end-to-end TUI test: `turnscope --db X` did not open the TUI (the CLI is not wired to turnscope::tui::run yet). Screen:\n{screen}");
        return None;
    };
    assert!(home.contains("turnscope"), "{home}");
    // The first refresh has arrived when the status line shows its age.
    t.wait_for("↻").expect("the list loads");
    assert_eq!(
        t.flag("#{alternate_on}"),
        "1",
        "the TUI uses the alternate screen"
    );
    t.keys(&["2"]);
    t.wait_for("2 all").unwrap();
    t.keys(&["Enter"]);
    let tree = t.wait_for("VERDICT").expect("the tree and verdict open");
    assert!(tree.contains("history"), "{tree}");
    t.keys(&["?"]);
    t.wait_for("Everywhere").expect("help opens");
    t.keys(&["Escape"]);
    t.keys(quit);
    let after = t.wait_for("EXIT=").expect("the program exits");
    assert!(after.contains("EXIT=0"), "{after}");
    for _ in 0..50 {
        if stty.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let modes = std::fs::read_to_string(&stty).unwrap();
    assert_eq!(t.flag("#{alternate_on}"), "0", "left the alternate screen");
    assert_eq!(t.flag("#{cursor_flag}"), "1", "cursor shown again");
    assert_eq!(t.flag("#{mouse_any_flag}"), "0", "mouse capture off");
    Some(modes)
}

#[test]
fn end_to_end_in_tmux_restores_the_terminal() {
    if !tmux_available() {
        eprintln!("NOTICE: skipping the end-to-end TUI test: tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db =
        demo_db(dir.path()).unwrap_or_else(|| unpack_fixture(dir.path(), "tool-results-partial"));
    for (quit, tag) in [(&["q"][..], "q"), (&["C-c"][..], "ctrl-c")] {
        let Some(modes) = run_e2e(&db, quit, tag) else {
            return;
        };
        let words: Vec<&str> = modes.split_whitespace().collect();
        for mode in ["icanon", "echo", "isig"] {
            assert!(words.contains(&mode), "{tag}: `{mode}` restored:\n{modes}");
        }
    }
}

#[test]
fn detail_follows_the_opened_submission() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (160, 48));
    h.press("2g<Enter>");
    let first = h.app.inspect().unwrap().target.id().to_string();
    assert!(h.render().contains(&format!("SUBMISSION {first}")));
    h.press("<Esc>j<Enter>");
    let second = h.app.inspect().unwrap().target.id().to_string();
    assert_ne!(first, second);
    let screen = h.render();
    assert!(screen.contains(&format!("SUBMISSION {second}")), "{screen}");
    // ] and [ step between the session's submissions in place.
    h.press("[");
    assert_eq!(h.app.inspect().unwrap().target.id(), first);
    assert!(h.render().contains(&format!("SUBMISSION {first}")));
}

#[test]
fn a_locked_database_shows_in_the_status_line_and_the_app_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let now = fixture_now(&db);
    // A rollback-journal database under an exclusive lock blocks readers (WAL would not).
    let locker = rusqlite::Connection::open(&db).unwrap();
    locker.execute_batch("PRAGMA journal_mode=DELETE;").unwrap();
    let mut h = Harness::open(&db, opts("x.db", now, (80, 24), dir.path())).unwrap();
    let before = h.app.items.len();
    locker.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    locker
        .execute("UPDATE flue_meta SET value = value", [])
        .unwrap();
    h.refresh();
    let err = h.app.db_error.clone().expect("an error in the status line");
    assert!(err.contains("locked"), "{err}");
    assert!(h.render().contains("✗ the database is locked"));
    assert_eq!(h.app.items.len(), before, "the last data stays on screen");
    locker.execute_batch("ROLLBACK").unwrap();
    h.refresh();
    assert!(h.app.db_error.is_none());
}
