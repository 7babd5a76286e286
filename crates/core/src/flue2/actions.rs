//! Operator actions on a flue 2.x submission row, planned without I/O: given the row, the folded
//! instance, the classification and `now`, the exact row change (each column before and after)
//! or a refusal with its reason; and the runtime's next pass predicted by [`plan_flue2`] run on
//! the row *as the change leaves it*, so that what a preview says happens next is computed.
//!
//! Each action writes only `flue_agent_submissions` columns, in a form the runtime itself writes
//! and then completes (flue 2.1.0's `sql-agent-execution-store-CS3_7p5s.mjs`, SAES):
//!
//! * **abort**: `abort_requested_at` set, as `requestSessionAbort` (SAES:482; the runtime's `abortInstance`, BP:1326, sets it on every unsettled row of the instance, turnscope on the one row) sets it; the next
//!   pass's step 3 settles the submission `aborted` (or step 2 `completed`, which wins over an
//!   abort intent: refused here, since the intent would change nothing).
//! * **requeue**: `requeueSubmission`'s columns (SAES:466), only where the runtime's own next
//!   step is the requeue (step 7: the input entry is absent) and no delivery is joined into it.
//! * **extend**: `max_attempts` and/or `timeout_at`, which the reconciler's steps 4 and 5 read.
//! * **fail**: a reserved settlement, as `reserveSubmissionSettlement` (SAES:494) reserves one:
//!   `terminalizing` with the `submission_settled` record the runtime would build
//!   (`settleSubmissionWithRecord`, CSS:5266), outcome `failed`, error an `OperationFailedError`.
//!   The pass's pending-settlement step (`finalizePendingSettlement`, CSS:5368) appends the record
//!   and settles the row, so every waiter gets its `submission_settled`.
//!
//! Nothing is appended to a conversation stream: an append would need the producer epoch a live
//! writer holds, and would fence that writer out (docs/flue2.md).
//!
//! Every action is refused under a lease that has not ended (the live owner's writes would race
//! it) and on any row the expired-lease scan does not list: only rows the runtime's next pass
//! reconciles are written, so that pass is what the preview predicts.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::classify::{Flue2Classification, Flue2Variant};
use super::fold::InstanceState;
use super::reconciler::{plan_flue2, Flue2Plan, Flue2Step, InspectFailure, ReconcileInput};
use super::rows::Flue2SubmissionRow;
use super::state::Conversation;
use super::writes::{batch_at_leaf, ghost_at_leaf};
use crate::journal::time::iso_from_ms;
use crate::recovery::changes::SqlValue;
use crate::recovery::classify::SubmissionState;

/// The longest deadline `extend --deadline` sets, and the most attempts `--attempts` adds (as
/// beta.7's `extend`).
pub const MAX_EXTEND_MS: i64 = 365 * 86_400_000;
pub const MAX_EXTEND_ATTEMPTS: i64 = 1_000_000;

/// What the operator asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flue2Action {
    Abort,
    Requeue,
    /// A new deadline `now + deadline_ms` and/or `attempts` more than are left.
    Extend {
        deadline_ms: Option<i64>,
        attempts: Option<i64>,
    },
    /// Give up: a reserved `failed` settlement carrying `reason`.
    Fail {
        reason: String,
    },
}

impl Flue2Action {
    pub fn name(&self) -> &'static str {
        match self {
            Flue2Action::Abort => "abort",
            Flue2Action::Requeue => "requeue",
            Flue2Action::Extend { .. } => "extend",
            Flue2Action::Fail { .. } => "fail",
        }
    }
}

/// Why an action is refused, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flue2Refusal {
    pub reason: String,
    pub instead: String,
}

fn refuse(reason: impl Into<String>, instead: impl Into<String>) -> Flue2Refusal {
    Flue2Refusal {
        reason: reason.into(),
        instead: instead.into(),
    }
}

/// One column of the row, before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flue2ColumnChange {
    pub column: &'static str,
    pub before: SqlValue,
    pub after: SqlValue,
}

/// The state the preview read, which the write re-checks in its transaction (with the real
/// clock: the lease must still have ended). The runtime fences its own writes on `status` and
/// `attempt_id` (`WHERE submission_id = ? AND status = 'running' AND attempt_id = ?`); turnscope
/// also holds the owner and the lease as read, and every column it changes as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flue2Fence {
    pub submission_id: String,
    pub status: String,
    pub attempt_id: Option<String>,
    pub owner_id: Option<String>,
    pub lease_expires_at: i64,
    /// No delivery may be joined into it (`joined_into` = it, status `joining`/`joined`).
    pub no_joined: bool,
    /// An abort intent under a live lease: the lease is neither held as read (the live owner
    /// renews it) nor required to have ended, as the runtime's own `requestSessionAbort` holds
    /// neither. Every other write needs the lease as read and ended on the real clock.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub live_lease: bool,
}

/// An accepted action: the exact write and what the runtime does next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flue2ActionPlan {
    pub action: &'static str,
    pub fence: Flue2Fence,
    pub changes: Vec<Flue2ColumnChange>,
    /// The row as the write leaves it.
    #[serde(skip)]
    pub row_after: Flue2SubmissionRow,
    /// The runtime's next pass on the row after the write (`plan_flue2`).
    pub next: Flue2Plan,
    /// For a requeue: what the next claim does (`plan_flue2`'s step 7 on the row before).
    pub then: Option<Flue2Plan>,
    /// Facts of the row the preview states beside the plan (each computed from the row).
    pub notes: Vec<String>,
}

impl Flue2ActionPlan {
    /// What [`then`](Flue2ActionPlan::then) is, as a preview's heading.
    pub fn then_heading(&self) -> &'static str {
        if self.fence.live_lease {
            "were the owner to stop renewing its lease, the pass after the lease's end:"
        } else {
            "once the runtime claims it again (its own requeue's step 7 and resume):"
        }
    }
}

/// Everything planning reads (the same as the reconciler's input).
pub struct ActionInput<'a> {
    pub row: &'a Flue2SubmissionRow,
    pub instance: Option<&'a InstanceState>,
    pub conversation: Option<&'a Conversation>,
    pub classification: Result<&'a Flue2Classification, (InspectFailure, &'a str)>,
    pub joined: &'a [String],
    pub now_ms: i64,
    pub variant: Flue2Variant,
}

impl<'a> ActionInput<'a> {
    fn plan_for(&self, row: &'a Flue2SubmissionRow) -> Flue2Plan {
        plan_flue2(&ReconcileInput {
            row,
            instance: self.instance,
            conversation: self.conversation,
            classification: self.classification,
            joined: self.joined,
            now_ms: self.now_ms,
            variant: self.variant,
        })
    }
}

/// The row change `action` makes on `input.row`, or why it is refused.
pub fn plan_action(
    action: &Flue2Action,
    input: &ActionInput<'_>,
) -> Result<Flue2ActionPlan, Flue2Refusal> {
    let row = input.row;
    if !row.not_utf8.is_empty() {
        return Err(refuse(
            format!(
                "the submission row is damaged: {} not valid UTF-8 (read with replacement characters, as the runtime reads it)",
                row.not_utf8.join(", ")
            ),
            "repair the row by hand first; turnscope never writes a row whose bytes it could not keep",
        ));
    }
    let now = input.now_ms;
    let current = input.plan_for(row);
    let mut notes = Vec::new();
    let mut then = None;
    let mut changes = Vec::new();
    let mut after = row.clone();
    let mut no_joined = false;
    let mut live_lease = false;
    match action {
        Flue2Action::Abort => {
            check_abortable(row, &current)?;
            if let Some(at) = row.abort_requested_at {
                return Err(refuse(
                    format!(
                        "an abort is already requested (abort_requested_at {})",
                        iso_from_ms(at)
                    ),
                    "the runtime's next pass acts on it: look with `turnscope show`",
                ));
            }
            if current.step == Flue2Step::Completed {
                return Err(refuse(
                    format!("the classification is completed: the runtime's next pass settles it completed whatever an abort intent says ({})", current.why),
                    "leave it to the runtime's next pass",
                ));
            }
            after.abort_requested_at = Some(now);
            changes.push(int_change("abort_requested_at", None, Some(now)));
            if current.step == Flue2Step::LeaseHeld {
                live_lease = true;
                // Were the owner to stop renewing, the expired-lease pass after the lease's end
                // is the one that acts: planned on the row as the write leaves it.
                let at_end = ActionInput {
                    now_ms: row.lease_expires_at.saturating_add(1),
                    ..*input
                };
                then = Some(at_end.plan_for(&after));
                notes.push(format!(
                    "the lease is live until {} (owner {}): the owner honours the intent itself, and `undo` can recall it only until the owner renews the lease or reads it",
                    iso_from_ms(row.lease_expires_at),
                    row.owner_id.as_deref().unwrap_or("-")
                ));
            }
        }
        Flue2Action::Requeue => {
            check_reconcilable(row, now, &current)?;
            if !input.joined.is_empty() {
                return Err(refuse(
                    format!(
                        "{} deliver{} joined into it ({}): a requeued row would leave them joined to an attempt that no longer exists",
                        input.joined.len(),
                        if input.joined.len() == 1 { "y is" } else { "ies are" },
                        input.joined.join(", ")
                    ),
                    "use abort or fail, whose settlement settles the joined deliveries with it",
                ));
            }
            if current.step != Flue2Step::Requeue {
                return Err(refuse(
                    format!(
                        "the runtime would not requeue it: its next pass takes step {} ({})",
                        current.step.column(),
                        current.why
                    ),
                    requeue_instead(row, &current),
                ));
            }
            no_joined = true;
            after.status = "queued".into();
            after.attempt_id = None;
            after.input_applied_at = None;
            after.started_at = None;
            after.owner_id = None;
            after.lease_expires_at = 0;
            changes.push(text_change("status", Some(&row.status), Some("queued")));
            changes.push(text_change("attempt_id", row.attempt_id.as_deref(), None));
            changes.push(int_change("input_applied_at", row.input_applied_at, None));
            changes.push(int_change("started_at", row.started_at, None));
            changes.push(text_change("owner_id", row.owner_id.as_deref(), None));
            changes.push(int_change(
                "lease_expires_at",
                Some(row.lease_expires_at),
                Some(0),
            ));
            changes.retain(|c| c.before != c.after);
            notes.push(format!(
                "the deadline is recomputed: the next claim keeps timeout_at {} (it sets one only where it is 0) and sets max_attempts to 10; the attempt that applies the input then sets max_attempts and timeout_at again from the agent's durability settings (input_applied_at is cleared)",
                row.timeout_at
            ));
            then = Some(current.clone());
        }
        Flue2Action::Extend {
            deadline_ms,
            attempts,
        } => {
            check_reconcilable(row, now, &current)?;
            if matches!(current.step, Flue2Step::Completed | Flue2Step::Abort) {
                return Err(refuse(
                    format!(
                        "extending changes nothing: the runtime's next pass takes step {} whatever the budget and deadline ({})",
                        current.step.column(),
                        current.why
                    ),
                    "leave it to the runtime's next pass",
                ));
            }
            if deadline_ms.is_none() && attempts.is_none() {
                return Err(refuse(
                    "nothing to extend",
                    "pass --deadline DURATION (e.g. 1h) and/or --attempts N",
                ));
            }
            if let Some(d) = *deadline_ms {
                if !(1..=MAX_EXTEND_MS).contains(&d) {
                    return Err(refuse(
                        format!("a deadline {d} ms from now is out of range"),
                        "pass a duration from 1ms to 365d",
                    ));
                }
                after.timeout_at = now + d;
                changes.push(int_change(
                    "timeout_at",
                    Some(row.timeout_at),
                    Some(after.timeout_at),
                ));
            }
            if let Some(n) = *attempts {
                if !(1..=MAX_EXTEND_ATTEMPTS).contains(&n) {
                    return Err(refuse(
                        format!("{n} more attempts is out of range"),
                        format!("pass --attempts from 1 to {}", MAX_EXTEND_ATTEMPTS),
                    ));
                }
                // N more than are left now: a spent budget counts from the attempts used.
                after.max_attempts = row.max_attempts.max(row.attempt_count) + n;
                changes.push(int_change(
                    "max_attempts",
                    Some(row.max_attempts),
                    Some(after.max_attempts),
                ));
            }
            if row.input_applied_at.is_none() {
                notes.push("the input is not applied yet (input_applied_at is empty): the attempt that applies it sets max_attempts and timeout_at again from the agent's durability settings (markSubmissionInputApplied)".into());
            }
        }
        Flue2Action::Fail { reason } => {
            check_reconcilable(row, now, &current)?;
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(refuse("fail needs a reason", "say why with --reason"));
            }
            if current.step == Flue2Step::Completed {
                return Err(refuse(
                    format!("the classification is completed: the response is in the conversation and the runtime's next pass settles it completed ({})", current.why),
                    "leave it to the runtime's next pass",
                ));
            }
            if !input.joined.is_empty() {
                return Err(refuse(
                    format!("deliveries are joined into it ({}): turnscope does not predict how the runtime settles them with a reserved settlement", input.joined.join(", ")),
                    "use abort: the runtime's abort settles the joined deliveries with it",
                ));
            }
            let conv = settlement_conversation(input).ok_or_else(|| {
                refuse(
                    "no conversation of the instance holds an entry of it, and there is no default conversation: the runtime settles such a row without a record, which turnscope does not reserve",
                    "use abort: the runtime settles it aborted itself",
                )
            })?;
            if let Some(scope) = input.conversation {
                if batch_at_leaf(scope, Some(&row.submission_id), input.variant).is_some() {
                    return Err(refuse(
                        "its tool batch is at the leaf, unresolved: a reserved settlement leaves it so, where the runtime's own failure settles it with interrupted markers first",
                        "use abort: the runtime's abort step marker-settles the batch, appends the submission_aborted signal and settles it",
                    ));
                }
                if ghost_at_leaf(scope, Some(&row.submission_id)).is_some() {
                    notes.push("its in-progress message at the leaf is dropped by the settlement record (the runtime's fold drops a settled submission's in-progress messages), not converged".into());
                }
            }
            no_joined = true;
            let (record_id, record) = failed_settlement(row, conv, reason, now);
            after.status = "terminalizing".into();
            after.settlement_record_id = Some(record_id.clone());
            after.settlement_record = Some(record.clone());
            if after.started_at.is_none() {
                after.started_at = Some(now);
            }
            changes.push(text_change(
                "status",
                Some(&row.status),
                Some("terminalizing"),
            ));
            changes.push(text_change(
                "settlement_record_id",
                row.settlement_record_id.as_deref(),
                Some(&record_id),
            ));
            changes.push(text_change(
                "settlement_record",
                row.settlement_record.as_deref(),
                Some(&record),
            ));
            if row.started_at.is_none() {
                changes.push(int_change("started_at", None, Some(now)));
            }
        }
    }
    if changes.iter().all(|c| c.before == c.after) {
        return Err(refuse(
            "the row already holds these values: nothing to write",
            "look with `turnscope show`",
        ));
    }
    let next = input.plan_for(&after);
    Ok(Flue2ActionPlan {
        action: action.name(),
        fence: Flue2Fence {
            submission_id: row.submission_id.clone(),
            status: row.status.clone(),
            attempt_id: row.attempt_id.clone(),
            owner_id: row.owner_id.clone(),
            lease_expires_at: row.lease_expires_at,
            no_joined,
            live_lease,
        },
        changes,
        row_after: after,
        next,
        then,
        notes,
    })
}

/// Where an abort intent is honoured: on a row the expired-lease pass reconciles (step 3), under
/// a live lease (the owner's deadline scan, `enforceActiveDeadlines`, BP:1028, aborts the live
/// attempt), and on a queued row (unready: the unready pass settles it `aborted`, BP:1127; ready:
/// the attempt that claims it settles it `aborted` before anything else, CSS:5149), the statuses
/// the runtime's own `requestSessionAbort` (SAES:482) writes, less the joined deliveries, which
/// settle with the submission they joined.
fn check_abortable(row: &Flue2SubmissionRow, current: &Flue2Plan) -> Result<(), Flue2Refusal> {
    match (row.status.as_str(), current.step) {
        ("running", Flue2Step::LeaseHeld) | ("queued", _) => Ok(()),
        ("joining" | "joined", _) => Err(refuse(
            format!("it is {}: {}", row.status, current.why),
            format!(
                "abort the submission it joined ({})",
                row.joined_into.as_deref().unwrap_or("-")
            ),
        )),
        ("settled", _) => Err(refuse(
            current.why.clone(),
            "nothing is left to abort: look with `turnscope show`",
        )),
        ("terminalizing", _) => Err(refuse(
            format!("its settlement is reserved: {}", current.why),
            "leave it to the runtime's pending-settlement step",
        )),
        _ => check_reconcilable(row, 0, current),
    }
}

/// Only a row the runtime's next pass reconciles: `running`, with an attempt, its lease ended.
fn check_reconcilable(
    row: &Flue2SubmissionRow,
    now: i64,
    current: &Flue2Plan,
) -> Result<(), Flue2Refusal> {
    match current.step {
        Flue2Step::LeaseHeld if row.status == "running" => Err(refuse(
            format!(
                "its lease is live for {} ms more: the process that holds it is running it, and its writes would race this one",
                row.lease_expires_at - now
            ),
            "wait for the lease to end (`turnscope --write ACTION` again then), or abort it: an abort intent is the one write a live owner honours",
        )),
        Flue2Step::NoLease => Err(refuse(
            "it is running with lease_expires_at 0: the runtime's expired-lease scan never lists it, so no pass would act on the change",
            "look with `turnscope show`",
        )),
        Flue2Step::NoAttempt => Err(refuse(
            "it has no attempt_id: the runtime's reconciler returns without a write, so no pass would act on the change",
            "look with `turnscope show`",
        )),
        Flue2Step::PassFails => Err(refuse(
            format!("no reconciliation pass reaches it: {}", current.why),
            "mend the terminalizing row the reason names (its settlement columns), then plan again",
        )),
        Flue2Step::Malformed => Err(refuse(
            format!("the runtime does not read this row as a submission it writes ({})", current.why),
            "look with `turnscope show`",
        )),
        _ if row.status != "running" => Err(refuse(
            format!("it is {}, not running: {}", row.status, current.why),
            "turnscope writes only running submissions whose lease has ended",
        )),
        _ => Ok(()),
    }
}

fn requeue_instead(row: &Flue2SubmissionRow, current: &Flue2Plan) -> String {
    match current.step {
        Flue2Step::Budget | Flue2Step::Timeout if row.abort_requested_at.is_none() => {
            "extend it first (--attempts / --deadline), if the runtime should try it again".into()
        }
        Flue2Step::Replace => {
            "its input is on the conversation: the runtime replaces the attempt and resumes it itself".into()
        }
        _ => "leave it to the runtime's next pass, or fail it".into(),
    }
}

/// The conversation `settleSubmissionWithRecord` records the settlement in: the one holding an
/// entry of the submission, else the `default`/`default` one.
fn settlement_conversation<'a>(input: &ActionInput<'a>) -> Option<&'a Conversation> {
    let state = input.instance?;
    let id = input.row.submission_id.as_str();
    state
        .conversations
        .iter()
        .find(|c| {
            c.all_entries()
                .any(|e| e.submission_id.as_deref() == Some(id))
        })
        .or_else(|| state.conversation_for_scope("default", "default"))
}

/// The `submission_settled` record `settleSubmissionWithRecord` builds (its keys in the
/// runtime's order, `JSON.stringify` of it), outcome `failed`, its error an
/// `OperationFailedError` as `serializeSubmissionError` projects it.
pub fn failed_settlement(
    row: &Flue2SubmissionRow,
    conv: &Conversation,
    reason: &str,
    now_ms: i64,
) -> (String, String) {
    let record_id = format!(
        "record_{}-submission:{}:settled",
        row.kind, row.submission_id
    );
    let operation = format!("{}({})", row.kind, row.submission_id);
    let why = format!("failed by an operator: {reason}");
    let mut error = Map::new();
    error.insert("name".into(), json!("FlueError"));
    error.insert(
        "message".into(),
        json!(format!("{operation} failed: {why}")),
    );
    error.insert("type".into(), json!("operation_failed"));
    error.insert("details".into(), json!(""));
    error.insert(
        "meta".into(),
        json!({"operation": operation, "reason": why}),
    );
    let mut r = Map::new();
    r.insert("v".into(), json!(1));
    r.insert("id".into(), json!(record_id));
    r.insert("type".into(), json!("submission_settled"));
    r.insert("conversationId".into(), json!(conv.conversation_id));
    r.insert("harness".into(), json!(conv.harness));
    r.insert("session".into(), json!(conv.session));
    r.insert("timestamp".into(), json!(iso_from_ms(now_ms)));
    r.insert("submissionId".into(), json!(row.submission_id));
    r.insert("attemptId".into(), json!(row.attempt_id));
    r.insert("outcome".into(), json!("failed"));
    r.insert("error".into(), Value::Object(error));
    (record_id, Value::Object(r).to_string())
}

fn int_change(column: &'static str, before: Option<i64>, after: Option<i64>) -> Flue2ColumnChange {
    let v = |x: Option<i64>| x.map_or(SqlValue::Null, SqlValue::Int);
    Flue2ColumnChange {
        column,
        before: v(before),
        after: v(after),
    }
}

fn text_change(
    column: &'static str,
    before: Option<&str>,
    after: Option<&str>,
) -> Flue2ColumnChange {
    let v = |x: Option<&str>| x.map_or(SqlValue::Null, SqlValue::text);
    Flue2ColumnChange {
        column,
        before: v(before),
        after: v(after),
    }
}

/// Whether the classification says the input entry is absent (the requeue's condition).
pub fn input_absent(c: &Flue2Classification) -> bool {
    matches!(c.state, SubmissionState::Absent)
}

#[cfg(test)]
#[path = "actions_tests.rs"]
mod tests;
