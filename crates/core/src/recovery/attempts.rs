//! The attempts a submission burned, as far as the rows and the session say.
//!
//! Where an attempt id is recorded (spec §1.4, §3.1, §6.3):
//!
//! * the submission row: the *current* attempt (`attempt_id`), when it was claimed or replaced
//!   (`started_at`), its worker (`owner_id`) and lease (`lease_expires_at`), and how many attempts
//!   were made in all (`attempt_count`, +1 on every claim and replacement);
//! * the turn journal: `attempt_id` (the attempt that holds the journal: the one that began the
//!   turn, or the one a replacement handed it to) and `stream_key`
//!   (`<submissionId>:<turnId>:<attemptId>`, written by the attempt that started the provider);
//! * the `stream_interrupted` / `stream_continued` signals of a recovered stream: their
//!   `attributes.streamKey` names the attempt whose stream was interrupted.
//!
//! Nothing else is recorded: no entry says which attempt appended it, an earlier attempt's start,
//! worker and lease are overwritten by the next one, and a requeue clears the id. Those are
//! reported as unknown (`untraced`), never guessed. `flue_agent_attempt_markers` (Cloudflare only)
//! is not read.

use serde::Serialize;

use crate::journal::entry::{Entry, Role};
use crate::journal::submission_rows::{JournalRow, RequestedCall, SubmissionRow};

/// One attempt whose id the database still holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptTrace {
    pub attempt_id: String,
    /// The row's current attempt.
    pub current: bool,
    /// Its ordinal (1-based): known for the current attempt only (`attempt_count`).
    pub number: Option<i64>,
    /// `started_at`, `owner_id` and `lease_expires_at` of the row: the current attempt's only.
    pub started_at: Option<i64>,
    pub owner_id: Option<String>,
    pub lease_expires_at: Option<i64>,
    /// How far it got, in the order found.
    pub reached: Vec<Reached>,
}

/// A step an attempt is recorded to have reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "step",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Reached {
    /// It holds the turn journal (began the turn, or was handed it by a replacement), at `phase`.
    HoldsJournal { phase: String },
    /// It started the provider for turn `turn_id` (the journal's stream key).
    ProviderStarted { turn_id: String },
    /// It recorded a tool request of `calls` calls (the journal's checkpoint assistant), of which
    /// `results` have a tool result on the active path.
    ToolsRequested {
        assistant: Option<String>,
        calls: usize,
        results: usize,
    },
    /// It committed the turn (the journal is committed under it).
    Committed { leaf: Option<String> },
    /// Its provider stream was interrupted: a `stream_interrupted` signal names it; `partial` is
    /// the aborted assistant just before the signal, if it is one.
    StreamInterrupted {
        entry: String,
        partial: Option<String>,
    },
    /// A `stream_continued` signal names it (a later attempt continued its stream).
    StreamContinued { entry: String },
}

/// The attempts of one submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptTimeline {
    /// `attempt_count`: attempts made in all (claims and replacements).
    pub attempt_count: i64,
    pub max_retry: i64,
    /// The attempts with a recorded id, earlier first (order of first appearance: signals in
    /// append order, then the journal's stream key, the journal's holder, the row); the current
    /// attempt last.
    pub traced: Vec<AttemptTrace>,
    /// Attempts counted by `attempt_count` that left no id anywhere read: their ids, starts,
    /// workers and progress are unknown.
    pub untraced: i64,
}

/// The attempt id in a stream key `<submissionId>:<turnId>:<attemptId>` of this submission, with
/// its turn id; `None` for another submission's key or one of another shape.
pub fn stream_key_attempt<'a>(key: &'a str, submission_id: &str) -> Option<(&'a str, &'a str)> {
    let (rest, attempt) = key.rsplit_once(':')?;
    let (sub, turn) = rest.rsplit_once(':')?;
    (sub == submission_id && !attempt.is_empty()).then_some((turn, attempt))
}

/// The timeline from the row, its journal and the entries since the input (`following`, in
/// append order; abandoned branches may be included: signals there count too). `path` is the
/// active path after the input, for counting a tool request's results.
pub fn attempt_timeline(
    row: &SubmissionRow,
    journal: Option<&JournalRow>,
    since_input: &[&Entry],
    path: &[&Entry],
) -> AttemptTimeline {
    let sid = row.submission_id.as_str();
    let mut traced: Vec<AttemptTrace> = Vec::new();
    fn slot<'t>(traced: &'t mut Vec<AttemptTrace>, id: &str) -> &'t mut AttemptTrace {
        if let Some(i) = traced.iter().position(|t| t.attempt_id == id) {
            return &mut traced[i];
        }
        traced.push(AttemptTrace {
            attempt_id: id.to_string(),
            current: false,
            number: None,
            started_at: None,
            owner_id: None,
            lease_expires_at: None,
            reached: Vec::new(),
        });
        traced.last_mut().expect("just pushed")
    }
    for (i, e) in since_input.iter().enumerate() {
        let Some(m) = e.message_with_role(&Role::Signal) else {
            continue;
        };
        let kind = m.signal_type();
        if !matches!(kind, Some("stream_interrupted" | "stream_continued")) {
            continue;
        }
        let Some((_, attempt)) = m
            .attribute("streamKey")
            .and_then(|k| stream_key_attempt(k, sid))
        else {
            continue;
        };
        let step = if kind == Some("stream_interrupted") {
            let partial = i
                .checked_sub(1)
                .map(|j| since_input[j])
                .filter(|p| {
                    p.message()
                        .is_some_and(|m| m.stop_reason() == Some("aborted"))
                        && e.parent_id.as_deref() == Some(p.id.as_str())
                })
                .map(|p| p.id.to_string());
            Reached::StreamInterrupted {
                entry: e.id.to_string(),
                partial,
            }
        } else {
            Reached::StreamContinued {
                entry: e.id.to_string(),
            }
        };
        slot(&mut traced, attempt).reached.push(step);
    }
    if let Some(j) = journal {
        let keyed = j
            .stream_key
            .as_deref()
            .and_then(|k| stream_key_attempt(k, sid));
        if let Some((turn, attempt)) = keyed {
            let t = slot(&mut traced, attempt);
            t.reached.push(Reached::ProviderStarted {
                turn_id: turn.to_string(),
            });
            // A tool request is recorded in the same turn by the attempt that started the
            // provider (`beginTurnJournal` clears the stream key of a new turn).
            if let Ok(Some(calls)) = j.tool_request() {
                let results = calls_with_a_result(&calls, path);
                // The checkpoint is the assistant only while the phase says so (a repair or the
                // batch's completion moves it to the last result).
                let assistant = (j.phase
                    == crate::journal::status::JournalPhase::ToolRequestRecorded)
                    .then(|| j.checkpoint_leaf_id.clone())
                    .flatten();
                t.reached.push(Reached::ToolsRequested {
                    assistant,
                    calls: calls.len(),
                    results,
                });
            }
        }
        if !j.attempt_id.is_empty() {
            let t = slot(&mut traced, &j.attempt_id);
            if j.committed {
                t.reached.push(Reached::Committed {
                    leaf: j.committed_leaf_id.clone(),
                });
            } else {
                t.reached.push(Reached::HoldsJournal {
                    phase: j.phase.as_str().to_string(),
                });
            }
        }
    }
    if let Some(id) = row.attempt_id.as_deref().filter(|id| !id.is_empty()) {
        let i = traced
            .iter()
            .position(|t| t.attempt_id == id)
            .unwrap_or_else(|| {
                slot(&mut traced, id);
                traced.len() - 1
            });
        let mut t = traced.remove(i);
        t.current = true;
        t.number = Some(row.attempt_count);
        t.started_at = row.started_at;
        t.owner_id = row.owner_id.clone();
        t.lease_expires_at = Some(row.lease_expires_at);
        traced.push(t);
    }
    let untraced = (row.attempt_count - traced.len() as i64).max(0);
    AttemptTimeline {
        attempt_count: row.attempt_count,
        max_retry: row.max_retry,
        traced,
        untraced,
    }
}

/// How many of `calls` have a result on `path`. One pass from the leaf, the batch's results
/// being at its end, stopping once every call is answered: a whale's path is 100,000 entries, and
/// a search per call cost a pass per call.
fn calls_with_a_result(calls: &[RequestedCall], path: &[&Entry]) -> usize {
    let mut answered = vec![false; calls.len()];
    let mut left = calls.len();
    for e in path.iter().rev() {
        if left == 0 {
            break;
        }
        let Some(id) = e
            .message_with_role(&Role::ToolResult)
            .and_then(|m| m.tool_call_id_str())
        else {
            continue;
        };
        for (i, c) in calls.iter().enumerate() {
            if !answered[i] && c.id == id {
                answered[i] = true;
                left -= 1;
            }
        }
    }
    calls.len() - left
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{sub, NOW, SID};
    use serde_json::{json, Value};

    fn journal(attempt: &str, phase: &str) -> JournalRow {
        JournalRow {
            submission_id: SID.into(),
            session_key: sub().session_key,
            kind: "dispatch".into(),
            attempt_id: attempt.into(),
            operation_id: "op_1".into(),
            turn_id: "turn_1".into(),
            phase: phase.into(),
            revision: 1,
            created_at: NOW - 50_000,
            updated_at: NOW - 40_000,
            checkpoint_leaf_id: None,
            tool_request_json: None,
            stream_key: None,
            stream_consumed_at: None,
            committed: phase == "committed",
            committed_leaf_id: None,
            stored_as: None,
        }
    }

    fn entry(id: &str, parent: &str, message: Value) -> Entry {
        let data = json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t",
            "message": message});
        Entry::parse(0, id, &data.to_string())
    }

    fn signal(kind: &str, attempt: &str) -> Value {
        json!({"role": "signal", "type": kind, "content": "x",
            "attributes": {"streamKey": format!("{SID}:turn_1:{attempt}")}, "timestamp": 1})
    }

    fn aborted() -> Value {
        json!({"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": 1})
    }

    fn result(call: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": call, "toolName": "t", "content": [],
            "isError": false, "timestamp": 1})
    }

    #[test]
    fn stream_keys_of_this_submission_only() {
        let cases = [
            (format!("{SID}:turn_1:att-9"), Some(("turn_1", "att-9"))),
            ("other:turn_1:att-9".to_string(), None),
            (format!("{SID}:turn_1:"), None),
            ("no-colons".to_string(), None),
        ];
        for (key, want) in cases {
            assert_eq!(stream_key_attempt(&key, SID), want, "{key}");
        }
    }

    #[test]
    fn a_first_attempt_with_nothing_but_the_row() {
        let t = attempt_timeline(&sub(), None, &[], &[]);
        assert_eq!(t.attempt_count, 1);
        assert_eq!(t.untraced, 0);
        assert_eq!(t.traced.len(), 1);
        let a = &t.traced[0];
        assert!(a.current);
        assert_eq!(a.attempt_id, "att-1");
        assert_eq!(a.number, Some(1));
        assert_eq!(a.started_at, Some(NOW - 60_000));
        assert_eq!(a.owner_id.as_deref(), Some("owner"));
        assert_eq!(a.lease_expires_at, Some(NOW - 1000));
        assert!(a.reached.is_empty());
    }

    #[test]
    fn two_attempts_an_interrupted_stream_and_its_continuation() {
        // att-1's stream was interrupted; the reconciler replaced it with att-2, which holds the
        // journal (its begin cleared the stream key: no provider start recorded for it).
        let mut row = sub();
        row.attempt_id = Some("att-2".into());
        row.attempt_count = 2;
        let j = journal("att-2", "before_provider");
        let entries = [
            entry("a1", "in", aborted()),
            entry("s1", "a1", signal("stream_interrupted", "att-1")),
            entry("s2", "s1", signal("stream_continued", "att-1")),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        let t = attempt_timeline(&row, Some(&j), &refs, &refs);
        assert_eq!(t.untraced, 0);
        let ids: Vec<_> = t.traced.iter().map(|a| a.attempt_id.as_str()).collect();
        assert_eq!(ids, ["att-1", "att-2"]);
        let first = &t.traced[0];
        assert!(!first.current);
        // What the row no longer holds is unknown.
        assert_eq!(
            (
                first.number,
                first.started_at,
                first.owner_id.as_deref(),
                first.lease_expires_at
            ),
            (None, None, None, None)
        );
        assert_eq!(
            first.reached,
            [
                Reached::StreamInterrupted {
                    entry: "s1".into(),
                    partial: Some("a1".into())
                },
                Reached::StreamContinued { entry: "s2".into() },
            ]
        );
        let current = &t.traced[1];
        assert_eq!(current.number, Some(2));
        assert_eq!(
            current.reached,
            [Reached::HoldsJournal {
                phase: "before_provider".into()
            }]
        );
    }

    #[test]
    fn a_tool_request_with_k_of_n_results_after_a_replacement() {
        // att-1 started the provider and recorded 3 calls; 1 result landed; att-1 was replaced by
        // att-2 (the journal's holder), and three attempts before left no id.
        let mut row = sub();
        row.attempt_id = Some("att-2".into());
        row.attempt_count = 5;
        let mut j = journal("att-2", "tool_request_recorded");
        j.stream_key = Some(format!("{SID}:turn_7:att-1"));
        j.checkpoint_leaf_id = Some("a1".into());
        j.tool_request_json = Some(
            r#"{"toolCalls":[{"id":"c1","name":"t"},{"id":"c2","name":"t"},{"id":"c3","name":"t"}]}"#
                .into(),
        );
        let entries = [
            entry(
                "a1",
                "in",
                json!({"role": "assistant", "stopReason": "toolUse", "content": []}),
            ),
            entry("r1", "a1", result("c2")),
        ];
        let refs: Vec<&Entry> = entries.iter().collect();
        let t = attempt_timeline(&row, Some(&j), &refs, &refs);
        assert_eq!(t.untraced, 3);
        assert_eq!(t.traced[0].attempt_id, "att-1");
        assert_eq!(
            t.traced[0].reached,
            [
                Reached::ProviderStarted {
                    turn_id: "turn_7".into()
                },
                Reached::ToolsRequested {
                    assistant: Some("a1".into()),
                    calls: 3,
                    results: 1
                },
            ]
        );
        assert!(t.traced[1].current);
        assert_eq!(t.traced[1].number, Some(5));
    }

    #[test]
    fn a_committed_turn_a_requeued_row_and_foreign_keys() {
        // Requeued: no current attempt; the journal was committed under att-1; a signal of
        // another submission is ignored.
        let mut row = sub();
        row.attempt_id = None;
        row.attempt_count = 2;
        let mut j = journal("att-1", "committed");
        j.committed_leaf_id = Some("a9".into());
        let foreign = entry(
            "s1",
            "in",
            json!({"role": "signal", "type": "stream_interrupted", "content": "x",
                "attributes": {"streamKey": "other:turn_1:att-7"}}),
        );
        let t = attempt_timeline(&row, Some(&j), &[&foreign], &[&foreign]);
        assert_eq!(t.traced.len(), 1);
        assert!(!t.traced[0].current);
        assert_eq!(
            t.traced[0].reached,
            [Reached::Committed {
                leaf: Some("a9".into())
            }]
        );
        assert_eq!(t.untraced, 1);
    }
}
