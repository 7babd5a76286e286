//! flue 2.x's submission classifier, as a pure function over a folded conversation.
//!
//! A port of `classifyConversationSubmission` and `classifySubmissionState` (with
//! `findTrailingPartialToolBatch`, `isTerminalTrailingToolBatch`, `isRetryableModelError`,
//! `countConsecutiveRetryableModelErrors` and `isAssistantContextOverflow`) of
//! `@flue/runtime` 2.x: in 2.1.0 `dist/dispatch-Dohpn4Ea.mjs:1896–2135` and 2197–2205. The
//! classifier takes the active path of the submission's conversation after its input entry
//! (`entry_<kind>_<base64url(submissionId)>`) and answers in one of three variants
//! ([`Flue2Variant`]; the packed dists of every 2.x release were diffed):
//!
//! | step | 2.0.8 and later (2.0.8, 2.1.0) | 2.0.0–2.0.5 |
//! | --- | --- | --- |
//! | 1 | `absent`: the input entry is not on the active path (or there is no conversation) | same |
//! | 2 | `advanced_past_input`: a user message follows the input that is not a joined delivery (one carrying a submission id other than the input's own) | same |
//! | 3 | `resume/input_only`: no assistant message follows the input | same |
//! | 4 | tool batch: the last assistant is `toolUse`, or `stop`/`length` with a tool call | `completed`: `stop` or `length` |
//! | 5 | `completed`: `stop` or `length` | `resume/overflow` |
//! | 6 | `resume/overflow` | `resume/transient_retry` |
//! | 7 | `resume/transient_retry` | `resume/stream_continuation` |
//! | 8 | `resume/stream_continuation`: `aborted`, the recovery signal pair right after it | tool batch: the last assistant is `toolUse` |
//! | 9 | `aborted`: `resume/tool_results_partial` or `resume/aborted_partial` | same |
//! | 10 | `terminal_error`, the reason `errorMessage ?? stopReason` | same |
//!
//! The tool-batch step answers `resume/tool_results_partial`, `completed` with
//! `terminalToolBatch`, or `resume/tool_results` when any tool result follows the input, else
//! `tool_use_unresolved`. Moving it first changes no answer by itself (a `toolUse` assistant
//! never overflows, is never a retryable error, never aborted); what changes the answers at 2.0.8
//! is that a tool batch, here and in `findTrailingPartialToolBatch`, is no longer only a
//! `toolUse` assistant but also a `stop`/`length` one with a tool call. 2.0.5 adds
//! `connection…error` to the retryable pattern of 2.0.0–2.0.3. Every 2.x release depends on
//! `@earendil-works/pi-ai` `^0.83.0`; the overflow patterns are those of 0.83.0 (two more than the
//! pi-ai of 1.0.0-beta.7).
//!
//! The kinds and modes are beta.7's ([`SubmissionState`]), plus `terminalToolBatch` on a completed
//! answer. Like the runtime's, this classifier does not see in-progress messages or recorded but
//! uncommitted tool outcomes: only committed entries. Checked against the runtime's own answers
//! (2.1.0, so the 2.0.8 variant) on every 2.1.0 fixture (`NAME.classification.json`), on the
//! classifier vectors of `tests/fixtures/flue2-classify-v1.jsonl.gz` and, with the runtime
//! installed, in all three variants against 2.0.0's, 2.0.5's and 2.1.0's own classifiers on
//! every prefix of the fixtures' logs and mutants of them (`runtime2.rs`). The unit tests' answers
//! below are those the three releases gave.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::records::JsonText;
use super::state::FoldError;
use super::state::{Conversation, Entry, EntryBody, ToolCallRef};
use crate::js::overflow_patterns::{self, PiAiPatterns};
use crate::js::regexp::JsRegex;
use crate::recovery::classify::{
    BatchCall, Explanation, ResumeMode, SubmissionState, TrailingPartialBatch,
};

/// Which 2.x release's classifier: the database does not say which 2.x wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flue2Variant {
    /// 2.0.0, 2.0.1 and 2.0.3: the tool batch (only `toolUse`) after the stream continuation;
    /// `connection…error` is not retryable.
    V2_0_0,
    /// 2.0.5: as 2.0.0, `connection…error` retryable.
    V2_0_5,
    /// 2.0.8 and 2.1.0: the tool batch (`toolUse`, or `stop`/`length` with a tool call) first.
    V2_0_8,
}

impl Flue2Variant {
    pub const ALL: [Flue2Variant; 3] = [
        Flue2Variant::V2_0_0,
        Flue2Variant::V2_0_5,
        Flue2Variant::V2_0_8,
    ];
    /// The newest, 2.1.0's.
    pub const LATEST: Flue2Variant = Flue2Variant::V2_0_8;

    /// The `@flue/runtime` releases that classify this way.
    pub fn releases(self) -> &'static [&'static str] {
        match self {
            Flue2Variant::V2_0_0 => &["2.0.0", "2.0.1", "2.0.3"],
            Flue2Variant::V2_0_5 => &["2.0.5"],
            Flue2Variant::V2_0_8 => &["2.0.8", "2.1.0"],
        }
    }

    /// The variant of a published 2.x release (`2.1.0`), or `None` for any other version.
    pub fn for_release(version: &str) -> Option<Flue2Variant> {
        Flue2Variant::ALL
            .into_iter()
            .find(|v| v.releases().contains(&version))
    }

    /// Whether the tool-batch step comes first and a `stop`/`length` assistant with a tool call
    /// is a tool batch too (in the classifier and in `findTrailingPartialToolBatch`).
    fn tool_batch_first(self) -> bool {
        self == Flue2Variant::V2_0_8
    }
}

/// What the classifier answered, why, and the trailing partial batch the runtime's repair would
/// see.
#[derive(Debug, Clone, PartialEq)]
pub struct Flue2Classification {
    pub state: SubmissionState,
    /// `completed` only: every call of the trailing batch ended with a terminating result.
    pub terminal_tool_batch: bool,
    /// The last assistant's `stopReason` (the runtime's `state.assistant.stopReason`), where the
    /// answer carries the assistant (not on `absent`, `advanced_past_input`, `input_only`,
    /// `terminal_error`).
    pub assistant_stop_reason: Option<String>,
    /// The step of the variant's decision order (table above) that decided (1–10).
    pub explanation: Explanation,
    /// `findTrailingPartialToolBatch` over the message entries after the input (compactions left
    /// out), as the runtime's repair passes them: the batch a resume would complete.
    pub trailing_partial_batch: Option<TrailingPartialBatch>,
    pub context_window: u64,
    pub variant: Flue2Variant,
}

/// Where the runtime's classifier throws instead of answering (a completion without `usage`
/// under a context window): its `TypeError` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClassifyError {
    #[error("TypeError: {0}")]
    Type(String),
    #[error("{0}")]
    Fold(#[from] FoldError),
}

impl Flue2Classification {
    /// `kind` or `resume/<mode>`.
    pub fn label(&self) -> String {
        self.state.label()
    }

    /// The answer in the shape `tests/runtime2/classify.mjs` describes the runtime's
    /// (`describeClassification`): `kind`, `mode`, `consecutiveRetryableErrors`, `overflow`,
    /// `terminalToolBatch`, `reason`, `assistantStopReason`.
    pub fn to_runtime_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("kind".into(), self.state.kind().into());
        match &self.state {
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
            SubmissionState::Completed { overflow, .. } => {
                o.insert("overflow".into(), (*overflow).into());
                if self.terminal_tool_batch {
                    o.insert("terminalToolBatch".into(), true.into());
                }
            }
            SubmissionState::TerminalError { reason, .. } => {
                o.insert("reason".into(), json!(reason));
            }
            _ => {}
        }
        if let Some(s) = &self.assistant_stop_reason {
            o.insert("assistantStopReason".into(), s.clone().into());
        }
        Value::Object(o)
    }
}

/// The runtime's `encodeCanonicalId`: base64url of the UTF-8 bytes, without padding.
pub fn encode_canonical_id(id: &str) -> String {
    super::fold::base64url(id)
}

/// The runtime's `submissionEntryId(kind, id)`: the input entry of a submission.
pub fn submission_entry_id(kind: &str, submission_id: &str) -> String {
    format!("entry_{kind}_{}", encode_canonical_id(submission_id))
}

/// A submission row's `session_key` as the runtime's `parseSessionStorageKey` reads it:
/// `agent-session:` and a JSON array of four strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    pub agent_name: String,
    pub instance_id: String,
    pub harness: String,
    pub session: String,
}

impl SessionKey {
    pub fn parse(key: &str) -> Option<SessionKey> {
        let rest = key.strip_prefix("agent-session:")?;
        let Ok(Value::Array(parts)) = crate::js::lone_surrogates::from_str::<Value>(rest) else {
            return None;
        };
        let parts: Vec<String> = parts
            .into_iter()
            .map(|p| match p {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let [agent_name, instance_id, harness, session]: [String; 4] = parts.try_into().ok()?;
        Some(SessionKey {
            agent_name,
            instance_id,
            harness,
            session,
        })
    }

    /// The runtime's `agentStreamPath`: the instance's conversation stream.
    pub fn stream_path(&self) -> String {
        format!("agents/{}/{}", self.agent_name, self.instance_id)
    }
}

/// `classifyConversationSubmission(conversation, inputEntryId, { contextWindow })`, or
/// `classifySubmissionState(undefined)` (`absent`) without a conversation.
pub fn classify_conversation_submission(
    conversation: Option<&Conversation>,
    input_entry_id: &str,
    context_window: u64,
    variant: Flue2Variant,
) -> Result<Flue2Classification, ClassifyError> {
    let path = match conversation {
        Some(c) => c.active_path()?,
        None => Vec::new(),
    };
    let Some(input_index) = path.iter().position(|e| e.id == input_entry_id) else {
        return classify_submission_state(None, None, context_window, variant);
    };
    let own = path[input_index].submission_id.as_deref();
    classify_submission_state(Some(&path[input_index + 1..]), own, context_window, variant)
}

/// `classifySubmissionState(following, { contextWindow, ownSubmissionId })` of `variant`.
pub fn classify_submission_state(
    following: Option<&[&Entry]>,
    own_submission_id: Option<&str>,
    context_window: u64,
    variant: Flue2Variant,
) -> Result<Flue2Classification, ClassifyError> {
    let (state, terminal_tool_batch, assistant_stop_reason, explanation) =
        classify_inner(following, own_submission_id, context_window, variant)?;
    Ok(Flue2Classification {
        state,
        terminal_tool_batch,
        assistant_stop_reason,
        explanation,
        trailing_partial_batch: following.and_then(|f| {
            let messages: Vec<&Entry> = f
                .iter()
                .copied()
                .filter(|e| !matches!(e.body, EntryBody::Compaction { .. }))
                .collect();
            find_trailing_partial_tool_batch(&messages, variant)
        }),
        context_window,
        variant,
    })
}

fn explain(step: u8, rule: impl Into<String>, entry_ids: Vec<String>) -> Explanation {
    Explanation {
        step,
        rule: rule.into(),
        entry_ids,
    }
}

/// An assistant entry's fields.
struct Assistant<'a> {
    stop_reason: &'a str,
    error_message: Option<&'a str>,
    tool_calls: &'a [ToolCallRef],
    usage: Option<&'a Value>,
}

fn assistant(e: &Entry) -> Option<Assistant<'_>> {
    match &e.body {
        EntryBody::Assistant {
            stop_reason,
            error_message,
            tool_calls,
            usage,
            ..
        } => Some(Assistant {
            stop_reason,
            error_message: error_message.as_deref(),
            tool_calls,
            usage: usage.as_ref().map(JsonText::value),
        }),
        _ => None,
    }
}

fn tool_result(e: &Entry) -> Option<(&str, bool)> {
    match &e.body {
        EntryBody::ToolResult {
            tool_call_id,
            terminate,
            ..
        } => Some((tool_call_id, *terminate)),
        _ => None,
    }
}

fn signal_type(e: &Entry) -> Option<&str> {
    match &e.body {
        EntryBody::Signal { signal_type } => Some(signal_type),
        _ => None,
    }
}

type Inner = (SubmissionState, bool, Option<String>, Explanation);

fn classify_inner(
    following: Option<&[&Entry]>,
    own: Option<&str>,
    cw: u64,
    variant: Flue2Variant,
) -> Result<Inner, ClassifyError> {
    let Some(following) = following else {
        return Ok((
            SubmissionState::Absent,
            false,
            None,
            explain(1, "the input entry is not on the active path", vec![]),
        ));
    };
    // isJoinedDeliveryInput: a user message carrying a submission id other than the input's own.
    let advanced: Vec<String> = following
        .iter()
        .filter(|e| matches!(e.body, EntryBody::User { .. }))
        .filter(|e| {
            !(own.is_some() && e.submission_id.is_some() && e.submission_id.as_deref() != own)
        })
        .map(|e| e.id.clone())
        .collect();
    if !advanced.is_empty() {
        return Ok((
            SubmissionState::AdvancedPastInput,
            false,
            None,
            explain(
                2,
                "a user message that is not a joined delivery follows the input on the active path",
                advanced,
            ),
        ));
    }
    let retries = |f: &[&Entry]| count_consecutive_retryable_model_errors(f, variant);
    let Some(ai) = following.iter().rposition(|e| assistant(e).is_some()) else {
        return Ok((
            SubmissionState::Resume {
                mode: ResumeMode::InputOnly,
                assistant_id: None,
                consecutive_retryable_errors: retries(following),
            },
            false,
            None,
            explain(3, "no assistant message follows the input", vec![]),
        ));
    };
    let entry = following[ai];
    let a = assistant(entry).expect("found as an assistant");
    let aid = entry.id.clone();
    let stop = a.stop_reason.to_string();
    let with = |s: SubmissionState, step: u8, rule: String, ids: Vec<String>| -> Inner {
        (s, false, Some(stop.clone()), explain(step, rule, ids))
    };
    let resume = |mode| SubmissionState::Resume {
        mode,
        assistant_id: Some(aid.clone()),
        consecutive_retryable_errors: retries(following),
    };
    // Steps 4–8 in the variant's order: before 2.0.8 the tool batch is step 8, the others one
    // earlier.
    let first = variant.tool_batch_first();
    let (tool_step, shift) = if first { (4, 1) } else { (8, 0) };
    // Computed before any step, as the runtime does: it throws on a `stop`/`length` completion
    // without `usage` under a context window, whatever the answer would have been.
    let overflow = assistant_context_overflow(&a, cw)?;
    let tool_branch = || -> Inner {
        let results: Vec<String> = following
            .iter()
            .filter(|e| tool_result(e).is_some())
            .map(|e| e.id.clone())
            .collect();
        if results.is_empty() {
            return with(
                SubmissionState::ToolUseUnresolved {
                    assistant_id: aid.clone(),
                },
                tool_step,
                format!("the last assistant is a tool batch (stopReason {stop}) and no tool result follows the input"),
                vec![aid.clone()],
            );
        }
        if let Some(batch) = find_trailing_partial_tool_batch(following, variant) {
            let mut ids = vec![batch.entry_id.clone()];
            ids.extend(batch.result_entry_ids.iter().cloned());
            let missing = batch.missing_calls().count();
            return with(
                resume(ResumeMode::ToolResultsPartial),
                tool_step,
                format!(
                    "the last assistant is a tool batch, a tool result follows the input, and {missing} of {} calls of the trailing batch have no committed result",
                    batch.tool_calls.len()
                ),
                ids,
            );
        }
        if is_terminal_trailing_tool_batch(following, ai, &a) {
            let mut ids = vec![aid.clone()];
            ids.extend(following[ai + 1..].iter().map(|e| e.id.clone()));
            let mut out = with(
                SubmissionState::Completed {
                    assistant_id: aid.clone(),
                    overflow: overflow.is_some(),
                },
                tool_step,
                "the last assistant is a tool batch whose every call ended with a terminating result".into(),
                ids,
            );
            out.1 = true;
            return out;
        }
        let mut ids = vec![aid.clone()];
        ids.extend(results);
        with(
            resume(ResumeMode::ToolResults),
            tool_step,
            "the last assistant is a tool batch and tool results follow the input (no trailing partial batch)".into(),
            ids,
        )
    };
    if first && is_tool_batch_assistant(&a, variant) {
        return Ok(tool_branch());
    }
    if matches!(a.stop_reason, "stop" | "length") {
        let why = match &overflow {
            Some(r) => format!("the last assistant ended with stopReason {stop} ({r}); a completed answer wins over overflow"),
            None => format!("the last assistant ended with stopReason {stop}"),
        };
        return Ok(with(
            SubmissionState::Completed {
                assistant_id: aid.clone(),
                overflow: overflow.is_some(),
            },
            4 + shift,
            why,
            vec![aid.clone()],
        ));
    }
    if let Some(r) = &overflow {
        return Ok(with(
            resume(ResumeMode::Overflow),
            5 + shift,
            format!("the last assistant overflowed the context: {r}"),
            vec![aid.clone()],
        ));
    }
    if is_retryable_model_error(&a, variant) {
        let n = retries(following);
        return Ok(with(
            resume(ResumeMode::TransientRetry),
            6 + shift,
            format!(
                "the last assistant is a retryable model error ({n} in a row): {}",
                a.error_message.unwrap_or_default()
            ),
            vec![aid.clone()],
        ));
    }
    if a.stop_reason == "aborted" && has_adjacent_stream_continuation(following, ai) {
        let ids = vec![
            aid.clone(),
            following[ai + 1].id.clone(),
            following[ai + 2].id.clone(),
        ];
        return Ok(with(
            resume(ResumeMode::StreamContinuation),
            7 + shift,
            "the last assistant was aborted and the stream_interrupted, stream_continued signal pair follows it".into(),
            ids,
        ));
    }
    if !first && is_tool_batch_assistant(&a, variant) {
        return Ok(tool_branch());
    }
    if a.stop_reason == "aborted" {
        return Ok(match find_trailing_partial_tool_batch(following, variant) {
            Some(batch) => {
                let mut ids = vec![batch.entry_id.clone()];
                ids.extend(batch.result_entry_ids.iter().cloned());
                ids.push(aid.clone());
                with(
                    resume(ResumeMode::ToolResultsPartial),
                    9,
                    "the last assistant was aborted right after an incomplete tool batch".into(),
                    ids,
                )
            }
            None => with(
                resume(ResumeMode::AbortedPartial),
                9,
                "the last assistant was aborted with no incomplete tool batch before it".into(),
                vec![aid.clone()],
            ),
        });
    }
    // `{ kind: "terminal_error", reason }`: the runtime's answer carries no assistant.
    let reason = a.error_message.unwrap_or(a.stop_reason).to_string();
    Ok((
        SubmissionState::TerminalError {
            assistant_id: aid.clone(),
            reason: Some(reason.clone()),
        },
        false,
        None,
        explain(
            10,
            format!("the last assistant ended with stopReason {stop} and a non-retryable error: {reason}"),
            vec![aid],
        ),
    ))
}

/// The classifier's `isToolBatchAssistant`: from 2.0.8 `toolUse` (with or without calls), or
/// `stop`/`length` with a tool call; before, `stopReason === "toolUse"`. (The reducer's own check
/// wants a call in every case.)
fn is_tool_batch_assistant(a: &Assistant, variant: Flue2Variant) -> bool {
    a.stop_reason == "toolUse"
        || (variant.tool_batch_first()
            && matches!(a.stop_reason, "stop" | "length")
            && !a.tool_calls.is_empty())
}

/// JavaScript's `Number(x)` of a `usage` field as `+` and `>` use it: a number, `null` 0, a
/// boolean 0 or 1, absent NaN. Strings and objects (never written by the runtime) read as NaN.
fn usage_number(usage: &Value, key: &str) -> f64 {
    match usage.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        _ => f64::NAN,
    }
}

/// `message.usage`, which the runtime reads without a guard: `null` and absent throw.
fn usage_object<'a>(a: &Assistant<'a>, key: &str) -> Result<&'a Value, ClassifyError> {
    match a.usage {
        Some(Value::Null) => Err(ClassifyError::Type(format!(
            "Cannot read properties of null (reading '{key}')"
        ))),
        None => Err(ClassifyError::Type(format!(
            "Cannot read properties of undefined (reading '{key}')"
        ))),
        Some(v) => Ok(v),
    }
}

/// Case 1 of pi-ai 0.83.0's `isContextOverflow` (its lists: `js::overflow_patterns`).
pub fn overflow_error_pattern(text: &str) -> Option<&'static str> {
    overflow_patterns::overflow_error_pattern(PiAiPatterns::V0_83, text)
}

/// `isAssistantContextOverflow` (the same in every 2.x): the Workers-AI `(request_too_large)`
/// marker, then pi-ai's `isContextOverflow`; with why.
fn assistant_context_overflow(a: &Assistant, cw: u64) -> Result<Option<String>, ClassifyError> {
    if a.stop_reason == "error"
        && a.error_message
            .is_some_and(|t| t.contains("(request_too_large)"))
    {
        return Ok(Some(
            "the error text carries the (request_too_large) marker".into(),
        ));
    }
    if a.stop_reason == "error" {
        if let Some(p) = a
            .error_message
            .filter(|t| !t.is_empty())
            .and_then(overflow_error_pattern)
        {
            return Ok(Some(format!("error text matches /{p}/i")));
        }
    }
    if cw == 0 {
        return Ok(None);
    }
    let window = cw as f64;
    if a.stop_reason == "stop" {
        let u = usage_object(a, "input")?;
        if usage_number(u, "input") + usage_number(u, "cacheRead") > window {
            return Ok(Some(format!(
                "input + cacheRead exceeds the context window {cw}"
            )));
        }
    }
    if a.stop_reason == "length" {
        let u = usage_object(a, "output")?;
        // `usage.output === 0`: strictly the number zero.
        let no_output =
            matches!(u.get("output"), Some(Value::Number(n)) if n.as_f64() == Some(0.0));
        if no_output && usage_number(u, "input") + usage_number(u, "cacheRead") >= window * 0.99 {
            return Ok(Some(format!(
                "stopReason length with no output and input + cacheRead ≥ 99% of {cw}"
            )));
        }
    }
    Ok(None)
}

/// The retryable pattern (DSP:2116) without its last alternative, whose lookahead the regex
/// crate lacks: 2.0.0–2.0.3's, then 2.0.5's with `connection.?(?:…|error)`.
fn retryable_regex(variant: Flue2Variant) -> &'static JsRegex {
    static OLD: OnceLock<JsRegex> = OnceLock::new();
    static NEW: OnceLock<JsRegex> = OnceLock::new();
    if variant == Flue2Variant::V2_0_0 {
        OLD.get_or_init(|| {
            JsRegex::new(
                r"overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|network.?error|connection.?(?:reset|refused|lost)|socket hang up|fetch failed|timed? out|timeout|terminated",
            )
        })
    } else {
        NEW.get_or_init(|| {
            JsRegex::new(
                r"overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|network.?error|connection.?(?:reset|refused|lost|error)|socket hang up|fetch failed|timed? out|timeout|terminated",
            )
        })
    }
}

/// `provider finish_reason:\s*error` over the ASCII-lowercased text (JS `\s` as `JsRegex`
/// spells it); the lookahead `(?![-\w])` is checked by hand.
fn finish_reason_regex() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"provider finish_reason:[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]*error",
        )
        .expect("a valid pattern")
    })
}

/// `isRetryableModelError`'s text test: the `(retryable_interruption)` marker, then the
/// variant's pattern.
pub fn is_retryable_error_text(text: &str, variant: Flue2Variant) -> bool {
    if text.contains("(retryable_interruption)") {
        return true;
    }
    if retryable_regex(variant).test(text) {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    finish_reason_regex().find_iter(&lower).any(|m| {
        !lower[m.end()..]
            .chars()
            .next()
            .is_some_and(|c| c == '-' || c == '_' || c.is_ascii_alphanumeric())
    })
}

fn is_retryable_model_error(a: &Assistant, variant: Flue2Variant) -> bool {
    a.stop_reason == "error"
        && a.error_message
            .is_some_and(|t| !t.is_empty() && is_retryable_error_text(t, variant))
}

/// `countConsecutiveRetryableModelErrors(entries)`: retryable errors back from the end, past
/// compactions, signals and tool results, up to a user message or another assistant.
fn count_consecutive_retryable_model_errors(entries: &[&Entry], variant: Flue2Variant) -> u32 {
    let mut count = 0;
    for e in entries.iter().rev() {
        if matches!(e.body, EntryBody::User { .. }) {
            return count;
        }
        let Some(a) = assistant(e) else { continue };
        if !is_retryable_model_error(&a, variant) {
            return count;
        }
        count += 1;
    }
    count
}

/// `hasAdjacentStreamContinuation`: the two entries right after the aborted assistant are the
/// `stream_interrupted` and `stream_continued` signals.
fn has_adjacent_stream_continuation(following: &[&Entry], ai: usize) -> bool {
    following.get(ai + 1).and_then(|e| signal_type(e)) == Some("stream_interrupted")
        && following.get(ai + 2).and_then(|e| signal_type(e)) == Some("stream_continued")
}

/// `isTerminalTrailingToolBatch`: exactly the last assistant's calls follow it, each a result
/// with the terminate flag (the same in every 2.x).
fn is_terminal_trailing_tool_batch(following: &[&Entry], ai: usize, a: &Assistant) -> bool {
    if a.tool_calls.is_empty() {
        return false;
    }
    let trailing = &following[ai + 1..];
    if trailing.len() != a.tool_calls.len() {
        return false;
    }
    let mut terminated = HashSet::new();
    for e in trailing {
        match tool_result(e) {
            Some((id, true)) => {
                terminated.insert(id);
            }
            _ => return false,
        }
    }
    a.tool_calls
        .iter()
        .all(|c| terminated.contains(c.id.as_str()))
}

/// `findTrailingPartialToolBatch`: the trailing tool batch (optionally followed by an aborted
/// assistant) whose committed results miss a call. Unlike beta.7's, a `stream_continued`
/// elsewhere does not veto it; from 2.0.8 a `stop`/`length` assistant with calls owns a batch too.
pub fn find_trailing_partial_tool_batch(
    following: &[&Entry],
    variant: Flue2Variant,
) -> Option<TrailingPartialBatch> {
    let mut end = following.len();
    let mut trailing_aborted_id = None;
    if let Some(last) = following.last() {
        if assistant(last).is_some_and(|a| a.stop_reason == "aborted") {
            end -= 1;
            trailing_aborted_id = Some(last.id.clone());
        }
    }
    let mut result_ids: HashSet<&str> = HashSet::new();
    let mut result_entry_ids = Vec::new();
    let mut index = end;
    while index > 0 {
        let e = following[index - 1];
        let Some((id, _)) = tool_result(e) else { break };
        result_ids.insert(id);
        result_entry_ids.push(e.id.clone());
        index -= 1;
    }
    if index == 0 {
        return None;
    }
    let owner = following[index - 1];
    let a = assistant(owner)?;
    if !is_tool_batch_assistant(&a, variant) || a.tool_calls.is_empty() {
        return None;
    }
    if a.tool_calls
        .iter()
        .all(|c| result_ids.contains(c.id.as_str()))
    {
        return None;
    }
    result_entry_ids.reverse();
    Some(TrailingPartialBatch {
        entry_id: owner.id.clone(),
        tool_calls: a
            .tool_calls
            .iter()
            .map(|c| BatchCall {
                id: c.id.clone(),
                name: c.name.clone(),
                has_result: result_ids.contains(c.id.as_str()),
            })
            .collect(),
        result_entry_ids,
        trailing_aborted_id,
    })
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
