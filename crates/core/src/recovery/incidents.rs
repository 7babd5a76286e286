//! Incidents: the stuck submissions (expired leases) grouped by the worker that held their lease
//! (`owner_id`), so a dead worker shows as one line ("worker 9f2c… stopped renewing at 03:11:34:
//! 17 stuck · 12 rule 6 → replacement · 5 rule 5 → completed") instead of 17 rows.
//!
//! What "stopped renewing" may claim comes from the runtime's lease protocol (spec §1.5, §5.1):
//! a Node coordinator writes `lease_expires_at = now + 30 000` when it claims or replaces an
//! attempt and renews every lease it holds to `now + 30 000` every 10 s. So a lease that expired
//! at `T` was last written at `T - 30 s`, and no lease of a group was written after its latest
//! expiry minus 30 s. When a group's leases expired within one heartbeat of each other, they were
//! renewed together until the worker stopped: that instant is the group's one stop time. When
//! they spread wider, the worker let some lapse while it still renewed others, and all that can
//! be said is the range they expired in. Pure: the caller passes the rows and `now`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::journal::time::{human_duration, iso_from_ms};
use crate::recovery::reconciler::RuleResult;

/// `LEASE_DURATION_MS` of the runtime (spec §1.5): every lease write is `now + 30 000`.
pub const LEASE_MS: i64 = 30_000;
/// The Node heartbeat (spec §1.5): every held lease is renewed this often.
pub const HEARTBEAT_MS: i64 = 10_000;

/// One stuck submission, as far as grouping needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct StuckRow<'a> {
    pub submission_id: &'a str,
    pub owner_id: Option<&'a str>,
    pub lease_expires_at: i64,
    /// What its recovery plan says happens next.
    pub plan: PlanKey,
}

/// What the recovery plan says happens to a stuck submission: the reconciler's rule and result,
/// a disposition without a rule (`damaged`, …), or not known yet (the TUI computes verdicts in
/// the background).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum PlanKey {
    Rule { rule: u8, result: RuleResult },
    Disposition { label: String },
    Computing,
}

impl PlanKey {
    /// The key of a computed plan.
    pub fn of(plan: &crate::recovery::reconciler::RecoveryPlan) -> PlanKey {
        match (plan.rule, plan.result) {
            (Some(rule), Some(result)) => PlanKey::Rule { rule, result },
            _ => PlanKey::Disposition {
                label: plan.disposition.label().to_string(),
            },
        }
    }

    /// `rule 6 → replacement`, `damaged`, `computing`.
    pub fn label(&self) -> String {
        match self {
            PlanKey::Rule { rule, result } => format!("rule {rule} → {result}"),
            PlanKey::Disposition { label } => label.clone(),
            PlanKey::Computing => "computing".to_string(),
        }
    }
}

/// How many submissions of a group share one plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanCount {
    pub plan: PlanKey,
    pub count: usize,
}

/// The stuck submissions one worker held (or those with no owner recorded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentGroup {
    /// `None`: the rows have no `owner_id` (not written by a Node claim).
    pub owner_id: Option<String>,
    /// Its submissions, by lease expiry, then id.
    pub submissions: Vec<String>,
    pub first_expiry: i64,
    pub last_expiry: i64,
    /// Submissions per plan, most first (then by plan).
    pub plans: Vec<PlanCount>,
}

impl IncidentGroup {
    pub fn count(&self) -> usize {
        self.submissions.len()
    }

    /// No lease of the group was written after this instant (its latest expiry minus one lease).
    pub fn last_renewal(&self) -> i64 {
        self.last_expiry - LEASE_MS
    }

    /// Whether the leases were renewed together until the worker stopped: they expired within
    /// one heartbeat of each other, and the group has an owner.
    pub fn stopped_at_once(&self) -> bool {
        self.owner_id.is_some() && self.last_expiry - self.first_expiry <= HEARTBEAT_MS
    }

    /// `worker 9f2c1a0b`, `no owner recorded` (the owner's short id: its full id is for pasting).
    pub fn who(&self) -> String {
        match &self.owner_id {
            Some(o) => format!("worker {}", crate::journal::submission_rows::short_id(o)),
            None => "no owner recorded".to_string(),
        }
    }

    /// When it happened, in the words the lease protocol allows (see the module doc).
    pub fn when(&self, now_ms: i64) -> String {
        if self.stopped_at_once() {
            let at = self.last_renewal();
            format!(
                "stopped renewing at {} ({} ago)",
                clock(at, now_ms),
                human_duration(now_ms - at)
            )
        } else if self.first_expiry == self.last_expiry {
            format!("lease expired at {}", clock(self.first_expiry, now_ms))
        } else {
            format!(
                "leases expired between {} and {}",
                clock(self.first_expiry, now_ms),
                clock(self.last_expiry, now_ms)
            )
        }
    }

    /// `17 stuck · 12 rule 6 → replacement · 5 rule 5 → completed`.
    pub fn counts(&self) -> String {
        let mut parts = vec![format!("{} stuck", self.count())];
        parts.extend(
            self.plans
                .iter()
                .map(|p| format!("{} {}", p.count, p.plan.label())),
        );
        parts.join(" · ")
    }

    /// The one line: who, when, how many and what happens to them.
    pub fn headline(&self, now_ms: i64) -> String {
        let sep = if self.stopped_at_once() { " " } else { ", " };
        format!(
            "{}{sep}{}: {}",
            self.who(),
            self.when(now_ms),
            self.counts()
        )
    }
}

/// `09:15:30 UTC` within a day of `now`, else `2026-01-04 09:15:30 UTC`.
pub fn clock(ms: i64, now_ms: i64) -> String {
    let iso = iso_from_ms(ms);
    if (now_ms - ms).abs() < 86_400_000 {
        format!("{} UTC", &iso[11..19])
    } else {
        format!("{} {} UTC", &iso[..10], &iso[11..19])
    }
}

/// Group `rows` by owner: one group per owner id, and one for the rows without an owner. Most
/// recent first (by the latest expiry), the group without an owner last.
pub fn group(rows: &[StuckRow]) -> Vec<IncidentGroup> {
    let mut by_owner: BTreeMap<Option<&str>, Vec<&StuckRow>> = BTreeMap::new();
    for r in rows {
        by_owner.entry(r.owner_id).or_default().push(r);
    }
    let mut groups: Vec<IncidentGroup> = by_owner
        .into_iter()
        .map(|(owner, mut members)| {
            members.sort_by(|a, b| {
                a.lease_expires_at
                    .cmp(&b.lease_expires_at)
                    .then(a.submission_id.cmp(b.submission_id))
            });
            let mut per_plan: BTreeMap<&PlanKey, usize> = BTreeMap::new();
            for m in &members {
                *per_plan.entry(&m.plan).or_default() += 1;
            }
            let mut plans: Vec<PlanCount> = per_plan
                .into_iter()
                .map(|(plan, count)| PlanCount {
                    plan: plan.clone(),
                    count,
                })
                .collect();
            // Most first; `Computing` sorts last among equals (it is the enum's last variant).
            plans.sort_by(|a, b| b.count.cmp(&a.count).then(a.plan.cmp(&b.plan)));
            IncidentGroup {
                owner_id: owner.map(str::to_string),
                first_expiry: members.first().map_or(0, |m| m.lease_expires_at),
                last_expiry: members.last().map_or(0, |m| m.lease_expires_at),
                submissions: members
                    .iter()
                    .map(|m| m.submission_id.to_string())
                    .collect(),
                plans,
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        a.owner_id
            .is_none()
            .cmp(&b.owner_id.is_none())
            .then(b.last_expiry.cmp(&a.last_expiry))
            .then(a.owner_id.cmp(&b.owner_id))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_767_604_800_000; // 2026-01-05T09:20:00Z

    fn rule(rule: u8, result: RuleResult) -> PlanKey {
        PlanKey::Rule { rule, result }
    }

    fn row<'a>(id: &'a str, owner: Option<&'a str>, expiry: i64, plan: PlanKey) -> StuckRow<'a> {
        StuckRow {
            submission_id: id,
            owner_id: owner,
            lease_expires_at: expiry,
            plan,
        }
    }

    #[test]
    fn one_group_per_owner_with_counts_per_plan_and_expiry_range() {
        let dead = Some("9f2c1a0b-0000-4000-8000-000000000001");
        let other = Some("11111111-0000-4000-8000-000000000002");
        let t = NOW - 4 * 60_000;
        let rows = vec![
            row("s3", dead, t + 2_000, rule(6, RuleResult::Replacement)),
            row("s1", dead, t, rule(6, RuleResult::Replacement)),
            row("s2", dead, t + 2_000, rule(5, RuleResult::Completed)),
            row("o1", other, t - 3_600_000, rule(9, RuleResult::Failed)),
            row("n1", None, t - 60_000, PlanKey::Computing),
            row("s4", dead, t + 9_000, rule(6, RuleResult::Replacement)),
        ];
        let g = group(&rows);
        assert_eq!(g.len(), 3);
        // Most recent first, the ownerless group last.
        assert_eq!(g[0].owner_id.as_deref(), dead);
        assert_eq!(g[1].owner_id.as_deref(), other);
        assert_eq!(g[2].owner_id, None);
        assert_eq!(g[0].submissions, ["s1", "s2", "s3", "s4"]);
        assert_eq!((g[0].first_expiry, g[0].last_expiry), (t, t + 9_000));
        assert_eq!(
            g[0].plans,
            vec![
                PlanCount {
                    plan: rule(6, RuleResult::Replacement),
                    count: 3
                },
                PlanCount {
                    plan: rule(5, RuleResult::Completed),
                    count: 1
                },
            ]
        );
        assert_eq!(g[2].submissions, ["n1"]);
    }

    #[test]
    fn a_worker_whose_leases_lapsed_together_stopped_renewing_one_lease_before_the_last() {
        let t = NOW - 4 * 60_000 - 30_000; // the last lease ran out 4m30s ago
        let rows = vec![
            row(
                "a",
                Some("9f2c1a0b-x"),
                t - 10_000,
                rule(6, RuleResult::Replacement),
            ),
            row("b", Some("9f2c1a0b-x"), t, rule(5, RuleResult::Completed)),
        ];
        let g = &group(&rows)[0];
        assert!(g.stopped_at_once());
        assert_eq!(g.last_renewal(), t - LEASE_MS);
        assert_eq!(
            g.headline(NOW),
            "worker 9f2c1a0b stopped renewing at 09:15:00 UTC (5m00s ago): \
             2 stuck · 1 rule 5 → completed · 1 rule 6 → replacement"
        );
    }

    #[test]
    fn leases_spread_wider_than_a_heartbeat_give_the_range_not_a_stop_time() {
        let t = NOW - 60_000;
        let rows = vec![
            row(
                "a",
                Some("w"),
                t - HEARTBEAT_MS - 1,
                rule(6, RuleResult::Replacement),
            ),
            row("b", Some("w"), t, rule(6, RuleResult::Replacement)),
        ];
        let g = &group(&rows)[0];
        assert!(!g.stopped_at_once());
        assert_eq!(
            g.when(NOW),
            "leases expired between 09:18:49 UTC and 09:19:00 UTC"
        );
        // Without an owner there is no worker to have stopped, however close the leases are.
        let rows = vec![row("c", None, t, PlanKey::Computing)];
        let g = &group(&rows)[0];
        assert!(!g.stopped_at_once());
        assert_eq!(
            g.headline(NOW),
            "no owner recorded, lease expired at 09:19:00 UTC: 1 stuck · 1 computing"
        );
    }

    #[test]
    fn old_times_carry_their_date_and_no_rows_give_no_groups() {
        assert_eq!(clock(NOW - 2 * 86_400_000, NOW), "2026-01-03 09:20:00 UTC");
        assert_eq!(clock(NOW - 1_000, NOW), "09:19:59 UTC");
        assert!(group(&[]).is_empty());
    }

    #[test]
    fn equal_counts_order_by_rule_and_computing_comes_last() {
        let rows = vec![
            row("a", Some("w"), NOW - 1, PlanKey::Computing),
            row("b", Some("w"), NOW - 1, rule(7, RuleResult::Requeued)),
            row(
                "c",
                Some("w"),
                NOW - 1,
                PlanKey::Disposition {
                    label: "damaged".into(),
                },
            ),
            row("d", Some("w"), NOW - 1, rule(2, RuleResult::Failed)),
        ];
        let labels: Vec<String> = group(&rows)[0]
            .plans
            .iter()
            .map(|p| p.plan.label())
            .collect();
        assert_eq!(
            labels,
            [
                "rule 2 → failed",
                "rule 7 → requeued",
                "damaged",
                "computing"
            ]
        );
    }
}
