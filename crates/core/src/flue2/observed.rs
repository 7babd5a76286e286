//! What the runtime did to a flue 2.x row since turnscope read it, beside what turnscope
//! predicted (`wait`): the row read again is compared with the one the prediction was made on,
//! and the step of `reconcileInterruptedSubmission` that explains the change is named from the
//! row alone (its attempt, status, error and the reserved settlement's outcome, as the step table
//! writes them). A prediction holds when that step is the predicted one and, for a settlement,
//! the row's error and outcome are the predicted `rowAfter`'s.

use serde::Serialize;

use super::reconciler::{
    Flue2Plan, Flue2Step, ABORTED_MESSAGE, INTERRUPTED_BEFORE_INPUT_MESSAGE, TIMEOUT_MESSAGE,
};
use super::rows::Flue2SubmissionRow;

/// What was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flue2Observation {
    /// `replaced`, `requeued`, `completed`, `aborted`, `failed`, `joined`, `changed`, `vanished`.
    pub what: &'static str,
    /// The reconciler step that writes this, where one does.
    pub step: Option<u8>,
    pub detail: String,
}

/// Whether the runtime wrote the row since `before` (a lease renewed by the attempt that holds
/// it is not an action on it).
pub fn moved(before: &Flue2SubmissionRow, now: &Flue2SubmissionRow) -> bool {
    before.status != now.status
        || before.attempt_id != now.attempt_id
        || before.attempt_count != now.attempt_count
        || before.error != now.error
        || before.settlement_record_id != now.settlement_record_id
        || before.joined_into != now.joined_into
}

/// What the change from `before` to `now` is, or `None` while it is not one (not moved).
pub fn observe(before: &Flue2SubmissionRow, now: &Flue2SubmissionRow) -> Option<Flue2Observation> {
    if !moved(before, now) {
        return None;
    }
    let o = |what, step: Option<u8>, detail: String| Flue2Observation { what, step, detail };
    // A new attempt counted: the replacement (step 6), whatever its resume did since.
    if now.attempt_id.is_some()
        && now.attempt_id != before.attempt_id
        && now.attempt_count == before.attempt_count + 1
        && before.status == "running"
    {
        return Some(o(
            "replaced",
            Some(6),
            format!(
                "attempt {} (attempts {}/{}), status {}",
                now.attempt_id.as_deref().unwrap_or("?"),
                now.attempt_count,
                now.max_attempts,
                now.status
            ),
        ));
    }
    match now.status.as_str() {
        "queued" => Some(o(
            "requeued",
            Some(7),
            "status queued, attempt and input application cleared".into(),
        )),
        "joining" | "joined" => Some(o(
            "joined",
            None,
            format!("joined into {}", now.joined_into.as_deref().unwrap_or("?")),
        )),
        // A settlement reserved, not finalized: the pass that reserved it appends the record and
        // finalizes next (or, where it died, the next pass's pending-settlement step does). Not
        // an outcome yet: read again.
        "terminalizing" => None,
        "settled" => {
            let outcome = now.settlement_outcome();
            let error = now.error.as_deref();
            let (what, step) = match (outcome.as_deref(), error) {
                (Some("aborted"), _) | (_, Some(ABORTED_MESSAGE)) => ("aborted", Some(3)),
                (_, Some(TIMEOUT_MESSAGE)) => ("failed", Some(5)),
                (_, Some(e))
                    if e == INTERRUPTED_BEFORE_INPUT_MESSAGE
                        || e.starts_with("Submission exceeded maximum recovery attempts") =>
                {
                    ("failed", Some(4))
                }
                (_, Some(_)) => ("failed", None),
                (_, None) => ("completed", Some(2)),
            };
            Some(o(
                what,
                // Only this pass's own settlement is a step: the same attempt settled it.
                step.filter(|_| now.attempt_id == before.attempt_id),
                match error {
                    Some(e) => format!("settled {what}: {e}"),
                    None => format!("settled {what}"),
                },
            ))
        }
        s => Some(o("changed", None, format!("status {s}"))),
    }
}

/// Whether `seen` is what `plan` (made on the row before) said the runtime would do.
pub fn as_predicted(plan: &Flue2Plan, now: &Flue2SubmissionRow, seen: &Flue2Observation) -> bool {
    let Some(step) = plan.step.number() else {
        return false;
    };
    if seen.step != Some(step) {
        return false;
    }
    match (&plan.row_after, plan.step) {
        (
            Some(after),
            Flue2Step::Completed | Flue2Step::Abort | Flue2Step::Budget | Flue2Step::Timeout,
        ) => {
            now.error == after.error
                && (after.settlement_outcome.is_none()
                    || now.settlement_outcome() == after.settlement_outcome)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Flue2SubmissionRow {
        Flue2SubmissionRow {
            sequence: 1,
            submission_id: "sub_1".into(),
            session_key: "agent-session:[\"worker\",\"s1\",\"default\",\"default\"]".into(),
            kind: "dispatch".into(),
            status: "running".into(),
            accepted_at: Some(1),
            canonical_ready_at: Some(1),
            attempt_id: Some("att_1".into()),
            input_applied_at: Some(2),
            abort_requested_at: None,
            started_at: Some(2),
            joined_into: None,
            settled_at: None,
            error: None,
            attempt_count: 1,
            max_attempts: 10,
            timeout_at: 0,
            owner_id: Some("owner_1".into()),
            lease_expires_at: 30_002,
            settlement_record_id: None,
            settlement_record: None,
            not_utf8: Vec::new(),
            stored_as: None,
            parse: crate::flue2::rows::ParseOutcome::Parses,
            pass_fails: None,
        }
    }

    #[test]
    fn a_renewed_lease_is_no_action() {
        let before = row();
        let mut now = row();
        now.lease_expires_at += 10_000;
        assert_eq!(observe(&before, &now), None);
    }

    #[test]
    fn each_change_is_named_with_its_step() {
        let before = row();
        let mut replaced = row();
        replaced.attempt_id = Some("att_2".into());
        replaced.attempt_count = 2;
        // Settled by the replacement's resume since: still the replacement.
        replaced.status = "settled".into();
        assert_eq!(observe(&before, &replaced).unwrap().step, Some(6));

        let mut requeued = row();
        requeued.status = "queued".into();
        requeued.attempt_id = None;
        assert_eq!(observe(&before, &requeued).unwrap().step, Some(7));

        let settled = |error: Option<&str>, outcome: &str| {
            let mut r = row();
            r.status = "settled".into();
            r.error = error.map(str::to_string);
            r.settlement_record_id = Some("rec".into());
            r.settlement_record = Some(format!("{{\"outcome\":\"{outcome}\"}}"));
            observe(&before, &r).unwrap()
        };
        assert_eq!(settled(None, "completed").step, Some(2));
        assert_eq!(settled(Some(ABORTED_MESSAGE), "aborted").step, Some(3));
        assert_eq!(
            settled(
                Some("Submission exceeded maximum recovery attempts (10/10)."),
                "failed"
            )
            .step,
            Some(4)
        );
        assert_eq!(settled(Some(TIMEOUT_MESSAGE), "failed").step, Some(5));
        let other = settled(Some("boom"), "failed");
        assert_eq!((other.what, other.step), ("failed", None));
        // Reserved, not finalized yet: no outcome, read again.
        let mut reserved = row();
        reserved.status = "terminalizing".into();
        reserved.settlement_record_id = Some("rec".into());
        assert!(moved(&before, &reserved));
        assert_eq!(observe(&before, &reserved), None);
    }
}
