//! Health of a flue 2.x conversation: what on its active path the runtime's next request will not
//! send as stored, found the way 2.1.0's context builder walks the path
//! (`buildConversationContextEntries` / `pathToContextEntries`, `dist/dispatch-Dohpn4Ea.mjs:714–790`,
//! with `isCompleteToolBatch` at :983) and reported in beta.7's finding kinds
//! ([`crate::recovery::health::Hazard`]), so the `turnscope.health/1` document keeps its shape.
//!
//! What 2.x's records can hold, and so what is looked for:
//!
//! - a tool-batch assistant whose results are not all committed right after it
//!   ([`Hazard::UnresolvedCalls`]); a recorded-but-uncommitted `tool_outcome` counts as recorded,
//!   but the context builder reads committed entries only, so the batch is left out all the same;
//! - a batch whose committed results are all there but not in call order or under another tool
//!   name ([`Hazard::MismatchedBatch`]), a result that follows no call of its own
//!   ([`Hazard::OrphanedResult`]), a call id used twice ([`Hazard::DuplicateCallId`]);
//! - an assistant message still in progress (a "ghost": the reducer's `inProgressMessages`,
//!   never an entry; [`Hazard::InProgressAssistant`] with no stop reason), which the context
//!   builder never sees and which blocks every append until it is converged;
//! - an aborted partial kept before its `stream_interrupted`/`stream_continued` signals
//!   ([`Hazard::DroppedPartial`]): the runtime keeps it, pi-ai 0.83.0's `transformMessages` drops
//!   it (`stopReason` `aborted`);
//! - a stream the runtime cannot load, or a path it cannot walk ([`Hazard::Unreadable`]).
//!
//! Not looked for: an empty assistant (the fold keeps a committed message's text and tool calls,
//! not its reasoning, so "nothing in it" cannot be told). What the runtime itself will do with a
//! batch or a ghost is not stated here but computed by the caller from the reconciler's plan and
//! from [`next_submission_repairs`].

use super::classify::{classify_conversation_submission, Flue2Variant};
use super::records::Parent;
use super::resume::{resume_after_requeue, ResumeAction};
use super::rows::Flue2SubmissionRow;
use super::state::{Conversation, Entry, EntryBody};
use crate::recovery::health::{At, CallRef, Finding, Hazard};

/// The stop reasons the runtime writes.
const STOP_REASONS: [&str; 5] = ["stop", "length", "toolUse", "error", "aborted"];

fn at(e: &Entry, position: usize) -> At {
    At {
        entry: e.id.clone(),
        position: position as i64,
    }
}

fn calls(e: &Entry) -> Vec<CallRef> {
    match &e.body {
        EntryBody::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .map(|c| CallRef {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_signal(e: Option<&&Entry>, kind: &str) -> bool {
    matches!(e.map(|e| &e.body), Some(EntryBody::Signal { signal_type }) if signal_type == kind)
}

fn is_aborted(e: &Entry) -> bool {
    matches!(&e.body, EntryBody::Assistant { stop_reason, .. } if stop_reason == "aborted")
}

/// A label for an entry after an unresolved batch where no model turn follows it.
fn later_label(e: &Entry) -> String {
    match &e.body {
        EntryBody::Signal { signal_type } if signal_type == "submission_interrupted" => {
            "its failure signal (submission_interrupted)".into()
        }
        EntryBody::Signal { signal_type } => format!("a {signal_type} signal"),
        EntryBody::Assistant { .. } if is_aborted(e) => "an aborted assistant".into(),
        EntryBody::User { .. } => "a user message".into(),
        EntryBody::Assistant { .. } => "an assistant".into(),
        EntryBody::ToolResult { .. } => "a tool result".into(),
        EntryBody::Compaction { .. } => "a compaction".into(),
    }
}

/// Every finding of `conv`, in path order: what its active path holds that the next request
/// will not send as stored, then its in-progress messages. Each finding names the submission
/// whose records wrote the entry (2.x records carry it).
pub fn conversation_findings(conv: &Conversation) -> Vec<Finding> {
    let path = match conv.active_path() {
        Ok(p) => p,
        Err(e) => {
            return vec![Finding {
                hazard: Hazard::Unreadable {
                    what: e.to_string(),
                },
                submission: None,
            }]
        }
    };
    let mut out = Vec::new();
    let owner = |i: usize| path.get(i).and_then(|e| e.submission_id.clone());
    let mut seen_calls: std::collections::HashMap<&str, usize> = Default::default();
    let mut duplicates: Vec<(String, Vec<usize>, bool)> = Vec::new();
    for range in context_segments(&path) {
        let seg = &path[range.clone()];
        let base = range.start;
        let mut i = 0;
        while i < seg.len() {
            let e = seg[i];
            match &e.body {
                EntryBody::Assistant {
                    stop_reason,
                    text,
                    tool_calls,
                    ..
                } => {
                    if stop_reason == "error" || stop_reason == "aborted" {
                        let kept = stop_reason == "aborted"
                            && is_signal(seg.get(i + 1), "stream_interrupted")
                            && is_signal(seg.get(i + 2), "stream_continued");
                        if !kept {
                            i += 1;
                            continue;
                        }
                        out.push(Finding {
                            hazard: Hazard::DroppedPartial {
                                partial: at(e, base + i),
                                continued: at(seg[i + 2], base + i + 2),
                                partial_chars: text.chars().count(),
                            },
                            submission: owner(base + i),
                        });
                    } else if !STOP_REASONS.contains(&stop_reason.as_str()) {
                        out.push(Finding {
                            hazard: Hazard::InProgressAssistant {
                                at: at(e, base + i),
                                stop_reason: Some(stop_reason.clone()),
                            },
                            submission: owner(base + i),
                        });
                    }
                    if tool_calls.is_empty() {
                        i += 1;
                        continue;
                    }
                    let mut j = i + 1;
                    while j < seg.len() && matches!(seg[j].body, EntryBody::ToolResult { .. }) {
                        j += 1;
                    }
                    let results = &seg[i + 1..j];
                    let mut repeated_in_batch = false;
                    for (k, c) in tool_calls.iter().enumerate() {
                        if tool_calls[..k].iter().any(|p| p.id == c.id) {
                            repeated_in_batch = true;
                        }
                        match seen_calls.get(c.id.as_str()) {
                            Some(&first) => {
                                let same = first == base + i;
                                match duplicates.iter_mut().find(|(d, _, _)| *d == c.id) {
                                    Some((_, ats, s)) => {
                                        if !ats.contains(&(base + i)) {
                                            ats.push(base + i);
                                        }
                                        *s |= same;
                                    }
                                    None => {
                                        let mut ats = vec![first];
                                        if !same {
                                            ats.push(base + i);
                                        }
                                        duplicates.push((c.id.clone(), ats, same));
                                    }
                                }
                            }
                            None => {
                                seen_calls.insert(c.id.as_str(), base + i);
                            }
                        }
                    }
                    let answered = |id: &str| {
                        results.iter().any(|r| {
                            matches!(&r.body, EntryBody::ToolResult { tool_call_id, .. } if tool_call_id == id)
                        })
                    };
                    let recorded_only = |id: &str| {
                        conv.uncommitted_outcomes
                            .iter()
                            .any(|o| o.assistant_message_id == e.id && o.tool_call_id == id)
                    };
                    let missing: Vec<String> = tool_calls
                        .iter()
                        .filter(|c| !answered(&c.id) && !recorded_only(&c.id))
                        .map(|c| c.id.clone())
                        .collect();
                    let uncommitted = tool_calls.iter().filter(|c| !answered(&c.id)).count();
                    if uncommitted > 0 {
                        let end = base + j;
                        let later = &path[end..];
                        let later_turns = later
                            .iter()
                            .filter(|l| {
                                matches!(l.body, EntryBody::Assistant { .. }) && !is_aborted(l)
                            })
                            .count();
                        let followed_by = if later_turns == 0 {
                            later.iter().map(|l| later_label(l)).collect()
                        } else {
                            Vec::new()
                        };
                        out.push(Finding {
                            hazard: Hazard::UnresolvedCalls {
                                assistant: at(e, base + i),
                                calls: calls(e),
                                recorded: tool_calls.len() - missing.len(),
                                missing,
                                at_leaf: end == path.len(),
                                later_entries: later.len(),
                                later_turns,
                                followed_by,
                                trailing: end == path.len()
                                    || (end + 1 == path.len() && is_aborted(path[end])),
                            },
                            submission: owner(base + i),
                        });
                    } else if !repeated_in_batch {
                        if let Some(why) = mismatch(e, results) {
                            out.push(Finding {
                                hazard: Hazard::MismatchedBatch {
                                    assistant: at(e, base + i),
                                    calls: calls(e),
                                    why,
                                },
                                submission: owner(base + i),
                            });
                        }
                    }
                    for (k, r) in results.iter().enumerate() {
                        if let EntryBody::ToolResult { tool_call_id, .. } = &r.body {
                            if !tool_calls.iter().any(|c| &c.id == tool_call_id) {
                                out.push(orphan(r, base + i + 1 + k));
                            }
                        }
                    }
                    i = j;
                }
                EntryBody::ToolResult { .. } => {
                    out.push(orphan(e, base + i));
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }
    for (id, ats, same_batch) in duplicates {
        let first = ats[0];
        out.push(Finding {
            hazard: Hazard::DuplicateCallId {
                call_id: id,
                assistants: ats.iter().map(|&k| at(path[k], k)).collect(),
                same_batch,
            },
            submission: owner(first),
        });
    }
    out.sort_by_key(|f| f.hazard.position());
    // Ghosts: not entries, so after the path (position: where they would be appended).
    for g in &conv.in_progress {
        let position = match &g.parent_id {
            Parent::Id(p) => path
                .iter()
                .position(|e| &e.id == p)
                .map_or(-1, |k| k as i64 + 1),
            _ => 0,
        };
        out.push(Finding {
            hazard: Hazard::InProgressAssistant {
                at: At {
                    entry: g.message_id.clone(),
                    position,
                },
                stop_reason: None,
            },
            submission: g.submission_id.clone(),
        });
    }
    out
}

/// The ranges of `path` the context is built from (`buildConversationContextEntries`): with a
/// compaction the kept part before the latest one and all after it, without one the whole path.
fn context_segments(path: &[&Entry]) -> [std::ops::Range<usize>; 2] {
    let Some(c) = path
        .iter()
        .rposition(|e| matches!(e.body, EntryBody::Compaction { .. }))
    else {
        return [0..0, 0..path.len()];
    };
    let kept = match &path[c].body {
        EntryBody::Compaction {
            first_kept_entry_id,
        } => path.iter().position(|e| &e.id == first_kept_entry_id),
        _ => None,
    }
    .unwrap_or(c + 1);
    [kept..c.max(kept), c + 1..path.len()]
}

fn orphan(e: &Entry, position: usize) -> Finding {
    let EntryBody::ToolResult {
        tool_call_id,
        tool_name,
        ..
    } = &e.body
    else {
        unreachable!("only tool results are orphans")
    };
    Finding {
        hazard: Hazard::OrphanedResult {
            at: at(e, position),
            call_id: Some(tool_call_id.clone()),
            tool_name: Some(tool_name.clone()),
        },
        submission: e.submission_id.clone(),
    }
}

/// Why a batch every call of which has a committed result is still incomplete to the runtime
/// (`isCompleteToolBatch`: one result per call, in call order, under the call's tool name).
fn mismatch(assistant: &Entry, results: &[&Entry]) -> Option<String> {
    let EntryBody::Assistant { tool_calls, .. } = &assistant.body else {
        return None;
    };
    if tool_calls.len() != results.len() {
        return Some(format!(
            "{} calls but {} results follow",
            tool_calls.len(),
            results.len()
        ));
    }
    for (k, (c, r)) in tool_calls.iter().zip(results).enumerate() {
        let EntryBody::ToolResult {
            tool_call_id,
            tool_name,
            ..
        } = &r.body
        else {
            return None;
        };
        if tool_call_id != &c.id {
            return Some(format!(
                "result {} answers call {tool_call_id} where call {} ({}) was expected",
                k + 1,
                c.id,
                c.name
            ));
        }
        if tool_name != &c.name {
            return Some(format!(
                "result {} for call {} names tool {tool_name} where the call named {}",
                k + 1,
                c.id,
                c.name
            ));
        }
    }
    None
}

/// What the first attempt of the next submission on `conv` does before its input, as the
/// runtime's `runPersistedContextInput` (CSS:4542) does it: the ghost at the leaf converged,
/// then a trailing tool batch at the leaf marker-settled (`settleTrailingToolBatch("any")`).
/// Computed by [`claim_repairs`] on a submission whose input is not in the conversation (a new
/// one): the actions it takes before appending that input.
pub fn next_submission_repairs(conv: &Conversation, variant: Flue2Variant) -> Vec<ResumeAction> {
    let row = Flue2SubmissionRow {
        sequence: i64::MAX,
        // No entry of the conversation can carry it: a submission id is `sub_…`.
        submission_id: "turnscope:next".into(),
        session_key: format!(
            "agent-session:{}",
            serde_json::json!(["", "", conv.harness, conv.session])
        ),
        kind: "dispatch".into(),
        status: "queued".into(),
        accepted_at: None,
        canonical_ready_at: None,
        attempt_id: None,
        input_applied_at: None,
        abort_requested_at: None,
        started_at: None,
        joined_into: None,
        settled_at: None,
        error: None,
        attempt_count: 0,
        max_attempts: 10,
        timeout_at: 0,
        owner_id: None,
        lease_expires_at: 0,
        settlement_record_id: None,
        settlement_record: None,
        not_utf8: Vec::new(),
        stored_as: None,
        parse: crate::flue2::rows::ParseOutcome::Parses,
        pass_fails: None,
    };
    claim_repairs(&row, conv, variant)
        .into_iter()
        .take_while(|a| !matches!(a, ResumeAction::AppendInput { .. }))
        .collect()
}

/// What the claim of queued `row` on `conv` does (`runPersistedContextInput` after
/// `claimSubmission`, as [`resume_after_requeue`] simulates it): every action of its resume, in
/// order. Empty where the classifier throws on the conversation.
pub fn claim_repairs(
    row: &Flue2SubmissionRow,
    conv: &Conversation,
    variant: Flue2Variant,
) -> Vec<ResumeAction> {
    let Ok(c) = classify_conversation_submission(Some(conv), &row.input_entry_id(), 0, variant)
    else {
        return Vec::new();
    };
    resume_after_requeue(row, Some(conv), &c).actions
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;
