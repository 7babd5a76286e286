//! The popups: help, the command palette, and the keys they list.

use super::*;

#[test]
fn help_is_generated_from_the_keymap() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-results-partial", size);
        h.press("?");
        assert!(h.popup_kind() == Some(PopupKind::Help));
        text.push_str(&h.render());
    }
    settings().bind(|| insta::assert_snapshot!("help", text));
    // Every binding's description appears in the help, in the mode it exists in.
    let mut h = fixture(dir.path(), "tool-results-partial", (160, 200));
    h.press("?");
    let screen = h.render();
    for b in turnscope_tui::KEYMAP {
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
    for b in turnscope_tui::KEYMAP {
        assert!(
            screen.contains(b.help),
            "write-mode help lacks {:?}",
            b.help
        );
    }
}

#[test]
fn command_palette_lists_filters_and_runs_actions() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 50, (100, 30));
    h.press(":");
    let screen = h.render();
    assert!(h.popup_kind() == Some(PopupKind::Palette));
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
    // Write actions only in write mode: read-only says how to get them.
    h.press("repair");
    let screen = h.render();
    assert!(
        !screen.contains("no action matches")
            && screen.contains("read-only: press w (write mode) to use repair"),
        "{screen}"
    );
    h.press("<Esc>");
    assert!(h.popup().is_none());
    // Filter as you type, ⏎ runs the first match.
    h.press(":audit trail<Enter>");
    h.render();
    assert!(h.popup().is_none());
    assert_eq!(h.root(), turnscope_tui::Root::Audit);
    // ↓ chooses, the wheel too, ⏎ runs the chosen row.
    h.press(":this help");
    assert!(h
        .popup()
        .is_some_and(|p| p.kind == PopupKind::Palette && p.selected == 0));
    h.press("<Down>");
    assert!(
        h.popup()
            .is_some_and(|p| p.kind == PopupKind::Palette && p.selected == 0),
        "one match: the selection stays on it"
    );
    h.press("<Enter>");
    assert!(h.popup_kind() == Some(PopupKind::Help));
    h.press("<Esc>:<Down><Down>");
    assert!(h
        .popup()
        .is_some_and(|p| p.kind == PopupKind::Palette && p.selected == 2));
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
    use turnscope_tui::Overrides;
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
    assert!(!h.quit_requested(), "q no longer quits");
    h.dispatch(turnscope_tui::Action::Help);
    let help = h.render();
    assert!(help.contains("  x          quit"), "{help}");
    h.press("<Esc>");
    h.press(":");
    let screen = h.render();
    let row = screen.lines().find(|l| l.contains(" quit ")).unwrap();
    assert!(row.contains(" x "), "the palette shows the override: {row}");
    h.press("<Esc>x");
    assert!(h.quit_requested());
}
