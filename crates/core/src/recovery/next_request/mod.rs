//! The message list the runtime's next turn sends to the provider, computed from the journal:
//!
//! 1. what the runtime's recovery writes first ([`path`]: the repaired tool batch, the recovered
//!    stream's partial and signals, the advisory, the input it appends at claim);
//! 2. the runtime's own context builder over the active path ([`context`]: it leaves out
//!    incomplete tool batches, error turns and lone aborted turns);
//! 3. the model library's `transformMessages` ([`transform`]: it drops assistants that ended in
//!    error or aborted, synthesises a result for a call without one, renames another model's
//!    tool call ids, replaces images for a model without vision).
//!
//! Every message says where it comes from, every entry of the path that is not sent says who left
//! it out and why, and every hazard is named with its consequence. Pure: the engine reads the
//! journal and says which turn the runtime runs next (`Turn`).

pub mod context;
pub mod path;
pub mod transform;

use serde::Serialize;
use serde_json::Value;

pub use context::{build_context, render_signal, ContextMessage, LeftOut, LeftOutReason, Source};
pub use path::{apply_recovery, ItemBody, PathItem, RecoveryStep, Written};
pub use transform::{
    transform_messages, transform_messages_with, IdNormaliser, Mark, ModelLibrary, RequestMessage,
    TargetModel,
};

use context::{js_text, role, tool_calls};

/// What the runtime does next with the submission (or the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Turn {
    /// `Agent.continue()` over the context: the request below is the next model call.
    Continue,
    /// The context overflowed: the runtime first sends the compaction's summary request, then
    /// continues over the compacted context (whose summary turnscope cannot know). The request
    /// below is the context before compaction.
    CompactionFirst,
    /// A session's next input (not known yet) is appended after the request below.
    NextInput,
    /// No model call for this submission; `reason` says why. The request below is the context
    /// the session's next input starts from.
    NoCall { reason: String },
}

/// The request and everything said about it.
#[derive(Debug, Clone, PartialEq)]
pub struct NextRequest {
    pub turn: Turn,
    pub target: Option<TargetModel>,
    /// The recovery writes, in order, with how many messages each appends.
    pub recovery: Vec<(&'static str, usize)>,
    pub messages: Vec<RequestMessage>,
    pub left_out: Vec<LeftOut>,
    pub hazards: Vec<Hazard>,
}

/// A way the request can go wrong, with its consequence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hazard {
    pub kind: HazardKind,
    /// The entries it is about (stored ids; empty for a message not stored yet).
    pub entry_ids: Vec<String>,
    /// The tool calls it is about: `(id, name)`.
    pub calls: Vec<(String, String)>,
    pub consequence: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum HazardKind {
    /// The runtime keeps an aborted partial before `stream_continued`; the library drops it.
    ContinuationWithoutPartial,
    /// An incomplete tool batch the runtime leaves out: calls issued, never shown to the model.
    UnseenCalls,
    /// Calls recovery answers `interrupted`: the tool may have run.
    InterruptedResults,
    /// Calls the library answers `No result provided`.
    SynthesisedResults,
    /// A tool result whose call is not in the assistant before it.
    OrphanResult,
    /// A tool call id used by more than one call of the request.
    DuplicateCallId,
    /// The request ends with an assistant: `Agent.continue()` refuses it.
    EndsWithAssistant,
    /// Nothing to send: `Agent.continue()` refuses it.
    Empty,
    /// Images sent to a model whose vision turnscope does not know.
    ImagesVisionUnknown,
    /// Another model's calls, for a provider whose id normaliser is not ported.
    IdsMayBeRenamed,
}

impl HazardKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The stored active path, the recovery writes, the turn and the target model → the request.
pub fn next_request(
    stored: Vec<PathItem>,
    recovery: Vec<RecoveryStep>,
    turn: Turn,
    target: Option<TargetModel>,
) -> NextRequest {
    let recovery_counts = recovery.iter().map(|s| (s.label(), appended(s))).collect();
    let path = apply_recovery(stored, &recovery);
    next_request_over_path(
        path,
        recovery_counts,
        turn,
        target,
        ModelLibrary::PiAi0_79_10,
    )
}

/// The request over a path recovery has already been applied to (flue 2.x, whose resume is
/// simulated on the folded conversation): its items written by recovery carry `written`;
/// `recovery` is what the view lists as written first. `library`: the model library the runtime
/// pins.
pub fn next_request_over_path(
    path: Vec<PathItem>,
    recovery: Vec<(&'static str, usize)>,
    turn: Turn,
    target: Option<TargetModel>,
    library: ModelLibrary,
) -> NextRequest {
    let recovery_counts = recovery;
    let (context, mut left_out) = build_context(&path);
    let (messages, dropped) = transform_messages_with(context, target.as_ref(), library);
    left_out.extend(dropped);
    let hazards = hazards(&messages, &left_out, &turn, target.as_ref());
    NextRequest {
        turn,
        target,
        recovery: recovery_counts,
        messages,
        left_out,
        hazards,
    }
}

fn appended(s: &RecoveryStep) -> usize {
    match s {
        RecoveryStep::RepairBatch { results, .. } => results.len(),
        RecoveryStep::RecoverStream { partial, .. } => 2 + usize::from(partial.is_some()),
        RecoveryStep::Advisory { .. } | RecoveryStep::Input { .. } => 1,
    }
}

fn hazards(
    messages: &[RequestMessage],
    left_out: &[LeftOut],
    turn: &Turn,
    target: Option<&TargetModel>,
) -> Vec<Hazard> {
    let mut out = Vec::new();
    let mut push = |kind, entry_ids: Vec<String>, calls, consequence: String| {
        out.push(Hazard {
            kind,
            entry_ids,
            calls,
            consequence,
        })
    };
    for l in left_out {
        match l.reason {
            // Only an aborted partial the runtime kept (before its stream signals) reaches the
            // library; an error turn never does (the runtime drops it first).
            LeftOutReason::LibraryDroppedAssistant => push(
                HazardKind::ContinuationWithoutPartial,
                stored_id(&l.entry_id),
                l.calls.clone(),
                "the model is told to continue its previous answer \"from exactly where it left off\" but never sees the partial: it starts over or makes up a continuation, and what the client already streamed may be said twice or differently".into(),
            ),
            LeftOutReason::IncompleteToolBatch if l.kind == "assistant" && !l.calls.is_empty() => {
                let answered = left_out
                    .iter()
                    .filter(|r| r.kind == "toolResult" && r.reason == LeftOutReason::IncompleteToolBatch)
                    .filter(|r| r.calls.iter().any(|c| l.calls.iter().any(|k| k.0 == c.0)))
                    .count();
                push(
                    HazardKind::UnseenCalls,
                    stored_id(&l.entry_id),
                    l.calls.clone(),
                    format!(
                        "the model never learns these calls were issued ({answered} of {} recorded a result): their side effects may have happened, and it may ask for them again",
                        l.calls.len()
                    ),
                );
            }
            _ => {}
        }
    }
    let calls_of = |pred: &dyn Fn(&RequestMessage) -> bool| -> Vec<(String, String)> {
        messages
            .iter()
            .filter(|m| pred(m))
            .map(|m| {
                (
                    m.message.get("toolCallId").map(js_text).unwrap_or_default(),
                    m.message.get("toolName").map(js_text).unwrap_or_default(),
                )
            })
            .collect()
    };
    let interrupted = calls_of(&|m| {
        matches!(
            &m.source,
            Source::Recovery {
                written: Written::ToolRepair { copied_from: None }
            }
        )
    });
    if !interrupted.is_empty() {
        push(
            HazardKind::InterruptedResults,
            vec![],
            interrupted,
            "recovery answers these calls `interrupted` (outcome unknown): the tools may have run before the crash, and the model may call them again".into(),
        );
    }
    let synthesised = calls_of(&|m| m.source == Source::Library);
    if !synthesised.is_empty() {
        push(
            HazardKind::SynthesisedResults,
            vec![],
            synthesised,
            "the model library answers these calls \"No result provided\" (an error) in the request only, nothing is stored: the model sees them fail though they may have run".into(),
        );
    }
    // Orphan results and duplicate ids, over the request as sent.
    let mut open: Vec<String> = Vec::new();
    // A set: a whale's request holds tens of thousands of calls.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for m in messages {
        match role(&m.message) {
            "assistant" => {
                open.clear();
                for (id, name) in tool_calls(&m.message) {
                    let id = js_text(&id);
                    if seen.contains(&id) {
                        push(
                            HazardKind::DuplicateCallId,
                            source_ids(m),
                            vec![(id.clone(), js_text(&name))],
                            "two calls of the request share this id: providers that pair results by id (Anthropic, OpenAI) reject the request".into(),
                        );
                    }
                    seen.insert(id.clone());
                    open.push(id);
                }
            }
            "toolResult" => {
                let id = m.message.get("toolCallId").map(js_text).unwrap_or_default();
                if !open.contains(&id) {
                    push(
                        HazardKind::OrphanResult,
                        source_ids(m),
                        vec![(id, m.message.get("toolName").map(js_text).unwrap_or_default())],
                        "a tool result whose call is not in the assistant before it: Anthropic rejects the request (tool_result without a matching tool_use), others may".into(),
                    );
                }
            }
            _ => open.clear(),
        }
    }
    if matches!(turn, Turn::Continue | Turn::CompactionFirst) {
        match messages.last() {
            None => push(HazardKind::Empty, vec![], vec![], "nothing to send: Agent.continue() throws \"No messages to continue from\" and the attempt fails".into()),
            Some(m) if role(&m.message) == "assistant" => push(
                HazardKind::EndsWithAssistant,
                source_ids(m),
                vec![],
                "the context ends with an assistant: Agent.continue() throws \"Cannot continue from message role: assistant\" and the attempt fails".into(),
            ),
            _ => {}
        }
    }
    if let Some(t) = target {
        let images: usize = messages
            .iter()
            .map(|m| transform::image_count(&m.message))
            .sum();
        if t.vision.is_none() && images > 0 {
            push(
                HazardKind::ImagesVisionUnknown,
                vec![],
                vec![],
                format!("{images} image(s) are sent; a model without vision gets a placeholder text instead (pass the model's vision to know)"),
            );
        }
        if IdNormaliser::for_api(&t.api) == IdNormaliser::NotPorted {
            let foreign: Vec<(String, String)> = messages
                .iter()
                .filter(|m| role(&m.message) == "assistant" && !same_model(&m.message, t))
                .flat_map(|m| {
                    tool_calls(&m.message)
                        .into_iter()
                        .map(|(i, n)| (js_text(&i), js_text(&n)))
                })
                .collect();
            if !foreign.is_empty() {
                push(
                    HazardKind::IdsMayBeRenamed,
                    vec![],
                    foreign,
                    format!("calls made by another model, sent through api {}: its provider renames ids by a rule turnscope does not port", t.api),
                );
            }
        }
    }
    out
}

/// A stored entry's id as a list; none for a message recovery writes (no id until written).
fn stored_id(id: &str) -> Vec<String> {
    if id.is_empty() {
        vec![]
    } else {
        vec![id.to_string()]
    }
}

fn same_model(m: &Value, t: &TargetModel) -> bool {
    let f = |k: &str| m.get(k).and_then(Value::as_str);
    f("provider") == Some(t.provider.as_str())
        && f("api") == Some(t.api.as_str())
        && f("model") == Some(t.id.as_str())
}

fn source_ids(m: &RequestMessage) -> Vec<String> {
    match &m.source {
        Source::Stored { entry_id }
        | Source::Signal { entry_id }
        | Source::Summary { entry_id } => vec![entry_id.clone()],
        _ => vec![],
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
