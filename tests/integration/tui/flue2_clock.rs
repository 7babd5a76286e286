//! One TUI kept open while its clock moves, on every 2.1.0 crash fixture: the list's rows are kept
//! between refreshes without their streams (`flue2_kept`), so a refresh at a later clock folds
//! nothing and plans every row again from what it kept; each row's verdict and NEXT must be
//! `turnscope list --status all --json`'s at that later clock, and the detail opened then must
//! carry `show --json`'s plan at that clock.

use super::flue2::{after_last_lease, assert_row_as_listed, cli_list, open};
use crate::support::{db_fixture_names, turnscope_json, unpack_db};

#[test]
fn a_refresh_at_a_later_clock_plans_every_kept_row_as_list_does_then() {
    let dir = tempfile::tempdir().unwrap();
    let (mut rows_checked, mut moved, mut opened) = (0, 0, 0);
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        // A second before the last lease ends, then past it: leases end in between.
        let (before, after) = (after_last_lease(&db) - 2000, after_last_lease(&db));
        let mut h = open(&db, "2.1.0", before, (200, 40));
        h.press("2");
        let first: Vec<String> = h.app.shown_rows().iter().map(|r| r.next.clone()).collect();
        h.advance_to(after);
        let cli = cli_list(&db, after, &["--status", "all"]);
        let cli = cli["submissions"].as_array().unwrap();
        let rows = h.app.shown_rows();
        assert_eq!(rows.len(), cli.len(), "{name}");
        for (row, c) in rows.iter().zip(cli) {
            assert_row_as_listed(row, c, &name);
            rows_checked += 1;
        }
        moved += rows
            .iter()
            .zip(&first)
            .filter(|(r, f)| &r.next != *f)
            .count();
        // The first row whose plan fires a step, opened at the later clock: show's plan then.
        if let Some(c) = cli.iter().find(|c| c["plan"]["step"].is_number()) {
            let id = c["id"].as_str().unwrap();
            h.press("/");
            h.press(id);
            h.press("<Enter>");
            assert_eq!(h.app.shown_ids(), [id], "{name}");
            h.press("<Enter>");
            // The tree the TUI holds compact: `following` parsed back from its text.
            let doc = h.app.opened_doc().expect("the detail opened").to_value();
            let want = turnscope_json(&db, Some(after), &["show", id, "--json"]);
            assert_eq!(doc["plan"], want["plan"], "{name}: {id}");
            assert_eq!(doc["attempts"], want["attempts"], "{name}: {id}");
            assert_eq!(doc["following"], want["following"], "{name}: {id}");
            assert_eq!(doc, want, "{name}: {id}: the whole document");
            opened += 1;
        }
    }
    assert!(rows_checked >= 19, "{rows_checked} rows checked");
    assert!(
        moved > 0,
        "no NEXT changed with the clock: nothing was planned again"
    );
    assert!(opened > 0, "no detail opened");
}
