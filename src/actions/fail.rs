//! `fail`: the operator gives up on a submission with the runtime's own failure writes (spec §5.3):
//! the `submission_interrupted` advisory (idempotent), then the settlement.

use serde_json::{json, Value};

use super::common::{check_stuck, fence, ActionKind, ActionPlan, Refusal};
use super::entries::{Appender, EntryIds};
use crate::core::changes::{ColumnChange, RowChange, SqlValue};
use crate::core::plan::messages;
use crate::core::runtime_text::{AFTER_INPUT_DETAILS, BEFORE_INPUT_DETAILS};
use crate::core::status::SubmissionStatus;
use crate::core::time::iso_from_ms;
use crate::report::SubmissionReport;

pub fn plan_fail(
    r: &SubmissionReport,
    reason: &str,
    now_ms: i64,
    ids: &mut EntryIds,
) -> Result<ActionPlan, Refusal> {
    if reason.trim().is_empty() {
        return Err(Refusal::new(
            "a reason is required to fail a submission",
            "pass --reason TEXT",
        ));
    }
    check_stuck(r, now_ms)?;
    if r.inspection.inspection() == crate::core::classify::Inspection::Completed {
        return Err(Refusal::new(
            "the session already holds a completed answer for this submission; failing it would discard that answer",
            "leave it: the runtime's next pass settles it as completed (rule 1)",
        ));
    }
    let row = r.row();
    let tools = r
        .bundle
        .journal
        .as_ref()
        .and_then(|j| j.tool_request().ok().flatten())
        .filter(|t| !t.is_empty());
    // The runtime's reason codes and error texts (rules 8 and 9).
    let (code, message, details, meta) = if row.input_applied_at.is_none() {
        (
            "interrupted_before_input_marker",
            messages::BEFORE_INPUT_MARKER.to_string(),
            BEFORE_INPUT_DETAILS,
            json!({"phase": "before_input_marker"}),
        )
    } else {
        let mut meta = json!({"phase": "after_input_application"});
        let message = match &tools {
            Some(t) => {
                meta["interruptedTools"] = json!(t
                    .iter()
                    .map(|c| json!({"name": c.name, "id": c.id}))
                    .collect::<Vec<_>>());
                messages::pending_tools(&t.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
            }
            None => messages::AFTER_INPUT_APPLICATION.to_string(),
        };
        (
            "interrupted_after_input_application",
            message,
            AFTER_INPUT_DETAILS,
            meta,
        )
    };
    let mut changes = Vec::new();
    if r.bundle.session.is_some() && !r.inspection.advisory_present {
        let mut content = message.clone();
        if let Some(t) = &tools {
            let list: Vec<String> = t
                .iter()
                .map(|c| format!("  - {} ({})", c.name, c.id))
                .collect();
            content.push_str(&format!(
                "\n\nInterrupted tool call(s):\n{}",
                list.join("\n")
            ));
        }
        let terminal = json!({"submissionId": row.submission_id, "kind": row.kind, "reason": code});
        let signal = json!({
            "role": "signal",
            "type": "submission_interrupted",
            "content": content,
            "attributes": terminal,
            "timestamp": now_ms,
        });
        let leaf = r.history.as_ref().and_then(|h| h.leaf_id.clone());
        let mut app = Appender::new(r, leaf, ids, now_ms);
        app.append(
            &signal.to_string(),
            &[("submissionTerminal", terminal.to_string())],
        );
        changes.extend(
            app.finish(r)
                .map_err(|e| Refusal::new(e, "inspect the session row"))?,
        );
    }
    let attempt = row.attempt_id.clone().unwrap_or_default();
    let set = if row.kind == "direct" {
        // Reserve the terminal outbox as the runtime does; its next pass publishes and finalizes.
        let event = json!({
            "type": "submission_settled",
            "submissionId": row.submission_id,
            "outcome": "failed",
            "error": {"name": "FlueError", "message": message, "type": "submission_interrupted", "details": details, "meta": meta},
            "instanceId": row.instance_id(),
            "agentName": row.agent(),
            "v": 3,
            "eventIndex": 0,
            "timestamp": iso_from_ms(now_ms),
        });
        vec![
            ColumnChange::new(
                "status",
                SqlValue::status(SubmissionStatus::Running),
                SqlValue::status(SubmissionStatus::Terminalizing),
            ),
            ColumnChange::new(
                "terminal_event_key",
                SqlValue::opt_text(row.terminal_key.as_deref()),
                SqlValue::text(format!("direct-submission:{}:settled", row.submission_id)),
            ),
            ColumnChange::new(
                "terminal_event_json",
                SqlValue::opt_text(row.terminal_event.as_deref()),
                SqlValue::text(Value::to_string(&event)),
            ),
        ]
    } else {
        vec![
            ColumnChange::new(
                "status",
                SqlValue::status(SubmissionStatus::Running),
                SqlValue::status(SubmissionStatus::Settled),
            ),
            ColumnChange::new(
                "settled_at",
                SqlValue::opt_int(row.settled_at),
                SqlValue::Int(now_ms),
            ),
            ColumnChange::new(
                "error",
                SqlValue::opt_text(row.error.as_deref()),
                SqlValue::text(&message),
            ),
        ]
    };
    changes.push(RowChange::UpdateSubmission {
        submission_id: row.submission_id.clone(),
        attempt_id: attempt,
        set,
    });
    if let Some(key) = r.bundle.journal.as_ref().and_then(|j| j.stream_key.clone()) {
        if !r.bundle.stream_chunks.is_empty() {
            changes.push(RowChange::DeleteStreamChunks {
                stream_key: key,
                segments: r.bundle.stream_chunks.len(),
            });
        }
    }
    Ok(ActionPlan {
        action: ActionKind::Fail,
        submission_id: row.submission_id.clone(),
        attempt_id: row.attempt_id.clone(),
        fence: fence(r),
        changes,
        summary: format!("fail ({code}): {message}"),
        expected_after: if row.kind == "direct" {
            "terminalizing; the runtime's next pass publishes the failed event and settles it"
                .into()
        } else {
            "settled with the error above".into()
        },
        reason: Some(reason.to_string()),
    })
}
