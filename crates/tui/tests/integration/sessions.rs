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

/// Three sessions, as the store's finder tests have them: `support-2` (conversation
/// `conv_01M90NT6BJE9…`, "SK 803" in its second entry), `billing-1` (submission `86bad5c1…`),
/// `ops-9` (60 entries, "sk 803 again" in the last).
fn find_journal(dir: &Path) -> PathBuf {
    use serde_json::json;
    use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};
    let t = NOW - 3_600_000;
    let user = |text: &str| json!({"role": "user", "content": text, "timestamp": t});
    let mut a = SessionBuilder::for_instance("support-2", t).ids(
        "conv_01M90NT6BJE9ABCDEFGHJKMNQQ",
        "aff_01M90NT6BJE9ZZZZZZZZZZZZZQ",
    );
    a.message("a0000001", user("where is my refund?"));
    a.message(
        "a0000002",
        user("order placed, ticket SK 803 refunded to the customer"),
    );
    let mut b = SessionBuilder::for_instance("billing-1", t).ids(
        "conv_01M90PPPPPPPPPPPPPPPPPPPPP",
        "aff_01M90PPPPPPPPPPPPPPPPPPPPP",
    );
    b.message("b0000001", user("invoice 5512"));
    let sub = Submission::dispatch(
        "86bad5c1-0f2e-4c55-9d0a-6c1f9d3e2b7a",
        b.key(),
        "billing",
        "billing-1",
        &json!({"task": "x"}),
        t,
    );
    let mut c = SessionBuilder::for_instance("ops-9", t).ids(
        "conv_01M90RRRRRRRRRRRRRRRRRRRRR",
        "aff_01M90RRRRRRRRRRRRRRRRRRRRR",
    );
    for i in 0..59 {
        c.message(
            &format!("c{i:07}"),
            user(&format!("step {i} of the deploy")),
        );
    }
    c.message("c0000059", user("sk 803 again"));
    let db = dir.join("find.db");
    JournalBuilder::new()
        .session(a)
        .session(b)
        .session(c)
        .submission(sub)
        .write(&db)
        .unwrap();
    db
}

fn find_harness(dir: &Path, background: bool) -> Harness {
    let db = find_journal(dir);
    let mut o = opts("find.db", NOW, (140, 20), dir);
    o.auto_background = background;
    let mut h = Harness::open(&db, o).unwrap();
    h.worker.set_find_step_sessions(1);
    h
}

/// The session rows the screen lists (by instance), in order.
fn listed(screen: &str) -> Vec<&'static str> {
    ["support-2", "billing-1", "ops-9"]
        .into_iter()
        .filter(|i| screen.contains(&format!("agent-session:[\"{i}\"")))
        .collect()
}

#[test]
fn the_sessions_filter_finds_a_session_by_conversation_and_submission_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = find_harness(dir.path(), true);
    h.press("s/conv_01M90NT6BJE9");
    let screen = h.render();
    assert_eq!(listed(&screen), ["support-2"], "{screen}");
    assert!(
        screen.contains("conversation id: conv_01M90NT6BJE9ABCDEFGHJKMNQQ"),
        "{screen}"
    );
    assert!(!screen.contains("no session matches"), "{screen}");
    h.press("<Esc>/86bad5c1");
    let screen = h.render();
    assert_eq!(listed(&screen), ["billing-1"], "{screen}");
    assert!(
        screen.contains("submission id: 86bad5c1-0f2e-4c55"),
        "{screen}"
    );
    // ⏎ ends the typing, ⏎ again opens the session found.
    h.press("<Enter><Enter>");
    assert!(h.opened_is_session());
    assert_eq!(
        h.opened_id().unwrap(),
        "agent-session:[\"billing-1\",\"default\",\"default\"]"
    );
}

#[test]
fn text_across_sessions_streams_in_and_never_says_no_match_before_it_finished() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = find_harness(dir.path(), false);
    h.press("s/SK 803");
    // The ids are read; the text search waits for the worker's background steps.
    let screen = h.render();
    assert!(h.background_pending());
    assert!(screen.contains("searching"), "{screen}");
    assert!(!screen.contains("no session"), "{screen}");
    assert_eq!(listed(&screen), Vec::<&str>::new(), "{screen}");
    // One session a step, in key order: billing-1 (no match), ops-9, support-2.
    assert!(h.background_step());
    let screen = h.render();
    assert!(
        screen.contains("searching… 1 of 3 sessions (esc stops)"),
        "{screen}"
    );
    assert!(!screen.contains("no session"), "{screen}");
    assert!(h.background_step());
    let screen = h.render();
    assert_eq!(listed(&screen), ["ops-9"], "{screen}");
    assert!(
        screen.contains("text: …,\"content\":\"sk 803 again\""),
        "{screen}"
    );
    while h.background_step() {}
    let screen = h.render();
    assert_eq!(listed(&screen), ["support-2", "ops-9"], "{screen}");
    assert!(screen.contains("ticket SK 803 refunded"), "{screen}");
    assert!(
        screen.contains("searched 3 sessions, 63 entries"),
        "{screen}"
    );
    assert!(!h.background_pending());
    settings().bind(|| insta::assert_snapshot!("sessions_text_found", screen));
}

#[test]
fn esc_stops_a_text_search_across_sessions_and_keeps_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = find_harness(dir.path(), false);
    h.press("s/sk 803<Enter>");
    assert!(h.background_step());
    assert!(h.background_step());
    h.press("<Esc>");
    let screen = h.render();
    assert_eq!(listed(&screen), ["ops-9"], "{screen}");
    assert!(
        screen.contains("search stopped: 2 of 3 sessions searched"),
        "{screen}"
    );
    // The worker drops it at its next step, and nothing more arrives.
    while h.background_step() {}
    assert!(!h.background_pending());
    assert_eq!(listed(&h.render()), ["ops-9"]);
    // Esc again clears the query: every session.
    h.press("<Esc>");
    assert_eq!(listed(&h.render()).len(), 3);
    // A search stopped before anything matched says so, never "no session matches".
    h.press("/zebra<Enter><Esc>");
    let screen = h.render();
    assert!(
        screen.contains("no session matched before the search was stopped"),
        "{screen}"
    );
}

#[test]
fn f_goes_to_a_session_from_any_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = find_harness(dir.path(), true);
    assert_eq!(h.root(), Root::Submissions);
    h.press("f");
    assert_eq!(h.root(), Root::Sessions);
    assert_eq!(h.focus(), Pane::Sessions);
    h.press("support<Enter>");
    assert_eq!(listed(&h.render()), ["support-2"]);
    h.press("<Enter>");
    assert!(h.opened_is_session());
    // From the opened tree too: the query starts empty.
    h.press("f");
    assert!(!h.opened_is_session());
    h.press("ops-9<Enter>");
    let screen = h.render();
    assert_eq!(listed(&screen), ["ops-9"], "{screen}");
    assert!(screen.contains("instance: ops-9"), "{screen}");
}

/// The sessions screen's HEALTH column: the rows on screen are judged by the worker as they are
/// drawn; the real runtime's crash inside a tool batch shows its unresolved calls, a crash after
/// every result of the batch was recorded shows none.
#[test]
fn the_sessions_health_column_marks_a_session_with_unresolved_calls() {
    let dir = tempfile::tempdir().unwrap();
    for (name, expected) in [
        ("tool-batch-mid", "‼ 1 unresolved_calls"),
        ("tool-results-complete", "ok"),
    ] {
        let mut h = fixture(dir.path(), name, (160, 48));
        h.press("s");
        let screen = h.render();
        let header = screen
            .lines()
            .find(|l| l.contains("INSTANCE"))
            .unwrap_or_else(|| panic!("{name}: {screen}"));
        let col = header.find("HEALTH").expect("a HEALTH column");
        let row = screen
            .lines()
            .skip_while(|l| !l.contains("INSTANCE"))
            .nth(1)
            .unwrap();
        let cell: String = row
            .chars()
            .skip(header[..col].chars().count())
            .take(22)
            .collect();
        assert_eq!(cell.trim(), expected, "{name}: {screen}");
    }
}
