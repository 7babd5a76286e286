//! Finding sessions (`SessionFinder`), the same on every backend: by key, instance and the ids
//! the session's rows hold, and by text anywhere in every session's history, streamed in key
//! order, paused and resumed, cancelled between rows.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use turnscope_core::journal::search::Needle;
use turnscope_store::{MatchKind, SessionMatch, TextSearched, TextSink};
use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission, TurnJournal};

use crate::backends::{kinds, TestDb};

const T: i64 = 1_767_225_600_000;
pub const CONV_A: &str = "conv_01M90NT6BJE9ABCDEFGHJKMNQQ";
pub const SUB_B: &str = "86bad5c1-0f2e-4c55-9d0a-6c1f9d3e2b7a";
pub const ATTEMPT_B: &str = "7e1d9c04-aaaa-4bbb-8ccc-0123456789ab";
pub const TURN_B: &str = "turn_01M90QQ4Z1XYZXYZXYZXYZXYZX";

/// Three sessions: `support-2` whose conversation is `CONV_A` and whose second entry says
/// "SK 803"; `billing-1` with the submission `SUB_B` (attempt `ATTEMPT_B`, turn `TURN_B`);
/// `ops-9` of 60 entries whose last one says "sk 803 again".
pub fn journal(path: &Path) {
    let user = |text: &str| json!({"role": "user", "content": text, "timestamp": T});
    let mut a =
        SessionBuilder::for_instance("support-2", T).ids(CONV_A, "aff_01M90NT6BJE9ZZZZZZZZZZZZZQ");
    a.message("a0000001", user("where is my refund?"));
    a.message(
        "a0000002",
        user("order placed, ticket SK 803 refunded to the customer"),
    );
    a.message("a0000003", user("thanks"));
    let mut b = SessionBuilder::for_instance("billing-1", T).ids(
        "conv_01M90PPPPPPPPPPPPPPPPPPPPP",
        "aff_01M90PPPPPPPPPPPPPPPPPPPPP",
    );
    b.message("b0000001", user("invoice 5512"));
    let sub = Submission::dispatch(
        SUB_B,
        b.key(),
        "billing",
        "billing-1",
        &json!({"task": "x"}),
        T,
    )
    .claimed(ATTEMPT_B, "worker-1", T + 1, T + 30_000);
    let turn = TurnJournal::begin(&sub, "op_01M90QQ4Z1XYZXYZXYZXYZXYZX", TURN_B, T + 2, None);
    let mut c = SessionBuilder::for_instance("ops-9", T).ids(
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
    JournalBuilder::new()
        .session(a)
        .session(b)
        .session(c)
        .submission(sub)
        .turn_journal(turn)
        .write(path)
        .unwrap();
}

fn key(instance: &str) -> String {
    format!("agent-session:{}", json!([instance, "default", "default"]))
}

fn found(store: &dyn turnscope_store::Backend, q: &str) -> Vec<(String, MatchKind, String)> {
    store
        .find_sessions(q)
        .unwrap()
        .into_iter()
        .map(|m| (m.session, m.kind, m.value))
        .collect()
}

/// Collects matches and progress; stops (a limit) or pauses after `pause_every` sessions.
#[derive(Default)]
struct Collect {
    matches: Vec<SessionMatch>,
    progress: Vec<usize>,
    pause_every: Option<usize>,
    cancel_after: Option<(usize, &'static AtomicBool)>,
}

impl TextSink for Collect {
    fn found(&mut self, m: SessionMatch) -> bool {
        self.matches.push(m);
        true
    }
    fn progress(&mut self, s: &TextSearched) -> bool {
        self.progress.push(s.sessions);
        if let Some((n, flag)) = self.cancel_after {
            if s.sessions >= n {
                flag.store(true, Ordering::Relaxed);
            }
        }
        self.pause_every.is_none_or(|n| s.sessions % n != 0)
    }
}

#[test]
fn sessions_are_found_by_key_instance_and_every_id_their_rows_hold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("find.db");
    journal(&path);
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let store = db.open();
        let s = &*store;
        let (a, b) = (key("support-2"), key("billing-1"));
        assert_eq!(
            found(s, "SUPPORT"),
            [(a.clone(), MatchKind::Instance, "support-2".into())],
            "{kind:?}"
        );
        // Every key has `default`: the key matched, not an instance.
        assert_eq!(found(s, "\"default\"]").len(), 3, "{kind:?}");
        assert!(found(s, "\"default\"]")
            .iter()
            .all(|(_, k, _)| *k == MatchKind::Key));
        // A conversation id, whole or a prefix, in either case.
        for q in [CONV_A, "conv_01M90NT6BJE9", "conv_01m90nt6bje9"] {
            assert_eq!(
                found(s, q),
                [(a.clone(), MatchKind::Conversation, CONV_A.into())],
                "{kind:?} {q}"
            );
        }
        assert_eq!(
            found(s, "86bad5c1"),
            [(b.clone(), MatchKind::Submission, SUB_B.into())],
            "{kind:?}"
        );
        assert_eq!(
            found(s, SUB_B),
            [(b.clone(), MatchKind::Submission, SUB_B.into())],
            "{kind:?}"
        );
        // The attempt is on the submission and on its turn journal: named once.
        assert_eq!(
            found(s, "7e1d9c04"),
            [(b.clone(), MatchKind::Attempt, ATTEMPT_B.into())],
            "{kind:?}"
        );
        assert_eq!(
            found(s, "turn_01M90QQ4"),
            [(b.clone(), MatchKind::Turn, TURN_B.into())],
            "{kind:?}"
        );
        let entry = s.find_sessions("a0000002").unwrap();
        assert_eq!(entry.len(), 1, "{kind:?}");
        assert_eq!(entry[0].kind, MatchKind::Entry);
        assert_eq!(entry[0].entry, Some(("a0000002".into(), 1)));
        // Text is not an id: only the text search finds it.
        assert_eq!(found(s, "SK 803"), [], "{kind:?}");
        assert_eq!(found(s, "no-such-thing"), [], "{kind:?}");
        assert_eq!(found(s, "  "), [], "{kind:?}");
    }
}

#[test]
fn text_is_found_in_every_session_streamed_in_key_order_with_what_was_searched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("find.db");
    journal(&path);
    let never = AtomicBool::new(false);
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let store = db.open();
        let needle = Needle::new("SK 803").unwrap();
        let mut sink = Collect::default();
        let s = store
            .search_text(&needle, TextSearched::default(), &mut sink, &never)
            .unwrap();
        let sessions: Vec<&str> = sink.matches.iter().map(|m| m.session.as_str()).collect();
        // Key order: "ops-9" < "support-2"; "billing-1" has no match.
        assert_eq!(sessions, [key("ops-9"), key("support-2")], "{kind:?}");
        assert!(sink.matches.iter().all(|m| m.kind == MatchKind::Text));
        assert_eq!(
            sink.matches[0].entry,
            Some(("c0000059".into(), 59)),
            "{kind:?}"
        );
        assert_eq!(
            sink.matches[1].entry,
            Some(("a0000002".into(), 1)),
            "{kind:?}"
        );
        assert!(
            sink.matches[1].value.contains("ticket SK 803 refunded"),
            "{kind:?} {}",
            sink.matches[1].value
        );
        assert_eq!(sink.progress, [1, 2, 3, 3], "{kind:?}");
        assert!(s.finished && !s.cancelled, "{kind:?}");
        assert_eq!((s.sessions_total, s.entries_total), (3, 64), "{kind:?}");
        // A session is read up to its first match: support-2's third entry is not.
        assert_eq!((s.sessions, s.entries, s.matches), (3, 63, 2), "{kind:?}");
        // Nothing found: every entry was read, and the count says so.
        let none = store
            .search_text(
                &Needle::new("zebra quartz").unwrap(),
                TextSearched::default(),
                &mut Collect::default(),
                &never,
            )
            .unwrap();
        assert_eq!(none.matches, 0);
        assert_eq!(none.describe(), "3 sessions, 64 entries", "{kind:?}");
        assert!(none.bytes > 64 * 50, "{kind:?}: {}", none.bytes);
    }
}

#[test]
fn a_text_search_paused_or_cancelled_goes_on_where_it_stopped() {
    static CANCEL: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("find.db");
    journal(&path);
    let needle = Needle::new("sk 803").unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let store = db.open();
        // Paused after every session: three calls, the same matches as one.
        let mut sink = Collect {
            pause_every: Some(1),
            ..Default::default()
        };
        let never = AtomicBool::new(false);
        let mut s = TextSearched::default();
        let mut calls = 0;
        while !s.finished {
            s = store.search_text(&needle, s, &mut sink, &never).unwrap();
            calls += 1;
            assert!(calls <= 4, "{kind:?}: the search does not advance");
        }
        assert_eq!(sink.matches.len(), 2, "{kind:?}");
        assert_eq!((s.sessions, s.matches), (3, 2), "{kind:?}");
        // Cancelled after the first session: it stops there and says so.
        CANCEL.store(false, Ordering::Relaxed);
        let mut sink = Collect {
            cancel_after: Some((1, &CANCEL)),
            ..Default::default()
        };
        let s = store
            .search_text(&needle, TextSearched::default(), &mut sink, &CANCEL)
            .unwrap();
        assert!(s.cancelled && !s.finished, "{kind:?}");
        assert_eq!(s.sessions, 1, "{kind:?}");
        assert_eq!(s.last.as_deref(), Some(key("billing-1").as_str()));
        assert!(sink.matches.is_empty(), "{kind:?}");
        // Cancelled before the first row: nothing read.
        let s0 = store
            .search_text(
                &needle,
                TextSearched::default(),
                &mut Collect::default(),
                &CANCEL,
            )
            .unwrap();
        assert!(s0.cancelled, "{kind:?}");
        assert_eq!((s0.sessions, s0.entries), (0, 0), "{kind:?}");
        // Resumed: the rest, and nothing twice.
        CANCEL.store(false, Ordering::Relaxed);
        let mut rest = Collect::default();
        let s = store.search_text(&needle, s, &mut rest, &CANCEL).unwrap();
        assert!(s.finished, "{kind:?}");
        assert_eq!(rest.matches.len(), 2, "{kind:?}");
        assert_eq!(s.sessions, 3, "{kind:?}");
    }
}
