//! Cost and attempts of a flue 2.x submission (`turnscope_core::flue2::cost`) for `show`, `list`
//! and `incidents`: the cost from the folded conversation the command already holds, the attempts
//! from the stream's records read once more (only `show` asks for them).

use serde_json::{json, Value};
use turnscope_core::flue2::cost::{submission_cost, AttemptLog, Flue2Attempt, Flue2Cost};
use turnscope_core::flue2::{read_batch, Flue2SubmissionRow, ReadRecord};
use turnscope_core::journal::cost::UsageSum;
use turnscope_store::{BatchView, Flue2SqliteReader, StoreError};

use crate::flue2::Inspected;
use crate::flue2_memos::{memos_in_batch, StepMemo, MEMO_TYPE};

/// The cost of `i`'s submission and the deliveries joined into it, where its conversation folds.
pub fn cost_of(i: &Inspected<'_>) -> Option<Flue2Cost> {
    if let Some(c) = &i.detached_cost {
        return Some(c.clone());
    }
    let conv = i.conversation?;
    let mut owners: Vec<&str> = vec![i.row.submission_id.as_str()];
    owners.extend(i.joined.iter().map(String::as_str));
    Some(submission_cost(conv, &owners))
}

/// The cost since the input in dollars (`cost.total` summed), for the list's column and sort.
pub fn cost_total(i: &Inspected<'_>) -> Option<f64> {
    cost_of(i).map(|c| c.total().cost)
}

/// `$0.0123` (4 decimals), `-` where there is no conversation; a `+` where some usage lacked a
/// figure (the sum is then a lower bound).
pub fn cost_text(sum: Option<&UsageSum>) -> String {
    match sum {
        None => "-".into(),
        Some(s) => format!("${:.4}{}", s.cost, if s.incomplete > 0 { "+" } else { "" }),
    }
}

/// `cost` in the documents: the three parts, the total and the ghosts.
pub fn cost_json(c: &Flue2Cost) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert(
            "total".into(),
            serde_json::to_value(c.total()).unwrap_or(Value::Null),
        );
    }
    v
}

/// Every attempt of `row`'s submission that wrote a record to the stream at `path`, in the
/// order they first wrote. A batch that does not parse is skipped (the fold reports it).
pub fn attempts_of(
    reader: &Flue2SqliteReader,
    path: &str,
    row: &Flue2SubmissionRow,
) -> Result<Vec<Flue2Attempt>, StoreError> {
    Ok(attempts_and_memos(reader, path, row)?.0)
}

/// [`attempts_of`] and the stream's step memos (`flue2_memos::step_memos`), in one more read of
/// the stream (where the stream is not being folded: else [`AttemptsAndMemos`] observes the
/// fold's read, `fold_stream_observed`).
pub fn attempts_and_memos(
    reader: &Flue2SqliteReader,
    path: &str,
    row: &Flue2SubmissionRow,
) -> Result<(Vec<Flue2Attempt>, Vec<StepMemo>), StoreError> {
    let mut seen = AttemptsAndMemos::new(row);
    reader.each_stream_batch(path, |b| {
        seen.observe(&b.view(), None);
        Ok(())
    })?;
    Ok(seen.finish())
}

/// The attempts of one submission and the step memos of its stream, gathered batch by batch:
/// from the records the fold parsed, where it gives them.
pub struct AttemptsAndMemos {
    submission_id: String,
    log: AttemptLog,
    memos: Vec<StepMemo>,
}

impl AttemptsAndMemos {
    pub fn new(row: &Flue2SubmissionRow) -> AttemptsAndMemos {
        AttemptsAndMemos {
            submission_id: row.submission_id.clone(),
            log: AttemptLog::new(&row.submission_id),
            memos: Vec::new(),
        }
    }

    /// One batch, in `seq` order, with its records where they were parsed already (`None`: read
    /// here; a batch that does not parse is skipped, the fold reports it).
    pub fn observe(&mut self, b: &BatchView<'_>, records: Option<&[ReadRecord]>) {
        // The batch's text is searched for memos only where its parsed records hold one (else
        // every batch of a whale's 165 MB was searched again).
        let memos =
            records.is_none_or(|r| r.iter().any(|r| r.record.envelope.record_type == MEMO_TYPE));
        if memos {
            memos_in_batch(b.seq, b.data, &mut self.memos);
        }
        if b.submission_id != Some(self.submission_id.as_str()) {
            return;
        }
        let read;
        let records = match records {
            Some(r) => r,
            None => match read_batch(b.data) {
                Ok(r) => {
                    read = r;
                    &read
                }
                Err(_) => return,
            },
        };
        for r in records {
            self.log.push(&r.record);
        }
    }

    pub fn finish(self) -> (Vec<Flue2Attempt>, Vec<StepMemo>) {
        (self.log.finish(), self.memos)
    }
}

/// `attempts` in `show`'s document: each traced attempt with, for the row's current one, its
/// worker and lease; and the attempts the row counts that wrote nothing (`untraced`).
pub fn attempts_json(attempts: &[Flue2Attempt], row: &Flue2SubmissionRow) -> Value {
    let list: Vec<Value> = attempts
        .iter()
        .map(|a| {
            let mut v = serde_json::to_value(a).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                let current = row.attempt_id.as_deref() == Some(a.attempt_id.as_str());
                m.insert("current".into(), json!(current));
                if current {
                    m.insert("worker".into(), json!(row.owner_id));
                    m.insert("startedAt".into(), json!(row.started_at));
                    m.insert("leaseExpiresAt".into(), json!(row.lease_expires_at));
                }
            }
            v
        })
        .collect();
    let current_traced = row
        .attempt_id
        .as_deref()
        .is_some_and(|id| attempts.iter().any(|a| a.attempt_id == id));
    json!({
        "attemptCount": row.attempt_count,
        "traced": list,
        "currentAttemptId": row.attempt_id,
        "currentTraced": current_traced,
        "untraced": (row.attempt_count - attempts.len() as i64).max(0),
    })
}

/// One line per attempt for `show`'s text.
pub fn attempt_line(a: &Flue2Attempt, row: &Flue2SubmissionRow) -> String {
    let current = row.attempt_id.as_deref() == Some(a.attempt_id.as_str());
    let mut parts = vec![format!("{}..{}", a.first_record_at, a.last_record_at)];
    if a.input_appended {
        parts.push("input appended".into());
    }
    if a.provider_started > 0 {
        parts.push(format!("{} provider call(s)", a.provider_started));
    }
    if !a.completed.is_empty() {
        parts.push(format!("completed {}", a.completed.join(", ")));
    }
    if a.tool_calls > 0 {
        parts.push(format!(
            "{} tool call(s), {} outcome(s) recorded, {} commit(s)",
            a.tool_calls, a.outcomes, a.commits
        ));
    }
    if a.unfinished > 0 {
        parts.push(format!("{} message(s) left in progress", a.unfinished));
    }
    if !a.signals.is_empty() {
        parts.push(format!("signals {}", a.signals.join(", ")));
    }
    if a.settled {
        parts.push("settlement record".into());
    }
    parts.push(format!(
        "{} tokens, {}",
        a.usage.total_tokens,
        cost_text(Some(&a.usage))
    ));
    if current {
        parts.push(format!(
            "current: worker {}, lease {}",
            row.owner_id.as_deref().unwrap_or("-"),
            row.lease_expires_at
        ));
    }
    format!("{}  {}", a.attempt_id, parts.join("; "))
}
