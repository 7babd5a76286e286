//! `turnscope export` on a flue 2.x journal: one agent instance whole
//! (`turnscope_engine::flue2_export`), on stdout or in a file that is never silently replaced;
//! `turnscope --db FILE` opens it again, read-only.

use std::io::Write;

use super::args::{Cli, ExportArgs};
use super::common::{exit, now_ms, CliError};
use super::export::{check_output, count, write_file};
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_export::build;
use turnscope_engine::report::redact::Redaction;
use turnscope_store::Flue2SqliteReader;

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &ExportArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let redaction = match &args.redact {
        None => None,
        Some(rules) => Some(Redaction::parse(rules).map_err(|e| {
            CliError::new(
                format!("--redact: {e}"),
                "write `turnscope export TARGET --redact` (all three rules) or --redact=args,results,text; TARGET goes before a bare --redact",
                exit::USAGE,
            )
        })?),
    };
    if let Some(path) = &args.output {
        check_output(path, args.force)?;
    }
    let built = build(reader, opts, &args.submission, now_ms(cli), redaction)?;
    let mut text = serde_json::to_string_pretty(&built.document).unwrap_or_default();
    text.push('\n');
    let Some(path) = &args.output else {
        out.write_all(text.as_bytes())?;
        return Ok(());
    };
    write_file(path, &text, args.force)?;
    let shown = sanitize(&path.display().to_string());
    writeln!(
        out,
        "exported instance {} ({}, {}{}{}) to {shown}",
        sanitize(&built.stream),
        count(built.batches, "batch", "batches"),
        count(built.submissions, "submission", "submissions"),
        match redaction {
            Some(r) => format!(", redacted: {}", r.rules().join(", ")),
            None => String::new(),
        },
        built
            .selected
            .as_ref()
            .map(|s| format!(", asked for {}", sanitize(s)))
            .unwrap_or_default(),
    )?;
    writeln!(
        out,
        "next: turnscope --db {shown} show {}   (an export opens read-only, like a database)",
        sanitize(built.selected.as_deref().unwrap_or("<submission>")),
    )?;
    Ok(())
}
