//! The "next request" of a flue 2.x submission: the message list the runtime's next model call
//! sends, computed from the folded conversation and the reconciler's plan.
//!
//! 1. What the runtime's recovery writes first: the resume that follows the plan's step 6
//!    (replacement) or 7 (requeue, then the next claim) simulated on a copy of the conversation by
//!    [`super::resume`] (the ghost converged, stream continuation signals, the tool batch
//!    repaired, the input appended); for a terminal step (2–5), its writes (the ghost converged,
//!    the batch marker-settled, the terminal signal), the path the session's next input starts
//!    from. Entries the simulation adds are marked as written by recovery.
//! 2. The runtime's context builder over the active path from the active leaf: 2.1.0's
//!    `buildConversationContextEntries`/`pathToContextEntries` (DSP:714–784) make the same
//!    choices as beta.7's `SessionHistory` (drop error turns, lone aborted turns, incomplete tool
//!    batches and stray results; keep an aborted partial followed by `stream_interrupted` and
//!    `stream_continued`; signals rendered as user messages; the latest compaction's summary
//!    first), so beta.7's port ([`crate::recovery::next_request::context`]) is reused.
//! 3. The model library's `transformMessages` at the version 2.x pins, pi-ai 0.83.0
//!    ([`ModelLibrary::PiAi0_83_0`]).
//!
//! The fold keeps of each entry what the classifier and the recovery read: roles, entry ids,
//! tool call ids and names, stop reasons, user and assistant text; not a signal's text and
//! attributes, a tool result's content, thinking blocks, the answering model, or a compaction's
//! summary. The messages are built from that, so the view is exact role by role and id by id,
//! and its text is partial where the fold is. Pure.

use serde_json::{json, Value};

use super::classify::{classify_conversation_submission, Flue2Classification};
use super::reconciler::{Flue2Plan, Flue2Step};
use super::records::ContentBlock;
use super::resume::{
    simulate_after_replace, simulate_after_requeue, simulate_terminal, Flue2Resume, ResumeEnd,
};
use super::rows::Flue2SubmissionRow;
use super::state::{Conversation, Entry, EntryBody};
use crate::recovery::classify::{ResumeMode, SubmissionState};
use crate::recovery::next_request::{
    next_request_over_path, ItemBody, ModelLibrary, NextRequest, PathItem, Turn, Written,
};

/// The model library every 2.x release pins (`@earendil-works/pi-ai` `^0.83.0`; 2.1.0 installs
/// 0.83.0).
pub const FLUE2_MODEL_LIBRARY: ModelLibrary = ModelLibrary::PiAi0_83_0;

/// What a signal's message says in the view: its text is not kept by the fold.
pub const SIGNAL_TEXT_NOT_READ: &str = "(signal text not read)";

/// The next request of a 2.x submission, with what it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Flue2NextRequest {
    pub request: NextRequest,
    /// Entries on the stored active path.
    pub stored_entries: usize,
    /// The resume simulated, where the plan hands the submission to one.
    pub resume: Option<Flue2Resume>,
    /// One line that qualifies the view (a path that cannot be walked, …).
    pub note: Option<String>,
}

/// `row`'s next request: its conversation (`None`: the instance has none for its scope), the
/// classification (or why there is none) and the plan `plan_flue2` made for it.
pub fn flue2_next_request(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    classification: Result<&Flue2Classification, &str>,
    plan: &Flue2Plan,
) -> Flue2NextRequest {
    let mut note = None;
    let stored: Vec<Entry> = match conversation.map(Conversation::active_path) {
        Some(Ok(p)) => p.into_iter().cloned().collect(),
        Some(Err(e)) => {
            note = Some(format!("the active path cannot be walked: {}", e.reason));
            Vec::new()
        }
        None => Vec::new(),
    };
    let stored_entries = stored.len();
    let simulated = match (plan.step, classification) {
        (Flue2Step::Replace, Ok(c)) => Some(simulate_after_replace(row, conversation, c)),
        (Flue2Step::Requeue, Ok(c)) => Some(simulate_after_requeue(row, conversation, c)),
        _ => None,
    };
    let Some((resume, after)) = simulated else {
        let reason = match classification {
            Err(e) => format!("the runtime cannot inspect it: {e}"),
            Ok(_) => format!("{} ({})", plan.why, plan.step.column()),
        };
        let turn = Turn::NoCall { reason };
        // A terminal step's writes are on the path the session's next input starts from.
        let terminal = matches!(
            plan.step,
            Flue2Step::Completed | Flue2Step::Abort | Flue2Step::Budget | Flue2Step::Timeout
        );
        if terminal {
            let after = simulate_terminal(row, conversation, &plan.writes);
            return Flue2NextRequest {
                request: over(&after, conversation, turn, &mut note),
                stored_entries,
                resume: None,
                note,
            };
        }
        let path = stored.iter().map(|e| item(e, None)).collect();
        return Flue2NextRequest {
            request: next_request_over_path(path, vec![], turn, None, FLUE2_MODEL_LIBRARY),
            stored_entries,
            resume: None,
            note,
        };
    };
    let turn = match &resume.end {
        ResumeEnd::SettleCompleted => Turn::NoCall {
            reason: "the resume settles it completed without a model call".into(),
        },
        ResumeEnd::Fails { error } => Turn::NoCall {
            reason: format!("the resume fails before a model call: {error}"),
        },
        ResumeEnd::ModelTurn { .. } => {
            // The overflow recovery's first call is the compaction's summary request.
            let overflow = classification.ok().and_then(|c| {
                classify_conversation_submission(
                    Some(&after),
                    &row.input_entry_id(),
                    c.context_window,
                    c.variant,
                )
                .ok()
            });
            match overflow.map(|c| c.state) {
                Some(SubmissionState::Resume {
                    mode: ResumeMode::Overflow,
                    ..
                })
                | Some(SubmissionState::Completed { overflow: true, .. }) => Turn::CompactionFirst,
                _ => Turn::Continue,
            }
        }
    };
    Flue2NextRequest {
        request: over(&after, conversation, turn, &mut note),
        stored_entries,
        resume: Some(resume),
        note,
    }
}

/// The request over `after` (the conversation as recovery leaves it), its entries that `before`
/// does not hold marked as recovery's writes.
fn over(
    after: &Conversation,
    before: Option<&Conversation>,
    turn: Turn,
    note: &mut Option<String>,
) -> NextRequest {
    let path_after = match after.active_path() {
        Ok(p) => p,
        Err(e) => {
            *note = Some(format!(
                "the path after recovery cannot be walked: {}",
                e.reason
            ));
            Vec::new()
        }
    };
    let path: Vec<PathItem> = path_after
        .iter()
        .map(|e| {
            let written = match before {
                Some(c) if c.has_entry(&e.id) => None,
                _ => Some(written_by(e, before)),
            };
            item(e, written)
        })
        .collect();
    let recovery = recovery_counts(&path);
    next_request_over_path(path, recovery, turn, None, FLUE2_MODEL_LIBRARY)
}

/// An instance's conversation as it stands, no submission named: its next input (not known yet)
/// follows the stored active path.
pub fn flue2_next_input(conversation: &Conversation) -> Flue2NextRequest {
    let (stored, note) = match conversation.active_path() {
        Ok(p) => (p, None),
        Err(e) => (
            Vec::new(),
            Some(format!("the active path cannot be walked: {}", e.reason)),
        ),
    };
    let path = stored.iter().map(|e| item(e, None)).collect();
    Flue2NextRequest {
        request: next_request_over_path(path, vec![], Turn::NextInput, None, FLUE2_MODEL_LIBRARY),
        stored_entries: stored.len(),
        resume: None,
        note,
    }
}

/// Which of the resume's writes added `e`.
fn written_by(e: &Entry, before: Option<&Conversation>) -> Written {
    match &e.body {
        EntryBody::Assistant { .. } => Written::StreamPartial,
        EntryBody::Signal { signal_type } if signal_type.starts_with("stream_") => {
            Written::StreamSignal
        }
        EntryBody::Signal { .. } => Written::Advisory,
        EntryBody::ToolResult { tool_call_id, .. } => {
            // A recorded outcome committed as it was recorded; else a marker.
            let assistant = match &e.parent_id {
                super::records::Parent::Id(_) => before.and_then(|c| {
                    c.uncommitted_outcomes
                        .iter()
                        .find(|o| {
                            o.tool_call_id == *tool_call_id
                                && e.id.starts_with(&format!(
                                    "entry_tool_result_{}_",
                                    super::classify::encode_canonical_id(&o.assistant_message_id)
                                ))
                        })
                        .map(|o| o.record_id.clone())
                }),
                _ => None,
            };
            Written::ToolRepair {
                copied_from: assistant,
            }
        }
        EntryBody::User { .. } | EntryBody::Compaction { .. } => Written::Input,
    }
}

/// The recovery writes in the order they appear on the path, with how many messages each adds.
fn recovery_counts(path: &[PathItem]) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    for w in path.iter().filter_map(|p| p.written.as_ref()) {
        let label = match w {
            Written::StreamPartial => "converge",
            Written::StreamSignal => "stream_recovery",
            Written::ToolRepair { .. } => "tool_repair",
            Written::Advisory => "advisory",
            Written::Input => "input",
        };
        match out.last_mut() {
            Some((l, n)) if *l == label => *n += 1,
            _ => out.push((label, 1)),
        }
    }
    out
}

/// An entry as the message the runtime's context builder reads, to the fold's fidelity.
fn item(e: &Entry, written: Option<Written>) -> PathItem {
    let body = match &e.body {
        EntryBody::User { content } => {
            let blocks: Vec<Value> = content
                .iter()
                .map(|b| match b {
                    ContentBlock::Text(t) => json!({"type": "text", "text": t}),
                    ContentBlock::Attachment(id) => json!({"type": "image", "data": id}),
                })
                .collect();
            ItemBody::Message(json!({"role": "user", "content": blocks}))
        }
        EntryBody::Signal { signal_type } => ItemBody::Message(json!({
            "role": "signal",
            "type": signal_type,
            "content": SIGNAL_TEXT_NOT_READ,
        })),
        EntryBody::Assistant {
            stop_reason,
            error_message,
            text,
            tool_calls,
            ..
        } => {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            blocks.extend(
                tool_calls
                    .iter()
                    .map(|c| json!({"type": "toolCall", "id": c.id, "name": c.name})),
            );
            let mut m = json!({"role": "assistant", "stopReason": stop_reason, "content": blocks});
            if let Some(err) = error_message {
                m["errorMessage"] = Value::from(err.clone());
            }
            ItemBody::Message(m)
        }
        EntryBody::ToolResult {
            tool_call_id,
            tool_name,
            is_error,
            ..
        } => ItemBody::Message(json!({
            "role": "toolResult",
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "isError": is_error,
            "content": [],
        })),
        EntryBody::Compaction {
            first_kept_entry_id,
        } => ItemBody::Compaction {
            summary: String::new(),
            first_kept_entry_id: Some(first_kept_entry_id.clone()),
        },
    };
    PathItem {
        id: e.id.clone(),
        written,
        body,
    }
}

#[cfg(test)]
#[path = "next_request_tests.rs"]
mod tests;
