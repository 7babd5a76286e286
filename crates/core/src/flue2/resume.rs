//! What the runtime's resume will do once the reconciler hands a submission to a new attempt
//! (step 6) or the queue hands a requeued one to a new claim (step 7): the session's
//! `runPersistedContextInput` (flue 2.1.0's `dist/conversation-stream-store-B2RVviYM.mjs:4542`)
//! simulated on a copy of the folded conversation, classifying again after each change as the
//! runtime does.
//!
//! In order: `materializeGhostStream("any")` converges the in-progress message at the leaf into an
//! `aborted` assistant entry; where the input entry is missing, `settleTrailingToolBatch("any")`
//! marker-settles a trailing batch at the leaf and the input is appended; `markSubmissionInputApplied`
//! stamps `input_applied_at` (and, the first time, `max_attempts` and a deadline from the
//! attempt's start); `repairResumableTail` (CSS:4443) upgrades an `aborted_partial` with text to a
//! stream continuation (`upgradeAbortedPartialToContinuation`, two signals) and repairs a
//! `tool_results_partial` or `tool_use_unresolved` batch (`repairTrailingPartialToolBatch`,
//! CSS:2598: recorded outcomes kept, `task` calls with a retained child resumed, `durable: true`
//! tools re-executed with their steps replayed from memos, every other unresolved call an
//! interrupted marker, a `length` batch's calls the truncation error; then one
//! `tool_results_committed`); `resumeConversationToCompletion` (CSS:4458) classifies again and
//! fails the submission (`absent`, `advanced_past_input`, `terminal_error`), settles it completed
//! without a model call (`completed`), or continues the model turn.
//!
//! Not predicted: deliveries joined at the turn boundary (`applyQueuedJoins`), what the model
//! answers, which tools the agent as deployed declares `durable` (the journal does not say), and
//! retained `task` children (turnscope does not fold them).

use serde::Serialize;
use serde_json::json;

use super::classify::{classify_conversation_submission, encode_canonical_id, Flue2Classification};
use super::records::Parent;
use super::rows::Flue2SubmissionRow;
use super::state::{Conversation, Entry, EntryBody, InProgressMessage, ToolCallRef};
use super::writes::{
    batch_at_leaf, calls_of, commit_record_id, converge_write, ghost_at_leaf, outcome_record_ids,
    split_calls, CallRef, Flue2Write,
};
use crate::recovery::classify::{ResumeMode, SubmissionState};

/// One thing the resume does, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ResumeAction {
    /// `materializeGhostStream("any")` (the records of [`Flue2Write::ConvergeGhost`]).
    Converge { write: Flue2Write },
    /// A new claim with the input missing: `settleTrailingToolBatch("any")` first.
    SettleBatchBeforeInput { write: Flue2Write },
    /// The input entry appended (`user_message` or `signal`).
    AppendInput { entry_id: String },
    /// `markSubmissionInputApplied`; `sets_deadline`: `input_applied_at` was empty, so
    /// `max_attempts` and `timeout_at` (the attempt's start + the agent's `durability.timeoutMs`,
    /// 1 h by default) are set now.
    MarkInputApplied { sets_deadline: bool },
    /// `upgradeAbortedPartialToContinuation`: `stream_interrupted` and `stream_continued` signals
    /// after the aborted partial.
    UpgradeToContinuation { partial_entry_id: String },
    /// `repairTrailingPartialToolBatch`.
    RepairBatch {
        assistant_entry_id: String,
        /// Calls whose outcome is recorded: kept as recorded.
        kept: Vec<String>,
        /// Calls without one: an interrupted marker each, unless a `task` call with a retained
        /// child (resumed) or a `durable: true` tool (re-executed).
        unresolved: Vec<CallRef>,
        /// A `length` batch: unresolved calls get the truncation error, nothing re-executed.
        truncated: bool,
        /// The outcome records the unresolved calls get where each is marked
        /// (`record_tool_repair_outcome_…`, or `record_tool_truncated_outcome_…` for `length`).
        marker_record_ids: Vec<String>,
        commit_record_id: String,
    },
}

impl ResumeAction {
    pub fn describe(&self) -> String {
        match self {
            ResumeAction::Converge { write } => write.describe(),
            ResumeAction::SettleBatchBeforeInput { write } => {
                format!("before the input: {}", write.describe())
            }
            ResumeAction::AppendInput { entry_id } => format!("append the input entry {entry_id}"),
            ResumeAction::MarkInputApplied { sets_deadline: true } => {
                "mark the input applied: input_applied_at, max_attempts and a new deadline (timeout_at) from this attempt's start".into()
            }
            ResumeAction::MarkInputApplied { sets_deadline: false } => {
                "mark the input applied (already stamped: max_attempts and timeout_at kept)".into()
            }
            ResumeAction::UpgradeToContinuation { partial_entry_id } => format!(
                "append stream_interrupted and stream_continued after the aborted partial {partial_entry_id}"
            ),
            ResumeAction::RepairBatch { assistant_entry_id, kept, unresolved, truncated, .. } => {
                let calls = unresolved.iter().map(|c| format!("{} {}", c.name, c.id)).collect::<Vec<_>>().join(", ");
                let unresolved_text = if unresolved.is_empty() {
                    "no call unresolved".to_string()
                } else if *truncated {
                    format!("the truncation error for {calls}")
                } else {
                    format!("an interrupted marker for {calls} (a durable: true tool is re-executed instead, a task call with a retained child resumed)")
                };
                format!(
                    "repair the batch of {assistant_entry_id}: {} recorded outcome(s) kept, {unresolved_text}, one tool_results_committed",
                    kept.len()
                )
            }
        }
    }
}

/// How the resume ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum ResumeEnd {
    /// The model turn continues from this state (`agentLoop.continue()`).
    ModelTurn { from: String },
    /// `completed` without an overflow: no model call; settled completed.
    SettleCompleted,
    /// The resume throws; the attempt settles the submission `failed` with this error.
    Fails { error: String },
}

impl ResumeEnd {
    pub fn describe(&self) -> String {
        match self {
            ResumeEnd::ModelTurn { from } => format!("continue the model turn from {from}"),
            ResumeEnd::SettleCompleted => "no model call: settle completed".into(),
            ResumeEnd::Fails { error } => format!("fails: settled failed with {error:?}"),
        }
    }
}

/// What the runtime's resume will do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flue2Resume {
    /// `replacement` (step 6) or `next_claim` (step 7).
    pub after: &'static str,
    pub actions: Vec<ResumeAction>,
    /// The classification the resume decides on, after its repairs.
    pub classification: String,
    pub end: ResumeEnd,
}

/// The ghost committed as `materializeInProgressStreamRecords` commits it: an `aborted`
/// assistant with its text and tool calls.
/// Returns whether the partial has reasoning text (which the entry's `text` leaves out but
/// `upgradeAbortedPartialToContinuation` counts).
fn materialize(conv: &mut Conversation, ghost: &InProgressMessage) -> bool {
    use super::records::BlockKind;
    let reasoning = ghost.blocks.iter().any(|b| {
        b.tool_call.is_none() && b.kind != BlockKind::Text && !b.deltas.concat().is_empty()
    });
    let text: String = ghost
        .blocks
        .iter()
        .filter(|b| b.tool_call.is_none() && b.kind == BlockKind::Text)
        .map(|b| b.deltas.concat())
        .collect();
    let tool_calls = ghost
        .blocks
        .iter()
        .filter_map(|b| b.tool_call.clone())
        .collect();
    let id = ghost.message_id.clone();
    conv.in_progress.retain(|m| m.message_id != id);
    conv.commit(Entry {
        id,
        parent_id: ghost.parent_id.clone(),
        submission_id: ghost.submission_id.clone(),
        body: EntryBody::Assistant {
            stop_reason: "aborted".into(),
            error_message: Some("Stream interrupted before completion.".into()),
            text,
            tool_calls,
            usage: Some(json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}).into()),
        },
    });
    reasoning
}

/// Whether each call's committed result will be an error: its recorded outcome's, else a marker's
/// (always an error).
fn outcome_errors(conv: &Conversation, assistant: &str, calls: &[ToolCallRef]) -> Vec<bool> {
    calls
        .iter()
        .map(|call| {
            conv.uncommitted_outcomes
                .iter()
                .find(|o| o.assistant_message_id == assistant && o.tool_call_id == call.id)
                .is_none_or(|o| o.is_error)
        })
        .collect()
}

fn commit_batch(
    conv: &mut Conversation,
    assistant: &str,
    calls: &[ToolCallRef],
    submission: Option<String>,
    outcomes_error: &[bool],
) {
    let mut parent = Parent::Id(assistant.to_string());
    for (c, is_error) in calls.iter().zip(outcomes_error) {
        let id = format!(
            "entry_tool_result_{}_{}",
            encode_canonical_id(assistant),
            encode_canonical_id(&c.id)
        );
        conv.commit(Entry {
            id: id.clone(),
            parent_id: parent,
            submission_id: submission.clone(),
            body: EntryBody::ToolResult {
                tool_call_id: c.id.clone(),
                tool_name: c.name.clone(),
                is_error: *is_error,
                terminate: false,
            },
        });
        parent = Parent::Id(id);
    }
    conv.uncommitted_outcomes
        .retain(|o| o.assistant_message_id != assistant);
}

fn signal(
    conv: &mut Conversation,
    id: String,
    parent: &str,
    signal_type: &str,
    submission: Option<String>,
) {
    conv.commit(Entry {
        id,
        parent_id: Parent::Id(parent.to_string()),
        submission_id: submission,
        body: EntryBody::Signal {
            signal_type: signal_type.into(),
        },
    });
}

/// `repairResumableTail`, then `resumeConversationToCompletion`'s decision, on `conv` (changed in
/// place as the runtime's appends would change it).
fn repair_and_decide(
    row: &Flue2SubmissionRow,
    c0: &Flue2Classification,
    conv: &mut Conversation,
    actions: &mut Vec<ResumeAction>,
    reasoning_partial: Option<&str>,
) -> (String, ResumeEnd) {
    let input_id = row.input_entry_id();
    let errlabel = format!("{}({})", row.kind, row.submission_id);
    let classify = |conv: &Conversation| {
        classify_conversation_submission(Some(conv), &input_id, c0.context_window, c0.variant)
    };
    let mut c = match classify(conv) {
        Ok(c) => c,
        Err(e) => {
            return (
                "error".into(),
                ResumeEnd::Fails {
                    error: e.to_string(),
                },
            )
        }
    };
    // upgradeAbortedPartialToContinuation.
    if matches!(
        c.state,
        SubmissionState::Resume {
            mode: ResumeMode::AbortedPartial,
            ..
        }
    ) {
        let leaf = conv.active_leaf_id.clone().unwrap_or_default();
        let partial = conv.entry(&leaf).filter(|e| {
            e.submission_id.as_deref() == Some(row.submission_id.as_str())
                && matches!(&e.body, EntryBody::Assistant { stop_reason, tool_calls, text, .. }
                    if stop_reason == "aborted" && tool_calls.is_empty()
                        && (!text.is_empty() || reasoning_partial == Some(e.id.as_str())))
        });
        if partial.is_some() {
            let interrupted = format!("entry_recovery_{leaf}_stream_interrupted");
            let continued = format!("entry_recovery_{leaf}_stream_continued");
            let owner = Some(row.submission_id.clone());
            signal(
                conv,
                interrupted.clone(),
                &leaf,
                "stream_interrupted",
                owner.clone(),
            );
            signal(conv, continued, &interrupted, "stream_continued", owner);
            actions.push(ResumeAction::UpgradeToContinuation {
                partial_entry_id: leaf,
            });
        }
    }
    // repairTrailingPartialToolBatch.
    let repairs = matches!(
        c.state,
        SubmissionState::Resume {
            mode: ResumeMode::ToolResultsPartial,
            ..
        }
    ) || matches!(c.state, SubmissionState::ToolUseUnresolved { .. });
    if repairs {
        let Some(batch) = c.trailing_partial_batch.clone() else {
            return (
                c.label(),
                ResumeEnd::Fails {
                    error: "[flue] Classification found a trailing partial tool batch but repair cannot locate it — refusing to resume (a plain resume would re-execute recorded tool calls).".into(),
                },
            );
        };
        if conv.active_leaf_id.as_deref() != Some(batch.entry_id.as_str()) {
            return (
                c.label(),
                ResumeEnd::Fails {
                    error: "[flue] Cannot repair the trailing tool batch: its tool-call assistant is no longer the conversation leaf — an entry was appended before repair.".into(),
                },
            );
        }
        let entry = conv.entry(&batch.entry_id).cloned();
        let calls = entry.as_ref().map(calls_of).unwrap_or_default();
        let truncated = entry.as_ref().is_some_and(|e| {
            matches!(&e.body, EntryBody::Assistant { stop_reason, .. } if stop_reason == "length")
        });
        let (kept, unresolved) = split_calls(conv, &batch.entry_id, &calls);
        let errors = outcome_errors(conv, &batch.entry_id, &calls);
        commit_batch(
            conv,
            &batch.entry_id,
            &calls,
            Some(row.submission_id.clone()),
            &errors,
        );
        actions.push(ResumeAction::RepairBatch {
            marker_record_ids: outcome_record_ids(
                if truncated { "truncated" } else { "repair" },
                &batch.entry_id,
                &unresolved,
            ),
            commit_record_id: commit_record_id(&batch.entry_id),
            assistant_entry_id: batch.entry_id.clone(),
            kept,
            unresolved,
            truncated,
        });
    }
    if let Ok(again) = classify(conv) {
        c = again;
    }
    let end = match &c.state {
        SubmissionState::Absent => ResumeEnd::Fails {
            error: format!("{errlabel} failed: the input could not be persisted"),
        },
        SubmissionState::AdvancedPastInput => ResumeEnd::Fails {
            error: format!(
                "{errlabel} failed: the session advanced past this input before it completed"
            ),
        },
        SubmissionState::TerminalError { reason, .. } => ResumeEnd::Fails {
            error: format!(
                "{errlabel} failed: {}",
                reason.as_deref().unwrap_or("undefined")
            ),
        },
        SubmissionState::Completed {
            overflow: false, ..
        } => ResumeEnd::SettleCompleted,
        _ => ResumeEnd::ModelTurn { from: c.label() },
    };
    (c.label(), end)
}

/// What both resumes do first: a copy of the conversation with the ghost at its leaf (if any)
/// converged, the action that says so, and the ghost's id when it was a reasoning-only partial.
fn converge_first(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
) -> (Vec<ResumeAction>, Conversation, Option<String>) {
    let mut actions = Vec::new();
    let mut conv = conversation.cloned().unwrap_or_else(|| empty(row));
    let mut reasoning_partial = None;
    if let Some(g) = ghost_at_leaf(&conv, None).cloned() {
        actions.push(ResumeAction::Converge {
            write: converge_write(&g),
        });
        if materialize(&mut conv, &g) {
            reasoning_partial = Some(g.message_id.clone());
        }
    }
    (actions, conv, reasoning_partial)
}

/// Step 6: the replacement attempt's `runPersistedContextInput` (the input is in the
/// conversation, or the reconciler would have requeued).
pub(super) fn resume_after_replace(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    c: &Flue2Classification,
) -> Flue2Resume {
    simulate_after_replace(row, conversation, c).0
}

/// [`resume_after_replace`] with the conversation as the resume leaves it (before its model
/// turn): what the next request is built from.
pub fn simulate_after_replace(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    c: &Flue2Classification,
) -> (Flue2Resume, Conversation) {
    let (mut actions, mut conv, reasoning_partial) = converge_first(row, conversation);
    actions.push(ResumeAction::MarkInputApplied {
        sets_deadline: row.input_applied_at.is_none(),
    });
    let (classification, end) = repair_and_decide(
        row,
        c,
        &mut conv,
        &mut actions,
        reasoning_partial.as_deref(),
    );
    (
        Flue2Resume {
            after: "replacement",
            actions,
            classification,
            end,
        },
        conv,
    )
}

/// Step 7: what the next claim of the requeued row does: its deadline set again from that
/// claim's start (requeue cleared `input_applied_at`).
pub(super) fn resume_after_requeue(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    c: &Flue2Classification,
) -> Flue2Resume {
    simulate_after_requeue(row, conversation, c).0
}

/// [`resume_after_requeue`] with the conversation as the next claim's resume leaves it (before
/// its model turn).
pub fn simulate_after_requeue(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    c: &Flue2Classification,
) -> (Flue2Resume, Conversation) {
    let (mut actions, mut conv, reasoning_partial) = converge_first(row, conversation);
    let input_id = row.input_entry_id();
    if !conv.has_entry(&input_id) {
        if let Some(w) = batch_at_leaf(&conv, None, c.variant) {
            if let Flue2Write::MarkerSettleBatch {
                assistant_entry_id, ..
            } = &w
            {
                let a = assistant_entry_id.clone();
                let calls = conv.entry(&a).map(calls_of).unwrap_or_default();
                let errors = outcome_errors(&conv, &a, &calls);
                let owner = conv.entry(&a).and_then(|e| e.submission_id.clone());
                commit_batch(&mut conv, &a, &calls, owner, &errors);
            }
            actions.push(ResumeAction::SettleBatchBeforeInput { write: w });
        }
        let parent = conv.active_leaf_id.clone().map_or(Parent::Null, Parent::Id);
        conv.commit(Entry {
            id: input_id.clone(),
            parent_id: parent,
            submission_id: Some(row.submission_id.clone()),
            body: EntryBody::User {
                content: Vec::new(),
            },
        });
        actions.push(ResumeAction::AppendInput { entry_id: input_id });
    }
    actions.push(ResumeAction::MarkInputApplied {
        sets_deadline: true,
    });
    let (classification, end) = repair_and_decide(
        row,
        c,
        &mut conv,
        &mut actions,
        reasoning_partial.as_deref(),
    );
    (
        Flue2Resume {
            after: "next_claim",
            actions,
            classification,
            end,
        },
        conv,
    )
}

/// The conversation the runtime's session opens where the instance has none for the scope.
fn empty(row: &Flue2SubmissionRow) -> Conversation {
    let key = row.session();
    Conversation {
        conversation_id: String::new(),
        kind: "root".into(),
        harness: key.as_ref().map_or_else(String::new, |k| k.harness.clone()),
        session: key.as_ref().map_or_else(String::new, |k| k.session.clone()),
        parent_conversation_id: None,
        entries: Default::default(),
        active_leaf_id: None,
        in_progress: Vec::new(),
        uncommitted_outcomes: Vec::new(),
        last_assistant_by_submission: Default::default(),
        model: None,
        kept_path: Default::default(),
    }
}

/// The conversation as a terminal step's writes (steps 2–5: `writes` of its plan) leave it: the
/// ghost converged, the trailing batch marker-settled, the terminal signal appended; what the
/// session's next input starts from. The settlement record is not an entry.
pub fn simulate_terminal(
    row: &Flue2SubmissionRow,
    conversation: Option<&Conversation>,
    writes: &[Flue2Write],
) -> Conversation {
    let mut conv = conversation.cloned().unwrap_or_else(|| empty(row));
    for w in writes {
        match w {
            Flue2Write::ConvergeGhost { message_id, .. } => {
                let ghost = conv
                    .in_progress
                    .iter()
                    .find(|m| m.message_id == *message_id)
                    .cloned();
                if let Some(g) = ghost {
                    materialize(&mut conv, &g);
                }
            }
            Flue2Write::MarkerSettleBatch {
                assistant_entry_id, ..
            } => {
                let a = assistant_entry_id.clone();
                let calls = conv.entry(&a).map(calls_of).unwrap_or_default();
                let errors = outcome_errors(&conv, &a, &calls);
                let owner = conv.entry(&a).and_then(|e| e.submission_id.clone());
                commit_batch(&mut conv, &a, &calls, owner, &errors);
            }
            Flue2Write::TerminalSignal {
                signal_type,
                record_id,
                already_present: false,
                ..
            } => {
                let parent = conv.active_leaf_id.clone().map_or(Parent::Null, Parent::Id);
                conv.commit(Entry {
                    // Its entry id is drawn when it is written; named after its record here.
                    id: format!("entry_{record_id}"),
                    parent_id: parent,
                    submission_id: Some(row.submission_id.clone()),
                    body: EntryBody::Signal {
                        signal_type: (*signal_type).into(),
                    },
                });
            }
            _ => {}
        }
    }
    conv
}
