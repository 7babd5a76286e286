//! The submission row and the recovery plan as every JSON document shows them, as types that
//! serialize straight to text: `list --json` wrote each of 2,000 items by building a `Value` of
//! some thirty keys (each key an allocation) and printing that.

use serde::Serialize;
use serde_json::Value;

use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::SubmissionRow;
use turnscope_core::journal::time::{human_duration, iso_from_ms};
use turnscope_core::recovery::reconciler::{Disposition, PlannedWrite, RecoveryPlan, RuleResult};

/// `submission` of the `list` and `show` documents (the keys in this order).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmissionJson<'a> {
    sequence: i64,
    submission_id: &'a str,
    session_key: &'a str,
    instance_id: Option<String>,
    agent: Option<String>,
    kind: &'a str,
    status: &'a SubmissionStatus,
    attempt_id: Option<&'a str>,
    attempt_count: i64,
    max_retry: i64,
    accepted_at: Option<String>,
    input_applied_at: Option<String>,
    started_at: Option<String>,
    settled_at: Option<String>,
    timeout_at: Option<String>,
    owner_id: Option<&'a str>,
    lease_expires_at: i64,
    lease_expired: bool,
    lease: String,
    error: Option<&'a str>,
    terminal_key: Option<&'a str>,
    terminal_offset: Option<&'a str>,
}

impl<'a> SubmissionJson<'a> {
    pub fn new(row: &'a SubmissionRow, now_ms: i64) -> Self {
        // A time the runtime has not set is 0 (or absent): shown as null, not as 1970.
        let iso = |v: Option<i64>| v.filter(|t| *t > 0).map(iso_from_ms);
        SubmissionJson {
            sequence: row.sequence,
            submission_id: &row.submission_id,
            session_key: &row.session_key,
            instance_id: row.instance_id(),
            agent: row.agent(),
            kind: &row.kind,
            status: &row.status,
            attempt_id: row.attempt_id.as_deref(),
            attempt_count: row.attempt_count,
            max_retry: row.max_retry,
            accepted_at: iso(row.accepted_at),
            input_applied_at: iso(row.input_applied_at),
            started_at: iso(row.started_at),
            settled_at: iso(row.settled_at),
            timeout_at: iso(Some(row.timeout_at)),
            owner_id: row.owner_id.as_deref(),
            lease_expires_at: row.lease_expires_at,
            lease_expired: row.lease_expired(now_ms),
            lease: lease_text(row, now_ms),
            error: row.error.as_deref(),
            terminal_key: row.terminal_key.as_deref(),
            terminal_offset: row.terminal_offset.as_deref(),
        }
    }
}

/// `plan` of the `list` and `show` documents: each write with its one-line description last.
#[derive(Serialize)]
pub struct PlanJson<'a> {
    disposition: &'a Disposition,
    rule: Option<u8>,
    result: Option<RuleResult>,
    reason: &'a str,
    writes: Vec<WriteJson<'a>>,
}

#[derive(Serialize)]
struct WriteJson<'a> {
    #[serde(flatten)]
    write: &'a PlannedWrite,
    description: String,
}

impl<'a> PlanJson<'a> {
    pub fn new(p: &'a RecoveryPlan) -> Self {
        PlanJson {
            disposition: &p.disposition,
            rule: p.rule,
            result: p.result,
            reason: &p.reason,
            writes: p
                .writes
                .iter()
                .map(|w| WriteJson {
                    write: w,
                    description: w.describe(),
                })
                .collect(),
        }
    }
}

/// The lease as `list` and `show` word it: `expired 4m ago`, `live 30s`, `none`, `-` when not running.
pub fn lease_text(row: &SubmissionRow, now_ms: i64) -> String {
    if !row.is_running() {
        return "-".into();
    }
    match row.lease_expires_at {
        0 => "none".into(),
        t if t < now_ms => format!("expired {} ago", human_duration(now_ms - t)),
        t => format!("live {}", human_duration(t - now_ms)),
    }
}

pub fn plan_json(p: &RecoveryPlan) -> Value {
    serde_json::to_value(PlanJson::new(p)).unwrap_or(Value::Null)
}

pub fn submission_json(row: &SubmissionRow, now_ms: i64) -> Value {
    serde_json::to_value(SubmissionJson::new(row, now_ms)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each write is its own tagged object with `description` added last, as `plan_json` put it
    /// together before it serialized straight (the `op` first, then the variant's fields).
    #[test]
    fn a_plans_writes_are_their_tagged_objects_then_the_description() {
        let writes = vec![
            PlannedWrite::CreateSession,
            PlannedWrite::FailSubmission {
                error: "boom \"quoted\"".into(),
            },
            PlannedWrite::AppendAdvisory {
                reason: "interrupted",
                content: "text\nwith a newline".into(),
            },
            PlannedWrite::RecoverStream {
                stream_key: "k".into(),
                append_partial: true,
            },
            PlannedWrite::AutoFailMalformed { error: None },
        ];
        let plan = RecoveryPlan {
            disposition: Disposition::Failed { error: "e".into() },
            rule: Some(4),
            result: Some(RuleResult::Failed),
            writes: writes.clone(),
            reason: "why".into(),
        };
        let got = plan_json(&plan);
        let want_writes: Vec<Value> = writes
            .iter()
            .map(|w| {
                let mut v = serde_json::to_value(w).unwrap();
                v.as_object_mut()
                    .unwrap()
                    .insert("description".into(), w.describe().into());
                v
            })
            .collect();
        let want = serde_json::json!({
            "disposition": plan.disposition,
            "rule": 4,
            "result": "failed",
            "reason": "why",
            "writes": want_writes,
        });
        // Compared as text: key order is part of what the documents promise.
        assert_eq!(
            serde_json::to_string_pretty(&got).unwrap(),
            serde_json::to_string_pretty(&want).unwrap()
        );
        assert!(serde_json::to_string(&got)
            .unwrap()
            .contains(r#"{"op":"create_session","description":"#));
    }
}
