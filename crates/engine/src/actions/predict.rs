//! Every preview's prediction, computed: the planned rows applied to a copy of what was read
//! (`core::simulate`), then the runtime's classifier and planner run on the copy. What the
//! preview says the runtime's next pass does is what the planner says about those rows.

use serde::Serialize;

use crate::report::SubmissionReport;
use turnscope_core::journal::submission_rows::{failure_in_terminal_event, short_id};
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::reconciler::{
    Disposition, DispositionKind, PlannedWrite, RuleResult,
};

/// Where the runtime's next pass leaves a row: the reconciler's result when a rule applies (or
/// the settlement a row already on its way out gets), else the disposition it stays in. Printed
/// and serialized as its one word (`replacement`, `failed`, `live`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextOutcome {
    Result(RuleResult),
    Stays(DispositionKind),
}

impl NextOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            NextOutcome::Result(r) => r.as_str(),
            NextOutcome::Stays(k) => k.label(),
        }
    }
}

impl std::fmt::Display for NextOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for NextOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the runtime's next pass does with the rows after an action.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prediction {
    /// `completed`, `failed`, `replacement` (a fresh attempt resumes), `requeued`, `stale`, or
    /// where the row then stands when no rule applies (`live`, `damaged`, …).
    pub outcome: NextOutcome,
    /// The rule of spec §5.2 its next pass applies, when it reconciles the row.
    pub rule: Option<u8>,
    /// The verdict the row then has (classification, or outcome).
    pub verdict: String,
    /// The planner's reason, for that state.
    pub reason: String,
    /// The writes of that next pass, in order.
    pub next_writes: Vec<String>,
    /// The next pass fails the submission anyway (rules 2, 3, 8, 9).
    pub fails_anyway: bool,
    /// When it fails anyway: what would avoid that, as a command.
    pub way_out: Option<String>,
}

impl Prediction {
    /// One line for previews and results.
    pub fn line(&self) -> String {
        match self.rule {
            Some(rule) => format!(
                "the runtime's next pass applies rule {rule} → {}: {}",
                self.outcome, self.reason
            ),
            None => format!("then {}: {}", self.verdict, self.reason),
        }
    }

    /// The warning shown before a preview whose next pass fails the submission anyway.
    pub fn warning(&self) -> Option<String> {
        self.fails_anyway.then(|| {
            format!(
                "the runtime's next pass fails this submission anyway (rule {}: {})",
                self.rule.map_or("-".into(), |r| r.to_string()),
                self.reason
            )
        })
    }
}

/// Where `r` stands: the reconciler's result for what it settles or hands on, else its
/// disposition (`live`, `damaged`, …).
pub fn outcome(r: &SubmissionReport) -> NextOutcome {
    let result = match &r.plan.disposition {
        Disposition::Reconcile => r.plan.result.unwrap_or(RuleResult::Stale),
        Disposition::Failed { .. } => RuleResult::Failed,
        Disposition::Completed => RuleResult::Completed,
        Disposition::Pending => RuleResult::Requeued,
        // The terminal event the next pass publishes says how it ends.
        Disposition::Publishing => match r.row().terminal_event.as_deref() {
            Some(event) if failure_in_terminal_event(event).is_some() => RuleResult::Failed,
            _ => RuleResult::Completed,
        },
        other => return NextOutcome::Stays(other.kind()),
    };
    NextOutcome::Result(result)
}

/// The prediction for `r` once `changes` are written (no changes: the runtime's plan as it is).
pub fn predict(r: &SubmissionReport, changes: &[RowChange]) -> Prediction {
    let after = r.with_changes(changes);
    describe(&after)
}

/// The prediction that `after` (a simulated or re-read report) stands for.
pub fn describe(after: &SubmissionReport) -> Prediction {
    let plan = &after.plan;
    let fails_anyway = plan.result == Some(RuleResult::Failed)
        && plan.rule.is_some_and(|n| matches!(n, 2 | 3 | 8 | 9));
    let id = short_id(&after.row().submission_id);
    let way_out = fails_anyway.then(|| match plan.rule {
        Some(2) => format!(
            "give it more attempts first: `turnscope --write extend {id} --attempts 3`; or `turnscope --write fail {id} --reason TEXT`"
        ),
        Some(3) => format!(
            "move its deadline first: `turnscope --write extend {id} --deadline 1h`; or `turnscope --write fail {id} --reason TEXT`"
        ),
        _ => format!(
            "no turnscope write avoids it; to settle it with your reason on record: `turnscope --write fail {id} --reason TEXT`"
        ),
    });
    Prediction {
        outcome: outcome(after),
        rule: plan.rule,
        verdict: after.verdict(),
        reason: plan.reason.clone(),
        next_writes: plan.writes.iter().map(PlannedWrite::describe).collect(),
        fails_anyway,
        way_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON documents and the previews print the outcome as the word it was before it had a
    /// type: the runtime's result, or the disposition's word.
    #[test]
    fn an_outcome_is_printed_and_serialized_as_its_word() {
        for (o, word) in [
            (NextOutcome::Result(RuleResult::Replacement), "replacement"),
            (NextOutcome::Result(RuleResult::Stale), "stale"),
            (NextOutcome::Stays(DispositionKind::Live), "live"),
            (NextOutcome::Stays(DispositionKind::Unreadable), "damaged"),
        ] {
            assert_eq!(o.to_string(), word);
            assert_eq!(serde_json::to_value(o).unwrap(), serde_json::json!(word));
        }
    }
}
