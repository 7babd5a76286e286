//! The frame around the views: status line, errors, empty databases, resizing, themes.

use super::*;

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
        assert!(h.db_error().unwrap().contains("vanished"));
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
        assert!(h.opened_id().is_none(), "nothing to open");
    }
    settings().bind(|| insta::assert_snapshot!("empty_database", text));
}

#[test]
fn resize_and_narrow_terminals_degrade_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (160, 48));
    h.press("2");
    let wide = h.render();
    assert!(wide.contains("ERROR") && wide.contains("PHASE"));
    h.resize(80, 24);
    let narrow = h.render();
    assert!(
        narrow.contains("VERDICT") && !narrow.contains("PHASE"),
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
fn a_locked_database_shows_in_the_status_line_and_the_app_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let now = fixture_now(&db);
    // A rollback-journal database under an exclusive lock blocks readers (WAL would not).
    let locker = rusqlite::Connection::open(&db).unwrap();
    locker.execute_batch("PRAGMA journal_mode=DELETE;").unwrap();
    let mut h = Harness::open(&db, opts("x.db", now, (80, 24), dir.path())).unwrap();
    let before = h.loaded_rows().len();
    locker.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    locker
        .execute("UPDATE flue_meta SET value = value", [])
        .unwrap();
    h.refresh();
    let err = h.db_error().expect("an error in the status line");
    assert!(err.contains("locked"), "{err}");
    // The store's hint travels with the error and is rendered after it.
    assert!(
        err.ends_with(" · another process holds a write lock; retry in a moment"),
        "{err}"
    );
    assert!(h.render().contains("✗ the database is locked"));
    assert_eq!(
        h.loaded_rows().len(),
        before,
        "the last data stays on screen"
    );
    locker.execute_batch("ROLLBACK").unwrap();
    h.refresh();
    assert!(h.db_error().is_none());
}

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
    use turnscope_tui::Palette;
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let mut seen = Vec::new();
    for palette in [Palette::Dark, Palette::Light, Palette::HighContrast] {
        for color in [true, false] {
            let mut o = opts("x.db", fixture_now(&db), (100, 30), dir.path());
            o.theme = Theme { color, palette };
            let mut h = Harness::open(&db, o).unwrap();
            h.press("<Enter>g");
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

/// ANSI colours 7 (`Gray`, which terminals draw as white) and 15 (`White`).
fn is_white(c: Color) -> bool {
    matches!(c, Color::White | Color::Gray)
}

/// `--help` promises the light theme no white text: every screen, read-only and `--write`,
/// popups included, rendered in it, and no cell's foreground is white.
#[test]
fn the_light_theme_draws_no_white_text_on_any_screen() {
    use turnscope_tui::Palette;
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let steps: &[(&str, &str)] = &[
        ("expired list", "1"),
        ("all submissions", "2"),
        ("search", "/a"),
        ("list after search", "<Esc><Esc>1"),
        ("tree", "<Enter>"),
        ("tree expanded", "Z"),
        ("detail", "<Tab>"),
        ("detail raw", "b"),
        ("verdict", "v"),
        ("plan", "<Esc>W"),
        ("help", "<Esc>?"),
        ("palette", "<Esc>:"),
        ("sessions", "<Esc><Esc><Esc>s"),
        ("session tree", "<Enter>"),
        ("audit", "<Esc><Esc>a"),
    ];
    let write_steps: &[(&str, &str)] = &[
        ("marked row", "<Esc><Esc>1 "),
        ("repair preview", "R"),
        ("fail reason", "<Esc>F"),
    ];
    for write in [false, true] {
        let mut o = opts("demo.db", NOW, (160, 48), dir.path());
        o.theme = Theme {
            color: true,
            palette: Palette::Light,
        };
        o.read_only = !write;
        let mut h = Harness::open(&db, o).unwrap();
        let all = if write {
            steps.iter().chain(write_steps).collect::<Vec<_>>()
        } else {
            steps.iter().collect()
        };
        for (label, keys) in all {
            h.press(keys);
            let screen = h.render();
            let buf = h.terminal.backend().buffer();
            let white: Vec<&str> = buf
                .content()
                .iter()
                .filter(|c| is_white(c.fg) && !c.symbol().trim().is_empty())
                .map(|c| c.symbol())
                .collect();
            assert!(
                white.is_empty(),
                "light theme, {label} (write {write}): {} white cells ({:?}…)\n{screen}",
                white.len(),
                white.iter().take(20).copied().collect::<String>()
            );
        }
    }
}

/// The header row of the list (the line starting with " ID" or " SEQ").
fn list_header(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(" ID ") && l.contains("VERDICT"))
        .unwrap_or_else(|| panic!("no list header in\n{screen}"))
        .to_string()
}

/// At 80 and 70 columns the expired view keeps RULE and INSTANCE and drops STATUS (every row
/// there is `running`); the all view, where statuses differ, keeps STATUS.
#[test]
fn narrow_lists_drop_the_column_that_says_nothing_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("1");
    let at80 = list_header(&h.render());
    for col in ["ID", "VERDICT", "RULE", "INSTANCE", "LEASE"] {
        assert!(at80.contains(col), "{col} at 80: {at80}");
    }
    assert!(!at80.contains("STATUS"), "STATUS at 80: {at80}");
    h.resize(70, 24);
    let at70 = list_header(&h.render());
    assert!(
        at70.contains("RULE") && !at70.contains("STATUS"),
        "70: {at70}"
    );
    h.resize(80, 24);
    h.press("2");
    let all = list_header(&h.render());
    assert!(all.contains("STATUS") && all.contains("RULE"), "{all}");
}

/// A tree row's badges stay visible when its text is too long for the pane: the text is cut
/// before them. Every badge drawn at 300 columns is drawn at 140 and at 80.
#[test]
fn tree_badges_survive_narrow_panes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let count = |screen: &str| -> Vec<usize> {
        ["[matched]", "[checkpoint]", "[input]", "[partial batch]"]
            .iter()
            .map(|b| screen.matches(b).count())
            .collect()
    };
    let mut h = Harness::open(&db, opts("demo.db", NOW, (300, 60), dir.path())).unwrap();
    h.press("1");
    let n = h.rows().len();
    let mut cut = 0;
    for pos in 0..n {
        h.resize(300, 60);
        h.press("g");
        for _ in 0..pos {
            h.press("j");
        }
        h.press("<Enter>Z");
        let wide = count(&h.render());
        for w in [140, 80] {
            h.resize(w, 60);
            let screen = h.render();
            assert_eq!(count(&screen), wide, "row {pos} at {w}:\n{screen}");
            cut += usize::from(screen.contains('…'));
        }
        h.press("<Esc>");
    }
    assert!(
        cut > 0,
        "no row was long enough to be cut: the test proves nothing"
    );
}

/// At 80 columns the footer drops middle hints, never `? help` and `q quit`; the list's write
/// hint names every write key (C and E too).
#[test]
fn the_footer_keeps_help_and_quit_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    for (w, write) in [(80u16, false), (80, true), (60, false)] {
        let mut o = opts("demo.db", NOW, (w, 24), dir.path());
        o.read_only = !write;
        let mut h = Harness::open(&db, o).unwrap();
        for keys in ["", "<Enter>"] {
            h.press(keys);
            let screen = h.render();
            let footer = screen.lines().last().unwrap().trim_end().to_string();
            assert!(
                footer.ends_with("? help  q quit"),
                "{w} {write} {keys:?}: {footer:?}"
            );
        }
    }
    let mut o = opts("demo.db", NOW, (200, 24), dir.path());
    o.read_only = false;
    let mut h = Harness::open(&db, o).unwrap();
    let footer = h.render().lines().last().unwrap().to_string();
    assert!(footer.contains("C/R/Q/F/S/E act"), "{footer}");
}
