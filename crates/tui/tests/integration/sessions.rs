//! The sessions view and an opened session's tree.

use super::*;

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

#[test]
fn search_in_a_session_steps_through_hits() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut h) = synthetic(dir.path(), 200, (100, 30));
    h.press("s<Enter>");
    assert!(h.opened_is_session());
    h.press("/get_time");
    let hits = h.search().1;
    assert!(hits > 10, "{hits}");
    h.press("<Enter>");
    let first = h.tree_cursor();
    h.press("n");
    let second = h.tree_cursor();
    assert!(second > first);
    h.press("N");
    assert_eq!(h.tree_cursor(), first);
    // ] jumps to the session's submission input; Enter on it opens the submission.
    h.press("g]");
    assert_eq!(h.search().0, "get_time");
    h.press("<Enter>");
    assert_eq!(h.open_depth(), 2);
    assert_eq!(h.opened_id().unwrap(), SYNTH_SUBMISSION);
    h.press("<Esc>");
    assert_eq!(h.open_depth(), 1);
}
