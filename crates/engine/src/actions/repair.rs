//! `repair`: append a complete, ordered tool-result batch exactly as the runtime's own repair does
//! (spec §6.1/§6.2), then hand the journal back to `before_provider` so rule 5 resumes from it.

use super::common::{check_stuck, ActionKind, ActionPlan, Refusal};
use super::entries::EntryIds;
use super::runtime_rows::{journal_before_provider, repair_rows};
use crate::report::SubmissionReport;
use turnscope_core::journal::status::JournalPhase;
use turnscope_core::journal::submission_rows::RequestedCall;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::repair::{repair_batch, repair_for_journal, NoRepair, ToolRepair};

/// Which batch to complete: the journal's tool request (rule 6, §6.1) when the journal recorded one,
/// else the trailing partial batch of the history (§6.2).
fn select_batch(r: &SubmissionReport) -> Result<Result<ToolRepair, NoRepair>, Refusal> {
    let following = r.following().ok_or_else(|| {
        Refusal::new(
            "the submission's input entry is not on the active path, so there is no batch to repair",
            format!("the runtime's plan is rule {}: {}", r.plan.rule.map_or("-".into(), |n| n.to_string()), r.plan.reason),
        )
    })?;
    if let Some(j) = &r.bundle.journal {
        if j.phase == JournalPhase::ToolRequestRecorded && !j.committed {
            if let Ok(Some(calls)) = j.tool_request() {
                return Ok(repair_for_journal(Some(&following), &calls));
            }
        }
    }
    match &r.classification().trailing_partial_batch {
        Some(b) => {
            let calls = b.requested_calls();
            Ok(repair_batch(&following, &b.entry_id, &calls))
        }
        None => Ok(Err(NoRepair::BatchComplete)),
    }
}

/// The unresolved tool batch a settled submission left at the session's leaf (`turnscope health`'s
/// `unresolved_calls` that can be completed in place): the last assistant after its input stopped
/// for tool use, only tool results follow it, and some call has none. Its calls are taken from
/// the assistant's content, in content order, as the runtime's resume-time repair takes them
/// (spec §6.2). `None` when the submission is not settled or left no such batch.
fn settled_leaf_batch(r: &SubmissionReport) -> Option<ToolRepair> {
    use turnscope_core::journal::entry::Role;
    use turnscope_core::journal::status::SubmissionStatus;
    if r.row().status != SubmissionStatus::Settled {
        return None;
    }
    let following = r.following()?;
    let at = following
        .iter()
        .rposition(|e| e.message_with_role(&Role::Assistant).is_some())?;
    let assistant = following[at].message()?;
    let only_results = following[at + 1..]
        .iter()
        .all(|e| e.message_with_role(&Role::ToolResult).is_some());
    // The batch is this submission's: no later input on the path before it (a later
    // submission's batch is that submission's to repair).
    let later_input = following[..at].iter().any(|e| {
        e.message().is_some_and(|m| {
            let mk = m.markers();
            mk.dispatch_id.is_some() || mk.direct_submission_id.is_some()
        })
    });
    if assistant.stop_reason() != Some("toolUse") || !only_results || later_input {
        return None;
    }
    let calls: Vec<RequestedCall> = assistant
        .tool_calls()
        .iter()
        .map(|c| RequestedCall {
            id: c.id_text(),
            name: c.name.clone(),
        })
        .collect();
    if calls.is_empty() {
        return None;
    }
    repair_batch(&following, &following[at].id, &calls).ok()
}

/// Whether `r` is a settled submission with an unresolved batch at the session's leaf, which
/// `repair` completes in place (the caller checks that no other submission of the session is
/// being worked on: [`super::run::prepare`]).
pub fn is_settled_leaf_repair(r: &SubmissionReport) -> bool {
    settled_leaf_batch(r).is_some()
}

/// The repair of a settled submission's unresolved batch at the leaf: the runtime's own repair
/// rows (copies of the recorded results, its `interrupted` result for the rest, first write
/// wins), no journal update (the turn is over), fenced on the settled row and the session.
fn plan_settled_leaf_repair(
    r: &SubmissionReport,
    repair: &ToolRepair,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    super::common::check_settled_whole(r)?;
    let (changes, new_leaf) = repair_rows(r, repair, now_ms, ids)?;
    let synthetic = repair.synthetic_count();
    let mut plan = ActionPlan::new(
        ActionKind::Repair,
        r,
        changes,
        format!(
            "complete the unresolved batch the settled submission left at the session's leaf: append {} tool results after {} ({synthetic} synthetic interrupted, {} copied), leaf → {new_leaf}; the next turn of the session sends the calls with these results",
            repair.results.len(),
            repair.assistant_id,
            repair.results.len() - synthetic
        ),
    );
    // A settled row has no lease to be expired: the fence holds it settled, as read.
    plan.fence.require_expired_lease = false;
    Ok(plan)
}

/// A settled submission whose unresolved batch is on the active path but not at the leaf is
/// refused with `turnscope health`'s reason (what follows the batch), not the generic refusal of
/// a row that is not running.
fn settled_batch_elsewhere(r: &SubmissionReport) -> Result<(), Refusal> {
    let row = r.row();
    if row.status != turnscope_core::journal::status::SubmissionStatus::Settled {
        return Ok(());
    }
    let Some(history) = r.history.as_ref() else {
        return Ok(());
    };
    let status = if row.is_failed() { "failed" } else { "settled" };
    match crate::report::health::settled_batch_not_at_leaf(history, &row.submission_id, status) {
        Some((assistant, note)) => Err(Refusal::new(
            format!(
                "the submission is settled and its unresolved batch (assistant {assistant}) is not at the \
                 session's leaf: {}",
                note.why
            ),
            format!(
                "nothing can be written in place; `turnscope health {}` shows the batch and what the next turn sends",
                row.submission_id
            ),
        )),
        None => Ok(()),
    }
}

/// Plan a repair of `r` at `now_ms`.
pub fn plan_repair(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    if let Some(repair) = settled_leaf_batch(r) {
        return plan_settled_leaf_repair(r, &repair, now_ms, ids);
    }
    settled_batch_elsewhere(r)?;
    check_stuck(r, now_ms)?;
    if r.bundle.session.is_none() {
        return Err(Refusal::new(
            "the submission has no session row",
            "fail it, or let the runtime reconcile it",
        ));
    }
    let label = r.classification().state.label();
    let repair = match select_batch(r)? {
        Ok(repair) => repair,
        Err(NoRepair::BatchComplete) => {
            let has_batch_case = matches!(
                label.as_str(),
                "tool_use_unresolved" | "resume/tool_results_partial" | "resume/tool_results"
            ) || r
                .bundle
                .journal
                .as_ref()
                .is_some_and(|j| j.phase == JournalPhase::ToolRequestRecorded);
            if !has_batch_case {
                return Err(Refusal::new(
                    format!("no unresolved tool batch: the history is {label}"),
                    format!(
                        "the runtime's plan is rule {}: {}",
                        r.plan.rule.map_or("-".into(), |n| n.to_string()),
                        r.plan.reason
                    ),
                ));
            }
            // Idempotent: a complete batch needs nothing.
            return Ok(ActionPlan::new(
                ActionKind::Repair,
                r,
                vec![],
                "every requested tool call already has a result: nothing to write".into(),
            ));
        }
        Err(other) => {
            return Err(Refusal::new(
                format!("the repair would write nothing: {}", other.describe()),
                format!(
                    "the runtime's plan is rule {}: {}",
                    r.plan.rule.map_or("-".into(), |n| n.to_string()),
                    r.plan.reason
                ),
            ))
        }
    };
    let (mut changes, new_leaf) = repair_rows(r, &repair, now_ms, ids)?;
    let row = r.row();
    if let Some(j) = &r.bundle.journal {
        // The runtime's `updateTurnJournalPhase(A, 'before_provider', {checkpointLeafId})`,
        // fenced on the submission's attempt and `committed = 0` (else it matches nothing).
        if !j.committed && Some(&j.attempt_id) == row.attempt_id.as_ref() {
            changes.push(RowChange::UpdateJournal {
                submission_id: row.submission_id.clone(),
                attempt_id: j.attempt_id.clone(),
                set: journal_before_provider(j, &new_leaf, now_ms),
            });
        }
    }
    let synthetic = repair.synthetic_count();
    Ok(ActionPlan::new(
        ActionKind::Repair,
        r,
        changes,
        format!(
            "append {} tool results after {} ({synthetic} synthetic interrupted, {} copied), leaf → {new_leaf}",
            repair.results.len(),
            repair.assistant_id,
            repair.results.len() - synthetic
        ),
    ))
}
