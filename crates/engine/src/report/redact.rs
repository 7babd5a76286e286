//! `--redact`: an export without what operators must not pass on (tool arguments, tool results,
//! message text), keeping everything turnscope judges a submission by: every id, key, type,
//! role, stop reason, error text and usage figure, the shape of every value (objects keep their
//! keys, arrays their length, a string becomes a marker with its length). The rows are redacted
//! before the export's reports are computed, and the classification and the plan come out the
//! same (tested).

use serde_json::{json, Map, Value};

use turnscope_core::journal::submission_rows::StoredValue;
use turnscope_core::js::lone_surrogates;
use turnscope_store::export_db::ExportRows;

/// Which values are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redaction {
    /// `arguments` of tool calls (in assistant messages and the turn journal's tool request).
    pub args: bool,
    /// Tool results: their `content` and `details`.
    pub results: bool,
    /// Message text: user and assistant text, thinking, a dispatch's input (its payload and its
    /// input signal), a direct prompt's message, compaction summaries, streamed deltas.
    pub text: bool,
}

impl Redaction {
    pub const ALL: Redaction = Redaction {
        args: true,
        results: true,
        text: true,
    };
    pub const RULES: [&'static str; 3] = ["args", "results", "text"];

    /// `args,results,text` (any of them, in any order; `all` for the three).
    pub fn parse(text: &str) -> Result<Redaction, String> {
        let mut r = Redaction {
            args: false,
            results: false,
            text: false,
        };
        for part in text.split(',').map(str::trim) {
            match part {
                "args" => r.args = true,
                "results" => r.results = true,
                "text" => r.text = true,
                "all" => r = Redaction::ALL,
                other => {
                    return Err(format!(
                        "unknown redaction rule {other:?} (the rules: args, results, text; all three when --redact has no value)"
                    ))
                }
            }
        }
        Ok(r)
    }

    /// The redaction an export document records (`redaction.rules`), if any.
    pub fn of_document(doc: &Value) -> Option<Redaction> {
        let rules = doc.get("redaction")?.get("rules")?.as_array()?;
        let names: Vec<&str> = rules.iter().filter_map(Value::as_str).collect();
        Redaction::parse(&names.join(",")).ok()
    }

    pub fn rules(&self) -> Vec<&'static str> {
        let on = [self.args, self.results, self.text];
        Redaction::RULES
            .iter()
            .zip(on)
            .filter(|(_, on)| *on)
            .map(|(r, _)| *r)
            .collect()
    }

    /// The document's `redaction` object.
    pub fn to_json(&self) -> Value {
        json!({
            "rules": self.rules(),
            "marker": "[redacted: N chars] for a string; [redacted: number] and [redacted: boolean] for other values; objects keep their keys, arrays their length",
            "kept": "ids, keys, types, roles, stop reasons, error messages, usage, timestamps, the submission rows' columns but the payload's text, the turn journal but tool arguments",
        })
    }

    /// Redact every row of an export in place.
    pub fn apply(&self, rows: &mut ExportRows) {
        self.image_chunks(rows);
        for e in &mut rows.entries {
            let Ok(text) = std::str::from_utf8(&e.data) else {
                continue;
            };
            // An entry that is not JSON is kept as stored: its damage is what it is judged by.
            // One with a lone surrogate is JSON to the runtime, so its text is redacted too (the
            // half written back as U+FFFD, in a copy that is changed anyway).
            let Ok(mut v) = lone_surrogates::from_str::<Value>(text) else {
                continue;
            };
            if self.entry(&mut v) {
                e.data = v.to_string().into_bytes();
            }
        }
        for r in &mut rows.submissions {
            if !self.text {
                continue;
            }
            if let Ok(mut v) = lone_surrogates::from_str::<Value>(&r.payload) {
                let changed = match v.get_mut("payload").and_then(|p| p.get_mut("message")) {
                    Some(m @ Value::String(_)) => {
                        *m = marker(m);
                        true
                    }
                    _ => match v.get_mut("input") {
                        Some(input) => {
                            deep(input);
                            true
                        }
                        None => false,
                    },
                };
                if changed {
                    r.payload = v.to_string();
                    // A payload stored in another class is exported as stored too: redacted
                    // alike, in its class (its text would otherwise leave in `storedAs`).
                    if let Some(s) = r.stored_as.as_mut().filter(|s| s.column == "payload") {
                        let bytes = r.payload.clone().into_bytes();
                        s.value = match s.value.take() {
                            Some(StoredValue::Blob(_)) => Some(StoredValue::Blob(bytes)),
                            Some(StoredValue::Text(_)) => Some(StoredValue::Text(bytes)),
                            other => other,
                        };
                    }
                }
            }
        }
        if self.args {
            for j in &mut rows.journals {
                let Some(t) = &j.tool_request_json else {
                    continue;
                };
                let Ok(mut v) = lone_surrogates::from_str::<Value>(t) else {
                    continue;
                };
                if let Some(Value::Array(calls)) = v.get_mut("toolCalls") {
                    for c in calls {
                        if let Some(a) = c.get_mut("arguments") {
                            deep(a);
                        }
                    }
                }
                j.tool_request_json = Some(v.to_string());
            }
        }
        if self.text {
            for (_, _, body) in &mut rows.stream_chunks {
                let Ok(mut v) = lone_surrogates::from_str::<Value>(body) else {
                    continue;
                };
                if let Value::Array(events) = &mut v {
                    for ev in events {
                        for key in ["delta", "content"] {
                            if let Some(s @ Value::String(_)) = ev.get_mut(key) {
                                *s = marker(s);
                            }
                        }
                    }
                }
                *body = v.to_string();
            }
        }
    }

    /// Redact one entry's JSON; whether anything changed.
    fn entry(&self, v: &mut Value) -> bool {
        let mut changed = false;
        if self.text && v.get("type").and_then(Value::as_str) == Some("compaction") {
            if let Some(s @ Value::String(_)) = v.get_mut("summary") {
                *s = marker(s);
                changed = true;
            }
        }
        let Some(Value::Object(m)) = v.get_mut("message") else {
            return changed;
        };
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match role.as_str() {
            "user" if self.text => {
                changed |= self.content(m, true);
            }
            "assistant" => {
                if let Some(Value::Array(blocks)) = m.get_mut("content") {
                    for b in blocks {
                        let kind = b
                            .get("type")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        match kind.as_str() {
                            "text" if self.text => changed |= replace(b, "text"),
                            "thinking" if self.text => changed |= replace(b, "thinking"),
                            "toolCall" if self.args => {
                                if let Some(a) = b.get_mut("arguments") {
                                    deep(a);
                                    changed = true;
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            "toolResult" if self.results => {
                changed |= self.content(m, false);
                if let Some(d) = m.get_mut("details") {
                    deep(d);
                    changed = true;
                }
            }
            // The dispatched input; the runtime's own signals (fixed texts) are kept.
            "signal"
                if self.text && m.get("type").and_then(Value::as_str) == Some("dispatch_input") =>
            {
                changed |= replace_in(m, "content");
            }
            _ => {}
        }
        changed
    }

    /// The data of the image chunks: a tool result's images under `results`, a user message's and
    /// a direct prompt's (owner `submission`) under `text`, an image of any other entry (damage)
    /// under either. The markers
    /// that refer to them stay, and so do the rows' other columns: the copy is judged as the
    /// journal is, the runtime checking only that `data` is text.
    fn image_chunks(&self, rows: &mut ExportRows) {
        // Each owning entry read once: a session's images can have thousands of chunk rows.
        let owners: std::collections::HashSet<&str> = rows
            .image_chunks
            .iter()
            .map(|c| c.owner_part.as_str())
            .collect();
        let roles: std::collections::HashMap<&str, String> = rows
            .entries
            .iter()
            .filter(|e| owners.contains(e.entry_id.as_str()))
            .filter_map(|e| {
                let v = serde_json::from_slice::<Value>(&e.data).ok()?;
                let role = v.get("message")?.get("role")?.as_str()?.to_string();
                Some((e.entry_id.as_str(), role))
            })
            .collect();
        let redact: Vec<bool> = rows
            .image_chunks
            .iter()
            .map(|c| {
                if c.owner_kind == "submission" {
                    return self.text;
                }
                match roles.get(c.owner_part.as_str()).map(String::as_str) {
                    Some("toolResult") => self.results,
                    Some("user") => self.text,
                    _ => self.results || self.text,
                }
            })
            .collect();
        for (c, redact) in rows.image_chunks.iter_mut().zip(redact) {
            if let (true, StoredValue::Text(t)) = (redact, &c.data) {
                let n = String::from_utf8_lossy(t).chars().count();
                c.data = StoredValue::Text(format!("[redacted: {n} chars]").into_bytes());
            }
        }
    }

    /// A message's `content`: a string, or text and image blocks.
    fn content(&self, m: &mut Map<String, Value>, _user: bool) -> bool {
        match m.get_mut("content") {
            Some(s @ Value::String(_)) => {
                *s = marker(s);
                true
            }
            Some(Value::Array(blocks)) => {
                let mut changed = false;
                for b in blocks {
                    let kind = b.get("type").and_then(Value::as_str).map(str::to_string);
                    match kind.as_deref() {
                        Some("text") => changed |= replace(b, "text"),
                        Some("image") => {
                            // A reference to the image's chunk rows is kept; inline data is not.
                            let chunked = b
                                .get("data")
                                .and_then(Value::as_str)
                                .is_some_and(|d| d.starts_with("__flue_image_chunks__:"));
                            if !chunked {
                                changed |= replace(b, "data");
                            }
                        }
                        _ => {}
                    }
                }
                changed
            }
            _ => false,
        }
    }
}

/// The marker that replaces a string: its length in characters.
fn marker(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(format!("[redacted: {} chars]", s.chars().count())),
        Value::Number(_) => Value::String("[redacted: number]".into()),
        Value::Bool(_) => Value::String("[redacted: boolean]".into()),
        other => other.clone(),
    }
}

/// Replace every scalar under `v`, keeping keys, array lengths and nulls.
fn deep(v: &mut Value) {
    match v {
        Value::Object(m) => m.values_mut().for_each(deep),
        Value::Array(a) => a.iter_mut().for_each(deep),
        Value::Null => {}
        other => *other = marker(other),
    }
}

fn replace(block: &mut Value, key: &str) -> bool {
    match block {
        Value::Object(m) => replace_in(m, key),
        _ => false,
    }
}

fn replace_in(m: &mut Map<String, Value>, key: &str) -> bool {
    match m.get_mut(key) {
        Some(s @ Value::String(_)) => {
            *s = marker(s);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_markers_keep_the_shape() {
        assert_eq!(Redaction::parse("args,results,text"), Ok(Redaction::ALL));
        assert_eq!(Redaction::parse("all"), Ok(Redaction::ALL));
        assert_eq!(Redaction::parse("text").unwrap().rules(), vec!["text"]);
        assert!(Redaction::parse("travel-desk")
            .unwrap_err()
            .contains("unknown redaction rule"));
        let mut v = json!({"city": "Oslo", "n": 3, "ok": true, "tags": ["a", null]});
        deep(&mut v);
        assert_eq!(
            v,
            json!({"city": "[redacted: 4 chars]", "n": "[redacted: number]",
                   "ok": "[redacted: boolean]", "tags": ["[redacted: 1 chars]", null]})
        );
    }

    #[test]
    fn an_assistant_keeps_ids_names_and_its_error_text() {
        let mut e = json!({"type":"message","id":"e1","message":{"role":"assistant","content":[
            {"type":"text","text":"secret"},
            {"type":"toolCall","id":"t1","name":"get","arguments":{"key":"sk-123"}}],
            "stopReason":"error","errorMessage":"429 rate limit"}});
        assert!(Redaction::ALL.entry(&mut e));
        let s = e.to_string();
        assert!(!s.contains("secret") && !s.contains("sk-123"), "{s}");
        for kept in ["\"t1\"", "\"get\"", "429 rate limit", "\"key\""] {
            assert!(s.contains(kept), "{kept}: {s}");
        }
    }
}
