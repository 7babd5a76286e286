//! The side-effect ledger: the tool calls a write answers with the runtime's synthetic
//! `interrupted` result. Each may have run (and had its effect: a payment, a mail, a deploy)
//! before the worker died; once answered `interrupted`, the model is told it did not finish and
//! may call it again. An operator sees each call, who issued it and what trace says it started,
//! and acknowledges them before such a write is applied.
//!
//! Computed from the plan's own rows (every `InsertEntry` of a synthetic result), so `repair`,
//! `reconcile`, `step` and a bulk apply of any of them list exactly the calls they answer.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::report::SubmissionReport;
use turnscope_core::journal::entry::{Entry, Role};
use turnscope_core::journal::status::JournalPhase;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::runtime_text::INTERRUPTED_TEXT;

/// One tool call that may have run, answered `interrupted` by the write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MayHaveRun {
    pub call_id: String,
    pub tool: String,
    /// The call's `arguments` as compact JSON, or `None` when the assistant entry was not found
    /// (or read without them).
    pub arguments: Option<String>,
    /// The assistant entry that requested it.
    pub requested_by: Option<String>,
    /// The attempt that issued it and where that is known from.
    pub attempt_id: Option<String>,
    pub attempt_source: &'static str,
    /// The worker (`owner_id`) that held that attempt, when the attempt is the row's current one.
    pub worker: Option<String>,
    /// What in the journal says the call was reached (never a claim that it ran: beta.7 writes
    /// nothing between a tool's start and its result).
    pub trace: String,
}

/// The calls `changes` answer with a synthetic `interrupted` result, in the order written.
///
/// Linear in the calls and the path: a 10,000-call batch is looked up once, not once per call.
pub fn side_effects(r: &SubmissionReport, changes: &[RowChange]) -> Vec<MayHaveRun> {
    let answered: Vec<(String, String)> = changes
        .iter()
        .filter_map(|c| match c {
            RowChange::InsertEntry {
                entry_id,
                position,
                data,
                ..
            } => synthetic_call(&Entry::parse(*position, entry_id, data)),
            _ => None,
        })
        .collect();
    if answered.is_empty() {
        return Vec::new();
    }
    let row = r.row();
    // The assistants that asked for them: the newest on the active path holding each id, and the
    // arguments from their stored text (each entry parsed once).
    let mut wanted: HashSet<&str> = answered.iter().map(|(id, _)| id.as_str()).collect();
    let mut owners: HashMap<String, (String, Option<String>)> = HashMap::new();
    if let Some(h) = &r.history {
        for e in h.active_path().into_iter().rev() {
            if wanted.is_empty() {
                break;
            }
            let Some(m) = e.message_with_role(&Role::Assistant) else {
                continue;
            };
            let calls = m.tool_calls();
            if !calls.iter().any(|c| wanted.contains(c.id_text().as_str())) {
                continue;
            }
            let mut arguments = stored_arguments(e);
            for c in calls {
                let id = c.id_text();
                if wanted.remove(id.as_str()) {
                    let args = arguments.remove(&id);
                    owners.insert(id, (e.id.to_string(), args));
                }
            }
        }
    }
    let journal = r
        .bundle
        .journal
        .as_ref()
        .filter(|j| j.phase == JournalPhase::ToolRequestRecorded);
    let journaled: HashSet<String> = journal
        .and_then(|j| j.tool_request().ok().flatten())
        .map(|calls| calls.into_iter().map(|c| c.id).collect())
        .unwrap_or_default();
    let batch = r.classification().trailing_partial_batch.as_ref();
    let batch_ids: HashSet<&str> = batch
        .map(|b| b.tool_calls.iter().map(|c| c.id.as_str()).collect())
        .unwrap_or_default();
    let batch_done = batch.map_or(0, |b| b.tool_calls.iter().filter(|c| c.has_result).count());
    let batch_len = batch.map_or(0, |b| b.tool_calls.len());
    answered
        .into_iter()
        .map(|(call_id, tool)| {
            let in_journal = journal.filter(|_| journaled.contains(&call_id));
            let (attempt_id, attempt_source) = match in_journal {
                Some(j) => (Some(j.attempt_id.clone()), "turn journal"),
                None => (
                    row.attempt_id.clone(),
                    "submission row (the journal does not name the call)",
                ),
            };
            let worker = row
                .owner_id
                .clone()
                .filter(|_| attempt_id.is_some() && attempt_id == row.attempt_id);
            let mut traces = Vec::new();
            if in_journal.is_some() {
                traces.push(
                    "the turn journal recorded the request (tool_request_recorded): tools run after that write"
                        .to_string(),
                );
            }
            if batch_done > 0 && batch_ids.contains(call_id.as_str()) {
                traces.push(format!(
                    "{batch_done} of {batch_len} calls of its batch have results: the batch was executing"
                ));
            }
            if traces.is_empty() {
                traces.push(
                    "no trace either way: the journal records nothing between a tool's start and its result"
                        .into(),
                );
            }
            let (requested_by, arguments) = match owners.remove(&call_id) {
                Some((entry, args)) => (Some(entry), args),
                None => (None, None),
            };
            MayHaveRun {
                call_id,
                tool,
                arguments,
                requested_by,
                attempt_id,
                attempt_source,
                worker,
                trace: traces.join("; "),
            }
        })
        .collect()
}

/// The `arguments` of every tool call in the stored text of assistant entry `e`, by call id, as
/// compact JSON. The write path reads messages compact (arguments skipped) beside their stored
/// text, so they come from that text.
fn stored_arguments(e: &Entry) -> HashMap<String, String> {
    let Some(v) = e.json() else {
        return HashMap::new();
    };
    let Some(content) = v
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_array())
    else {
        return HashMap::new();
    };
    content
        .iter()
        .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("toolCall"))
        .filter_map(|b| {
            let id = b.get("id")?.as_str()?.to_string();
            Some((id, b.get("arguments")?.to_string()))
        })
        .collect()
}

/// `(toolCallId, toolName)` of a synthetic interrupted result entry.
fn synthetic_call(e: &Entry) -> Option<(String, String)> {
    let m = e.message_with_role(&Role::ToolResult)?;
    if !m.is_error() || m.text() != INTERRUPTED_TEXT {
        return None;
    }
    Some((
        m.tool_call_id_str()?.to_string(),
        m.tool_name().unwrap_or("").to_string(),
    ))
}
