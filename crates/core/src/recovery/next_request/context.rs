//! The runtime's own context builder, ported: `SessionHistory.buildContextEntries()` and
//! `pathToContextEntries()` (`@flue/runtime` 1.0.0-beta.7, `dist/persisted-image-placement-*.mjs`),
//! then pi-agent-core's `defaultConvertToLlm` (`agent.js`, the runtime passes no `convertToLlm`).
//! This is the message list `Agent.continue()` hands to the provider stream.

use serde::Serialize;
use serde_json::{json, Value};

use super::path::{ItemBody, PathItem, Written};

/// Where a message of the request comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Source {
    /// A stored message entry, as stored.
    Stored {
        #[serde(rename = "entryId")]
        entry_id: String,
    },
    /// A stored signal entry, rendered as a user message (`renderSignalMessage`).
    Signal {
        #[serde(rename = "entryId")]
        entry_id: String,
    },
    /// The latest compaction's summary, rendered as a user message.
    Summary {
        #[serde(rename = "entryId")]
        entry_id: String,
    },
    /// Written by the runtime's recovery before the turn (not stored yet).
    Recovery {
        #[serde(flatten)]
        written: Written,
    },
    /// Synthesised by the model library's `transformMessages` (a result for a call without one).
    Library,
}

/// A message of the context with its source.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextMessage {
    pub message: Value,
    pub source: Source,
}

/// Why an entry of the path is not in the request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    /// The runtime: an assistant that ended in `error`.
    ErrorTurn,
    /// The runtime: an `aborted` assistant not followed by `stream_interrupted` and
    /// `stream_continued`.
    LoneAbortedTurn,
    /// The runtime: an assistant with tool calls whose results that follow it are not exactly
    /// one per call, in order, with matching ids and names; the results after it go with it.
    IncompleteToolBatch,
    /// The runtime: a result that does not follow an assistant with tool calls.
    ToolResultOutsideBatch,
    /// The runtime: before the latest compaction's first kept entry (its summary stands for it).
    Compacted,
    /// The runtime: a compaction entry other than the latest, or an entry of another type.
    NotAMessage,
    /// pi-agent-core's `defaultConvertToLlm`: a role other than user, assistant, toolResult.
    UnknownRole,
    /// The model library: an assistant that ended in `error` or `aborted`.
    LibraryDroppedAssistant,
}

impl LeftOutReason {
    /// Who leaves it out.
    pub fn by(&self) -> &'static str {
        match self {
            LeftOutReason::LibraryDroppedAssistant => "library",
            LeftOutReason::UnknownRole => "agent-core",
            _ => "runtime",
        }
    }

    /// One sentence.
    pub fn describe(&self) -> &'static str {
        match self {
            LeftOutReason::ErrorTurn => "the runtime's context builder drops an assistant that ended in error",
            LeftOutReason::LoneAbortedTurn => "the runtime's context builder drops an aborted assistant without stream_interrupted/stream_continued after it",
            LeftOutReason::IncompleteToolBatch => "the runtime's context builder drops a tool batch whose results are not complete and in order, with its results",
            LeftOutReason::ToolResultOutsideBatch => "the runtime's context builder drops a tool result that does not follow its batch",
            LeftOutReason::Compacted => "before the latest compaction's first kept entry: its summary stands for it",
            LeftOutReason::NotAMessage => "not a message (or an older compaction): the context builder skips it",
            LeftOutReason::UnknownRole => "pi-agent-core's convertToLlm keeps only user, assistant and toolResult",
            LeftOutReason::LibraryDroppedAssistant => "the model library's transformMessages drops an assistant that ended in error or aborted",
        }
    }
}

/// An entry of the path (stored or written by recovery) that the request leaves out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftOut {
    /// The stored entry id; empty for a message recovery writes.
    pub entry_id: String,
    /// The entry's kind (`assistant`, `toolResult`, `signal:…`, `compaction`, …).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<Written>,
    pub reason: LeftOutReason,
    pub by: &'static str,
    /// Tool calls it carries (an assistant) or answers (a result): `(id, name)`.
    pub calls: Vec<(String, String)>,
}

/// `buildContextEntries()` + `defaultConvertToLlm`: the context and what it leaves out.
pub fn build_context(path: &[PathItem]) -> (Vec<ContextMessage>, Vec<LeftOut>) {
    let mut out = Vec::new();
    let mut left = Vec::new();
    let latest = path
        .iter()
        .rposition(|p| matches!(p.body, ItemBody::Compaction { .. }));
    match latest {
        None => segment(path, &mut out, &mut left),
        Some(ci) => {
            let c = &path[ci];
            let ItemBody::Compaction {
                summary,
                first_kept_entry_id,
            } = &c.body
            else {
                unreachable!("rposition matched a compaction")
            };
            // `keptStart`: the first kept entry's index, else right after the compaction.
            let kept = first_kept_entry_id
                .as_deref()
                .and_then(|id| path.iter().position(|p| p.written.is_none() && p.id == id))
                .unwrap_or(ci + 1);
            for p in &path[..kept.min(ci)] {
                left.push(left_out(p, LeftOutReason::Compacted));
            }
            out.push(ContextMessage {
                message: user_text(&render_signal(&json!({
                    "type": "context_summary",
                    "tagName": "compaction",
                    "content": summary,
                }))),
                source: Source::Summary {
                    entry_id: c.id.clone(),
                },
            });
            if kept < ci {
                segment(&path[kept..ci], &mut out, &mut left);
            }
            segment(&path[ci + 1..], &mut out, &mut left);
        }
    }
    // `defaultConvertToLlm`: only these roles reach the provider.
    let (kept, dropped): (Vec<_>, Vec<_>) = out
        .into_iter()
        .partition(|m| matches!(role(&m.message), "user" | "assistant" | "toolResult"));
    for m in dropped {
        left.push(LeftOut {
            entry_id: match &m.source {
                Source::Stored { entry_id } => entry_id.clone(),
                _ => String::new(),
            },
            kind: format!("message:{}", role(&m.message)),
            written: match &m.source {
                Source::Recovery { written } => Some(written.clone()),
                _ => None,
            },
            by: LeftOutReason::UnknownRole.by(),
            reason: LeftOutReason::UnknownRole,
            calls: vec![],
        });
    }
    (kept, left)
}

/// `pathToContextEntries` over one slice of the path.
fn segment(path: &[PathItem], out: &mut Vec<ContextMessage>, left: &mut Vec<LeftOut>) {
    let mut i = 0;
    while i < path.len() {
        let p = &path[i];
        let Some(m) = p.message() else {
            left.push(left_out(p, LeftOutReason::NotAMessage));
            i += 1;
            continue;
        };
        match role(m) {
            "signal" => {
                out.push(ContextMessage {
                    message: user_text(&render_signal(m)),
                    source: match &p.written {
                        Some(w) => Source::Recovery { written: w.clone() },
                        None => Source::Signal {
                            entry_id: p.id.clone(),
                        },
                    },
                });
                i += 1;
            }
            "assistant" => {
                let stop = m.get("stopReason").and_then(Value::as_str);
                if matches!(stop, Some("error" | "aborted"))
                    && !(stop == Some("aborted") && continued_at(path, i))
                {
                    let why = if stop == Some("error") {
                        LeftOutReason::ErrorTurn
                    } else {
                        LeftOutReason::LoneAbortedTurn
                    };
                    left.push(left_out(p, why));
                    i += 1;
                    continue;
                }
                let calls = tool_calls(m);
                if calls.is_empty() {
                    out.push(context_message(p));
                    i += 1;
                    continue;
                }
                let mut j = i + 1;
                while j < path.len() && path[j].message().is_some_and(|r| role(r) == "toolResult") {
                    j += 1;
                }
                let results = &path[i + 1..j];
                if complete_batch(&calls, results) {
                    out.push(context_message(p));
                    out.extend(results.iter().map(context_message));
                } else {
                    left.push(left_out(p, LeftOutReason::IncompleteToolBatch));
                    for r in results {
                        left.push(left_out(r, LeftOutReason::IncompleteToolBatch));
                    }
                }
                i = j;
            }
            "toolResult" => {
                left.push(left_out(p, LeftOutReason::ToolResultOutsideBatch));
                i += 1;
            }
            _ => {
                out.push(context_message(p));
                i += 1;
            }
        }
    }
}

/// The aborted assistant at `i` is followed by `stream_interrupted` then `stream_continued`.
fn continued_at(path: &[PathItem], i: usize) -> bool {
    let signal = |k: usize, t: &str| {
        path.get(k).and_then(PathItem::message).is_some_and(|m| {
            role(m) == "signal" && m.get("type").and_then(Value::as_str) == Some(t)
        })
    };
    signal(i + 1, "stream_interrupted") && signal(i + 2, "stream_continued")
}

/// `isCompleteToolResultBatch`: one result per call, in call order, ids and names equal, no id
/// twice.
fn complete_batch(calls: &[(Value, Value)], results: &[PathItem]) -> bool {
    if calls.len() != results.len() {
        return false;
    }
    let mut seen: Vec<&Value> = Vec::new();
    for ((id, name), r) in calls.iter().zip(results) {
        let Some(r) = r.message() else { return false };
        if seen.contains(&id) {
            return false;
        }
        seen.push(id);
        let undefined = Value::Null;
        let rid = r.get("toolCallId").unwrap_or(&undefined);
        let rname = r.get("toolName").unwrap_or(&undefined);
        if rid != id || rname != name {
            return false;
        }
    }
    true
}

/// `(id, name)` of each `toolCall` block, as JSON values (an absent one is `null`, as a JS
/// `undefined` compares equal only to another `undefined`).
pub fn tool_calls(m: &Value) -> Vec<(Value, Value)> {
    m.get("content")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|b| {
                    (
                        b.get("id").cloned().unwrap_or(Value::Null),
                        b.get("name").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

fn context_message(p: &PathItem) -> ContextMessage {
    ContextMessage {
        message: p.message().cloned().unwrap_or(Value::Null),
        source: match &p.written {
            Some(w) => Source::Recovery { written: w.clone() },
            None => Source::Stored {
                entry_id: p.id.clone(),
            },
        },
    }
}

fn left_out(p: &PathItem, reason: LeftOutReason) -> LeftOut {
    let (kind, calls) = match p.message() {
        Some(m) => {
            let r = role(m);
            let kind = if r == "signal" {
                format!(
                    "signal:{}",
                    m.get("type").and_then(Value::as_str).unwrap_or("?")
                )
            } else {
                r.to_string()
            };
            let calls = match r {
                "assistant" => tool_calls(m)
                    .iter()
                    .map(|(i, n)| (js_text(i), js_text(n)))
                    .collect(),
                "toolResult" => vec![(
                    js_text(m.get("toolCallId").unwrap_or(&Value::Null)),
                    js_text(m.get("toolName").unwrap_or(&Value::Null)),
                )],
                _ => vec![],
            };
            (kind, calls)
        }
        None => match &p.body {
            ItemBody::Compaction { .. } => ("compaction".to_string(), vec![]),
            ItemBody::Other { label } => (label.clone(), vec![]),
            ItemBody::Message(_) => unreachable!("a message has a body"),
        },
    };
    LeftOut {
        entry_id: p.id.clone(),
        kind,
        written: p.written.clone(),
        by: reason.by(),
        reason,
        calls,
    }
}

pub(crate) fn js_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `createUserContextMessage(text)`: the user message a signal or summary becomes.
fn user_text(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

/// `renderSignalMessage`: `<tag type="…" attr="…">\ncontent\n</tag>`, XML-escaped. (An attribute
/// that is not a string makes the runtime's `escapeXmlAttribute` throw; the runtime never
/// writes one, and it is shown here as its JSON text.)
pub fn render_signal(m: &Value) -> String {
    let tag = m.get("tagName").and_then(Value::as_str).unwrap_or("signal");
    let mut attrs = vec![(
        "type".to_string(),
        m.get("type").map(js_text).unwrap_or_default(),
    )];
    if let Some(a) = m.get("attributes").and_then(Value::as_object) {
        attrs.extend(a.iter().map(|(k, v)| (k.clone(), js_text(v))));
    }
    let attrs: String = attrs
        .iter()
        .map(|(k, v)| format!(" {}=\"{}\"", escape_attr(k), escape_attr(v)))
        .collect();
    let content = m.get("content").map(js_text).unwrap_or_default();
    format!("<{tag}{attrs}>\n{}\n</{tag}>", escape_text(&content))
}

fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn escape_attr(s: &str) -> String {
    escape_text(s).replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
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
        let content: Vec<Value> = calls
            .iter()
            .map(|(i, n)| json!({"type": "toolCall", "id": i, "name": n, "arguments": {}}))
            .collect();
        item(
            id,
            json!({"role": "assistant", "stopReason": stop, "content": content}),
        )
    }

    fn result(id: &str, call: &str, name: &str) -> PathItem {
        item(
            id,
            json!({"role": "toolResult", "toolCallId": call, "toolName": name, "content": []}),
        )
    }

    fn signal(id: &str, t: &str) -> PathItem {
        item(
            id,
            json!({"role": "signal", "type": t, "content": "x", "attributes": {"streamKey": "k"}}),
        )
    }

    fn ids(ctx: &[ContextMessage]) -> Vec<String> {
        ctx.iter()
            .map(|m| match &m.source {
                Source::Stored { entry_id }
                | Source::Signal { entry_id }
                | Source::Summary { entry_id } => entry_id.clone(),
                Source::Recovery { .. } => "(recovery)".into(),
                Source::Library => "(library)".into(),
            })
            .collect()
    }

    fn reasons(left: &[LeftOut]) -> Vec<(String, LeftOutReason)> {
        left.iter()
            .map(|l| (l.entry_id.clone(), l.reason.clone()))
            .collect()
    }

    #[test]
    fn a_complete_batch_is_kept_with_its_results_in_order() {
        let path = [
            user("u"),
            assistant("a", "toolUse", &[("c1", "t1"), ("c2", "t2")]),
            result("r1", "c1", "t1"),
            result("r2", "c2", "t2"),
        ];
        let (ctx, left) = build_context(&path);
        assert_eq!(ids(&ctx), ["u", "a", "r1", "r2"]);
        assert!(left.is_empty());
    }

    #[test]
    fn an_incomplete_batch_is_dropped_with_the_results_it_has() {
        let path = [
            user("u"),
            assistant("a", "toolUse", &[("c1", "t1"), ("c2", "t2")]),
            result("r1", "c1", "t1"),
        ];
        let (ctx, left) = build_context(&path);
        assert_eq!(ids(&ctx), ["u"]);
        assert_eq!(
            reasons(&left),
            [
                ("a".into(), LeftOutReason::IncompleteToolBatch),
                ("r1".into(), LeftOutReason::IncompleteToolBatch)
            ]
        );
        assert_eq!(
            left[0].calls,
            [
                ("c1".to_string(), "t1".to_string()),
                ("c2".to_string(), "t2".to_string())
            ]
        );
    }

    #[test]
    fn results_out_of_order_or_misnamed_make_the_batch_incomplete() {
        let swapped = [
            assistant("a", "toolUse", &[("c1", "t1"), ("c2", "t2")]),
            result("r2", "c2", "t2"),
            result("r1", "c1", "t1"),
        ];
        assert!(build_context(&swapped).0.is_empty());
        let misnamed = [
            assistant("a", "toolUse", &[("c1", "t1")]),
            result("r1", "c1", "other"),
        ];
        assert!(build_context(&misnamed).0.is_empty());
        let twice = [
            assistant("a", "toolUse", &[("c1", "t1"), ("c1", "t1")]),
            result("r1", "c1", "t1"),
            result("r2", "c1", "t1"),
        ];
        assert!(build_context(&twice).0.is_empty());
    }

    #[test]
    fn error_turns_and_lone_aborted_turns_are_dropped_but_a_continued_partial_is_kept() {
        let path = [
            user("u"),
            assistant("e", "error", &[]),
            assistant("ab", "aborted", &[]),
            user("u2"),
        ];
        let (ctx, left) = build_context(&path);
        assert_eq!(ids(&ctx), ["u", "u2"]);
        assert_eq!(
            reasons(&left),
            [
                ("e".into(), LeftOutReason::ErrorTurn),
                ("ab".into(), LeftOutReason::LoneAbortedTurn)
            ]
        );
        let continued = [
            user("u"),
            assistant("p", "aborted", &[]),
            signal("s1", "stream_interrupted"),
            signal("s2", "stream_continued"),
        ];
        let (ctx, left) = build_context(&continued);
        assert_eq!(ids(&ctx), ["u", "p", "s1", "s2"]);
        assert!(left.is_empty());
        assert_eq!(role(&ctx[2].message), "user");
        // Only the two signals in that order keep it: one is not enough.
        let half = [
            user("u"),
            assistant("p", "aborted", &[]),
            signal("s1", "stream_interrupted"),
        ];
        assert_eq!(ids(&build_context(&half).0), ["u", "s1"]);
    }

    #[test]
    fn a_result_outside_a_batch_and_unknown_roles_are_left_out() {
        let path = [
            user("u"),
            result("r", "c9", "t"),
            item("x", json!({"role": "custom"})),
            item(
                "y",
                json!({"role": "assistant", "stopReason": "stop", "content": []}),
            ),
        ];
        let (ctx, left) = build_context(&path);
        assert_eq!(ids(&ctx), ["u", "y"]);
        assert_eq!(
            reasons(&left),
            [
                ("r".into(), LeftOutReason::ToolResultOutsideBatch),
                ("x".into(), LeftOutReason::UnknownRole)
            ]
        );
    }

    #[test]
    fn a_compaction_keeps_its_summary_then_the_kept_entries_then_what_follows() {
        let compaction = PathItem {
            id: "c".into(),
            written: None,
            body: ItemBody::Compaction {
                summary: "sum <x>".into(),
                first_kept_entry_id: Some("k".into()),
            },
        };
        let path = [user("old"), user("k"), compaction, user("after")];
        let (ctx, left) = build_context(&path);
        assert_eq!(ids(&ctx), ["c", "k", "after"]);
        assert_eq!(
            ctx[0].message["content"][0]["text"],
            "<compaction type=\"context_summary\">\nsum &lt;x&gt;\n</compaction>"
        );
        assert_eq!(reasons(&left), [("old".into(), LeftOutReason::Compacted)]);
        // A first kept entry that is not on the path: everything before the compaction goes.
        let lost = PathItem {
            id: "c".into(),
            written: None,
            body: ItemBody::Compaction {
                summary: "s".into(),
                first_kept_entry_id: Some("nowhere".into()),
            },
        };
        let (ctx, left) = build_context(&[user("a"), user("b"), lost, user("z")]);
        assert_eq!(ids(&ctx), ["c", "z"]);
        assert_eq!(left.len(), 2);
    }

    #[test]
    fn a_signal_renders_its_type_then_attributes_escaped() {
        let m = json!({"role": "signal", "type": "dispatch_input", "tagName": "dispatch",
            "content": "a & b", "attributes": {"agent": "w\"x", "id": "<1>"}});
        assert_eq!(render_signal(&m), "<dispatch type=\"dispatch_input\" agent=\"w&quot;x\" id=\"&lt;1&gt;\">\na &amp; b\n</dispatch>");
    }
}
