//! The writes flue 2.x's recovery makes to a submission's row and its conversation stream
//! ([`Flue2Write`]), and the two conversation-tail repairs both the reconciler's terminal paths
//! and the resume make: the in-progress message at the leaf converged
//! (`materializeGhostStream`, flue 2.1.0's `dist/conversation-stream-store-B2RVviYM.mjs:2968`)
//! and the trailing batch at the leaf marker-settled (`settleTrailingToolBatch` CSS:3030,
//! `appendRepairedToolResultBatch` CSS:2814). [`super::reconciler`] and [`super::resume`] use
//! them.

use serde::Serialize;

use super::classify::{encode_canonical_id, find_trailing_partial_tool_batch, Flue2Variant};
use super::records::Parent;
use super::state::{Conversation, Entry, EntryBody, InProgressMessage, ToolCallRef};

/// A call of a tool batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallRef {
    pub id: String,
    pub name: String,
}

/// One write of the runtime, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Flue2Write {
    /// `materializeGhostStream`: the in-progress message at the leaf appended as an `aborted`
    /// assistant ("Stream interrupted before completion."), its unfinished text and reasoning
    /// blocks completed first.
    ConvergeGhost {
        message_id: String,
        record_ids: Vec<String>,
    },
    /// `settleTrailingToolBatch` / `appendRepairedToolResultBatch`: an interrupted-marker
    /// `tool_outcome` for each call without a recorded outcome, then one
    /// `tool_results_committed` of the whole batch (recorded outcomes kept, first write wins).
    MarkerSettleBatch {
        assistant_entry_id: String,
        kept: Vec<String>,
        markers: Vec<CallRef>,
        /// `record_tool_repair_outcome_<assistant>_<call>` (base64url ids), one per marker.
        marker_record_ids: Vec<String>,
        commit_record_id: String,
    },
    /// `recordSubmissionTerminal`: the `submission_interrupted` or `submission_aborted` signal
    /// (skipped where its record is already there).
    TerminalSignal {
        signal_type: &'static str,
        record_id: String,
        already_present: bool,
        content: String,
    },
    /// `settleJoinedSubmissions`: each delivery joined into this one settled the same way first.
    SettleJoined {
        submission_ids: Vec<String>,
        outcome: &'static str,
    },
    /// `reserveSubmissionSettlement`: `status = 'terminalizing'`, `settlement_record_id`,
    /// `settlement_record` (the `submission_settled` record's JSON).
    ReserveSettlement {
        outcome: &'static str,
        record_id: String,
    },
    /// The reserved `submission_settled` record appended to the stream (unless it is there).
    AppendSettled {
        record_id: String,
        already_present: bool,
    },
    /// `finalizeSubmissionSettlement`: `status = 'settled'`, `settled_at`, `error`.
    Finalize { error: Option<String> },
    /// `settleSubmissionWithRecord` without a conversation to hold the record:
    /// `completeSubmission` / `failSubmission`, the row alone.
    SettleRowOnly { error: Option<String> },
    /// `replaceSubmissionAttempt`: a new `attempt_id`, `started_at = now`, `attempt_count + 1`,
    /// this process as owner, `lease_expires_at = now + 30 s`.
    ReplaceAttempt {
        attempt_count: i64,
        lease_expires_at: i64,
    },
    /// `requeueSubmission`: `status = 'queued'`, `attempt_id`, `input_applied_at`, `started_at`,
    /// `owner_id` NULL, `lease_expires_at = 0`.
    Requeue,
}

impl Flue2Write {
    /// One line for humans.
    pub fn describe(&self) -> String {
        match self {
            Flue2Write::ConvergeGhost { message_id, record_ids } => format!(
                "converge the in-progress message {message_id} into an aborted assistant entry ({} record(s))",
                record_ids.len()
            ),
            Flue2Write::MarkerSettleBatch { assistant_entry_id, kept, markers, .. } => format!(
                "settle the trailing batch of {assistant_entry_id}: {} interrupted marker(s){}, {} recorded outcome(s) kept, one tool_results_committed",
                markers.len(),
                if markers.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        markers.iter().map(|c| format!("{} {}", c.name, c.id)).collect::<Vec<_>>().join(", ")
                    )
                },
                kept.len()
            ),
            Flue2Write::TerminalSignal { signal_type, already_present: true, .. } => {
                format!("the {signal_type} signal is already there (not appended again)")
            }
            Flue2Write::TerminalSignal { signal_type, .. } => format!("append the {signal_type} signal"),
            Flue2Write::SettleJoined { submission_ids, outcome } => format!(
                "settle the {} joined deliver{} {outcome} first ({})",
                submission_ids.len(),
                if submission_ids.len() == 1 { "y" } else { "ies" },
                submission_ids.join(", ")
            ),
            Flue2Write::ReserveSettlement { outcome, record_id } => {
                format!("reserve the settlement: status terminalizing, settlement record {record_id} (outcome {outcome})")
            }
            Flue2Write::AppendSettled { record_id, already_present: true } => {
                format!("the submission_settled record {record_id} is already in the stream (not appended again)")
            }
            Flue2Write::AppendSettled { record_id, .. } => format!("append the submission_settled record {record_id}"),
            Flue2Write::Finalize { error: None } => "finalize: status settled, no error".into(),
            Flue2Write::Finalize { error: Some(e) } => format!("finalize: status settled, error {e:?}"),
            Flue2Write::SettleRowOnly { error: None } => {
                "settle the row alone as completed (no conversation holds its record)".into()
            }
            Flue2Write::SettleRowOnly { error: Some(e) } => {
                format!("settle the row alone with error {e:?} (no conversation holds its record)")
            }
            Flue2Write::ReplaceAttempt { attempt_count, lease_expires_at } => format!(
                "replace the attempt: new attempt id, attempt_count {attempt_count}, this process as owner, lease until {} (30 s)",
                crate::journal::time::iso_from_ms(*lease_expires_at)
            ),
            Flue2Write::Requeue => {
                "requeue: status queued; attempt, input application, start and owner cleared; lease 0".into()
            }
        }
    }
}

/// The ghost at the leaf a scope owns (`materializeGhostStream`): `owner` `None` matches any.
pub(super) fn ghost_at_leaf<'c>(
    conv: &'c Conversation,
    owner: Option<&str>,
) -> Option<&'c InProgressMessage> {
    let leaf = conv.active_leaf_id.as_deref()?;
    let ghost = conv
        .in_progress
        .iter()
        .find(|m| matches!(&m.parent_id, Parent::Id(p) if p == leaf))?;
    match owner {
        Some(o) if ghost.submission_id.as_deref() != Some(o) => None,
        _ => Some(ghost),
    }
}

/// The records `materializeInProgressStreamRecords` appends for a ghost.
pub(super) fn converge_write(ghost: &InProgressMessage) -> Flue2Write {
    let mut record_ids: Vec<String> = ghost
        .blocks
        .iter()
        .filter(|b| b.tool_call.is_none() && !b.completed)
        .map(|b| {
            format!(
                "record_recovery_{}_{}_completed",
                ghost.message_id, b.block_id
            )
        })
        .collect();
    record_ids.push(format!("record_recovery_{}_aborted", ghost.message_id));
    Flue2Write::ConvergeGhost {
        message_id: ghost.message_id.clone(),
        record_ids,
    }
}

/// The `tool_results_committed` id of a repaired batch.
pub(super) fn commit_record_id(assistant_entry_id: &str) -> String {
    format!(
        "record_tool_repair_commit_{}",
        encode_canonical_id(assistant_entry_id)
    )
}

/// The ids of the outcome records the runtime writes for `calls` of `assistant`:
/// `record_tool_<what>_outcome_<base64url assistant>_<base64url call>`.
pub(super) fn outcome_record_ids(what: &str, assistant: &str, calls: &[CallRef]) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            format!(
                "record_tool_{what}_outcome_{}_{}",
                encode_canonical_id(assistant),
                encode_canonical_id(&c.id)
            )
        })
        .collect()
}

/// `settleTrailingToolBatch(scope)` (CSS:3030): the trailing partial batch of the whole active
/// path whose assistant is the leaf (and, with `owner`, belongs to that submission), settled with
/// markers.
pub(super) fn batch_at_leaf(
    conv: &Conversation,
    owner: Option<&str>,
    variant: Flue2Variant,
) -> Option<Flue2Write> {
    let path = conv.active_path().ok()?;
    let messages: Vec<&Entry> = path
        .into_iter()
        .filter(|e| !matches!(e.body, EntryBody::Compaction { .. }))
        .collect();
    let batch = find_trailing_partial_tool_batch(&messages, variant)?;
    if conv.active_leaf_id.as_deref() != Some(batch.entry_id.as_str()) {
        return None;
    }
    let entry = conv.entry(&batch.entry_id)?;
    if owner.is_some() && entry.submission_id.as_deref() != owner {
        return None;
    }
    let (kept, markers) = split_calls(conv, &batch.entry_id, &calls_of(entry));
    Some(Flue2Write::MarkerSettleBatch {
        marker_record_ids: outcome_record_ids("repair", &batch.entry_id, &markers),
        commit_record_id: commit_record_id(&batch.entry_id),
        assistant_entry_id: batch.entry_id,
        kept,
        markers,
    })
}

pub(super) fn calls_of(entry: &Entry) -> Vec<ToolCallRef> {
    match &entry.body {
        EntryBody::Assistant { tool_calls, .. } => tool_calls.clone(),
        _ => Vec::new(),
    }
}

/// The batch's calls with a recorded (uncommitted) outcome, and those without.
pub(super) fn split_calls(
    conv: &Conversation,
    assistant: &str,
    calls: &[ToolCallRef],
) -> (Vec<String>, Vec<CallRef>) {
    let mut kept = Vec::new();
    let mut markers = Vec::new();
    for c in calls {
        let recorded = conv
            .uncommitted_outcomes
            .iter()
            .any(|o| o.assistant_message_id == assistant && o.tool_call_id == c.id);
        if recorded {
            kept.push(c.id.clone());
        } else {
            markers.push(CallRef {
                id: c.id.clone(),
                name: c.name.clone(),
            });
        }
    }
    (kept, markers)
}
