//! The operator actions on a flue 2.x journal, as documents: `turnscope.flue2.action/1`, the
//! preview (the exact row change and the fence it is written under), the runtime's next pass on
//! the row after it (`plan_flue2`, computed, never stated), and what was applied or why it was
//! refused. The planning itself is `turnscope_core::flue2::actions`.

use serde_json::{json, Value};
use turnscope_core::flue2::{
    plan_action, ActionInput, Flue2Action, Flue2ActionPlan, Flue2Fence, Flue2Refusal,
    InspectFailure,
};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::changes::SqlValue;
use turnscope_store::Applied;

use crate::flue2::{plan_json, Flue2Options, Inspected};

/// The action planned on an inspected submission at `now_ms` (the real clock).
pub fn plan_on(
    action: &Flue2Action,
    i: &Inspected<'_>,
    options: &Flue2Options,
    now_ms: i64,
) -> Result<Flue2ActionPlan, Flue2Refusal> {
    plan_action(
        action,
        &ActionInput {
            row: i.row,
            instance: i.instance,
            conversation: i.conversation,
            classification: match (&i.verdict, i.failure) {
                (Ok(c), _) => Ok(c),
                (Err(e), kind) => Err((kind.unwrap_or(InspectFailure::Unloadable), e.as_str())),
            },
            joined: &i.joined,
            now_ms,
            variant: options.variant,
        },
    )
}

/// What happened to the action.
pub enum ActionResult<'a> {
    /// Refused before anything was written (the state does not allow it).
    Refused(&'a Flue2Refusal),
    /// Previewed only (`--dry-run`).
    Previewed(&'a Flue2ActionPlan),
    /// The state changed between the preview and the write: nothing written.
    Fenced(&'a Flue2ActionPlan, &'a [String]),
    Applied(&'a Flue2ActionPlan, &'a Applied),
}

/// The `preview` object: the table, the key, each column before and after, and the fence.
pub fn preview_json(p: &Flue2ActionPlan) -> Value {
    json!({
        "table": "flue_agent_submissions",
        "key": {"submission_id": p.fence.submission_id},
        "changes": p.changes,
        "fence": p.fence,
        "notes": p.notes,
    })
}

/// `turnscope.flue2.action/1`.
pub fn action_json(
    options: &Flue2Options,
    format_version: &str,
    action: &str,
    submission_id: &str,
    result: ActionResult<'_>,
) -> Value {
    let mut o = options.header("turnscope.flue2.action/1", format_version);
    o.insert("action".into(), json!(action));
    o.insert("submissionId".into(), json!(submission_id));
    let plan = match &result {
        ActionResult::Refused(_) => None,
        ActionResult::Previewed(p) | ActionResult::Fenced(p, _) | ActionResult::Applied(p, _) => {
            Some(*p)
        }
    };
    o.insert(
        "dryRun".into(),
        json!(matches!(result, ActionResult::Previewed(_))),
    );
    o.insert("preview".into(), plan.map_or(Value::Null, preview_json));
    o.insert(
        "next".into(),
        plan.map_or(Value::Null, |p| plan_json(&p.next)),
    );
    o.insert(
        "then".into(),
        plan.and_then(|p| p.then.as_ref())
            .map_or(Value::Null, plan_json),
    );
    // What `then` is: the claim after a requeue, or the pass after a live lease's end.
    o.insert(
        "thenWhen".into(),
        match plan.filter(|p| p.then.is_some()) {
            Some(p) if p.fence.live_lease => json!("lease_end"),
            Some(_) => json!("claimed_again"),
            None => Value::Null,
        },
    );
    o.insert(
        "refused".into(),
        match &result {
            ActionResult::Refused(r) => {
                json!({"reason": r.reason, "instead": r.instead, "changed": []})
            }
            ActionResult::Fenced(_, changed) => json!({
                "reason": "the submission changed since the preview: nothing written",
                "instead": "look again with `turnscope show`",
                "changed": changed,
            }),
            _ => Value::Null,
        },
    );
    o.insert(
        "applied".into(),
        match &result {
            ActionResult::Applied(_, a) => json!({
                "auditId": a.audit_id,
                "rowsWritten": a.rows_written,
                "lockHeldMs": a.lock_held.as_secs_f64() * 1000.0,
            }),
            _ => Value::Null,
        },
    );
    Value::Object(o)
}

fn value(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => "NULL".into(),
        SqlValue::Int(i) => i.to_string(),
        SqlValue::Text(t) => format!("{t:?}"),
    }
}

/// A time column's value with its instant (`1733…  (2026-…Z)`).
fn timed(column: &str, v: &SqlValue) -> String {
    match v {
        SqlValue::Int(ms) if *ms > 0 && column.ends_with("_at") => {
            format!("{ms} ({})", iso_from_ms(*ms))
        }
        _ => value(v),
    }
}

/// The audit row's summary: the columns written and the next pass predicted (the CLI's and the
/// TUI's audit records say the same).
pub fn audit_summary(p: &Flue2ActionPlan) -> String {
    let cols: Vec<String> = p
        .changes
        .iter()
        .map(|c| match c.column {
            "settlement_record" => "settlement_record (the submission_settled record)".into(),
            col => format!("{col} {} → {}", value(&c.before), value(&c.after)),
        })
        .collect();
    format!("{}; next pass: {}", cols.join(", "), p.next.step.column())
}

/// What the fence holds of the lease, in words.
fn lease_fence(f: &Flue2Fence, now_ms: i64) -> String {
    if f.live_lease {
        format!(
            "the lease not held (live for {} ms more: its owner renews it and honours the intent)",
            f.lease_expires_at - now_ms
        )
    } else if f.lease_expires_at <= 0 {
        "lease_expires_at = 0 (no lease)".into()
    } else {
        format!(
            "lease_expires_at = {} (ended {} ms ago; re-checked on the real clock)",
            f.lease_expires_at,
            now_ms - f.lease_expires_at
        )
    }
}

/// The preview's lines before the next pass: what is written, the fence, each column before and
/// after, the notes. Raw database text: a front end makes it terminal-safe.
pub fn preview_lines(p: &Flue2ActionPlan, now_ms: i64) -> Vec<String> {
    let f = &p.fence;
    let mut out = vec![
        format!(
            "{} {}: one row of flue_agent_submissions, written in one fenced transaction",
            p.action, f.submission_id
        ),
        format!(
            "  fence: status = {}, attempt_id = {}, owner_id = {}, {}{}",
            f.status,
            f.attempt_id.as_deref().unwrap_or("NULL"),
            f.owner_id.as_deref().unwrap_or("NULL"),
            lease_fence(f, now_ms),
            if f.no_joined {
                ", no delivery joined into it"
            } else {
                ""
            }
        ),
    ];
    for c in &p.changes {
        out.push(format!(
            "  {:<22}{} → {}",
            c.column,
            timed(c.column, &c.before),
            timed(c.column, &c.after)
        ));
    }
    for n in &p.notes {
        out.push(format!("  note: {n}"));
    }
    out
}
