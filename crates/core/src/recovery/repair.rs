//! What the runtime's tool-batch repair would write (spec §6.1–6.2), computed without writing.
//!
//! The actions layer turns a `ToolRepair` into rows; the planner and the UI use it to preview.

// foldhash: `wanted` is asked once per tool result after the input (100,000 on a whale).
use foldhash::{HashMap, HashMapExt, HashSet};

use serde::Serialize;

use crate::journal::entry::{Entry, Role};
use crate::journal::submission_rows::RequestedCall;

/// One result of the repaired batch, in call order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepairedResult {
    pub call_id: String,
    pub tool_name: String,
    /// The entry whose message is re-appended verbatim (first recorded result for the call), or
    /// `None` for a synthetic `interrupted` result.
    pub copied_from: Option<String>,
}

/// A complete ordered batch to append after `assistant_id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolRepair {
    pub assistant_id: String,
    pub results: Vec<RepairedResult>,
}

impl ToolRepair {
    pub fn synthetic_count(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.copied_from.is_none())
            .count()
    }
}

/// Why a repair writes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NoRepair {
    InputMissing,
    NoToolUseAssistant,
    BatchComplete,
}

impl NoRepair {
    pub fn describe(&self) -> &'static str {
        match self {
            NoRepair::InputMissing => "the input entry is not on the active path",
            NoRepair::NoToolUseAssistant => {
                "the last assistant after the input did not stop for tool use"
            }
            NoRepair::BatchComplete => "every requested call already has a result",
        }
    }
}

/// `appendRepairedToolResultBatch`'s decision: first recorded result per call id wins; unresolved
/// calls get a synthetic result. `following` is the active path after the input.
pub fn repair_batch(
    following: &[&Entry],
    assistant_id: &str,
    calls: &[RequestedCall],
) -> Result<ToolRepair, NoRepair> {
    // First result per toolCallId, in path order, over all of `following` (not only the tail).
    // Only string ids can match a requested call's id, and only the requested ids are looked
    // up: a map of those few (not of every result: a whale submission has tens of thousands of
    // results after its input) keeps this linear in the path's length without growing with it.
    let mut settled: HashMap<&str, &str> = HashMap::with_capacity(calls.len());
    let wanted: HashSet<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    for e in following {
        if let Some(id) = e
            .message_with_role(&Role::ToolResult)
            .and_then(|m| m.tool_call_id_str())
        {
            if wanted.contains(id) {
                settled.entry(id).or_insert(e.id.as_str());
            }
        }
    }
    let find = |id: &str| settled.get(id).map(|e| e.to_string());
    if calls.iter().all(|c| find(&c.id).is_some()) {
        return Err(NoRepair::BatchComplete);
    }
    Ok(ToolRepair {
        assistant_id: assistant_id.to_string(),
        results: calls
            .iter()
            .map(|c| RepairedResult {
                call_id: c.id.clone(),
                tool_name: c.name.clone(),
                copied_from: find(&c.id),
            })
            .collect(),
    })
}

/// `repairInterruptedToolCalls(input, journal.toolRequest)` (rule 6): the last assistant of
/// `following` must have stopped for tool use; calls come from the journal.
pub fn repair_for_journal(
    following: Option<&[&Entry]>,
    calls: &[RequestedCall],
) -> Result<ToolRepair, NoRepair> {
    let following = following.ok_or(NoRepair::InputMissing)?;
    let last = following
        .iter()
        .rev()
        .find(|e| e.message_with_role(&Role::Assistant).is_some())
        .ok_or(NoRepair::NoToolUseAssistant)?;
    if last.message().and_then(|m| m.stop_reason()) != Some("toolUse") {
        return Err(NoRepair::NoToolUseAssistant);
    }
    repair_batch(following, &last.id, calls)
}
