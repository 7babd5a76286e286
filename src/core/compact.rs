//! Compact entries: one pass over an entry's stored JSON that keeps only what the classifier, the
//! planner, `show`'s summaries and the tree rows read, and skips the rest (tool arguments, result
//! bodies, thinking, `details`) without building it.
//!
//! A compact entry is an ordinary `Entry` built by the same `Entry::from_object` as a full parse,
//! so every rule (id fallback, non-string types, markers) is applied identically. Its message is a
//! skeleton: the small fields as stored, `content` with only each block's `type`, a tool call's
//! `id`/`name`, and text cut to `PREVIEW_CHARS`. `raw` is empty; callers that need the whole entry
//! fetch it by id.
//!
//! Anything unusual (not an object, a non-object content block, a non-string text, content that
//! is neither a string nor an array, bytes that are not UTF-8) falls back to the full parse, so the
//! compact parser never has to reproduce the full parser's error handling.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::entry::{CompactFields, Entry, EntryBody};

/// Characters of text kept for a compact entry's preview (rows show at most 60 after cleaning).
pub const PREVIEW_CHARS: usize = 96;

/// Parse one stored row compactly (full parse when the shape is unusual). Never fails.
pub fn parse_compact(position: i64, entry_id: &str, data: &[u8]) -> Entry {
    parse_compact_checked(position, entry_id, data).0
}

/// `parse_compact`, and whether `data` was not UTF-8 (then read with replacement characters).
pub fn parse_compact_checked(position: i64, entry_id: &str, data: &[u8]) -> (Entry, bool) {
    let text = std::str::from_utf8(data);
    let lossy = text.is_err();
    let parsed = text.ok().and_then(|text| {
        // A derived or map visitor would also accept a JSON array; only objects are compact.
        if text.trim_start().starts_with('{') {
            let mut de = serde_json::Deserializer::from_str(text);
            let obj = (&mut de).deserialize_map(TopVisitor).ok()?;
            de.end().ok()?;
            Some(obj)
        } else {
            None
        }
    });
    match parsed {
        Some(obj) => {
            let mut e = Entry::from_object(position, entry_id, obj);
            e.stored_len = data.len();
            e.compact = true;
            // Keep the accessors' answers, not the skeleton's JSON maps.
            if let EntryBody::Message(m) = &mut e.body {
                m.compact = Some(Box::new(CompactFields::of(m)));
                m.value = Value::Null;
            }
            (e, false)
        }
        None => (
            Entry::parse(position, entry_id, &String::from_utf8_lossy(data)),
            lossy,
        ),
    }
}

/// Top-level keys `Entry::from_object` reads; every other key is skipped.
const TOP_KEYS: [&str; 11] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "dispatch",
    "directSubmissionId",
    "submissionTerminal",
    "firstKeptEntryId",
    "tokensBefore",
    "message",
    "summary",
];

/// Message keys the accessors of `entry::Message`, the planner and the tree rows read (besides
/// `content` and `usage`). Display-only fields (`api`, `provider`, `responseId`, …) are left to
/// the full body, fetched when an entry is looked at.
const MESSAGE_KEYS: [&str; 9] = [
    "role",
    "type",
    "stopReason",
    "errorMessage",
    "model",
    "toolCallId",
    "toolName",
    "isError",
    "attributes",
];

/// `usage` keys kept: what overflow detection reads, and the tree row's token and cost figures.
const USAGE_KEYS: [&str; 3] = ["input", "output", "cacheRead"];

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(KeyText(key)) = map.next_key()? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let value = match key {
                // `message` must be an object for the compact form; else the full parse decides.
                "message" => map.next_value_seed(MessageSeed)?,
                "summary" => map.next_value_seed(PreviewOrValue)?,
                k if TOP_KEYS.contains(&k) => map.next_value::<Value>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            // A duplicate key replaces the earlier value, as in a full parse.
            out.insert(key.to_string(), value);
        }
        Ok(out)
    }
}

/// An object key: one the compact form keeps (without allocating), or `None` for any other.
struct KeyText(Option<&'static str>);

/// Every key any compact visitor keeps.
const KEPT: [&str; 23] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "dispatch",
    "directSubmissionId",
    "submissionTerminal",
    "firstKeptEntryId",
    "tokensBefore",
    "message",
    "summary",
    "role",
    "stopReason",
    "errorMessage",
    "model",
    "toolCallId",
    "toolName",
    "isError",
    "attributes",
    "content",
    "usage",
    "name",
    "text",
];

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(KEPT.iter().find(|k| **k == v).copied()))
            }
        }
        d.deserialize_str(V)
    }
}

struct MessageSeed;

impl<'de> DeserializeSeed<'de> for MessageSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(KeyText(key)) = map.next_key()? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let value = match key {
                "content" => map.next_value_seed(ContentSeed)?,
                "usage" => trim_usage(map.next_value::<Value>()?),
                k if MESSAGE_KEYS.contains(&k) => map.next_value::<Value>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            out.insert(key.to_string(), value);
        }
        Ok(Value::Object(out))
    }
}

/// `content`: a string (kept as a preview) or an array of blocks.
struct ContentSeed;

impl<'de> DeserializeSeed<'de> for ContentSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("string or array content")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(preview(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // Only tool calls and text count (`tool_calls()`, `text()`); text only until the preview
        // is full, since nothing shows more of a compact entry.
        let mut blocks = Vec::new();
        let mut text_left = PREVIEW_CHARS;
        while let Some(block) = seq.next_element_seed(BlockSeed)? {
            match block.get("type").and_then(Value::as_str) {
                Some("toolCall") => blocks.push(block),
                Some("text") if text_left > 0 => {
                    let n = block
                        .get("text")
                        .and_then(Value::as_str)
                        .map_or(0, |t| t.chars().count());
                    text_left = text_left.saturating_sub(n.max(1));
                    blocks.push(block);
                }
                _ => {}
            }
        }
        Ok(Value::Array(blocks))
    }
}

/// One content block: `type`, a tool call's `id` and `name`, a text block's text (preview).
struct BlockSeed;

impl<'de> DeserializeSeed<'de> for BlockSeed {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(KeyText(key)) = map.next_key()? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let value = match key {
                "type" | "id" | "name" => map.next_value::<Value>()?,
                "text" => {
                    let raw = map.next_value::<&'de serde_json::value::RawValue>()?;
                    raw_preview(raw.get()).map_err(de::Error::custom)?
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            out.insert(key.to_string(), value);
        }
        Ok(Value::Object(out))
    }
}

/// A JSON value's preview from its raw text: a string cut to `PREVIEW_CHARS` after unescaping
/// only a prefix (tool results can be megabytes), any other value as stored.
fn raw_preview(raw: &str) -> Result<Value, serde_json::Error> {
    if !raw.starts_with('"') {
        return serde_json::from_str(raw);
    }
    // Up to 12 bytes per character (a surrogate pair of escapes): this prefix holds the preview.
    let limit = PREVIEW_CHARS * 12 + 2;
    if raw.len() > limit {
        let bytes = raw.as_bytes();
        let mut cut = 1;
        let mut i = 1;
        while i < limit {
            if bytes[i] == b'\\' {
                i += if bytes.get(i + 1) == Some(&b'u') {
                    6
                } else {
                    2
                };
            } else {
                i += 1;
            }
            if i <= limit && raw.is_char_boundary(i) {
                cut = i;
            }
        }
        let head = format!("{}\"", &raw[..cut]);
        // A cut between the halves of a surrogate pair does not parse: then read it all.
        if let Ok(s) = serde_json::from_str::<String>(&head) {
            return Ok(Value::String(preview(&s)));
        }
    }
    let s: String = serde_json::from_str(raw)?;
    Ok(Value::String(preview(&s)))
}

/// A string as a preview, any other value as stored (a compaction `summary`).
struct PreviewOrValue;

impl<'de> DeserializeSeed<'de> for PreviewOrValue {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match v {
            Value::String(s) if s.chars().count() > PREVIEW_CHARS => Value::String(preview(&s)),
            other => other,
        })
    }
}

/// `usage` with only `USAGE_KEYS` and `cost.total`.
fn trim_usage(v: Value) -> Value {
    let Value::Object(mut u) = v else { return v };
    let mut out = Map::new();
    for k in USAGE_KEYS {
        if let Some(x) = u.remove(k) {
            out.insert(k.to_string(), x);
        }
    }
    if let Some(total) = u.get("cost").and_then(|c| c.get("total")) {
        out.insert("cost".into(), serde_json::json!({ "total": total }));
    }
    Value::Object(out)
}

fn preview(s: &str) -> String {
    match s.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::entry::Role;

    const ASSISTANT: &str = r#"{"type":"message","id":"e61f0b2c","parentId":"5d2a7f13","timestamp":"2026-01-05T09:12:45.870Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Need the weather.","thinkingSignature":"Eq"},{"type":"text","text":"Checking\nboth."},{"type":"toolCall","id":"toolu_01XyZ","name":"get_weather","arguments":{"city":"Oslo"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-haiku-4-5","usage":{"input":1204,"output":88,"cacheRead":0,"cacheWrite":0,"totalTokens":1292,"cost":{"total":0.001644}},"stopReason":"toolUse","timestamp":1767604364140}}"#;

    #[test]
    fn keeps_what_the_classifier_reads() {
        let c = parse_compact(3, "e61f0b2c", ASSISTANT.as_bytes());
        let f = Entry::parse(3, "e61f0b2c", ASSISTANT);
        assert!(c.compact && c.raw.is_empty());
        assert_eq!(c.stored_len, ASSISTANT.len());
        assert_eq!(
            (&c.id, &c.parent_id, &c.timestamp),
            (&f.id, &f.parent_id, &f.timestamp)
        );
        let (cm, fm) = (c.message().unwrap(), f.message().unwrap());
        assert_eq!(cm.role, Role::Assistant);
        assert_eq!(cm.stop_reason(), fm.stop_reason());
        assert_eq!(cm.usage("input"), 1204.0);
        assert_eq!(cm.model(), Some("claude-haiku-4-5"));
        assert_eq!(cm.text(), fm.text());
        let (cc, fc) = (cm.tool_calls(), fm.tool_calls());
        assert_eq!(cc.len(), 1);
        assert_eq!(
            (cc[0].id_text(), &cc[0].name),
            (fc[0].id_text(), &fc[0].name)
        );
        assert_eq!(cc[0].arguments, Value::Null, "arguments are not kept");
    }

    #[test]
    fn cuts_long_text_and_skips_bodies() {
        let long = "é".repeat(5000);
        let raw = format!(
            r#"{{"type":"message","id":"r","parentId":"a","message":{{"role":"toolResult","toolCallId":"t1","toolName":"x","content":[{{"type":"text","text":"{long}"}}],"details":{{"big":"{long}"}},"isError":true}}}}"#
        );
        let c = parse_compact(1, "r", raw.as_bytes());
        let m = c.message().unwrap();
        assert_eq!(m.text().chars().count(), PREVIEW_CHARS);
        assert!(m.is_error());
        assert_eq!(m.value, Value::Null, "the skeleton is not kept");
    }

    #[test]
    fn unusual_shapes_fall_back_to_the_full_parse() {
        for raw in [
            "{not json",
            "[1,2]",
            r#"{"type":"message","id":"x","message":"text"}"#,
            r#"{"type":"message","id":"x","message":{"role":"user","content":[1]}}"#,
            r#"{"type":"message","id":"x","message":{"role":"user","content":7}}"#,
        ] {
            let c = parse_compact(0, "x", raw.as_bytes());
            assert_eq!(c, Entry::parse(0, "x", raw), "{raw}");
        }
        // Not UTF-8: read with replacement characters, as the store reads text.
        let bytes = b"{\"type\":\"message\xff\"}";
        let c = parse_compact(0, "x", bytes);
        assert_eq!(c, Entry::parse(0, "x", &String::from_utf8_lossy(bytes)));
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_like_a_full_parse() {
        let raw = r#"{"type":"message","id":"a","id":"b","message":{"role":"user","role":"assistant","stopReason":"stop"}}"#;
        let (c, f) = (
            parse_compact(0, "z", raw.as_bytes()),
            Entry::parse(0, "z", raw),
        );
        assert_eq!(c.id, f.id);
        assert_eq!(c.message().unwrap().role, f.message().unwrap().role);
    }
}
