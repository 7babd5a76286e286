//! Compact entries: one pass over an entry's stored JSON that keeps only what the classifier, the
//! planner, `show`'s summaries and the tree rows read, and skips the rest (tool arguments, result
//! bodies, thinking, `details`) without building it.
//!
//! The visitors (`compact_de`) read the JSON straight into the kept fields, with no intermediate
//! JSON map per entry, message or content block (for a whale session of 285 MB those maps were
//! a fifth of the parse time and most of its allocations). `entry_from` then applies the rules of
//! `Entry::from_object` and `CompactFields::of` to those fields, so a compact entry answers every
//! accessor as the full parse would: tool calls keep only `id` and `name`, text is cut to
//! `PREVIEW_CHARS`, `raw` is empty and callers that need the whole entry fetch it by id.
//!
//! Anything unusual (not an object, a `message` or content block that is not an object, content
//! that is neither a string nor an array, bytes that are not UTF-8) falls back to the full parse,
//! so the compact parser never has to reproduce the full parser's error handling.

use compact_str::CompactString;
use serde_json::Value;

use crate::journal::compact_de::{parse_top, Content, Msg, Top};
use crate::journal::compact_scan::scan_top_previews;
use crate::journal::entry::{
    js_to_string, CompactFields, CompactRest, Compaction, Entry, EntryBody, JsKey, KeptValue,
    Markers, Message, MessageForm, RareFields, Role,
};

pub use crate::journal::text_preview::PREVIEW_CHARS;

/// Parse one stored row compactly (full parse when the shape is unusual). Never fails.
pub fn parse_compact(position: i64, entry_id: &str, data: &[u8]) -> Entry {
    parse_compact_checked(position, entry_id, data).0
}

/// A stored row as the write path reads it: the compact message (every field the classifier, the
/// planner and the repair read, as `compact_oracle` checks against the full parse) with the
/// stored text kept byte for byte (what a repair copies and the export shows). A whale's write
/// plan then holds its bodies' text once instead of their full JSON trees as well.
pub fn parse_keeping_raw(position: i64, entry_id: &str, data: &str) -> Entry {
    let (mut e, _) = parse_compact_checked(position, entry_id, data.as_bytes());
    if e.compact {
        e.raw = data.into();
        e.compact = false;
    }
    e
}

/// Whether a compact message keeps its text preview (`Message::text`). Only what draws or prints
/// messages as text needs it (the TUI, `show`); `show --json` and the list never read it, and on
/// a 240,000-entry whale the previews are 23 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Previews {
    Keep,
    Drop,
}

/// `parse_compact`, and whether `data` was not UTF-8 (then read with replacement characters).
pub fn parse_compact_checked(position: i64, entry_id: &str, data: &[u8]) -> (Entry, bool) {
    parse_compact_previews(position, entry_id, data, Previews::Keep)
}

/// `parse_compact_checked`, keeping a compact message's text preview or not. The rows read, and
/// every check made of them, are the same either way; only the preview is not assembled.
pub fn parse_compact_previews(
    position: i64,
    entry_id: &str,
    data: &[u8],
    previews: Previews,
) -> (Entry, bool) {
    // The byte scanner reads the common case straight from the bytes, checking their UTF-8 as it
    // goes; what it declines, the serde visitors decide (after the whole row's UTF-8 check).
    if let Some(top) = scan_top_previews(data, previews == Previews::Keep) {
        return (
            compact_entry(position, entry_id, data, top, previews),
            false,
        );
    }
    parse_compact_with(position, entry_id, data, parse_top, previews)
}

/// The compact entry of a row whose entry object `top` was read.
fn compact_entry(
    position: i64,
    entry_id: &str,
    data: &[u8],
    top: Top,
    previews: Previews,
) -> Entry {
    let mut e = entry_from(position, entry_id, top, previews);
    e.stored_len = crate::journal::entry::stored_len_of(data.len());
    e.compact = true;
    e
}

/// `parse_compact_checked` with the entry object read by `top` (the tests compare readers).
pub(super) fn parse_compact_with(
    position: i64,
    entry_id: &str,
    data: &[u8],
    top: impl FnOnce(&str) -> Option<Top>,
    previews: Previews,
) -> (Entry, bool) {
    let text = std::str::from_utf8(data);
    let lossy = text.is_err();
    // A map visitor would also accept a JSON array; only objects are compact.
    let parsed = text
        .ok()
        .filter(|t| t.trim_start().starts_with('{'))
        .and_then(top);
    match parsed {
        Some(top) => (
            compact_entry(position, entry_id, data, top, previews),
            false,
        ),
        None => (
            Entry::parse(position, entry_id, &String::from_utf8_lossy(data)),
            lossy,
        ),
    }
}

fn string(v: Option<Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// The entry `Entry::from_object` would build from the same keys (`raw` empty).
fn entry_from(position: i64, entry_id: &str, t: Top, previews: Previews) -> Entry {
    let member = |v: &Option<Value>, key: &str| {
        v.as_ref()
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let body = match t.type_name {
        Some(Value::String(type_name)) => match type_name.as_str() {
            "message" => {
                let markers = Markers {
                    dispatch_id: member(&t.dispatch, "dispatchId"),
                    direct_submission_id: t
                        .direct_submission_id
                        .as_ref()
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    submission_terminal_id: member(&t.submission_terminal, "submissionId"),
                };
                EntryBody::Message(std::sync::Arc::new(message_from(
                    t.message.unwrap_or_default(),
                    markers,
                    previews,
                )))
            }
            "compaction" => EntryBody::Compaction(Box::new(Compaction {
                summary: t.summary.as_ref().map(js_to_string).unwrap_or_default(),
                first_kept_entry_id: string(t.first_kept_entry_id),
                tokens_before: t.tokens_before.as_ref().and_then(Value::as_f64),
            })),
            _ => EntryBody::Unknown {
                type_name: Box::new(type_name),
            },
        },
        Some(other) => EntryBody::Unknown {
            type_name: Box::new(other.to_string()),
        },
        None => EntryBody::Unknown {
            type_name: Box::new("(no type)".into()),
        },
    };
    Entry {
        position,
        id: t.id.unwrap_or_else(|| entry_id.into()),
        parent_id: t.parent_id,
        timestamp: t.timestamp,
        raw: crate::journal::entry::empty_raw(),
        stored_len: 0,
        compact: false,
        body,
    }
}

/// A compact message: what `CompactFields::of` reads from a message with these fields (the text
/// left empty, and marked so, when `previews` drops it).
fn message_from(m: Msg, markers: Markers, previews: Previews) -> Message {
    let role = match string(m.role) {
        Some(r) => match r.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "signal" => Role::Signal,
            _ => Role::Other(Box::new(r)),
        },
        None => Role::Missing,
    };
    let preview_dropped = previews == Previews::Drop;
    let image_markers = matches!(
        m.content,
        Some(Content::Blocks {
            image_markers: true,
            ..
        })
    );
    let (tool_calls, text) = match m.content {
        Some(Content::Text(_)) if preview_dropped => (Box::default(), None),
        Some(Content::Text(s)) => (Box::default(), Some(s.into_boxed_str())),
        Some(Content::Blocks { calls, texts, .. }) => (
            calls
                .into_iter()
                .map(|(id, name)| (id.map(JsKey::new), CompactString::from(name)))
                .collect(),
            (!preview_dropped).then(|| texts.join("\n").into_boxed_str()),
        ),
        None => (Box::default(), (!preview_dropped).then(Box::default)),
    };
    let rest = CompactRest {
        stop_reason: m.stop_reason.map(KeptValue::new),
        usage: m.usage.flatten(),
        tool_calls,
        model: string(m.model).map(String::into_boxed_str),
        rare: RareFields {
            error_message: m.error_message,
            signal_type: string(m.signal_type).map(String::into_boxed_str),
            attributes: m.attributes,
            tool_call_id: None,
        }
        .boxed(),
    };
    let is_error = m
        .is_error
        .as_ref()
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let fields = CompactFields::new(m.tool_call_id, m.tool_name, is_error, text, rest)
        .with_image_markers(image_markers);
    Message {
        role,
        form: MessageForm::Compact(fields),
        marks: markers.boxed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::entry::Role;
    use compact_str::CompactString;

    const ASSISTANT: &str = r#"{"type":"message","id":"e61f0b2c","parentId":"5d2a7f13","timestamp":"2026-01-05T09:12:45.870Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Need the weather.","thinkingSignature":"Eq"},{"type":"text","text":"Checking\nboth."},{"type":"toolCall","id":"toolu_01XyZ","name":"get_weather","arguments":{"city":"Oslo"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-haiku-4-5","usage":{"input":1204,"output":88,"cacheRead":0,"cacheWrite":0,"totalTokens":1292,"cost":{"total":0.001644}},"stopReason":"toolUse","timestamp":1767604364140}}"#;

    #[test]
    fn keeps_what_the_classifier_reads() {
        let c = parse_compact(3, "e61f0b2c", ASSISTANT.as_bytes());
        let f = Entry::parse(3, "e61f0b2c", ASSISTANT);
        assert!(c.compact && c.raw.is_empty());
        assert_eq!(c.stored_len as usize, ASSISTANT.len());
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

    /// Dropping previews changes the text and nothing else: every other field of the entry is
    /// the one kept with it, on rows the scanner reads and rows it leaves to serde.
    #[test]
    fn dropping_previews_changes_only_the_text() {
        for row in [
            r#"{"type":"message","id":"a1","parentId":"a0","message":{"role":"toolResult","toolCallId":"toolu_01","toolName":"grep","content":[{"type":"text","text":"found 3 matches\nsrc/a.rs"}],"isError":true}}"#,
            r#"{"type":"message","id":"a2","message":{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"toolCall","id":"t1","name":"bash","arguments":{}}],"stopReason":"toolUse"}}"#,
            r#"{"type":"message","id":"a3","message":{"role":"user","content":"an escaped key \u0041","\u0074ag":1}}"#,
        ] {
            let (mut kept, _) = parse_compact_previews(0, "c", row.as_bytes(), Previews::Keep);
            let (dropped, _) = parse_compact_previews(0, "c", row.as_bytes(), Previews::Drop);
            let EntryBody::Message(m) = &mut kept.body else {
                panic!("a message: {row}")
            };
            let MessageForm::Compact(c) = &mut std::sync::Arc::get_mut(m).unwrap().form else {
                panic!("compact: {row}")
            };
            assert!(!c.text.is_empty() && !c.preview_dropped(), "{row}");
            c.drop_preview();
            assert_eq!(kept, dropped, "{row}");
        }
    }

    /// Reading a dropped preview is a bug the debug build stops at.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "without previews")]
    fn reading_a_dropped_preview_panics_in_debug_builds() {
        let row = r#"{"type":"message","id":"a1","message":{"role":"user","content":"hi"}}"#;
        let (e, _) = parse_compact_previews(0, "c", row.as_bytes(), Previews::Drop);
        let _ = e.message().unwrap().text();
    }

    /// The runtime's 8-character ids and 24-character timestamps are held inline by every parser
    /// (full, compact byte scanner, compact serde visitors), so a whale's entries allocate nothing
    /// for them; a longer id goes to the heap and reads back exactly.
    #[test]
    fn runtime_ids_and_timestamps_are_inline_and_long_ids_round_trip() {
        let row = |id: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"5d2a7f13","timestamp":"2026-01-05T09:12:45.870Z","message":{{"role":"toolResult","toolCallId":"toolu_01","toolName":"get_weather","content":[{{"type":"text","text":"ok"}}],"isError":false}}}}"#
            )
        };
        type Parser = fn(&str) -> Entry;
        let parsers: [(&str, Parser); 3] = [
            ("full", |r| Entry::parse(0, "column", r)),
            ("scan", |r| parse_compact(0, "column", r.as_bytes())),
            ("serde", |r| {
                parse_compact_with(0, "column", r.as_bytes(), parse_top, Previews::Keep).0
            }),
        ];
        for (name, parse) in parsers {
            let e = parse(&row("e61f0b2c"));
            assert_eq!(e.id, "e61f0b2c", "{name}");
            assert_eq!(e.parent_id.as_deref(), Some("5d2a7f13"), "{name}");
            assert_eq!(
                e.timestamp.as_deref(),
                Some("2026-01-05T09:12:45.870Z"),
                "{name}"
            );
            let inline =
                |s: &Option<CompactString>| s.as_ref().is_some_and(|s| !s.is_heap_allocated());
            assert!(!e.id.is_heap_allocated(), "{name}: id");
            assert!(inline(&e.parent_id), "{name}: parentId");
            assert!(inline(&e.timestamp), "{name}: timestamp");
            match e.message().and_then(|m| m.compact()) {
                Some(c) => {
                    let tool = c.tool_name.as_ref().expect("toolName");
                    assert_eq!(tool, "get_weather", "{name}");
                    assert!(!tool.is_heap_allocated(), "{name}: toolName");
                }
                None => assert_eq!(name, "full", "only the full parse keeps no compact fields"),
            }
            let long = "0123456789abcdef0123456789abcdef-long-id";
            assert_eq!(long.len(), 40);
            let e = parse(&row(long));
            assert_eq!(e.id, long, "{name}");
            assert!(e.id.is_heap_allocated(), "{name}: a 40-byte id");
        }
    }

    /// Call ids of every shape (the providers' 29- and 30-byte ids in place, a longer one, a
    /// number, null, none) read back from both compact parsers as the full parse reads them, on
    /// the call and on its result.
    #[test]
    fn call_ids_of_every_shape_read_back_as_the_full_parse_reads_them() {
        for id in [
            r#""toolu_01bIAoSCFbH8lsEpYiPloNTB""#,
            r#""call_abcdefghijklmnopqrstuvwx""#,
            r#""toolu_01bIAoSCFbH8lsEpYiPloNTB-and-more""#,
            r#""""#,
            "17",
            "null",
        ] {
            let call = format!(
                r#"{{"type":"message","id":"a1","message":{{"role":"assistant","content":[{{"type":"toolCall","id":{id},"name":"read_file","arguments":{{}}}}],"stopReason":"toolUse"}}}}"#
            );
            let result = format!(
                r#"{{"type":"message","id":"r1","message":{{"role":"toolResult","toolCallId":{id},"toolName":"read_file","content":"x","isError":true}}}}"#
            );
            let absent = r#"{"type":"message","id":"r2","message":{"role":"toolResult","toolName":"t","content":"x"}}"#;
            for row in [call.as_str(), result.as_str(), absent] {
                let full = Entry::parse(0, "c", row);
                let fm = full.message().unwrap();
                for c in [
                    parse_compact(0, "c", row.as_bytes()),
                    parse_compact_with(0, "c", row.as_bytes(), parse_top, Previews::Keep).0,
                ] {
                    let cm = c.message().unwrap();
                    assert!(cm.compact().is_some(), "{row}");
                    assert_eq!(cm.tool_call_id(), fm.tool_call_id(), "{row}");
                    assert_eq!(cm.tool_call_id_str(), fm.tool_call_id_str(), "{row}");
                    assert_eq!(cm.is_error(), fm.is_error(), "{row}");
                    let ids = |m: &Message| -> Vec<_> {
                        m.tool_calls().into_iter().map(|t| (t.id, t.name)).collect()
                    };
                    assert_eq!(ids(cm), ids(fm), "{row}");
                }
            }
        }
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
        assert_eq!(*m.value(), Value::Null, "the skeleton is not kept");
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
