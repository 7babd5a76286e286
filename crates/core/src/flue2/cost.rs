//! What a flue 2.x submission's turns cost, and the attempts that made them, from its records.
//!
//! 2.x records carry what beta.7's journal lacked: every record a submission's attempt appends
//! names the submission and the attempt (`submissionId`, `attemptId`, `canonicalEnvelope`,
//! CSS:1213), and every completed assistant message stores its `usage` (pi-ai's, with `cost`).
//!
//! * [`submission_cost`]: the stored `usage` of every committed assistant entry the submission
//!   (or a delivery joined into it) wrote, wherever it is: on the active path, off it
//!   (abandoned), and the aborted partials apart (a converged ghost's usage is the zeros the
//!   runtime writes). In-progress messages have no usage yet and are counted apart. Summed field
//!   by field as the runtime's `addUsage` sums (DSP:1433).
//! * [`AttemptLog`]: each attempt's records as the stream holds them, in append order: when it
//!   first and last wrote, how far it got (a provider call started, tool calls requested, k of n
//!   outcomes recorded, committed, a message completed and how, a recovery record), and the
//!   usage of the messages it completed.
//!
//! Pure: the conversation and the records are parameters.

use serde::Serialize;
use serde_json::Value;

use super::records::{Body, JsonText, Record};
use super::state::{Conversation, Entry, EntryBody};
use crate::journal::cost::UsageSum;

/// `usage` as [`UsageSum::add`] takes it: the five token counts and `cost.total` (NaN where
/// missing), `None` when `usage` is not an object.
///
/// The object's keys are read in one pass, not looked up: six SipHash lookups per assistant
/// were about a sixth of what a whale's `show` does after its fold (`perf`; a `usage` has a
/// handful of keys).
pub fn usage_figures(usage: Option<&Value>) -> Option<[f64; 6]> {
    let u = usage?.as_object()?;
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let mut out = [f64::NAN; 6];
    for (k, v) in u {
        match k.as_str() {
            "input" => out[0] = num(v),
            "output" => out[1] = num(v),
            "cacheRead" => out[2] = num(v),
            "cacheWrite" => out[3] = num(v),
            "totalTokens" => out[4] = num(v),
            "cost" => out[5] = v.get("total").map_or(f64::NAN, num),
            _ => {}
        }
    }
    Some(out)
}

/// What a submission's turns cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flue2Cost {
    /// Assistants on the active path, aborted partials excepted.
    pub active: UsageSum,
    /// Assistants off the active path, aborted partials excepted.
    pub abandoned: UsageSum,
    /// Assistants that ended `aborted`, wherever they are.
    pub aborted: UsageSum,
    /// Assistant messages still in progress: no usage stored yet, not in the sums.
    pub in_progress: u32,
}

impl Flue2Cost {
    pub fn total(&self) -> UsageSum {
        self.active.plus(&self.abandoned).plus(&self.aborted)
    }
}

/// The cost of the entries `owners` (a submission and the deliveries joined into it) wrote in
/// `conv`.
pub fn submission_cost(conv: &Conversation, owners: &[&str]) -> Flue2Cost {
    let owned = |s: &Option<String>| s.as_deref().is_some_and(|s| owners.contains(&s));
    // The path's entries by address (they are the map's own): no id hashed again, a whale's
    // 100,000 entries looked up.
    let on_path: foldhash::HashSet<*const Entry> = conv
        .active_path()
        .map(|p| p.into_iter().map(std::ptr::from_ref).collect())
        .unwrap_or_default();
    let mut cost = Flue2Cost::default();
    for e in conv.all_entries() {
        if !owned(&e.submission_id) {
            continue;
        }
        if let EntryBody::Assistant {
            stop_reason, usage, ..
        } = &e.body
        {
            let figures = usage_figures(usage.as_ref().map(JsonText::value));
            if stop_reason == "aborted" {
                cost.aborted.add(figures);
            } else if on_path.contains(&std::ptr::from_ref(e)) {
                cost.active.add(figures);
            } else {
                cost.abandoned.add(figures);
            }
        }
    }
    cost.in_progress = conv
        .in_progress
        .iter()
        .filter(|m| owned(&m.submission_id))
        .count() as u32;
    cost
}

/// One attempt of a submission, as its records show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flue2Attempt {
    pub attempt_id: String,
    /// The first and last record's `timestamp` (ISO text, as stored).
    pub first_record_at: String,
    pub last_record_at: String,
    pub records: u32,
    /// The input entry appended by this attempt.
    pub input_appended: bool,
    /// `assistant_message_started` records: provider calls begun.
    pub provider_started: u32,
    /// Assistant messages completed, by stop reason, in order.
    pub completed: Vec<String>,
    /// Tool calls requested (`assistant_tool_call`).
    pub tool_calls: u32,
    /// Tool outcomes recorded (`tool_outcome`), repair markers included.
    pub outcomes: u32,
    /// `tool_results_committed` records.
    pub commits: u32,
    /// Started messages this attempt never completed (ghosts it left).
    pub unfinished: u32,
    /// Signal types it appended (`stream_interrupted`, `submission_interrupted`, …).
    pub signals: Vec<String>,
    /// Whether it appended the `submission_settled` record.
    pub settled: bool,
    /// The usage of the messages it completed.
    pub usage: UsageSum,
}

/// A submission's attempts, built record by record in stream order ([`AttemptLog::push`]).
#[derive(Debug, Clone, Default)]
pub struct AttemptLog {
    submission: String,
    attempts: Vec<Flue2Attempt>,
    by_id: foldhash::HashMap<String, usize>,
    /// Messages started and not completed, with the attempt that started them.
    open: foldhash::HashMap<String, usize>,
}

impl AttemptLog {
    pub fn new(submission_id: &str) -> AttemptLog {
        AttemptLog {
            submission: submission_id.to_string(),
            ..AttemptLog::default()
        }
    }

    /// Take one record of the stream (in append order); records of other submissions or
    /// without an attempt are skipped.
    pub fn push(&mut self, r: &Record) {
        let env = &r.envelope;
        if env.submission_id.as_deref() != Some(self.submission.as_str()) {
            return;
        }
        let Some(attempt) = env.attempt_id.as_deref() else {
            return;
        };
        let k = match self.by_id.get(attempt) {
            Some(&k) => k,
            None => {
                self.attempts.push(Flue2Attempt {
                    attempt_id: attempt.to_string(),
                    first_record_at: env.timestamp.clone(),
                    ..Flue2Attempt::default()
                });
                self.by_id
                    .insert(attempt.to_string(), self.attempts.len() - 1);
                self.attempts.len() - 1
            }
        };
        let a = &mut self.attempts[k];
        a.records += 1;
        // In place: a record's timestamp copied into the same string, not a new one per record.
        a.last_record_at.clone_from(&env.timestamp);
        match &r.body {
            Body::UserMessage { .. } => a.input_appended = true,
            Body::Signal { signal_type, .. } => a.signals.push(signal_type.clone()),
            Body::AssistantMessageStarted { message_id, .. } => {
                a.provider_started += 1;
                self.open.insert(message_id.clone(), k);
            }
            Body::ToolCall { .. } => a.tool_calls += 1,
            Body::MessageCompleted {
                message_id,
                stop_reason,
                usage,
                ..
            } => {
                a.completed.push(stop_reason.clone());
                a.usage
                    .add(usage_figures(usage.as_ref().map(JsonText::value)));
                self.open.remove(message_id);
            }
            Body::ToolOutcome { .. } => a.outcomes += 1,
            Body::ToolResultsCommitted { .. } => a.commits += 1,
            Body::SubmissionSettled => a.settled = true,
            _ => {}
        }
    }

    /// The attempts in the order they first wrote, each with the messages it left unfinished.
    pub fn finish(mut self) -> Vec<Flue2Attempt> {
        for (_, k) in self.open.drain() {
            self.attempts[k].unfinished += 1;
        }
        self.attempts
    }
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
