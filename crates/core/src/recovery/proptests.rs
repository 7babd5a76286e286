//! Property tests: the classifier, the detector and the planner never panic on arbitrary entry
//! sequences (malformed JSON, unknown types and roles, odd field types included) and are
//! deterministic.

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::journal::entry::Entry;
use crate::journal::history::History;
use crate::recovery::classify::classify_submission_state;
use crate::recovery::reconciler::{inspect_session, plan_recovery};

use crate::journal::submission_rows::{JournalRow, SubmissionRow};

fn any_text() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        prop_oneof![
            Just("429 Too Many Requests".to_string()),
            Just("prompt is too long".to_string()),
            Just("rate limit: too many tokens".to_string()),
            Just("".to_string()),
            "\\PC{0,12}",
        ]
        .prop_map(Value::from),
    ]
}

fn stop_reason() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("stop")),
        Just(json!("length")),
        Just(json!("toolUse")),
        Just(json!("error")),
        Just(json!("aborted")),
        any_text(),
    ]
}

fn call_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("a")),
        Just(json!("b")),
        Just(json!("c")),
        any_text()
    ]
}

fn message() -> impl Strategy<Value = Value> {
    let usage = (0u32..300_000, 0u32..10, 0u32..100_000)
        .prop_map(|(i, o, c)| json!({"input": i, "output": o, "cacheRead": c}));
    prop_oneof![
        (stop_reason(), any_text(), prop::collection::vec(call_id(), 0..4), prop::option::of(usage)).prop_map(
            |(stop, err, calls, usage)| {
                let content: Vec<Value> = calls
                    .into_iter()
                    .map(|id| json!({"type":"toolCall","id":id,"name":"t","arguments":{}}))
                    .collect();
                let mut m = json!({"role":"assistant","content":content,"stopReason":stop,"errorMessage":err});
                if let Some(u) = usage {
                    m["usage"] = u;
                }
                m
            }
        ),
        call_id().prop_map(|id| json!({"role":"toolResult","toolCallId":id,"toolName":"t","content":[],"isError":false})),
        prop_oneof![Just("stream_continued"), Just("stream_interrupted"), Just("dispatch_input"), Just("x")]
            .prop_map(|t| json!({"role":"signal","type":t,"content":""})),
        Just(json!({"role":"user","content":"hi"})),
        any_text().prop_map(|r| json!({"role": r})),
        Just(Value::Null),
        Just(json!({"role":"assistant","content":"not an array","stopReason":"toolUse"})),
    ]
}

/// Raw entry text: well-formed entries of every kind, unknown types, and garbage.
fn raw_entry() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => message().prop_map(|m| json!({"type":"message","message":m}).to_string()),
        1 => Just(json!({"type":"compaction","summary":"s","firstKeptEntryId":"x","tokensBefore":1}).to_string()),
        1 => Just(json!({"type":"branch_summary"}).to_string()),
        1 => "\\PC{0,20}",
        1 => Just("[1,2,3]".to_string()),
    ]
}

/// Chain raw entries into a session: ids e0.., each parented to the previous, input first.
fn chain(raws: &[String]) -> Vec<Entry> {
    let mut out = vec![Entry::parse(
        0,
        "input",
        r#"{"type":"message","id":"input","parentId":null,"message":{"role":"signal","type":"dispatch_input"},"dispatch":{"dispatchId":"sub"}}"#,
    )];
    for (i, raw) in raws.iter().enumerate() {
        let id = format!("e{i}");
        let parent = if i == 0 {
            "input".to_string()
        } else {
            format!("e{}", i - 1)
        };
        let text = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(mut o)) => {
                o.insert("id".into(), id.clone().into());
                o.insert("parentId".into(), parent.into());
                Value::Object(o).to_string()
            }
            _ => raw.clone(),
        };
        out.push(Entry::parse(i as i64 + 1, &id, &text));
    }
    out
}

fn row(input_applied: bool, attempts: i64) -> SubmissionRow {
    SubmissionRow {
        sequence: 1,
        submission_id: "sub".into(),
        session_key: r#"agent-session:["i","default","default"]"#.into(),
        kind: "dispatch".into(),
        payload: r#"{"dispatchId":"sub","agent":"a","id":"i","input":{},"acceptedAt":"2026-01-01T00:00:00.000Z","kind":"dispatch","submissionId":"sub"}"#.into(),
        status: "running".into(),
        accepted_at: crate::journal::time::ms_from_iso("2026-01-01T00:00:00.000Z"),
        attempt_id: Some("a1".into()),
        input_applied_at: input_applied.then_some(1),
        recovery_requested_at: None,
        started_at: Some(1),
        settled_at: None,
        error: None,
        attempt_count: attempts,
        max_retry: 10,
        timeout_at: 0,
        owner_id: None,
        lease_expires_at: 5,
        terminal_key: None,
        terminal_event: None,
        terminal_offset: None,
        stored_as: None,
        image_chunks: Vec::new(),
    }
}

fn journal(phase: usize, tool_request: Option<String>) -> JournalRow {
    JournalRow {
        submission_id: "sub".into(),
        session_key: String::new(),
        kind: "dispatch".into(),
        attempt_id: "a1".into(),
        operation_id: "op".into(),
        turn_id: "t".into(),
        phase: [
            "before_provider",
            "provider_started",
            "tool_request_recorded",
            "committed",
        ][phase % 4]
            .into(),
        revision: 1,
        created_at: 0,
        updated_at: 0,
        checkpoint_leaf_id: None,
        tool_request_json: tool_request,
        stream_key: Some("sk".into()),
        stream_consumed_at: None,
        committed: phase % 4 == 3,
        committed_leaf_id: None,
        stored_as: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn classify_never_panics_and_is_deterministic(raws in prop::collection::vec(raw_entry(), 0..14), cw in prop_oneof![Just(0u64), Just(200_000u64)]) {
        let entries = chain(&raws);
        let refs: Vec<&Entry> = entries[1..].iter().collect();
        let a = classify_submission_state(Some(&refs), cw);
        let b = classify_submission_state(Some(&refs), cw);
        prop_assert_eq!(&a, &b);
        // The coarse mapping is total.
        let _ = a.state.inspection();
    }

    #[test]
    fn planner_never_panics_and_is_deterministic(
        raws in prop::collection::vec(raw_entry(), 0..12),
        leaf in 0usize..14,
        input_applied in any::<bool>(),
        attempts in 0i64..12,
        phase in prop::option::of(0usize..4),
        tool_request in prop::option::of(prop_oneof![
            Just(r#"{"toolCalls":[{"id":"a","name":"t"},{"id":"b","name":"t"}]}"#.to_string()),
            "\\PC{0,10}",
        ]),
        chunks in prop::collection::vec("\\PC{0,30}", 0..3),
    ) {
        let entries = chain(&raws);
        // Any leaf, so the input may end up off the active path.
        let leaf_id = entries.get(leaf).map(|e| e.id.to_string());
        let history = History::new(entries, leaf_id);
        let sub = row(input_applied, attempts);
        let j = phase.map(|p| journal(p, tool_request.clone()));
        let si = inspect_session(&sub, j.as_ref(), Some(&history), &chunks, &[], 200_000);
        let p1 = plan_recovery(&sub, j.as_ref(), &si, 10);
        let p2 = plan_recovery(&sub, j.as_ref(), &inspect_session(&sub, j.as_ref(), Some(&history), &chunks, &[], 200_000), 10);
        prop_assert_eq!(&p1, &p2);
        // An expired running row always gets a rule, unless its session is unreadable.
        let unreadable = matches!(p1.disposition, crate::recovery::reconciler::Disposition::Unreadable { .. });
        prop_assert!(p1.rule.is_some() != unreadable, "{:?}", p1);
        prop_assert_eq!(unreadable, !si.load_blockers.is_empty());
    }

    #[test]
    fn compact_entries_classify_and_plan_like_full_ones(
        raws in prop::collection::vec(raw_entry(), 0..12),
        leaf in 0usize..14,
        phase in prop::option::of(0usize..4),
        cw in prop_oneof![Just(0u64), Just(200_000u64)],
    ) {
        let full = chain(&raws);
        let compact: Vec<Entry> = full
            .iter()
            .map(|e| crate::journal::compact::parse_compact(e.position, &e.id, e.raw.as_bytes()))
            .collect();
        for (c, f) in compact.iter().zip(&full) {
            prop_assert_eq!((&c.id, &c.parent_id, &c.timestamp), (&f.id, &f.parent_id, &f.timestamp));
            prop_assert_eq!(c.kind_label(), f.kind_label());
            prop_assert_eq!(c.stored_len as usize, f.raw.len());
        }
        let leaf_id = full.get(leaf).map(|e| e.id.to_string());
        let (hf, hc) = (History::new(full, leaf_id.clone()), History::new(compact, leaf_id));
        let sub = row(true, 1);
        let tr = r#"{"toolCalls":[{"id":"a","name":"t"},{"id":"b","name":"t"}]}"#.to_string();
        let j = phase.map(|p| journal(p, Some(tr.clone())));
        let sf = inspect_session(&sub, j.as_ref(), Some(&hf), &[], &[], cw);
        let sc = inspect_session(&sub, j.as_ref(), Some(&hc), &[], &[], cw);
        prop_assert_eq!(&sf, &sc);
        prop_assert_eq!(plan_recovery(&sub, j.as_ref(), &sf, 10), plan_recovery(&sub, j.as_ref(), &sc, 10));
    }
}
