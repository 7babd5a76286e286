use serde_json::{json, Value};

use super::*;
use crate::journal::compact::{parse_compact_previews, Previews};
use crate::journal::entry::Entry;
use crate::journal::history::History;

/// A chain of entries (each the child of the one before), parsed whole or compactly.
fn chain(messages: &[(&str, Value)], compact: bool) -> History {
    let mut parent: Option<&str> = None;
    let mut entries = Vec::new();
    for (pos, (id, body)) in messages.iter().enumerate() {
        let mut e = json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-05T09:12:44.131Z"});
        let o = e.as_object_mut().unwrap();
        if body.get("type").and_then(Value::as_str) == Some("compaction") {
            for (k, v) in body.as_object().unwrap() {
                o.insert(k.clone(), v.clone());
            }
        } else {
            o.insert("message".into(), body.clone());
        }
        if let Some(d) = body.get("__dispatch") {
            o.insert("dispatch".into(), json!({"dispatchId": d}));
            o["message"].as_object_mut().unwrap().remove("__dispatch");
        }
        let text = e.to_string();
        entries.push(if compact {
            parse_compact_previews(pos as i64, id, text.as_bytes(), Previews::Keep).0
        } else {
            Entry::parse(pos as i64, id, &text)
        });
        parent = Some(id);
    }
    let leaf = messages.last().map(|(id, _)| id.to_string());
    History::new(entries, leaf)
}

fn input(sub: &str) -> Value {
    json!({"role": "signal", "type": "dispatch_input", "content": "{}", "timestamp": 1, "__dispatch": sub})
}

fn asst(stop: &str, content: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "a", "provider": "p", "model": "m", "stopReason": stop, "timestamp": 2})
}

fn call(id: &str, name: &str) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": {"q": id}})
}

fn result(id: &str, name: &str) -> Value {
    json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 3})
}

fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

fn signal(kind: &str) -> Value {
    json!({"role": "signal", "type": kind, "content": "x", "timestamp": 4})
}

/// The findings of `messages`, read whole and read compactly (with whole reads for the
/// assistants that may be empty, as the engine does): both must agree.
fn findings(messages: &[(&str, Value)]) -> Vec<Finding> {
    let whole = chain(messages, false);
    let compact = chain(messages, true);
    let a = session_findings(&whole, &[], &[], &mut |_| {
        panic!("a whole read asks nothing")
    });
    let mut b = session_findings(&compact, &[], &[], &mut |e| {
        let full = whole.entries.iter().find(|w| w.id == e.id).unwrap();
        is_empty_assistant(full.message().unwrap())
    });
    // A compact read has no arguments: fill them from the whole read to compare.
    for (fa, fb) in a.iter().zip(b.iter_mut()) {
        if let (
            Hazard::UnresolvedCalls { calls: ca, .. },
            Hazard::UnresolvedCalls { calls: cb, .. },
        ) = (&fa.hazard, &mut fb.hazard)
        {
            for (x, y) in ca.iter().zip(cb.iter_mut()) {
                assert_eq!(y.arguments, None, "a compact read has no arguments");
                y.arguments = x.arguments.clone();
            }
        }
        if let (
            Hazard::MismatchedBatch { calls: ca, .. },
            Hazard::MismatchedBatch { calls: cb, .. },
        ) = (&fa.hazard, &mut fb.hazard)
        {
            *cb = ca.clone();
        }
    }
    assert_eq!(a, b, "whole and compact reads differ");
    a
}

fn kinds(f: &[Finding]) -> Vec<&'static str> {
    f.iter().map(|f| f.hazard.kind()).collect()
}

#[test]
fn a_healthy_tool_cycle_has_no_finding() {
    let f = findings(&[
        ("in", input("s1")),
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c2", "put")])),
        ),
        ("r1", result("c1", "get")),
        ("r2", result("c2", "put")),
        ("a2", asst("stop", text("done"))),
    ]);
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn unresolved_calls_name_the_tool_arguments_and_submission() {
    let f = findings(&[
        ("in", input("s1")),
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c2", "put")])),
        ),
        ("r1", result("c1", "get")),
        ("in2", input("s2")),
        ("a2", asst("stop", text("done"))),
    ]);
    assert_eq!(kinds(&f), ["unresolved_calls"]);
    let Hazard::UnresolvedCalls {
        calls,
        missing,
        recorded,
        at_leaf,
        later_entries,
        ..
    } = &f[0].hazard
    else {
        unreachable!()
    };
    assert_eq!(missing, &["c2"]);
    assert_eq!(calls[1].name, "put");
    assert_eq!(calls[1].arguments, Some(json!({"q": "c2"})));
    assert_eq!((*recorded, *at_leaf, *later_entries), (1, false, 2));
    assert_eq!(f[0].submission.as_deref(), Some("s1"));
    assert!(f[0].hazard.effect().contains("1 of them may have run"));
}

#[test]
fn an_unresolved_batch_at_the_end_of_the_path_is_at_the_leaf() {
    let f = findings(&[
        ("in", input("s1")),
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
    ]);
    assert_eq!(kinds(&f), ["unresolved_calls"]);
    assert!(matches!(
        f[0].hazard,
        Hazard::UnresolvedCalls {
            at_leaf: true,
            later_entries: 0,
            recorded: 0,
            ..
        }
    ));
}

#[test]
fn results_out_of_order_or_renamed_make_a_mismatched_batch() {
    let swapped = findings(&[
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c2", "put")])),
        ),
        ("r2", result("c2", "put")),
        ("r1", result("c1", "get")),
    ]);
    assert_eq!(kinds(&swapped), ["mismatched_batch"]);
    let renamed = findings(&[
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("r1", result("c1", "fetch")),
    ]);
    assert_eq!(kinds(&renamed), ["mismatched_batch"]);
    let Hazard::MismatchedBatch { why, .. } = &renamed[0].hazard else {
        unreachable!()
    };
    assert!(why.contains("fetch"), "{why}");
}

#[test]
fn a_result_after_a_user_turn_or_for_another_call_is_orphaned() {
    let f = findings(&[
        (
            "u",
            json!({"role": "user", "content": "hi", "timestamp": 1}),
        ),
        ("r0", result("zz", "get")),
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("r1", result("c1", "get")),
        ("r9", result("c9", "other")),
    ]);
    assert_eq!(
        kinds(&f),
        ["orphaned_result", "mismatched_batch", "orphaned_result"]
    );
    let Hazard::OrphanedResult { call_id, .. } = &f[2].hazard else {
        unreachable!()
    };
    assert_eq!(call_id.as_deref(), Some("c9"));
}

#[test]
fn a_repeated_call_id_is_found_in_one_batch_and_across_batches() {
    let same = findings(&[
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c1", "get")])),
        ),
        ("r1", result("c1", "get")),
        ("r2", result("c1", "get")),
    ]);
    assert_eq!(kinds(&same), ["duplicate_call_id"]);
    assert!(matches!(
        same[0].hazard,
        Hazard::DuplicateCallId {
            same_batch: true,
            ..
        }
    ));
    let across = findings(&[
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("r1", result("c1", "get")),
        ("a2", asst("toolUse", json!([call("c1", "get")]))),
        ("r2", result("c1", "get")),
    ]);
    assert_eq!(kinds(&across), ["duplicate_call_id"]);
    let Hazard::DuplicateCallId {
        assistants,
        same_batch,
        ..
    } = &across[0].hazard
    else {
        unreachable!()
    };
    assert!(!same_batch);
    assert_eq!(assistants.len(), 2);
    assert_eq!(assistants[1].entry, "a2");
}

#[test]
fn an_assistant_without_a_known_stop_reason_is_in_progress() {
    let mut m = asst("stop", text("half"));
    m.as_object_mut().unwrap().remove("stopReason");
    let f = findings(&[("a1", m)]);
    assert_eq!(kinds(&f), ["in_progress_assistant"]);
    let f = findings(&[("a1", asst("end_turn", text("x")))]);
    assert!(matches!(
        &f[0].hazard,
        Hazard::InProgressAssistant { stop_reason: Some(s), .. } if s == "end_turn"
    ));
}

#[test]
fn an_assistant_with_no_content_is_empty_but_thinking_or_text_is_not() {
    assert_eq!(
        kinds(&findings(&[("a1", asst("stop", json!([])))])),
        ["empty_assistant"]
    );
    assert_eq!(
        kinds(&findings(&[("a1", asst("stop", text("")))])),
        ["empty_assistant"]
    );
    let thinking = json!([{"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"}]);
    assert!(findings(&[("a1", asst("stop", thinking))]).is_empty());
    // An error turn is dropped by both steps: not sent, so not empty.
    assert!(findings(&[("a1", asst("error", json!([])))]).is_empty());
}

#[test]
fn a_continuation_after_a_kept_aborted_partial_drops_the_partial() {
    let f = findings(&[
        ("in", input("s1")),
        ("p", asst("aborted", text("The report concerns a"))),
        ("si", signal("stream_interrupted")),
        ("sc", signal("stream_continued")),
    ]);
    assert_eq!(kinds(&f), ["dropped_partial"]);
    let Hazard::DroppedPartial {
        partial_chars,
        continued,
        ..
    } = &f[0].hazard
    else {
        unreachable!()
    };
    assert_eq!(*partial_chars, "The report concerns a".len());
    assert_eq!(continued.entry, "sc");
    // Without the adjacent signals the runtime drops the partial itself: nothing is asked.
    let lone = findings(&[
        ("in", input("s1")),
        ("p", asst("aborted", text("The report"))),
        ("sc", signal("stream_continued")),
    ]);
    assert!(lone.is_empty(), "{lone:?}");
}

#[test]
fn damage_the_runtime_cannot_load_is_unreadable() {
    let mut h = chain(
        &[
            ("a1", asst("stop", text("x"))),
            ("a2", asst("stop", text("y"))),
        ],
        false,
    );
    h = History::new(h.entries.clone(), Some("nope".into()));
    let f = session_findings(&h, &[], &[], &mut |_| false);
    assert_eq!(kinds(&f), ["unreadable"]);
    let f = session_findings(
        &History::new(
            vec![Entry::parse(0, "bad", "{not json")],
            Some("bad".into()),
        ),
        &["session data is not JSON".into()],
        &[],
        &mut |_| false,
    );
    assert_eq!(kinds(&f), ["unreadable", "unreadable"]);
    let Hazard::Unreadable { what } = &f[1].hazard else {
        unreachable!()
    };
    assert!(what.contains("malformed"), "{what}");
}

#[test]
fn only_what_a_compaction_keeps_is_scanned() {
    let compaction =
        json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "a2", "tokensBefore": 1});
    let f = findings(&[
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("a2", asst("stop", text("kept"))),
        ("c", compaction.clone()),
        ("a3", asst("stop", json!([]))),
    ]);
    // a1's unresolved call is summarised away; a3 is after the compaction.
    assert_eq!(kinds(&f), ["empty_assistant"]);
    let plain = chain(&[("x", asst("stop", text("x")))], false);
    assert_eq!(context_segments(&plain.active_path()), [0..0, 0..1]);
}

#[test]
fn a_partial_batch_behind_one_aborted_assistant_is_trailing_but_not_at_the_leaf() {
    let f = findings(&[
        ("in", input("s1")),
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c2", "put")])),
        ),
        ("r1", result("c1", "get")),
        ("ab", asst("aborted", text(""))),
    ]);
    assert_eq!(kinds(&f), ["unresolved_calls"]);
    assert!(matches!(
        f[0].hazard,
        Hazard::UnresolvedCalls {
            at_leaf: false,
            trailing: true,
            later_entries: 1,
            ..
        }
    ));
    let later = findings(&[
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("a2", asst("stop", text("x"))),
    ]);
    assert!(matches!(
        later[0].hazard,
        Hazard::UnresolvedCalls {
            at_leaf: false,
            trailing: false,
            ..
        }
    ));
}

#[test]
fn what_follows_an_unresolved_batch_is_named_when_no_model_turn_does() {
    // After a deadline failure: an aborted assistant, then the runtime's failure signal.
    let f = findings(&[
        ("in", input("s1")),
        (
            "a1",
            asst("toolUse", json!([call("c1", "get"), call("c2", "put")])),
        ),
        ("r1", result("c1", "get")),
        ("ab", asst("aborted", text(""))),
        ("si", signal("submission_interrupted")),
    ]);
    let Hazard::UnresolvedCalls {
        later_entries,
        later_turns,
        followed_by,
        ..
    } = &f[0].hazard
    else {
        unreachable!("{f:#?}")
    };
    assert_eq!((*later_entries, *later_turns), (2, 0));
    assert_eq!(
        followed_by,
        &[
            "an aborted assistant",
            "its failure signal (submission_interrupted)"
        ]
    );
    // A model turn after it: the turns since were built without it, nothing is named.
    let f = findings(&[
        ("in", input("s1")),
        ("a1", asst("toolUse", json!([call("c1", "get")]))),
        ("si", signal("submission_interrupted")),
        ("in2", input("s2")),
        ("a2", asst("stop", text("answered without it"))),
    ]);
    assert!(
        matches!(
            &f[0].hazard,
            Hazard::UnresolvedCalls { later_entries: 3, later_turns: 1, followed_by, .. }
                if followed_by.is_empty()
        ),
        "{f:#?}"
    );
}
