//! The compact parser as it was first written, kept as the test oracle of `core::compact`: it
//! builds a JSON skeleton of the kept keys and reads it with the full accessors
//! (`Entry::from_object`, `CompactFields::of`), which makes it obviously equal to a full parse
//! but slow. The direct parser must give the same entry for every input.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::journal::entry::{CompactFields, Entry, EntryBody, MessageForm};
use crate::journal::text_preview::{preview, raw_preview, PREVIEW_CHARS};

/// `parse_compact`, and whether `data` was not UTF-8 (then read with replacement characters).
pub fn skeleton_parse(position: i64, entry_id: &str, data: &[u8]) -> (Entry, bool) {
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
            e.stored_len = crate::journal::entry::stored_len_of(data.len());
            e.compact = true;
            // Keep the accessors' answers, not the skeleton's JSON maps.
            if let EntryBody::Message(m) = &mut e.body {
                // Just built: the only owner, so this never copies.
                let m = std::sync::Arc::make_mut(m);
                m.form = MessageForm::Compact(CompactFields::of(m));
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
/// And the cost since input's token sums.
const USAGE_KEYS: [&str; 5] = crate::journal::entry::USAGE_KEYS;

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
const KEPT: [&str; 24] = [
    "data",
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
                // An image whose data is a chunk marker (`MessageFlags::IMAGE_MARKERS`).
                Some("image")
                    if block
                        .get("data")
                        .and_then(Value::as_str)
                        .is_some_and(crate::journal::images::is_marker) =>
                {
                    blocks.push(block)
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
                "type" | "id" | "name" | "data" => map.next_value::<Value>()?,
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::skeleton_parse;
    use crate::journal::compact::{parse_compact_checked, parse_compact_with, Previews};
    use crate::journal::compact_de::parse_top;
    use crate::journal::compact_scan::{scan_top, scan_top_previews};

    /// An object's text from (key, value text) pairs: keys may repeat, as a damaged row's can.
    fn object(pairs: Vec<(&str, String)>) -> String {
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(","))
    }

    fn long_text() -> String {
        format!("\"{}\"", "é\\n\\u00e9\\ud83d\\ude00 ab".repeat(40))
    }

    fn odd() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            Just("7".to_string()),
            Just("1.5e3".to_string()),
            Just("true".to_string()),
            Just("\"\"".to_string()),
            Just("\"x\"".to_string()),
            Just("[1,\"a\",null]".to_string()),
            Just("{\"k\":\"v\"}".to_string()),
            Just(long_text()),
        ]
    }

    fn block() -> impl Strategy<Value = String> {
        let pair = prop_oneof![
            prop_oneof![
                Just("\"text\""),
                Just("\"toolCall\""),
                Just("\"thinking\""),
                Just("\"image\""),
                Just("3")
            ]
            .prop_map(|v| ("type", v.to_string())),
            prop_oneof![
                Just("\"__flue_image_chunks__:0\"".to_string()),
                Just("\"\\u005f_flue_image_chunks__:1\"".to_string()),
                Just("\"__flue_image_chunks_\"".to_string()),
                odd()
            ]
            .prop_map(|v| ("data", v)),
            odd().prop_map(|v| ("id", v)),
            odd().prop_map(|v| ("name", v)),
            prop_oneof![Just("\"short\"".to_string()), odd()].prop_map(|v| ("text", v)),
            odd().prop_map(|v| ("arguments", v)),
        ];
        // Mostly text and tool call blocks, whose `type` a later pair may still override.
        let kind = prop_oneof![
            Just("\"text\""),
            Just("\"toolCall\""),
            Just("\"thinking\""),
            Just("\"image\"")
        ];
        prop_oneof![
            8 => (kind, prop::collection::vec(pair, 0..4)).prop_map(|(k, mut pairs)| {
                pairs.insert(0, ("type", k.to_string()));
                object(pairs)
            }),
            1 => odd(),
        ]
    }

    fn usage() -> impl Strategy<Value = String> {
        let pair = prop_oneof![
            odd().prop_map(|v| ("input", v)),
            Just(("output", "88".to_string())),
            Just(("cacheRead", "0".to_string())),
            odd().prop_map(|v| ("cacheWrite", v)),
            Just(("totalTokens", "1292".to_string())),
            prop_oneof![
                Just("{\"total\":0.25}".to_string()),
                Just("{\"total\":1,\"total\":\"x\"}".to_string()),
                odd()
            ]
            .prop_map(|v| ("cost", v)),
        ];
        prop_oneof![
            4 => prop::collection::vec(pair, 0..5).prop_map(object),
            1 => odd(),
        ]
    }

    fn message() -> impl Strategy<Value = String> {
        let content = prop_oneof![
            3 => prop::collection::vec(block(), 0..6).prop_map(|b| format!("[{}]", b.join(","))),
            1 => odd(),
        ];
        let pair = prop_oneof![
            prop_oneof![
                Just("\"assistant\""),
                Just("\"toolResult\""),
                Just("\"signal\""),
                Just("\"user\""),
                Just("\"custom\""),
                Just("1")
            ]
            .prop_map(|v| ("role", v.to_string())),
            odd().prop_map(|v| ("type", v)),
            odd().prop_map(|v| ("stopReason", v)),
            odd().prop_map(|v| ("errorMessage", v)),
            odd().prop_map(|v| ("model", v)),
            odd().prop_map(|v| ("toolCallId", v)),
            odd().prop_map(|v| ("toolName", v)),
            odd().prop_map(|v| ("isError", v)),
            odd().prop_map(|v| ("attributes", v)),
            odd().prop_map(|v| ("details", v)),
            content.clone().prop_map(|v| ("content", v)),
            usage().prop_map(|v| ("usage", v)),
        ];
        prop_oneof![
            8 => (content, prop::collection::vec(pair, 0..6)).prop_map(|(c, mut pairs)| {
                pairs.insert(0, ("content", c));
                object(pairs)
            }),
            1 => odd(),
        ]
    }

    fn entry() -> impl Strategy<Value = String> {
        let pair = prop_oneof![
            prop_oneof![
                Just("\"message\""),
                Just("\"compaction\""),
                Just("\"branch\""),
                Just("2")
            ]
            .prop_map(|v| ("type", v.to_string())),
            odd().prop_map(|v| ("id", v)),
            odd().prop_map(|v| ("parentId", v)),
            odd().prop_map(|v| ("timestamp", v)),
            prop_oneof![Just("{\"dispatchId\":\"d\"}".to_string()), odd()]
                .prop_map(|v| ("dispatch", v)),
            odd().prop_map(|v| ("directSubmissionId", v)),
            prop_oneof![Just("{\"submissionId\":\"s\"}".to_string()), odd()]
                .prop_map(|v| ("submissionTerminal", v)),
            odd().prop_map(|v| ("summary", v)),
            odd().prop_map(|v| ("firstKeptEntryId", v)),
            odd().prop_map(|v| ("tokensBefore", v)),
            message().prop_map(|v| ("message", v)),
        ];
        // Mostly messages, whose `type` a later pair may still override.
        let kind = prop_oneof![4 => Just("\"message\""), 1 => Just("\"compaction\"")];
        (kind, prop::collection::vec(pair, 0..8), message()).prop_map(|(k, mut pairs, m)| {
            pairs.insert(0, ("type", k.to_string()));
            pairs.insert(1, ("message", m));
            object(pairs)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_direct_parser_gives_the_skeleton_parsers_entry(raw in entry()) {
            let (direct, skeleton) = (
                parse_compact_checked(4, "col", raw.as_bytes()),
                skeleton_parse(4, "col", raw.as_bytes()),
            );
            // Debug text: the usage figures are NaN when missing, and NaN != NaN.
            prop_assert_eq!(format!("{direct:?}"), format!("{skeleton:?}"), "{}", raw);
            // And the row was the scanner's to read, not left to the serde visitors.
            prop_assert_eq!(scan_top(raw.as_bytes()).is_some(), parse_top(&raw).is_some(), "{}", raw);
            // A scan that does not build previews takes the same rows.
            prop_assert_eq!(
                scan_top_previews(raw.as_bytes(), false).is_some(),
                scan_top(raw.as_bytes()).is_some(),
                "{}", raw
            );
        }

        /// Damaged rows (a byte inserted, removed or the text cut short): the byte scanner gives
        /// the serde visitors' entry, whether they accept the row or reject it.
        #[test]
        fn the_byte_scanner_gives_the_serde_visitors_entry_on_damaged_rows(
            raw in entry(),
            at in 0.0..1.0f64,
            edit in 0..3u8,
            byte in prop::sample::select(&br#""\,:{}[]0-.eEu tx"#[..]),
        ) {
            let mut cut = (raw.len() as f64 * at) as usize;
            while !raw.is_char_boundary(cut) {
                cut -= 1;
            }
            let mut damaged = raw[..cut].to_string();
            match edit {
                0 => damaged.push(char::from(byte)),
                1 => {}
                _ => {
                    damaged.push(char::from(byte));
                    damaged.push_str(&raw[cut..]);
                }
            }
            if edit == 1 {
                // Removed: the character at the cut.
                let rest = &raw[cut..];
                damaged.push_str(rest.char_indices().nth(1).map_or("", |(i, _)| &rest[i..]));
            }
            let (scanned, serde) = (
                parse_compact_checked(4, "col", damaged.as_bytes()),
                parse_compact_with(4, "col", damaged.as_bytes(), parse_top, Previews::Keep),
            );
            prop_assert_eq!(format!("{scanned:?}"), format!("{serde:?}"), "{}", damaged);
            prop_assert_eq!(
                scan_top_previews(damaged.as_bytes(), false).is_some(),
                scan_top(damaged.as_bytes()).is_some(),
                "{}", damaged
            );
        }

        /// Rows that are not UTF-8 (a byte sequence no character has, put anywhere): the entry
        /// and the lossy flag are those of the whole row's UTF-8 check and the serde visitors.
        #[test]
        fn the_byte_scanner_finds_rows_that_are_not_utf8(
            raw in entry(),
            at in 0.0..1.0f64,
            bad in prop::sample::select(vec![
                &[0xffu8][..], &[0x80], &[0xc3], &[0xc0, 0xaf], &[0xe2, 0x82],
                &[0xed, 0xa0, 0x80], &[0xf0, 0x8f, 0xbf, 0xbf], &[0xf4, 0x90, 0x80, 0x80],
            ]),
        ) {
            let cut = (raw.len() as f64 * at) as usize;
            let mut damaged = raw.as_bytes()[..cut].to_vec();
            damaged.extend_from_slice(bad);
            damaged.extend_from_slice(&raw.as_bytes()[cut..]);
            let (scanned, serde) = (
                parse_compact_checked(4, "col", &damaged),
                parse_compact_with(4, "col", &damaged, parse_top, Previews::Keep),
            );
            prop_assert!(scanned.1, "not found lossy: {:x?}", damaged);
            prop_assert_eq!(format!("{scanned:?}"), format!("{serde:?}"));
        }
    }
}
