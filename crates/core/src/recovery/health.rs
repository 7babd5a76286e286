//! Session health: what on a session's active path the next turn will not send as stored.
//!
//! The next request is made in two steps (the runtime's `buildContextEntries`, then pi-ai's
//! `transformMessages` inside its providers). This module walks the active path the way the
//! first step does (`pathToContextEntries`, in the segments a compaction leaves) and names each
//! place where the stored history and what the model is sent part ways, with what it does to the
//! next turn:
//!
//! - a tool batch without a result for every call ([`Hazard::UnresolvedCalls`]): the runtime
//!   leaves the assistant and its recorded results out, so the model never learns the calls
//!   were issued, though they may have run;
//! - a batch whose results are all there but not in call order, or under another tool name
//!   ([`Hazard::MismatchedBatch`]): left out the same way;
//! - a tool result that follows no call of its own ([`Hazard::OrphanedResult`]): dropped;
//! - a tool-call id used twice ([`Hazard::DuplicateCallId`]): inside one batch the runtime drops
//!   the batch, across batches the request carries the id twice;
//! - an assistant without a stop reason the runtime writes ([`Hazard::InProgressAssistant`]), or
//!   with nothing in it ([`Hazard::EmptyAssistant`]): sent as stored;
//! - an aborted partial kept before its `stream_interrupted`/`stream_continued` signals
//!   ([`Hazard::DroppedPartial`]): the runtime keeps it, pi-ai drops it, and the model is asked to
//!   continue an answer it never sees;
//! - a history the runtime cannot load or the classifier cannot read ([`Hazard::Unreadable`]).
//!
//! Pure: the caller hands in the active path (compact entries are fine) and reads what a compact
//! entry does not hold (a call's arguments, whether an assistant's content is empty) itself.

use serde::Serialize;
use serde_json::Value;

use crate::journal::entry::{Entry, EntryBody, Message, Role};
use crate::journal::history::{History, PathDamage};

/// A tool call of a batch: id, tool and, where the entry was read whole, its arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRef {
    pub id: String,
    pub name: String,
    /// `None` where the entry was read compactly (the caller fills it in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// One entry of the path a finding points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct At {
    pub entry: String,
    pub position: i64,
}

impl At {
    fn of(e: &Entry) -> At {
        At {
            entry: e.id.to_string(),
            position: e.position,
        }
    }
}

/// What is wrong, in turnscope's own words (the JSON `kind`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Hazard {
    /// An assistant that stopped for tool use, some of whose calls have no result in the run of
    /// results after it.
    UnresolvedCalls {
        assistant: At,
        /// Every call of the batch, in content order.
        calls: Vec<CallRef>,
        /// The ids of the calls without a result.
        missing: Vec<String>,
        /// Results recorded right after the assistant.
        recorded: usize,
        /// Nothing follows the batch on the active path: the runtime's repair can still
        /// complete it in place.
        at_leaf: bool,
        /// Entries after the batch on the active path.
        later_entries: usize,
        /// Model turns among them (assistants that did not abort): turns built from the history
        /// without this batch.
        later_turns: usize,
        /// What follows the batch when no model turn does (the runtime's own entries, such as
        /// its failure signal), one label per entry in path order; empty otherwise.
        followed_by: Vec<String>,
        /// The classifier's trailing partial batch (`findTrailingPartialToolBatch`): at the leaf,
        /// or followed only by one aborted assistant, which the runtime's resume repairs behind.
        trailing: bool,
    },
    /// Every call has a result right after the assistant, but not in call order, under another
    /// tool name, or with extra results.
    MismatchedBatch {
        assistant: At,
        calls: Vec<CallRef>,
        why: String,
    },
    /// A tool result that does not follow a call of its own.
    OrphanedResult {
        at: At,
        call_id: Option<String>,
        tool_name: Option<String>,
    },
    /// The same tool-call id on two calls of the active path.
    DuplicateCallId {
        call_id: String,
        /// The assistants holding it, in path order.
        assistants: Vec<At>,
        same_batch: bool,
    },
    /// An assistant whose `stopReason` is none the runtime writes (missing: never finished).
    InProgressAssistant { at: At, stop_reason: Option<String> },
    /// An assistant that answered with no content at all (no text, no tool call, no thinking).
    EmptyAssistant { at: At },
    /// An aborted partial the runtime keeps before `stream_interrupted` and `stream_continued`.
    DroppedPartial {
        partial: At,
        continued: At,
        /// Characters of text the partial holds (what the model does not see).
        partial_chars: usize,
    },
    /// The runtime cannot load the session, or the classifier cannot read its path.
    Unreadable { what: String },
    /// A row whose text is not valid UTF-8: the runtime reads it with U+FFFD in its place.
    NotUtf8 { what: String },
}

impl Hazard {
    /// The JSON `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Hazard::UnresolvedCalls { .. } => "unresolved_calls",
            Hazard::MismatchedBatch { .. } => "mismatched_batch",
            Hazard::OrphanedResult { .. } => "orphaned_result",
            Hazard::DuplicateCallId { .. } => "duplicate_call_id",
            Hazard::InProgressAssistant { .. } => "in_progress_assistant",
            Hazard::EmptyAssistant { .. } => "empty_assistant",
            Hazard::DroppedPartial { .. } => "dropped_partial",
            Hazard::Unreadable { .. } => "unreadable",
            Hazard::NotUtf8 { .. } => "not_utf8",
        }
    }

    /// Every kind, in the order findings are listed.
    pub const KINDS: [&'static str; 9] = [
        "unreadable",
        "not_utf8",
        "unresolved_calls",
        "mismatched_batch",
        "orphaned_result",
        "duplicate_call_id",
        "in_progress_assistant",
        "empty_assistant",
        "dropped_partial",
    ];

    /// Where on the path it is (the first entry it names), for ordering.
    pub fn position(&self) -> i64 {
        match self {
            Hazard::UnresolvedCalls { assistant, .. }
            | Hazard::MismatchedBatch { assistant, .. } => assistant.position,
            Hazard::OrphanedResult { at, .. }
            | Hazard::InProgressAssistant { at, .. }
            | Hazard::EmptyAssistant { at } => at.position,
            Hazard::DuplicateCallId { assistants, .. } => {
                assistants.first().map_or(-1, |a| a.position)
            }
            Hazard::DroppedPartial { partial, .. } => partial.position,
            Hazard::Unreadable { .. } | Hazard::NotUtf8 { .. } => -1,
        }
    }

    /// What it does to the next turn, in one sentence (the calls and ids are in the fields).
    pub fn effect(&self) -> String {
        match self {
            Hazard::UnresolvedCalls {
                calls, missing, recorded, ..
            } => format!(
                "the runtime's context builder leaves the whole batch out ({} call{}, {recorded} recorded result{}): \
                 the model is never told these calls were issued, though {} of them may have run",
                calls.len(),
                plural(calls.len()),
                plural(*recorded),
                missing.len()
            ),
            Hazard::MismatchedBatch { .. } => {
                "the runtime's context builder leaves the whole batch out (its results must follow in call order, \
                 one per call, under the call's tool name): the model never sees these calls or their results"
                    .into()
            }
            Hazard::OrphanedResult { .. } => {
                "the runtime's context builder drops a result that does not follow its call: the model never sees it"
                    .into()
            }
            Hazard::DuplicateCallId { same_batch: true, .. } => {
                "the runtime's context builder leaves a batch with a repeated call id out: the model never sees it"
                    .into()
            }
            Hazard::DuplicateCallId { .. } => {
                "both calls are sent: the request carries the same tool-call id twice, which a provider that \
                 requires unique ids rejects"
                    .into()
            }
            Hazard::InProgressAssistant { .. } => {
                "sent as stored: neither the runtime nor pi-ai drops an assistant that did not end in error or \
                 aborted, so the model sees a turn that never finished"
                    .into()
            }
            Hazard::EmptyAssistant { .. } => {
                "sent as stored: an assistant message with empty content, which a provider that requires \
                 content rejects"
                    .into()
            }
            Hazard::DroppedPartial { partial_chars, .. } => format!(
                "the runtime keeps the aborted partial, pi-ai's transformMessages drops it (stopReason aborted): \
                 the model is asked to continue \"from exactly where it left off\" without seeing the {partial_chars} \
                 character{} it had written",
                plural(*partial_chars)
            ),
            Hazard::Unreadable { .. } => {
                "the runtime cannot build the next request from this history (its load or its classifier fails)"
                    .into()
            }
            Hazard::NotUtf8 { .. } => {
                "the runtime reads the row with U+FFFD in place of each byte sequence that is not UTF-8, and \
                 builds the next request from that text (turnscope shows it the same way, and writes nothing to \
                 this session)"
                    .into()
            }
        }
    }
}

/// What an entry after an unresolved batch is, when no model turn follows it: the runtime's
/// failure signal, another signal, an aborted assistant.
fn later_label(e: &Entry) -> String {
    match e.message() {
        Some(m) if m.role == Role::Signal => match m.signal_type() {
            Some("submission_interrupted") => "its failure signal (submission_interrupted)".into(),
            Some(t) => format!("a {t} signal"),
            None => "a signal".into(),
        },
        Some(m) if m.role == Role::Assistant && m.stop_reason() == Some("aborted") => {
            "an aborted assistant".into()
        }
        _ => format!("an entry ({})", e.kind_label()),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// One finding: the hazard and the submission whose turn left it (the last input marker at or
/// before it on the active path).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    #[serde(flatten)]
    pub hazard: Hazard,
    /// The submission whose input precedes it on the path (`None` before any input).
    pub submission: Option<String>,
}

/// An assistant read compactly whose content may be empty: the caller reads it whole and asks
/// [`is_empty_assistant`].
pub fn may_be_empty(m: &Message) -> bool {
    if m.role != Role::Assistant || !m.tool_calls().is_empty() {
        return false;
    }
    match m.compact() {
        Some(c) => c.preview_dropped() || c.text.is_empty(),
        None => is_empty_assistant(m),
    }
}

/// A whole assistant message with nothing in it: `content` an empty array, or only text and
/// thinking blocks whose text is empty. Compact messages answer `false` (see [`may_be_empty`]).
pub fn is_empty_assistant(m: &Message) -> bool {
    if m.role != Role::Assistant || m.compact().is_some() {
        return false;
    }
    match m.value().get("content") {
        Some(Value::Array(blocks)) => {
            blocks
                .iter()
                .all(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => b.get("text").and_then(Value::as_str) == Some(""),
                    Some("thinking") => {
                        b.get("thinking").and_then(Value::as_str) == Some("")
                            && b.get("thinkingSignature").is_none()
                            && b.get("redacted").is_none()
                    }
                    _ => false,
                })
        }
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

/// The stop reasons the runtime writes.
const STOP_REASONS: [&str; 5] = ["stop", "length", "toolUse", "error", "aborted"];

/// Damage that keeps the runtime from loading the session, or the classifier from reading the
/// path: malformed entries, a cycle, a leaf or parent that names no entry, messages without a
/// role, and problems of the session's data.
pub fn unreadable(history: &History, data_problems: &[String]) -> Vec<Finding> {
    let mut what: Vec<String> = data_problems.to_vec();
    what.extend(history.load_blockers());
    for d in &history.damage {
        if !matches!(d, PathDamage::Cycle { .. }) {
            what.push(d.to_string());
        }
    }
    for &i in history.active_indexes() {
        let e = &history.entries[i];
        if let Some(m) = e.message() {
            if m.role == Role::Missing {
                what.push(format!(
                    "entry {} at position {} is a message without a role",
                    e.id, e.position
                ));
            }
        }
    }
    what.into_iter()
        .map(|what| Finding {
            hazard: Hazard::Unreadable { what },
            submission: None,
        })
        .collect()
}

/// The ranges of `path` the runtime's context is built from (`buildContextEntries`), each walked
/// on its own: with a compaction the kept part before the latest one and all after it, without
/// one nothing and the whole path.
pub fn context_segments(path: &[&Entry]) -> [std::ops::Range<usize>; 2] {
    let latest = path
        .iter()
        .rposition(|e| matches!(e.body, EntryBody::Compaction(_)));
    let Some(c) = latest else {
        return [0..0, 0..path.len()];
    };
    let first_kept = match &path[c].body {
        EntryBody::Compaction(comp) => comp.first_kept_entry_id.as_deref(),
        _ => None,
    };
    let kept = first_kept
        .and_then(|id| path.iter().position(|e| e.id == id))
        .unwrap_or(c + 1);
    [kept..c.max(kept), c + 1..path.len()]
}

fn calls_of(m: &Message) -> Vec<CallRef> {
    let whole = m.compact().is_none();
    m.tool_calls()
        .into_iter()
        .map(|c| CallRef {
            id: c.id_text(),
            name: c.name.clone(),
            arguments: whole.then_some(c.arguments),
        })
        .collect()
}

/// A call id as JavaScript's `===` compares it: strings, numbers, booleans and null by value;
/// `undefined`, objects and arrays never equal anything.
fn same_id(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if !x.is_object() && !x.is_array() => x == y,
        _ => false,
    }
}

/// The findings of an active path (root first), as the runtime's context builder walks it.
/// `empty(e)` says whether an assistant entry the path holds compactly has empty content (the
/// caller reads it whole); it is only asked where [`may_be_empty`] holds.
pub fn scan_path(path: &[&Entry], empty: &mut dyn FnMut(&Entry) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    // The submission each entry belongs to: the last input marker at or before it.
    let mut owner: Vec<Option<String>> = Vec::with_capacity(path.len());
    let mut current: Option<String> = None;
    for e in path {
        if let Some(m) = e.message() {
            let mk = m.markers();
            if let Some(id) = mk.dispatch_id.as_ref().or(mk.direct_submission_id.as_ref()) {
                current = Some(id.clone());
            }
        }
        owner.push(current.clone());
    }
    let mut push = |hazard: Hazard, i: usize| {
        out.push(Finding {
            hazard,
            submission: owner.get(i).cloned().flatten(),
        })
    };
    // Duplicate call ids over the whole context: (id → first assistant index).
    let mut seen_calls: std::collections::HashMap<String, usize> = Default::default();
    let mut duplicates: Vec<(String, Vec<usize>, bool)> = Vec::new();
    for range in context_segments(path) {
        let seg = &path[range.clone()];
        let base = range.start;
        let mut i = 0;
        while i < seg.len() {
            let e = seg[i];
            let Some(m) = e.message() else {
                i += 1;
                continue;
            };
            match m.role {
                Role::Assistant => {
                    let stop = m.stop_reason();
                    if matches!(stop, Some("error" | "aborted")) {
                        let kept = stop == Some("aborted")
                            && signal_at(seg, i + 1, "stream_interrupted")
                            && signal_at(seg, i + 2, "stream_continued");
                        if !kept {
                            i += 1;
                            continue;
                        }
                        push(
                            Hazard::DroppedPartial {
                                partial: At::of(e),
                                continued: At::of(seg[i + 2]),
                                partial_chars: m.text_if_read().map_or(0, |t| t.chars().count()),
                            },
                            base + i,
                        );
                    } else if !stop.is_some_and(|s| STOP_REASONS.contains(&s)) {
                        push(
                            Hazard::InProgressAssistant {
                                at: At::of(e),
                                stop_reason: m.stop_reason_value().map(|v| match v {
                                    Value::String(s) => s.clone(),
                                    other => other.to_string(),
                                }),
                            },
                            base + i,
                        );
                    }
                    let calls = m.tool_calls();
                    if calls.is_empty() {
                        if may_be_empty(m) && (m.compact().is_none() || empty(e)) {
                            push(Hazard::EmptyAssistant { at: At::of(e) }, base + i);
                        }
                        i += 1;
                        continue;
                    }
                    // The run of results right after it.
                    let mut j = i + 1;
                    while j < seg.len() && seg[j].message_with_role(&Role::ToolResult).is_some() {
                        j += 1;
                    }
                    let results = &seg[i + 1..j];
                    // A kept aborted partial with calls: its results never follow (signals do).
                    let dropped_anyway = matches!(stop, Some("error" | "aborted"));
                    let mut batch_ids: Vec<&Option<Value>> = Vec::new();
                    let mut repeated_in_batch = false;
                    for c in &calls {
                        if batch_ids.iter().any(|b| same_id(b, &c.id)) {
                            repeated_in_batch = true;
                        }
                        batch_ids.push(&c.id);
                    }
                    for c in &calls {
                        let id = c.id_text();
                        match seen_calls.get(&id) {
                            Some(&first) => {
                                let same = first == base + i;
                                match duplicates.iter_mut().find(|(d, _, _)| *d == id) {
                                    Some((_, at, s)) => {
                                        if !at.contains(&(base + i)) {
                                            at.push(base + i);
                                        }
                                        *s |= same;
                                    }
                                    None => {
                                        let mut at = vec![first];
                                        if !same {
                                            at.push(base + i);
                                        }
                                        duplicates.push((id, at, same));
                                    }
                                }
                            }
                            None => {
                                seen_calls.insert(id, base + i);
                            }
                        }
                    }
                    if !dropped_anyway {
                        let answered = |c: &crate::journal::entry::ToolCall| {
                            results.iter().any(|r| {
                                r.message()
                                    .is_some_and(|rm| same_id(&rm.tool_call_id(), &c.id))
                            })
                        };
                        let missing: Vec<String> = calls
                            .iter()
                            .filter(|c| !answered(c))
                            .map(|c| c.id_text())
                            .collect();
                        if !missing.is_empty() {
                            let end = base + j;
                            let aborted_after = end + 1 == path.len()
                                && path[end]
                                    .message_with_role(&Role::Assistant)
                                    .is_some_and(|a| a.stop_reason() == Some("aborted"));
                            let later = &path[end..];
                            let later_turns = later
                                .iter()
                                .filter(|l| {
                                    l.message_with_role(&Role::Assistant)
                                        .is_some_and(|a| a.stop_reason() != Some("aborted"))
                                })
                                .count();
                            let followed_by = if later_turns == 0 {
                                later.iter().map(|l| later_label(l)).collect()
                            } else {
                                Vec::new()
                            };
                            push(
                                Hazard::UnresolvedCalls {
                                    assistant: At::of(e),
                                    calls: calls_of(m),
                                    missing,
                                    recorded: results.len(),
                                    at_leaf: end == path.len(),
                                    later_entries: path.len() - end,
                                    later_turns,
                                    followed_by,
                                    trailing: end == path.len() || aborted_after,
                                },
                                base + i,
                            );
                        } else if !repeated_in_batch {
                            if let Some(why) = mismatch(&calls, results) {
                                push(
                                    Hazard::MismatchedBatch {
                                        assistant: At::of(e),
                                        calls: calls_of(m),
                                        why,
                                    },
                                    base + i,
                                );
                            }
                        }
                    }
                    // Results that answer no call of this batch are strays.
                    for (k, r) in results.iter().enumerate() {
                        let rm = r.message().expect("a tool result");
                        if !calls.iter().any(|c| same_id(&rm.tool_call_id(), &c.id)) {
                            push(orphan(r, rm), base + i + 1 + k);
                        }
                    }
                    i = j;
                }
                Role::ToolResult => {
                    push(orphan(e, m), base + i);
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }
    for (id, at, same_batch) in duplicates {
        let first = at[0];
        push(
            Hazard::DuplicateCallId {
                call_id: id,
                assistants: at.iter().map(|&k| At::of(path[k])).collect(),
                same_batch,
            },
            first,
        );
    }
    out.sort_by_key(|f| f.hazard.position());
    out
}

fn orphan(e: &Entry, m: &Message) -> Hazard {
    Hazard::OrphanedResult {
        at: At::of(e),
        call_id: m.tool_call_id().map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        }),
        tool_name: m.tool_name().map(str::to_string),
    }
}

fn signal_at(seg: &[&Entry], i: usize, kind: &str) -> bool {
    seg.get(i)
        .and_then(|e| e.message_with_role(&Role::Signal))
        .is_some_and(|m| m.signal_type() == Some(kind))
}

/// Why a batch every call of which has a result is still incomplete to the runtime
/// (`isCompleteToolResultBatch`): results in call order, one per call, same tool name.
fn mismatch(calls: &[crate::journal::entry::ToolCall], results: &[&Entry]) -> Option<String> {
    if calls.len() != results.len() {
        return Some(format!(
            "{} calls but {} results follow",
            calls.len(),
            results.len()
        ));
    }
    for (k, (c, r)) in calls.iter().zip(results).enumerate() {
        let rm = r.message()?;
        if !same_id(&rm.tool_call_id(), &c.id) {
            return Some(format!(
                "result {} answers call {} where call {} ({}) was expected",
                k + 1,
                rm.tool_call_id_str().unwrap_or("?"),
                c.id_text(),
                c.name
            ));
        }
        if rm.tool_name() != Some(c.name.as_str()) {
            return Some(format!(
                "result {} for call {} names tool {} where the call named {}",
                k + 1,
                c.id_text(),
                rm.tool_name().unwrap_or("(none)"),
                c.name
            ));
        }
    }
    None
}

/// Every finding of a session: what keeps it from being read, its rows that are not UTF-8
/// (`not_utf8`, `SessionRecord`'s), then the path's.
pub fn session_findings(
    history: &History,
    data_problems: &[String],
    not_utf8: &[String],
    empty: &mut dyn FnMut(&Entry) -> bool,
) -> Vec<Finding> {
    let mut out = unreadable(history, data_problems);
    out.extend(not_utf8.iter().map(|what| Finding {
        hazard: Hazard::NotUtf8 { what: what.clone() },
        submission: None,
    }));
    let path = history.active_path();
    out.extend(scan_path(&path, empty));
    out
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;
