//! The operator actions on a flue 2.x journal, as documents: `turnscope.flue2.action/1`, the
//! preview (the exact row change and the fence it is written under), the runtime's next pass on
//! the row after it (`plan_flue2`, computed, never stated), and what was applied or why it was
//! refused. The planning itself is `turnscope_core::flue2::actions`.

use serde_json::{json, Value};
use turnscope_core::flue2::{
    plan_action, ActionInput, Flue2Action, Flue2ActionPlan, Flue2Refusal, InspectFailure,
};
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
