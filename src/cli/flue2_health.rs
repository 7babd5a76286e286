//! `turnscope health [--all | IDS…] [--json]` on a flue 2.x journal: every conversation of each
//! agent instance's stream (`engine::flue2_health`), one stream folded at a time, with beta.7's
//! output and document (`turnscope.health/1`, `"format": "flue-2.x"`). Exit 8 when any
//! conversation has a finding. And `repair`'s refusal on 2.x: turnscope never appends to a 2.x
//! stream, and the runtime repairs a trailing batch itself.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::{json, Value};

use super::args::HealthArgs;
use super::common::{exit, now_ms, CliError};
use super::progress::Bar;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::{Flue2Options, FORMAT};
use turnscope_engine::flue2_fold::fold_streams;
use turnscope_engine::flue2_health::{folded_stream_health, Flue2Health, RowIndex};
use turnscope_engine::report::health::HealthTotals;
use turnscope_store::{Flue2SqliteReader, StoreError};

pub fn run(
    cli: &super::args::Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &HealthArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let mut totals = HealthTotals::default();
    let mut shown: Vec<Value> = Vec::new();
    let list_healthy = !args.all;
    let mut write_error: Option<std::io::Error> = None;
    reader.in_snapshot(|reader| -> Result<Result<(), CliError>, StoreError> {
        let rows = reader.submissions()?;
        let index = RowIndex::new(&rows);
        let paths = match paths(reader, &rows, args)? {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let mut bar = Bar::new(args.json, "health", paths.len() as u64);
        // Every stream folded in one pipeline (parsed on every core), judged in order here.
        let folded = fold_streams(reader, &paths, |k, folded| {
            let found = folded_stream_health(reader, &paths[k], folded, &index, opts, now)?;
            bar.advance(1);
            for h in found {
                if h.stream_batches {
                    totals.add_batch_findings(&h.health);
                } else {
                    totals.add(&h.health);
                }
                if h.health.healthy() && !list_healthy {
                    continue;
                }
                if args.json {
                    shown.push(
                        serde_json::to_value(&h).expect("a conversation's health serialises"),
                    );
                } else if let Err(e) = bar.suspend(|| print(out, &h)) {
                    // Stops the reading (a closed pipe: `health --all | head`).
                    return Err(Halt::Write(e));
                }
            }
            Ok(())
        });
        bar.clear();
        match folded {
            Ok(()) => {}
            Err(Halt::Store(e)) => return Err(e),
            Err(Halt::Write(e)) => write_error = Some(e),
        }
        Ok(Ok(()))
    })??;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    if args.json {
        let doc = json!({
            "schema": "turnscope.health/1",
            "format": FORMAT,
            "formatVersion": reader.format_version(),
            "database": reader.path().display().to_string(),
            "scope": if args.all { "all" } else { "sessions" },
            "unit": "conversation",
            "totals": totals,
            "sessions": shown,
        });
        super::output::print_json(out, &doc)?;
    } else {
        writeln!(
            out,
            "{}",
            super::health::summary(&totals).replace("session", "conversation")
        )?;
    }
    if totals.findings > 0 {
        return Err(CliError {
            message: String::new(),
            hint: None,
            code: exit::FINDINGS,
        });
    }
    Ok(())
}

/// The streams `args` names: every one (`--all`), else each id as a stream path, an instance id,
/// or a submission id or prefix (its instance's stream). Each once, in path order.
#[allow(clippy::type_complexity)]
fn paths(
    reader: &Flue2SqliteReader,
    rows: &[turnscope_core::flue2::Flue2SubmissionRow],
    args: &HealthArgs,
) -> Result<Result<Vec<String>, CliError>, StoreError> {
    let streams: Vec<String> = reader.streams()?.into_iter().map(|s| s.path).collect();
    match (args.all, args.ids.is_empty()) {
        (true, true) => return Ok(Ok(streams)),
        (true, false) => return Ok(Err(usage(USAGE_BOTH))),
        (false, true) => return Ok(Err(usage(USAGE_NONE))),
        (false, false) => {}
    }
    let mut out = BTreeSet::new();
    for id in &args.ids {
        let by_path = streams.iter().filter(|p| *p == id);
        let by_instance = streams.iter().filter(|p| p.rsplit('/').next() == Some(id));
        let found: Vec<&String> = by_path.chain(by_instance).collect();
        if !found.is_empty() {
            out.extend(found.into_iter().cloned());
            continue;
        }
        // A submission: the exact id, else every row the prefix names, if of one stream.
        let exact: Vec<&turnscope_core::flue2::Flue2SubmissionRow> =
            rows.iter().filter(|r| r.submission_id == *id).collect();
        let matches = if exact.is_empty() {
            rows.iter()
                .filter(|r| r.submission_id.starts_with(id.as_str()))
                .collect()
        } else {
            exact
        };
        let mut of: BTreeSet<String> = BTreeSet::new();
        for r in &matches {
            of.insert(r.session().map_or_else(String::new, |k| k.stream_path()));
        }
        match of.len() {
            1 if !of.contains("") => out.extend(of),
            _ if matches.is_empty() => {
                return Ok(Err(CliError::new(
                    format!("no agent instance matches {}", sanitize(id)),
                    "give a stream path (agents/AGENT/INSTANCE), an instance id, or a submission id or prefix",
                    exit::NOT_FOUND,
                )))
            }
            _ => {
                return Ok(Err(CliError::new(
                    format!(
                        "{} matches submissions of more than one agent instance",
                        sanitize(id)
                    ),
                    "give more of the submission id, or the instance's stream path",
                    exit::USAGE,
                )))
            }
        }
    }
    Ok(Ok(out.into_iter().collect()))
}

const USAGE_BOTH: &str = "health takes --all or ids, not both";
const USAGE_NONE: &str = "health needs --all or one or more agent instances";

/// One conversation's findings, as beta.7 prints a session's, after the stream it is in.
fn print(out: &mut dyn Write, h: &Flue2Health) -> std::io::Result<()> {
    // The stream's own entry: its batches that are not UTF-8, no conversation's entries.
    if h.stream_batches {
        let n = h.health.findings.len();
        writeln!(
            out,
            "{} stream: {n} batch{} not valid UTF-8",
            sanitize(&h.stream_path),
            if n == 1 { "" } else { "es" }
        )?;
        return super::health::print_findings(out, &h.health);
    }
    writeln!(
        out,
        "{} {} conversation, {}/{}{}:",
        sanitize(&h.stream_path),
        if h.conversation_kind.is_empty() {
            "(unloadable)".to_string()
        } else {
            sanitize(&h.conversation_kind)
        },
        sanitize(&h.harness),
        sanitize(&h.session_name),
        if h.in_progress > 0 {
            format!(", {} in progress", h.in_progress)
        } else {
            String::new()
        }
    )?;
    super::health::print_session(out, &h.health)
}

/// `repair` on a 2.x journal: refused, with why and what the runtime does instead.
pub fn refuse_repair() -> CliError {
    CliError::new(
        "repair does not write a flue 2.x journal: turnscope never appends to a 2.x conversation stream \
         (a second producer would fence out the runtime's own writer), and the runtime repairs a trailing \
         tool batch itself, with interrupted markers, when it resumes the submission or runs the next one",
        "run `turnscope health ID` to see what the runtime will do with each batch, or `turnscope show ID` for a \
         submission's plan; `--write abort` or `fail` hand a stuck submission to the runtime's own recovery",
        exit::REFUSED,
    )
}

fn usage(message: &str) -> CliError {
    CliError::new(
        message,
        "turnscope health --all   (every agent instance); turnscope health PATH|INSTANCE|SUBMISSION…",
        exit::USAGE,
    )
}

/// Why `health`'s reading of the streams stopped early.
enum Halt {
    Store(StoreError),
    Write(std::io::Error),
}

impl From<StoreError> for Halt {
    fn from(e: StoreError) -> Halt {
        Halt::Store(e)
    }
}
