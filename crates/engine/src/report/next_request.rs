//! The "next request" of a submission or a session: what the runtime's next turn sends to the
//! provider (`turnscope_core::recovery::next_request`), with the recovery writes and the turn
//! taken from the submission's inspection (the reconciler's plan, the classification). The CLI's
//! `next-request` and the TUI's pane print this one document.

use serde_json::{json, Value};

use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::history::History;
use turnscope_core::journal::stream::recovered_partial_message;
use turnscope_core::recovery::classify::{count_consecutive_retryable_model_errors, ResumeMode};
use turnscope_core::recovery::next_request::context::tool_calls;
use turnscope_core::recovery::next_request::{
    self as nr, path, IdNormaliser, Mark, NextRequest, PathItem, RecoveryStep, Source, TargetModel,
    Turn,
};
use turnscope_core::recovery::reconciler::{Disposition, PlannedWrite, RuleResult};
use turnscope_core::recovery::repair::repair_batch;
use turnscope_core::text::sanitize;
use turnscope_store::{Backend, StoreError};

use super::export::{resolve, ResolvedTarget};
use super::SubmissionReport;

/// The runtime's `MAX_TRANSIENT_MODEL_RETRIES` (`src/session.ts`).
const MAX_TRANSIENT_MODEL_RETRIES: u32 = 3;

/// Characters of a message's text the document keeps.
const TEXT_PREVIEW: usize = 240;

/// A next request and what it is the next request of.
#[derive(Debug, Clone)]
pub struct NextRequestReport {
    pub session_key: String,
    pub submission_id: Option<String>,
    pub verdict: Option<String>,
    pub rule: Option<String>,
    /// One line that qualifies the turn (a queued submission waits for earlier ones, …).
    pub note: Option<String>,
    /// Entries on the stored active path.
    pub stored_entries: usize,
    pub request: NextRequest,
}

/// Why the view cannot be built.
#[derive(Debug)]
pub enum NextRequestError {
    Store(StoreError),
    /// The session could not be read whole (a message without its body).
    NotWhole(String),
}

impl From<StoreError> for NextRequestError {
    fn from(e: StoreError) -> Self {
        NextRequestError::Store(e)
    }
}

impl NextRequestReport {
    /// `query`: a session key, a submission id or unique prefix, an instance with one session
    /// (as `export`). Read whole (the full read), as the runtime reads it.
    pub fn load(
        store: &dyn Backend,
        query: &str,
        context_window: Option<u64>,
        now_ms: i64,
        vision: Option<bool>,
    ) -> Result<NextRequestReport, NextRequestError> {
        match resolve(store, query)? {
            ResolvedTarget::Submission(id) => {
                let r = SubmissionReport::load(store, &id, context_window, now_ms)?;
                Self::of_submission(&r, vision)
            }
            ResolvedTarget::Session(key) => {
                let Some(s) = store.load_session(&key)? else {
                    return Err(StoreError::NothingToExport { query: key }.into());
                };
                let h = History::new(s.entries.clone(), s.leaf_id.clone());
                Self::of_session(&key, &h, vision)
            }
        }
    }

    /// A session as it stands: its next input (not known yet) follows the request.
    pub fn of_session(
        key: &str,
        h: &History,
        vision: Option<bool>,
    ) -> Result<NextRequestReport, NextRequestError> {
        let active = h.active_path();
        let stored = stored_path(&active)?;
        let note = (!h.load_blockers().is_empty()).then(|| {
            format!(
                "the runtime cannot load this session ({}): no turn runs until it is repaired",
                h.load_blockers().join("; ")
            )
        });
        Ok(NextRequestReport {
            session_key: key.to_string(),
            submission_id: None,
            verdict: None,
            rule: None,
            note,
            stored_entries: active.len(),
            request: {
                let target = target_of(&stored, vision);
                nr::next_request(stored, vec![], Turn::NextInput, target)
            },
        })
    }

    /// A submission: its recovery writes and the turn its plan leads to.
    pub fn of_submission(
        r: &SubmissionReport,
        vision: Option<bool>,
    ) -> Result<NextRequestReport, NextRequestError> {
        let active = r
            .history
            .as_ref()
            .map(History::active_path)
            .unwrap_or_default();
        let stored = stored_path(&active)?;
        let (recovery, turn, note) = plan_turn(r, &stored);
        let target = target_of(&stored, vision);
        Ok(NextRequestReport {
            session_key: r.row().session_key.clone(),
            submission_id: Some(r.row().submission_id.clone()),
            verdict: Some(r.verdict()),
            rule: Some(r.plan.rule_label()),
            note,
            stored_entries: active.len(),
            request: nr::next_request(stored, recovery, turn, target),
        })
    }

    /// The `turnscope.next-request/1` document.
    pub fn to_json(&self) -> Value {
        let q = &self.request;
        json!({
            "schema": "turnscope.next-request/1",
            "format": super::JOURNAL_FORMAT,
            "sessionKey": self.session_key,
            "submissionId": self.submission_id,
            "verdict": self.verdict,
            "rule": self.rule,
            "turn": q.turn,
            "note": self.note,
            "model": q.target,
            "idNormaliser": q.target.as_ref().map(|t| IdNormaliser::for_api(&t.api)),
            "storedEntries": self.stored_entries,
            "recovery": q.recovery.iter().map(|(w, n)| json!({"write": w, "messages": n})).collect::<Vec<_>>(),
            "messages": q.messages.iter().enumerate().map(|(i, m)| message_json(i, m)).collect::<Vec<_>>(),
            "leftOut": q.left_out.iter().map(|l| json!({
                "entryId": l.entry_id,
                "kind": l.kind,
                "written": l.written,
                "by": l.by,
                "reason": l.reason,
                "why": l.reason.describe(),
                "calls": calls_json(&l.calls),
            })).collect::<Vec<_>>(),
            "hazards": q.hazards.iter().map(|h| json!({
                "kind": h.kind,
                "entryIds": h.entry_ids,
                "calls": calls_json(&h.calls),
                "consequence": h.consequence,
            })).collect::<Vec<_>>(),
        })
    }

    /// The view as lines of text, terminal-safe (the CLI prints them, the TUI shows them).
    pub fn text_lines(&self) -> Vec<String> {
        let q = &self.request;
        let mut out = Vec::new();
        out.push(match &self.submission_id {
            Some(id) => format!(
                "next request of submission {}  (session {})",
                sanitize(id),
                sanitize(&self.session_key)
            ),
            None => format!("next request of session {}", sanitize(&self.session_key)),
        });
        match (&self.verdict, &self.rule) {
            (Some(v), Some(r)) if v != r => {
                out.push(format!("verdict   {}  {}", sanitize(v), sanitize(r)))
            }
            (Some(v), _) => out.push(format!("verdict   {}", sanitize(v))),
            _ => {}
        }
        out.push(format!("turn      {}", turn_text(&q.turn)));
        if let Some(n) = &self.note {
            out.push(format!("note      {}", sanitize(n)));
        }
        out.push(format!(
            "model     {}",
            match &q.target {
                Some(t) => format!(
                    "{} / {} / {}  (taken from the last assistant; vision {}; tool call ids: {})",
                    sanitize(&t.provider),
                    sanitize(&t.api),
                    sanitize(&t.id),
                    match t.vision {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "unknown",
                    },
                    normaliser_text(IdNormaliser::for_api(&t.api))
                ),
                None => "unknown (no assistant names one): nothing renamed, images kept".into(),
            }
        ));
        if !q.recovery.is_empty() {
            let parts: Vec<String> = q
                .recovery
                .iter()
                .map(|(w, n)| format!("{w} ({n} message{})", if *n == 1 { "" } else { "s" }))
                .collect();
            out.push(format!("recovery  written first: {}", parts.join(", ")));
        }
        out.push(String::new());
        out.push(format!(
            "messages sent: {} (the stored active path holds {} entries)",
            q.messages.len(),
            self.stored_entries
        ));
        for (i, m) in q.messages.iter().enumerate() {
            out.push(format!(
                "{i:>4} {:<10} {:<34} {}",
                role_of(&m.message),
                source_text(&m.source),
                summary(&m.message, &m.marks)
            ));
        }
        if !q.left_out.is_empty() {
            out.push(String::new());
            out.push(format!("left out ({})", q.left_out.len()));
            for l in &q.left_out {
                let who = if l.entry_id.is_empty() {
                    match &l.written {
                        Some(w) => format!("(recovery: {})", written_text(w)),
                        None => "-".into(),
                    }
                } else {
                    sanitize(&l.entry_id)
                };
                let calls = if l.calls.is_empty() {
                    String::new()
                } else {
                    format!("  calls: {}", calls_text(&l.calls))
                };
                out.push(format!(
                    "     {who:<12} {:<12} {}{calls}",
                    sanitize(&l.kind),
                    l.reason.describe()
                ));
            }
        }
        out.push(String::new());
        if q.hazards.is_empty() {
            out.push("hazards   none".into());
        } else {
            out.push(format!("hazards ({})", q.hazards.len()));
            for h in &q.hazards {
                let mut about = Vec::new();
                let ids: Vec<&String> = h.entry_ids.iter().filter(|e| !e.is_empty()).collect();
                if !ids.is_empty() {
                    about.push(format!(
                        "entries {}",
                        sanitize(
                            &ids.iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    ));
                }
                if !h.calls.is_empty() {
                    about.push(format!("calls {}", calls_text(&h.calls)));
                }
                let about = if about.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", about.join("; "))
                };
                out.push(format!(
                    "  ‼ {}{about}: {}",
                    h.kind.as_str(),
                    sanitize(&h.consequence)
                ));
            }
        }
        out
    }
}

/// The stored active path as the runtime holds it; every message must have its body.
fn stored_path(active: &[&Entry]) -> Result<Vec<PathItem>, NextRequestError> {
    active
        .iter()
        .map(|e| {
            PathItem::stored(e).ok_or_else(|| {
                NextRequestError::NotWhole(format!("entry {} was read without its body", e.id))
            })
        })
        .collect()
}

/// The model of the last assistant on the path that names provider, api and model.
fn target_of(stored: &[PathItem], vision: Option<bool>) -> Option<TargetModel> {
    stored.iter().rev().find_map(|p| {
        let m = p
            .message()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))?;
        let f = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
        Some(TargetModel {
            provider: f("provider")?,
            api: f("api")?,
            id: f("model")?,
            vision,
        })
    })
}

/// The recovery writes the plan makes before the next turn, the turn, and a note.
fn plan_turn(
    r: &SubmissionReport,
    active: &[PathItem],
) -> (Vec<RecoveryStep>, Turn, Option<String>) {
    let row = r.row();
    let mut steps = Vec::new();
    let mut repaired = false;
    for w in &r.plan.writes {
        match w {
            PlannedWrite::RepairToolCalls { repair } => {
                repaired = true;
                steps.push(repair_step(&repair.assistant_id, &repair.results, active));
            }
            PlannedWrite::RecoverStream {
                stream_key,
                append_partial,
            } => steps.push(RecoveryStep::RecoverStream {
                stream_key: stream_key.clone(),
                partial: append_partial
                    .then(|| recovered_partial_message(&r.bundle.stream_chunks))
                    .flatten(),
            }),
            PlannedWrite::AppendAdvisory { reason, content } => {
                steps.push(RecoveryStep::Advisory {
                    signal: path::advisory_signal(&row.submission_id, &row.kind, reason, content),
                })
            }
            _ => {}
        }
    }
    let state = &r.classification().state;
    let input_missing = r.inspection.input_entry_id.is_none();
    let input_step = || {
        serde_json::from_str::<Value>(&row.payload)
            .ok()
            .and_then(|p| path::input_message(&row.kind, &p))
            .map(|message| RecoveryStep::Input { message })
    };
    let no_call = |reason: String| Turn::NoCall { reason };
    let turn = match (&r.plan.disposition, r.plan.result) {
        (Disposition::Reconcile, Some(RuleResult::Replacement)) => {
            // The fresh attempt's `runPersistedContextInput`: a trailing partial batch the
            // reconciler did not repair is repaired now (`repairTrailingPartialToolBatch`).
            if state.mode() == Some(ResumeMode::ToolResultsPartial) && !repaired {
                if let Some(b) = &r.classification().trailing_partial_batch {
                    let calls = b.requested_calls();
                    let following = r.following().unwrap_or_default();
                    if let Ok(rep) = repair_batch(&following, &b.entry_id, &calls) {
                        steps.push(repair_step(&rep.assistant_id, &rep.results, active));
                    }
                }
            }
            // `runModelTurnWithRecovery`: a retryable error at the end is retried after a
            // back-off only while `countConsecutiveRetryableModelErrors(activePath)` is at most
            // `MAX_TRANSIENT_MODEL_RETRIES`; past it the attempt fails before any model call.
            let retries = r
                .history
                .as_ref()
                .map_or(0, |h| count_consecutive_retryable_model_errors(&h.active_path()));
            if state.mode() == Some(ResumeMode::Overflow) {
                Turn::CompactionFirst
            } else if state.mode() == Some(ResumeMode::TransientRetry)
                && retries > MAX_TRANSIENT_MODEL_RETRIES
            {
                no_call(format!(
                    "{retries} retryable model errors in a row on the active path, more than the runtime's {MAX_TRANSIENT_MODEL_RETRIES} retries: the fresh attempt fails without a model call"
                ))
            } else {
                Turn::Continue
            }
        }
        (Disposition::Reconcile, Some(RuleResult::Requeued)) => {
            if input_missing {
                steps.extend(input_step());
            }
            Turn::Continue
        }
        (Disposition::Pending, _) => {
            if input_missing {
                steps.extend(input_step());
            }
            let note = "queued: the request is this one once the submission is claimed, if no earlier submission of the session runs first (a turn of one adds to the history)";
            return (steps, Turn::Continue, Some(note.into()));
        }
        (Disposition::Live { .. }, _) => no_call(format!(
            "a worker holds the lease and is running the turn ({}): this is the context it started from",
            r.plan.reason
        )),
        _ => no_call(format!(
            "{}: this submission makes no model call; the session's next input starts from this context",
            r.plan.reason
        )),
    };
    (steps, turn, None)
}

fn repair_step(
    assistant_id: &str,
    results: &[turnscope_core::recovery::repair::RepairedResult],
    active: &[PathItem],
) -> RecoveryStep {
    RecoveryStep::RepairBatch {
        assistant_id: assistant_id.to_string(),
        results: results
            .iter()
            .map(|res| match &res.copied_from {
                Some(from) => (
                    active
                        .iter()
                        .find(|p| p.written.is_none() && p.id == from.as_str())
                        .and_then(|p| p.message().cloned())
                        .unwrap_or_else(|| path::interrupted_result(&res.call_id, &res.tool_name)),
                    Some(from.clone()),
                ),
                None => (path::interrupted_result(&res.call_id, &res.tool_name), None),
            })
            .collect(),
    }
}

fn message_json(i: usize, m: &nr::RequestMessage) -> Value {
    let v = &m.message;
    let calls: Vec<Value> = tool_calls(v)
        .into_iter()
        .map(|(id, name)| json!({"id": id, "name": name}))
        .collect();
    json!({
        "index": i,
        "role": role_of(v),
        "source": m.source,
        "toolCalls": calls,
        "toolCallId": v.get("toolCallId"),
        "toolName": v.get("toolName"),
        "stopReason": v.get("stopReason"),
        "isError": v.get("isError"),
        "text": preview(&text_of(v)),
        "marks": m.marks,
    })
}

fn calls_json(calls: &[(String, String)]) -> Vec<Value> {
    calls
        .iter()
        .map(|(id, name)| json!({"id": id, "name": name}))
        .collect()
}

fn role_of(v: &Value) -> String {
    sanitize(v.get("role").and_then(Value::as_str).unwrap_or("?"))
}

fn text_of(v: &Value) -> String {
    match v.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(b)) => b
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(TEXT_PREVIEW).collect();
    if s.chars().count() > TEXT_PREVIEW {
        p.push('…');
    }
    p
}

fn turn_text(t: &Turn) -> String {
    match t {
        Turn::Continue => "continue: the next model call sends the messages below (Agent.continue())".into(),
        Turn::CompactionFirst => "compaction first: the context overflowed; the runtime sends the compaction's summary request, then continues over the compacted context (its summary is not known yet). Below: the context before compaction".into(),
        Turn::NextInput => "the session's next input is appended after the messages below".into(),
        Turn::NoCall { reason } => format!("no model call: {}", sanitize(reason)),
    }
}

fn normaliser_text(n: IdNormaliser) -> &'static str {
    match n {
        IdNormaliser::Sanitise64 => "another model's are sanitised to [a-zA-Z0-9_-], 64 chars",
        IdNormaliser::OpenAiCompletions => {
            "another model's call|item ids keep the call part, 40 chars"
        }
        IdNormaliser::Google => "another model's are sanitised for claude-/gpt-oss- models",
        IdNormaliser::NotPorted => "this provider's own rule (not ported)",
    }
}

fn written_text(w: &nr::Written) -> String {
    match w {
        nr::Written::ToolRepair {
            copied_from: Some(f),
        } => format!("repair, copy of {}", sanitize(f)),
        nr::Written::ToolRepair { copied_from: None } => "repair, interrupted".into(),
        nr::Written::StreamPartial => "stream partial".into(),
        nr::Written::StreamSignal => "stream signal".into(),
        nr::Written::Advisory => "advisory".into(),
        nr::Written::Input => "input at claim".into(),
    }
}

fn source_text(s: &Source) -> String {
    match s {
        Source::Stored { entry_id } => format!("stored {}", sanitize(entry_id)),
        Source::Signal { entry_id } => format!("signal {}", sanitize(entry_id)),
        Source::Summary { entry_id } => format!("summary {}", sanitize(entry_id)),
        Source::Recovery { written } => format!("recovery: {}", written_text(written)),
        Source::Library => "library: synthesised".into(),
    }
}

fn summary(v: &Value, marks: &[Mark]) -> String {
    let mut s = match v.get("role").and_then(Value::as_str) {
        Some("assistant") => {
            let calls = tool_calls(v);
            let stop = v.get("stopReason").and_then(Value::as_str).unwrap_or("?");
            if calls.is_empty() {
                format!("stop={stop} {}", one_line(&text_of(v)))
            } else {
                let list: Vec<(String, String)> =
                    calls.iter().map(|(i, n)| (js(i), js(n))).collect();
                format!("stop={stop} calls: {}", calls_text(&list))
            }
        }
        Some("toolResult") => format!(
            "{} {} ({}) {}",
            if v.get("isError") == Some(&Value::Bool(true)) {
                "✗"
            } else {
                "✓"
            },
            sanitize(&js(v.get("toolName").unwrap_or(&Value::Null))),
            sanitize(&js(v.get("toolCallId").unwrap_or(&Value::Null))),
            one_line(&text_of(v))
        ),
        _ => one_line(&text_of(v)),
    };
    for m in marks {
        s.push_str(&match m {
            Mark::Renamed { from, to } => format!("  [id {} → {}]", sanitize(from), sanitize(to)),
            Mark::ImagesReplaced { count } => format!("  [{count} image(s) replaced]"),
            Mark::ThinkingRewritten { count } => format!("  [{count} thinking block(s) rewritten]"),
            Mark::Synthesised => "  [synthesised by the library]".into(),
        });
    }
    s
}

fn js(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        o => o.to_string(),
    }
}

fn calls_text(calls: &[(String, String)]) -> String {
    calls
        .iter()
        .map(|(id, name)| format!("{}({})", sanitize(name), sanitize(id)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    sanitize(&preview(&flat).chars().take(100).collect::<String>())
}
