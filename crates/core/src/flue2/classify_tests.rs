//! Tests of `classify`: histories on which the three 2.x variants answer differently, and the
//! runtime's own answers on them.

use super::*;

#[test]
fn the_input_entry_id_is_the_runtimes() {
    // The input entry of the abort-intent fixture, as the runtime named it.
    assert_eq!(
        submission_entry_id("dispatch", "sub_01M92S8M9Q1REQKT9E8SAMN7C2"),
        "entry_dispatch_c3ViXzAxTTkyUzhNOVExUkVRS1Q5RThTQU1ON0My"
    );
}

#[test]
fn session_keys_parse_as_the_runtime_parses_them() {
    let k = SessionKey::parse(r#"agent-session:["worker","s1","default","default"]"#).unwrap();
    assert_eq!(k.stream_path(), "agents/worker/s1");
    assert_eq!(
        (k.harness.as_str(), k.session.as_str()),
        ("default", "default")
    );
    assert_eq!(SessionKey::parse(r#"agent-session:["a","b","c"]"#), None);
    assert_eq!(SessionKey::parse(r#"agent-session:["a","b","c",1]"#), None);
    assert_eq!(SessionKey::parse(r#"session:["a","b","c","d"]"#), None);
}

#[test]
fn retryable_text_follows_each_variant() {
    for v in Flue2Variant::ALL {
        assert!(is_retryable_error_text("x (retryable_interruption)", v));
        assert!(is_retryable_error_text("Provider finish_reason: error", v));
        assert!(is_retryable_error_text(
            "provider finish_reason:  ERROR.",
            v
        ));
        assert!(!is_retryable_error_text(
            "provider finish_reason: error-x",
            v
        ));
        assert!(!is_retryable_error_text(
            "provider finish_reason: errors",
            v
        ));
        assert!(!is_retryable_error_text("invalid_request_error", v));
        assert!(is_retryable_error_text("Connection reset by peer", v));
    }
    // 2.0.5 added `error` to `connection.?(?:reset|refused|lost)`.
    assert!(!is_retryable_error_text(
        "connection error",
        Flue2Variant::V2_0_0
    ));
    assert!(is_retryable_error_text(
        "connection error",
        Flue2Variant::V2_0_5
    ));
    assert!(is_retryable_error_text(
        "Connection_Error",
        Flue2Variant::V2_0_8
    ));
}

#[test]
fn releases_map_to_their_variant() {
    assert_eq!(
        Flue2Variant::for_release("2.0.0"),
        Some(Flue2Variant::V2_0_0)
    );
    assert_eq!(
        Flue2Variant::for_release("2.0.3"),
        Some(Flue2Variant::V2_0_0)
    );
    assert_eq!(
        Flue2Variant::for_release("2.0.5"),
        Some(Flue2Variant::V2_0_5)
    );
    assert_eq!(
        Flue2Variant::for_release("2.0.8"),
        Some(Flue2Variant::V2_0_8)
    );
    assert_eq!(
        Flue2Variant::for_release("2.1.0"),
        Some(Flue2Variant::LATEST)
    );
    assert_eq!(Flue2Variant::for_release("2.0.2"), None);
    assert_eq!(Flue2Variant::for_release("1.0.0-beta.7"), None);
}

use super::super::records::{ContentBlock, Parent};

const OWN: &str = "sub_own";

fn entry(id: &str, body: EntryBody) -> Entry {
    Entry {
        id: id.into(),
        parent_id: Parent::Undefined,
        submission_id: Some(OWN.into()),
        body,
    }
}

fn asst(id: &str, stop: &str, error: Option<&str>, calls: &[&str], usage: Value) -> Entry {
    entry(
        id,
        EntryBody::Assistant {
            stop_reason: stop.into(),
            error_message: error.map(Into::into),
            text: String::new(),
            tool_calls: calls
                .iter()
                .map(|c| ToolCallRef {
                    id: (*c).into(),
                    name: "write_note".into(),
                    batch_seq: None,
                })
                .collect(),
            usage: Some(usage.into()),
        },
    )
}

fn usage(input: u64, output: u64) -> Value {
    json!({"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output})
}

fn result(id: &str, call: &str, terminate: bool) -> Entry {
    entry(
        id,
        EntryBody::ToolResult {
            tool_call_id: call.into(),
            tool_name: "write_note".into(),
            is_error: false,
            terminate,
        },
    )
}

fn signal(id: &str, t: &str) -> Entry {
    entry(
        id,
        EntryBody::Signal {
            signal_type: t.into(),
        },
    )
}

fn classify(entries: &[Entry], cw: u64, v: Flue2Variant) -> Flue2Classification {
    let refs: Vec<&Entry> = entries.iter().collect();
    classify_submission_state(Some(&refs), Some(OWN), cw, v).unwrap()
}

/// The answer of each variant, oldest first.
fn answers(entries: &[Entry], cw: u64) -> [Value; 3] {
    Flue2Variant::ALL.map(|v| classify(entries, cw, v).to_runtime_json())
}

#[test]
fn a_stop_assistant_with_an_unanswered_call_is_a_tool_batch_only_from_2_0_8() {
    let h = [asst("a1", "stop", None, &["c1"], usage(10, 5))];
    let [old, mid, new] = answers(&h, 200_000);
    assert_eq!(
        old,
        json!({"kind": "completed", "overflow": false, "assistantStopReason": "stop"})
    );
    assert_eq!(mid, old);
    assert_eq!(
        new,
        json!({"kind": "tool_use_unresolved", "assistantStopReason": "stop"})
    );
    assert_eq!(classify(&h, 0, Flue2Variant::V2_0_0).explanation.step, 4);
    assert_eq!(classify(&h, 0, Flue2Variant::V2_0_8).explanation.step, 4);
    // Without results, the repair sees a partial batch only from 2.0.8.
    assert!(classify(&h, 0, Flue2Variant::V2_0_5)
        .trailing_partial_batch
        .is_none());
    let batch = classify(&h, 0, Flue2Variant::V2_0_8)
        .trailing_partial_batch
        .unwrap();
    assert_eq!((batch.entry_id.as_str(), batch.tool_calls.len()), ("a1", 1));
}

#[test]
fn a_length_batch_half_answered_resumes_its_results_only_from_2_0_8() {
    let h = [
        asst("a1", "length", None, &["c1", "c2"], usage(10, 5)),
        result("r1", "c1", false),
    ];
    let [old, _, new] = answers(&h, 200_000);
    assert_eq!(old["kind"], "completed");
    assert_eq!(
        new,
        json!({"kind": "resume", "mode": "tool_results_partial", "consecutiveRetryableErrors": 0, "assistantStopReason": "length"})
    );
    let batch = classify(&h, 0, Flue2Variant::V2_0_8)
        .trailing_partial_batch
        .unwrap();
    let missing: Vec<&str> = batch.missing_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(missing, ["c2"]);
}

#[test]
fn a_terminating_stop_batch_is_a_terminal_tool_batch_only_from_2_0_8() {
    let h = [
        asst("a1", "stop", None, &["c1", "c2"], usage(10, 5)),
        result("r2", "c2", true),
        result("r1", "c1", true),
    ];
    let [old, _, new] = answers(&h, 200_000);
    assert_eq!(
        old,
        json!({"kind": "completed", "overflow": false, "assistantStopReason": "stop"})
    );
    assert_eq!(
        new,
        json!({"kind": "completed", "overflow": false, "terminalToolBatch": true, "assistantStopReason": "stop"})
    );
    // One result without the flag: every variant resumes a toolUse batch the same way.
    let h = [
        asst("a1", "toolUse", None, &["c1", "c2"], usage(10, 5)),
        result("r2", "c2", true),
        result("r1", "c1", false),
    ];
    let all = answers(&h, 200_000);
    assert_eq!(
        all[0],
        json!({"kind": "resume", "mode": "tool_results", "consecutiveRetryableErrors": 0, "assistantStopReason": "toolUse"})
    );
    assert!(all.iter().all(|a| *a == all[0]));
    // A toolUse batch where all calls terminate: completed in every variant.
    let h = [
        asst("a1", "toolUse", None, &["c1"], usage(10, 5)),
        result("r1", "c1", true),
    ];
    for v in Flue2Variant::ALL {
        let c = classify(&h, 0, v);
        assert!(c.terminal_tool_batch, "{v:?}");
        assert_eq!(
            c.explanation.step,
            if v == Flue2Variant::V2_0_8 { 4 } else { 8 }
        );
    }
}

#[test]
fn an_aborted_turn_after_a_partial_stop_batch_differs_by_variant() {
    let h = [
        asst("a1", "stop", None, &["c1", "c2"], usage(10, 5)),
        result("r1", "c1", false),
        asst("a2", "aborted", None, &[], usage(0, 0)),
    ];
    let [old, mid, new] = answers(&h, 200_000);
    assert_eq!(old["mode"], "aborted_partial");
    assert_eq!(mid, old);
    assert_eq!(new["mode"], "tool_results_partial");
    assert_eq!(new["assistantStopReason"], "aborted");
    // The adjacent recovery pair wins over the batch in every variant.
    let mut h = h.to_vec();
    h.push(signal("s1", "stream_interrupted"));
    h.push(signal("s2", "stream_continued"));
    for a in answers(&h, 0) {
        assert_eq!(a["mode"], "stream_continuation");
    }
}

#[test]
fn connection_errors_retry_from_2_0_5() {
    let h = [
        asst("a1", "error", Some("Connection error."), &[], usage(0, 0)),
        asst("a2", "error", Some("Connection error."), &[], usage(0, 0)),
    ];
    let [old, mid, new] = answers(&h, 200_000);
    assert_eq!(
        old,
        json!({"kind": "terminal_error", "reason": "Connection error."})
    );
    assert_eq!(
        mid,
        json!({"kind": "resume", "mode": "transient_retry", "consecutiveRetryableErrors": 2, "assistantStopReason": "error"})
    );
    assert_eq!(new, mid);
}

#[test]
fn overflow_follows_pi_ai_0_83() {
    // A pattern pi-ai 0.83.0 added after beta.7's.
    let h = [asst(
        "a1",
        "error",
        Some("prompt has 1,234 tokens, but the configured context size is 1,000 tokens"),
        &[],
        usage(0, 0),
    )];
    for a in answers(&h, 0) {
        assert_eq!(a["mode"], "overflow");
    }
    // Rate limiting is not an overflow, and retries.
    let h = [asst(
        "a1",
        "error",
        Some("429 rate limit: too many tokens"),
        &[],
        usage(0, 0),
    )];
    assert_eq!(answers(&h, 0)[2]["mode"], "transient_retry");
    // Silent overflow: a stop whose input exceeds the window, completed with overflow.
    let h = [asst("a1", "stop", None, &[], usage(200_001, 5))];
    assert_eq!(answers(&h, 200_000)[2]["overflow"], true);
    assert_eq!(answers(&h, 0)[2]["overflow"], false);
    // Length truncation wants `output === 0`: the number, not null.
    let mut u = usage(199_000, 0);
    let h = [asst("a1", "length", None, &[], u.clone())];
    assert_eq!(answers(&h, 200_000)[2]["overflow"], true);
    u["output"] = Value::Null;
    let h = [asst("a1", "length", None, &[], u)];
    assert_eq!(answers(&h, 200_000)[2]["overflow"], false);
}

#[test]
fn a_completion_without_usage_throws_under_a_context_window() {
    let mut a = asst("a1", "stop", None, &[], Value::Null);
    let refs = [&a];
    assert_eq!(
        classify_submission_state(Some(&refs), Some(OWN), 200_000, Flue2Variant::V2_0_8),
        Err(ClassifyError::Type(
            "Cannot read properties of null (reading 'input')".into()
        ))
    );
    assert!(classify_submission_state(Some(&refs), Some(OWN), 0, Flue2Variant::V2_0_8).is_ok());
    if let EntryBody::Assistant {
        usage, stop_reason, ..
    } = &mut a.body
    {
        *usage = None;
        *stop_reason = "length".into();
    }
    let refs = [&a];
    assert_eq!(
        classify_submission_state(Some(&refs), Some(OWN), 1, Flue2Variant::V2_0_0),
        Err(ClassifyError::Type(
            "Cannot read properties of undefined (reading 'output')".into()
        ))
    );
}

#[test]
fn joined_deliveries_do_not_advance_past_the_input() {
    let mut joined = entry(
        "u1",
        EntryBody::User {
            content: vec![ContentBlock::Text("hi".into())],
        },
    );
    joined.submission_id = Some("sub_other".into());
    let h = [joined.clone()];
    assert_eq!(answers(&h, 0)[2]["mode"], "input_only");
    joined.submission_id = None;
    let h = [joined];
    assert_eq!(answers(&h, 0)[2], json!({"kind": "advanced_past_input"}));
}
