//! The visitors of the compact parser (`core::compact`): each reads one level of an entry's JSON
//! straight into the few fields the compact form keeps and skips every other value with
//! `IgnoredAny`, so no JSON map is built for the entry, its message or its content blocks.
//!
//! Duplicate keys: the later value replaces the earlier one, as in a full parse (a JSON map keeps
//! the last insert). A value of a type the compact form does not handle (a `message` or content
//! block that is not an object, `content` that is neither a string nor an array) is an error, and
//! the caller falls back to the full parse.

use std::fmt;

use compact_str::CompactString;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::journal::entry::js_to_string;
use crate::journal::text_preview::{preview, raw_preview, PREVIEW_CHARS};

/// The top-level keys `Entry::from_object` reads, as parsed. `id`, `parentId` and `timestamp` are
/// read only for their string (`StrValue`): the last value when it is a string, else `None`.
#[derive(Default)]
pub(super) struct Top {
    pub type_name: Option<Value>,
    pub id: Option<CompactString>,
    pub parent_id: Option<CompactString>,
    pub timestamp: Option<CompactString>,
    pub dispatch: Option<Value>,
    pub direct_submission_id: Option<Value>,
    pub submission_terminal: Option<Value>,
    pub first_kept_entry_id: Option<Value>,
    pub tokens_before: Option<Value>,
    pub message: Option<Msg>,
    /// A compaction's `summary`: a string cut to the preview, any other value as stored.
    pub summary: Option<Value>,
}

/// The message keys the accessors of `entry::Message`, the planner and the tree rows read.
/// Display-only fields (`api`, `provider`, `responseId`, …) are left to the full body.
#[derive(Default)]
pub(super) struct Msg {
    pub role: Option<Value>,
    pub signal_type: Option<Value>,
    pub stop_reason: Option<Value>,
    pub error_message: Option<Value>,
    pub model: Option<Value>,
    pub tool_call_id: Option<Value>,
    /// Read only for its string (`StrValue`), like the entry's ids.
    pub tool_name: Option<CompactString>,
    pub is_error: Option<Value>,
    pub attributes: Option<Value>,
    pub content: Option<Content>,
    /// `Some(None)`: `usage` is present but not an object.
    pub usage: Option<Option<[f64; 6]>>,
}

/// `content` as the compact form keeps it.
pub(super) enum Content {
    /// String content, cut to the preview.
    Text(String),
    Blocks {
        /// Tool calls as (id as stored, `String(name)`), in content order.
        calls: Vec<(Option<Value>, String)>,
        /// The previews of the text blocks read until the preview was full.
        texts: Vec<String>,
        /// An image block's data is a chunk marker (`MessageFlags::IMAGE_MARKERS`).
        image_markers: bool,
    },
}

/// Parse one entry object.
pub(super) fn parse_top(text: &str) -> Option<Top> {
    let mut de = serde_json::Deserializer::from_str(text);
    let top = (&mut de).deserialize_map(TopVisitor).ok()?;
    de.end().ok()?;
    Some(top)
}

/// An object key the compact form keeps (matched without allocating), or `None` for any other.
struct Key(Option<&'static str>);

/// Every key any visitor below keeps.
const KEPT: [&str; 31] = [
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
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
    "cost",
    "total",
];

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(KEPT.iter().find(|k| **k == v).copied()))
            }
        }
        d.deserialize_str(V)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut t = Top::default();
        while let Some(Key(key)) = map.next_key()? {
            let slot = match key {
                Some("message") => {
                    t.message = Some(map.next_value_seed(MsgSeed)?);
                    continue;
                }
                Some("summary") => {
                    t.summary = Some(summary_preview(map.next_value()?));
                    continue;
                }
                Some("id") => {
                    t.id = map.next_value::<StrValue>()?.0;
                    continue;
                }
                Some("parentId") => {
                    t.parent_id = map.next_value::<StrValue>()?.0;
                    continue;
                }
                Some("timestamp") => {
                    t.timestamp = map.next_value::<StrValue>()?.0;
                    continue;
                }
                Some("type") => &mut t.type_name,
                Some("dispatch") => &mut t.dispatch,
                Some("directSubmissionId") => &mut t.direct_submission_id,
                Some("submissionTerminal") => &mut t.submission_terminal,
                Some("firstKeptEntryId") => &mut t.first_kept_entry_id,
                Some("tokensBefore") => &mut t.tokens_before,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(t)
    }
}

/// A value kept only when it is a string, straight into a `CompactString` (inline up to 24
/// bytes, so the runtime's ids and timestamps allocate nothing). Any other value is still read
/// as `Value` reads it, so this accepts exactly the rows a full parse accepts; it is `None`.
pub(super) struct StrValue(pub Option<CompactString>);

impl<'de> Deserialize<'de> for StrValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StrValue, E> {
                Ok(StrValue(Some(v.into())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<StrValue, E> {
                Ok(StrValue(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<StrValue, E> {
                Ok(StrValue(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<StrValue, E> {
                Ok(StrValue(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<StrValue, E> {
                Ok(StrValue(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<StrValue, E> {
                Ok(StrValue(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<StrValue, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(StrValue(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<StrValue, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(StrValue(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A compaction's `summary` as kept: a string cut to the preview, any other value as stored.
pub(super) fn summary_preview(v: Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > PREVIEW_CHARS => Value::String(preview(&s)),
        other => other,
    }
}

/// The next value as raw text (borrowed from the input, not copied).
fn map_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<&'de RawValue, A::Error> {
    map.next_value::<&'de RawValue>()
}

struct MsgSeed;

impl<'de> DeserializeSeed<'de> for MsgSeed {
    type Value = Msg;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Msg, D::Error> {
        d.deserialize_map(MsgVisitor)
    }
}

struct MsgVisitor;

impl<'de> Visitor<'de> for MsgVisitor {
    type Value = Msg;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Msg, A::Error> {
        let mut m = Msg::default();
        while let Some(Key(key)) = map.next_key()? {
            let slot = match key {
                Some("content") => {
                    m.content = Some(map.next_value_seed(ContentSeed)?);
                    continue;
                }
                Some("usage") => {
                    let raw = map_value(&mut map)?;
                    m.usage = Some(parse_usage(raw.get()).map_err(de::Error::custom)?);
                    continue;
                }
                Some("role") => &mut m.role,
                Some("type") => &mut m.signal_type,
                Some("stopReason") => &mut m.stop_reason,
                Some("errorMessage") => &mut m.error_message,
                Some("model") => &mut m.model,
                Some("toolCallId") => &mut m.tool_call_id,
                Some("toolName") => {
                    m.tool_name = map.next_value::<StrValue>()?.0;
                    continue;
                }
                Some("isError") => &mut m.is_error,
                Some("attributes") => &mut m.attributes,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(m)
    }
}

/// `usage` input, output, cacheRead, cacheWrite, totalTokens and cost.total (`entry::USAGE_KEYS`
/// order; NaN when missing or not a number); `None` when `usage` is not an object.
pub(super) fn parse_usage(raw: &str) -> Result<Option<[f64; 6]>, serde_json::Error> {
    if !raw.starts_with('{') {
        return Ok(None);
    }
    let mut de = serde_json::Deserializer::from_str(raw);
    (&mut de).deserialize_map(UsageVisitor).map(Some)
}

struct UsageVisitor;

impl<'de> Visitor<'de> for UsageVisitor {
    type Value = [f64; 6];

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a usage object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<[f64; 6], A::Error> {
        let mut u = [f64::NAN; 6];
        let number = |v: Value| v.as_f64().unwrap_or(f64::NAN);
        while let Some(Key(key)) = map.next_key()? {
            let i = match key {
                Some("input") => 0,
                Some("output") => 1,
                Some("cacheRead") => 2,
                Some("cacheWrite") => 3,
                Some("totalTokens") => 4,
                Some("cost") => {
                    let raw = map_value(&mut map)?;
                    u[crate::journal::entry::USAGE_COST] = if raw.get().starts_with('{') {
                        let mut de = serde_json::Deserializer::from_str(raw.get());
                        (&mut de)
                            .deserialize_map(CostVisitor)
                            .map_err(de::Error::custom)?
                    } else {
                        f64::NAN
                    };
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            u[i] = number(map.next_value()?);
        }
        Ok(u)
    }
}

/// `cost.total` as a number (NaN when missing or not a number).
struct CostVisitor;

impl<'de> Visitor<'de> for CostVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a cost object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<f64, A::Error> {
        let mut total = f64::NAN;
        while let Some(Key(key)) = map.next_key()? {
            if key == Some("total") {
                total = map.next_value::<Value>()?.as_f64().unwrap_or(f64::NAN);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(total)
    }
}

/// `content`: a string (kept as a preview) or an array of blocks.
struct ContentSeed;

impl<'de> DeserializeSeed<'de> for ContentSeed {
    type Value = Content;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Content, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("string or array content")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
        Ok(Content::Text(preview(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut blocks = BlockFold::default();
        while let Some(b) = seq.next_element_seed(BlockSeed)? {
            blocks.push(b);
        }
        Ok(blocks.finish())
    }
}

/// `content`'s blocks as the compact form keeps them, folded one at a time (shared with the
/// byte scanner, `compact_scan`). Only tool calls and text count (`tool_calls()`, `text()`); text
/// only until the preview is full, since nothing shows more of a compact entry. A text block whose
/// text is not a string still uses up one character of the preview, as it always has.
pub(super) struct BlockFold {
    calls: Vec<(Option<Value>, String)>,
    texts: Vec<String>,
    text_left: usize,
    image_markers: bool,
}

impl Default for BlockFold {
    fn default() -> Self {
        BlockFold {
            calls: Vec::new(),
            texts: Vec::new(),
            text_left: PREVIEW_CHARS,
            image_markers: false,
        }
    }
}

impl BlockFold {
    pub(super) fn push(&mut self, b: Block) {
        match b.block_type.as_ref().and_then(Value::as_str) {
            Some("toolCall") => {
                let name = b.name.as_ref().map(js_to_string).unwrap_or_default();
                self.calls.push((b.id, name));
            }
            Some("text") if self.text_left > 0 => {
                let text = match b.text {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                };
                let n = text.as_ref().map_or(0, |t| t.chars().count());
                self.text_left = self.text_left.saturating_sub(n.max(1));
                self.texts.extend(text);
            }
            Some("image") if b.marker => self.image_markers = true,
            _ => {}
        }
    }

    pub(super) fn finish(self) -> Content {
        Content::Blocks {
            calls: self.calls,
            texts: self.texts,
            image_markers: self.image_markers,
        }
    }
}

/// One content block: `type`, a tool call's `id` and `name`, a text block's text (preview).
#[derive(Default)]
pub(super) struct Block {
    pub block_type: Option<Value>,
    pub id: Option<Value>,
    pub name: Option<Value>,
    pub text: Option<Value>,
    /// `data` is a string that is a chunk marker (`core::journal::images`).
    pub marker: bool,
}

/// Whether a JSON value's text is a string that is a chunk marker, as `JSON.parse` reads it: the
/// prefix as written, or (only then decoded) spelled with escapes.
pub(super) fn raw_is_marker(raw: &str) -> bool {
    let Some(body) = raw.strip_prefix('"') else {
        return false;
    };
    crate::journal::images::is_marker(body)
        || (body.contains('\\')
            && serde_json::from_str::<String>(raw)
                .is_ok_and(|s| crate::journal::images::is_marker(&s)))
}

struct BlockSeed;

impl<'de> DeserializeSeed<'de> for BlockSeed {
    type Value = Block;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Block, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let mut b = Block::default();
        while let Some(Key(key)) = map.next_key()? {
            let slot = match key {
                Some("type") => &mut b.block_type,
                Some("id") => &mut b.id,
                Some("name") => &mut b.name,
                Some("text") => {
                    let raw = map_value(&mut map)?;
                    b.text = Some(raw_preview(raw.get()).map_err(de::Error::custom)?);
                    continue;
                }
                Some("data") => {
                    b.marker = raw_is_marker(map_value(&mut map)?.get());
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(b)
    }
}
