//! `export --redact` on a flue 2.x journal: the rules of beta.7's (`report::redact`: tool
//! arguments, tool results, message text) applied to 2.x's records and rows, keeping everything
//! the fold, the classifier and the reconciler read: every id, type, stop reason, error text,
//! usage figure, signal type, the shape of every value, and whether a text is empty (a string
//! becomes `[redacted: N chars]`, an empty one stays empty: an aborted partial "with text"
//! resumes differently from one without). The export's reports are computed on the redacted
//! rows, and come out as on the journal (tested).
//!
//! A batch spilled into chunks is put back inline, redacted (the reader reads a batch of any
//! size inline), and its chunk rows dropped.

use serde_json::{Map, Value};
use turnscope_core::js::lone_surrogates;

use crate::report::redact::Redaction;

/// The marker for one value (see the module doc).
fn marker(v: &Value) -> Value {
    match v {
        Value::String(s) if s.is_empty() => Value::String(String::new()),
        Value::String(s) => Value::String(format!("[redacted: {} chars]", s.chars().count())),
        Value::Number(_) => Value::String("[redacted: number]".into()),
        Value::Bool(_) => Value::String("[redacted: boolean]".into()),
        other => other.clone(),
    }
}

/// Every scalar under `v` replaced, keys, array lengths and nulls kept.
fn deep(v: &mut Value) {
    match v {
        Value::Object(m) => m.values_mut().for_each(deep),
        Value::Array(a) => a.iter_mut().for_each(deep),
        Value::Null => {}
        other => *other = marker(other),
    }
}

/// The text of content blocks (`[{type: "text", text}]`, or a plain string), other blocks kept.
fn content_text(v: &mut Value) {
    match v {
        Value::String(_) => *v = marker(v),
        Value::Array(blocks) => {
            for b in blocks {
                if let Some(t) = b.get_mut("text") {
                    *t = marker(t);
                }
            }
        }
        _ => {}
    }
}

/// A submission's delivered message redacted, keeping what the runtime's row parser reads of it
/// (`turnscope_core::flue2::submission_parse`): its `kind`, a signal's `type` and `tagName`, an
/// attachment's `type`, `mimeType` and marker, and which values are strings. Every string of text
/// (a body, an attribute's value, a file name, an inline attachment's data) is replaced; any
/// other key, or a message the parser does not read as one, is redacted whole.
fn delivered_message(m: &mut Value) {
    let text = |v: &mut Value| {
        if v.is_string() {
            *v = marker(v);
        }
    };
    let Value::Object(o) = m else {
        return deep(m);
    };
    for (k, v) in o.iter_mut() {
        match k.as_str() {
            "kind" | "type" | "tagName" => {}
            "body" => text(v),
            "attributes" => match v {
                Value::Object(a) => a.values_mut().for_each(text),
                Value::Array(a) => a.iter_mut().for_each(text),
                other => text(other),
            },
            "attachments" => match v {
                Value::Array(blocks) => blocks.iter_mut().for_each(attachment),
                other => text(other),
            },
            _ => deep(v),
        }
    }
}

/// One attachment of a delivered message (see [`delivered_message`]).
fn attachment(a: &mut Value) {
    let Value::Object(o) = a else {
        // Not an attachment the parser reads: its text goes, its type stays.
        if a.is_string() {
            *a = marker(a);
        }
        return;
    };
    for (k, v) in o.iter_mut() {
        match k.as_str() {
            "type" | "mimeType" => {}
            "data"
                if v.as_str().is_some_and(|d| {
                    d.starts_with(turnscope_core::flue2::submission_parse::MARKER_PREFIX)
                }) => {}
            "data" | "filename" => {
                if v.is_string() {
                    *v = marker(v);
                }
            }
            _ => deep(v),
        }
    }
}

/// One record redacted in place.
fn record(r: &mut Map<String, Value>, rules: Redaction) {
    let kind = r
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut field = |key: &str, how: fn(&mut Value)| {
        if let Some(v) = r.get_mut(key) {
            how(v);
        }
    };
    match kind.as_str() {
        "assistant_tool_call" if rules.args => field("arguments", deep),
        "tool_outcome" if rules.results => {
            field("content", deep);
            field("output", deep);
            field("details", deep);
        }
        "user_message" if rules.text => field("content", content_text),
        "assistant_text_delta" | "assistant_reasoning_delta" if rules.text => {
            field("delta", |v| *v = marker(v))
        }
        "compaction" if rules.text => field("summary", |v| *v = marker(v)),
        "resource_snapshot" if rules.text => field("snapshot", deep),
        "state_write" | "message_data_write" | "message_metadata" if rules.text => {
            for key in ["value", "data", "metadata"] {
                field(key, deep);
            }
        }
        _ => {}
    }
}

/// The columns and rows of `table` in an export's `rows` section.
fn table<'a>(rows: &'a mut Value, name: &str) -> Option<(Vec<String>, &'a mut Vec<Value>)> {
    let t = rows.get_mut(name)?;
    let columns: Vec<String> = t
        .get("columns")?
        .as_array()?
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    Some((columns, t.get_mut("rows")?.as_array_mut()?))
}

fn column(columns: &[String], name: &str) -> Option<usize> {
    columns.iter().position(|c| c == name)
}

/// The bytes of an exported BLOB value (`{"blob": [...]}`).
fn blob_bytes(v: &Value) -> Option<Vec<u8>> {
    serde_json::from_value(v.as_object()?.get("blob")?.clone()).ok()
}

/// Redact an export's `rows` section in place.
pub fn redact_rows(rows: &mut Value, rules: Redaction) {
    // Spilled batches, put back together first.
    let mut spilled: Vec<(String, i64, String)> = Vec::new();
    if let Some((cols, chunk_rows)) = table(rows, "flue_conversation_stream_batch_chunks") {
        let (p, s, i, d) = (
            column(&cols, "path"),
            column(&cols, "seq"),
            column(&cols, "chunk_index"),
            column(&cols, "data"),
        );
        if let (Some(p), Some(s), Some(i), Some(d)) = (p, s, i, d) {
            let mut pieces: Vec<(String, i64, i64, String)> = chunk_rows
                .iter()
                .filter_map(|r| {
                    Some((
                        r[p].as_str()?.to_string(),
                        r[s].as_i64()?,
                        r[i].as_i64()?,
                        r[d].as_str()?.to_string(),
                    ))
                })
                .collect();
            pieces.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
            for (path, seq, _, data) in pieces {
                match spilled.last_mut() {
                    Some((lp, ls, text)) if *lp == path && *ls == seq => text.push_str(&data),
                    _ => spilled.push((path, seq, data)),
                }
            }
            chunk_rows.clear();
        }
    }
    if let Some((cols, batch_rows)) = table(rows, "flue_conversation_stream_batches") {
        if let (Some(p), Some(s), Some(d)) = (
            column(&cols, "path"),
            column(&cols, "seq"),
            column(&cols, "data"),
        ) {
            for r in batch_rows.iter_mut() {
                let whole = spilled
                    .iter()
                    .find(|(path, seq, _)| {
                        r[p].as_str() == Some(path) && r[s].as_i64() == Some(*seq)
                    })
                    .map(|(_, _, text)| text.clone());
                // A BLOB (`{"blob": [...]}`, damage the fold judges by its storage class, not its
                // bytes) is redacted like text and written back a BLOB.
                let blob = blob_bytes(&r[d]);
                let Some(text) =
                    whole
                        .or_else(|| r[d].as_str().map(str::to_string))
                        .or_else(|| {
                            blob.as_deref()
                                .map(|b| String::from_utf8_lossy(b).into_owned())
                        })
                else {
                    continue;
                };
                // A batch that is not a JSON array of records is kept as stored: its damage is
                // what the fold judges it by. One with a lone surrogate is JSON to the runtime,
                // so its text is redacted too (the half written back as U+FFFD).
                let Ok(Value::Array(mut records)) = lone_surrogates::from_str::<Value>(&text)
                else {
                    continue;
                };
                for rec in &mut records {
                    if let Value::Object(m) = rec {
                        record(m, rules);
                    }
                }
                let redacted = Value::Array(records).to_string();
                r[d] = match blob {
                    Some(_) => serde_json::json!({ "blob": redacted.into_bytes() }),
                    None => Value::String(redacted),
                };
            }
        }
    }
    if !rules.text {
        return;
    }
    // The submission's input as accepted: a dispatch's message body, a direct prompt's input.
    if let Some((cols, sub_rows)) = table(rows, "flue_agent_submissions") {
        if let Some(pc) = column(&cols, "payload") {
            for r in sub_rows.iter_mut() {
                let Some(Ok(mut v)) = r[pc].as_str().map(lone_surrogates::from_str::<Value>) else {
                    continue;
                };
                if let Some(m) = v.get_mut("message") {
                    delivered_message(m);
                }
                if let Some(m) = v.get_mut("input") {
                    deep(m);
                }
                r[pc] = Value::String(v.to_string());
            }
        }
    }
    if let Some((cols, chunk_rows)) = table(rows, "flue_submission_chunks") {
        if let Some(d) = column(&cols, "data") {
            // Only text: data of another type is what the row parser rejects, kept so.
            for r in chunk_rows.iter_mut().filter(|r| r[d].is_string()) {
                r[d] = marker(&r[d]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_delivered_message_keeps_what_the_row_parser_reads() {
        let mut m = json!({"kind": "signal", "type": "deploy", "tagName": "d.v1", "body": "secret",
            "attributes": {"env": "prod", "n": 5}, "extra": {"k": "v"}});
        delivered_message(&mut m);
        assert_eq!(
            m,
            json!({"kind": "signal", "type": "deploy", "tagName": "d.v1", "body": "[redacted: 6 chars]",
                "attributes": {"env": "[redacted: 4 chars]", "n": 5}, "extra": {"k": "[redacted: 1 chars]"}})
        );
        let mut m = json!({"kind": "user", "body": 5, "attachments": [
            {"type": "image", "data": "__flue_submission_chunks__:0", "mimeType": "image/png", "filename": "a.png"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}, "secret", 5]});
        delivered_message(&mut m);
        assert_eq!(
            m,
            json!({"kind": "user", "body": 5, "attachments": [
                {"type": "image", "data": "__flue_submission_chunks__:0", "mimeType": "image/png", "filename": "[redacted: 5 chars]"},
                {"type": "image", "data": "[redacted: 4 chars]", "mimeType": "image/png"}, "[redacted: 6 chars]", 5]})
        );
    }

    #[test]
    fn texts_arguments_and_results_go_ids_types_and_empty_texts_stay() {
        let mut r = json!({
            "id": "record_1", "type": "assistant_tool_call", "toolCallId": "tc_1", "name": "charge",
            "arguments": {"amountCents": 8900, "to": "x@example.com", "tags": ["a", ""]}
        });
        record(r.as_object_mut().unwrap(), Redaction::ALL);
        assert_eq!(
            r["arguments"],
            json!({"amountCents": "[redacted: number]", "to": "[redacted: 13 chars]", "tags": ["[redacted: 1 chars]", ""]})
        );
        assert_eq!(
            (r["toolCallId"].as_str(), r["name"].as_str()),
            (Some("tc_1"), Some("charge"))
        );
        let mut d = json!({"id": "record_2", "type": "assistant_text_delta", "delta": ""});
        record(d.as_object_mut().unwrap(), Redaction::ALL);
        assert_eq!(d["delta"], "");
        let mut u = json!({"type": "user_message", "content": [{"type": "text", "text": "my card is 4242"}]});
        record(
            u.as_object_mut().unwrap(),
            Redaction {
                args: true,
                results: true,
                text: false,
            },
        );
        assert_eq!(
            u["content"][0]["text"], "my card is 4242",
            "text kept without the rule"
        );
    }
}
