//! The records of a conversation stream batch, typed. Every record has the envelope
//! ([`Envelope`]); its type's own fields are in [`Body`]. The types the fold does not look into
//! (state writes, resource snapshots, run markers, metadata, step memos, retained children) are
//! kept by name in [`Body::Other`].

use std::sync::OnceLock;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// An assistant block's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Reasoning,
    ToolCall,
}

impl BlockKind {
    pub(crate) fn js(self) -> &'static str {
        match self {
            BlockKind::Text => "text",
            BlockKind::Reasoning => "reasoning",
            BlockKind::ToolCall => "tool_call",
        }
    }
}

/// A record that is not what its type says (a missing or mistyped field), or a batch that is
/// not a JSON array of objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    pub record_id: String,
    pub record_type: String,
    pub reason: String,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A batch's own error (not JSON, not read from the database) names no record.
        if self.record_id.is_empty() && self.record_type.is_empty() {
            return f.write_str(&self.reason);
        }
        let (id, t, why) = (&self.record_id, &self.record_type, &self.reason);
        write!(f, "record {id:?} ({t}): {why}")
    }
}

impl std::error::Error for RecordError {}

/// The fields every record carries (`canonicalEnvelope`, CSS:1213 of flue 2.1.0).
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// `v`: the record version; the runtime folds only 1.
    pub v: Value,
    pub id: String,
    pub record_type: String,
    pub conversation_id: String,
    pub harness: String,
    pub session: String,
    pub timestamp: String,
    pub submission_id: Option<String>,
    pub attempt_id: Option<String>,
    pub turn_id: Option<String>,
}

/// The child identity fields a root conversation's creation record must not have: the fold
/// reads them of its `raw`, which the text reader keeps for them (`records_text::RAW_READ`).
pub(super) const CHILD_IDENTITY: [&str; 4] = [
    "parentConversationId",
    "taskId",
    "actionInvocationId",
    "agent",
];

/// A record's `parentId`: absent (`undefined` to the runtime, which no parent check accepts),
/// `null` (the first entry of a conversation), or an entry id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parent {
    Undefined,
    Null,
    Id(String),
}

impl Parent {
    /// As JavaScript's `String(parentId)` writes it in the runtime's messages.
    pub fn js(&self) -> &str {
        match self {
            Parent::Undefined => "undefined",
            Parent::Null => "null",
            Parent::Id(id) => id,
        }
    }

    /// `parentId === leaf` in JavaScript, the leaf being `null` or an id.
    pub fn is(&self, leaf: Option<&str>) -> bool {
        match (self, leaf) {
            (Parent::Null, None) => true,
            (Parent::Id(id), Some(leaf)) => id == leaf,
            _ => false,
        }
    }
}

/// A user message's or tool outcome's content block.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    Text(String),
    /// An attachment (an image, by reference); its id.
    Attachment(String),
}

/// A JSON value the fold keeps but rarely reads (a completion's `usage`: the classifier reads the
/// last one, a cost view every one): its text, checked as `serde_json` reads it when the record
/// is read, parsed the first time it is asked for. Why: a `usage` parsed into a map for every
/// completion was dropped unread with the fold by `health --all` and `list`; kept as its text,
/// `health --all` took 0.97x the CPU and 10 MB less at its peak (paired, the 2 GB 2.x journal).
/// Equal as the values are.
#[derive(Clone)]
pub struct JsonText {
    /// The value's text; empty when made from a parsed value (`value` is then set).
    pub(crate) text: Box<str>,
    value: OnceLock<Value>,
}

impl JsonText {
    /// `text` kept, when `serde_json` reads it as a [`Value`] ([`Checked`]); `None` when not.
    pub(crate) fn read(text: &str) -> Option<JsonText> {
        serde_json::from_str::<Checked>(text).ok()?;
        Some(JsonText {
            text: text.into(),
            value: OnceLock::new(),
        })
    }

    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            serde_json::from_str(&self.text).expect("the text was read as a JSON value before")
        })
    }
}

impl From<Value> for JsonText {
    fn from(v: Value) -> JsonText {
        JsonText {
            text: Box::default(),
            value: OnceLock::from(v),
        }
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.value() == other.value()
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

/// A JSON value read as `serde_json` reads a [`Value`] (`deserialize_any` all the way down: the
/// same checks of numbers, escapes, keys and depth) and kept as nothing: a text that reads as
/// `Checked` reads as a [`Value`], which [`JsonText::value`] relies on. (`IgnoredAny` checks
/// less: a lone surrogate's escape, which `Value` refuses, passes it.)
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(Checked)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Checked;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<Checked>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

/// What a record's type adds to the envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    ConversationCreated {
        kind: String,
        parent_conversation_id: Option<String>,
    },
    UserMessage {
        message_id: String,
        parent_id: Parent,
        content: Vec<ContentBlock>,
    },
    Signal {
        message_id: String,
        parent_id: Parent,
        signal_type: String,
    },
    AssistantMessageStarted {
        message_id: String,
        parent_id: Parent,
    },
    /// `assistant_text_started` or `assistant_reasoning_started`.
    BlockStarted {
        kind: BlockKind,
        message_id: String,
        block_id: String,
        block_index: Value,
    },
    /// `assistant_text_delta` or `assistant_reasoning_delta`.
    Delta {
        kind: BlockKind,
        message_id: String,
        block_id: String,
        sequence: Value,
        delta: String,
    },
    /// `assistant_text_completed` or `assistant_reasoning_completed`.
    BlockCompleted {
        kind: BlockKind,
        message_id: String,
        block_id: String,
        delta_count: Value,
    },
    ToolCall {
        message_id: String,
        block_id: String,
        block_index: Value,
        tool_call_id: String,
        name: String,
    },
    MessageCompleted {
        message_id: String,
        stop_reason: String,
        error: Option<String>,
        /// `usage` as stored: `None` when absent (`undefined`).
        usage: Option<JsonText>,
    },
    ToolOutcome {
        assistant_message_id: String,
        tool_call_id: String,
        tool_name: String,
        is_error: bool,
        /// `terminate`: absent, or (the only value the runtime accepts) `true`.
        terminate: Option<Value>,
    },
    ToolResultsCommitted {
        assistant_message_id: String,
        parent_id: Parent,
        outcome_ids: Vec<String>,
    },
    Compaction {
        entry_id: String,
        parent_id: Parent,
        first_kept_entry_id: String,
        source_leaf_id: String,
    },
    SubmissionSettled,
    Other,
}

/// One record: its envelope, its body, and the record as stored (the runtime compares a reused
/// id's record with the first one as a whole).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub envelope: Envelope,
    pub body: Body,
    pub raw: Value,
}

/// A batch's `data`: a JSON array of records.
pub fn parse_batch(data: &str) -> Result<Vec<Record>, RecordError> {
    // As `JSON.parse` reads it: a lone surrogate's escape is no damage to the runtime.
    let value: Value = crate::js::lone_surrogates::from_str(data).map_err(|e| RecordError {
        record_id: String::new(),
        record_type: String::new(),
        reason: format!("batch data is not JSON: {e}"),
    })?;
    let Value::Array(items) = value else {
        return Err(RecordError {
            record_id: String::new(),
            record_type: String::new(),
            reason: "batch data is not a JSON array".into(),
        });
    };
    items.into_iter().map(Record::from_value).collect()
}

/// A record's fields, looked up by key: a JSON object, or the fields
/// [`super::records_text`] read.
pub(crate) trait FieldMap {
    fn get(&self, key: &str) -> Option<&Value>;
    /// The field's value for a record to keep: taken where the map is not read again (the
    /// text reader's fields of most record types: no copy), else a copy.
    fn take(&mut self, key: &str) -> Option<Value> {
        self.get(key).cloned()
    }
    /// The field's value for a record to keep as [`JsonText`] (the text reader's keeps its text).
    fn take_json(&mut self, key: &str) -> Option<JsonText> {
        self.take(key).map(JsonText::from)
    }
}

impl FieldMap for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
}

/// A record's JSON object kept whole (its fields copied, never taken).
struct WholeObject<'a>(&'a Map<String, Value>);

impl FieldMap for WholeObject<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

struct Fields<'a, M: FieldMap + ?Sized> {
    map: &'a mut M,
    id: &'a str,
    record_type: &'a str,
}

impl<M: FieldMap + ?Sized> Fields<'_, M> {
    fn err(&self, reason: String) -> RecordError {
        RecordError {
            record_id: self.id.to_string(),
            record_type: self.record_type.to_string(),
            reason,
        }
    }
    fn string(&mut self, key: &str) -> Result<String, RecordError> {
        match self.map.take(key) {
            Some(Value::String(s)) => Ok(s),
            _ => Err(self.err(format!("{key} is not a string"))),
        }
    }
    /// A string, or absent (`undefined`); `null` reads as absent too, as the runtime's `??` does.
    fn opt_string(&mut self, key: &str) -> Result<Option<String>, RecordError> {
        match self.map.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.err(format!("{key} is not a string"))),
        }
    }
    fn parent(&mut self, key: &str) -> Result<Parent, RecordError> {
        match self.map.take(key) {
            None => Ok(Parent::Undefined),
            Some(Value::Null) => Ok(Parent::Null),
            Some(Value::String(s)) => Ok(Parent::Id(s)),
            Some(_) => Err(self.err(format!("{key} is not a string"))),
        }
    }
    fn value(&mut self, key: &str) -> Value {
        self.map.take(key).unwrap_or(Value::Null)
    }
    fn content(&self, key: &str) -> Result<Vec<ContentBlock>, RecordError> {
        let Some(Value::Array(blocks)) = self.map.get(key) else {
            return Err(self.err(format!("{key} is not an array")));
        };
        blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => Ok(ContentBlock::Text(
                    b.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                )),
                _ => Ok(ContentBlock::Attachment(
                    b.pointer("/attachment/id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                )),
            })
            .collect()
    }
}

impl Record {
    pub fn from_value(raw: Value) -> Result<Record, RecordError> {
        let Value::Object(map) = &raw else {
            return Err(RecordError {
                record_id: String::new(),
                record_type: String::new(),
                reason: "a record is not a JSON object".into(),
            });
        };
        let (envelope, body) = Record::typed(&mut WholeObject(map))?;
        Ok(Record {
            envelope,
            body,
            raw,
        })
    }

    /// The envelope and body of a record whose fields are `map`.
    pub(crate) fn typed<M: FieldMap + ?Sized>(
        map: &mut M,
    ) -> Result<(Envelope, Body), RecordError> {
        let text = |map: &M, k: &str| {
            map.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        // The id and type first (every error names them), in the order they are checked.
        let v = map.take("v").unwrap_or(Value::Null);
        let id = match map.take("id") {
            Some(Value::String(s)) => s,
            _ => {
                return Err(RecordError {
                    record_id: String::new(),
                    record_type: text(map, "type"),
                    reason: "id is not a string".into(),
                })
            }
        };
        let record_type = match map.take("type") {
            Some(Value::String(s)) => s,
            _ => {
                return Err(RecordError {
                    record_id: id,
                    record_type: String::new(),
                    reason: "type is not a string".into(),
                })
            }
        };
        let mut f = Fields {
            map,
            id: &id,
            record_type: &record_type,
        };
        let conversation_id = f.string("conversationId")?;
        let harness = f.string("harness")?;
        let session = f.string("session")?;
        let timestamp = f.string("timestamp")?;
        let submission_id = f.opt_string("submissionId")?;
        let attempt_id = f.opt_string("attemptId")?;
        let turn_id = f.opt_string("turnId")?;
        use BlockKind::{Reasoning, Text};
        let block_kind = |t: &str| {
            if t.contains("reasoning") {
                Reasoning
            } else {
                Text
            }
        };
        let body = match record_type.as_str() {
            "conversation_created" => Body::ConversationCreated {
                kind: f.string("kind")?,
                parent_conversation_id: f.opt_string("parentConversationId")?,
            },
            "user_message" => Body::UserMessage {
                message_id: f.string("messageId")?,
                parent_id: f.parent("parentId")?,
                content: f.content("content")?,
            },
            "signal" => Body::Signal {
                message_id: f.string("messageId")?,
                parent_id: f.parent("parentId")?,
                signal_type: f.string("signalType")?,
            },
            "assistant_message_started" => Body::AssistantMessageStarted {
                message_id: f.string("messageId")?,
                parent_id: f.parent("parentId")?,
            },
            t @ ("assistant_text_started" | "assistant_reasoning_started") => Body::BlockStarted {
                kind: block_kind(t),
                message_id: f.string("messageId")?,
                block_id: f.string("blockId")?,
                block_index: f.value("blockIndex"),
            },
            t @ ("assistant_text_delta" | "assistant_reasoning_delta") => Body::Delta {
                kind: block_kind(t),
                message_id: f.string("messageId")?,
                block_id: f.string("blockId")?,
                sequence: f.value("sequence"),
                delta: f.string("delta")?,
            },
            t @ ("assistant_text_completed" | "assistant_reasoning_completed") => {
                Body::BlockCompleted {
                    kind: block_kind(t),
                    message_id: f.string("messageId")?,
                    block_id: f.string("blockId")?,
                    delta_count: f.value("deltaCount"),
                }
            }
            "assistant_tool_call" => Body::ToolCall {
                message_id: f.string("messageId")?,
                block_id: f.string("blockId")?,
                block_index: f.value("blockIndex"),
                tool_call_id: f.string("toolCallId")?,
                name: f.string("name")?,
            },
            "assistant_message_completed" => Body::MessageCompleted {
                message_id: f.string("messageId")?,
                stop_reason: f.string("stopReason")?,
                error: f.opt_string("error")?,
                usage: f.map.take_json("usage"),
            },
            "tool_outcome" => Body::ToolOutcome {
                assistant_message_id: f.string("assistantMessageId")?,
                tool_call_id: f.string("toolCallId")?,
                tool_name: f.string("toolName")?,
                is_error: f
                    .map
                    .get("isError")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                terminate: f.map.take("terminate"),
            },
            "tool_results_committed" => Body::ToolResultsCommitted {
                assistant_message_id: f.string("assistantMessageId")?,
                parent_id: f.parent("parentId")?,
                outcome_ids: match f.map.take("outcomeIds") {
                    Some(Value::Array(ids)) => ids
                        .into_iter()
                        .map(|v| match v {
                            Value::String(s) => Ok(s),
                            _ => Err(f.err("outcomeIds holds a non-string".into())),
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err(f.err("outcomeIds is not an array".into())),
                },
            },
            "compaction" => Body::Compaction {
                entry_id: f.string("entryId")?,
                parent_id: f.parent("parentId")?,
                first_kept_entry_id: f.string("firstKeptEntryId")?,
                source_leaf_id: f.string("sourceLeafId")?,
            },
            "submission_settled" => Body::SubmissionSettled,
            _ => Body::Other,
        };
        let envelope = Envelope {
            v,
            id,
            record_type,
            conversation_id,
            harness,
            session,
            timestamp,
            submission_id,
            attempt_id,
            turn_id,
        };
        Ok((envelope, body))
    }
}
