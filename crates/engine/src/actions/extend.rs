//! `extend`: give a submission more time and/or more attempts, so the runtime's rule 3 (deadline
//! passed) or rule 2 (attempt budget spent) no longer fails it. One `UPDATE` of `timeout_at`
//! and/or `max_retry`, fenced on their old values; the preview's prediction says which rule the
//! runtime then applies instead. Both columns stay plain integers, as the runtime's row parser
//! requires (spec §0: any other value makes it auto-fail the row as malformed).

use super::common::{check_stuck, ActionKind, ActionPlan, Refusal};
use crate::report::SubmissionReport;
use turnscope_core::journal::time::{human_duration, iso_from_ms};
use turnscope_core::recovery::changes::{ColumnChange, RowChange, SqlValue};

/// The longest deadline `extend` sets: far enough for any operator, and it keeps `timeout_at`
/// well inside a JavaScript number's exact integers.
pub const MAX_DEADLINE_MS: i64 = 365 * 24 * 3_600_000;
/// `max_retry` is an `INTEGER` column (32 bits on PostgreSQL).
pub const MAX_ATTEMPTS: i64 = 1_000_000;

/// What to extend: a new deadline `now + deadline_ms`, and/or `attempts` more attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extension {
    pub deadline_ms: Option<i64>,
    pub attempts: Option<i64>,
}

impl Extension {
    /// What the TUI offers without asking: the budget that fails the submission now (3 more
    /// attempts for rule 2), else one more hour.
    pub fn suggested(r: &SubmissionReport) -> Extension {
        match r.plan.rule {
            Some(2) => Extension {
                deadline_ms: None,
                attempts: Some(3),
            },
            _ => Extension {
                deadline_ms: Some(3_600_000),
                attempts: None,
            },
        }
    }
}

/// `90s`, `30m`, `2h`, `1d`, `1500ms` → milliseconds; positive, at most a year.
pub fn parse_deadline(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("{text:?} has no unit (use ms, s, m, h or d, e.g. 30m)"))?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 30m, 2h, 1d)"))?;
    let unit_ms = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?} (use ms, s, m, h or d)"
            ))
        }
    };
    let ms = (n * unit_ms).round();
    if !(ms >= 1.0 && ms <= MAX_DEADLINE_MS as f64) {
        return Err(format!("{text:?} is out of range (1ms to 365d)"));
    }
    Ok(ms as i64)
}

pub fn plan_extend(
    r: &SubmissionReport,
    ext: Extension,
    now_ms: i64,
) -> Result<ActionPlan, Refusal> {
    if ext.deadline_ms.is_none() && ext.attempts.is_none() {
        return Err(Refusal::new(
            "nothing to extend",
            "pass --deadline DURATION (e.g. 1h) and/or --attempts N",
        ));
    }
    check_stuck(r, now_ms)?;
    let row = r.row();
    let mut set = Vec::new();
    let mut said = Vec::new();
    if let Some(d) = ext.deadline_ms {
        if !(1..=MAX_DEADLINE_MS).contains(&d) {
            return Err(Refusal::new(
                format!("a deadline {d} ms from now is out of range"),
                "pass a duration from 1ms to 365d",
            ));
        }
        let new = now_ms + d;
        set.push(ColumnChange::new(
            "timeout_at",
            SqlValue::Int(row.timeout_at),
            SqlValue::Int(new),
        ));
        said.push(format!(
            "deadline {} → {} ({} from now)",
            if row.timeout_at > 0 {
                iso_from_ms(row.timeout_at)
            } else {
                "none".into()
            },
            iso_from_ms(new),
            human_duration(d)
        ));
    }
    if let Some(n) = ext.attempts {
        if !(1..=MAX_ATTEMPTS).contains(&n) {
            return Err(Refusal::new(
                format!("{n} more attempts is out of range"),
                format!("pass --attempts from 1 to {MAX_ATTEMPTS}"),
            ));
        }
        // N more than are left now: a spent budget (count ≥ max) counts from the attempts used.
        let new = row.max_retry.max(row.attempt_count) + n;
        set.push(ColumnChange::new(
            "max_retry",
            SqlValue::Int(row.max_retry),
            SqlValue::Int(new),
        ));
        said.push(format!(
            "attempt budget {} → {new} ({} used)",
            row.max_retry, row.attempt_count
        ));
    }
    // No "extend:" prefix: the action's name is printed before every summary.
    let mut summary = said.join(", ");
    if row.input_applied_at.is_none() {
        summary.push_str(
            "; the input is not applied yet, so the attempt that applies it sets its own budget and deadline from the agent's durability settings",
        );
    }
    Ok(ActionPlan::new(
        ActionKind::Extend,
        r,
        vec![RowChange::UpdateSubmission {
            submission_id: row.submission_id.clone(),
            attempt_id: row.attempt_id.clone().unwrap_or_default(),
            set,
        }],
        summary,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_parse_with_a_unit_and_stay_in_range() {
        assert_eq!(parse_deadline("90s"), Ok(90_000));
        assert_eq!(parse_deadline("30m"), Ok(1_800_000));
        assert_eq!(parse_deadline("1.5h"), Ok(5_400_000));
        assert_eq!(parse_deadline("1d"), Ok(86_400_000));
        assert_eq!(parse_deadline("250ms"), Ok(250));
        for bad in ["", "10", "h", "-1h", "0s", "366d", "1w", "NaNh", "infh"] {
            assert!(parse_deadline(bad).is_err(), "{bad}");
        }
    }
}
