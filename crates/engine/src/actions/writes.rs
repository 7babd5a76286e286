//! The runtime's own rows for each write of its plan (spec §5.2), as `step` and `reconcile`
//! apply them: each write's rows are built against the state the writes before it leave (a
//! simulated copy of the read), so a sequence of writes is exactly what one pass writes.

use serde_json::{Map, Value};

use super::common::Refusal;
use super::entries::{Appender, EntryIds};
use super::predict::outcome;
use super::runtime_rows::{
    advisory_rows, create_session_rows, delete_chunks_row, journal_before_provider, repair_rows,
    requeue_rows, revision_bump, settle_columns, settle_direct_rows, settle_failed_rows,
};
use crate::report::SubmissionReport;
use turnscope_core::journal::stream::recovered_partial_message;
use turnscope_core::js::lone_surrogates;
use turnscope_core::js::stringify::to_js_string;
use turnscope_core::recovery::changes::{ColumnChange, RowChange, SqlValue};
use turnscope_core::recovery::direct_result::reconstruct_result;
use turnscope_core::recovery::failure::RuntimeFailure;
use turnscope_core::recovery::reconciler::{DirectOutcome, PlannedWrite};
use turnscope_core::recovery::runtime_text;

/// Why turnscope leaves a write to the runtime.
fn left_to_runtime(w: &PlannedWrite, rule: u8) -> Option<Refusal> {
    match w {
        PlannedWrite::ReplaceAttempt => Some(Refusal::new(
            format!("the next write of rule {rule} replaces the attempt; turnscope leaves that to the runtime"),
            "the runtime's next reconciliation pass (within about 15 s) replaces it and resumes",
        )),
        PlannedWrite::AutoFailMalformed { .. } => Some(Refusal::new(
            "the row is malformed",
            "the runtime's parser settles it as failed",
        )),
        _ => None,
    }
}

/// The rows of one write of `r`'s plan, against the state `r` describes.
pub(super) fn rows_for(
    r: &SubmissionReport,
    w: &PlannedWrite,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<Vec<RowChange>, Refusal> {
    let rule = r.plan.rule.unwrap_or_default();
    if let Some(refusal) = left_to_runtime(w, rule) {
        return Err(refusal);
    }
    let row = r.row();
    let attempt = row.attempt_id.clone().unwrap_or_default();
    let failure = || {
        RuntimeFailure::for_rule(rule, row, r.bundle.journal.as_ref()).ok_or_else(|| {
            Refusal::new(
                format!("rule {rule} does not fail the submission"),
                "refresh",
            )
        })
    };
    // Journal updates are fenced on the submission's attempt and `committed = 0`; where the
    // journal belongs to another attempt the runtime's update matches nothing, and so does ours.
    let journal = r
        .bundle
        .journal
        .as_ref()
        .filter(|j| Some(&j.attempt_id) == row.attempt_id.as_ref() && !j.committed);
    Ok(match w {
        PlannedWrite::CreateSession => create_session_rows(r, ids, now_ms),
        PlannedWrite::CompleteSubmission => vec![RowChange::UpdateSubmission {
            submission_id: row.submission_id.clone(),
            attempt_id: attempt,
            set: settle_columns(row, now_ms, SqlValue::Null),
        }],
        PlannedWrite::SettleDirect {
            outcome: DirectOutcome::Completed,
        } => {
            // `reconstructSubmissionResult`: the answer already in the history.
            let result = match r.history.as_ref() {
                Some(h) => reconstruct_result(h, &row.submission_id).map_err(|e| {
                    Refusal::new(
                        format!("the completed answer cannot be rebuilt as the runtime rebuilds it: {e}"),
                        "leave it to the runtime: its next pass settles it (rule 1)",
                    )
                })?,
                None => None,
            };
            settle_direct_rows(
                r,
                DirectOutcome::Completed,
                result.map(|v| ("result", v)),
                now_ms,
            )?
        }
        PlannedWrite::FailSubmission { .. } | PlannedWrite::SettleDirect { .. } => {
            settle_failed_rows(r, &failure()?, now_ms)?
        }
        PlannedWrite::AppendAdvisory { .. } => {
            if r.bundle.session.is_none() {
                return Err(Refusal::new(
                    "there is no session row for the advisory",
                    "refresh",
                ));
            }
            advisory_rows(r, &failure()?, now_ms, ids)?
        }
        PlannedWrite::DeleteStreamChunks { .. } => delete_chunks_row(r).into_iter().collect(),
        PlannedWrite::RecoverStream {
            stream_key,
            append_partial,
        } => {
            // A lone surrogate's escape reads as U+FFFD (`js::lone_surrogates`): the runtime
            // writes the half itself back, turnscope would write the replacement character.
            let lone = |b: &String| lone_surrogates::has_lone_surrogates(b);
            if *append_partial && r.bundle.stream_chunks.iter().any(lone) {
                return Err(Refusal::new(
                    "the streamed partial holds half of a surrogate pair, which turnscope cannot write back byte for byte as the runtime does",
                    "leave this step to the runtime's reconciler, which recovers the stream itself",
                ));
            }
            let partial = recovered_partial_message(&r.bundle.stream_chunks).ok_or_else(|| {
                Refusal::new("the stream chunks no longer rebuild to text", "refresh")
            })?;
            let signal = |ty: &str, content: &str| {
                let mut attributes = Map::new();
                attributes.insert("streamKey".into(), stream_key.clone().into());
                let mut m = Map::new();
                m.insert("role".into(), "signal".into());
                m.insert("type".into(), ty.into());
                m.insert("content".into(), content.into());
                m.insert("attributes".into(), Value::Object(attributes));
                m.insert("timestamp".into(), now_ms.into());
                to_js_string(&Value::Object(m))
            };
            let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone());
            let mut app = Appender::new(r, leaf, ids, now_ms);
            if *append_partial {
                app.append(&to_js_string(&partial), &[]);
            }
            app.append(
                &signal("stream_interrupted", runtime_text::STREAM_INTERRUPTED_TEXT),
                &[],
            );
            app.append(
                &signal("stream_continued", runtime_text::STREAM_CONTINUED_TEXT),
                &[],
            );
            app.finish(r)
                .map_err(|e| Refusal::new(e, "inspect the session row"))?
        }
        PlannedWrite::MarkStreamConsumed { stream_key } => match journal {
            Some(j)
                if j.stream_key.as_deref() == Some(stream_key.as_str())
                    && j.stream_consumed_at.is_none() =>
            {
                vec![RowChange::UpdateJournal {
                    submission_id: row.submission_id.clone(),
                    attempt_id: attempt,
                    set: [
                        revision_bump(j, now_ms).to_vec(),
                        vec![ColumnChange::new(
                            "stream_consumed_at",
                            SqlValue::opt_int(j.stream_consumed_at),
                            SqlValue::Int(now_ms),
                        )],
                    ]
                    .concat(),
                }]
            }
            _ => vec![],
        },
        PlannedWrite::RepairToolCalls { repair } => repair_rows(r, repair, now_ms, ids)?.0,
        PlannedWrite::JournalBeforeProvider => match journal {
            Some(j) => {
                let leaf = r
                    .history
                    .as_ref()
                    .and_then(|h| h.leaf_id.clone())
                    .unwrap_or_default();
                vec![RowChange::UpdateJournal {
                    submission_id: row.submission_id.clone(),
                    attempt_id: attempt,
                    set: journal_before_provider(j, &leaf, now_ms),
                }]
            }
            None => vec![],
        },
        PlannedWrite::Requeue => requeue_rows(r),
        PlannedWrite::ReplaceAttempt | PlannedWrite::AutoFailMalformed { .. } => vec![],
    })
}

/// Writes that the runtime makes in the same breath as the one before them: splitting them
/// would leave a state whose next pass decides differently (a repaired batch under a
/// `tool_request_recorded` journal; a settled row whose chunks stay).
fn travels_with(first: &PlannedWrite, next: &PlannedWrite) -> bool {
    matches!(
        (first, next),
        (
            PlannedWrite::RepairToolCalls { .. },
            PlannedWrite::JournalBeforeProvider
        ) | (
            PlannedWrite::CompleteSubmission
                | PlannedWrite::FailSubmission { .. }
                | PlannedWrite::SettleDirect { .. }
                | PlannedWrite::MarkStreamConsumed { .. },
            PlannedWrite::DeleteStreamChunks { .. }
        )
    )
}

/// The writes of `r`'s plan, grouped: each group is one `step`.
pub(super) fn groups(writes: &[PlannedWrite]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < writes.len() {
        let mut end = i + 1;
        while end < writes.len() && travels_with(&writes[end - 1], &writes[end]) {
            end += 1;
        }
        out.push(i..end);
        i = end;
    }
    out
}

/// The rows of writes `range` of `r`'s plan, each against the state the ones before it leave;
/// refused when a write is left to the runtime, or when writing these rows alone would change
/// what the runtime's next pass concludes (e.g. a stream marked consumed without the attempt
/// replacement that goes with it, which turns a resumption into a failure).
/// `done` are the rows of the groups before this one (written in the same transaction).
pub(super) fn group_rows(
    r: &SubmissionReport,
    done: &[RowChange],
    range: std::ops::Range<usize>,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<Vec<RowChange>, Refusal> {
    let mut changes = done.to_vec();
    for w in &r.plan.writes[range] {
        let state = r.with_changes(&changes);
        changes.extend(rows_for(&state, w, now_ms, ids)?);
    }
    let before = outcome(r);
    let after = r.with_changes(&changes);
    let changes = changes.split_off(done.len());
    let now = outcome(&after);
    if now != before {
        return Err(Refusal::new(
            format!(
                "these rows alone would turn the runtime's next pass from {before} into {now} ({}: {})",
                after.plan.rule_label(),
                after.plan.reason
            ),
            "leave the rest of this rule to the runtime: its next pass writes it together with the attempt replacement",
        ));
    }
    Ok(changes)
}
