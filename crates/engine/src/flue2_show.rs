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

/// `show --json` (`turnscope.flue2.show/1`).
pub fn show_json(
    options: &Flue2Options,
    format_version: &str,
    view: &ShowView<'_>,
    now_ms: i64,
) -> Value {
    let i = view.inspected;
    let after = following(i.conversation, &i.row.input_entry_id());
    let outcomes = i.conversation.map(|conv| Outcomes::new(conv, &after));
    let steps = StepsByCall::new(view.memos);
    let mut o = show_fields(options, format_version, view, &after, &steps, now_ms);
    // A whale's 100,000 entries: built on every core (each entry's document is its own), in
    // order.
    let one = |e: &&turnscope_core::flue2::Entry| following_json(i, outcomes.as_ref(), &steps, e);
    let following: Vec<Value> = if after.len() < 1024 {
        after.iter().map(one).collect()
    } else {
        use rayon::prelude::*;
        after.par_iter().with_min_len(512).map(one).collect()
    };
    o.insert("following".into(), Value::Array(following));
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
    o.insert("stepMemos".into(), json!(shown.len()));
    Value::Object(o)
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

/// One entry of `following` in the show document.
fn following_json(
    i: &Inspected<'_>,
    outcomes: Option<&Outcomes<'_>>,
    steps: &StepsByCall<'_>,
    e: &turnscope_core::flue2::Entry,
) -> Value {
    let mut v = json!({ "id": e.id, "submissionId": e.submission_id });
    let m = v.as_object_mut().unwrap();
    match &e.body {
        EntryBody::User { content } => {
            m.insert("role".into(), json!("user"));
            m.insert("text".into(), json!(user_text(content)));
            m.insert(
                "otherSubmission".into(),
                json!(e
                    .submission_id
                    .as_deref()
                    .is_some_and(|s| s != i.row.submission_id)),
            );
        }
        EntryBody::Signal { signal_type } => {
            m.insert("role".into(), json!("signal"));
            m.insert("signalType".into(), json!(signal_type));
        }
        EntryBody::Assistant {
            stop_reason,
            error_message,
            text,
            tool_calls,
            ..
        } => {
            m.insert("role".into(), json!("assistant"));
            m.insert("stopReason".into(), json!(stop_reason));
            m.insert("errorMessage".into(), json!(error_message));
            m.insert("text".into(), json!(text));
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| {
                    let outcome = outcomes
                        .as_ref()
                        .map_or(CallOutcome::None, |o| o.of(&e.id, &c.id));
                    // Built in place: `json!` would copy the outcome's and the steps' values
                    // (and below, every call's) through `to_value`, on every entry of a whale.
                    let mut call = Map::with_capacity(4);
                    call.insert("id".into(), json!(c.id));
                    call.insert("name".into(), json!(c.name));
                    call.insert("outcome".into(), outcome.to_json());
                    call.insert("steps".into(), steps.json(&c.id));
                    Value::Object(call)
                })
                .collect();
            m.insert("toolCalls".into(), Value::Array(calls));
        }
        EntryBody::ToolResult {
            tool_call_id,
            tool_name,
            is_error,
            terminate,
        } => {
            m.insert("role".into(), json!("toolResult"));
            m.insert("toolCallId".into(), json!(tool_call_id));
            m.insert("toolName".into(), json!(tool_name));
            m.insert("isError".into(), json!(is_error));
            m.insert("terminate".into(), json!(terminate));
        }
        EntryBody::Compaction {
            first_kept_entry_id,
        } => {
            m.insert("role".into(), json!("compaction"));
            m.insert("firstKeptEntryId".into(), json!(first_kept_entry_id));
        }
    }
    v
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
