//! The runtime's submission-state classifier (spec §4.1–4.5), as a pure function.
//!
//! `classify_submission_state` follows the decision order of `classifySubmissionState` exactly and
//! additionally records *why*: the step of the decision order that matched and the entries that made
//! it match, so the UI can point at them.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::journal::entry::{Entry, Message, Role};
use crate::js::overflow_patterns::{overflow_error_pattern, PiAiPatterns};
use crate::js::regexp::JsRegex;

/// The seven resume modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeMode {
    InputOnly,
    Overflow,
    TransientRetry,
    StreamContinuation,
    ToolResults,
    ToolResultsPartial,
    AbortedPartial,
}

impl ResumeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeMode::InputOnly => "input_only",
            ResumeMode::Overflow => "overflow",
            ResumeMode::TransientRetry => "transient_retry",
            ResumeMode::StreamContinuation => "stream_continuation",
            ResumeMode::ToolResults => "tool_results",
            ResumeMode::ToolResultsPartial => "tool_results_partial",
            ResumeMode::AbortedPartial => "aborted_partial",
        }
    }

    pub const ALL: [ResumeMode; 7] = [
        ResumeMode::InputOnly,
        ResumeMode::Overflow,
        ResumeMode::TransientRetry,
        ResumeMode::StreamContinuation,
        ResumeMode::ToolResults,
        ResumeMode::ToolResultsPartial,
        ResumeMode::AbortedPartial,
    ];
}

/// The fine submission state (`SubmissionState`).
#[derive(Debug, Clone, PartialEq, strum::EnumDiscriminants)]
#[strum_discriminants(name(StateKind), derive(strum::EnumIter))]
pub enum SubmissionState {
    Absent,
    AdvancedPastInput,
    Completed {
        assistant_id: String,
        overflow: bool,
    },
    ToolUseUnresolved {
        assistant_id: String,
    },
    /// `reason` is `errorMessage ?? stopReason`; `None` when both are undefined.
    TerminalError {
        assistant_id: String,
        reason: Option<String>,
    },
    Resume {
        mode: ResumeMode,
        /// The last assistant (absent for `input_only`).
        assistant_id: Option<String>,
        consecutive_retryable_errors: u32,
    },
}

impl StateKind {
    /// The runtime's `kind` string.
    pub fn as_str(self) -> &'static str {
        match self {
            StateKind::Absent => "absent",
            StateKind::AdvancedPastInput => "advanced_past_input",
            StateKind::Completed => "completed",
            StateKind::ToolUseUnresolved => "tool_use_unresolved",
            StateKind::TerminalError => "terminal_error",
            StateKind::Resume => "resume",
        }
    }

    /// Every label a state of this kind shows: `resume/<mode>` for each mode, else the kind.
    pub fn labels(self) -> Vec<String> {
        match self {
            StateKind::Resume => ResumeMode::ALL
                .iter()
                .map(|m| format!("resume/{}", m.as_str()))
                .collect(),
            other => vec![other.as_str().to_string()],
        }
    }
}

impl SubmissionState {
    pub fn kind(&self) -> &'static str {
        StateKind::from(self).as_str()
    }

    pub fn mode(&self) -> Option<ResumeMode> {
        match self {
            SubmissionState::Resume { mode, .. } => Some(*mode),
            _ => None,
        }
    }

    /// `kind` or `resume/<mode>`: the label operators see.
    pub fn label(&self) -> String {
        match self.mode() {
            Some(m) => format!("resume/{}", m.as_str()),
            None => self.kind().to_string(),
        }
    }

    /// The runtime's JSON form of the result, without the `assistant` object (as in the vectors).
    pub fn to_runtime_json(&self) -> Value {
        let mut o = serde_json::Map::new();
        o.insert("kind".into(), self.kind().into());
        match self {
            SubmissionState::Completed { overflow, .. } => {
                o.insert("overflow".into(), (*overflow).into());
            }
            SubmissionState::TerminalError {
                reason: Some(r), ..
            } => {
                o.insert("reason".into(), r.clone().into());
            }
            SubmissionState::Resume {
                mode,
                consecutive_retryable_errors,
                ..
            } => {
                o.insert("mode".into(), mode.as_str().into());
                o.insert(
                    "consecutiveRetryableErrors".into(),
                    (*consecutive_retryable_errors).into(),
                );
            }
            _ => {}
        }
        Value::Object(o)
    }

    /// The coarse `AgentSubmissionInspection` (spec §4.5).
    pub fn inspection(&self) -> Inspection {
        match self {
            SubmissionState::Absent => Inspection::Absent,
            SubmissionState::Completed { .. } => Inspection::Completed,
            SubmissionState::Resume { mode, .. } => match mode {
                ResumeMode::InputOnly | ResumeMode::Overflow => Inspection::Uncertain,
                _ => Inspection::Continuable,
            },
            SubmissionState::AdvancedPastInput
            | SubmissionState::ToolUseUnresolved { .. }
            | SubmissionState::TerminalError { .. } => Inspection::Uncertain,
        }
    }
}

/// The coarse inspection the reconciler branches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Inspection {
    Absent,
    Completed,
    Continuable,
    Uncertain,
}

impl Inspection {
    pub fn as_str(self) -> &'static str {
        match self {
            Inspection::Absent => "absent",
            Inspection::Completed => "completed",
            Inspection::Continuable => "continuable",
            Inspection::Uncertain => "uncertain",
        }
    }
}

/// A toolCall of the trailing partial batch: `{type:"toolCall", id, name}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchCall {
    pub id: String,
    pub name: String,
    /// Whether a result for this id was recorded in the trailing run of results.
    pub has_result: bool,
}

/// `findTrailingPartialToolBatch`'s result (spec §4.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrailingPartialBatch {
    /// The `toolUse` assistant entry that owns the batch.
    pub entry_id: String,
    /// Its tool calls in content order (duplicates kept).
    pub tool_calls: Vec<BatchCall>,
    /// Entry ids of the recorded results in the trailing run.
    pub result_entry_ids: Vec<String>,
    /// The trailing aborted assistant that was skipped, if any.
    pub trailing_aborted_id: Option<String>,
}

impl TrailingPartialBatch {
    /// The batch's calls as a repair answers them (`repair_batch`'s input), duplicates kept.
    pub fn requested_calls(&self) -> Vec<crate::journal::submission_rows::RequestedCall> {
        self.tool_calls
            .iter()
            .map(|c| crate::journal::submission_rows::RequestedCall {
                id: c.id.clone(),
                name: c.name.clone(),
            })
            .collect()
    }
}

impl TrailingPartialBatch {
    pub fn missing_calls(&self) -> impl Iterator<Item = &BatchCall> {
        self.tool_calls.iter().filter(|c| !c.has_result)
    }
}

/// Which step of the decision order of spec §4.1 matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Step number in spec §4.1 (1–11).
    pub step: u8,
    /// One sentence: the rule as it applied here.
    pub rule: String,
    /// Entry ids that made the rule match, for the UI to point at.
    pub entry_ids: Vec<String>,
}

/// The classifier's answer plus its explanation and the partial-batch detector's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    pub state: SubmissionState,
    pub explanation: Explanation,
    pub trailing_partial_batch: Option<TrailingPartialBatch>,
    pub context_window: u64,
}

fn retryable_regex() -> &'static JsRegex {
    static R: OnceLock<JsRegex> = OnceLock::new();
    R.get_or_init(|| {
        JsRegex::new(
            r"overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|network.?error|connection.?(?:reset|refused|lost)|socket hang up|fetch failed|timed? out|timeout|terminated",
        )
    })
}

/// `isRetryableModelError(m)` (spec §4.2).
pub fn is_retryable_model_error(m: &Message) -> bool {
    if m.stop_reason() != Some("error") {
        return false;
    }
    match m.truthy_error_message() {
        Some(text) => retryable_regex().test(&text),
        None => false,
    }
}

/// `isCompletedAssistantResponse(m)`.
pub fn is_completed_response(m: &Message) -> bool {
    matches!(m.stop_reason(), Some("stop") | Some("length"))
}

/// `countConsecutiveRetryableModelErrors(entries)` (spec §4.2).
pub fn count_consecutive_retryable_model_errors(entries: &[&Entry]) -> u32 {
    let mut count = 0;
    for e in entries.iter().rev() {
        let Some(m) = e.message() else { continue };
        match m.role {
            Role::User => return count,
            Role::Assistant => {
                if !is_retryable_model_error(m) {
                    return count;
                }
                count += 1;
            }
            _ => {}
        }
    }
    count
}

fn is_stream_continued(e: &Entry) -> bool {
    e.message().is_some_and(Message::is_stream_continued)
}

/// `findTrailingPartialToolBatch(following)` (spec §4.3).
pub fn find_trailing_partial_tool_batch(following: &[&Entry]) -> Option<TrailingPartialBatch> {
    if following.iter().any(|e| is_stream_continued(e)) {
        return None;
    }
    let mut end = following.len();
    let mut trailing_aborted_id = None;
    if let Some(last) = following.last() {
        if let Some(m) = last.message_with_role(&Role::Assistant) {
            if m.stop_reason() == Some("aborted") {
                end -= 1;
                trailing_aborted_id = Some(last.id.to_string());
            }
        }
    }
    let mut result_ids: Vec<Option<Value>> = Vec::new();
    let mut result_entry_ids = Vec::new();
    let mut index = end;
    while index > 0 {
        let e = following[index - 1];
        let Some(m) = e.message_with_role(&Role::ToolResult) else {
            break;
        };
        result_ids.push(m.tool_call_id());
        result_entry_ids.push(e.id.to_string());
        index -= 1;
    }
    if index == 0 {
        return None;
    }
    let owner = following[index - 1];
    let assistant = owner.message_with_role(&Role::Assistant)?;
    if assistant.stop_reason() != Some("toolUse") {
        return None;
    }
    let calls = assistant.tool_calls();
    if calls.is_empty() {
        return None;
    }
    let has = |id: &Option<Value>| result_ids.iter().any(|r| r == id);
    if calls.iter().all(|c| has(&c.id)) {
        return None;
    }
    result_entry_ids.reverse();
    Some(TrailingPartialBatch {
        entry_id: owner.id.to_string(),
        tool_calls: calls
            .iter()
            .map(|c| BatchCall {
                id: c.id_text(),
                name: c.name.clone(),
                has_result: has(&c.id),
            })
            .collect(),
        result_entry_ids,
        trailing_aborted_id,
    })
}

/// Why `is_context_overflow` said yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverflowReason {
    /// Case 1: the error text matched this overflow pattern (JS source).
    ErrorText(&'static str),
    /// Case 2: a `stop` answer whose input + cacheRead exceeds the context window.
    Silent,
    /// Case 3: a `length` answer with no output and input + cacheRead ≥ 99% of the window.
    LengthTruncation,
}

/// pi-ai's `isContextOverflow(message, contextWindow)` (spec §4.4), with the reason.
pub fn context_overflow(m: &Message, context_window: u64) -> Option<OverflowReason> {
    let stop = m.stop_reason();
    if stop == Some("error") {
        if let Some(text) = m.truthy_error_message() {
            if let Some(p) = overflow_error_pattern(PiAiPatterns::Beta7, &text) {
                return Some(OverflowReason::ErrorText(p));
            }
        }
    }
    if context_window == 0 {
        return None;
    }
    // JS: `usage.input + usage.cacheRead`; undefined operands give NaN and every comparison is false.
    let input_tokens = m.usage("input") + m.usage("cacheRead");
    let window = context_window as f64;
    if stop == Some("stop") && input_tokens > window {
        return Some(OverflowReason::Silent);
    }
    if stop == Some("length") && m.usage("output") == 0.0 && input_tokens >= window * 0.99 {
        return Some(OverflowReason::LengthTruncation);
    }
    None
}

/// `isContextOverflow` as a boolean.
pub fn is_context_overflow(m: &Message, context_window: u64) -> bool {
    context_overflow(m, context_window).is_some()
}

fn explain(step: u8, rule: impl Into<String>, entry_ids: Vec<String>) -> Explanation {
    Explanation {
        step,
        rule: rule.into(),
        entry_ids,
    }
}

/// `classifySubmissionState(following, {contextWindow})` (spec §4.1) with an explanation.
///
/// `following` is `None` when the submission's input entry is not on the active path.
pub fn classify_submission_state(
    following: Option<&[&Entry]>,
    context_window: u64,
) -> Classification {
    let (state, explanation) = classify_inner(following, context_window);
    let trailing_partial_batch = following.and_then(find_trailing_partial_tool_batch);
    Classification {
        state,
        explanation,
        trailing_partial_batch,
        context_window,
    }
}

fn classify_inner(following: Option<&[&Entry]>, cw: u64) -> (SubmissionState, Explanation) {
    let Some(following) = following else {
        return (
            SubmissionState::Absent,
            explain(1, "the input entry is not on the active path", vec![]),
        );
    };
    let users: Vec<String> = following
        .iter()
        .filter(|e| e.message_with_role(&Role::User).is_some())
        .map(|e| e.id.to_string())
        .collect();
    if !users.is_empty() {
        return (
            SubmissionState::AdvancedPastInput,
            explain(
                2,
                "a user message follows the input on the active path",
                users,
            ),
        );
    }
    let last_assistant = following
        .iter()
        .rev()
        .find(|e| e.message_with_role(&Role::Assistant).is_some());
    let Some(entry) = last_assistant else {
        return (
            SubmissionState::Resume {
                mode: ResumeMode::InputOnly,
                assistant_id: None,
                consecutive_retryable_errors: count_consecutive_retryable_model_errors(following),
            },
            explain(3, "no assistant message follows the input", vec![]),
        );
    };
    let a = entry.message().expect("filtered to messages");
    let aid = entry.id.to_string();
    let resume = |mode| SubmissionState::Resume {
        mode,
        assistant_id: Some(aid.clone()),
        consecutive_retryable_errors: count_consecutive_retryable_model_errors(following),
    };
    let stop = a.stop_reason().unwrap_or("(none)").to_string();
    let overflow = context_overflow(a, cw);
    if is_completed_response(a) {
        let why = match &overflow {
            Some(r) => format!(
                "the last assistant ended with stopReason {stop} ({}); a completed answer wins over overflow",
                describe_overflow(r, cw)
            ),
            None => format!("the last assistant ended with stopReason {stop}"),
        };
        return (
            SubmissionState::Completed {
                assistant_id: aid.clone(),
                overflow: overflow.is_some(),
            },
            explain(5, why, vec![aid]),
        );
    }
    if let Some(r) = &overflow {
        return (
            resume(ResumeMode::Overflow),
            explain(
                6,
                format!(
                    "the last assistant overflowed the context: {}",
                    describe_overflow(r, cw)
                ),
                vec![aid.clone()],
            ),
        );
    }
    if is_retryable_model_error(a) {
        let n = count_consecutive_retryable_model_errors(following);
        return (
            resume(ResumeMode::TransientRetry),
            explain(
                7,
                format!(
                    "the last assistant is a retryable model error ({n} in a row): {}",
                    a.truthy_error_message().unwrap_or_default()
                ),
                vec![aid.clone()],
            ),
        );
    }
    let continued: Vec<String> = following
        .iter()
        .filter(|e| is_stream_continued(e))
        .map(|e| e.id.to_string())
        .collect();
    if stop == "aborted" && !continued.is_empty() {
        let mut ids = vec![aid.clone()];
        ids.extend(continued);
        return (
            resume(ResumeMode::StreamContinuation),
            explain(
                8,
                "the last assistant was aborted and a stream_continued signal follows the input",
                ids,
            ),
        );
    }
    if stop == "toolUse" {
        let is_result = |e: &&&Entry| e.message_with_role(&Role::ToolResult).is_some();
        // The ids are listed only when no trailing batch is named: a whale's 75,000 results
        // were copied and dropped (a fifth of its inspection).
        if following.iter().any(|e| is_result(&e)) {
            return match find_trailing_partial_tool_batch(following) {
                Some(batch) => {
                    let mut ids = vec![batch.entry_id.clone()];
                    ids.extend(batch.result_entry_ids.iter().cloned());
                    let missing = batch.missing_calls().count();
                    (
                        resume(ResumeMode::ToolResultsPartial),
                        explain(
                            9,
                            format!("the last assistant requested tools and {missing} of {} calls of the trailing batch have no result", batch.tool_calls.len()),
                            ids,
                        ),
                    )
                }
                None => {
                    let mut ids = vec![aid.clone()];
                    ids.extend(following.iter().filter(is_result).map(|e| e.id.to_string()));
                    (
                        resume(ResumeMode::ToolResults),
                        explain(9, "the last assistant requested tools and tool results are recorded (no trailing partial batch)", ids),
                    )
                }
            };
        }
        return (
            SubmissionState::ToolUseUnresolved {
                assistant_id: aid.clone(),
            },
            explain(
                9,
                "the last assistant requested tools and no tool result follows the input",
                vec![aid],
            ),
        );
    }
    if stop == "aborted" {
        return match find_trailing_partial_tool_batch(following) {
            Some(batch) => {
                let mut ids = vec![batch.entry_id.clone()];
                ids.extend(batch.result_entry_ids.iter().cloned());
                ids.push(aid.clone());
                (
                    resume(ResumeMode::ToolResultsPartial),
                    explain(
                        10,
                        "the last assistant was aborted right after an incomplete tool batch",
                        ids,
                    ),
                )
            }
            None => (
                resume(ResumeMode::AbortedPartial),
                explain(
                    10,
                    "the last assistant was aborted with no incomplete tool batch before it",
                    vec![aid.clone()],
                ),
            ),
        };
    }
    let reason = match a.error_message_value() {
        Some(Value::Null) | None => a
            .stop_reason_value()
            .map(crate::journal::entry::js_to_string),
        Some(v) => Some(crate::journal::entry::js_to_string(v)),
    };
    (
        SubmissionState::TerminalError {
            assistant_id: aid.clone(),
            reason: reason.clone(),
        },
        explain(
            11,
            format!(
                "the last assistant ended with stopReason {stop} and a non-retryable error: {}",
                reason.unwrap_or_default()
            ),
            vec![aid],
        ),
    )
}

fn describe_overflow(r: &OverflowReason, cw: u64) -> String {
    match r {
        OverflowReason::ErrorText(p) => format!("error text matches /{p}/i"),
        OverflowReason::Silent => format!("input + cacheRead exceeds the context window {cw}"),
        OverflowReason::LengthTruncation => {
            format!("stopReason length with no output and input + cacheRead ≥ 99% of {cw}")
        }
    }
}
