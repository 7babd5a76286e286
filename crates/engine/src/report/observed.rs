//! What the runtime did to a stuck submission, told from two reads of it: the one a prediction
//! was made from and a later one. `wait` sets it beside the rule turnscope predicted.
//!
//! Only the rows say what happened, so the rule is read from the traces each rule leaves:
//! * rule 7 puts the row back in the queue (`queued`, no attempt);
//! * rules 4, 5 and 6 replace the attempt (`attempt_count` grows): 6 first answers the open
//!   calls with synthetic `interrupted` results, 4 first turns a recovered stream into history
//!   (the journal's `stream_consumed_at` set); 5 does neither;
//! * rules 2, 3, 8 and 9 settle it failed with the `submission_interrupted` advisory, whose
//!   `reason` names the rule;
//! * rule 1 settles it completed from its history, under the same attempt.
//!
//! A lease renewed under the same attempt means its worker was alive: no rule fired.

use serde::Serialize;

use super::SubmissionReport;
use turnscope_core::journal::entry::{Entry, Role};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_core::recovery::runtime_text::INTERRUPTED_TEXT;

/// One thing the runtime did, with the reconciler rule it shows, when one does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// `replacement`, `requeued`, `completed`, `failed`, `lease_renewed`, `settled`.
    pub what: &'static str,
    /// The rule whose traces these are (`None` for a renewed lease or a settlement no rule of
    /// the reconciler makes).
    pub rule: Option<u8>,
    /// One line: the rows that changed.
    pub detail: String,
}

/// What a later read is compared with: the row, the journal's stream mark, the last entry and
/// the prediction, without the session (a bulk of whales is kept cheaply while the runtime acts).
#[derive(Debug, Clone)]
pub struct Baseline {
    pub row: turnscope_core::journal::submission_rows::SubmissionRow,
    pub stream_consumed: bool,
    /// The largest entry position of the session (-1 without one).
    pub last_position: i64,
    /// The rule turnscope predicted from this read, and its words (`rule 5 → replacement`).
    pub predicted_rule: Option<u8>,
    pub predicted: String,
}

impl Baseline {
    pub fn of(r: &SubmissionReport) -> Baseline {
        Baseline {
            row: r.row().clone(),
            stream_consumed: r
                .bundle
                .journal
                .as_ref()
                .is_some_and(|j| j.stream_consumed_at.is_some()),
            last_position: r
                .history
                .as_ref()
                .and_then(|h| h.entries.iter().map(|e| e.position).max())
                .unwrap_or(-1),
            predicted_rule: r.plan.rule,
            predicted: format!(
                "{} → {}",
                r.plan.rule_label(),
                r.plan.result.map_or("-", RuleResult::as_str)
            ),
        }
    }

    /// Whether `o` is what was predicted: the same rule.
    pub fn as_predicted(&self, o: &Observation) -> bool {
        o.rule.is_some() && o.rule == self.predicted_rule
    }
}

/// Whether the row changed in a way that says the runtime (or a worker) acted: status, attempt,
/// attempt count or lease. A cheap check on the row alone, before reading the session again.
pub fn row_moved(
    before: &turnscope_core::journal::submission_rows::SubmissionRow,
    after: &turnscope_core::journal::submission_rows::SubmissionRow,
) -> bool {
    before.status != after.status
        || before.attempt_id != after.attempt_id
        || before.attempt_count != after.attempt_count
        || before.lease_expires_at != after.lease_expires_at
}

/// What happened between `before` and `after` (two whole reads of the same submission), or
/// `None` when nothing the runtime does shows yet.
pub fn observe(before: &Baseline, after: &SubmissionReport) -> Option<Observation> {
    let (b, a) = (&before.row, after.row());
    if !row_moved(b, a) {
        return None;
    }
    let short = |s: &Option<String>| {
        s.as_deref()
            .map_or("-".to_string(), |s| s.chars().take(8).collect())
    };
    if a.status == SubmissionStatus::Queued && b.status != SubmissionStatus::Queued {
        return Some(Observation {
            what: RuleResult::Requeued.as_str(),
            rule: Some(7),
            detail: format!(
                "back in the queue (attempt {} cleared)",
                short(&b.attempt_id)
            ),
        });
    }
    if a.attempt_count > b.attempt_count {
        let new = new_entries(before, after);
        // Read whole from the stored text: the write path's read keeps messages compact.
        let answered = new.iter().any(|e| {
            Entry::parse(e.position, &e.id, &e.raw)
                .message_with_role(&Role::ToolResult)
                .is_some_and(|m| m.is_error() && m.text() == INTERRUPTED_TEXT)
        });
        let consumed = after
            .bundle
            .journal
            .as_ref()
            .is_some_and(|j| j.stream_consumed_at.is_some())
            && !before.stream_consumed;
        let rule = if answered {
            6
        } else if consumed {
            4
        } else {
            5
        };
        let then = match &a.status {
            SubmissionStatus::Running | SubmissionStatus::Terminalizing => String::new(),
            s => format!(", then {}", s.as_str()),
        };
        return Some(Observation {
            what: RuleResult::Replacement.as_str(),
            rule: Some(rule),
            detail: format!(
                "attempt {} → {} (attempt {} of {}){}{then}",
                short(&b.attempt_id),
                short(&a.attempt_id),
                a.attempt_count,
                a.max_retry,
                match rule {
                    6 => ": the open calls answered `interrupted` first",
                    4 => ": the recovered stream turned into history first",
                    _ => "",
                }
            ),
        });
    }
    if a.status == SubmissionStatus::Settled || a.status == SubmissionStatus::Terminalizing {
        let new = new_entries(before, after);
        let advisory = new.iter().find_map(|e| {
            (e.message_with_role(&Role::Signal)?.signal_type() == Some("submission_interrupted"))
                .then(|| e.message().and_then(|m| m.attribute("reason")))
                .flatten()
        });
        if let Some(reason) = advisory {
            let rule = match reason {
                "exhausted_retry_budget" => Some(2),
                "exceeded_timeout" => Some(3),
                "interrupted_before_input_marker" => Some(8),
                "interrupted_after_input_application" => Some(9),
                _ => None,
            };
            return Some(Observation {
                what: RuleResult::Failed.as_str(),
                rule,
                detail: format!("settled failed: the advisory's reason is {reason}"),
            });
        }
        if a.attempt_id == b.attempt_id && a.error.is_none() {
            return Some(Observation {
                what: RuleResult::Completed.as_str(),
                rule: Some(1),
                detail: "settled completed from its history, under the same attempt".into(),
            });
        }
        return Some(Observation {
            what: "settled",
            rule: None,
            detail: format!(
                "{} without a reconciler's trace (error: {})",
                a.status.as_str(),
                a.error.as_deref().unwrap_or("none")
            ),
        });
    }
    if a.attempt_id == b.attempt_id && a.lease_expires_at > b.lease_expires_at {
        return Some(Observation {
            what: "lease_renewed",
            rule: None,
            detail: format!(
                "the lease of attempt {} was renewed: its worker is alive",
                short(&a.attempt_id)
            ),
        });
    }
    Some(Observation {
        what: "changed",
        rule: None,
        detail: format!(
            "status {} → {}, attempt {} → {}",
            b.status.as_str(),
            a.status.as_str(),
            short(&b.attempt_id),
            short(&a.attempt_id)
        ),
    })
}

/// The entries of `after`'s session that `before`'s did not have (by position).
fn new_entries<'a>(before: &Baseline, after: &'a SubmissionReport) -> Vec<&'a Entry> {
    let seen = before.last_position;
    after
        .history
        .as_ref()
        .map(|h| h.entries.iter().filter(|e| e.position > seen).collect())
        .unwrap_or_default()
}
