//! Session entries as the runtime stores them in `flue_session_entries.data` (spec §2.3–2.6).
//!
//! Every entry keeps its raw JSON text. Parsing never fails: an entry whose JSON is malformed, whose
//! `type` is unknown, or whose message has an unknown role is kept and labelled, so the UI can show it
//! and the classifier can treat it exactly as the runtime would (the runtime's checks only look at
//! `type === "message"` and `message.role`).

use compact_str::CompactString;
use serde_json::{Map, Value};

pub use crate::journal::call_id::JsKey;
use crate::journal::call_id::{CallSlot, MessageFlags, SlotId};

/// One row of `flue_session_entries`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `position` column: index in the append-only entry array.
    pub position: i64,
    /// The entry's id: `data.id` when it is a string, else the `entry_id` column.
    /// `CompactString`s (24 bytes, like a `String`) hold up to 24 bytes inline: the runtime's
    /// 8-character ids and 24-character ISO timestamps cost no allocation of their own.
    pub id: CompactString,
    /// `data.parentId`; `None` for a root (null) or a missing/non-string value.
    pub parent_id: Option<CompactString>,
    /// `data.timestamp` (ISO string) when present.
    pub timestamp: Option<CompactString>,
    /// The stored JSON text, byte for byte. Empty for a compact entry (see `compact`).
    /// Shared for the same reason as the message.
    pub raw: std::sync::Arc<str>,
    /// Byte length of the stored JSON text (also known for compact entries). `u32`: neither
    /// backend stores a value of 4 GiB (SQLite's limit is 2 GiB, PostgreSQL's 1 GiB), and with
    /// the flag below it fills 8 bytes, so an entry is 120 bytes, not 128 (see `stored_len_of`).
    pub stored_len: u32,
    /// A compact entry (`core::compact`): the message keeps only the fields the classifier, the
    /// planner and the tree rows read, text is cut to a preview and `raw` is empty. Fetch the
    /// stored text by id when the whole entry is needed.
    pub compact: bool,
    pub body: EntryBody,
}

/// `Entry::stored_len` of a stored text (saturating: no backend stores 4 GiB in one value).
pub fn stored_len_of(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// The `raw` of an entry without its stored text (a compact entry): one shared empty string, so
/// compact entries allocate nothing for it.
pub fn empty_raw() -> std::sync::Arc<str> {
    static EMPTY: std::sync::OnceLock<std::sync::Arc<str>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| std::sync::Arc::from("")).clone()
}

#[derive(Debug, Clone, PartialEq)]
pub enum EntryBody {
    /// Shared: the prediction's copies of a session (`core::simulate`) clone every entry.
    Message(std::sync::Arc<Message>),
    /// Boxed: rare, and 64 bytes inline would be paid by every entry.
    Compaction(Box<Compaction>),
    /// Valid JSON object whose `type` is not one this runtime version writes. The rare texts are
    /// boxed `String`s (one pointer, like the other variants), so the body is 16 bytes, not 24.
    Unknown { type_name: Box<String> },
    /// Not a JSON object at all.
    Malformed { error: Box<String> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    pub summary: String,
    pub first_kept_entry_id: Option<String>,
    pub tokens_before: Option<f64>,
}

/// `message.role`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    Signal,
    /// A role this runtime version never writes (kept as found). Boxed twice, so a role is 16
    /// bytes, not 24: with the form below, a message fits a 128-byte allocation (see the size
    /// test).
    Other(Box<String>),
    /// `message` missing or not an object, or no string `role`.
    Missing,
}

/// What an entry holds of its image markers, for the check of its chunk rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryImages {
    /// Not a user or tool result message: loading it fails if it owns any chunk row.
    NotImageMessage,
    /// The marker ids of its content, in order.
    Ids(Vec<String>),
    /// A compact message with at least one marker: its stored text has the ids.
    Unread,
}

/// A tool call block `{type:"toolCall", id, name, arguments}` of an assistant message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    /// `id` as a JS value: `None` when absent (JS `undefined`).
    pub id: Option<Value>,
    pub name: String,
    pub arguments: Value,
}

impl ToolCall {
    /// The id as text for display and for writes (non-string ids are rendered as JSON).
    pub fn id_text(&self) -> String {
        js_key_text(&self.id)
    }
}

/// The parts of a message the domain logic needs, plus the whole message as JSON for display.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub form: MessageForm,
    /// The entry-level submission markers, read once at parse time (they are looked up for every
    /// entry of every path walk); `None` when the entry has none, as nearly every entry.
    pub marks: Option<Box<Markers>>,
}

/// A message is held whole or compact, never both: one field, not two options (the enum's tag
/// lives in a niche of the compact fields, so it costs nothing).
#[derive(Debug, Clone, PartialEq)]
pub enum MessageForm {
    /// The message object as parsed (key order preserved). Boxed: a whale holds 100,000 compact
    /// messages, which never have one.
    Full(Box<Value>),
    /// A compact message's fields (`core::compact`): every accessor reads these instead of the
    /// object. Inline, not boxed: the message is boxed already, and a second allocation per
    /// entry cost a whale 16 bytes of heap overhead and a pointer each.
    Compact(CompactFields),
}

/// A JSON value a compact message keeps: the few strings the runtime writes over and over
/// (`stopReason`) point at one shared value, anything else is owned.
#[derive(Debug, Clone, PartialEq)]
pub enum KeptValue {
    Shared(&'static Value),
    Owned(Box<Value>),
}

impl KeptValue {
    pub fn new(v: Value) -> KeptValue {
        static COMMON: std::sync::LazyLock<[Value; 6]> = std::sync::LazyLock::new(|| {
            ["toolUse", "stop", "length", "error", "aborted", "end_turn"].map(Value::from)
        });
        match COMMON.iter().find(|c| **c == v) {
            Some(c) => KeptValue::Shared(c),
            None => KeptValue::Owned(Box::new(v)),
        }
    }

    pub fn get(&self) -> &Value {
        match self {
            KeptValue::Shared(v) => v,
            KeptValue::Owned(v) => v,
        }
    }
}

static NO_MARKERS: Markers = Markers {
    dispatch_id: None,
    direct_submission_id: None,
    submission_terminal_id: None,
};

impl Markers {
    /// `None` when no marker is set (the common case keeps no allocation).
    pub fn boxed(self) -> Option<Box<Markers>> {
        (self != NO_MARKERS).then(|| Box::new(self))
    }
}

/// Entry-level fields that tie a message to a submission (spec §2.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markers {
    /// `dispatch.dispatchId`: a dispatch input.
    pub dispatch_id: Option<String>,
    /// `directSubmissionId`: a direct input.
    pub direct_submission_id: Option<String>,
    /// `submissionTerminal.submissionId`: an interruption advisory.
    pub submission_terminal_id: Option<String>,
}

/// What the accessors below return for a compact message, computed once from its skeleton by the
/// same accessors (so both forms answer alike) and kept without the JSON maps. Text is held as
/// `Box<str>` (16 bytes, not 24). What a tool result has (three of four entries of a tool-heavy
/// whale) is inline; what only an assistant or a signal has is in `rest`, allocated only when one
/// of its fields is set: a whale has 100,000 of these.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactFields {
    /// `toolCallId` in place (a call id of up to 30 bytes: see `core::js_key`), `isError`, and
    /// whether the preview was dropped; an id that does not fit is in `rest`.
    call: CallSlot,
    /// Inline up to 24 bytes (tool names are short): no allocation for most tool results.
    pub tool_name: Option<CompactString>,
    /// The start of `text()`. Empty whatever the message holds when the preview was not kept
    /// (`core::compact::Previews::Drop`), and then nothing may print it.
    pub text: Box<str>,
    pub rest: Option<Box<CompactRest>>,
}

/// The `usage` token keys a compact message keeps, in the order of `CompactRest::usage`; the
/// last slot (`USAGE_COST`) is `cost.total`.
pub const USAGE_KEYS: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
/// The slot of `cost.total` in `CompactRest::usage`.
pub const USAGE_COST: usize = 5;

/// The fields of a compact message that tool results never have. 112 bytes, a 128-byte chunk
/// for each assistant (a whale has 60,000): what only a few messages have is one box further.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactRest {
    pub stop_reason: Option<KeptValue>,
    /// `usage` input, output, cacheRead, cacheWrite, totalTokens and cost.total (`USAGE_KEYS`
    /// order, NaN when missing); `None` when `usage` is not an object.
    pub usage: Option<[f64; 6]>,
    /// Tool calls as (id, name), without their arguments. Neither allocates for the ids and names
    /// models write (a whale has 180,000 calls).
    pub tool_calls: Box<[(Option<JsKey>, CompactString)]>,
    pub model: Option<Box<str>>,
    pub rare: Option<Box<RareFields>>,
}

/// The fields of a compact message that only signals, failed turns and damaged rows have.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareFields {
    pub error_message: Option<Value>,
    pub signal_type: Option<Box<str>>,
    /// `attributes` of a signal.
    pub attributes: Option<Value>,
    /// A `toolCallId` that is not a string of up to 30 bytes.
    pub tool_call_id: Option<JsKey>,
}

impl CompactRest {
    /// `None` when every field is unset (no allocation).
    pub fn boxed(self) -> Option<Box<CompactRest>> {
        (self != CompactRest::default()).then(|| Box::new(self))
    }
}

impl RareFields {
    /// `None` when every field is unset (no allocation).
    pub fn boxed(self) -> Option<Box<RareFields>> {
        (self != RareFields::default()).then(|| Box::new(self))
    }
}

impl CompactFields {
    /// Read the fields of a skeleton message with the full accessors.
    pub fn of(skeleton: &Message) -> CompactFields {
        let rest = CompactRest {
            stop_reason: skeleton.field("stopReason").cloned().map(KeptValue::new),
            usage: skeleton.has_usage().then(|| {
                let u = |k: &str| skeleton.usage(k);
                [
                    u("input"),
                    u("output"),
                    u("cacheRead"),
                    u("cacheWrite"),
                    u("totalTokens"),
                    skeleton.cost_total(),
                ]
            }),
            tool_calls: skeleton
                .tool_calls()
                .into_iter()
                .map(|c| (c.id.map(JsKey::new), CompactString::from(c.name)))
                .collect(),
            model: skeleton.model().map(Box::from),
            rare: RareFields {
                error_message: skeleton.error_message_value().cloned(),
                signal_type: skeleton.signal_type().map(Box::from),
                attributes: skeleton.field("attributes").cloned(),
                tool_call_id: None,
            }
            .boxed(),
        };
        let image_markers = skeleton
            .field("content")
            .is_some_and(|c| !crate::journal::images::marker_ids(c).is_empty());
        CompactFields::new(
            skeleton.tool_call_id(),
            skeleton.tool_name().map(CompactString::from),
            skeleton.is_error(),
            Some(skeleton.text().into_boxed_str()),
            rest,
        )
        .with_image_markers(image_markers)
    }

    /// The fields of one message. `text` is its preview, or `None` when the preview is not kept.
    pub fn new(
        tool_call_id: Option<Value>,
        tool_name: Option<CompactString>,
        is_error: bool,
        text: Option<Box<str>>,
        mut rest: CompactRest,
    ) -> CompactFields {
        let mut flags = MessageFlags::empty();
        flags.set(MessageFlags::IS_ERROR, is_error);
        flags.set(MessageFlags::PREVIEW_DROPPED, text.is_none());
        let (call, elsewhere) = CallSlot::new(tool_call_id, flags);
        if let Some(id) = elsewhere {
            rest.rare.get_or_insert_with(Box::default).tool_call_id = Some(id);
        }
        CompactFields {
            call,
            tool_name,
            text: text.unwrap_or_default(),
            rest: rest.boxed(),
        }
    }

    /// `toolCallId` when it is a string.
    pub fn tool_call_id_str(&self) -> Option<&str> {
        match self.call.id() {
            SlotId::Absent => None,
            SlotId::Here(id) => Some(id),
            SlotId::Elsewhere => self.elsewhere_id().and_then(JsKey::as_str),
        }
    }

    /// `toolCallId` as a JS value (`None` = undefined).
    pub fn tool_call_id(&self) -> Option<Value> {
        match self.call.id() {
            SlotId::Absent => None,
            SlotId::Here(id) => Some(Value::from(id)),
            SlotId::Elsewhere => self.elsewhere_id().map(JsKey::to_value),
        }
    }

    fn elsewhere_id(&self) -> Option<&JsKey> {
        self.rare()?.tool_call_id.as_ref()
    }

    fn rare(&self) -> Option<&RareFields> {
        self.rest()?.rare.as_deref()
    }

    pub fn is_error(&self) -> bool {
        self.call.flags().contains(MessageFlags::IS_ERROR)
    }

    /// The preview was not kept: `text` is empty whatever the message holds.
    pub fn preview_dropped(&self) -> bool {
        self.call.flags().contains(MessageFlags::PREVIEW_DROPPED)
    }

    /// Marked as having an image block whose data is a chunk marker (or not).
    pub fn with_image_markers(mut self, yes: bool) -> CompactFields {
        let mut flags = self.call.flags();
        flags.set(MessageFlags::IMAGE_MARKERS, yes);
        self.call.set_flags(flags);
        self
    }

    /// `content` has an image block whose data is a chunk marker (their ids are not kept).
    pub fn has_image_markers(&self) -> bool {
        self.call.flags().contains(MessageFlags::IMAGE_MARKERS)
    }

    /// These fields as read without their preview (what `Previews::Drop` builds).
    #[cfg(test)]
    pub(crate) fn drop_preview(&mut self) {
        self.text = Box::default();
        self.call
            .set_flags(self.call.flags() | MessageFlags::PREVIEW_DROPPED);
    }

    fn rest(&self) -> Option<&CompactRest> {
        self.rest.as_deref()
    }
}

impl Message {
    /// A message as the full parser reads it.
    pub fn full(role: Role, value: Value, markers: Markers) -> Message {
        Message {
            role,
            form: MessageForm::Full(Box::new(value)),
            marks: markers.boxed(),
        }
    }

    /// The message object as parsed; `Null` for a compact message.
    pub fn value(&self) -> &Value {
        static NULL: Value = Value::Null;
        match &self.form {
            MessageForm::Full(v) => v,
            MessageForm::Compact(_) => &NULL,
        }
    }

    /// A compact message's fields; `None` for a message held whole.
    pub fn compact(&self) -> Option<&CompactFields> {
        match &self.form {
            MessageForm::Compact(c) => Some(c),
            MessageForm::Full(_) => None,
        }
    }

    /// The entry-level submission markers.
    pub fn markers(&self) -> &Markers {
        self.marks.as_deref().unwrap_or(&NO_MARKERS)
    }

    fn field(&self, key: &str) -> Option<&Value> {
        self.value().as_object().and_then(|o| o.get(key))
    }

    fn str_field(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Value::as_str)
    }

    /// `stopReason` when it is a string.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason_value().and_then(Value::as_str)
    }

    /// `stopReason` as stored (any JSON type).
    pub fn stop_reason_value(&self) -> Option<&Value> {
        match self.compact() {
            Some(c) => c.rest()?.stop_reason.as_ref().map(KeptValue::get),
            None => self.field("stopReason"),
        }
    }

    /// `attributes.<key>` of a signal when it is a string.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        let attributes = match self.compact() {
            Some(c) => c.rare().and_then(|r| r.attributes.as_ref()),
            None => self.field("attributes"),
        };
        attributes.and_then(|a| a.get(key)).and_then(Value::as_str)
    }

    /// `usage.cost.total` as a number (NaN when missing).
    pub fn cost_total(&self) -> f64 {
        match self.compact() {
            Some(c) => c
                .rest()
                .and_then(|r| r.usage)
                .map_or(f64::NAN, |u| u[USAGE_COST]),
            None => self
                .value()
                .pointer("/usage/cost/total")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN),
        }
    }

    /// `errorMessage` as stored (any JSON type), `None` when absent.
    pub fn error_message_value(&self) -> Option<&Value> {
        match self.compact() {
            Some(c) => c.rare()?.error_message.as_ref(),
            None => self.field("errorMessage"),
        }
    }

    /// The error text when `errorMessage` is truthy in JavaScript, converted as `String(x)` would.
    pub fn truthy_error_message(&self) -> Option<String> {
        let v = self.error_message_value()?;
        js_truthy(v).then(|| js_to_string(v))
    }

    /// `usage.<key>` as a JS number: NaN when missing or not a number (JS arithmetic on `undefined`).
    pub fn usage(&self, key: &str) -> f64 {
        if let Some(c) = self.compact() {
            let i = USAGE_KEYS.iter().position(|k| *k == key);
            return match (c.rest().and_then(|r| r.usage), i) {
                (Some(u), Some(i)) => u[i],
                _ => f64::NAN,
            };
        }
        self.field("usage")
            .and_then(|u| u.get(key))
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN)
    }

    /// Whether `usage` is an object (the runtime reads `usage.input` without a guard).
    pub fn has_usage(&self) -> bool {
        if let Some(c) = self.compact() {
            return c.rest().is_some_and(|r| r.usage.is_some());
        }
        self.field("usage").is_some_and(Value::is_object)
    }

    /// Tool call blocks in content order (assistant messages).
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        if let Some(c) = self.compact() {
            let Some(r) = c.rest() else {
                return Vec::new();
            };
            return r
                .tool_calls
                .iter()
                .map(|(id, name)| ToolCall {
                    id: id.as_ref().map(JsKey::to_value),
                    name: name.to_string(),
                    arguments: Value::Null,
                })
                .collect();
        }
        let Some(content) = self.field("content").and_then(Value::as_array) else {
            return Vec::new();
        };
        content
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
            .map(|b| ToolCall {
                id: b.get("id").cloned(),
                name: b.get("name").map(js_to_string).unwrap_or_default(),
                arguments: b.get("arguments").cloned().unwrap_or(Value::Null),
            })
            .collect()
    }

    /// `toolCallId` of a toolResult as a JS value (`None` = undefined).
    pub fn tool_call_id(&self) -> Option<Value> {
        if let Some(c) = self.compact() {
            return c.tool_call_id();
        }
        self.field("toolCallId").cloned()
    }

    /// `toolCallId` when it is a string, borrowed (the repair preview looks it up per result).
    pub fn tool_call_id_str(&self) -> Option<&str> {
        match self.compact() {
            Some(c) => c.tool_call_id_str(),
            None => self.str_field("toolCallId"),
        }
    }

    pub fn tool_name(&self) -> Option<&str> {
        if let Some(c) = self.compact() {
            return c.tool_name.as_deref();
        }
        self.str_field("toolName")
    }

    /// `isError` of a toolResult.
    pub fn is_error(&self) -> bool {
        if let Some(c) = self.compact() {
            return c.is_error();
        }
        self.field("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `type` of a signal message (`stream_continued`, `dispatch_input`, …).
    pub fn signal_type(&self) -> Option<&str> {
        if let Some(c) = self.compact() {
            return c.rare().and_then(|r| r.signal_type.as_deref());
        }
        self.str_field("type")
    }

    /// `model` of an assistant message.
    pub fn model(&self) -> Option<&str> {
        if let Some(c) = self.compact() {
            return c.rest().and_then(|r| r.model.as_deref());
        }
        self.str_field("model")
    }

    /// `text()`, or `None` when it was not read (a compact message whose preview was dropped:
    /// the TUI fetches it for the rows it draws).
    pub fn text_if_read(&self) -> Option<String> {
        match self.compact() {
            Some(c) if c.preview_dropped() => None,
            _ => Some(self.text()),
        }
    }

    /// The concatenated text of the message (text blocks, string content, signal content).
    pub fn text(&self) -> String {
        if let Some(c) = self.compact() {
            // A read that dropped previews is for output that never prints them (`show --json`,
            // the list): a caller reading one anyway would print an empty text as if it were.
            debug_assert!(
                !c.preview_dropped(),
                "the text of a message read without previews"
            );
            return c.text.to_string();
        }
        match self.field("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => {
                let parts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                parts.join("\n")
            }
            _ => String::new(),
        }
    }

    pub fn is_stream_continued(&self) -> bool {
        self.role == Role::Signal && self.signal_type() == Some("stream_continued")
    }
}

/// `EntryBody::Malformed`'s error for a row whose `entry_id` or `data` is stored as a BLOB: the
/// runtime's `load` checks `typeof data === "string"` before it parses anything, so the whole
/// session fails to load (`sql-run-store`, `load`), whatever the bytes say.
pub const BLOB_ROW: &str = "stored as a BLOB, not text: the runtime's load throws \"[flue] Persisted session entry row is malformed.\"";

impl Entry {
    /// A row stored as a BLOB ([`BLOB_ROW`]): kept with its bytes read as text, for display,
    /// and never parsed, since the runtime never reads it.
    pub fn blob_row(position: i64, entry_id: &str, data: &[u8]) -> Entry {
        Entry {
            position,
            id: entry_id.into(),
            parent_id: None,
            timestamp: None,
            raw: String::from_utf8_lossy(data).as_ref().into(),
            stored_len: stored_len_of(data.len()),
            compact: false,
            body: EntryBody::Malformed {
                error: Box::new(BLOB_ROW.to_string()),
            },
        }
    }

    /// Parse one stored row. Never fails: bad JSON becomes `EntryBody::Malformed`.
    pub fn parse(position: i64, entry_id: &str, data: &str) -> Entry {
        let malformed = |error: String| Entry {
            position,
            id: entry_id.into(),
            parent_id: None,
            timestamp: None,
            raw: data.into(),
            stored_len: stored_len_of(data.len()),
            compact: false,
            body: EntryBody::Malformed {
                error: Box::new(error),
            },
        };
        // As `JSON.parse` reads it: a lone surrogate's escape is no damage to the runtime.
        let value: Value = match crate::js::lone_surrogates::from_str(data) {
            Ok(v) => v,
            Err(e) => return malformed(format!("invalid JSON: {e}")),
        };
        let Value::Object(obj) = value else {
            return malformed("entry JSON is not an object".to_string());
        };
        let mut e = Entry::from_object(position, entry_id, obj);
        e.raw = data.into();
        e.stored_len = stored_len_of(data.len());
        e
    }

    /// An entry from its parsed top-level object (`raw` left empty, `compact` false). Shared by
    /// the full and the compact parser so both apply the same rules.
    pub(crate) fn from_object(position: i64, entry_id: &str, obj: Map<String, Value>) -> Entry {
        let id = obj
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or(entry_id)
            .into();
        let parent_id = obj
            .get("parentId")
            .and_then(Value::as_str)
            .map(CompactString::from);
        let timestamp = obj
            .get("timestamp")
            .and_then(Value::as_str)
            .map(CompactString::from);
        let body = body_from(obj);
        Entry {
            position,
            id,
            parent_id,
            timestamp,
            raw: empty_raw(),
            stored_len: 0,
            compact: false,
            body,
        }
    }

    /// The message, when this is a `type:"message"` entry.
    pub fn message(&self) -> Option<&Message> {
        match &self.body {
            EntryBody::Message(m) => Some(m),
            _ => None,
        }
    }

    /// What loading this entry checks its image chunks against (`core::journal::images`).
    pub fn image_markers(&self) -> EntryImages {
        let Some(m) = self.message() else {
            return EntryImages::NotImageMessage;
        };
        if !matches!(m.role, Role::User | Role::ToolResult) {
            return EntryImages::NotImageMessage;
        }
        match &m.form {
            MessageForm::Full(v) => EntryImages::Ids(
                v.get("content")
                    .map(crate::journal::images::marker_ids)
                    .unwrap_or_default(),
            ),
            MessageForm::Compact(c) if c.has_image_markers() => EntryImages::Unread,
            MessageForm::Compact(_) => EntryImages::Ids(Vec::new()),
        }
    }

    /// The message when it has the given role.
    pub fn message_with_role(&self, role: &Role) -> Option<&Message> {
        self.message().filter(|m| &m.role == role)
    }

    /// The whole entry as JSON, read as `JSON.parse` reads it (a lone surrogate as U+FFFD): for
    /// display. `None` for malformed entries.
    pub fn json(&self) -> Option<Value> {
        crate::js::lone_surrogates::from_str(&self.raw).ok()
    }

    /// The whole entry as JSON where `serde_json` reads it as is: for what is written or exported
    /// from it, which must keep the stored text's meaning exactly. `None` for malformed entries
    /// and for entries holding a lone surrogate.
    pub fn json_exact(&self) -> Option<Value> {
        serde_json::from_str(&self.raw).ok()
    }

    /// `dispatch.dispatchId` (marks a dispatch input).
    pub fn dispatch_id(&self) -> Option<String> {
        self.message()?.markers().dispatch_id.clone()
    }

    /// `directSubmissionId` (marks a direct input).
    pub fn direct_submission_id(&self) -> Option<String> {
        self.message()?.markers().direct_submission_id.clone()
    }

    /// `submissionTerminal.submissionId` (marks an interruption advisory).
    pub fn submission_terminal_id(&self) -> Option<String> {
        self.message()?.markers().submission_terminal_id.clone()
    }

    /// A short label of what the entry is (`assistant`, `toolResult`, `signal:stream_continued`, …).
    pub fn kind_label(&self) -> String {
        match &self.body {
            EntryBody::Message(m) => match &m.role {
                Role::User => "user".into(),
                Role::Assistant => "assistant".into(),
                Role::ToolResult => "toolResult".into(),
                Role::Signal => format!("signal:{}", m.signal_type().unwrap_or("?")),
                Role::Other(r) => format!("message:{r} (unknown role)"),
                Role::Missing => "message (no role)".into(),
            },
            EntryBody::Compaction(_) => "compaction".into(),
            EntryBody::Unknown { type_name } => format!("{type_name} (unknown type)"),
            EntryBody::Malformed { .. } => "malformed".into(),
        }
    }
}

fn body_from(mut obj: Map<String, Value>) -> EntryBody {
    let type_name = match obj.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return EntryBody::Unknown {
                type_name: Box::new(other.to_string()),
            }
        }
        None => {
            return EntryBody::Unknown {
                type_name: Box::new("(no type)".into()),
            }
        }
    };
    match type_name.as_str() {
        "message" => {
            let value = obj.remove("message").unwrap_or(Value::Null);
            let role = match value.get("role") {
                Some(Value::String(r)) => match r.as_str() {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    "toolResult" => Role::ToolResult,
                    "signal" => Role::Signal,
                    other => Role::Other(Box::new(other.to_string())),
                },
                _ => Role::Missing,
            };
            let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
            let markers = Markers {
                dispatch_id: text(obj.get("dispatch").and_then(|d| d.get("dispatchId"))),
                direct_submission_id: text(obj.get("directSubmissionId")),
                submission_terminal_id: text(
                    obj.get("submissionTerminal")
                        .and_then(|d| d.get("submissionId")),
                ),
            };
            EntryBody::Message(std::sync::Arc::new(Message::full(role, value, markers)))
        }
        "compaction" => EntryBody::Compaction(Box::new(Compaction {
            summary: obj.get("summary").map(js_to_string).unwrap_or_default(),
            first_kept_entry_id: obj
                .get("firstKeptEntryId")
                .and_then(Value::as_str)
                .map(str::to_string),
            tokens_before: obj.get("tokensBefore").and_then(Value::as_f64),
        })),
        _ => EntryBody::Unknown {
            type_name: Box::new(type_name),
        },
    }
}

/// JavaScript truthiness of a JSON value.
pub fn js_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `String(v)` in JavaScript, for the JSON value types.
pub fn js_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Null => String::new(),
                other => js_to_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// Text of a JS key value (`undefined` when absent).
pub fn js_key_text(v: &Option<Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whale keeps 288,000 entries at once: every byte here is 288 kB of resident memory. These
    /// are budgets (the sizes on x86-64 today), so a field that grows them is a decision. The
    /// message lives in an `Arc` (16 bytes of counts before it): 104 bytes make a 120-byte
    /// allocation, the most a 128-byte block holds (glibc's chunk, mimalloc's size class; the
    /// 120 bytes before the form enum and the boxed role took a 144-byte one).
    #[test]
    fn entry_and_message_sizes_stay_within_their_budget() {
        let sizes = (
            std::mem::size_of::<Entry>(),
            std::mem::size_of::<Message>(),
            std::mem::size_of::<MessageForm>(),
            std::mem::size_of::<CompactFields>(),
            std::mem::size_of::<Role>(),
        );
        assert!(sizes.0 <= 120, "{sizes:?}");
        assert!(sizes.1 <= 104, "{sizes:?}");
        // The form's tag takes no room of its own.
        assert_eq!(sizes.2, sizes.3, "{sizes:?}");
        assert!(sizes.3 <= 80, "{sizes:?}");
        assert!(sizes.4 <= 16, "{sizes:?}");
        // One pointer and a tag: the rare bodies' texts are boxed.
        assert!(std::mem::size_of::<EntryBody>() <= 16);
        // An assistant's fields take a 128-byte chunk (the few fields of signals and failed
        // turns are boxed once more): 16 bytes more than before cacheWrite and totalTokens were
        // kept for the cost since input.
        assert!(std::mem::size_of::<CompactRest>() <= 112);
    }

    #[test]
    fn parses_assistant_with_tool_calls() {
        let raw = r#"{"type":"message","id":"e61f0b2c","parentId":"5d2a7f13","timestamp":"2026-01-05T09:12:45.870Z","message":{"role":"assistant","content":[{"type":"text","text":"Checking both."},{"type":"toolCall","id":"toolu_01XyZ","name":"get_weather","arguments":{"city":"Oslo"}},{"type":"toolCall","id":"toolu_01AbC","name":"get_time","arguments":{"tz":"Europe/Oslo"}}],"usage":{"input":1204,"output":88,"cacheRead":0},"stopReason":"toolUse","timestamp":1767604364140}}"#;
        let e = Entry::parse(3, "e61f0b2c", raw);
        assert_eq!(e.parent_id.as_deref(), Some("5d2a7f13"));
        let m = e.message().unwrap();
        assert_eq!(m.role, Role::Assistant);
        assert_eq!(m.stop_reason(), Some("toolUse"));
        let calls = m.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].id_text(), "toolu_01AbC");
        assert_eq!(calls[1].name, "get_time");
        assert_eq!(m.usage("input"), 1204.0);
        assert!(m.usage("cacheWrite").is_nan());
        assert_eq!(&*e.raw, raw);
    }

    #[test]
    fn malformed_and_unknown_are_kept() {
        let bad = Entry::parse(0, "x1", "{not json");
        assert!(matches!(bad.body, EntryBody::Malformed { .. }));
        assert_eq!(bad.id, "x1");
        assert_eq!(&*bad.raw, "{not json");
        let arr = Entry::parse(0, "x2", "[1,2]");
        assert!(matches!(arr.body, EntryBody::Malformed { .. }));
        let unk = Entry::parse(
            1,
            "x3",
            r#"{"type":"branch_summary","id":"x3","parentId":null}"#,
        );
        assert_eq!(
            unk.body,
            EntryBody::Unknown {
                type_name: Box::new("branch_summary".into())
            }
        );
        let role = Entry::parse(
            2,
            "x4",
            r#"{"type":"message","id":"x4","message":{"role":"custom"}}"#,
        );
        assert_eq!(
            role.message().unwrap().role,
            Role::Other(Box::new("custom".into()))
        );
        assert_eq!(role.kind_label(), "message:custom (unknown role)");
    }

    #[test]
    fn markers() {
        let raw = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"signal","type":"dispatch_input","content":"{}"},"dispatch":{"dispatchId":"d-1"}}"#;
        let e = Entry::parse(0, "a", raw);
        assert_eq!(e.dispatch_id().as_deref(), Some("d-1"));
        assert_eq!(e.direct_submission_id(), None);
        assert_eq!(e.kind_label(), "signal:dispatch_input");
    }

    #[test]
    fn js_truthiness_and_strings() {
        assert!(!js_truthy(&Value::String(String::new())));
        assert!(js_truthy(&serde_json::json!(429)));
        assert!(!js_truthy(&serde_json::json!(0)));
        assert_eq!(js_to_string(&serde_json::json!(429)), "429");
        assert_eq!(js_to_string(&serde_json::json!({"a":1})), "[object Object]");
    }
}
