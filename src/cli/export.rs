//! `turnscope export`: the TUI's `e` on the command line, the same document
//! ([`turnscope_engine::report::export`]), on stdout or in a file that is never silently replaced.

use std::io::Write;
use std::path::Path;

use super::args::{Cli, ExportArgs};
use super::{exit, now_ms, CliError};
use turnscope_core::text::sanitize;
use turnscope_engine::report::export;
use turnscope_engine::report::redact::Redaction;
use turnscope_store::Backend;

pub fn run(
    store: &dyn Backend,
    cli: &Cli,
    args: &ExportArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    if let Some(path) = &args.output {
        // Checked before the (possibly long) read, and again when the file is created.
        check_output(path, args.force)?;
    }
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
    let target = export::resolve(store, &args.submission)?;
    let built = export::build(
        store,
        target.as_target(),
        cli.context_window,
        now,
        redaction,
    )?;
    let text = export::to_text(&built.document);
    let Some(path) = &args.output else {
        out.write_all(text.as_bytes())?;
        return Ok(());
    };
    write_file(path, &text, args.force)?;
    let head = match &built.selected {
        Some(id) => format!(
            "submission {} (session {}: ",
            sanitize(id),
            sanitize(&built.session_key)
        ),
        None => format!("session {} (", sanitize(&built.session_key)),
    };
    writeln!(
        out,
        "exported {head}{}, {}{}) to {}",
        count(built.entries, "entry", "entries"),
        count(built.submissions, "submission", "submissions"),
        match redaction {
            Some(r) => format!(", redacted: {}", r.rules().join(", ")),
            None => String::new(),
        },
        sanitize(&path.display().to_string()),
    )?;
    writeln!(
        out,
        "next: turnscope --db {} show {}   (an export opens read-only, like a database)",
        sanitize(&path.display().to_string()),
        sanitize(built.selected.as_deref().unwrap_or("<submission>")),
    )?;
    Ok(())
}

pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(super) fn check_output(path: &Path, force: bool) -> Result<(), CliError> {
    let shown = sanitize(&path.display().to_string());
    if path.is_dir() {
        return Err(CliError::new(
            format!("--output {shown} is a directory"),
            format!(
                "give a file path, e.g. --output {}",
                sanitize(&path.join("export.json").display().to_string())
            ),
            exit::USAGE,
        ));
    }
    if !force && (path.exists() || path.is_symlink()) {
        return Err(exists(&shown));
    }
    Ok(())
}

fn exists(shown: &str) -> CliError {
    CliError::new(
        format!("{shown} already exists"),
        "pass --force to replace it, or give another --output path",
        exit::USAGE,
    )
}

/// Write `text` to `path`, readable by its owner only (an export holds whole conversations).
/// Without `force` the file must not exist; with it, the new file is written beside it and
/// renamed over it, so a replaced file never keeps its old permissions or half its old text.
pub(super) fn write_file(path: &Path, text: &str, force: bool) -> Result<(), CliError> {
    let shown = sanitize(&path.display().to_string());
    let staging = if force {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
    } else {
        path.to_path_buf()
    };
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let cannot = |e: std::io::Error| {
        CliError::new(
            format!("could not write {shown}: {e}"),
            "give a path in an existing directory you can write to",
            exit::ERROR,
        )
    };
    let mut f = match o.open(&staging) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && !force => {
            return Err(exists(&shown))
        }
        Err(e) => return Err(cannot(e)),
    };
    let written = f.write_all(text.as_bytes()).and_then(|_| f.sync_all());
    drop(f);
    let done = written.and_then(|_| {
        if force {
            std::fs::rename(&staging, path)
        } else {
            Ok(())
        }
    });
    if let Err(e) = done {
        let _ = std::fs::remove_file(&staging);
        return Err(cannot(e));
    }
    Ok(())
}
