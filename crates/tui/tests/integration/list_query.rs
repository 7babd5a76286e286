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

/// A journal with more rows than the list loads (5,010 settled submissions of one session, the
/// oldest first): the `all` view holds the newest 5,000.
fn paged_journal(dir: &Path) -> PathBuf {
    use turnscope_testkit::journal::{JournalBuilder, SessionBuilder, Submission};
    let db = dir.join("paged.db");
    let mut j = JournalBuilder::new();
    let session = SessionBuilder::for_instance("paged", NOW - 9_000_000);
    let key = session.key().to_string();
    j.session(session);
    for i in 0..5_010u32 {
        let id = format!("{:08x}-0000-4000-8000-000000000000", 0x1000_0000u32 + i);
        let at = NOW - 8_000_000 + i as i64;
        j.submission(
            Submission::dispatch(
                &id,
                &key,
                "agent",
                "paged",
                &serde_json::json!({"n": i}),
                at,
            )
            .settled(at + 10, None),
        );
    }
    j.write(&db).unwrap();
    db
}

/// Never a false "no match": with only the newest page loaded, `/id:` and a bare id prefix look
/// the id up in the whole journal (the oldest row is found), and a query that matches nothing
/// says what was searched.
#[test]
fn a_paged_list_looks_ids_up_in_the_whole_journal_and_says_what_it_searched() {
    let dir = tempfile::tempdir().unwrap();
    let db = paged_journal(dir.path());
    let mut h = Harness::open(&db, opts("paged.db", NOW, (160, 30), dir.path())).unwrap();
    h.press("2");
    assert_eq!(h.loaded_rows().len(), 5_000);
    let oldest = "10000000";
    assert!(!h
        .loaded_rows()
        .iter()
        .any(|i| i.row.submission_id.starts_with(oldest)));
    for query in [format!("id:{oldest}"), oldest.to_string()] {
        h.press(&format!("/{query}<Enter>"));
        h.refresh();
        let rows: Vec<String> = h
            .rows()
            .iter()
            .map(|i| i.row.submission_id.clone())
            .collect();
        assert_eq!(rows.len(), 1, "{query}: {rows:?}");
        assert!(rows[0].starts_with(oldest));
        let screen = h.render();
        assert!(
            screen.contains("searched: the newest 5,000 of 5,010 + every id 10000000… (1 more)"),
            "{screen}"
        );
        h.press("<Esc>");
    }
    // A word that is no id: only the page was searched, and the empty list says so.
    h.press("/nothing-here<Enter>");
    h.refresh();
    let screen = h.render();
    assert!(
        screen.contains("no submission matches /nothing-here · searched: the newest 5,000 of 5,010 (id: searches every row)"),
        "{screen}"
    );
    // An id no row has: looked up, and said so.
    h.press("<Esc>/id:ffffffff<Enter>");
    h.refresh();
    let screen = h.render();
    assert!(screen.contains("no submission matches /id:ffffffff · searched: the newest 5,000 of 5,010 + every id ffffffff… (0 more)"), "{screen}");
}

/// `/` on a kept query: typing starts a new query (the kept one is shown selected), Backspace
/// edits the kept one; the same in the tree's search.
#[test]
fn slash_on_a_kept_query_replaces_it_when_typing() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = demo(dir.path(), (160, 48));
    h.press("/kind:direct<Enter>");
    assert_eq!(h.list_query(), "kind:direct");
    h.press("/kind:dispatch<Enter>");
    assert_eq!(h.list_query(), "kind:dispatch");
    h.press("/<BS><BS><BS><BS><BS><BS><BS><BS>direct<Enter>");
    assert_eq!(h.list_query(), "kind:direct");
    // The tree's search.
    h.press("<Esc>1<Enter>/tool<Enter>");
    assert_eq!(h.search().0, "tool");
    h.press("/user<Enter>");
    assert_eq!(h.search().0, "user");
    h.press("/<BS>s<Enter>");
    assert_eq!(h.search().0, "uses");
}
