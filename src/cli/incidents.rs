//! `turnscope incidents`: the stuck submissions (expired leases) grouped by the worker that held
//! their lease (`core::incidents`), each group with the command that acts on all of it.

use std::collections::HashMap;
use std::io::Write;

use serde_json::{json, Value};

use super::args::{Cli, SelectionArgs};
use super::{now_ms, CliError};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::incidents::{
    group, IncidentGroup, PlanKey, StuckRow, HEARTBEAT_MS, LEASE_MS,
};
use turnscope_core::text::sanitize;
use turnscope_engine::report::cost_text;
use turnscope_store::JournalStore;

/// A stuck submission's row facts and its plan, read once.
struct Stuck {
    id: String,
    owner: Option<String>,
    lease_expires_at: i64,
    plan: PlanKey,
    /// The cost since the input on the active path (`list`'s COST).
    cost: Option<f64>,
}

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let stuck = scan(store, cli, now)?;
    let rows: Vec<StuckRow> = stuck
        .iter()
        .map(|s| StuckRow {
            submission_id: &s.id,
            owner_id: s.owner.as_deref(),
            lease_expires_at: s.lease_expires_at,
            plan: s.plan.clone(),
        })
        .collect();
    let groups = group(&rows);
    let costs: HashMap<&str, Option<f64>> = stuck.iter().map(|s| (s.id.as_str(), s.cost)).collect();
    let cost_of = |g: &IncidentGroup| GroupCost::of(g, &costs);
    if json {
        let doc = json!({
            "schema": "turnscope.incidents/1",
            "format": turnscope_engine::report::JOURNAL_FORMAT,
            "database": store.location(),
            "now": now,
            "leaseMs": LEASE_MS,
            "heartbeatMs": HEARTBEAT_MS,
            "stuck": rows.len(),
            "groups": groups.iter().map(|g| group_json(g, now, &cost_of(g))).collect::<Vec<_>>(),
        });
        super::output::print_json(out, &doc)?;
        return Ok(());
    }
    if groups.is_empty() {
        writeln!(
            out,
            "no submission has an expired lease: no worker left anything stuck"
        )?;
        return Ok(());
    }
    write_intro(out, rows.len(), &groups, now, "")?;
    for g in &groups {
        write_group_head(out, g, now)?;
        writeln!(out, "  cost     {}", cost_of(g).text())?;
        if let Some(cmd) = list_command(g) {
            writeln!(out, "  list     {}", sanitize(&cmd))?;
        }
        writeln!(out, "  act      {}", sanitize(&act_command(g)))?;
    }
    Ok(())
}

/// The two lines before the groups: how many are stuck, held by how many workers, and what the
/// lease protocol lets be said (`more` added to the second).
pub(super) fn write_intro(
    out: &mut dyn Write,
    stuck: usize,
    groups: &[IncidentGroup],
    now: i64,
    more: &str,
) -> std::io::Result<()> {
    let workers = groups.iter().filter(|g| g.owner_id.is_some()).count();
    writeln!(
        out,
        "{} stuck submission{} (expired leases) held by {workers} worker{}{} at {}.",
        stuck,
        plural(stuck),
        plural(workers),
        if groups.len() > workers {
            ", and some with no owner recorded"
        } else {
            ""
        },
        iso_from_ms(now)
    )?;
    writeln!(
        out,
        "A live worker renews its leases every {} s to {} s ahead; a lease that expired was last \
         written {} s before.{more}",
        HEARTBEAT_MS / 1000,
        LEASE_MS / 1000,
        LEASE_MS / 1000
    )
}

/// A group's first lines: its headline, its owner, when its leases expired.
pub(super) fn write_group_head(
    out: &mut dyn Write,
    g: &IncidentGroup,
    now: i64,
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{}", sanitize(&g.headline(now)))?;
    if let Some(o) = &g.owner_id {
        writeln!(out, "  owner    {}", sanitize(o))?;
    }
    writeln!(
        out,
        "  expired  {} … {}",
        iso_from_ms(g.first_expiry),
        iso_from_ms(g.last_expiry)
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `word` as one shell word: as it is when it is only letters, digits and `-._:@/`, else in
/// single quotes. Owner and submission ids are database text: a command made from them is
/// pasted into a shell, where a `;` or a space must not act.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:@/".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command that lists the group's submissions (`None` for the rows without an owner, which
/// `--owner` cannot select).
pub fn list_command(g: &IncidentGroup) -> Option<String> {
    g.owner_id
        .as_ref()
        .map(|o| format!("turnscope list --owner {}", shell_word(o)))
}

/// The command that reconciles every submission of the group (the runtime's own writes for the
/// rule that fires on each): the worker's selection (`--all --owner`, resolved again and
/// previewed when it runs), or the ids of the rows without an owner, which `--owner` cannot
/// select.
pub fn act_command(g: &IncidentGroup) -> String {
    match &g.owner_id {
        Some(o) => format!(
            "turnscope --write reconcile --all --owner {}",
            shell_word(o)
        ),
        None => format!(
            "turnscope --write reconcile {}",
            g.submissions
                .iter()
                .map(|id| shell_word(id))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// A group's cost since the inputs: `list`'s COST summed over its submissions.
struct GroupCost {
    total: f64,
    /// Submissions without an input entry on the active path (no cost).
    without: usize,
}

impl GroupCost {
    fn of(g: &IncidentGroup, costs: &HashMap<&str, Option<f64>>) -> GroupCost {
        let mut c = GroupCost {
            total: 0.0,
            without: 0,
        };
        for id in &g.submissions {
            match costs.get(id.as_str()).copied().flatten() {
                Some(x) => c.total += x,
                None => c.without += 1,
            }
        }
        c
    }

    fn text(&self) -> String {
        let mut s = format!(
            "{} since the inputs (active paths, as list counts it",
            cost_text::money(self.total)
        );
        if self.without > 0 {
            s.push_str(&format!(
                "; {} without an input entry on the path",
                self.without
            ));
        }
        s.push(')');
        s
    }
}

fn group_json(g: &IncidentGroup, now: i64, cost: &GroupCost) -> Value {
    json!({
        "ownerId": g.owner_id,
        "count": g.count(),
        "firstLeaseExpiresAt": g.first_expiry,
        "lastLeaseExpiresAt": g.last_expiry,
        "stoppedRenewingAt": g.stopped_at_once().then(|| g.last_renewal()),
        "summary": g.headline(now),
        "plans": g.plans.iter().map(|p| {
            let (rule, result) = match &p.plan {
                PlanKey::Rule { rule, result } => (Some(*rule), Some(*result)),
                _ => (None, None),
            };
            json!({"rule": rule, "result": result, "label": p.plan.label(), "count": p.count})
        }).collect::<Vec<_>>(),
        "submissions": g.submissions,
        "costSinceInput": cost.total,
        "withoutInput": cost.without,
        "listCommand": list_command(g),
        "command": act_command(g),
    })
}

/// Every expired-lease submission with its plan, in sequence order: the selection `list` and
/// the bulk actions resolve (`select::scan`), in its default view (the expired leases).
fn scan(store: &dyn JournalStore, cli: &Cli, now: i64) -> Result<Vec<Stuck>, CliError> {
    let mut stuck = Vec::new();
    super::select::scan(
        store,
        &SelectionArgs::default(),
        cli.context_window,
        now,
        &mut |report| {
            let row = report.row();
            stuck.push(Stuck {
                plan: PlanKey::of(&report.plan),
                id: row.submission_id.clone(),
                owner: row.owner_id.clone(),
                lease_expires_at: row.lease_expires_at,
                cost: report.path_cost().map(|c| c.cost),
            });
        },
    )?;
    Ok(stuck)
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn ids_are_pasted_as_one_inert_shell_word() {
        let id = "a82b3d31-1044-4b16-a41d-2de0fc26ea1a";
        assert_eq!(shell_word(id), id);
        assert_eq!(shell_word("x; rm -rf ~"), "'x; rm -rf ~'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$(id)"), "'$(id)'");
        assert_eq!(shell_word(""), "''");
    }
}
