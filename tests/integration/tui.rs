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
    let out = crate::support::turnscope_command()
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

/// The tree holds compact entries; the detail pane shows the selected entry's stored text, fetched
/// through the worker byte for byte.
#[test]
fn detail_fetches_the_stored_body_of_a_compact_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 60, (160, 48));
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
    h.press("<Enter>j");
    let ins = h.app.inspect().unwrap();
    let node = ins.selected_node().unwrap();
    let i = ins.tree.entry_of(node).expect("an entry is selected");
    let e = &ins.history().unwrap().entries[i];
    assert!(
        e.compact && e.raw.is_empty(),
        "the tree keeps the entry compact"
    );
    let full = ins.bodies.get(&e.id).expect("the body was fetched");
    let stored: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT data FROM flue_session_entries WHERE entry_id = ?1",
            [&e.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(full.raw, stored);
    assert!(h.detail_text().contains("ENTRY JSON"));
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
    // Every binding's description appears in the help, in the mode it exists in.
    let mut h = fixture(dir.path(), "tool-results-partial", (160, 200));
    h.press("?");
    let screen = h.render();
    for b in turnscope::tui::KEYMAP {
        if b.write {
            assert!(!screen.contains(b.help), "read-only help has {:?}", b.help);
        } else {
            assert!(screen.contains(b.help), "help lacks {:?}", b.help);
        }
    }
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let mut o = opts("x.db", fixture_now(&db), (160, 220), dir.path());
    o.read_only = false;
    let mut h = Harness::open(&db, o).unwrap();
    h.press("?");
    let screen = h.render();
    for b in turnscope::tui::KEYMAP {
        assert!(
            screen.contains(b.help),
            "write-mode help lacks {:?}",
            b.help
        );
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
        o.theme = Theme {
            color,
            ..Theme::default()
        };
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

/// A tmux session on a server of its own (`-L name`): on the shared default server another
/// test's last `kill-session` ends the server while this one starts ("server exited
/// unexpectedly").
struct Tmux {
    name: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .output()
            .unwrap();
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
        // Up to 30 s: CI runs this beside the rest of the suite on two cores.
        for _ in 0..300 {
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
            .args(["-L", &self.name, "kill-server"])
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
            "-L",
            &name,
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

// ----- write actions (--write) ------------------------------------------------------------------

fn write_opts(name: &str, now: i64, size: (u16, u16), dir: &Path) -> HarnessOptions {
    let mut o = opts(name, now, size, dir);
    o.read_only = false;
    o
}

/// A fresh copy of the demo database (each write test gets its own).
fn demo_copy(dir: &Path, tag: &str) -> Option<PathBuf> {
    let src = dir.join("demo.db");
    if !src.exists() {
        demo_db(dir)?;
    }
    let dst = dir.join(format!("demo-{tag}.db"));
    std::fs::copy(&src, &dst).unwrap();
    Some(dst)
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

fn report_of(db: &Path, id: &str) -> turnscope::report::SubmissionReport {
    let store = SqliteStore::open(db).unwrap();
    turnscope::report::SubmissionReport::load(&store, id, Some(200_000), NOW).unwrap()
}

/// The id of the demo's stuck submission of `instance`.
fn demo_id(db: &Path, instance: &str) -> String {
    let store = SqliteStore::open(db).unwrap();
    store
        .list_submissions(&ListFilter::All)
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some(instance) && r.status == "running")
        .unwrap_or_else(|| panic!("no running submission for {instance}"))
        .submission_id
}

/// The popup's title and lines (panics when no confirm popup is open).
fn popup(h: &Harness) -> (String, String) {
    match &h.app.popup {
        Some(Popup::Confirm { title, lines, .. }) => (title.clone(), lines.join("\n")),
        other => panic!("expected a confirm popup, got {other:?}"),
    }
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

#[test]
fn read_only_mode_has_no_write_actions() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "ro") else {
        return;
    };
    let mut text = String::new();
    for write in [false, true] {
        // Tall enough for the whole help.
        let mut o = opts("demo.db", NOW, (160, 110), dir.path());
        o.read_only = !write;
        let mut h = Harness::open(&db, o).unwrap();
        let list = h.render();
        h.press("<Enter>");
        let tree = h.render();
        h.press("<Esc>?");
        let help = h.render();
        let last = |s: &str| s.lines().last().unwrap_or("").to_string();
        let first = |s: &str| s.lines().next().unwrap_or("").to_string();
        text.push_str(&format!(
            "── {} ──\nheader: {}\nlist footer: {}\ntree footer: {}\n{help}",
            if write { "--write" } else { "read-only" },
            first(&list),
            last(&list),
            last(&tree)
        ));
        for part in ["R/Q/F/S act", "␣ mark"] {
            assert_eq!(list.contains(part), write, "{part} in the list footer");
            assert_eq!(tree.contains("R/Q/F/S act"), write, "tree footer");
        }
        assert_eq!(list.contains("READ-ONLY"), !write);
        assert_eq!(list.contains(" WRITE "), write);
        assert_eq!(help.contains("repair: complete the trailing"), write);
    }
    settings().bind(|| insta::assert_snapshot!("write_keys_by_mode", text));

    // Read-only: the keys do nothing at all, in the list and in an opened submission.
    let before = db_bytes(&db);
    let mut h = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    for keys in ["R", "Q", "F", "S", "<Space>R", "<Space>F"] {
        h.press(keys);
        assert!(
            h.app.popup.is_none(),
            "{keys} opened a popup in read-only mode"
        );
        assert!(
            h.app.marks.is_empty(),
            "{keys} marked a row in read-only mode"
        );
        assert!(h.app.effects.is_empty());
    }
    h.press("g<Enter>");
    for keys in ["R", "Q", "F", "S"] {
        h.press(keys);
        assert!(h.app.popup.is_none(), "{keys} in the tree, read-only");
    }
    // Not even a stray action call writes (the app guards it too).
    h.app.apply(turnscope::tui::Action::Act(
        turnscope::actions::ActionKind::Repair,
    ));
    h.settle();
    assert!(h.app.popup.is_none());
    drop(h);
    assert!(
        db_bytes(&db) == before,
        "read-only mode changed the database"
    );
    assert!(audit_rows(&db).is_empty());
}

#[test]
fn repair_previews_waits_for_yes_applies_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let Some(db) = demo_copy(dir.path(), &format!("repair-{}x{}", size.0, size.1)) else {
            return;
        };
        let id = demo_id(&db, "billing-bot");
        assert_eq!(
            report_of(&db, &id).classification().state.label(),
            "tool_use_unresolved"
        );
        let mut h = Harness::open(&db, write_opts("demo.db", NOW, size, dir.path())).unwrap();
        h.press("/billing-bot<Enter>R");
        let (title, lines) = popup(&h);
        assert!(title.starts_with("Repair 83b5277a"), "{title}");
        for part in [
            "insert entry",
            "\"isError\":true",
            "update flue_sessions.data",
            "phase: 'tool_request_recorded' → 'before_provider'",
            "afterwards: resume/tool_results",
        ] {
            assert!(lines.contains(part), "{part} missing:\n{lines}");
        }
        assert!(
            matches!(h.app.popup, Some(Popup::Confirm { yes: false, .. })),
            "No is selected"
        );
        text.push_str(&format!("── {}x{} ──\n", size.0, size.1));
        text.push_str(&h.render());
        let state = db_state(&db);
        // ⏎ on the default button: nothing happens.
        h.press("<Enter>");
        assert!(h.app.popup.as_ref().is_some_and(|p| p.is_write_confirm()));
        assert!(h
            .app
            .status
            .as_ref()
            .unwrap()
            .text
            .contains("No is selected"));
        assert_eq!(db_state(&db), state, "⏎ on No wrote something");
        // y applies.
        h.press("y");
        let (title, lines) = popup(&h);
        assert!(title.starts_with("Repair applied"), "{title}\n{lines}");
        assert!(
            lines.contains("applied: 4 row(s) written · write lock held"),
            "{lines}"
        );
        assert!(lines.contains("audit #1"), "{lines}");
        assert!(
            lines.contains(
                "before → now: tool_use_unresolved · rule 6 → resume/tool_results · rule 5"
            ),
            "{lines}"
        );
        let r = report_of(&db, &id);
        assert_eq!(r.classification().state.label(), "resume/tool_results");
        assert_eq!(r.plan.rule, Some(5));
        // The list shows the new verdict (refreshed), and no "changed under you" banner for our write.
        let item = h
            .app
            .items
            .iter()
            .find(|i| i.row.submission_id == id)
            .unwrap();
        assert_eq!(item.verdict, "resume/tool_results");
        assert_eq!(item.rule, Some(5));
        assert!(h.app.banner.is_none(), "{:?}", h.app.banner);
        // The audit pane lists it.
        h.press("<Esc>a");
        assert_eq!(h.app.root, turnscope::tui::Root::Audit);
        let rec = &h.app.audit.rows[0];
        assert_eq!(
            (
                rec.action.as_str(),
                rec.submission_id.as_str(),
                rec.operator.as_str()
            ),
            ("repair", id.as_str(), "tester@host")
        );
        let screen = h.render();
        assert!(
            screen.contains("tester@host") && screen.contains("83b5277a"),
            "{screen}"
        );
        if size == (160, 48) {
            let audit = mask(&screen);
            settings().bind(|| insta::assert_snapshot!("write_audit_pane", audit));
        }
        // a again (or esc) goes back.
        h.press("a");
        assert_eq!(h.app.root, turnscope::tui::Root::Submissions);
        assert_eq!(audit_rows(&db).len(), 1);
        // Idempotent: a second repair has nothing to write.
        h.press("R");
        let (title, _) = popup(&h);
        assert!(
            title.contains("refused") || title.contains("nothing to write"),
            "{title}"
        );
        h.press("y");
        assert_eq!(audit_rows(&db).len(), 1);
    }
    settings().bind(|| insta::assert_snapshot!("write_repair_confirm", text));
}

#[test]
fn fail_requires_a_reason_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "fail") else {
        return;
    };
    let id = demo_id(&db, "sales-assist");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("/sales-assist<Enter>F");
    assert!(matches!(h.app.popup, Some(Popup::Reason { .. })));
    // Empty: refused in place.
    h.press("<Enter>");
    match &h.app.popup {
        Some(Popup::Reason { error, .. }) => {
            assert_eq!(
                error.as_deref(),
                Some("a reason is required to fail a submission")
            )
        }
        other => panic!("{other:?}"),
    }
    h.press("   <Enter>");
    assert!(
        matches!(h.app.popup, Some(Popup::Reason { error: Some(_), .. })),
        "blank is no reason"
    );
    let screen = h.render();
    assert!(screen.contains("a reason is required"), "{screen}");
    h.press("<C-u>customer gave up<BS>p");
    let screen = h.render();
    settings().bind(|| insta::assert_snapshot!("write_fail_reason", screen));
    h.press("<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Fail c2097c8e"), "{title}");
    assert!(lines.contains("reason: customer gave up"), "{lines}");
    assert!(lines.contains("status: 'running' → 'settled'"), "{lines}");
    h.press("<Tab><Enter>");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Fail applied"), "{title}");
    assert_eq!(
        audit_rows(&db),
        [(
            "fail".to_string(),
            id.clone(),
            Some("customer gave up".to_string()),
            "tester@host".to_string()
        )]
    );
    let r = report_of(&db, &id);
    assert_eq!(r.row().status, "settled");
    assert!(r.row().error.is_some());
    // Esc in the reason input cancels: nothing written.
    h.press("<Esc>2g");
    h.press("F");
    h.press("why not<Esc>");
    assert!(h.app.popup.is_none());
    assert_eq!(audit_rows(&db).len(), 1);
}

#[test]
fn a_refusal_shows_its_reason_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "refuse") else {
        return;
    };
    let before = db_state(&db);
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    // billing-bot's input was applied: the runtime never requeues after that.
    h.press("/billing-bot<Enter>Q");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Requeue refused"), "{title}");
    assert!(
        lines.contains("refused: the input was already applied to the session"),
        "{lines}"
    );
    assert!(
        lines.contains("instead: repair the tool batch, or fail it"),
        "{lines}"
    );
    assert!(lines.contains("nothing written."));
    let status = h.app.status.clone().unwrap().text;
    assert!(
        status.starts_with("refused:") && status.contains("instead:"),
        "{status}"
    );
    let screen = h.render();
    assert!(screen.contains("Requeue refused"), "{screen}");
    h.press("y");
    assert!(h.app.popup.is_none());
    // A live lease is refused as well (the runtime owns it): open it from the running filter.
    h.press("<Esc>4");
    let live = h
        .app
        .items
        .iter()
        .find(|i| i.disposition.label() == "live")
        .map(|i| i.row.submission_id.clone());
    if let Some(live) = live {
        h.press(&format!("/{}<Enter>R", &live[..8]));
        let (_, lines) = popup(&h);
        assert!(lines.contains("the lease is live"), "{lines}");
        h.press("<Esc>");
    }
    drop(h);
    assert_eq!(db_state(&db), before);
}

#[test]
fn a_change_between_preview_and_confirm_is_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "fence") else {
        return;
    };
    let id = demo_id(&db, "billing-bot");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("/billing-bot<Enter><Enter>");
    assert!(
        h.app.inspect().is_some(),
        "acting from the opened submission"
    );
    h.press("R");
    assert!(h.app.popup.as_ref().unwrap().is_write_confirm());
    {
        // The runtime moves on meanwhile: a new journal revision.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE flue_agent_turn_journals SET revision = revision + 1 WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    }
    let after_external = db_state(&db);
    h.press("y");
    let (title, lines) = popup(&h);
    assert!(title.contains("changed since the preview"), "{title}");
    assert!(lines.contains("nothing written"), "{lines}");
    assert!(
        lines.contains("the turn journal changed (now tool_request_recorded, revision 4)"),
        "{lines}"
    );
    let status = h.app.status.clone().unwrap().text;
    assert!(status.contains("changed since the preview"), "{status}");
    assert_eq!(db_state(&db), after_external, "nothing written");
    assert!(audit_rows(&db).is_empty());
    // The view was refreshed: a new preview is planned from the new state, and applies.
    h.press("<Esc>R");
    let (_, lines) = popup(&h);
    assert!(lines.contains("revision: 4 → 5"), "{lines}");
    h.press("y");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Repair applied"), "{title}");
}

#[test]
fn bulk_fail_previews_the_set_then_summarises() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "bulk") else {
        return;
    };
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    // The first three expired rows: completed (fail refused), advanced_past_input, tool_use_unresolved.
    let ids: Vec<String> = h.app.list.view[..3]
        .iter()
        .map(|&i| h.app.items[i].row.submission_id.clone())
        .collect();
    h.press("g<Space><Space><Space>");
    assert_eq!(h.app.marks.len(), 3);
    let screen = h.render();
    assert!(
        screen.lines().next().unwrap().contains("3 marked"),
        "{screen}"
    );
    assert_eq!(screen.matches('●').count(), 3, "{screen}");
    // Unmark and mark again: space toggles.
    h.press("k<Space>");
    assert_eq!(h.app.marks.len(), 2);
    h.press("k<Space>");
    assert_eq!(h.app.marks.len(), 3);
    h.press("F");
    h.press("bulk cleanup<Enter>");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Fail 3 marked submissions?");
    assert!(
        lines.starts_with("2 planned · 1 refused or nothing to do"),
        "{lines}"
    );
    assert!(
        lines.contains(&format!(
            "✗ {} (weather-desk) · completed · rule 1 · refused",
            &ids[0][..8]
        )),
        "{lines}"
    );
    assert!(lines.contains("would discard that answer"), "{lines}");
    let before = db_state(&db);
    h.press("<Enter>");
    assert_eq!(db_state(&db), before, "⏎ on No");
    h.press("y");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Fail: 2 applied · 1 refused");
    assert!(lines.starts_with("2 applied · 1 refused · 0 changed since the preview · 0 failed"));
    let summary = mask(&h.render());
    settings().bind(|| insta::assert_snapshot!("write_bulk_summary", summary));
    assert!(
        h.app.marks.is_empty(),
        "marks are cleared after a bulk action"
    );
    // The database: two settled with the runtime's error, the completed one untouched.
    let statuses: Vec<String> = ids
        .iter()
        .map(|id| report_of(&db, id).row().status.clone())
        .collect();
    assert_eq!(statuses, ["running", "settled", "settled"]);
    for id in &ids[1..] {
        assert!(report_of(&db, id)
            .row()
            .error
            .as_deref()
            .unwrap()
            .contains("interrupted"));
    }
    let audit = audit_rows(&db);
    assert_eq!(audit.len(), 2);
    assert!(audit
        .iter()
        .all(|a| a.0 == "fail" && a.2.as_deref() == Some("bulk cleanup")));
}

#[test]
fn step_twice_through_rule_9_advisory_then_settlement() {
    let dir = tempfile::tempdir().unwrap();
    let Some(db) = demo_copy(dir.path(), "step") else {
        return;
    };
    let id = demo_id(&db, "translator-eu");
    let entries = |db: &Path| {
        report_of(db, &id)
            .bundle
            .session
            .as_ref()
            .map_or(0, |s| s.entries.len())
    };
    let n0 = entries(&db);
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("/translator-eu<Enter>S");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Step 12e460b0"), "{title}");
    assert!(
        lines.starts_with("runtime plan: rule 9 → failed"),
        "{lines}"
    );
    assert!(
        lines.contains("▶ 1. append the submission_interrupted advisory signal"),
        "{lines}"
    );
    assert!(lines.contains("    2. settle as failed"), "{lines}");
    assert!(
        lines.contains("\"type\":\"submission_interrupted\""),
        "{lines}"
    );
    let mut text = h.render();
    h.press("y");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Step applied"), "{title}");
    assert!(
        lines.contains(&format!("session: {n0} → {} entries", n0 + 1)),
        "{lines}"
    );
    assert!(lines.contains("next write: settle as failed"), "{lines}");
    assert!(matches!(
        h.app.popup,
        Some(Popup::Confirm {
            action: turnscope::tui::PopupAction::NextStep { .. },
            ..
        })
    ));
    text.push_str(&mask(&h.render()));
    assert_eq!(entries(&db), n0 + 1);
    assert_eq!(report_of(&db, &id).row().status, "running");
    // The operator stops here; S again later continues with the next write.
    h.press("<Esc>S");
    let (_, lines) = popup(&h);
    assert!(lines.contains("▶ 1. settle as failed"), "{lines}");
    assert!(lines.contains("status: 'running' → 'settled'"), "{lines}");
    h.press("y");
    let (_, lines) = popup(&h);
    assert!(
        lines.contains("before → now: terminal_error · rule 9 → failed · failed"),
        "{lines}"
    );
    assert!(lines.contains("status: running → settled"), "{lines}");
    assert!(lines.contains("no writes left"), "{lines}");
    text.push_str(&mask(&h.render()));
    settings().bind(|| insta::assert_snapshot!("write_step", text));
    let r = report_of(&db, &id);
    assert_eq!(r.row().status, "settled");
    assert_eq!(entries(&db), n0 + 1, "the advisory once");
    let audit = audit_rows(&db);
    assert_eq!(audit.len(), 2);
    assert!(audit.iter().all(|a| a.0 == "step"));
    // Nothing left to step.
    h.press("<Esc>2S");
    let (title, _) = popup(&h);
    assert!(title.contains("refused"), "{title}");
}

// ----- themes, command palette, key overrides ------------------------------------------------------

/// The foreground of the first cell showing `symbol`.
fn fg_of(h: &Harness, symbol: &str) -> Color {
    let buf = h.terminal.backend().buffer();
    let (x, y) = (0..buf.area.height)
        .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
        .find(|&(x, y)| buf[(x, y)].symbol() == symbol)
        .unwrap_or_else(|| panic!("no {symbol} on screen"));
    buf[(x, y)].fg
}

#[test]
fn light_and_high_contrast_themes_recolour_and_no_color_removes_every_colour() {
    use turnscope::tui::Palette;
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let mut seen = Vec::new();
    for palette in [Palette::Dark, Palette::Light, Palette::HighContrast] {
        for color in [true, false] {
            let mut o = opts("x.db", fixture_now(&db), (100, 30), dir.path());
            o.theme = Theme { color, palette };
            let mut h = Harness::open(&db, o).unwrap();
            h.press("<Enter>");
            let screen = h.render();
            // Meaning is in the text too: the markers stay in every theme.
            assert!(
                screen.contains("[partial batch]") && screen.contains("‼") && screen.contains("⧗")
            );
            assert!(screen.contains("READ-ONLY"), "{screen}");
            let buf = h.terminal.backend().buffer();
            if color {
                seen.push(fg_of(&h, "‼"));
            } else {
                for cell in buf.content() {
                    assert_eq!(
                        (cell.fg, cell.bg),
                        (Color::Reset, Color::Reset),
                        "NO_COLOR ({palette:?}): no colour at {:?}",
                        cell.symbol()
                    );
                }
            }
        }
    }
    // The partial-batch marker: yellow on dark, dark orange on light, bright yellow in high contrast.
    assert_eq!(
        seen,
        [Color::Yellow, Color::Rgb(150, 80, 0), Color::LightYellow]
    );
}

#[test]
fn command_palette_lists_filters_and_runs_actions() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 50, (100, 30));
    h.press(":");
    let screen = h.render();
    assert!(matches!(h.app.popup, Some(Popup::Palette { .. })));
    assert!(screen.contains("commands"), "{screen}");
    settings().bind(|| insta::assert_snapshot!("palette", screen));
    for (key, name) in [
        ("q", "quit"),
        ("?", "help"),
        ("a", "audit"),
        ("s", "toggle_sessions"),
    ] {
        let row = screen
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{screen}"));
        assert!(row.contains(&format!(" {key} ")), "{row}");
    }
    // Write actions only in write mode.
    h.press("repair");
    let screen = h.render();
    assert!(screen.contains("no action matches"), "{screen}");
    h.press("<Esc>");
    assert!(h.app.popup.is_none());
    // Filter as you type, ⏎ runs the first match.
    h.press(":audit trail<Enter>");
    h.render();
    assert!(h.app.popup.is_none());
    assert_eq!(h.app.root, turnscope::tui::Root::Audit);
    // ↓ chooses, the wheel too, ⏎ runs the chosen row.
    h.press(":this help");
    assert!(matches!(
        h.app.popup,
        Some(Popup::Palette { selected: 0, .. })
    ));
    h.press("<Down>");
    assert!(
        matches!(h.app.popup, Some(Popup::Palette { selected: 0, .. })),
        "one match: the selection stays on it"
    );
    h.press("<Enter>");
    assert!(matches!(h.app.popup, Some(Popup::Help { .. })));
    h.press("<Esc>:<Down><Down>");
    assert!(matches!(
        h.app.popup,
        Some(Popup::Palette { selected: 2, .. })
    ));
    h.press("<Esc>");
    // An action of another pane is listed, but says so instead of running.
    h.press(":collapse everything<Enter>");
    let screen = h.render();
    assert!(screen.contains("not available here"), "{screen}");

    let mut o = opts("synthetic.db", NOW, (100, 30), dir.path());
    o.read_only = false;
    let mut w = Harness::open(&db, o).unwrap();
    w.press(":repair");
    let screen = w.render();
    assert!(
        screen.contains("repair") && screen.contains(" R "),
        "{screen}"
    );
    assert!(!screen.contains("no action matches"), "{screen}");
}

#[test]
fn key_overrides_from_the_configuration_replace_the_default_keys() {
    use turnscope::tui::Overrides;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    write_synthetic_journal(&db, 20, NOW).unwrap();
    let mut o = opts("k.db", NOW, (160, 48), dir.path());
    o.keys = Overrides::parse([("quit", "x"), ("help", "f1")]).unwrap();
    let mut h = Harness::open(&db, o).unwrap();
    let screen = h.render();
    let footer = screen.lines().last().unwrap();
    assert!(
        footer.contains(" x quit") && footer.contains(" F1 help"),
        "{footer}"
    );
    h.press("q");
    assert!(!h.app.quit, "q no longer quits");
    h.app.apply(turnscope::tui::Action::Help);
    let help = h.render();
    assert!(help.contains("  x          quit"), "{help}");
    h.press("<Esc>");
    h.press(":");
    let screen = h.render();
    let row = screen.lines().find(|l| l.contains(" quit ")).unwrap();
    assert!(row.contains(" x "), "the palette shows the override: {row}");
    h.press("<Esc>x");
    assert!(h.app.quit);
}

#[test]
fn a_slow_open_says_how_long_it_has_been_reading() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (120, 30));
    h.press("2");
    h.press("<Enter>");
    h.render();
    // Fresh: the plain loading line.
    let ins = h.app.stack.last_mut().expect("opened");
    ins.data = None;
    ins.requested_at = std::time::Instant::now();
    assert!(h.render().contains(" loading…"));
    // Two seconds in: how long, that it is in the background, and the way out.
    let ins = h.app.stack.last_mut().expect("opened");
    ins.requested_at = std::time::Instant::now() - std::time::Duration::from_secs(2);
    let screen = h.render();
    assert!(
        screen.contains("reading the session in the background… 2.0 s (esc goes back)"),
        "{screen}"
    );
}
