//! `step`: manual step-through of recovery. Apply exactly the next write of the runtime's own plan
//! for this submission, with its own preview and fence; then re-read, re-classify and re-plan.
//!
//! Two writes are left to the runtime on purpose: replacing the attempt (the runtime picks the row
//! up and replaces it itself, spec §6.5 "stop there (recommended)") and settling a completed direct
//! prompt (the runtime rebuilds its result event from history).

use serde_json::json;

use super::common::{check_stuck, fence, ActionKind, ActionPlan, Refusal};
use super::entries::{Appender, EntryIds};
use super::repair::repair_rows;
use crate::core::changes::{ColumnChange, RowChange, SqlValue};
use crate::core::plan::PlannedWrite;
use crate::core::runtime_text;
use crate::core::status::SubmissionStatus;
use crate::core::stream::recovered_partial_message;
use crate::report::SubmissionReport;

/// Plan the next write of `r.plan` (index 0 of its ordered writes).
pub fn plan_step(
    r: &SubmissionReport,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    check_stuck(r, now_ms)?;
    let rule = r
        .plan
        .rule
        .ok_or_else(|| Refusal::new(r.plan.reason.clone(), "nothing to step through"))?;
    let Some(next) = r.plan.writes.first() else {
        return Err(Refusal::new(
            format!("rule {rule} makes no writes ({})", r.plan.reason),
            "nothing to step through",
        ));
    };
    let row = r.row();
    let attempt = row.attempt_id.clone().unwrap_or_default();
    let journal = r.bundle.journal.as_ref();
    let changes: Vec<RowChange> = match next {
        PlannedWrite::ReplaceAttempt => {
            return Err(Refusal::new(
                format!("the next write of rule {rule} replaces the attempt; turnscope leaves that to the runtime"),
                "the runtime's next reconciliation pass (within about 15 s) replaces it and resumes",
            ))
        }
        PlannedWrite::SettleDirect { outcome: "completed" } => {
            return Err(Refusal::new(
                "settling a completed direct prompt publishes a result event the runtime rebuilds from history",
                "the runtime's next pass settles it (rule 1)",
            ))
        }
        PlannedWrite::AutoFailMalformed { .. } => {
            return Err(Refusal::new("the row is malformed", "the runtime's parser settles it as failed"))
        }
        PlannedWrite::CompleteSubmission => vec![RowChange::UpdateSubmission {
            submission_id: row.submission_id.clone(),
            attempt_id: attempt,
            set: vec![
                ColumnChange::new("status", SqlValue::status(SubmissionStatus::Running), SqlValue::status(SubmissionStatus::Settled)),
                ColumnChange::new("settled_at", SqlValue::opt_int(row.settled_at), SqlValue::Int(now_ms)),
                ColumnChange::new("error", SqlValue::opt_text(row.error.as_deref()), SqlValue::Null),
            ],
        }],
        PlannedWrite::FailSubmission { error } => vec![RowChange::UpdateSubmission {
            submission_id: row.submission_id.clone(),
            attempt_id: attempt,
            set: vec![
                ColumnChange::new("status", SqlValue::status(SubmissionStatus::Running), SqlValue::status(SubmissionStatus::Settled)),
                ColumnChange::new("settled_at", SqlValue::opt_int(row.settled_at), SqlValue::Int(now_ms)),
                ColumnChange::new("error", SqlValue::opt_text(row.error.as_deref()), SqlValue::text(error)),
            ],
        }],
        PlannedWrite::SettleDirect { .. } => {
            // A failed direct prompt: the same outbox reservation as `fail`.
            let plan = super::plan_fail(r, "step", now_ms, ids)?;
            plan.changes
                .into_iter()
                .filter(|c| matches!(c, RowChange::UpdateSubmission { .. }))
                .collect()
        }
        PlannedWrite::AppendAdvisory { reason, content } => {
            if r.bundle.session.is_none() {
                return Err(Refusal::new(
                    "there is no session row to append the advisory to (the runtime would create one)",
                    "skip it: the runtime records the advisory best-effort",
                ));
            }
            let terminal = json!({"submissionId": row.submission_id, "kind": row.kind, "reason": reason});
            let signal = json!({"role": "signal", "type": "submission_interrupted", "content": content, "attributes": terminal, "timestamp": now_ms});
            let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone());
            let mut app = Appender::new(r, leaf, ids, now_ms);
            app.append(&signal.to_string(), &[("submissionTerminal", terminal.to_string())]);
            app.finish(r).map_err(|e| Refusal::new(e, "inspect the session row"))?
        }
        PlannedWrite::DeleteStreamChunks { stream_key } => vec![RowChange::DeleteStreamChunks {
            stream_key: stream_key.clone(),
            segments: r.bundle.stream_chunks.len(),
        }],
        PlannedWrite::RecoverStream { stream_key, append_partial } => {
            let partial = recovered_partial_message(&r.bundle.stream_chunks)
                .ok_or_else(|| Refusal::new("the stream chunks no longer rebuild to text", "refresh"))?;
            let signal = |ty: &str, content: &str| {
                json!({"role": "signal", "type": ty, "content": content, "attributes": {"streamKey": stream_key}, "timestamp": now_ms}).to_string()
            };
            let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone());
            let mut app = Appender::new(r, leaf, ids, now_ms);
            if *append_partial {
                app.append(&partial.to_string(), &[]);
            }
            app.append(&signal("stream_interrupted", runtime_text::STREAM_INTERRUPTED_TEXT), &[]);
            app.append(
                &signal("stream_continued", runtime_text::STREAM_CONTINUED_TEXT),
                &[],
            );
            app.finish(r).map_err(|e| Refusal::new(e, "inspect the session row"))?
        }
        PlannedWrite::MarkStreamConsumed { .. } => {
            let j = journal.ok_or_else(|| Refusal::new("no journal row", "refresh"))?;
            vec![RowChange::UpdateJournal {
                submission_id: row.submission_id.clone(),
                attempt_id: j.attempt_id.clone(),
                set: vec![
                    ColumnChange::new("stream_consumed_at", SqlValue::opt_int(j.stream_consumed_at), SqlValue::Int(now_ms)),
                    ColumnChange::new("revision", SqlValue::Int(j.revision), SqlValue::Int(j.revision + 1)),
                    ColumnChange::new("updated_at", SqlValue::Int(j.updated_at), SqlValue::Int(now_ms)),
                ],
            }]
        }
        PlannedWrite::RepairToolCalls { repair } => repair_rows(r, repair, now_ms, ids)?.0,
        PlannedWrite::JournalBeforeProvider => {
            let j = journal.ok_or_else(|| Refusal::new("no journal row", "refresh"))?;
            let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone()).unwrap_or_default();
            vec![RowChange::UpdateJournal {
                submission_id: row.submission_id.clone(),
                attempt_id: j.attempt_id.clone(),
                set: vec![
                    ColumnChange::new("phase", SqlValue::text(j.phase.as_str()), SqlValue::text("before_provider")),
                    ColumnChange::new("revision", SqlValue::Int(j.revision), SqlValue::Int(j.revision + 1)),
                    ColumnChange::new("updated_at", SqlValue::Int(j.updated_at), SqlValue::Int(now_ms)),
                    ColumnChange::new("checkpoint_leaf_id", SqlValue::opt_text(j.checkpoint_leaf_id.as_deref()), SqlValue::text(leaf)),
                ],
            }]
        }
        PlannedWrite::Requeue => super::plan_requeue(r, now_ms)?.changes,
    };
    // Cleanup that the runtime does in the same pass right after this write (deleting the stream
    // chunks after a settlement or after marking the stream consumed) would no longer be reachable
    // from a re-plan, so it travels with this step.
    let mut changes = changes;
    let mut taken = 1;
    if matches!(
        next,
        PlannedWrite::CompleteSubmission
            | PlannedWrite::FailSubmission { .. }
            | PlannedWrite::SettleDirect { .. }
            | PlannedWrite::MarkStreamConsumed { .. }
    ) {
        if let Some(PlannedWrite::DeleteStreamChunks { stream_key }) = r.plan.writes.get(1) {
            if !r.bundle.stream_chunks.is_empty() {
                changes.push(RowChange::DeleteStreamChunks {
                    stream_key: stream_key.clone(),
                    segments: r.bundle.stream_chunks.len(),
                });
            }
            taken = 2;
        }
    }
    let described: Vec<String> = r.plan.writes[..taken]
        .iter()
        .map(PlannedWrite::describe)
        .collect();
    Ok(ActionPlan {
        action: ActionKind::Step,
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone(),
        fence: fence(r),
        changes,
        summary: format!(
            "rule {rule}, write 1 of {}: {}",
            r.plan.writes.len(),
            described.join("; then ")
        ),
        expected_after: match r.plan.writes.get(taken) {
            Some(w) => format!("then: {}", w.describe()),
            None => format!("the last write of rule {rule}"),
        },
        reason: None,
    })
}
