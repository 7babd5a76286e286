//! A submission's plan kept without its folded stream: [`PlanFacts`] holds what the reconciler's
//! step table reads of the instance and the conversation (none of it on the clock), so a list
//! that refreshes every few seconds plans its rows again at each new clock without holding every
//! stream's fold. [`PlanFacts::plan`] runs the very step table `plan_flue2` runs
//! (`reconciler::step_table`), reading these facts where `plan_flue2` reads the fold.

use super::classify::Flue2Classification;
use super::reconciler::{
    inspection, step_table, FoldReads, Live, SettleFacts, Table, TerminalFacts,
};
use super::reconciler::{Flue2Plan, InspectFailure, ReconcileInput};
use super::resume::Flue2Resume;
use super::rows::Flue2SubmissionRow;

/// What the step table can read of the fold for one input, at any clock: computed once from the
/// fold ([`PlanFacts::of`]), then asked with the same row, classification and joined deliveries
/// at each clock ([`PlanFacts::plan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanFacts {
    settle: Option<SettleFacts>,
    terminal: Option<TerminalFacts>,
    finalize: (bool, bool),
    resume: Option<Flue2Resume>,
}

impl PlanFacts {
    /// The reads every clock's step could make on `input` (its `now_ms` is not read). Only a
    /// `running` row's steps read the conversation, and only a `terminalizing` row's the
    /// reserved record, so the other rows keep nothing.
    pub fn of(input: &ReconcileInput<'_>) -> PlanFacts {
        let live = Live(input);
        let running = input.row.status == "running";
        PlanFacts {
            settle: running.then(|| live.settle()),
            terminal: if running { live.terminal() } else { None },
            finalize: if input.row.status == "terminalizing" {
                live.finalize()
            } else {
                (false, false)
            },
            resume: match (&input.classification, running) {
                (Ok(c), true) => match inspection(c) {
                    "interrupted" => live.resume(c, true),
                    "absent" => live.resume(c, false),
                    _ => None,
                },
                _ => None,
            },
        }
    }

    /// `plan_flue2` at `now_ms` of the input these facts were taken from: `row`,
    /// `classification` and `joined` are that input's.
    pub fn plan(
        &self,
        row: &Flue2SubmissionRow,
        classification: Result<&Flue2Classification, (InspectFailure, &str)>,
        joined: &[String],
        now_ms: i64,
    ) -> Flue2Plan {
        step_table(
            &Table {
                row,
                classification,
                joined,
                now_ms,
            },
            self,
        )
    }
}

impl FoldReads for PlanFacts {
    fn settle(&self) -> SettleFacts {
        // Only a running row's steps settle with a record, and those facts were taken.
        self.settle.clone().unwrap_or(SettleFacts {
            has_conversation: false,
            settled_present: false,
        })
    }

    fn terminal(&self) -> Option<TerminalFacts> {
        self.terminal.clone()
    }

    fn finalize(&self) -> (bool, bool) {
        self.finalize
    }

    fn resume(&self, _c: &Flue2Classification, _replace: bool) -> Option<Flue2Resume> {
        // The classification is the one the facts were taken with: its resume is the one kept.
        self.resume.clone()
    }
}

#[cfg(test)]
#[path = "plan_facts_tests.rs"]
mod tests;
