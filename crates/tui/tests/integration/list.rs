//! The submissions list: filters, sorting, the incremental filter, the mouse, live refresh.

use super::*;
use turnscope_core::journal::status::SubmissionStatus;

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
    let db = demo_db(dir.path());
    for size in SIZES {
        let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir.path())).unwrap();
        let text = screens(&mut h, &FILTERS);
        settings().bind(|| {
            insta::assert_snapshot!(format!("demo_list_filters_{}x{}", size.0, size.1), text)
        });
    }
}

#[test]
fn select_filter_and_sort() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (80, 24));
    // Default: expired leases only (the runtime's definition).
    let ids = |h: &Harness| -> Vec<String> {
        h.rows()
            .into_iter()
            .map(|it| it.row.status.to_string())
            .collect()
    };
    assert_eq!(ids(&h), ["running"]);
    h.press("2");
    assert_eq!(ids(&h), ["settled", "running", "queued"]);
    h.press("jj");
    assert_eq!(
        h.selected_row().unwrap().row.status,
        SubmissionStatus::Queued
    );
    h.press("k");
    assert_eq!(
        h.selected_row().unwrap().row.status,
        SubmissionStatus::Running
    );
    // Incremental filter over ids, instance, verdict and error text.
    let settled_id = h
        .loaded_rows()
        .iter()
        .find(|i| i.row.status == SubmissionStatus::Settled)
        .unwrap()
        .row
        .submission_id
        .clone();
    h.press(&format!("/{}", &settled_id[..6]));
    assert_eq!(ids(&h), ["settled"]);
    h.press("<Enter>");
    assert_eq!(h.list_query(), &settled_id[..6]);
    h.press("<Esc>");
    assert!(h.list_query().is_empty());
    assert_eq!(ids(&h).len(), 3);
    h.press("/tool_use_unresolved<Enter>");
    assert_eq!(ids(&h), ["running"]);
    h.press("<Esc>");
    // Sort: `o` cycles through the columns, `O` reverses.
    h.press("o");
    h.press("O");
    let seqs: Vec<i64> = h.rows().into_iter().map(|it| it.row.sequence).collect();
    assert_eq!(seqs, [3, 2, 1]);
    h.press("oooo"); // status
    let st = ids(&h);
    assert_eq!(st, ["settled", "running", "queued"], "status, descending");
    // Selection follows the row, not the position.
    let selected = h.selected_row().unwrap().row.submission_id.clone();
    h.press("O");
    assert_eq!(h.selected_row().unwrap().row.submission_id, selected);
}

#[test]
fn copy_puts_the_selected_id_on_the_clipboard() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    let id = h.selected_row().unwrap().row.submission_id.clone();
    h.press("y");
    assert_eq!(h.copied, [id]);
    h.press("<Enter>jy");
    let entry = h.selected_id().unwrap();
    assert_eq!(h.copied.last(), Some(&entry));
    assert_eq!(entry.len(), 8, "an entry id");
}

#[test]
fn mouse_click_selects_and_wheel_scrolls() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (80, 24));
    h.press("2");
    h.render();
    let rows = h.list_rows_area().unwrap();
    h.click(5, rows.y + 2);
    assert_eq!(h.list_cursor(), 2);
    h.mouse(crossterm::event::MouseEventKind::ScrollUp, 5, rows.y);
    assert_eq!(h.list_cursor(), 0);
    // Double click opens.
    h.click(5, rows.y + 1);
    h.click(5, rows.y + 1);
    assert!(h.opened_id().is_some());
}

#[test]
fn live_refresh_flashes_changed_rows_and_warns_about_the_open_submission() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 60, (100, 30));
    h.press("<Enter>");
    h.refresh();
    assert!(h.banner().is_none(), "nothing changed");
    assert!(!h.is_flashing(SYNTH_SUBMISSION));
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
    let banner = h.banner().expect("a banner");
    assert!(banner.contains("new attempt (2/10)"), "{banner}");
    assert!(banner.contains("1 new entry"), "{banner}");
    assert!(h.is_flashing(SYNTH_SUBMISSION));
    assert!(h.render().contains("changed under you"));
    h.advance(Duration::from_secs(2));
    assert!(!h.is_flashing(SYNTH_SUBMISSION), "flashes once");
    h.press("<Esc>");
    assert!(h.banner().is_none());
    assert!(h.opened_id().is_some(), "esc dismissed the banner first");
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
    let banner = h.banner().expect("a banner for the selected row");
    assert!(banner.contains("now settled (failed)"), "{banner}");
}

/// The COST column is the listing walk's cost since the input: the same figure a whole read
/// gives for the active path. It is drawn where the table has room (160 columns), not at 80.
#[test]
fn cost_column_is_the_active_path_cost_where_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let store = SqliteStore::open(&db).unwrap();
    for size in SIZES {
        let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir.path())).unwrap();
        h.press("1");
        let screen = h.render();
        let header = screen
            .lines()
            .find(|l| l.contains(" ID "))
            .unwrap_or_else(|| panic!("no header:\n{screen}"))
            .to_string();
        assert_eq!(header.contains("COST"), size.0 >= 160, "{size:?}: {header}");
        let mut costed = 0;
        for it in h.rows() {
            let whole = turnscope_engine::report::SubmissionReport::load_compact(
                &store,
                &it.row.submission_id,
                None,
                NOW,
                turnscope_engine::report::Previews::Drop,
            )
            .unwrap();
            let want = whole.cost().map(|c| c.on_active_path().cost);
            assert_eq!(it.cost, want, "{}", it.row.submission_id);
            costed += usize::from(want.is_some_and(|c| c > 0.0));
        }
        assert!(costed > 5, "only {costed} rows with a cost");
    }
}
