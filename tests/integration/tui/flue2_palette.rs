//! `:` on a 2.x journal: the keys these screens answer, filtered as typed; `⏎` runs the chosen
//! one as its key does; a key that does nothing in the pane under it is marked and says so
//! instead; the write keys only in write mode; esc closes without running anything.

use std::path::Path;

use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use super::flue2::after_last_lease;
use crate::support::unpack_db;

fn open(db: &Path, now: i64, write: bool) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = 160;
    o.height = 40;
    o.read_only = !write;
    o.operator = "palette-test@host".into();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

#[test]
fn the_palette_runs_what_the_key_runs_and_says_where_a_key_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let mut h = open(&db, now, false);
    h.press("2");
    assert_eq!(h.app.shown_ids().len(), 3);

    // Every row, read-only: the list's, the screens', none of the write keys.
    let all = h.app.palette_commands("");
    for key in ["s", "f", "I", "a", "1", "o", "/", "M", "e", "w", "?", "q"] {
        assert!(all.iter().any(|c| c.key == key), "{key}: {all:#?}");
    }
    for key in ["X", "Q", "E", "F", "space", "*", "V"] {
        assert!(
            !all.iter().any(|c| c.key == key),
            "{key} read-only: {all:#?}"
        );
    }
    // What works here comes first: in the list, the detail's search does not.
    let here = all.iter().position(|c| !c.here).unwrap();
    assert!(all[here..].iter().all(|c| !c.here));
    assert!(all[here..].iter().any(|c| c.key == "n"), "{all:#?}");

    // Typed words narrow the rows; ⏎ runs the first as its key would: the running view.
    h.press(":");
    assert!(h.render().contains("type to filter"));
    h.press("view running");
    assert_eq!(h.app.palette_commands("view running").len(), 1);
    h.press("<Enter>");
    assert!(!h.render().contains("type to filter"), "closed");
    let rows = h.app.shown_rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, "running");

    // A screen, through the palette.
    h.press(":incidents<Enter>");
    assert_eq!(h.app.screen_name(), Some("Incidents"));
    h.press(":incidents<Enter>");
    assert_eq!(h.app.screen_name(), None);

    // esc closes it and runs nothing.
    h.press(":quit<Esc>");
    assert!(!h.app.quit_requested());
    assert!(!h.render().contains("type to filter"));

    // In a submission's detail the list's keys do nothing: said, not run; the detail's run.
    h.press("3");
    assert_eq!(h.app.shown_rows().len(), 1);
    h.press("<Enter>");
    assert!(h.app.opened().is_some());
    h.press(":view all<Enter>");
    let said = h.app.status_text().unwrap();
    assert!(
        said.contains("does nothing here") && said.contains("close the detail"),
        "{said}"
    );
    assert_eq!(h.app.shown_rows().len(), 1, "the view did not change");
    // The screens' keys there say where they open.
    h.press("I");
    let said = h.app.status_text().unwrap();
    assert!(said.contains("opens from the list"), "{said}");
    assert_eq!(h.app.screen_name(), None);
    h.press(":find a text<Enter>");
    assert!(
        h.app.status_text().unwrap().starts_with('/'),
        "{:?}",
        h.app.status_text()
    );
    h.press("<Esc><Esc>");
    assert!(h.app.opened().is_none());

    // No key matches: said.
    h.press(":zzzz<Enter>");
    assert_eq!(h.app.status_text().as_deref(), Some("no key matches"));
}

#[test]
fn in_write_mode_the_palette_lists_the_write_keys_and_runs_them_through_their_preview() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let mut h = open(&db, now, true);
    let all = h.app.palette_commands("");
    for key in ["X", "Q", "E", "F"] {
        assert!(
            all.iter().any(|c| c.key == key && c.here),
            "{key}: {all:#?}"
        );
    }
    // `abort` is X's: its preview asks first, No selected; nothing is written by the palette.
    h.press(":abort<Enter>");
    let screen = h.render();
    assert!(screen.contains("abort_requested_at"), "{screen}");
    h.press("<Esc>");
    assert_eq!(
        h.app.status_text().as_deref(),
        Some("declined: nothing written")
    );
}
