//! The list's `/` filter with fields: `verdict:`, `rule:`, `kind:`, negation, and a term that does
//! not parse saying so in the list (80x24 and 160x48).

use super::*;
use turnscope_core::recovery::reconciler::DispositionKind;
use turnscope_tui::ItemDisposition;

fn data_disposition(it: &turnscope_tui::ListItem) -> Option<DispositionKind> {
    match it.disposition {
        ItemDisposition::Planned(k) => Some(k),
        _ => None,
    }
}

fn demo(dir: &Path, size: (u16, u16)) -> Harness {
    let db = dir.join("demo.db");
    if !db.exists() {
        demo_db(dir);
    }
    let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir)).unwrap();
    h.press("2");
    h
}

#[test]
fn field_terms_select_rows_by_verdict_rule_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = demo(dir.path(), (160, 48));
    let all = h.rows().len();
    assert!(all > 10, "{all}");
    let stuck = h
        .rows()
        .iter()
        .filter(|it| data_disposition(it) == Some(DispositionKind::Reconcile))
        .count();
    let live = h
        .rows()
        .iter()
        .filter(|it| data_disposition(it) == Some(DispositionKind::Live))
        .count();
    assert!(stuck > 0 && live > 0, "stuck {stuck}, live {live}");

    h.press("/verdict:stuck<Enter>");
    assert_eq!(h.rows().len(), stuck);
    h.press("<Esc>/-verdict:stuck<Enter>");
    assert_eq!(h.rows().len(), all - stuck);
    // `live`: the rows a worker holds, whatever their session says.
    h.press("<Esc>/verdict:live<Enter>");
    assert_eq!(h.rows().len(), live);
    assert!(h
        .rows()
        .iter()
        .all(|it| data_disposition(it) == Some(DispositionKind::Live)));
    h.press("<Esc>/rule:6<Enter>");
    assert!(!h.rows().is_empty());
    assert!(h.rows().iter().all(|it| it.rule == Some(6)));
    h.press("<Esc>/kind:direct !rule:6<Enter>");
    assert!(h
        .rows()
        .iter()
        .all(|it| it.row.kind == "direct" && it.rule != Some(6)));
    let direct = h
        .loaded_rows()
        .iter()
        .filter(|it| it.row.kind == "direct" && it.rule != Some(6))
        .count();
    assert_eq!(h.rows().len(), direct);
    // A plain word still searches the text columns.
    h.press("<Esc>/tool_use_unresolved<Enter>");
    assert!(h
        .rows()
        .iter()
        .all(|it| it.verdict == "tool_use_unresolved"));
    assert!(!h.rows().is_empty());
}

#[test]
fn a_term_that_does_not_parse_says_why() {
    let dir = tempfile::tempdir().unwrap();
    for size in SIZES {
        let mut h = demo(dir.path(), size);
        h.press("/verdict:lve<Enter>");
        assert!(h.rows().is_empty());
        let screen = h.render();
        assert!(
            screen.contains("/verdict:lve: unknown verdict \"lve\""),
            "{screen}"
        );
        let mut text = screen.clone();
        h.press("<Esc>/verdict:resume -rule:6<Enter>");
        text.push_str("── /verdict:resume -rule:6 ──\n");
        text.push_str(&h.render());
        settings()
            .bind(|| insta::assert_snapshot!(format!("list_query_{}x{}", size.0, size.1), text));
        // Esc clears it: every row again.
        h.press("<Esc>");
        assert!(h.list_query().is_empty());
    }
}
