//! The three steps together, on the shapes the runtime's crash fixtures leave.

use serde_json::{json, Value};

use super::path::interrupted_result;
use super::*;

fn item(id: &str, v: Value) -> PathItem {
    PathItem {
        id: id.into(),
        written: None,
        body: ItemBody::Message(v),
    }
}

fn user(id: &str) -> PathItem {
    item(
        id,
        json!({"role": "user", "content": [{"type": "text", "text": id}]}),
    )
}

fn assistant(id: &str, stop: &str, calls: &[(&str, &str)]) -> PathItem {
    let mut content: Vec<Value> = vec![json!({"type": "text", "text": "partial answer"})];
    content.extend(
        calls
            .iter()
            .map(|(i, n)| json!({"type": "toolCall", "id": i, "name": n, "arguments": {}})),
    );
    item(
        id,
        json!({"role": "assistant", "provider": "harness", "api": "harness-scripted-api", "model": "scripted-1", "stopReason": stop, "content": content}),
    )
}

fn result(id: &str, call: &str, name: &str) -> PathItem {
    item(
        id,
        json!({"role": "toolResult", "toolCallId": call, "toolName": name, "content": [{"type": "text", "text": "ok"}]}),
    )
}

fn target() -> TargetModel {
    TargetModel {
        provider: "harness".into(),
        api: "harness-scripted-api".into(),
        id: "scripted-1".into(),
        vision: Some(false),
    }
}

fn shape(r: &NextRequest) -> Vec<String> {
    r.messages
        .iter()
        .map(|m| {
            let role = context::role(&m.message).to_string();
            let ids: Vec<String> = match role.as_str() {
                "assistant" => tool_calls(&m.message)
                    .iter()
                    .map(|(i, _)| js_text(i))
                    .collect(),
                "toolResult" => vec![js_text(&m.message["toolCallId"])],
                _ => vec![],
            };
            if ids.is_empty() {
                role
            } else {
                format!("{role}:{}", ids.join(","))
            }
        })
        .collect()
}

fn kinds(r: &NextRequest) -> Vec<HazardKind> {
    r.hazards.iter().map(|h| h.kind).collect()
}

#[test]
fn a_recovered_stream_is_continued_without_the_partial_the_runtime_kept() {
    // mid-stream / stream-abort: input, then recovery writes the partial and both signals.
    let r = next_request(
        vec![user("in")],
        vec![RecoveryStep::RecoverStream {
            stream_key: "s:t:a".into(),
            partial: Some(
                json!({"role": "assistant", "content": [{"type": "text", "text": "half"}], "stopReason": "aborted"}),
            ),
        }],
        Turn::Continue,
        Some(target()),
    );
    assert_eq!(shape(&r), ["user", "user", "user"]);
    assert_eq!(r.recovery, [("stream_recovery", 3)]);
    assert_eq!(
        r.messages[2].source,
        Source::Recovery {
            written: Written::StreamSignal
        }
    );
    assert!(r.messages[2].message["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("<signal type=\"stream_continued\" streamKey=\"s:t:a\">"));
    assert_eq!(kinds(&r), [HazardKind::ContinuationWithoutPartial]);
    assert!(
        r.hazards[0].entry_ids.is_empty(),
        "the partial has no id until written"
    );
    assert_eq!(r.left_out[0].written, Some(Written::StreamPartial));
    assert_eq!(r.left_out[0].by, "library");
}

#[test]
fn a_stored_partial_before_its_signals_is_named_by_its_entry() {
    let r = next_request(
        vec![
            user("in"),
            assistant("p", "aborted", &[]),
            item(
                "s1",
                json!({"role": "signal", "type": "stream_interrupted", "content": "x"}),
            ),
            item(
                "s2",
                json!({"role": "signal", "type": "stream_continued", "content": "y"}),
            ),
        ],
        vec![],
        Turn::Continue,
        Some(target()),
    );
    assert_eq!(shape(&r), ["user", "user", "user"]);
    assert_eq!(r.hazards[0].entry_ids, ["p"]);
}

#[test]
fn a_repaired_partial_batch_is_sent_whole_with_its_interrupted_results() {
    // tool-results-partial: one of three calls answered; recovery completes the batch.
    let stored = vec![
        user("in"),
        assistant("a", "toolUse", &[("c0", "f"), ("c1", "g"), ("c2", "h")]),
        result("r0", "c0", "f"),
    ];
    let copied = stored[2].message().unwrap().clone();
    let r = next_request(
        stored,
        vec![RecoveryStep::RepairBatch {
            assistant_id: "a".into(),
            results: vec![
                (copied, Some("r0".into())),
                (interrupted_result("c1", "g"), None),
                (interrupted_result("c2", "h"), None),
            ],
        }],
        Turn::Continue,
        Some(target()),
    );
    assert_eq!(
        shape(&r),
        [
            "user",
            "assistant:c0,c1,c2",
            "toolResult:c0",
            "toolResult:c1",
            "toolResult:c2"
        ]
    );
    assert!(r.left_out.is_empty(), "{:?}", r.left_out);
    assert_eq!(kinds(&r), [HazardKind::InterruptedResults]);
    assert_eq!(
        r.hazards[0].calls,
        [
            ("c1".to_string(), "g".to_string()),
            ("c2".to_string(), "h".to_string())
        ]
    );
}

#[test]
fn an_unrepaired_incomplete_batch_is_left_out_and_its_calls_are_never_seen() {
    // A failed submission's batch (rules 2 and 3): nothing repairs it; the next input starts here.
    let r = next_request(
        vec![
            user("in"),
            assistant("a", "toolUse", &[("c0", "f"), ("c1", "g")]),
            result("r0", "c0", "f"),
        ],
        vec![],
        Turn::NoCall {
            reason: "failed".into(),
        },
        Some(target()),
    );
    assert_eq!(shape(&r), ["user"]);
    assert_eq!(kinds(&r), [HazardKind::UnseenCalls]);
    assert!(r.hazards[0]
        .consequence
        .contains("1 of 2 recorded a result"));
    assert_eq!(r.hazards[0].entry_ids, ["a"]);
}

#[test]
fn ending_with_an_assistant_is_refused_only_when_the_runtime_continues() {
    let r = next_request(
        vec![
            user("in"),
            assistant("a", "toolUse", &[("c0", "f")]),
            result("r0", "c0", "f"),
            assistant("b", "stop", &[]),
        ],
        vec![],
        Turn::NextInput,
        Some(target()),
    );
    assert_eq!(
        shape(&r),
        ["user", "assistant:c0", "toolResult:c0", "assistant"]
    );
    // NextInput: ending with an assistant is fine, the input follows it.
    assert!(r.hazards.is_empty(), "{:?}", r.hazards);
    let cont = next_request(
        vec![user("in"), assistant("b", "stop", &[])],
        vec![],
        Turn::Continue,
        Some(target()),
    );
    assert_eq!(kinds(&cont), [HazardKind::EndsWithAssistant]);
    let empty = next_request(vec![], vec![], Turn::Continue, None);
    assert_eq!(kinds(&empty), [HazardKind::Empty]);
}

#[test]
fn repeated_call_ids_and_results_without_their_call_are_named() {
    let r = next_request(
        vec![
            user("in"),
            assistant("a", "toolUse", &[("c0", "f")]),
            result("r0", "c0", "f"),
            assistant("b", "toolUse", &[("c0", "f")]),
            result("r1", "c0", "f"),
        ],
        vec![],
        Turn::Continue,
        Some(target()),
    );
    assert_eq!(kinds(&r), [HazardKind::DuplicateCallId]);
    assert_eq!(r.hazards[0].entry_ids, ["b"]);
}

#[test]
fn recovery_written_input_and_advisory_are_sent_as_user_messages() {
    let input = path::input_message(
        "dispatch",
        &json!({"dispatchId": "d", "agent": "w", "id": "i", "input": {"task": "t"}, "acceptedAt": "x"}),
    )
    .unwrap();
    let r = next_request(
        vec![],
        vec![RecoveryStep::Input { message: input }],
        Turn::Continue,
        None,
    );
    assert_eq!(shape(&r), ["user"]);
    assert!(r.messages[0].message["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("<dispatch type=\"dispatch_input\" agent=\"w\" id=\"i\" session=\"default\" dispatchId=\"d\""));
    let adv = path::advisory_signal("sub", "dispatch", "interrupted", "Submission failed.");
    let r = next_request(
        vec![user("in")],
        vec![RecoveryStep::Advisory { signal: adv }],
        Turn::NoCall {
            reason: "failed".into(),
        },
        None,
    );
    assert_eq!(
        r.messages[1].source,
        Source::Recovery {
            written: Written::Advisory
        }
    );
    assert_eq!(r.recovery, [("advisory", 1)]);
}

#[test]
fn images_with_unknown_vision_and_foreign_calls_through_an_unported_provider_are_named() {
    let img = json!({"role": "user", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]});
    let mut t = target();
    t.vision = None;
    t.api = "mistral-conversations".into();
    let r = next_request(
        vec![
            item("u", img),
            assistant("a", "toolUse", &[("c|1", "f")]),
            result("r", "c|1", "f"),
        ],
        vec![],
        Turn::Continue,
        Some(t),
    );
    assert_eq!(
        kinds(&r),
        [HazardKind::ImagesVisionUnknown, HazardKind::IdsMayBeRenamed]
    );
}
