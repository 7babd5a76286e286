//! The result a completed direct prompt settles with (rule 1): the runtime's
//! `reconstructSubmissionResult(input)`, rebuilt from the history without a model call. The text
//! of the last assistant message after the input, the usage summed over the active path since the
//! input (`aggregateUsageSince`: assistant usage and compaction usage, in JavaScript arithmetic),
//! and the model that answered.

use serde_json::{Map, Value};

use crate::journal::history::{History, SubmissionKind};

/// `PromptUsage`'s counters and its `cost` fields, in the runtime's key order.
const COUNTERS: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
const COST: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "total"];

/// The result object (`{text, usage, model}`), `Ok(None)` where the runtime's reconstruction
/// returns `undefined` (no input on the active path, or no completed assistant after it), and
/// `Err` where its code would throw on these rows or do arithmetic turnscope does not reproduce
/// (a number added to a string).
pub fn reconstruct_result(history: &History, submission_id: &str) -> Result<Option<Value>, String> {
    let Some(input) = history.find_input(SubmissionKind::Direct, submission_id) else {
        return Ok(None);
    };
    let path: Vec<Value> = history
        .active_path_since(&input.id)
        .into_iter()
        .map(|e| {
            e.json_exact().ok_or_else(|| {
                // Read as U+FFFD elsewhere; written back, it would not be the runtime's bytes.
                if crate::js::lone_surrogates::has_lone_surrogates(&e.raw) {
                    format!(
                        "entry {} holds half of a surrogate pair, which turnscope cannot write back as the runtime does",
                        e.id
                    )
                } else {
                    format!("entry {} is not JSON", e.id)
                }
            })
        })
        .collect::<Result<_, _>>()?;
    let mut assistant = None;
    for entry in path.iter().rev() {
        if let Some(m) = assistant_message(entry)? {
            assistant = Some(m);
            break;
        }
    }
    let Some(assistant) = assistant else {
        return Ok(None);
    };
    if !matches!(
        assistant.get("stopReason").and_then(Value::as_str),
        Some("stop" | "length")
    ) {
        return Ok(None);
    }
    let mut out = Map::new();
    out.insert("text".into(), Value::String(text_of(assistant)?));
    out.insert("usage".into(), usage_since(&path)?);
    let mut model = Map::new();
    // `{provider, id}`: JSON.stringify leaves out a field the message lacks.
    if let Some(p) = assistant.get("provider") {
        model.insert("provider".into(), p.clone());
    }
    if let Some(m) = assistant.get("model") {
        model.insert("id".into(), m.clone());
    }
    out.insert("model".into(), Value::Object(model));
    Ok(Some(Value::Object(out)))
}

/// `entry.type === "message" && entry.message.role === "assistant"`: the message, if so.
fn assistant_message(entry: &Value) -> Result<Option<&Map<String, Value>>, String> {
    if entry.get("type").and_then(Value::as_str) != Some("message") {
        return Ok(None);
    }
    match entry.get("message") {
        None | Some(Value::Null) => {
            Err("a message entry has no message (the runtime's lookup throws)".into())
        }
        Some(Value::Object(m)) => {
            Ok((m.get("role").and_then(Value::as_str) == Some("assistant")).then_some(m))
        }
        Some(_) => Ok(None),
    }
}

/// `content.flatMap(b => b.type === "text" ? [b.text] : []).join("\n")`.
fn text_of(message: &Map<String, Value>) -> Result<String, String> {
    let Some(Value::Array(blocks)) = message.get("content") else {
        return Err(
            "the assistant's content is not an array (the runtime's flatMap throws)".into(),
        );
    };
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            Value::Null => {
                return Err("a content block is null (the runtime's lookup throws)".into())
            }
            Value::Object(b) if b.get("type").and_then(Value::as_str) == Some("text") => {
                parts.push(match b.get("text") {
                    // join() writes undefined and null as empty strings.
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err("a text block's text is not a string".into()),
                });
            }
            _ => {}
        }
    }
    Ok(parts.join("\n"))
}

/// A JavaScript number as `+` reads a JSON value: `undefined` is NaN, `null` 0, booleans 0/1.
fn js_number(v: Option<&Value>) -> Result<f64, String> {
    Ok(match v {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(_) => {
            return Err("a usage field is not a number (JavaScript would concatenate)".into())
        }
    })
}

/// JavaScript's truthiness of a usage value (`if (!usage) return undefined`).
fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(crate::journal::entry::js_truthy)
}

/// `aggregateUsageSince`: zeros, plus each assistant's usage and each compaction's, in order.
fn usage_since(path: &[Value]) -> Result<Value, String> {
    let mut counters = [0.0f64; 5];
    let mut cost = [0.0f64; 5];
    for entry in path {
        let usage = if let Some(m) = assistant_message(entry)? {
            m.get("usage")
        } else if entry.get("type").and_then(Value::as_str) == Some("compaction") {
            entry.get("usage")
        } else {
            None
        };
        if !truthy(usage) {
            continue;
        }
        let Some(Value::Object(u)) = usage else {
            return Err(
                "a usage value is not an object (the runtime reads usage.cost.input)".into(),
            );
        };
        let Some(Value::Object(c)) = u.get("cost") else {
            return Err("a usage has no cost object (the runtime reads usage.cost.input)".into());
        };
        for (i, k) in COUNTERS.iter().enumerate() {
            counters[i] += js_number(u.get(*k))?;
        }
        for (i, k) in COST.iter().enumerate() {
            cost[i] += js_number(c.get(*k))?;
        }
    }
    let object = |keys: &[&str; 5], values: &[f64; 5]| -> Value {
        Value::Object(
            keys.iter()
                .zip(values)
                .map(|(k, v)| (k.to_string(), js_value(*v)))
                .collect(),
        )
    };
    let mut usage = object(&COUNTERS, &counters);
    usage["cost"] = object(&COST, &cost);
    Ok(usage)
}

/// A JS number as JSON: integers as integers, NaN and the infinities as `null` (as
/// `JSON.stringify` writes them); `jsjson::to_js_string` formats the rest as JavaScript does.
fn js_value(v: f64) -> Value {
    if !v.is_finite() {
        Value::Null
    } else if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::entry::Entry;
    use crate::js::stringify::to_js_string;
    use serde_json::json;

    fn history(entries: &[Value]) -> History {
        let parsed: Vec<Entry> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| Entry::parse(i as i64, e["id"].as_str().unwrap(), &e.to_string()))
            .collect();
        let leaf = entries
            .last()
            .map(|e| e["id"].as_str().unwrap().to_string());
        History::new(parsed, leaf)
    }

    fn input(id: &str, parent: Option<&str>) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
               "directSubmissionId": "s1",
               "message": {"role": "user", "content": "hi", "timestamp": 1}})
    }

    fn assistant(id: &str, parent: &str, text: &[&str], stop: &str, usage: Value) -> Value {
        let content: Vec<Value> = text
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "assistant", "content": content, "provider": "anthropic",
                           "model": "claude", "usage": usage, "stopReason": stop, "timestamp": 2}})
    }

    fn usage(input: f64, cost_input: f64) -> Value {
        json!({"input": input, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 2.0,
               "cost": {"input": cost_input, "output": 0.000002, "cacheRead": 0, "cacheWrite": 0, "total": cost_input + 0.000002}})
    }

    #[test]
    fn the_result_is_the_last_answer_with_usage_summed_as_javascript_sums() {
        let h = history(&[
            input("a0000001", None),
            assistant(
                "a0000002",
                "a0000001",
                &["thinking"],
                "toolUse",
                usage(10.0, 0.1),
            ),
            assistant(
                "a0000003",
                "a0000002",
                &["Done.", "Bye"],
                "stop",
                usage(20.0, 0.2),
            ),
        ]);
        let r = reconstruct_result(&h, "s1").unwrap().unwrap();
        assert_eq!(
            to_js_string(&r),
            // As Node sums them: 0 + 0.1 + 0.2 is 0.30000000000000004, and
            // 0 + (0.1 + 0.000002) + (0.2 + 0.000002) is 0.30000400000000005.
            r#"{"text":"Done.\nBye","usage":{"input":30,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":34,"cost":{"input":0.30000000000000004,"output":0.000004,"cacheRead":0,"cacheWrite":0,"total":0.30000400000000005}},"model":{"provider":"anthropic","id":"claude"}}"#
        );
    }

    #[test]
    fn no_completed_answer_is_undefined_and_missing_fields_follow_javascript() {
        let h = history(&[
            input("a0000001", None),
            assistant("a0000002", "a0000001", &["cut"], "aborted", usage(1.0, 0.0)),
        ]);
        assert_eq!(reconstruct_result(&h, "s1"), Ok(None));
        assert_eq!(reconstruct_result(&h, "other"), Ok(None));
        // A usage without `cacheWrite` sums to NaN, written null; no usage counts nothing.
        let mut u = usage(1.0, 0.5);
        u.as_object_mut().unwrap().remove("cacheWrite");
        let h = history(&[
            input("a0000001", None),
            assistant("a0000002", "a0000001", &["x"], "length", u),
        ]);
        let r = reconstruct_result(&h, "s1").unwrap().unwrap();
        assert_eq!(r["usage"]["cacheWrite"], Value::Null);
        assert_eq!(r["usage"]["input"], 1);
    }

    #[test]
    fn rows_the_runtime_would_throw_on_are_refused() {
        let mut a = assistant("a0000002", "a0000001", &["x"], "stop", json!({"input": 1}));
        let h = history(&[input("a0000001", None), a.clone()]);
        assert!(reconstruct_result(&h, "s1")
            .unwrap_err()
            .contains("no cost"));
        a["message"]["content"] = json!("text");
        a["message"]["usage"] = Value::Null;
        let h = history(&[input("a0000001", None), a]);
        assert!(reconstruct_result(&h, "s1")
            .unwrap_err()
            .contains("not an array"));
    }
}
