//! Properties of the whole view over arbitrary paths (users, signals, assistants with any stop
//! reason and calls, results for any call, compactions, unknown entries): nothing of the path
//! vanishes unmarked, and the request has the shape the runtime and the library guarantee.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

#[derive(Debug, Clone)]
enum Shape {
    User,
    Signal(&'static str),
    Assistant(&'static str, Vec<u8>),
    Result(u8),
    Compaction(Option<u8>),
    Other,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::User),
        prop_oneof![
            Just("stream_interrupted"),
            Just("stream_continued"),
            Just("dispatch_input")
        ]
        .prop_map(Shape::Signal),
        (
            prop_oneof![
                Just("stop"),
                Just("toolUse"),
                Just("error"),
                Just("aborted"),
                Just("length")
            ],
            prop::collection::vec(0u8..4, 0..3)
        )
            .prop_map(|(s, c)| Shape::Assistant(s, c)),
        (0u8..4).prop_map(Shape::Result),
        prop::option::of(0u8..20).prop_map(Shape::Compaction),
        Just(Shape::Other),
    ]
}

fn path_of(shapes: &[Shape]) -> Vec<PathItem> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let message = |v: Value| ItemBody::Message(v);
            let body = match s {
                Shape::User => message(json!({"role": "user", "content": "u"})),
                Shape::Signal(t) => message(json!({"role": "signal", "type": t, "content": "s"})),
                Shape::Assistant(stop, calls) => {
                    let content: Vec<Value> = calls
                        .iter()
                        .map(|c| json!({"type": "toolCall", "id": format!("c{c}"), "name": "t"}))
                        .collect();
                    message(json!({"role": "assistant", "stopReason": stop, "content": content}))
                }
                Shape::Result(c) => message(
                    json!({"role": "toolResult", "toolCallId": format!("c{c}"), "toolName": "t"}),
                ),
                Shape::Compaction(kept) => ItemBody::Compaction {
                    summary: "sum".into(),
                    first_kept_entry_id: kept.map(|k| format!("e{k}")),
                },
                Shape::Other => ItemBody::Other {
                    label: "custom (unknown type)".into(),
                },
            };
            PathItem {
                id: format!("e{i}"),
                written: None,
                body,
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn every_entry_is_sent_or_left_out_and_the_request_is_well_formed(
        shapes in prop::collection::vec(shape(), 0..24)
    ) {
        let path = path_of(&shapes);
        let r = next_request(path.clone(), vec![], Turn::NextInput, None);
        // Each stored entry once: in the request (by its entry id) or left out, never both. A
        // compaction entry is in the request as its summary when it is the latest.
        for p in &path {
            let sent = r.messages.iter().filter(|m| matches!(&m.source,
                Source::Stored { entry_id } | Source::Signal { entry_id } | Source::Summary { entry_id }
                if *entry_id == p.id)).count();
            let left = r.left_out.iter().filter(|l| l.entry_id == p.id).count();
            prop_assert_eq!(sent + left, 1, "entry {} sent {} times, left out {} times", p.id, sent, left);
        }
        // Only the three provider roles; no assistant that ended in error or aborted.
        for m in &r.messages {
            let role = context::role(&m.message);
            prop_assert!(matches!(role, "user" | "assistant" | "toolResult"), "{}", role);
            if role == "assistant" {
                let stop = m.message["stopReason"].as_str().unwrap_or("");
                prop_assert!(stop != "error" && stop != "aborted");
            }
        }
        // Every assistant with calls is followed by exactly one result per call, in call order.
        for (i, m) in r.messages.iter().enumerate() {
            let calls = tool_calls(&m.message);
            if context::role(&m.message) != "assistant" || calls.is_empty() {
                continue;
            }
            for (k, (id, _)) in calls.iter().enumerate() {
                let next = r.messages.get(i + 1 + k).map(|n| &n.message);
                prop_assert_eq!(next.map(context::role), Some("toolResult"));
                prop_assert_eq!(next.and_then(|n| n.get("toolCallId")), Some(id));
            }
        }
        // The same input gives the same view.
        prop_assert_eq!(&r, &next_request(path, vec![], Turn::NextInput, None));
    }
}
