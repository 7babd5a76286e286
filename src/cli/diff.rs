//! `turnscope diff A B`: two states of a submission, each an export file or a submission id in
//! the `--db` database, compared by [`turnscope_engine::report::diff`]. Exit 0 when equal, 1 when
//! different (like diff(1)); an error exits 2 or more, never 1.

use std::io::Write;
use std::path::Path;

use super::args::{Cli, DiffArgs};
use super::common::open_store;
use super::{exit, now_ms, CliError};
use turnscope_engine::report::diff::{self, Side};
use turnscope_engine::report::export;
use turnscope_engine::report::redact::Redaction;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::export_db::{self, EXPORT_SCHEMA};
use turnscope_store::{Backend, DbTarget, StoreError};

pub fn run(cli: &Cli, args: &DiffArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // 1 means "different": an error that would exit 1 exits 2 here.
    let result = compare(cli, args, out);
    match result {
        Err(mut e) if e.code == exit::ERROR && !e.message.is_empty() => {
            e.code = exit::USAGE;
            Err(e)
        }
        other => other,
    }
}

/// A side as given: an export file, or a submission of the `--db` database.
enum Given {
    Export {
        path: String,
        store: Box<dyn Backend>,
        selected: Option<String>,
        /// The rules it was redacted with (`--redact`).
        redaction: Option<Redaction>,
    },
    Db(String),
}

fn given(arg: &str) -> Result<Given, CliError> {
    let p = Path::new(arg);
    if !p.is_file() {
        return Ok(Given::Db(arg.to_string()));
    }
    match DbTarget::from_path(p)? {
        DbTarget::Export(path) => {
            let text = std::fs::read(&path).map_err(|e| {
                CliError::from(StoreError::NotReadable {
                    path: path.clone(),
                    detail: e.to_string(),
                })
            })?;
            let doc: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
            let ours = doc.get("schema").and_then(|s| s.as_str()) == Some(EXPORT_SCHEMA);
            let selected = ours
                .then(|| doc.get("selectedSubmission").and_then(|s| s.as_str()))
                .flatten()
                .map(str::to_string);
            let redaction = Redaction::of_document(&doc).filter(|_| ours);
            drop(doc);
            let store = Box::new(export_db::open_export(&path)?);
            Ok(Given::Export {
                path: path.display().to_string(),
                store,
                selected,
                redaction,
            })
        }
        _ => Err(CliError::new(
            format!("{arg} is a file but not an export"),
            "diff compares export files (turnscope export … -o FILE) and submission ids of the --db database; to compare a database, give --db it and a submission id",
            exit::USAGE,
        )),
    }
}

fn compare(cli: &Cli, args: &DiffArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let now = now_ms(cli);
    let cw = cli.context_window;
    let a = given(&args.a)?;
    let b = given(&args.b)?;
    // One side a redacted export, the other not: the other is compared redacted the same way,
    // so only what the repair changed shows (the verdicts are the same either way).
    let redaction_of = |g: &Given| match g {
        Given::Export { redaction, .. } => *redaction,
        Given::Db(_) => None,
    };
    let (ra, rb) = (redaction_of(&a), redaction_of(&b));
    let like_a = ra.filter(|_| rb.is_none());
    let like_b = rb.filter(|_| ra.is_none());
    let db = if matches!(a, Given::Db(_)) || matches!(b, Given::Db(_)) {
        Some(open_store(cli)?)
    } else {
        None
    };
    let load_db = |q: &str, redact: Option<Redaction>| -> Result<Side, CliError> {
        let store = db.as_ref().expect("opened for a database side");
        load(store.as_ref(), &store.location(), q, redact, cw, now)
    };
    // Database sides first: an export side then picks the same submission where it holds it.
    let mut side_a = match &a {
        Given::Db(q) => Some(load_db(q, like_b)?),
        _ => None,
    };
    let mut side_b = match &b {
        Given::Db(q) => Some(load_db(q, like_a)?),
        _ => None,
    };
    let other_id = |s: &Option<Side>| s.as_ref().map(|s| s.report.row().submission_id.clone());
    if let Given::Export {
        path,
        store,
        selected,
        ..
    } = &a
    {
        let id = export_pick(path, store.as_ref(), selected, other_id(&side_b), now)?;
        side_a = Some(load(store.as_ref(), path, &id, like_b, cw, now)?);
    }
    if let Given::Export {
        path,
        store,
        selected,
        ..
    } = &b
    {
        let id = export_pick(path, store.as_ref(), selected, other_id(&side_a), now)?;
        side_b = Some(load(store.as_ref(), path, &id, like_a, cw, now)?);
    }
    let (a, b) = (side_a.expect("read"), side_b.expect("read"));
    let d = diff::diff(&a, &b);
    if args.json {
        writeln!(out, "{:#}", diff::to_json(&a, &b, &d))?;
    } else {
        out.write_all(diff::to_text(&a, &b, &d).as_bytes())?;
    }
    if d.is_equal() {
        Ok(())
    } else {
        Err(CliError {
            message: String::new(),
            hint: None,
            code: 1,
        })
    }
}

/// Submission `q` of `store`, read whole and judged; with `redact`, from a redacted copy of its
/// session (the other side is a redacted export).
fn load(
    store: &dyn Backend,
    source: &str,
    q: &str,
    redact: Option<Redaction>,
    cw: Option<u64>,
    now: i64,
) -> Result<Side, CliError> {
    let Some(r) = redact else {
        return Ok(Side {
            source: source.to_string(),
            report: SubmissionReport::load(store.reader(), q, cw, now)?,
        });
    };
    let row = store.find_submission(q)?;
    let copy = export::redacted_copy(store, &row.session_key, r)?;
    Ok(Side {
        source: format!(
            "{source} (redacted like the other side: {})",
            r.rules().join(", ")
        ),
        report: SubmissionReport::load(copy.reader(), &row.submission_id, cw, now)?,
    })
}

/// The submission an export side is compared on: the other side's (where the export holds it),
/// else the one the export names as selected, else its only one.
fn export_pick(
    path: &str,
    store: &dyn Backend,
    selected: &Option<String>,
    other: Option<String>,
    now: i64,
) -> Result<String, CliError> {
    let ids: Vec<String> = store
        .list_submissions(turnscope_store::RowFilter::All, now)?
        .into_iter()
        .map(|r| r.submission_id)
        .collect();
    let pick = other
        .filter(|o| ids.contains(o))
        .or_else(|| selected.clone().filter(|s| ids.contains(s)))
        .or_else(|| (ids.len() == 1).then(|| ids[0].clone()));
    pick.ok_or_else(|| {
        CliError::new(
            format!(
                "{path} holds {} submissions and names none to compare",
                ids.len()
            ),
            "export with a submission id (turnscope export ID -o FILE), or give the other side as a submission id the export holds",
            exit::USAGE,
        )
    })
}
