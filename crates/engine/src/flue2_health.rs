//! Health of a flue 2.x journal: each agent instance's stream folded (one at a time, dropped
//! before the next is read), each of its conversations judged by `turnscope_core::flue2::health`,
//! and each finding completed with the status of the submission that wrote it, what it does to
//! the next turn and what the runtime itself will do about it, in beta.7's shape
//! (`report::health::SessionFinding`), so `health --json` prints `turnscope.health/1` with
//! `"format": "flue-2.x"`.
//!
//! What the runtime does is computed, never asserted: for a submission still in the runtime's
//! hands, its plan (`plan_flue2`: the reconciler's step and the resume after it) at the command's
//! clock, or at the end of its lease where the lease is live; for a batch or a ghost that
//! nothing in the runtime's hands owns, the next submission's first attempt
//! (`next_submission_repairs`: what `runPersistedContextInput` does before appending its
//! input). turnscope never writes a 2.x stream (docs/flue2.md, "No append to a conversation
//! stream"), so no finding is repaired by turnscope: `repair` refuses 2.x, and each note says
//! so.

use std::collections::HashMap;

use serde::Serialize;
use turnscope_core::flue2::health::{
    claim_repairs, conversation_findings, next_submission_repairs,
};
use turnscope_core::flue2::{
    classify_conversation_submission, plan_flue2, Conversation, EntryBody, Flue2SubmissionRow,
    Flue2Write, InstanceState, ReconcileInput, ResumeAction,
};
use turnscope_core::recovery::health::{Finding, Hazard};
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::flue2::{fold_stream, Flue2Options, FoldedStream};
use crate::report::health::{Owner, RepairNote, SessionFinding, SessionHealth};

/// Why turnscope does not write the repair itself.
pub const NO_APPEND: &str = "turnscope does not write a 2.x stream (its appends would fence out \
the runtime's producer): the runtime's records are the repair";

/// One conversation's health: beta.7's session health (its `session` the conversation id, its
/// `instance` the agent instance) with where the conversation lives.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flue2Health {
    #[serde(flatten)]
    pub health: SessionHealth,
    pub stream_path: String,
    /// `root`, `task` or `action`.
    pub conversation_kind: String,
    pub harness: String,
    pub session_name: String,
    /// Assistant messages in progress (ghosts) in this conversation.
    pub in_progress: usize,
    /// The stream's own entry, for its batches that are not UTF-8, no conversation's: counted
    /// among the findings, not the conversations. (A stream the runtime cannot load is one
    /// entry, as a conversation is.)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream_batches: bool,
}

/// The rows the notes read, by submission id.
pub struct RowIndex<'a> {
    by_id: foldhash::HashMap<&'a str, &'a Flue2SubmissionRow>,
    /// Unsettled queued rows by stream path, in `sequence` order (who runs next).
    queued: HashMap<String, Vec<&'a Flue2SubmissionRow>>,
}

impl<'a> RowIndex<'a> {
    pub fn new(rows: &'a [Flue2SubmissionRow]) -> RowIndex<'a> {
        let mut queued: HashMap<String, Vec<&Flue2SubmissionRow>> = HashMap::new();
        for r in rows.iter().filter(|r| r.status == "queued") {
            if let Some(k) = r.session() {
                queued.entry(k.stream_path()).or_default().push(r);
            }
        }
        RowIndex {
            by_id: rows.iter().map(|r| (r.submission_id.as_str(), r)).collect(),
            queued,
        }
    }
}

/// The health of every conversation of the stream at `path`, folded here and dropped after.
pub fn stream_health(
    reader: &Flue2SqliteReader,
    path: &str,
    rows: &RowIndex<'_>,
    options: &Flue2Options,
    now_ms: i64,
) -> Result<Vec<Flue2Health>, StoreError> {
    let folded = fold_stream(reader, path)?;
    folded_stream_health(reader, path, folded, rows, options, now_ms)
}

/// [`stream_health`] of a stream already folded (`flue2_fold::fold_streams`: `health --all`).
pub fn folded_stream_health(
    reader: &Flue2SqliteReader,
    path: &str,
    folded: FoldedStream,
    rows: &RowIndex<'_>,
    options: &Flue2Options,
    now_ms: i64,
) -> Result<Vec<Flue2Health>, StoreError> {
    let instance = path.rsplit('/').next().map(str::to_string);
    let not_utf8 = folded.not_utf8;
    let state = match folded.state {
        Ok(s) => s,
        Err(e) => {
            let finding = Hazard::Unreadable {
                what: format!("the runtime cannot load this instance: {e}"),
            };
            let effect = finding.effect();
            return Ok(vec![Flue2Health {
                health: SessionHealth {
                    session: String::new(),
                    instance,
                    entries: 0,
                    active_path: 0,
                    findings: vec![SessionFinding {
                        hazard: finding,
                        submission: None,
                        effect,
                        repair: None,
                    }],
                },
                stream_path: path.to_string(),
                conversation_kind: String::new(),
                harness: String::new(),
                session_name: String::new(),
                in_progress: 0,
                stream_batches: false,
            }]);
        }
    };
    let mut out = Vec::with_capacity(state.conversations.len() + 1);
    // Batches are the stream's, not a conversation's: named on an entry of their own, as a
    // stream the runtime cannot load is.
    if !not_utf8.is_empty() {
        let findings = not_utf8
            .iter()
            .map(|seq| {
                let hazard = Hazard::NotUtf8 {
                    what: format!(
                        "batch {seq} of stream {path} is not valid UTF-8 (read with replacement \
                         characters, as the runtime reads it)"
                    ),
                };
                SessionFinding {
                    effect: hazard.effect(),
                    hazard,
                    submission: None,
                    repair: None,
                }
            })
            .collect();
        out.push(Flue2Health {
            health: SessionHealth {
                session: String::new(),
                instance: instance.clone(),
                entries: 0,
                active_path: 0,
                findings,
            },
            stream_path: path.to_string(),
            conversation_kind: String::new(),
            harness: String::new(),
            session_name: String::new(),
            in_progress: 0,
            stream_batches: true,
        });
    }
    for conv in &state.conversations {
        let mut found = conversation_findings(conv);
        fill_arguments(reader, path, conv, &mut found)?;
        let findings = found
            .into_iter()
            .map(|f| complete(f, conv, &state, path, rows, options, now_ms))
            .collect();
        out.push(Flue2Health {
            health: SessionHealth {
                session: conv.conversation_id.clone(),
                instance: instance.clone(),
                entries: conv.entries.len(),
                active_path: conv.active_path().map_or(0, |p| p.len()),
                findings,
            },
            stream_path: path.to_string(),
            conversation_kind: conv.kind.clone(),
            harness: conv.harness.clone(),
            session_name: conv.session.clone(),
            in_progress: conv.in_progress.len(),
            stream_batches: false,
        });
    }
    Ok(out)
}

/// The arguments of the calls the findings name, read back from their `assistant_tool_call`
/// records (the fold keeps a call's id, name and batch, not its arguments): only the batches
/// that recorded them, each by its key. Reading every stream with such a finding again, whole,
/// was a sixth of `health --all`'s time on the 2 GB journal.
fn fill_arguments(
    reader: &Flue2SqliteReader,
    path: &str,
    conv: &Conversation,
    found: &mut [Finding],
) -> Result<(), StoreError> {
    let mut wanted: HashMap<String, HashMap<String, Option<serde_json::Value>>> = HashMap::new();
    let mut seqs = Vec::new();
    for f in found.iter() {
        if let Hazard::UnresolvedCalls {
            assistant, calls, ..
        }
        | Hazard::MismatchedBatch {
            assistant, calls, ..
        } = &f.hazard
        {
            let folded = match conv.entry(&assistant.entry).map(|e| &e.body) {
                Some(EntryBody::Assistant { tool_calls, .. }) => tool_calls.as_slice(),
                _ => &[],
            };
            let slot = wanted.entry(assistant.entry.clone()).or_default();
            for c in calls {
                slot.insert(c.id.clone(), None);
                // Every fold of a stream folds batch by batch, so every call has its batch.
                seqs.extend(
                    folded
                        .iter()
                        .find(|f| f.id == c.id)
                        .and_then(|f| f.batch_seq),
                );
            }
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    reader.each_batch_at(path, &seqs, |b| {
        // Batches the fold could parse; one that does not is the fold's finding, not this.
        let Ok(serde_json::Value::Array(records)) =
            turnscope_core::js::lone_surrogates::from_str(b.data)
        else {
            return Ok(());
        };
        for r in records {
            if r.get("type").and_then(|t| t.as_str()) != Some("assistant_tool_call") {
                continue;
            }
            let message = r.get("messageId").and_then(|t| t.as_str()).unwrap_or("");
            let call = r.get("toolCallId").and_then(|t| t.as_str()).unwrap_or("");
            if let Some(slot) = wanted.get_mut(message).and_then(|m| m.get_mut(call)) {
                if slot.is_none() {
                    *slot = r.get("arguments").cloned();
                }
            }
        }
        Ok(())
    })?;
    for f in found.iter_mut() {
        if let Hazard::UnresolvedCalls {
            assistant, calls, ..
        }
        | Hazard::MismatchedBatch {
            assistant, calls, ..
        } = &mut f.hazard
        {
            if let Some(slot) = wanted.get(&assistant.entry) {
                for c in calls.iter_mut() {
                    c.arguments = slot.get(&c.id).cloned().flatten();
                }
            }
        }
    }
    Ok(())
}

/// `status` as health names it: `failed` for a row settled with a failure.
fn owner_status(row: &Flue2SubmissionRow) -> String {
    let failed = match row.settlement_outcome().as_deref() {
        Some(o) => o != "completed",
        None => row.error.is_some(),
    };
    if row.status == "settled" && failed {
        "failed".into()
    } else {
        row.status.clone()
    }
}

/// What a finding names that the runtime may repair: a batch's assistant or a ghost.
enum Target<'f> {
    Batch(&'f str),
    Ghost(&'f str),
}

impl Target<'_> {
    fn in_write(&self, w: &Flue2Write) -> bool {
        match (self, w) {
            (
                Target::Batch(a),
                Flue2Write::MarkerSettleBatch {
                    assistant_entry_id, ..
                },
            ) => assistant_entry_id == a,
            (Target::Ghost(g), Flue2Write::ConvergeGhost { message_id, .. }) => message_id == g,
            _ => false,
        }
    }

    fn in_action(&self, a: &ResumeAction) -> bool {
        match a {
            ResumeAction::Converge { write } | ResumeAction::SettleBatchBeforeInput { write } => {
                self.in_write(write)
            }
            ResumeAction::RepairBatch {
                assistant_entry_id, ..
            } => matches!(self, Target::Batch(b) if b == assistant_entry_id),
            _ => false,
        }
    }
}

fn complete(
    f: Finding,
    conv: &Conversation,
    state: &InstanceState,
    path: &str,
    rows: &RowIndex<'_>,
    options: &Flue2Options,
    now_ms: i64,
) -> SessionFinding {
    let Finding { hazard, submission } = f;
    let row = submission
        .as_deref()
        .and_then(|id| rows.by_id.get(id).copied());
    let owner = submission.as_ref().map(|id| Owner {
        id: id.clone(),
        status: row.map_or_else(|| "missing".to_string(), owner_status),
    });
    let (target, mut effect) = match &hazard {
        Hazard::UnresolvedCalls {
            assistant, missing, ..
        } => (
            Some(Target::Batch(assistant.entry.as_str())),
            format!(
                "{}; while it is uncommitted at the leaf the runtime refuses every append but its commit, \
                 and a resume re-executes none of the {} call{} without an outcome but marks {} interrupted \
                 (a durable: true tool excepted)",
                hazard.effect(),
                missing.len(),
                if missing.len() == 1 { "" } else { "s" },
                if missing.len() == 1 { "it" } else { "them" }
            ),
        ),
        Hazard::InProgressAssistant {
            at,
            stop_reason: None,
        } => {
            let chars: usize = conv
                .in_progress
                .iter()
                .find(|g| g.message_id == at.entry)
                .map_or(0, |g| {
                    g.blocks
                        .iter()
                        .map(|b| b.deltas.iter().map(|d| d.chars().count()).sum::<usize>())
                        .sum()
                });
            (
                Some(Target::Ghost(at.entry.as_str())),
                format!(
                    "an assistant message still in progress is not an entry: the context builder never sends \
                     it, so the model does not see the {chars} character{} streamed into it, and the runtime \
                     refuses every append to the conversation until it is converged into an aborted entry",
                    if chars == 1 { "" } else { "s" }
                ),
            )
        }
        _ => (None, hazard.effect()),
    };
    let repair = target.map(|t| {
        let at_leaf = match &hazard {
            Hazard::UnresolvedCalls { at_leaf, .. } => *at_leaf,
            Hazard::InProgressAssistant { at, .. } => {
                conv.in_progress.iter().any(|g| {
                    g.message_id == at.entry
                        && matches!((&g.parent_id, &conv.active_leaf_id), (turnscope_core::flue2::Parent::Id(p), Some(l)) if p == l)
                })
            }
            _ => false,
        };
        repair_note(
            &t, &hazard, at_leaf, row, conv, state, path, rows, options, now_ms, &mut effect,
        )
    });
    SessionFinding {
        hazard,
        submission: owner,
        effect,
        repair,
    }
}

#[allow(clippy::too_many_arguments)]
fn repair_note(
    t: &Target<'_>,
    hazard: &Hazard,
    at_leaf: bool,
    row: Option<&Flue2SubmissionRow>,
    conv: &Conversation,
    state: &InstanceState,
    path: &str,
    rows: &RowIndex<'_>,
    options: &Flue2Options,
    now_ms: i64,
    effect: &mut String,
) -> RepairNote {
    // The owner, if the runtime still holds it: its plan (at the lease's end if the lease is live).
    if let Some(row) = row.filter(|r| r.status == "running" || r.status == "terminalizing") {
        let when = if row.status == "running" && row.lease_expires_at >= now_ms {
            row.lease_expires_at + 1
        } else {
            now_ms
        };
        let c = classify_conversation_submission(
            Some(conv),
            &row.input_entry_id(),
            options.window_for(Some(conv)).tokens,
            options.variant,
        );
        if let Ok(c) = &c {
            let plan = plan_flue2(&ReconcileInput {
                row,
                instance: Some(state),
                conversation: Some(conv),
                classification: Ok(c),
                joined: &[],
                now_ms: when,
                variant: options.variant,
            });
            let by_write = plan
                .writes
                .iter()
                .find(|w| t.in_write(w))
                .map(Flue2Write::describe);
            let by_resume = plan.resume.as_ref().and_then(|r| {
                r.actions
                    .iter()
                    .find(|a| t.in_action(a))
                    .map(|a| format!("the resume after it: {}", a.describe()))
            });
            if let Some(what) = by_write.or(by_resume) {
                let lease = if when != now_ms {
                    format!(
                        "once its lease ends ({}), ",
                        turnscope_core::journal::time::iso_from_ms(row.lease_expires_at)
                    )
                } else {
                    String::new()
                };
                return RepairNote {
                    in_place: true,
                    why: format!(
                        "{lease}the runtime's pass on its submission {} (step {}: {}) repairs it in place: {what}; {NO_APPEND}",
                        row.submission_id,
                        plan.step.number().map_or("-".to_string(), |n| n.to_string()),
                        plan.step.name()
                    ),
                };
            }
        }
    }
    if at_leaf {
        // The next claim on this conversation: the first queued row of its scope (the claim loop
        // takes a session's rows in sequence order), else a submission not yet made.
        let next = rows.queued.get(path).and_then(|q| {
            q.iter().copied().find(|r| {
                r.session()
                    .is_some_and(|k| k.harness == conv.harness && k.session == conv.session)
            })
        });
        let actions = match next {
            Some(r) => claim_repairs(r, conv, options.variant),
            None => next_submission_repairs(conv, options.variant),
        };
        if let Some(a) = actions.iter().find(|a| t.in_action(a)) {
            let who = match next {
                Some(r) => format!(
                    "the claim of the next queued submission on this conversation, {}, does",
                    r.submission_id
                ),
                None => {
                    "the first attempt of the next submission on this conversation does".to_string()
                }
            };
            return RepairNote {
                in_place: true,
                why: format!(
                    "no submission the runtime holds repairs it; {who} (runPersistedContextInput): {}; {NO_APPEND}",
                    a.describe()
                ),
            };
        }
    }
    let later = match hazard {
        Hazard::UnresolvedCalls { later_entries, .. } => *later_entries,
        _ => 0,
    };
    if later > 0 {
        effect.push_str(&format!(
            "; {later} later entr{} on the active path: the turns since were built from the history without this batch",
            if later == 1 { "y" } else { "ies" }
        ));
    }
    RepairNote {
        in_place: false,
        why: format!(
            "neither the runtime's pass on its submission nor the next submission's resume repairs it{}; {NO_APPEND}",
            if at_leaf {
                String::new()
            } else {
                " (it is not at the conversation's leaf)".to_string()
            }
        ),
    }
}
