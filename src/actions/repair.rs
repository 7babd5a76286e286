//! `repair`: append a complete, ordered tool-result batch exactly as the runtime's own repair does
//! (spec §6.1/§6.2), then hand the journal back to `before_provider` so rule 5 resumes from it.

use serde_json::Value;

use super::common::{check_stuck, fence, ActionKind, ActionPlan, Refusal};
use super::entries::{raw_message, Appender, EntryIds};
use crate::core::changes::{ColumnChange, RowChange, SqlValue};
use crate::core::repair::{repair_batch, repair_for_journal, NoRepair, ToolRepair};
use crate::core::rows::RequestedCall;
use crate::core::status::JournalPhase;
use crate::report::SubmissionReport;

pub use crate::core::runtime_text::INTERRUPTED_TEXT;

/// The synthetic `interrupted` toolResult message, keys in the runtime's order, no `details`.
pub fn synthetic_result(call_id: &str, tool_name: &str, timestamp_ms: i64) -> String {
    format!(
        r#"{{"role":"toolResult","toolCallId":{},"toolName":{},"content":[{{"type":"text","text":{}}}],"isError":true,"timestamp":{timestamp_ms}}}"#,
        Value::String(call_id.into()),
        Value::String(tool_name.into()),
        Value::String(INTERRUPTED_TEXT.into())
    )
}

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
            let calls: Vec<RequestedCall> = b
                .tool_calls
                .iter()
                .map(|c| RequestedCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                })
                .collect();
            Ok(repair_batch(&following, &b.entry_id, &calls))
        }
        None => Ok(Err(NoRepair::BatchComplete)),
    }
}

/// Plan a repair of `r` at `now_ms`.
pub fn plan_repair(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
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
            return Ok(ActionPlan {
                action: ActionKind::Repair,
                submission_id: r.row().submission_id.clone(),
                attempt_id: r.row().attempt_id.clone(),
                fence: fence(r),
                changes: vec![],
                summary: "every requested tool call already has a result: nothing to write".into(),
                expected_after: format!(
                    "unchanged: {label}, rule {}",
                    r.plan.rule.map_or("-".into(), |n| n.to_string())
                ),
                reason: None,
            });
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
        // The runtime's `updateTurnJournalPhase(A, 'before_provider', {checkpointLeafId})`.
        if !j.committed && Some(&j.attempt_id) == row.attempt_id.as_ref() {
            let mut set = vec![];
            if j.phase != JournalPhase::BeforeProvider {
                set.push(ColumnChange::new(
                    "phase",
                    SqlValue::text(j.phase.as_str()),
                    SqlValue::text("before_provider"),
                ));
            }
            set.push(ColumnChange::new(
                "revision",
                SqlValue::Int(j.revision),
                SqlValue::Int(j.revision + 1),
            ));
            set.push(ColumnChange::new(
                "updated_at",
                SqlValue::Int(j.updated_at),
                SqlValue::Int(now_ms),
            ));
            set.push(ColumnChange::new(
                "checkpoint_leaf_id",
                SqlValue::opt_text(j.checkpoint_leaf_id.as_deref()),
                SqlValue::text(&new_leaf),
            ));
            changes.push(RowChange::UpdateJournal {
                submission_id: row.submission_id.clone(),
                attempt_id: j.attempt_id.clone(),
                set,
            });
        }
    }
    let synthetic = repair.synthetic_count();
    Ok(ActionPlan {
        action: ActionKind::Repair,
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone(),
        fence: fence(r),
        summary: format!(
            "append {} tool results after {} ({synthetic} synthetic interrupted, {} copied), leaf → {new_leaf}",
            repair.results.len(),
            repair.assistant_id,
            repair.results.len() - synthetic
        ),
        expected_after: "resume/tool_results; the runtime's next pass applies rule 5 (a fresh attempt continues from the repaired batch)".into(),
        changes,
        reason: None,
    })
}

/// The entry rows and session update of a repair: the batch appended after its assistant.
pub(crate) fn repair_rows(
    r: &SubmissionReport,
    repair: &ToolRepair,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<(Vec<RowChange>, String), Refusal> {
    let session = r
        .bundle
        .session
        .as_ref()
        .ok_or_else(|| Refusal::new("the submission has no session row", "fail it instead"))?;
    // Two calls with one id: which result answers which call is ambiguous, and a repair would
    // leave that id with two results on the active path.
    let mut seen = std::collections::HashSet::new();
    let duplicates: Vec<&str> = repair
        .results
        .iter()
        .filter(|c| !seen.insert(c.call_id.as_str()))
        .map(|c| c.call_id.as_str())
        .collect();
    if !duplicates.is_empty() {
        return Err(Refusal::new(
            format!(
                "the tool batch is damaged: duplicate tool-call ids ({})",
                duplicates.join(", ")
            ),
            "resolve the batch by hand, or fail the submission",
        ));
    }
    let mut app = Appender::new(r, Some(repair.assistant_id.clone()), ids, now_ms);
    for result in &repair.results {
        let message = match &result.copied_from {
            Some(entry_id) => session
                .entries
                .iter()
                .find(|e| &e.id == entry_id)
                .and_then(|e| raw_message(&e.raw))
                .ok_or_else(|| {
                    Refusal::new(
                        format!("recorded result {entry_id} cannot be copied"),
                        "inspect the entry",
                    )
                })?,
            None => synthetic_result(&result.call_id, &result.tool_name, now_ms),
        };
        app.append(&message, &[]);
    }
    let new_leaf = app.leaf.clone().unwrap_or_default();
    let changes = app
        .finish(r)
        .map_err(|e| Refusal::new(e, "inspect the session row"))?;
    Ok((changes, new_leaf))
}
