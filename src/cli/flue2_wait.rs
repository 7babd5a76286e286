//! `turnscope wait <submission>…` on a flue 2.x journal: the step the runtime's reconciler takes
//! for each submission (`plan_flue2` on its row now, or at the moment a live lease ends), then
//! the rows read again every interval until the runtime writes each one, and what it did beside
//! what was predicted (`turnscope_core::flue2::observed`), with `wait`'s exit codes. Read-only.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::args::{Cli, WaitArgs};
use super::common::{now_ms, CliError};
use super::output::print_json;
use super::wait::{humantime, outcome, write_waiting};
use turnscope_core::flue2::observed::{as_predicted, observe, Flue2Observation};
use turnscope_core::flue2::{Flue2Plan, Flue2SubmissionRow};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{plan_json, Flue2Options, Streams};
use turnscope_store::{Flue2SqliteReader, StoreError};

struct Followed {
    before: Flue2SubmissionRow,
    plan: Flue2Plan,
    /// When the prediction applies: now, or the moment a live lease ends.
    predicted_at: i64,
    observed: Option<(Flue2Observation, bool)>,
    waited: Duration,
}

/// The plan for `id` at `now`, or for a running row whose lease is live, at its end.
fn predict(
    reader: &Flue2SqliteReader,
    opts: &Flue2Options,
    id: &str,
    now: i64,
) -> Result<Followed, StoreError> {
    let mut streams = Streams::default();
    let (row, joined) = reader.in_snapshot(|reader| {
        let row = reader.find_submission(id)?;
        let joined = reader.joined_into(&row.submission_id)?;
        streams.load(reader, [&row])?;
        Ok((row, joined))
    })?;
    let at = if row.status == "running" && row.lease_expires_at >= now {
        row.lease_expires_at + 1
    } else {
        now
    };
    let plan = streams.inspect(&row, opts, joined, at).plan;
    Ok(Followed {
        before: row,
        plan,
        predicted_at: at,
        observed: None,
        waited: Duration::ZERO,
    })
}

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &WaitArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let mut followed = Vec::with_capacity(args.submissions.len());
    for id in &args.submissions {
        followed.push(predict(reader, opts, id, now)?);
    }
    if !args.json {
        writeln!(out, "{}", opts.header_line(reader.format_version()))?;
        write_waiting(out, followed.len(), args)?;
        for f in &followed {
            let when = if f.predicted_at > now {
                format!(
                    " (once its lease ends at {})",
                    iso_from_ms(f.predicted_at - 1)
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {}  predicted: {}: {}{when}",
                sanitize(&f.before.submission_id),
                f.plan.step.column(),
                sanitize(&f.plan.why)
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
            let seen = match reader.find_submission(&f.before.submission_id) {
                Ok(row) => observe(&f.before, &row).map(|o| {
                    let ok = as_predicted(&f.plan, &row, &o);
                    (o, ok)
                }),
                Err(StoreError::SubmissionNotFound { .. }) => Some((
                    Flue2Observation {
                        what: "vanished",
                        step: None,
                        detail: "the submission's row is gone".into(),
                    },
                    false,
                )),
                Err(e) => return Err(e.into()),
            };
            if let Some((o, ok)) = seen {
                f.waited = started.elapsed();
                if !args.json {
                    writeln!(
                        out,
                        "{}",
                        outcome_line(&f.before.submission_id, &o, ok, f.waited)
                    )?;
                    out.flush()?;
                }
                f.observed = Some((o, ok));
            }
        }
    }
    let differs = followed
        .iter()
        .filter(|f| f.observed.as_ref().is_some_and(|(_, ok)| !ok))
        .count();
    let timed_out = followed.iter().filter(|f| f.observed.is_none()).count();
    if args.json {
        print_json(out, &document(opts, reader, &followed, args))?;
    } else {
        for f in followed.iter().filter(|f| f.observed.is_none()) {
            writeln!(
                out,
                "  {}  not acted on within {}",
                sanitize(&f.before.submission_id),
                humantime(args.timeout)
            )?;
        }
    }
    outcome(differs, timed_out, followed.len(), args.timeout)
}

fn outcome_line(id: &str, o: &Flue2Observation, ok: bool, waited: Duration) -> String {
    let step = o
        .step
        .map_or("no step".to_string(), |s| format!("step {s}"));
    let mark = if ok {
        "✓ as predicted"
    } else {
        "✗ not as predicted"
    };
    format!(
        "  {}  {mark}: {step} → {} ({}) after {}",
        sanitize(id),
        o.what,
        sanitize(&o.detail),
        humantime(waited)
    )
}

fn document(
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    followed: &[Followed],
    args: &WaitArgs,
) -> Value {
    let mut doc = opts.header("turnscope.flue2.wait/1", reader.format_version());
    doc.insert("timeoutMs".into(), json!(args.timeout.as_millis() as u64));
    doc.insert(
        "submissions".into(),
        Value::Array(
            followed
                .iter()
                .map(|f| {
                    json!({
                        "submissionId": f.before.submission_id,
                        "predicted": plan_json(&f.plan),
                        "predictedAt": f.predicted_at,
                        "observed": f.observed.as_ref().map(|(o, _)| o),
                        "outcome": match &f.observed {
                            Some((_, true)) => "as_predicted",
                            Some((_, false)) => "not_as_predicted",
                            None => "timed_out",
                        },
                        "waitedMs": f.observed.as_ref().map(|_| f.waited.as_millis() as u64),
                    })
                })
                .collect(),
        ),
    );
    Value::Object(doc)
}
