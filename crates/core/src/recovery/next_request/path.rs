//! The active path the runtime's next turn starts from: the stored entries, then what the
//! runtime's recovery writes before the turn (a repaired tool batch, a recovered stream, an
//! interruption advisory, the input it appends at claim), as `SessionHistory` would hold them.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::journal::entry::{Entry, EntryBody};
use crate::recovery::runtime_text::{
    INTERRUPTED_TEXT, STREAM_CONTINUED_TEXT, STREAM_INTERRUPTED_TEXT,
};

/// Who wrote an entry of the path that is not stored yet: the runtime's recovery, before the
/// next turn's model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "write", rename_all = "snake_case")]
pub enum Written {
    /// `appendRepairedToolResultBatch`: one result of the complete batch; `copied_from` is the
    /// stored result it re-appends (first write wins), `None` for a synthetic `interrupted` one.
    ToolRepair {
        #[serde(rename = "copiedFrom")]
        copied_from: Option<String>,
    },
    /// `recoverInterruptedStream`: the aborted partial rebuilt from the stream chunks.
    StreamPartial,
    /// `recoverInterruptedStream`: `stream_interrupted` or `stream_continued`.
    StreamSignal,
    /// `recordSubmissionTerminal`: the `submission_interrupted` advisory.
    Advisory,
    /// `runPersistedContextInput`'s `persistInput`: the submission's input, appended at claim.
    Input,
}

/// An entry of the path: stored (`written` is `None`, `id` its entry id) or written by recovery
/// (`id` empty: the runtime draws a random one when it writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct PathItem {
    pub id: String,
    pub written: Option<Written>,
    pub body: ItemBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ItemBody {
    /// `type: "message"`: the message object as stored.
    Message(Value),
    /// `type: "compaction"`.
    Compaction {
        summary: String,
        first_kept_entry_id: Option<String>,
    },
    /// Any other entry (an unknown type); `label` says what it is.
    Other { label: String },
}

impl PathItem {
    /// A stored entry, read whole or compact beside its stored text (the write path's read,
    /// whose message is parsed again from that text). A compact entry without its text cannot
    /// be rebuilt into the message the runtime sends: `None`.
    pub fn stored(e: &Entry) -> Option<PathItem> {
        let body = match &e.body {
            EntryBody::Message(m) => match m.compact() {
                None => ItemBody::Message(m.value().clone()),
                Some(_) => ItemBody::Message(e.json()?.get("message")?.clone()),
            },
            EntryBody::Compaction(c) => ItemBody::Compaction {
                summary: c.summary.clone(),
                first_kept_entry_id: c.first_kept_entry_id.clone(),
            },
            _ => ItemBody::Other {
                label: e.kind_label(),
            },
        };
        Some(PathItem {
            id: e.id.to_string(),
            written: None,
            body,
        })
    }

    fn written(written: Written, message: Value) -> PathItem {
        PathItem {
            id: String::new(),
            written: Some(written),
            body: ItemBody::Message(message),
        }
    }

    pub fn message(&self) -> Option<&Value> {
        match &self.body {
            ItemBody::Message(v) => Some(v),
            _ => None,
        }
    }
}

/// One write of the runtime's recovery before the next model call, in the order it makes them.
#[derive(Debug, Clone, PartialEq)]
pub enum RecoveryStep {
    /// `appendRepairedToolResultBatch`: `setLeaf(assistant)` (the results after it leave the
    /// active path), then the complete ordered batch: `(message, copied_from)` per call.
    RepairBatch {
        assistant_id: String,
        results: Vec<(Value, Option<String>)>,
    },
    /// `recoverInterruptedStream`: the rebuilt partial (unless it is already the path's last
    /// entry), then `stream_interrupted` and `stream_continued` for `stream_key`.
    RecoverStream {
        stream_key: String,
        partial: Option<Value>,
    },
    /// `recordSubmissionTerminal`: the advisory signal.
    Advisory { signal: Value },
    /// The input appended at claim (a requeued submission whose input is not on the path).
    Input { message: Value },
}

impl RecoveryStep {
    /// The word the views and the JSON use for it.
    pub fn label(&self) -> &'static str {
        match self {
            RecoveryStep::RepairBatch { .. } => "tool_repair",
            RecoveryStep::RecoverStream { .. } => "stream_recovery",
            RecoveryStep::Advisory { .. } => "advisory",
            RecoveryStep::Input { .. } => "input",
        }
    }
}

/// `path` after `steps`, in order. A repair whose assistant is not on the path leaves it as it is
/// (the runtime's `setLeaf` would throw and nothing would be written).
pub fn apply_recovery(mut path: Vec<PathItem>, steps: &[RecoveryStep]) -> Vec<PathItem> {
    for step in steps {
        match step {
            RecoveryStep::RepairBatch {
                assistant_id,
                results,
            } => {
                let Some(at) = path
                    .iter()
                    .position(|p| p.written.is_none() && p.id == *assistant_id)
                else {
                    continue;
                };
                path.truncate(at + 1);
                path.extend(results.iter().map(|(m, from)| {
                    PathItem::written(
                        Written::ToolRepair {
                            copied_from: from.clone(),
                        },
                        m.clone(),
                    )
                }));
            }
            RecoveryStep::RecoverStream {
                stream_key,
                partial,
            } => {
                if let Some(p) = partial {
                    path.push(PathItem::written(Written::StreamPartial, p.clone()));
                }
                for kind in ["stream_interrupted", "stream_continued"] {
                    path.push(PathItem::written(
                        Written::StreamSignal,
                        stream_signal(kind, stream_key),
                    ));
                }
            }
            RecoveryStep::Advisory { signal } => {
                path.push(PathItem::written(Written::Advisory, signal.clone()))
            }
            RecoveryStep::Input { message } => {
                path.push(PathItem::written(Written::Input, message.clone()))
            }
        }
    }
    path
}

/// The synthetic result `appendRepairedToolResultBatch` writes for a call without one.
pub fn interrupted_result(call_id: &str, tool_name: &str) -> Value {
    json!({
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool_name,
        "content": [{"type": "text", "text": INTERRUPTED_TEXT}],
        "isError": true,
    })
}

/// `reconstructInterruptedStream`'s `interrupted` or `continued` signal for `stream_key`.
pub fn stream_signal(kind: &str, stream_key: &str) -> Value {
    let content = if kind == "stream_interrupted" {
        STREAM_INTERRUPTED_TEXT
    } else {
        STREAM_CONTINUED_TEXT
    };
    json!({
        "role": "signal",
        "type": kind,
        "content": content,
        "attributes": {"streamKey": stream_key},
    })
}

/// `recordSubmissionTerminal`'s `submission_interrupted` signal.
pub fn advisory_signal(submission_id: &str, kind: &str, reason: &str, content: &str) -> Value {
    json!({
        "role": "signal",
        "type": "submission_interrupted",
        "content": content,
        "attributes": {"submissionId": submission_id, "kind": kind, "reason": reason},
    })
}

/// The message `runPersistedDispatchInput` / `runPersistedDirectSubmissionInput` appends for a
/// submission's payload (`kind` `dispatch` or `direct`): a dispatch's `dispatch_input` signal
/// (`createDispatchInputSignal`, its input in `stableStringify`'s sorted, two-space form), a
/// direct prompt's user message (`prepareImagePrompt`'s attachment list left out: image ids are
/// drawn when it is written). `None` for a payload that is not an object.
pub fn input_message(kind: &str, payload: &Value) -> Option<Value> {
    let p = payload.as_object()?;
    if kind == "direct" {
        let text = p
            .get("payload")
            .and_then(|x| x.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Some(json!({"role": "user", "content": [{"type": "text", "text": text}]}));
    }
    let input = p.get("input").cloned().unwrap_or(Value::Null);
    let content = stable_stringify(&input);
    let mut attributes = Map::new();
    for (k, from) in [
        ("agent", "agent"),
        ("id", "id"),
        ("dispatchId", "dispatchId"),
        ("acceptedAt", "acceptedAt"),
    ] {
        if let Some(v) = p.get(from) {
            attributes.insert(k.into(), v.clone());
        }
        if k == "id" {
            attributes.insert("session".into(), "default".into());
        }
    }
    Some(json!({
        "role": "signal",
        "type": "dispatch_input",
        "tagName": "dispatch",
        "content": content,
        "attributes": attributes,
    }))
}

/// `stableStringify`: `JSON.stringify(sortJsonLike(value), null, 2)` (keys sorted at every level).
pub fn stable_stringify(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                let mut m = Map::new();
                for k in keys {
                    m.insert(k.clone(), sorted(&o[k]));
                }
                Value::Object(m)
            }
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sorted(v)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, v: Value) -> PathItem {
        PathItem {
            id: id.into(),
            written: None,
            body: ItemBody::Message(v),
        }
    }

    #[test]
    fn a_repair_branches_from_the_assistant_and_appends_the_ordered_batch() {
        let path = vec![
            msg("in", json!({"role": "user"})),
            msg("a", json!({"role": "assistant"})),
            msg("r2", json!({"role": "toolResult", "toolCallId": "c2"})),
        ];
        let copied = json!({"role": "toolResult", "toolCallId": "c2"});
        let out = apply_recovery(
            path,
            &[RecoveryStep::RepairBatch {
                assistant_id: "a".into(),
                results: vec![
                    (interrupted_result("c1", "t1"), None),
                    (copied.clone(), Some("r2".into())),
                ],
            }],
        );
        // The stored r2 leaves the path; the batch is c1 (synthetic) then c2 (copied from r2).
        let ids: Vec<&str> = out.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["in", "a", "", ""]);
        assert_eq!(out[2].message().unwrap()["toolCallId"], "c1");
        assert_eq!(out[2].message().unwrap()["isError"], true);
        assert_eq!(
            out[3].written,
            Some(Written::ToolRepair {
                copied_from: Some("r2".into())
            })
        );
    }

    #[test]
    fn a_repair_of_an_assistant_off_the_path_writes_nothing() {
        let path = vec![msg("in", json!({"role": "user"}))];
        let out = apply_recovery(
            path.clone(),
            &[RecoveryStep::RepairBatch {
                assistant_id: "gone".into(),
                results: vec![(interrupted_result("c1", "t1"), None)],
            }],
        );
        assert_eq!(out, path);
    }

    #[test]
    fn stream_recovery_appends_the_partial_only_when_given_then_both_signals() {
        let with = apply_recovery(
            vec![],
            &[RecoveryStep::RecoverStream {
                stream_key: "k".into(),
                partial: Some(json!({"role": "assistant", "stopReason": "aborted"})),
            }],
        );
        let kinds: Vec<_> = with.iter().map(|p| p.written.clone().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                Written::StreamPartial,
                Written::StreamSignal,
                Written::StreamSignal
            ]
        );
        assert_eq!(with[1].message().unwrap()["type"], "stream_interrupted");
        assert_eq!(with[2].message().unwrap()["type"], "stream_continued");
        assert_eq!(with[2].message().unwrap()["attributes"]["streamKey"], "k");
        let without = apply_recovery(
            vec![],
            &[RecoveryStep::RecoverStream {
                stream_key: "k".into(),
                partial: None,
            }],
        );
        assert_eq!(without.len(), 2);
    }

    #[test]
    fn a_dispatch_input_is_its_signal_with_the_input_sorted_and_indented() {
        let payload = json!({"dispatchId": "d1", "agent": "worker", "id": "c1",
            "input": {"task": "t", "a": [2, 1]}, "acceptedAt": "2026-01-01T00:00:00.000Z"});
        let m = input_message("dispatch", &payload).unwrap();
        assert_eq!(m["type"], "dispatch_input");
        assert_eq!(m["tagName"], "dispatch");
        assert_eq!(
            m["content"],
            "{\n  \"a\": [\n    2,\n    1\n  ],\n  \"task\": \"t\"\n}"
        );
        let keys: Vec<&String> = m["attributes"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["agent", "id", "session", "dispatchId", "acceptedAt"]);
        let direct = input_message("direct", &json!({"payload": {"message": "hi"}})).unwrap();
        assert_eq!(direct["role"], "user");
        assert_eq!(direct["content"][0]["text"], "hi");
        assert!(input_message("dispatch", &json!("text")).is_none());
    }
}
