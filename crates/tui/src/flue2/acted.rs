//! After a write in the 2.x screens: the prediction the write was previewed with, held against
//! what the runtime then did to the row (`turnscope_core::flue2::observed`, the `wait` command's
//! comparison). The row's NEXT shows `⋯ PREDICTED` until the runtime writes the row, then `✓` or
//! `✗`, and the status line says what it did.

use std::collections::HashMap;

use serde_json::{json, Value};
use turnscope_core::flue2::observed::{as_predicted, observe};
use turnscope_core::flue2::{Flue2ActionPlan, Flue2Plan, Flue2SubmissionRow};

/// A written row the runtime has not acted on yet.
pub struct Awaited {
    /// The row as the write left it.
    before: Flue2SubmissionRow,
    predicted: Flue2Plan,
}

/// The plan the runtime's action is held against: the next pass, or, for an abort under a live
/// lease, the step the owner's own abort settles it by (step 3's settlement: the pass at the
/// lease's end writes the same row).
pub fn predicted(plan: &Flue2ActionPlan) -> &Flue2Plan {
    match &plan.then {
        Some(then) if plan.fence.live_lease => then,
        _ => &plan.next,
    }
}

/// What a write leaves to watch, where its prediction is a reconciler step (a queued row's is
/// the claim loop's business, with no step to compare).
pub fn awaited(plan: &Flue2ActionPlan) -> Option<Awaited> {
    let p = predicted(plan);
    p.step.number().map(|_| Awaited {
        before: plan.row_after.clone(),
        predicted: p.clone(),
    })
}

/// The rows of `rows` the runtime has acted on since their write, each removed from `awaiting`:
/// `{submissionId, predicted, mark, line, asPredicted}`. A row gone from the journal counts as
/// acted on, not as predicted.
pub fn settle(awaiting: &mut HashMap<String, Awaited>, rows: &[Flue2SubmissionRow]) -> Vec<Value> {
    let by_id: HashMap<&str, &Flue2SubmissionRow> =
        rows.iter().map(|r| (r.submission_id.as_str(), r)).collect();
    let mut out = Vec::new();
    let mut done = Vec::new();
    for (id, a) in awaiting.iter() {
        let (what, detail, ok) = match by_id.get(id.as_str()) {
            None => ("vanished", "the row is gone".to_string(), false),
            Some(now) => match observe(&a.before, now) {
                None => continue,
                Some(seen) => {
                    let ok = as_predicted(&a.predicted, now, &seen);
                    let step = seen
                        .step
                        .map_or("no reconciler step".to_string(), |s| format!("step {s}"));
                    (seen.what, format!("{step}: {}", seen.detail), ok)
                }
            },
        };
        let predicted = a.predicted.step.column();
        let mark = if ok { "✓" } else { "✗" };
        out.push(json!({
            "submissionId": id,
            "predicted": predicted,
            "mark": mark,
            "asPredicted": ok,
            "line": format!(
                "{mark} {id}: the runtime did {what} ({detail}){}",
                if ok { ", as predicted".to_string() } else { format!("; predicted {predicted}") }
            ),
        }));
        done.push(id.clone());
    }
    for id in done {
        awaiting.remove(&id);
    }
    out
}
