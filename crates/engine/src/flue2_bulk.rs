//! A bulk apply on a flue 2.x SQLite journal, the one implementation both front ends use (the
//! CLI's `turnscope --write abort|requeue|extend|fail ID ID… | --all`, the TUI's marks): the
//! submissions read in one snapshot and each planned at the real clock by the one-submission
//! action's own planning ([`plan_on`]); the preview grouped by what is written and the runtime's
//! next pass on the row after it, the refusals with their reasons; then one fenced transaction
//! per submission (`Flue2SqliteWriter`, the fence of one action's), all under one batch id, where
//! a change since the preview stops only that one. The selection (`--all`'s filters, the marks)
//! and the confirmation stay with each front end.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};
use turnscope_core::flue2::{Flue2Action, Flue2ActionPlan, Flue2Refusal, Flue2SubmissionRow};
use turnscope_core::text::{plural, sanitize};
use turnscope_store::{
    Applied, ApplyError, AuditInfo, Flue2SqliteReader, Flue2SqliteWriter, StoreError,
};

use crate::flue2::{plan_json, Flue2Options, Inspected, Streams};
use crate::flue2_actions::{audit_summary, plan_on, preview_json};

/// How many submissions each group of the CLI's preview and summary names before "and N more"
/// (`--json` lists every one; the TUI's popup scrolls and shows them all).
pub const SHOWN_PER_GROUP: usize = 20;

/// What happened to one submission of the batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkOutcome {
    /// Planned, not written (a dry run, a declined batch).
    Planned,
    Applied(Applied),
    /// Refused by the writer: nothing written.
    Refused(Flue2Refusal),
    /// The fence found it changed since the preview: nothing written.
    Changed(Vec<String>),
    /// The write failed (the database, not the submission): nothing written.
    Error(String),
}

impl BulkOutcome {
    pub fn name(&self) -> &'static str {
        match self {
            BulkOutcome::Planned => "planned",
            BulkOutcome::Applied(_) => "applied",
            BulkOutcome::Refused(_) => "refused",
            BulkOutcome::Changed(_) => "changed",
            BulkOutcome::Error(_) => "error",
        }
    }
}

/// One submission of a batch: where it stood at the read, its plan or refusal, what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkItem {
    /// The full submission id.
    pub id: String,
    /// Its classification and the runtime's next step at the read.
    pub before: String,
    pub plan: Result<Flue2ActionPlan, Flue2Refusal>,
    pub outcome: BulkOutcome,
}

impl BulkItem {
    /// `action` planned on the inspected submission at `now_ms` (the real clock).
    pub fn planned(
        action: &Flue2Action,
        i: &Inspected<'_>,
        options: &Flue2Options,
        now_ms: i64,
    ) -> BulkItem {
        BulkItem {
            id: i.row.submission_id.clone(),
            before: format!("{} · next {}", i.label(), i.plan.step.column()),
            plan: plan_on(action, i, options, now_ms),
            outcome: BulkOutcome::Planned,
        }
    }

    /// The outcome as the document names it: a refusal at planning is `refused`.
    pub fn outcome_name(&self) -> &'static str {
        if self.plan.is_err() {
            "refused"
        } else {
            self.outcome.name()
        }
    }
}

/// What a group of the preview shares: the columns written and the next pass after the write.
pub fn group_key(p: &Flue2ActionPlan) -> String {
    let cols: Vec<&str> = p.changes.iter().map(|c| c.column).collect();
    let live = if p.fence.live_lease {
        " (under a live lease: its owner honours it)"
    } else {
        ""
    };
    format!(
        "write {}{live}; next: {}",
        cols.join(", "),
        p.next.step.column()
    )
}

/// The submissions `ids` name (full ids or prefixes, each once, in the order given), read in one
/// snapshot with their streams and the deliveries joined into each, each planned at `now_ms` with
/// the action `action_of` makes for it (the TUI's extend depends on the step that ends the row).
pub fn plan_ids(
    reader: &Flue2SqliteReader,
    options: &Flue2Options,
    ids: &[String],
    action_of: impl Fn(&Inspected<'_>) -> Flue2Action,
    now_ms: i64,
) -> Result<Vec<BulkItem>, StoreError> {
    let mut streams = Streams::default();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    let rows = reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        joined = turnscope_core::flue2::joined_by_host(&all);
        let mut rows: Vec<Flue2SubmissionRow> = Vec::new();
        for q in ids {
            let r = reader.find_submission(q)?;
            if !rows.iter().any(|x| x.submission_id == r.submission_id) {
                rows.push(r);
            }
        }
        streams.load(reader, rows.iter())?;
        Ok(rows)
    })?;
    Ok(rows
        .iter()
        .map(|r| {
            let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
            let i = streams.inspect(r, options, j, now_ms);
            BulkItem::planned(&action_of(&i), &i, options, now_ms)
        })
        .collect())
}

/// The preview's first line: `abort on 3 submissions (WHAT), each planned at the real clock; …`.
pub fn preview_heading(name: &str, n: usize, what: &str) -> String {
    format!(
        "{name} on {} ({what}), each planned at the real clock; the runtime's next pass is computed on each row after its write:",
        plural(n as u64, "submission", "submissions")
    )
}

/// The preview under its heading: one group per columns written and next pass (`  2 to write
/// abort_requested_at; next: 3 abort`, then each id with where it stood), then the refusals
/// with their reasons; each list cut after `shown` ids.
pub fn preview_lines(items: &[BulkItem], shown: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut groups: BTreeMap<String, Vec<&BulkItem>> = BTreeMap::new();
    for i in items {
        if let Ok(p) = &i.plan {
            groups.entry(group_key(p)).or_default().push(i);
        }
    }
    let more = |out: &mut Vec<String>, n: usize| {
        if n > shown {
            out.push(format!(
                "    and {} more (--json lists every one)",
                n - shown
            ));
        }
    };
    for (key, members) in &groups {
        out.push(format!("  {} to {}", members.len(), sanitize(key)));
        for i in members.iter().take(shown) {
            out.push(format!("    {}  ({})", i.id, sanitize(&i.before)));
        }
        more(&mut out, members.len());
    }
    let refused: Vec<(&str, &Flue2Refusal)> = items
        .iter()
        .filter_map(|i| i.plan.as_ref().err().map(|r| (i.id.as_str(), r)))
        .collect();
    if !refused.is_empty() {
        out.push(format!(
            "  {} refused (nothing written to them):",
            refused.len()
        ));
        for (id, r) in refused.iter().take(shown) {
            out.push(format!("    {id}: {}", sanitize(&r.reason)));
        }
        more(&mut out, refused.len());
    }
    out
}

/// How many submissions the batch writes to (those planned).
pub fn writes(items: &[BulkItem]) -> usize {
    items.iter().filter(|i| i.plan.is_ok()).count()
}

/// What a batch came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkCounts {
    pub applied: usize,
    /// Refused at planning or by the writer.
    pub refused: usize,
    /// Changed since the preview (the fence).
    pub changed: usize,
    pub errors: usize,
}

pub fn counts(items: &[BulkItem]) -> BulkCounts {
    let mut c = BulkCounts::default();
    for i in items {
        match (&i.outcome, &i.plan) {
            (BulkOutcome::Applied(_), _) => c.applied += 1,
            (BulkOutcome::Refused(_), _) | (_, Err(_)) => c.refused += 1,
            (BulkOutcome::Changed(_), _) => c.changed += 1,
            (BulkOutcome::Error(_), _) => c.errors += 1,
            (BulkOutcome::Planned, Ok(_)) => {}
        }
    }
    c
}

/// The `items` of `turnscope.flue2.bulk/1`: each submission's outcome, preview, next pass,
/// refusal and audit id.
pub fn items_json(items: &[BulkItem]) -> Vec<Value> {
    items
        .iter()
        .map(|i| {
            let plan = i.plan.as_ref().ok();
            let refusal = match (&i.outcome, &i.plan) {
                (BulkOutcome::Changed(d), _) => Some(json!({
                    "reason": "the submission changed since the preview",
                    "instead": format!("run `turnscope show {}` to see its current state", i.id),
                    "changed": d,
                })),
                (BulkOutcome::Error(e), _) => {
                    Some(json!({"reason": e, "instead": null, "changed": []}))
                }
                (BulkOutcome::Refused(r), _) | (_, Err(r)) => {
                    Some(json!({"reason": r.reason, "instead": r.instead, "changed": []}))
                }
                _ => None,
            };
            json!({
                "submissionId": i.id,
                "before": i.before,
                "outcome": i.outcome_name(),
                "preview": plan.map_or(Value::Null, preview_json),
                "next": plan.map_or(Value::Null, |p| plan_json(&p.next)),
                "refused": refusal,
                "auditId": match &i.outcome { BulkOutcome::Applied(a) => json!(a.audit_id), _ => Value::Null },
            })
        })
        .collect()
}

/// Why nothing was written to an item at the apply (the fence, the database, the writer), as the
/// summary says it; `None` for one applied, or refused at planning (the preview said that).
pub fn unwritten_line(i: &BulkItem) -> Option<String> {
    Some(match &i.outcome {
        BulkOutcome::Changed(d) => format!(
            "changed since the preview, nothing written: {}",
            d.join("; ")
        ),
        BulkOutcome::Error(e) => format!("failed, nothing written: {e}"),
        BulkOutcome::Refused(r) => format!("refused, nothing written: {}", r.reason),
        BulkOutcome::Planned | BulkOutcome::Applied(_) => return None,
    })
}

/// Who applies a batch, and under which batch id, for each write's audit record.
#[derive(Debug, Clone)]
pub struct BulkAudit {
    pub operator: String,
    /// The action's name (`abort`, …).
    pub action: String,
    pub reason: Option<String>,
    pub batch_id: String,
}

/// Write every planned item, one fenced transaction with its audit record each (the fence re-reads
/// the row inside the write's transaction, on the real clock), each outcome recorded on its item.
/// `before(n)` runs before the n-th write (the CLI's pacing), `after()` after each (its progress).
pub fn apply_all(
    writer: &mut Flue2SqliteWriter,
    items: &mut [BulkItem],
    audit: &BulkAudit,
    mut before: impl FnMut(usize),
    mut after: impl FnMut(),
) {
    for (n, item) in items.iter_mut().filter(|i| i.plan.is_ok()).enumerate() {
        before(n);
        let Ok(plan) = &item.plan else { continue };
        let info = AuditInfo {
            operator: audit.operator.clone(),
            action: audit.action.clone(),
            reason: audit.reason.clone(),
            summary: audit_summary(plan),
            now_ms: turnscope_store::clock::now_ms(),
            batch_id: Some(audit.batch_id.clone()),
            side_effects: None,
        };
        item.outcome = match writer.apply(&plan.fence, &plan.changes, &info) {
            Ok(a) => BulkOutcome::Applied(a),
            Err(ApplyError::Fenced(d)) => BulkOutcome::Changed(d),
            Err(ApplyError::Store(e)) => BulkOutcome::Error(e.to_string()),
            Err(e) => BulkOutcome::Refused(Flue2Refusal {
                reason: e.to_string(),
                instead: format!("run `turnscope show {}` to see its current state", item.id),
            }),
        };
        after();
    }
}
