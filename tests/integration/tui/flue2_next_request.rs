//! The 2.x next-request pane (`M`, beta.7's key), headless: on every 2.1.0 fixture, the pane of
//! each running submission (opened, or selected in the list) shows exactly the lines
//! `turnscope next-request ID` prints at the same clock; it scrolls, and Esc closes it back to
//! the screen it was opened from.

use std::path::Path;

use rusqlite::Connection;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::support::{db_fixture_names, turnscope_ok, unpack_db};

fn clock(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT MAX(lease_expires_at) + 1000 FROM flue_agent_submissions",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

fn cli_lines(db: &Path, now: i64, id: &str) -> Vec<String> {
    String::from_utf8(turnscope_ok(db, Some(now), &["next-request", id]))
        .unwrap()
        .lines()
        // The pinned clock's notice is the CLI's, not the view's.
        .filter(|l| !l.starts_with("clock: pinned"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_pane_shows_what_the_cli_prints_for_each_running_submission() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = clock(&db);
        let mut o = HarnessOptions::new(now);
        o.width = 160;
        o.height = 40;
        let mut h =
            Flue2Harness::open(&db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap();
        h.press("4");
        let ids = h.app.shown_ids();
        for (n, id) in ids.iter().enumerate() {
            let want = cli_lines(&db, now, id);
            // From the list (the selected row), then from the opened detail.
            h.press("g");
            for _ in 0..n {
                h.press("j");
            }
            h.press("M");
            assert_eq!(
                h.app.next_request_text(),
                Some(want.clone()),
                "{name} {id} (list)"
            );
            assert!(h.render().contains("next request of"), "{name}");
            h.press("<Esc>");
            assert_eq!(h.app.next_request_text(), None);
            assert_eq!(h.app.opened(), None);
            h.press("<Enter>M");
            assert_eq!(
                h.app.next_request_text(),
                Some(want),
                "{name} {id} (detail)"
            );
            // Scrolling keeps it open; Esc closes it back to the detail.
            h.press("j");
            assert!(h.app.next_request_text().is_some());
            h.press("<Esc>");
            assert_eq!(h.app.next_request_text(), None);
            assert_eq!(h.app.opened(), Some(id.as_str()));
            h.press("<Esc>");
            shown += 1;
        }
    }
    assert!(shown >= 15, "{shown}");
}
