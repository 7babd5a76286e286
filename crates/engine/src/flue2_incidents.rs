//! The expired leases of a flue 2.x journal grouped by the worker that held them, as beta.7's
//! incidents (`core::recovery::incidents`: 2.x's lease protocol is the same, a 30 s lease
//! renewed every 10 s), each group with the reconciler steps `plan_flue2` says fire next. One
//! computation for `turnscope incidents` and the TUI's incidents screen: both draw
//! [`Flue2Incidents::doc`] (the CLI adds each group's `listCommand`, a shell line).

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use turnscope_core::recovery::incidents::{
    group, IncidentGroup, PlanKey, StuckRow, HEARTBEAT_MS, LEASE_MS,
};
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::flue2::{Flue2Options, Inspected, Streams};
use crate::flue2_cost::cost_of;
use turnscope_core::journal::cost::UsageSum;

/// One running submission whose lease expired, planned.
#[derive(Debug, Clone, PartialEq)]
pub struct Flue2Stuck {
    pub id: String,
    pub owner: Option<String>,
    pub lease_expires_at: i64,
    /// The step that fires (`step 6 → replace`).
    pub plan: PlanKey,
    /// Its number (`None` for the steps without one).
    pub step: Option<u8>,
    /// Its cost since the input (`flue2_cost`), where its conversation is read.
    pub cost: Option<UsageSum>,
}

/// The stuck submissions at `now` and their groups.
#[derive(Debug, Clone)]
pub struct Flue2Incidents {
    pub now: i64,
    pub stuck: Vec<Flue2Stuck>,
    pub groups: Vec<IncidentGroup>,
}

/// A group's plan: the step that fires (`step 6 → replace`).
fn plan_key(i: &Inspected<'_>) -> PlanKey {
    let step = i.plan.step;
    PlanKey::Disposition {
        label: match step.number() {
            Some(n) => format!("step {n} → {}", step.name()),
            None => step.name().to_string(),
        },
    }
}

/// Read the rows and the expired ones' streams in one snapshot, plan each at `now` (with the
/// deliveries joined into it) and group them by owner. Each stream is let go once its rows are
/// planned ([`Streams::visit_each`]): holding every stuck stream's fold took the 2 GB journal's
/// run to 140 MB.
pub fn incidents(
    reader: &Flue2SqliteReader,
    opts: &Flue2Options,
    now: i64,
) -> Result<Flue2Incidents, StoreError> {
    let mut planned: HashMap<String, Flue2Stuck> = HashMap::new();
    let rows = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        let joined = turnscope_core::flue2::joined_by_host(&all);
        let rows: Vec<_> = all.into_iter().filter(|r| r.lease_expired(now)).collect();
        let with_joined = rows.iter().map(|r| {
            let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
            (r, j)
        });
        Streams::visit_each(reader, with_joined, opts, now, &Streams::default(), |i| {
            planned.insert(i.row.submission_id.clone(), stuck_of(&i));
        })?;
        Ok(rows)
    })?;
    // In the rows' order; every row was visited.
    let stuck: Vec<Flue2Stuck> = rows
        .iter()
        .filter_map(|r| planned.remove(&r.submission_id))
        .collect();
    let groups = group(&stuck_rows(&stuck));
    Ok(Flue2Incidents { now, stuck, groups })
}

/// A stuck row as its inspection plans it.
fn stuck_of(i: &Inspected<'_>) -> Flue2Stuck {
    Flue2Stuck {
        id: i.row.submission_id.clone(),
        owner: i.row.owner_id.clone(),
        lease_expires_at: i.row.lease_expires_at,
        plan: plan_key(i),
        step: i.plan.step.number(),
        cost: cost_of(i).map(|c| c.total()),
    }
}

fn stuck_rows(stuck: &[Flue2Stuck]) -> Vec<StuckRow<'_>> {
    stuck
        .iter()
        .map(|s| StuckRow {
            submission_id: &s.id,
            owner_id: s.owner.as_deref(),
            lease_expires_at: s.lease_expires_at,
            plan: s.plan.clone(),
        })
        .collect()
}

impl Flue2Incidents {
    /// The cost since the inputs of the stuck submissions `ids` name, summed.
    pub fn cost_of<'a>(&self, ids: impl IntoIterator<Item = &'a String>) -> UsageSum {
        let by_id: HashMap<&str, &UsageSum> = self
            .stuck
            .iter()
            .filter_map(|s| s.cost.as_ref().map(|c| (s.id.as_str(), c)))
            .collect();
        ids.into_iter()
            .filter_map(|id| by_id.get(id.as_str()))
            .fold(UsageSum::default(), |a, c| a.plus(c))
    }

    /// Every stuck submission's cost since its input, summed.
    pub fn total_cost(&self) -> UsageSum {
        self.cost_of(self.stuck.iter().map(|s| &s.id))
    }

    /// The `turnscope.flue2.incidents/1` document, each group without its `listCommand` (the
    /// CLI's shell line, which it adds).
    pub fn doc(&self, opts: &Flue2Options, format_version: &str) -> Map<String, Value> {
        let now = self.now;
        let mut doc = opts.header("turnscope.flue2.incidents/1", format_version);
        doc.insert("now".into(), json!(now));
        doc.insert("leaseMs".into(), json!(LEASE_MS));
        doc.insert("heartbeatMs".into(), json!(HEARTBEAT_MS));
        doc.insert("stuck".into(), json!(self.stuck.len()));
        doc.insert("cost".into(), json!(self.total_cost()));
        let step_of: HashMap<String, Option<u8>> = self
            .stuck
            .iter()
            .map(|s| (s.plan.label(), s.step))
            .collect();
        doc.insert(
            "groups".into(),
            Value::Array(
                self.groups
                    .iter()
                    .map(|g| {
                        json!({
                            "ownerId": g.owner_id,
                            "count": g.count(),
                            "firstLeaseExpiresAt": g.first_expiry,
                            "lastLeaseExpiresAt": g.last_expiry,
                            "stoppedRenewingAt": g.stopped_at_once().then(|| g.last_renewal()),
                            "summary": g.headline(now),
                            "plans": g.plans.iter().map(|p| json!({
                                "step": step_of.get(&p.plan.label()).copied().flatten(),
                                "label": p.plan.label(),
                                "count": p.count,
                            })).collect::<Vec<_>>(),
                            "submissions": g.submissions,
                            "cost": self.cost_of(&g.submissions),
                        })
                    })
                    .collect(),
            ),
        );
        doc
    }
}
