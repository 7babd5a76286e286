//! The document `show` prints for a 2.x submission (`turnscope.flue2.show/1`): the classify
//! document ([`crate::flue2::classify_json`]) plus the conversation after the input, each tool
//! call with its outcome (committed, recorded but not committed, none), the in-progress
//! messages, the trailing batch, the step memos and what is not UTF-8 in the stream.

use serde_json::{json, Map, Value};
use turnscope_core::flue2::{ContentBlock, Conversation, EntryBody, Parent};

use crate::flue2::{classify_json, Flue2Options, Inspected};

/// Where a tool call's outcome is: committed (a tool-result entry), recorded but not committed
/// (a `tool_outcome` record only), or nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    Committed { entry_id: String, is_error: bool },
    Recorded { record_id: String, is_error: bool },
    None,
}

impl CallOutcome {
    fn to_json(&self) -> Value {
        match self {
            CallOutcome::Committed { entry_id, is_error } => {
                json!({ "state": "committed", "resultEntryId": entry_id, "isError": is_error })
            }
            CallOutcome::Recorded {
                record_id,
                is_error,
            } => {
                json!({ "state": "recorded_uncommitted", "recordId": record_id, "isError": is_error })
            }
            CallOutcome::None => json!({ "state": "none" }),
        }
    }
}

/// What `show` shows: the conversation after the input entry, the in-progress messages, the
/// recorded-but-uncommitted outcomes and the trailing batch.
pub struct ShowView<'a> {
    pub inspected: &'a Inspected<'a>,
    pub batches: usize,
    /// The `seq` of each batch whose text is not valid UTF-8 (`FoldedStream::not_utf8`).
    pub not_utf8: &'a [i64],
    /// The stream's step memos, each shown under its tool call (`steps`).
    pub memos: &'a [crate::flue2_memos::StepMemo],
}

/// The outcome of every call of a path (the committed result on the path, else a
/// recorded-but-uncommitted one), indexed once: a whale's path has tens of thousands of calls,
/// and a scan of the path per call is quadratic in its length.
pub struct Outcomes<'a> {
    /// The first tool result on the path for each call id.
    committed: foldhash::HashMap<&'a str, &'a turnscope_core::flue2::Entry>,
    /// The first recorded-but-uncommitted outcome for each (assistant, call).
    recorded: foldhash::HashMap<(&'a str, &'a str), &'a turnscope_core::flue2::UncommittedOutcome>,
}

impl<'a> Outcomes<'a> {
    pub fn new(
        conversation: &'a Conversation,
        path_after: &[&'a turnscope_core::flue2::Entry],
    ) -> Outcomes<'a> {
        let mut committed = foldhash::HashMap::default();
        for e in path_after {
            if let EntryBody::ToolResult { tool_call_id, .. } = &e.body {
                committed.entry(tool_call_id.as_str()).or_insert(*e);
            }
        }
        let mut recorded = foldhash::HashMap::default();
        for o in &conversation.uncommitted_outcomes {
            recorded
                .entry((o.assistant_message_id.as_str(), o.tool_call_id.as_str()))
                .or_insert(o);
        }
        Outcomes {
            committed,
            recorded,
        }
    }

    pub fn of(&self, assistant_id: &str, call_id: &str) -> CallOutcome {
        if let Some(e) = self.committed.get(call_id) {
            if let EntryBody::ToolResult { is_error, .. } = &e.body {
                return CallOutcome::Committed {
                    entry_id: e.id.clone(),
                    is_error: *is_error,
                };
            }
        }
        self.recorded
            .get(&(assistant_id, call_id))
            .map_or(CallOutcome::None, |o| CallOutcome::Recorded {
                record_id: o.record_id.clone(),
                is_error: o.is_error,
            })
    }
}

/// The committed entries after the input entry on the active path (empty where it is not there).
pub fn following<'c>(
    conversation: Option<&'c Conversation>,
    input_entry_id: &str,
) -> Vec<&'c turnscope_core::flue2::Entry> {
    let Some(path) = conversation.and_then(|c| c.active_path().ok()) else {
        return Vec::new();
    };
    match path.iter().position(|e| e.id == input_entry_id) {
        Some(i) => path[i + 1..].to_vec(),
        None => Vec::new(),
    }
}

fn parent_json(p: &Parent) -> Value {
    match p {
        Parent::Id(id) => json!(id),
        _ => Value::Null,
    }
}

/// The text of user content blocks (attachments as `[attachment ID]`).
pub fn user_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.clone(),
            ContentBlock::Attachment(id) => format!("[attachment {id}]"),
        })
        .collect()
}

/// `show --json` (`turnscope.flue2.show/1`) as one JSON tree: what `diff` compares (the CLI
/// writes it, [`ShowDocument::write_pretty`]; the TUI holds it compact, [`CompactShow`]).
pub fn show_json(
    options: &Flue2Options,
    format_version: &str,
    view: &ShowView<'_>,
    now_ms: i64,
) -> Value {
    let doc = ShowDocument::new(options, format_version, view, now_ms);
    let one = |e: &&turnscope_core::flue2::Entry| {
        serde_json::to_value(doc.following_entry(e)).unwrap_or(Value::Null)
    };
    // A whale's 100,000 entries: built on every core (each entry's document is its own), in
    // order.
    let following: Vec<Value> = if doc.after.len() < 1024 {
        doc.after.iter().map(one).collect()
    } else {
        use rayon::prelude::*;
        doc.after.par_iter().with_min_len(512).map(one).collect()
    };
    let mut o = doc.head;
    o.insert("following".into(), Value::Array(following));
    Value::Object(o)
}

/// The `show --json` document in two parts: every key (`following` null in its place, so the
/// keys keep their order) and the entries that `following` holds, serialised from the entries
/// when the document is written ([`ShowDocument::write_pretty`]). `show --json` writes a whale's
/// document without building its `following`: its small maps of strings, built, put the doubled
/// whale's `show` (170,000 batches) at 215 MB at the peak; written so, 124 MB, and 0.86x the
/// wall time (paired runs).
pub struct ShowDocument<'a> {
    /// Every key of the document; a caller may add its own (`show` adds `cost`, `attempts`).
    pub head: Map<String, Value>,
    inspected: &'a Inspected<'a>,
    after: Vec<&'a turnscope_core::flue2::Entry>,
    outcomes: Option<Outcomes<'a>>,
    steps: StepsByCall<'a>,
}

impl<'a> ShowDocument<'a> {
    pub fn new(
        options: &Flue2Options,
        format_version: &str,
        view: &ShowView<'a>,
        now_ms: i64,
    ) -> ShowDocument<'a> {
        let i = view.inspected;
        let after = following(i.conversation, &i.row.input_entry_id());
        let outcomes = i.conversation.map(|conv| Outcomes::new(conv, &after));
        let steps = StepsByCall::new(view.memos);
        let mut head = show_fields(options, format_version, view, &after, &steps, now_ms);
        // How many of the stream's memos belong to the calls shown (after the input, and the
        // trailing batch's).
        let mut shown: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut count_call = |call_id: &str| {
            for m in steps.of(call_id) {
                shown.insert(&m.record_id);
            }
        };
        for e in &after {
            if let EntryBody::Assistant { tool_calls, .. } = &e.body {
                tool_calls.iter().for_each(|c| count_call(&c.id));
            }
        }
        if let Some(b) = i
            .verdict
            .as_ref()
            .ok()
            .and_then(|c| c.trailing_partial_batch.as_ref())
        {
            b.tool_calls.iter().for_each(|c| count_call(&c.id));
        }
        head.insert("stepMemos".into(), json!(shown.len()));
        ShowDocument {
            head,
            inspected: i,
            after,
            outcomes,
            steps,
        }
    }

    /// The document held for drawing (the TUI's opened submission): every key, and `following`
    /// as compact text ([`CompactEntries`]), never as a JSON tree.
    pub fn into_compact(self) -> CompactShow {
        let part = |entries: &[&turnscope_core::flue2::Entry]| {
            let mut p = CompactPart {
                text: Vec::with_capacity(entries.len() * 128),
                ends: Vec::with_capacity(entries.len()),
            };
            for e in entries {
                // A `following` entry serialises from the fold's own strings: it cannot fail.
                let _ = serde_json::to_writer(&mut p.text, &self.following_entry(e));
                p.ends.push(p.text.len());
            }
            p.text.shrink_to_fit();
            p
        };
        let parts = if self.after.len() < 1024 {
            self.after.chunks(PART).map(part).collect()
        } else {
            // A whale's 100,000 entries, formatted on every core, a part each at a time.
            use rayon::prelude::*;
            self.after.par_chunks(PART).map(part).collect()
        };
        CompactShow {
            doc: Value::Object(self.head),
            following: CompactEntries { parts },
        }
    }

    fn following_entry<'d>(&'d self, e: &'d turnscope_core::flue2::Entry) -> FollowingEntry<'d> {
        FollowingEntry {
            i: self.inspected,
            outcomes: self.outcomes.as_ref(),
            steps: &self.steps,
            e,
        }
    }

    /// The document pretty-printed to `out`, ending in a newline: the bytes `show_json`'s tree
    /// (with the keys added to `head`) prints, `following` formatted in chunks on two threads.
    pub fn write_pretty(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let head = serde_json::to_vec_pretty(&self.head)?;
        // `following` is a key of the top-level object, null here: the formatter writes it as a
        // line of its own two spaces deep, and a newline is never inside a JSON string, so this
        // is the key itself, whatever the text around it.
        const KEY: &[u8] = b"\n  \"following\": null";
        let Some(at) = head.windows(KEY.len()).position(|w| w == KEY) else {
            return Err(std::io::Error::other(
                "the show document has no following key",
            ));
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
        w.write_all(&head[..at])?;
        w.write_all(b"\n  \"following\": ")?;
        crate::pretty_array::write_nested_array(&self.after, &mut w, 512, 4, |e| {
            self.following_entry(e)
        })?;
        w.write_all(&head[at + KEY.len()..])?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

/// Step memos by the tool call they belong to, each call's in the stream's order.
pub struct StepsByCall<'m>(foldhash::HashMap<&'m str, Vec<&'m crate::flue2_memos::StepMemo>>);

impl<'m> StepsByCall<'m> {
    pub fn new(memos: &'m [crate::flue2_memos::StepMemo]) -> StepsByCall<'m> {
        let mut by_call: foldhash::HashMap<&str, Vec<_>> = foldhash::HashMap::default();
        for m in memos {
            by_call.entry(m.tool_call_id.as_str()).or_default().push(m);
        }
        StepsByCall(by_call)
    }

    pub fn of(&self, call_id: &str) -> &[&'m crate::flue2_memos::StepMemo] {
        self.0.get(call_id).map_or(&[], Vec::as_slice)
    }

    /// A call's `steps` in the show document.
    fn json(&self, call_id: &str) -> Value {
        Value::Array(self.of(call_id).iter().map(|m| m.json()).collect())
    }
}

/// A `show --json` document held to be drawn: every key (`following` null in its place) and
/// `following` as [`CompactEntries`]. The TUI holds its opened submission so: with a whale of
/// 170,000 batches, its open peaked at 213 MB holding `following` as a JSON tree, at 133 MB
/// holding it as text (about 22 MB), each entry parsed again only when it is drawn or counted.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactShow {
    pub doc: Value,
    pub following: CompactEntries,
}

impl CompactShow {
    /// The document as one JSON tree, `following` in its place: what `show --json` prints.
    pub fn to_value(&self) -> Value {
        let mut doc = self.doc.clone();
        if let Some(o) = doc.as_object_mut() {
            o.insert("following".into(), Value::Array(self.following.values()));
        }
        doc
    }

    /// A document held compact: its `following` taken out and kept as text.
    pub fn from_value(mut doc: Value) -> CompactShow {
        let following = match doc.get_mut("following").map(Value::take) {
            Some(Value::Array(entries)) => entries,
            _ => Vec::new(),
        };
        let parts = following
            .chunks(PART)
            .map(|entries| {
                let mut p = CompactPart::default();
                for e in entries {
                    p.text.extend_from_slice(e.to_string().as_bytes());
                    p.ends.push(p.text.len());
                }
                p
            })
            .collect();
        CompactShow {
            doc,
            following: CompactEntries { parts },
        }
    }
}

/// The entries of a show document's `following`, each as its compact JSON text, in parts of
/// [`PART`] entries (formatted on every core, each part kept as it was formatted: joined in one
/// string they were, for a moment, twice a whale's text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactEntries {
    parts: Vec<CompactPart>,
}

/// Entries per [`CompactPart`] (the last may have fewer).
const PART: usize = 512;

#[derive(Debug, Clone, Default, PartialEq)]
struct CompactPart {
    /// The entries' JSON texts, end to end (UTF-8: JSON serialised from strings).
    text: Vec<u8>,
    /// Where each entry's text ends in `text`.
    ends: Vec<usize>,
}

impl CompactEntries {
    pub fn len(&self) -> usize {
        self.parts
            .last()
            .map_or(0, |p| (self.parts.len() - 1) * PART + p.ends.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`, parsed (`null` past the end).
    pub fn get(&self, i: usize) -> Value {
        let Some(p) = self.parts.get(i / PART) else {
            return Value::Null;
        };
        let k = i % PART;
        let Some(&end) = p.ends.get(k) else {
            return Value::Null;
        };
        let from = if k == 0 { 0 } else { p.ends[k - 1] };
        serde_json::from_slice(&p.text[from..end]).unwrap_or(Value::Null)
    }

    /// Every entry, parsed.
    pub fn values(&self) -> Vec<Value> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// One entry of `following` in the show document, serialised straight from the entry.
struct FollowingEntry<'d> {
    i: &'d Inspected<'d>,
    outcomes: Option<&'d Outcomes<'d>>,
    steps: &'d StepsByCall<'d>,
    e: &'d turnscope_core::flue2::Entry,
}

impl serde::Serialize for FollowingEntry<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let e = self.e;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &e.id)?;
        m.serialize_entry("submissionId", &e.submission_id)?;
        match &e.body {
            EntryBody::User { content } => {
                m.serialize_entry("role", "user")?;
                m.serialize_entry("text", &user_text(content))?;
                m.serialize_entry(
                    "otherSubmission",
                    &e.submission_id
                        .as_deref()
                        .is_some_and(|s| s != self.i.row.submission_id),
                )?;
            }
            EntryBody::Signal { signal_type } => {
                m.serialize_entry("role", "signal")?;
                m.serialize_entry("signalType", signal_type)?;
            }
            EntryBody::Assistant {
                stop_reason,
                error_message,
                text,
                tool_calls,
                ..
            } => {
                m.serialize_entry("role", "assistant")?;
                m.serialize_entry("stopReason", stop_reason)?;
                m.serialize_entry("errorMessage", error_message)?;
                m.serialize_entry("text", text)?;
                m.serialize_entry(
                    "toolCalls",
                    &Calls {
                        entry_id: &e.id,
                        calls: tool_calls,
                        outcomes: self.outcomes,
                        steps: self.steps,
                    },
                )?;
            }
            EntryBody::ToolResult {
                tool_call_id,
                tool_name,
                is_error,
                terminate,
            } => {
                m.serialize_entry("role", "toolResult")?;
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("isError", is_error)?;
                m.serialize_entry("terminate", terminate)?;
            }
            EntryBody::Compaction {
                first_kept_entry_id,
            } => {
                m.serialize_entry("role", "compaction")?;
                m.serialize_entry("firstKeptEntryId", first_kept_entry_id)?;
            }
        }
        m.end()
    }
}

/// An assistant's tool calls in `following`, each with its outcome and steps.
struct Calls<'d> {
    entry_id: &'d str,
    calls: &'d [turnscope_core::flue2::ToolCallRef],
    outcomes: Option<&'d Outcomes<'d>>,
    steps: &'d StepsByCall<'d>,
}

impl serde::Serialize for Calls<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        struct Call<'d>(&'d Calls<'d>, &'d turnscope_core::flue2::ToolCallRef);
        impl serde::Serialize for Call<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let (calls, c) = (self.0, self.1);
                let outcome = calls
                    .outcomes
                    .map_or(CallOutcome::None, |o| o.of(calls.entry_id, &c.id));
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("id", &c.id)?;
                m.serialize_entry("name", &c.name)?;
                m.serialize_entry("outcome", &outcome.to_json())?;
                m.serialize_entry("steps", &calls.steps.json(&c.id))?;
                m.end()
            }
        }
        let mut seq = s.serialize_seq(Some(self.calls.len()))?;
        for c in self.calls {
            seq.serialize_element(&Call(self, c))?;
        }
        seq.end()
    }
}

/// [`show_json`]'s fields, `following` null in its place.
fn show_fields(
    options: &Flue2Options,
    format_version: &str,
    view: &ShowView<'_>,
    after: &[&turnscope_core::flue2::Entry],
    steps: &StepsByCall<'_>,
    now_ms: i64,
) -> Map<String, Value> {
    let i = view.inspected;
    let Value::Object(mut o) = classify_json(options, format_version, i, now_ms) else {
        unreachable!()
    };
    o.insert("schema".into(), json!("turnscope.flue2.show/1"));
    o.insert("streamBatches".into(), json!(view.batches));
    o.insert("streamNotUtf8Batches".into(), json!(view.not_utf8));
    o.insert("following".into(), Value::Null);
    let (in_progress, uncommitted) = match i.conversation {
        Some(c) => (
            c.in_progress
                .iter()
                .map(|m| {
                    json!({
                        "messageId": m.message_id,
                        "parentId": parent_json(&m.parent_id),
                        "atLeaf": matches!((&m.parent_id, &c.active_leaf_id), (Parent::Id(p), Some(l)) if p == l),
                        "submissionId": m.submission_id,
                        "blocks": m.blocks.iter().map(|b| match &b.tool_call {
                            Some(call) => json!({ "type": "tool_call", "blockIndex": b.block_index, "toolCallId": call.id, "name": call.name }),
                            None => json!({
                                "type": format!("{:?}", b.kind).to_lowercase(),
                                "blockIndex": b.block_index,
                                "text": b.deltas.concat(),
                                "completed": b.completed,
                            }),
                        }).collect::<Vec<_>>(),
                    })
                })
                .collect::<Vec<_>>(),
            c.uncommitted_outcomes
                .iter()
                .map(|u| {
                    json!({
                        "recordId": u.record_id,
                        "assistantMessageId": u.assistant_message_id,
                        "toolCallId": u.tool_call_id,
                        "isError": u.is_error,
                    })
                })
                .collect::<Vec<_>>(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    o.insert(
        "activeLeafId".into(),
        json!(i.conversation.and_then(|c| c.active_leaf_id.clone())),
    );
    o.insert("inProgress".into(), json!(in_progress));
    o.insert("uncommittedToolOutcomes".into(), json!(uncommitted));
    o.insert(
        "trailingBatch".into(),
        trailing_batch_json(i, after, Some(steps)),
    );
    o
}

/// The trailing partial tool batch the classifier found (the batch a resume would complete),
/// each call with where its outcome is (`after`: the conversation after the input, [`following`]),
/// and its `steps` where `steps` is given (`show`); `null` without one.
pub fn trailing_batch_json(
    i: &Inspected<'_>,
    after: &[&turnscope_core::flue2::Entry],
    steps: Option<&StepsByCall<'_>>,
) -> Value {
    let Ok(c) = &i.verdict else {
        return Value::Null;
    };
    let Some(b) = &c.trailing_partial_batch else {
        return Value::Null;
    };
    let leaf = i.conversation.and_then(|c| c.active_leaf_id.clone());
    let outcomes = i.conversation.map(|conv| Outcomes::new(conv, after));
    json!({
        "assistantEntryId": b.entry_id,
        "atLeaf": leaf.as_deref() == Some(b.entry_id.as_str()),
        "toolCalls": b.tool_calls.iter().map(|call| {
            let outcome = outcomes
                .as_ref()
                .map_or(CallOutcome::None, |o| o.of(&b.entry_id, &call.id));
            let mut v = json!({ "id": call.id, "name": call.name, "hasResult": call.has_result, "outcome": outcome.to_json() });
            if let (Some(steps), Some(o)) = (steps, v.as_object_mut()) {
                o.insert("steps".into(), steps.json(&call.id));
            }
            v
        }).collect::<Vec<_>>(),
        "resultEntryIds": b.result_entry_ids,
        "trailingAbortedId": b.trailing_aborted_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(n: usize) -> Value {
        let following: Vec<Value> = (0..n)
            .map(|i| json!({ "id": format!("entry_{i}"), "role": "user", "text": format!("é \"{i}\"\n") }))
            .collect();
        json!({ "schema": "turnscope.flue2.show/1", "following": following, "stepMemos": 0 })
    }

    #[test]
    fn a_compact_document_gives_back_every_entry_across_its_parts() {
        for n in [0, 1, PART - 1, PART, PART + 1, 3 * PART + 7] {
            let whole = doc(n);
            let c = CompactShow::from_value(whole.clone());
            assert_eq!(c.following.len(), n);
            assert_eq!(c.following.is_empty(), n == 0);
            assert_eq!(c.doc["following"], Value::Null, "the key kept in its place");
            for i in [0, PART - 1, PART, n.saturating_sub(1)] {
                if i < n {
                    assert_eq!(c.following.get(i), whole["following"][i], "{n}: {i}");
                }
            }
            assert_eq!(c.following.get(n), Value::Null);
            assert_eq!(c.to_value(), whole, "{n}");
            // The keys in their order: `following` between the others, as printed.
            let keys: Vec<_> = c.to_value().as_object().unwrap().keys().cloned().collect();
            assert_eq!(keys, ["schema", "following", "stepMemos"]);
        }
    }
}
