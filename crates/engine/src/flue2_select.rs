//! `list`'s selection on a flue 2.x journal: the status view, the row filters (kind, instance,
//! owner, age), the verdict and the reconciler step, then a limit, with the same flags and the
//! same meanings as on beta.7 (`listing`), and the sort columns of the 2.x table.
//!
//! A row's verdict is its classification's label (`tool_use_unresolved`, `resume/<mode>`, …;
//! `error` where there is none) and its disposition, one word for where the row stands, computed
//! from the reconciler step `plan_flue2` chose for it (so `stuck` is exactly "a step of the
//! table fires", never a second judgement): `stuck`, `live`, `no-lease`, `pending`,
//! `terminalizing`, `completed`, `failed`, `aborted`, `joined`, `malformed`, `damaged`.

use std::collections::BTreeSet;
use std::time::Duration;

use strum::IntoEnumIterator;
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_core::recovery::classify::StateKind;

use crate::flue2::Inspected;
pub use crate::flue2::{disposition, DISPOSITIONS};
use crate::listing::{resolve_owner, ListingError};
use crate::report::rule_filter::RuleFilter;
use crate::report::verdict_filter::VerdictFilter;

/// The highest step of `reconcileInterruptedSubmission`'s table (`--rule` takes 0 to it).
pub const LAST_STEP: u8 = 7;

/// Every value `--verdict` takes on a 2.x journal: the classifications (with `resume` for every
/// mode), `error` (no classification), then the dispositions.
pub fn verdict_names() -> Vec<String> {
    let mut out = Vec::new();
    for kind in StateKind::iter() {
        if kind == StateKind::Resume {
            out.push(kind.as_str().to_string());
        }
        out.extend(kind.labels());
    }
    out.push("error".into());
    for d in DISPOSITIONS {
        if !out.iter().any(|o| o == d) {
            out.push(d.to_string());
        }
    }
    out
}

/// Whether `status` names a 2.x status view: `expired`, `all`, or a row status.
pub fn is_view(status: &str) -> bool {
    status == "expired"
        || status == "all"
        || turnscope_core::flue2::FLUE2_STATUSES.contains(&status)
}

/// The flags, checked.
#[derive(Debug, Clone, Default)]
pub struct Flue2Selection {
    /// `expired` (the default), `all`, or a row status.
    pub view: String,
    pub kind: Option<String>,
    pub instance: Option<String>,
    /// An owner id, or a prefix only one owner among the rows in view has.
    pub owner: Option<String>,
    /// Running rows whose lease ended at least this long ago; other rows accepted at least this
    /// long ago.
    pub older_than: Option<Duration>,
    pub verdict: Option<VerdictFilter>,
    pub rule: Option<RuleFilter>,
    pub limit: Option<usize>,
}

/// What each filter of a selection let through (for the line an empty result prints).
pub struct Funnel2 {
    /// Rows in the view.
    pub in_view: usize,
    /// Each filter given, as the operator reads it, with the rows left after it.
    pub steps: Vec<(String, usize)>,
}

impl Funnel2 {
    /// Which filter left nothing: `3 expired submissions, none with verdict stuck`.
    pub fn nothing_matched(&self, view: &str) -> String {
        if self.in_view == 0 {
            return match view {
                "expired" => "no submission has an expired lease".into(),
                "all" => "the journal has no submissions".into(),
                s => format!("no submission is {s}"),
            };
        }
        let view_word = if view == "all" {
            String::new()
        } else {
            format!("{view} ")
        };
        let noun = if self.in_view == 1 {
            "submission"
        } else {
            "submissions"
        };
        let mut prev = self.in_view;
        let mut said = format!("{} {view_word}{noun}", self.in_view);
        for (what, left) in &self.steps {
            if *left == 0 {
                return format!("{said}, none {what}");
            }
            if *left != prev {
                said = format!("{said}, {left} {what}");
            }
            prev = *left;
        }
        format!("{said}: none selected")
    }
}

impl Flue2Selection {
    /// Whether a row is in the status view at `now`.
    pub fn in_view(&self, r: &Flue2SubmissionRow, now: i64) -> bool {
        match self.view.as_str() {
            "expired" | "" => r.lease_expired(now),
            "all" => true,
            s => r.status == s,
        }
    }

    /// The owner `--owner` names among the rows in view (an ambiguous prefix refused).
    pub fn resolve_owner<'r>(
        &self,
        in_view: impl Iterator<Item = &'r Flue2SubmissionRow>,
    ) -> Result<Option<String>, ListingError> {
        let Some(query) = self.owner.as_deref() else {
            return Ok(None);
        };
        let owners: BTreeSet<&str> = in_view.filter_map(|r| r.owner_id.as_deref()).collect();
        resolve_owner(query, owners.into_iter()).map(Some)
    }

    /// Whether the row filters (kind, instance, owner, age) take `r`, which is in view.
    pub fn keeps_row(&self, r: &Flue2SubmissionRow, owner: Option<&str>, now: i64) -> [bool; 4] {
        let kind = self.kind.as_ref().is_none_or(|k| &r.kind == k);
        let instance = self
            .instance
            .as_deref()
            .is_none_or(|i| r.session().is_some_and(|k| k.instance_id == i));
        let owner = owner.is_none_or(|o| r.owner_id.as_deref() == Some(o));
        let old = self.older_than.is_none_or(|age| {
            let since = if r.status == "running" && r.lease_expires_at > 0 {
                r.lease_expires_at
            } else {
                r.accepted_at.unwrap_or(now)
            };
            now - since >= age.as_millis() as i64
        });
        [kind, instance, owner, old]
    }

    /// The rows in view (`in_view`, in order) this selection keeps, at most `limit`, each
    /// inspected by `inspect` only once the row filters took it, and the funnel. `owner` is
    /// [`Flue2Selection::resolve_owner`]'s.
    pub fn select<'a>(
        &self,
        in_view: &'a [Flue2SubmissionRow],
        owner: Option<&str>,
        now: i64,
        mut inspect: impl FnMut(&'a Flue2SubmissionRow) -> Inspected<'a>,
    ) -> (Vec<Inspected<'a>>, Funnel2) {
        let mut counts = [0usize; 6];
        let mut kept = Vec::new();
        for r in in_view {
            let rows = self.keeps_row(r, owner, now);
            let through = rows.iter().take_while(|p| **p).count();
            for c in counts.iter_mut().take(through) {
                *c += 1;
            }
            if through < rows.len() {
                continue;
            }
            let i = inspect(r);
            let verdict = self
                .verdict
                .as_ref()
                .is_none_or(|v| v.matches_words(&i.label(), Some(disposition(&i))));
            if !verdict {
                continue;
            }
            counts[4] += 1;
            if !self
                .rule
                .as_ref()
                .is_none_or(|f| f.matches(i.plan.step.number()))
            {
                continue;
            }
            counts[5] += 1;
            if self.limit.is_none_or(|l| kept.len() < l) {
                kept.push(i);
            }
        }
        let given: [Option<String>; 6] = [
            self.kind.as_ref().map(|k| format!("of kind {k}")),
            self.instance.as_ref().map(|i| format!("of instance {i}")),
            owner.map(|o| format!("held by owner {o}")),
            self.older_than.map(|d| {
                format!(
                    "older than {}",
                    turnscope_core::journal::time::human_duration(d.as_millis() as i64)
                )
            }),
            self.verdict.as_ref().map(VerdictFilter::describe),
            // The 2.x table's numbers are steps.
            self.rule
                .as_ref()
                .map(|f| f.describe().replace("rule", "step")),
        ];
        let steps = given
            .into_iter()
            .zip(counts)
            .filter_map(|(what, n)| Some((what?, n)))
            .collect();
        (
            kept,
            Funnel2 {
                in_view: in_view.len(),
                steps,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_hold_the_classifications_error_and_the_dispositions_once() {
        let names = verdict_names();
        for n in [
            "absent",
            "resume",
            "resume/tool_results_partial",
            "tool_use_unresolved",
            "completed",
            "error",
            "stuck",
            "aborted",
            "joined",
            "damaged",
        ] {
            assert!(names.iter().any(|x| x == n), "{n}: {names:?}");
        }
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
    }

    #[test]
    fn views() {
        for v in ["expired", "all", "running", "joined"] {
            assert!(is_view(v), "{v}");
        }
        assert!(
            !is_view("failed"),
            "failed is a disposition, not a 2.x row status"
        );
    }
}
