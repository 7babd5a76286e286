//! What every CLI write shares before it writes: an explicit yes from a person at a terminal (or
//! `-y`), the operator's name, and the warning when a runtime is live beside the write.

use std::io::{BufRead, IsTerminal, Write};

use super::args::Cli;
use super::{exit, CliError};

/// The answer to "apply these writes?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    Declined,
}

/// Where the prompt goes: stdout for human output, stderr when stdout carries a JSON document.
fn prompt_is_terminal(json: bool) -> bool {
    if json {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    }
}

/// Ask for an explicit yes. `-y` answers it; otherwise a person must answer at a terminal: stdin
/// and the prompt's output both terminals. Off a terminal without `-y` nothing is written: a
/// piped `n`, `/dev/null` or a script never counts as an answer (exit 2 with a hint).
pub fn ask(yes: bool, json: bool, command: &str, out: &mut dyn Write) -> Result<Answer, CliError> {
    if yes {
        return Ok(Answer::Yes);
    }
    if !std::io::stdin().is_terminal() || !prompt_is_terminal(json) {
        return Err(CliError::new(
            "refusing to write without an explicit yes: stdin or the prompt's output is not a terminal, so no one can answer",
            format!("run it at a terminal and answer y, or add -y to apply without asking (`turnscope --write {command} -y`); --dry-run previews without writing"),
            exit::USAGE,
        ));
    }
    let question = "apply these writes? [y/N] ";
    if json {
        eprint!("{question}");
    } else {
        write!(out, "{question}")?;
        out.flush()?;
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(if matches!(line.trim(), "y" | "Y" | "yes") {
        Answer::Yes
    } else {
        Answer::Declined
    })
}

/// The error of a declined confirmation (its own exit code).
pub fn declined() -> CliError {
    CliError::new(
        "declined: nothing written",
        "answer y at the prompt to apply, or add -y",
        exit::DECLINED,
    )
}

/// `$USER@hostname`, unless `--operator` says otherwise.
pub fn default_operator(cli: &Cli) -> String {
    if let Some(o) = &cli.operator {
        return o.clone();
    }
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "localhost".into());
    format!("{user}@{host}")
}

/// `--operator`, else `$USER@hostname`; an empty name (or only spaces) is refused: every audit
/// row must say who.
pub fn operator(cli: &Cli) -> Result<String, CliError> {
    let name = default_operator(cli);
    if name.trim().is_empty() {
        return Err(CliError::new(
            "the operator name is empty",
            "pass --operator NAME (or set TURNSCOPE_OPERATOR): the audit trail records who wrote",
            exit::USAGE,
        ));
    }
    Ok(name.trim().to_string())
}

/// Write warning lines where the operator sees them: with the preview, or on stderr beside a
/// JSON document.
pub fn say(lines: &[String], json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    for l in lines {
        if json {
            eprintln!("{}", crate::text::sanitize(l));
        } else {
            writeln!(out, "{}", crate::text::sanitize(l))?;
        }
    }
    Ok(())
}
