//! JSON builders for the runtime's stored shapes (spec §1.6, §2.2, §2.5–2.6, §3.6, §5.3).
//!
//! Every object is built with `json!` under serde_json's `preserve_order`, so keys come out in
//! the order written here, which is the order the runtime writes them. Numbers that are whole
//! are emitted as integers (JavaScript writes `0`, never `0.0`).

use serde_json::{json, Map, Value};

use super::ids::iso;

/// A provider model as pi-ai 0.79.10 describes it (`models.generated.js`): prices are USD per
/// million tokens.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    pub id: &'static str,
    pub api: &'static str,
    pub provider: &'static str,
    pub price: [f64; 4],
}

pub const HAIKU: Model = Model {
    id: "claude-haiku-4-5",
    api: "anthropic-messages",
    provider: "anthropic",
    price: [1.0, 5.0, 0.1, 1.25],
};
pub const SONNET: Model = Model {
    id: "claude-sonnet-4-5",
    api: "anthropic-messages",
    provider: "anthropic",
    price: [3.0, 15.0, 0.3, 3.75],
};
pub const GPT5_MINI: Model = Model {
    id: "gpt-5-mini",
    api: "openai-responses",
    provider: "openai",
    price: [0.25, 2.0, 0.025, 0.0],
};

pub use turnscope_core::recovery::reconciler::messages::AFTER_INPUT_APPLICATION;
pub use turnscope_core::recovery::runtime_text::{
    AFTER_INPUT_DETAILS, INTERRUPTED_TEXT, STREAM_CONTINUED_TEXT, STREAM_INTERRUPTED_TEXT,
};

/// A JSON number the way `JSON.stringify` prints it: integral values without a fraction.
pub fn num(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// Token counts of one provider response.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

impl Tokens {
    pub fn new(input: i64, output: i64, cache_read: i64, cache_write: i64) -> Self {
        Tokens {
            input,
            output,
            cache_read,
            cache_write,
        }
    }
}

/// pi-ai `calculateCost`, same operations in the same order, so the floats match bit for bit.
fn costs(model: &Model, t: &Tokens) -> [f64; 5] {
    let c_in = (model.price[0] / 1_000_000.0) * t.input as f64;
    let c_out = (model.price[1] / 1_000_000.0) * t.output as f64;
    let c_cr = (model.price[2] / 1_000_000.0) * t.cache_read as f64;
    let c_cw = (model.price[3] * t.cache_write as f64) / 1_000_000.0;
    [c_in, c_out, c_cr, c_cw, c_in + c_out + c_cr + c_cw]
}

fn usage_json(t: &Tokens, c: [f64; 5]) -> Value {
    json!({
        "input": t.input, "output": t.output, "cacheRead": t.cache_read, "cacheWrite": t.cache_write,
        "totalTokens": t.input + t.output + t.cache_read + t.cache_write,
        "cost": {"input": num(c[0]), "output": num(c[1]), "cacheRead": num(c[2]),
                 "cacheWrite": num(c[3]), "total": num(c[4])}
    })
}

/// `usage` object of an assistant message (§2.5).
pub fn usage(model: &Model, t: Tokens) -> Value {
    usage_json(&t, costs(model, &t))
}

/// Usage summed over several responses (the `result.usage` of a prompt operation).
pub fn usage_sum(parts: &[(Model, Tokens)]) -> Value {
    let mut t = Tokens::default();
    let mut c = [0.0f64; 5];
    for (m, p) in parts {
        t.input += p.input;
        t.output += p.output;
        t.cache_read += p.cache_read;
        t.cache_write += p.cache_write;
        let pc = costs(m, p);
        for i in 0..5 {
            c[i] += pc[i];
        }
    }
    usage_json(&t, c)
}

pub fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub fn thinking(t: &str, signature: &str) -> Value {
    json!({"type": "thinking", "thinking": t, "thinkingSignature": signature})
}

pub fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments})
}

/// Assistant message: role, content, api, provider, model, usage, stopReason, timestamp, then
/// `responseId` (set by the provider once the response started) and `errorMessage`.
pub fn assistant(
    model: &Model,
    content: Vec<Value>,
    usage: Value,
    stop_reason: &str,
    ts: i64,
    response_id: Option<&str>,
    error: Option<&str>,
) -> Value {
    let mut m = json!({
        "role": "assistant", "content": content, "api": model.api, "provider": model.provider,
        "model": model.id, "usage": usage, "stopReason": stop_reason, "timestamp": ts
    });
    let o = m.as_object_mut().expect("object");
    if let Some(r) = response_id {
        o.insert("responseId".into(), json!(r));
    }
    if let Some(e) = error {
        o.insert("errorMessage".into(), json!(e));
    }
    m
}

/// The assistant `session.shell()` writes (§2.6 #11).
pub fn shell_assistant(call: Value, ts: i64) -> Value {
    json!({
        "role": "assistant", "content": [call], "api": "flue-shell", "provider": "flue", "model": "",
        "usage": usage(&GPT5_MINI, Tokens::default()), "stopReason": "toolUse", "timestamp": ts
    })
}

pub fn user_text(t: &str, ts: i64) -> Value {
    json!({"role": "user", "content": [text(t)], "timestamp": ts})
}

pub fn user_string(t: &str, ts: i64) -> Value {
    json!({"role": "user", "content": t, "timestamp": ts})
}

/// Tool result in pi-agent-core's key order; `details` omitted when `None`.
pub fn tool_result(
    call_id: &str,
    name: &str,
    body: &str,
    details: Option<Value>,
    is_error: bool,
    ts: i64,
) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), json!("toolResult"));
    m.insert("toolCallId".into(), json!(call_id));
    m.insert("toolName".into(), json!(name));
    m.insert("content".into(), json!([text(body)]));
    if let Some(d) = details {
        m.insert("details".into(), d);
    }
    m.insert("isError".into(), json!(is_error));
    m.insert("timestamp".into(), json!(ts));
    Value::Object(m)
}

pub fn signal(kind: &str, content: &str, attributes: Value, ts: i64) -> Value {
    json!({"role": "signal", "type": kind, "content": content, "attributes": attributes, "timestamp": ts})
}

/// The dispatch input signal (§2.6 #1); `content` is [`stable_pretty`] of the input.
pub fn dispatch_signal(content: &str, attributes: Value, ts: i64) -> Value {
    json!({
        "role": "signal", "type": "dispatch_input", "tagName": "dispatch", "content": content,
        "attributes": attributes, "timestamp": ts
    })
}

/// `JSON.stringify(sortJsonLike(v), null, 2)` (the dispatch input signal content).
pub fn stable_pretty(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&o[k]))).collect())
            }
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sort(v)).expect("serializable")
}

/// A session entry: type, id, parentId, timestamp, message, then the optional markers.
pub fn message_entry(
    id: &str,
    parent: Option<&str>,
    ts: i64,
    message: Value,
    extras: Vec<(&str, Value)>,
) -> Value {
    let mut e = json!({"type": "message", "id": id, "parentId": parent, "timestamp": iso(ts), "message": message});
    let o = e.as_object_mut().expect("object");
    for (k, v) in extras {
        o.insert(k.to_string(), v);
    }
    e
}

pub fn compaction_entry(
    id: &str,
    parent: Option<&str>,
    ts: i64,
    summary: &str,
    first_kept: &str,
    tokens_before: i64,
    usage: Value,
) -> Value {
    json!({
        "type": "compaction", "id": id, "parentId": parent, "timestamp": iso(ts), "summary": summary,
        "firstKeptEntryId": first_kept, "tokensBefore": tokens_before,
        "details": {"readFiles": [], "modifiedFiles": []}, "usage": usage
    })
}

/// Dispatch payload (§1.6), exact key order.
pub fn dispatch_payload(
    id: &str,
    agent: &str,
    instance: &str,
    input: &Value,
    accepted: i64,
) -> Value {
    json!({
        "dispatchId": id, "agent": agent, "id": instance, "input": input, "acceptedAt": iso(accepted),
        "kind": "dispatch", "submissionId": id
    })
}

/// Direct payload (§1.6), exact key order.
pub fn direct_payload(
    id: &str,
    agent: &str,
    instance: &str,
    message: &str,
    accepted: i64,
) -> Value {
    json!({
        "kind": "direct", "submissionId": id, "agent": agent, "id": instance,
        "payload": {"message": message}, "acceptedAt": iso(accepted)
    })
}

/// The `submission_settled` product event as `ctx.createEvent` decorates it (v 3).
pub fn settled_event(
    submission_id: &str,
    instance: &str,
    agent: &str,
    outcome_body: (&str, Value),
    event_index: i64,
    ts: i64,
) -> Value {
    let (outcome, body) = outcome_body;
    let body_key = if outcome == "completed" {
        "result"
    } else {
        "error"
    };
    let mut e =
        json!({"type": "submission_settled", "submissionId": submission_id, "outcome": outcome});
    let o = e.as_object_mut().expect("object");
    o.insert(body_key.into(), body);
    o.insert("instanceId".into(), json!(instance));
    o.insert("agentName".into(), json!(agent));
    o.insert("v".into(), json!(3));
    o.insert("eventIndex".into(), json!(event_index));
    o.insert("timestamp".into(), json!(iso(ts)));
    e
}

/// Serialized `SubmissionInterruptedError` (after input application, no tools).
pub fn interrupted_error() -> Value {
    json!({
        "name": "FlueError", "message": AFTER_INPUT_APPLICATION, "type": "submission_interrupted",
        "details": AFTER_INPUT_DETAILS, "meta": {"phase": "after_input_application"}
    })
}

/// Session data (§2.2) with the runtime's key order.
pub fn session_data(
    conv: &str,
    aff: &str,
    leaf: Option<&str>,
    children: &[Value],
    created: i64,
    updated: i64,
) -> Value {
    json!({
        "version": 8, "conversationId": conv, "affinityKey": aff, "leafId": leaf,
        "childSessions": children, "metadata": {}, "createdAt": iso(created), "updatedAt": iso(updated)
    })
}

/// One stream-chunk segment body (§3.6): text deltas, the last one carrying `partial`.
pub fn chunk_body(deltas: &[&str], partial: &Value) -> String {
    let n = deltas.len();
    let events: Vec<Value> = deltas
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut e = json!({"type": "text_delta", "contentIndex": 0, "delta": d});
            if i + 1 == n {
                e.as_object_mut()
                    .expect("object")
                    .insert("partial".into(), partial.clone());
            }
            e
        })
        .collect();
    Value::Array(events).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_matches_spec_example() {
        // §2.6 #3: haiku, 1204 in / 88 out.
        let u = usage(&HAIKU, Tokens::new(1204, 88, 0, 0)).to_string();
        assert_eq!(
            u,
            r#"{"input":1204,"output":88,"cacheRead":0,"cacheWrite":0,"totalTokens":1292,"cost":{"input":0.001204,"output":0.00044,"cacheRead":0,"cacheWrite":0,"total":0.001644}}"#
        );
    }

    #[test]
    fn stable_pretty_sorts_and_indents_like_js() {
        let v = json!({"type": "flagged", "reportId": "r-991"});
        assert_eq!(
            stable_pretty(&v),
            "{\n  \"reportId\": \"r-991\",\n  \"type\": \"flagged\"\n}"
        );
    }
}
