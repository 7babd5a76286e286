//! `turnscope diff A B` on a flue 2.x journal or export: each side an export file
//! (`turnscope.flue2.export/1`, a path that exists) or a submission id or prefix in the `--db`
//! journal, both read as `show --json` reads them at the same clock and compared by
//! `turnscope_engine::flue2_diff`. Exit 0 when equal, 1 when different (like diff(1) and
//! beta.7's diff); an error exits 2 or more.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::args::{Cli, DiffArgs};
use super::common::{exit, now_ms, CliError};
use super::output::print_json;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_diff::{diff_json, differences, show_doc};
use turnscope_store::{is_flue2_export, Flue2SqliteReader};

/// A side as given: an export file opened, or an id in the `--db` journal.
enum Given {
    Export(String, Flue2SqliteReader),
    Id(String),
}

fn given(arg: &str) -> Result<Given, CliError> {
    let p = Path::new(arg);
    if !p.is_file() {
        return Ok(Given::Id(arg.to_string()));
    }
    if !is_flue2_export(p) {
        return Err(CliError::new(
            format!("{arg}: not a flue 2.x export (turnscope.flue2.export/1)"),
            "on a flue 2.x journal each side is a 2.x export (turnscope export ID -o FILE) or a submission id in --db",
            exit::USAGE,
        ));
    }
    Ok(Given::Export(
        arg.to_string(),
        Flue2SqliteReader::open_export(p)?,
    ))
}

/// The submission an export was made for (its `selected`, else its `target`), where it names one.
fn export_selected(path: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        selected: Option<String>,
        target: Option<String>,
    }
    let file = std::fs::File::open(path).ok()?;
    let head: Head = serde_json::from_reader(std::io::BufReader::new(file)).ok()?;
    head.selected.or(head.target)
}

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &DiffArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    // 1 means "different": an error that would exit 1 exits 2 here.
    match compare(cli, opts, reader, args, out) {
        Err(mut e) if e.code == exit::ERROR && !e.message.is_empty() => {
            e.code = exit::USAGE;
            Err(e)
        }
        other => other,
    }
}

fn compare(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &DiffArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let (a, b) = (given(&args.a)?, given(&args.b)?);
    // The submission: the one an id names (in --db), else the export's own target.
    let id = match (&a, &b) {
        (Given::Id(q), _) | (_, Given::Id(q)) => reader.find_submission(q)?.submission_id,
        (Given::Export(path, r), _) => {
            let rows = r.submissions()?;
            let selected = export_selected(path);
            match rows.as_slice() {
                [one] => one.submission_id.clone(),
                _ if selected
                    .as_ref()
                    .is_some_and(|id| rows.iter().any(|r| &r.submission_id == id)) =>
                {
                    selected.unwrap_or_default()
                }
                _ => {
                    return Err(CliError::new(
                        format!("{path} holds {} submissions: which one to compare?", rows.len()),
                        "give one side as a submission id: turnscope --db EXPORT.json diff EXPORT.json ID",
                        exit::USAGE,
                    ))
                }
            }
        }
    };
    let db_source = reader.path().display().to_string();
    let side = |g: &Given| -> Result<(String, Value), CliError> {
        Ok(match g {
            Given::Export(path, r) => (path.clone(), show_doc(r, opts, &id, now)?),
            Given::Id(_) => (db_source.clone(), show_doc(reader, opts, &id, now)?),
        })
    };
    let (sa, da) = side(&a)?;
    let (sb, db) = side(&b)?;
    let diffs = differences(&da, &db);
    if args.json {
        print_json(
            out,
            &diff_json(
                opts,
                reader.format_version(),
                (&sa, &da),
                (&sb, &db),
                &diffs,
            ),
        )?;
    } else {
        writeln!(out, "{}", opts.header_line(reader.format_version()))?;
        writeln!(
            out,
            "diff {}: a {}, b {}",
            sanitize(&id),
            sanitize(&sa),
            sanitize(&sb)
        )?;
        if diffs.is_empty() {
            writeln!(
                out,
                "equal: the row, the verdict, the plan and the conversation"
            )?;
        }
        for d in &diffs {
            writeln!(out, "{}", sanitize(&line(&d.field, &d.a, &d.b)))?;
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(CliError {
            message: String::new(),
            hint: None,
            code: 1,
        })
    }
}

/// One difference in a line: `~ submission.status  running → settled`, `+ following.ID
/// assistant stop`, `- …`.
fn line(field: &str, a: &Value, b: &Value) -> String {
    let short = |v: &Value| -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Object(o) if o.contains_key("role") => format!(
                "{} {}",
                o["role"].as_str().unwrap_or(""),
                o.get("stopReason")
                    .or_else(|| o.get("toolName"))
                    .or_else(|| o.get("signalType"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            Value::Object(o) if o.contains_key("column") => {
                o["column"].as_str().unwrap_or("").to_string()
            }
            other => {
                let t = other.to_string();
                if t.chars().count() > 60 {
                    format!("{}…", t.chars().take(60).collect::<String>())
                } else {
                    t
                }
            }
        }
    };
    match (a.is_null(), b.is_null(), field.starts_with("following.")) {
        (true, false, true) => format!("+ {field:<28} {}", short(b)),
        (false, true, true) => format!("- {field:<28} {}", short(a)),
        _ => format!("~ {field:<28} {} → {}", short(a), short(b)),
    }
}
