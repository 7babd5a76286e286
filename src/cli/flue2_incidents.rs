//! `turnscope incidents` on a flue 2.x journal: the running submissions whose lease expired,
//! grouped by the worker that held the lease, as on beta.7 (`core::recovery::incidents`: 2.x's
//! lease protocol is the same, a 30 s lease renewed every 10 s), each group with the reconciler
//! steps `plan_flue2` says fire next and the command that lists its rows.

use std::collections::HashMap;
use std::io::Write;

use serde_json::{json, Value};

use super::args::Cli;
use super::common::{now_ms, CliError};
use super::incidents::{list_command, write_group_head, write_intro};
use super::output::print_json;
use turnscope_core::journal::cost::UsageSum;
use turnscope_core::recovery::incidents::{group, PlanKey, StuckRow, HEARTBEAT_MS, LEASE_MS};
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{Flue2Options, Inspected, Streams};
use turnscope_engine::flue2_cost::{cost_of, cost_text};
use turnscope_store::Flue2SqliteReader;

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

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let mut streams = Streams::default();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let stuck = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        for r in &all {
            if let (Some(host), "joined") = (&r.joined_into, r.status.as_str()) {
                joined
                    .entry(host.clone())
                    .or_default()
                    .push(r.submission_id.clone());
            }
        }
        let stuck: Vec<_> = all.into_iter().filter(|r| r.lease_expired(now)).collect();
        streams.load(reader, &stuck)?;
        Ok(stuck)
    })?;
    let inspected: Vec<Inspected<'_>> = stuck
        .iter()
        .map(|r| {
            let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
            streams.inspect(r, opts, j, now)
        })
        .collect();
    let rows: Vec<StuckRow> = inspected
        .iter()
        .map(|i| StuckRow {
            submission_id: &i.row.submission_id,
            owner_id: i.row.owner_id.as_deref(),
            lease_expires_at: i.row.lease_expires_at,
            plan: plan_key(i),
        })
        .collect();
    let groups = group(&rows);
    let fv = reader.format_version();
    // Cost since the input, per submission, summed per incident (group) and over all of them.
    let cost_by_id: HashMap<&str, UsageSum> = inspected
        .iter()
        .filter_map(|i| cost_of(i).map(|c| (i.row.submission_id.as_str(), c.total())))
        .collect();
    let sum_of = |ids: &mut dyn Iterator<Item = &String>| {
        ids.filter_map(|id| cost_by_id.get(id.as_str()))
            .fold(UsageSum::default(), |a, c| a.plus(c))
    };
    let all_cost = sum_of(&mut stuck.iter().map(|r| &r.submission_id));
    if json {
        let mut doc = opts.header("turnscope.flue2.incidents/1", fv);
        doc.insert("now".into(), json!(now));
        doc.insert("leaseMs".into(), json!(LEASE_MS));
        doc.insert("heartbeatMs".into(), json!(HEARTBEAT_MS));
        doc.insert("stuck".into(), json!(rows.len()));
        doc.insert("cost".into(), json!(all_cost));
        let step_of: HashMap<String, Option<u8>> = inspected
            .iter()
            .map(|i| (plan_key(i).label(), i.plan.step.number()))
            .collect();
        doc.insert(
            "groups".into(),
            Value::Array(
                groups
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
                            "cost": sum_of(&mut g.submissions.iter()),
                            "listCommand": list_command(g),
                        })
                    })
                    .collect(),
            ),
        );
        print_json(out, &Value::Object(doc))?;
        return Ok(());
    }
    writeln!(out, "{}", opts.header_line(fv))?;
    if groups.is_empty() {
        writeln!(
            out,
            "no submission has an expired lease: no worker left anything stuck"
        )?;
        return Ok(());
    }
    write_intro(
        out,
        rows.len(),
        &groups,
        now,
        " Steps are the runtime's reconciler's (`turnscope show ID` says why).",
    )?;
    for g in &groups {
        write_group_head(out, g, now)?;
        let c = sum_of(&mut g.submissions.iter());
        writeln!(
            out,
            "  cost     {} since the inputs ({} tokens)",
            cost_text(Some(&c)),
            c.total_tokens
        )?;
        if let Some(cmd) = list_command(g) {
            writeln!(out, "  list     {}", sanitize(&cmd))?;
        }
    }
    writeln!(
        out,
        "cost since the inputs, all stuck submissions: {} ({} tokens)",
        cost_text(Some(&all_cost)),
        all_cost.total_tokens
    )?;
    Ok(())
}
