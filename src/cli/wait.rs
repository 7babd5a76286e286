//! `turnscope wait <submission>… [--timeout D] [--interval D] [--json]`: the prediction for each
//! submission now (the runtime's planner on its rows; for a live lease, at its expiry), then the
//! rows read again every interval until the runtime acts on it, and what it did beside what was
//! predicted. Read-only.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::args::{Cli, WaitArgs};
use super::common::{exit, now_ms, CliError};
use super::output::print_json;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_core::text::sanitize;
use turnscope_engine::report::observed::{observe, row_moved, Baseline, Observation};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, StoreError};

/// One submission followed.
struct Followed {
    id: String,
    before: SubmissionReport,
    baseline: Baseline,
    /// When the prediction applies: now, or the moment a live lease expires.
    predicted_at: i64,
    observed: Option<Observation>,
    waited: Duration,
}

impl Followed {
    fn predicted_line(&self) -> String {
        let p = &self.before.plan;
        format!(
            "{} → {}: {}",
            p.rule_label(),
            p.result.map_or("-", RuleResult::as_str),
            p.reason
        )
    }

    fn as_predicted(&self) -> Option<bool> {
        self.observed
            .as_ref()
            .map(|o| self.baseline.as_predicted(o))
    }
}

/// Read `id` whole at `now`; for a running row whose lease is live, again at the moment it
/// expires, which is when the runtime's reconciler can act on it.
fn predict(
    store: &dyn JournalStore,
    id: &str,
    context_window: Option<u64>,
    now: i64,
) -> Result<(SubmissionReport, i64), StoreError> {
    let r = SubmissionReport::load(store, id, context_window, now)?;
    let row = r.row();
    if row.status == SubmissionStatus::Running && row.lease_expires_at >= now {
        let at = row.lease_expires_at + 1;
        let full = row.submission_id.clone();
        return Ok((
            SubmissionReport::load(store, &full, context_window, at)?,
            at,
        ));
    }
    Ok((r, now))
}

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &WaitArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let mut followed = Vec::with_capacity(args.submissions.len());
    for id in &args.submissions {
        let (before, predicted_at) = predict(store, id, cli.context_window, now)?;
        followed.push(Followed {
            id: before.row().submission_id.clone(),
            baseline: Baseline::of(&before),
            before,
            predicted_at,
            observed: None,
            waited: Duration::ZERO,
        });
    }
    if !args.json {
        write_waiting(out, followed.len(), args)?;
        for f in &followed {
            let when = if f.predicted_at > now {
                format!(
                    " (once its lease expires at {})",
                    iso_from_ms(f.predicted_at - 1)
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {}  predicted: {}{when}",
                short(&f.id),
                sanitize(&f.predicted_line())
            )?;
        }
        out.flush()?;
    }
    let started = Instant::now();
    while followed.iter().any(|f| f.observed.is_none()) && started.elapsed() < args.timeout {
        std::thread::sleep(
            args.interval
                .min(args.timeout.saturating_sub(started.elapsed())),
        );
        for f in followed.iter_mut().filter(|f| f.observed.is_none()) {
            let row = match store.find_submission(&f.id) {
                Ok(row) => row,
                Err(StoreError::SubmissionNotFound { .. }) => {
                    f.observed = Some(Observation {
                        what: "vanished",
                        rule: None,
                        detail: "the submission's row is gone".into(),
                    });
                    f.waited = started.elapsed();
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if !row_moved(f.before.row(), &row) {
                continue;
            }
            let after = SubmissionReport::load(
                store,
                &f.id,
                cli.context_window,
                turnscope_store::clock::now_ms(),
            )?;
            if let Some(o) = observe(&f.baseline, &after) {
                f.waited = started.elapsed();
                if !args.json {
                    writeln!(out, "{}", outcome_line(f, &o))?;
                    out.flush()?;
                }
                f.observed = Some(o);
            }
        }
    }
    let differs = followed
        .iter()
        .filter(|f| f.as_predicted() == Some(false))
        .count();
    let timed_out = followed.iter().filter(|f| f.observed.is_none()).count();
    if args.json {
        print_json(out, &document(&followed, args))?;
    } else {
        for f in followed.iter().filter(|f| f.observed.is_none()) {
            writeln!(
                out,
                "  {}  not acted on within {}",
                short(&f.id),
                humantime(args.timeout)
            )?;
        }
    }
    outcome(differs, timed_out, followed.len(), args.timeout)
}

/// The line before the predictions (both formats' `wait`).
pub(super) fn write_waiting(out: &mut dyn Write, n: usize, args: &WaitArgs) -> std::io::Result<()> {
    writeln!(
        out,
        "waiting up to {} for the runtime to act on {} (reading every {}):",
        humantime(args.timeout),
        turnscope_core::text::plural(n as u64, "submission", "submissions"),
        humantime(args.interval)
    )
}

/// The exit once the waiting ends: any not as predicted (exit 6) before any not acted on (7).
pub(super) fn outcome(
    differs: usize,
    timed_out: usize,
    n: usize,
    timeout: Duration,
) -> Result<(), CliError> {
    let of = turnscope_core::text::plural(n as u64, "submission", "submissions");
    if differs > 0 {
        return Err(CliError::new(
            format!("{differs} of {of} did not go as predicted"),
            "the lines above say what the runtime did instead; `turnscope show ID` shows where it stands now",
            exit::NOT_AS_PREDICTED,
        ));
    }
    if timed_out > 0 {
        return Err(CliError::new(
            format!("{timed_out} of {of} not acted on within {}", humantime(timeout)),
            "is a runtime running against this database? Its reconciler acts on an expired lease within a pass (15 s); `turnscope list --status running` shows the leases",
            exit::TIMED_OUT,
        ));
    }
    Ok(())
}

fn short(id: &str) -> String {
    sanitize(&id.chars().take(8).collect::<String>())
}

fn outcome_line(f: &Followed, o: &Observation) -> String {
    let rule = o
        .rule
        .map_or("no rule".to_string(), |r| format!("rule {r}"));
    let mark = if f.baseline.as_predicted(o) {
        "✓ as predicted"
    } else {
        "✗ not as predicted"
    };
    format!(
        "  {}  {mark}: {rule} → {} ({}) after {}",
        short(&f.id),
        o.what,
        sanitize(&o.detail),
        humantime(f.waited)
    )
}

fn document(followed: &[Followed], args: &WaitArgs) -> Value {
    json!({
        "schema": "turnscope.wait/1",
        "format": turnscope_engine::report::JOURNAL_FORMAT,
        "timeoutMs": args.timeout.as_millis() as u64,
        "submissions": followed.iter().map(|f| json!({
            "submissionId": f.id,
            "predicted": {
                "rule": f.before.plan.rule,
                "result": f.before.plan.result.map(RuleResult::as_str),
                "reason": f.before.plan.reason,
                "at": f.predicted_at,
            },
            "observed": f.observed,
            "outcome": match f.as_predicted() {
                Some(true) => "as_predicted",
                Some(false) => "not_as_predicted",
                None => "timed_out",
            },
            "waitedMs": f.observed.as_ref().map(|_| f.waited.as_millis() as u64),
        })).collect::<Vec<_>>(),
    })
}

/// `1m30s`, `800ms`.
pub(super) fn humantime(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let s = ms / 1_000;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}
