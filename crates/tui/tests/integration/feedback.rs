//! A newcomer's friction: keys that did nothing without saying why, hints that were not true,
//! messages that outlived their screen.

use super::*;

const READ_ONLY: &str = "read-only: press w (write mode)";

/// Every write key says why it does nothing in read-only mode: on the list, in an opened
/// submission, in the audit trail, and through the palette.
#[test]
fn write_keys_in_read_only_mode_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "ro-say");
    let before = db_bytes(&db);
    let mut h = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    let said = |h: &mut Harness, keys: &str, what: &str| {
        h.clear_status();
        h.press(keys);
        let status = h.status_text().unwrap_or_default();
        assert_eq!(
            status,
            format!("{READ_ONLY} to {what}"),
            "{keys} in read-only mode"
        );
        assert!(h.popup().is_none() && h.marked() == 0, "{keys}");
        assert!(h.render().contains(READ_ONLY), "{keys}: not on screen");
    };
    for (keys, what) in [
        ("R", "repair"),
        ("Q", "requeue"),
        ("F", "fail"),
        ("S", "step"),
        ("C", "reconcile"),
        ("E", "extend"),
        ("<Space>", "mark rows"),
    ] {
        said(&mut h, keys, what);
    }
    h.press("g<Enter>");
    for (keys, what) in [("R", "repair"), ("F", "fail"), ("E", "extend")] {
        said(&mut h, keys, what);
    }
    h.press("<Esc>a");
    said(&mut h, "u", "undo");
    said(&mut h, "U", "undo batch");
    // The palette: a write action matches with a note while typing, and ⏎ says it.
    h.press("<Esc>:repair");
    let screen = h.render();
    assert!(
        screen.contains(&format!("{READ_ONLY} to use repair")),
        "{screen}"
    );
    h.press("<Enter>");
    assert!(h.popup().is_none());
    assert_eq!(
        h.status_text().unwrap_or_default(),
        format!("{READ_ONLY} to use repair")
    );
    drop(h);
    assert!(
        db_bytes(&db) == before,
        "read-only mode changed the database"
    );
}

/// The detail pane's hint under the plan's writes is what `W` does in each mode: it lists them
/// (an info popup, not a confirm dialog), and only `--write` applies them.
#[test]
fn the_plan_hint_in_the_detail_pane_is_true_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    for write in [false, true] {
        let mut o = opts("demo.db", NOW, (160, 48), dir.path());
        o.read_only = !write;
        let mut h = Harness::open(&db, o).unwrap();
        h.press("1g<Enter>g");
        let detail = h.detail_text();
        assert!(detail.contains("(W lists these writes"), "{detail}");
        assert_eq!(
            detail.contains("read-only: w switches to write mode to apply them"),
            !write,
            "{detail}"
        );
        assert_eq!(detail.contains("S applies the next one"), write);
        h.press("W");
        let (title, body) = popup(&h);
        assert_eq!(
            h.popup_kind(),
            Some(PopupKind::Info),
            "W lists, it does not confirm"
        );
        assert!(title.starts_with("Recovery plan"), "{title}");
        assert!(body.contains("  1. "), "{body}");
    }
}

/// `b` shows the selected entry's raw bytes from the tree too (the detail pane shows that
/// entry whichever pane has focus); where it cannot work, the status line says where it does.
#[test]
fn b_works_from_the_tree_and_says_where_it_works_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("b");
    let status = h.status_text().unwrap_or_default();
    assert!(
        status.starts_with("b (the selected entry's raw stored bytes")
            && status.ends_with("works in: History tree"),
        "{status}"
    );
    h.press("1g<Enter>jj");
    assert_eq!(h.focus(), Pane::Tree);
    let pretty = h.detail_text();
    h.press("b");
    assert_eq!(h.focus(), Pane::Tree);
    let raw = h.detail_text();
    assert_ne!(pretty, raw, "b in the tree changed nothing");
    h.press("b");
    assert_eq!(h.detail_text(), pretty, "b again goes back to pretty JSON");
}

/// A status message belongs to the screen it was said on: opening a submission, going back,
/// switching to sessions or the audit trail drops it.
#[test]
fn status_messages_do_not_follow_you_to_another_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    let sorted = |h: &mut Harness| {
        h.press("o");
        assert!(h.status_text().is_some_and(|s| s.starts_with("sorted by")));
    };
    sorted(&mut h);
    h.press("<Enter>");
    assert_eq!(h.status_text(), None, "on the tree");
    h.press("W<Esc>");
    h.press("<Esc>");
    sorted(&mut h);
    h.press("s");
    assert_eq!(h.status_text(), None, "on sessions");
    h.press("s");
    sorted(&mut h);
    h.press("a");
    assert_eq!(h.status_text(), None, "on the audit trail");
    // A message said by the move itself stays.
    h.press("<Esc>R");
    assert!(h.status_text().is_some_and(|s| s.starts_with(READ_ONLY)));
    h.press("<Enter>");
    assert_eq!(h.status_text(), None, "opening drops the refusal");
}

/// Copy the synthetic session's first entry to `n` new positions (another process writing).
fn add_entries(db: &Path, from: i64, n: i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    for k in 0..n {
        conn.execute(
            "INSERT INTO flue_session_entries SELECT session_id, ?1, ?2, data FROM flue_session_entries WHERE position = 0",
            rusqlite::params![format!("feed{:04}", from + k), 9000 + from + k],
        )
        .unwrap();
    }
}

/// Three entries written over two refreshes while the banner is up are three new entries (it
/// said two: the change since the previous refresh).
#[test]
fn the_changed_under_you_banner_counts_every_change_since_it_appeared() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 60, (100, 30));
    h.press("<Enter>");
    add_entries(&db, 0, 1);
    h.refresh();
    assert!(
        h.banner().unwrap().contains("1 new entry"),
        "{:?}",
        h.banner()
    );
    add_entries(&db, 1, 2);
    h.refresh();
    let banner = h.banner().unwrap();
    assert!(banner.contains("3 new entries"), "{banner}");
    // Dismissed, the next change counts from what the operator has seen since.
    h.press("<Esc>");
    add_entries(&db, 3, 1);
    h.refresh();
    assert!(
        h.banner().unwrap().contains("1 new entry"),
        "{:?}",
        h.banner()
    );
}

/// A refusal has nothing to confirm: its dialog and the footer offer only to close it (they
/// offered "A apply" and a Yes-like button before). The preview of a requeue names its action
/// once ("requeue: requeue:" before).
#[test]
fn a_refusal_offers_only_close_and_summaries_name_their_action_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "refusal-close");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (120, 30), dir.path())).unwrap();
    h.press("/billing-bot<Enter>Q<Enter>");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Requeue refused"), "{title}");
    let screen = h.render();
    let footer = screen.lines().last().unwrap();
    assert!(
        footer.contains("close") && !footer.contains("apply") && !footer.contains("select"),
        "{footer}"
    );
    assert!(
        screen.contains("[ close ]") || screen.contains(" close "),
        "{screen}"
    );
    assert!(!screen.contains("Yes"), "{screen}");
    h.press("<Esc>");
    // A requeue that the runtime's rule 7 would make: its preview line reads "requeue: back…".
    h.press("<Esc>/onboarding-17<Enter>Q<Enter>");
    let (_, body) = popup(&h);
    assert!(body.contains("requeue: back to queued"), "{body}");
    assert!(!body.contains("requeue: requeue:"), "{body}");
    // No column written with the value it holds is listed as a change.
    assert!(!body.contains("NULL → NULL"), "{body}");
}

/// The header's status counts add up to the rows (failed is shown inside settled, not beside it
/// as a fifth status), at both widths; and a count of one is singular everywhere on screen.
#[test]
fn header_counts_add_up_to_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    for size in SIZES {
        let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir.path())).unwrap();
        h.press("2");
        let screen = h.render();
        let header = screen.lines().next().unwrap();
        let counts = header.split("READ-ONLY").nth(1).unwrap();
        // "(2 failed)" is part of settled: leave it out of the sum.
        let outside: String = counts
            .split('(')
            .map(|p| p.split_once(')').map_or(p, |(_, rest)| rest))
            .collect();
        let sum: usize = outside
            .split_whitespace()
            .filter_map(|w| w.parse::<usize>().ok())
            .sum();
        assert_eq!(sum, h.rows().len(), "{header}");
        assert!(counts.contains("(2 fail"), "{header}");
    }
}
