//! The runtime's failure for each failing rule (spec §5.2 rules 2, 3, 8, 9; `errors.ts`): the
//! reason code of the advisory, and the error it settles with — its `message` in a dispatch's
//! `error` column, the whole serialized error in a direct prompt's `submission_settled` event.

use serde_json::{json, Map, Value};

use crate::journal::submission_rows::{JournalRow, RequestedCall, SubmissionRow};
use crate::recovery::runtime_text::{AFTER_INPUT_DETAILS, BEFORE_INPUT_DETAILS};

/// One `FlueError` subclass instance as `serializeSubmissionError` writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeFailure {
    /// The advisory's `reason` (`exhausted_retry_budget`, `exceeded_timeout`, …).
    pub reason: &'static str,
    /// The error's `type` (`submission_interrupted`, `submission_retry_exhausted`, `submission_timeout`).
    pub error_type: &'static str,
    pub message: String,
    pub details: &'static str,
    /// `meta`, absent for the timeout error.
    pub meta: Option<Value>,
    /// Rule 9 only: the journal's tool calls, listed in the advisory.
    pub interrupted_tools: Option<Vec<RequestedCall>>,
}

const RETRY_EXHAUSTED_BEFORE_INPUT_DETAILS: &str = "Every processing attempt was interrupted before the submission input was applied to the session. The input was never processed and no model call was started.";
const RETRY_EXHAUSTED_DETAILS: &str = "Recovery re-attempted the interrupted submission until its attempt budget ran out without a completed response.";
const TIMEOUT_DETAILS: &str = "The operation ran longer than the configured durability timeout.";

impl RuntimeFailure {
    /// The failure `rule` (2, 3, 8 or 9) settles `sub` with; `None` for a rule that does not fail.
    pub fn for_rule(
        rule: u8,
        sub: &SubmissionRow,
        journal: Option<&JournalRow>,
    ) -> Option<RuntimeFailure> {
        let budget = || {
            let mut m = Map::new();
            m.insert("attemptCount".into(), sub.attempt_count.into());
            m.insert("maxAttempts".into(), sub.max_retry.into());
            m
        };
        Some(match rule {
            2 if sub.input_applied_at.is_none() => {
                let mut meta = Map::new();
                meta.insert("phase".into(), "retry_exhausted_before_input".into());
                meta.extend(budget());
                RuntimeFailure {
                    reason: "exhausted_retry_budget",
                    error_type: "submission_interrupted",
                    message: messages::RETRY_EXHAUSTED_BEFORE_INPUT.into(),
                    details: RETRY_EXHAUSTED_BEFORE_INPUT_DETAILS,
                    meta: Some(Value::Object(meta)),
                    interrupted_tools: None,
                }
            }
            2 => RuntimeFailure {
                reason: "exhausted_retry_budget",
                error_type: "submission_retry_exhausted",
                message: messages::retry_exhausted(sub.attempt_count, sub.max_retry),
                details: RETRY_EXHAUSTED_DETAILS,
                meta: Some(Value::Object(budget())),
                interrupted_tools: None,
            },
            3 => RuntimeFailure {
                reason: "exceeded_timeout",
                error_type: "submission_timeout",
                message: messages::TIMEOUT.into(),
                details: TIMEOUT_DETAILS,
                meta: None,
                interrupted_tools: None,
            },
            8 => RuntimeFailure {
                reason: "interrupted_before_input_marker",
                error_type: "submission_interrupted",
                message: messages::BEFORE_INPUT_MARKER.into(),
                details: BEFORE_INPUT_DETAILS,
                meta: Some(json!({"phase": "before_input_marker"})),
                interrupted_tools: None,
            },
            9 => {
                // `journal.toolRequest.toolCalls.map(({name, id}))`, whenever the journal has a
                // tool request (an empty list too); the message names them only when non-empty.
                let tools = journal.and_then(|j| j.tool_request().ok().flatten());
                let mut meta = Map::new();
                meta.insert("phase".into(), "after_input_application".into());
                if let Some(t) = &tools {
                    meta.insert(
                        "interruptedTools".into(),
                        t.iter()
                            .map(|c| json!({"name": c.name, "id": c.id}))
                            .collect::<Vec<_>>()
                            .into(),
                    );
                }
                let message = match &tools {
                    Some(t) if !t.is_empty() => messages::pending_tools(
                        &t.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                    ),
                    _ => messages::AFTER_INPUT_APPLICATION.into(),
                };
                RuntimeFailure {
                    reason: "interrupted_after_input_application",
                    error_type: "submission_interrupted",
                    message,
                    details: AFTER_INPUT_DETAILS,
                    meta: Some(Value::Object(meta)),
                    interrupted_tools: tools,
                }
            }
            _ => return None,
        })
    }

    /// The advisory signal's `content`: the message, then the interrupted tool list (rule 9).
    pub fn advisory_content(&self) -> String {
        let mut body = self.message.clone();
        if let Some(t) = self.interrupted_tools.as_ref().filter(|t| !t.is_empty()) {
            let list: Vec<String> = t
                .iter()
                .map(|c| format!("  - {} ({})", c.name, c.id))
                .collect();
            body.push_str(&format!(
                "\n\nInterrupted tool call(s):\n{}",
                list.join("\n")
            ));
        }
        body
    }

    /// `serializeSubmissionError(error)`: name, message, type, details, then meta when set.
    pub fn serialized(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), "FlueError".into());
        m.insert("message".into(), self.message.clone().into());
        m.insert("type".into(), self.error_type.into());
        m.insert("details".into(), self.details.into());
        if let Some(meta) = &self.meta {
            m.insert("meta".into(), meta.clone());
        }
        Value::Object(m)
    }
}

/// Error texts the runtime stores (`errors.ts`).
pub mod messages {
    pub const RETRY_EXHAUSTED_BEFORE_INPUT: &str =
        "Submission was repeatedly interrupted before input application and exhausted its retry budget.";
    pub const BEFORE_INPUT_MARKER: &str = "Submission was interrupted after its input was persisted but before input application was confirmed. The input was not replayed.";
    pub const AFTER_INPUT_APPLICATION: &str = "Submission was interrupted after input application without a completed response. The work was not automatically replayed.";
    pub const TIMEOUT: &str = "Submission exceeded the configured timeout.";
    /// The parser's errors for a malformed row (`sql-agent-execution-store.ts:1095-1171`).
    pub const MALFORMED_ROW: &str = "[flue] Persisted agent submission row is malformed.";
    pub const MALFORMED_PAYLOAD: &str = "[flue] Persisted agent submission payload is malformed.";

    pub fn retry_exhausted(count: i64, max: i64) -> String {
        format!("Submission exceeded maximum recovery attempts ({count}/{max}).")
    }

    pub fn pending_tools(names: &[String]) -> String {
        format!(
            "Submission was interrupted with pending tool call(s): {}. The tool outcome could not be confirmed and the tool was not automatically retried.",
            names.join(", ")
        )
    }
}
