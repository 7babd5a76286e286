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

/// From this many writes on, a batch is confirmed by typing its count: a reflexive `y` does
/// not apply hundreds of writes.
pub const TYPE_THE_COUNT_FROM: usize = 10;

/// What is asked before a write.
#[derive(Debug, Clone)]
pub struct Question {
    /// The command, for the hint off a terminal (`repair`, …).
    command: String,
    /// The submissions a batch writes to (`None`: one submission's writes).
    batch: Option<usize>,
}

impl Question {
    /// "apply these writes?" for one submission.
    pub fn single(command: &str) -> Question {
        Question {
            command: command.to_string(),
            batch: None,
        }
    }

    /// The question of a batch writing to `count` submissions.
    pub fn batch(command: &str, count: usize) -> Question {
        Question {
            command: command.to_string(),
            batch: Some(count),
        }
    }

    fn prompt(&self) -> String {
        match self.batch {
            None => "apply these writes? [y/N] ".into(),
            Some(n) if n >= TYPE_THE_COUNT_FROM => {
                format!("apply these writes to {n} submissions? type {n} to confirm (anything else declines): ")
            }
            Some(n) => format!("apply these writes to {n} submissions? [y/N] "),
        }
    }

    /// Whether `answer` (one line, trimmed) says yes: `y` or `yes`, or the exact count for a
    /// batch of [`TYPE_THE_COUNT_FROM`] or more.
    pub fn accepts(&self, answer: &str) -> bool {
        match self.batch {
            Some(n) if n >= TYPE_THE_COUNT_FROM => answer == n.to_string(),
            _ => matches!(answer, "y" | "Y" | "yes"),
        }
    }
}

/// Ask for an explicit yes. `-y` answers it; otherwise a person must answer at a terminal: stdin
/// and the prompt's output both terminals. Off a terminal without `-y` nothing is written: a
/// piped `n`, `/dev/null` or a script never counts as an answer (exit 2 with a hint).
pub fn ask(yes: bool, json: bool, command: &str, out: &mut dyn Write) -> Result<Answer, CliError> {
    ask_for(yes, json, &Question::single(command), out)
}

/// [`ask`] with the question of one submission or of a batch.
pub fn ask_for(
    yes: bool,
    json: bool,
    question: &Question,
    out: &mut dyn Write,
) -> Result<Answer, CliError> {
    if yes {
        return Ok(Answer::Yes);
    }
    if !std::io::stdin().is_terminal() || !prompt_is_terminal(json) {
        return Err(CliError::new(
            "refusing to write without an explicit yes: stdin or the prompt's output is not a terminal, so no one can answer",
            format!("run it at a terminal and answer y, or add -y to apply without asking (`turnscope --write {} -y`); --dry-run previews without writing", question.command),
            exit::USAGE,
        ));
    }
    let prompt = question.prompt();
    if json {
        eprint!("{prompt}");
    } else {
        write!(out, "{prompt}")?;
        out.flush()?;
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(if question.accepts(line.trim()) {
        Answer::Yes
    } else {
        Answer::Declined
    })
}

/// The error of a declined confirmation (its own exit code).
pub fn declined() -> CliError {
    declined_for(&Question::single(""))
}

/// [`declined`], its hint saying what the prompt of `question` takes: `y`, or the count typed.
pub fn declined_for(question: &Question) -> CliError {
    let answer = match question.batch {
        Some(n) if n >= TYPE_THE_COUNT_FROM => format!("type {n} at the prompt"),
        _ => "answer y at the prompt".to_string(),
    };
    CliError::new(
        "declined: nothing written",
        format!("{answer} to apply, or add -y"),
        exit::DECLINED,
    )
}

/// `--operator`, else `user@hostname`, the user being `$USER`, else `$LOGNAME`, else the account
/// of this process's effective uid (a root shell in a container, `kubectl exec` and systemd units
/// often have no `$USER`); `None` when none of them names anyone.
pub fn default_operator(cli: &Cli) -> Option<String> {
    if let Some(o) = &cli.operator {
        return Some(o.clone());
    }
    let env = |k: &str| std::env::var(k).ok();
    let user = login_name(&env, &|| whoami::username().ok())?;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "localhost".into());
    Some(format!("{user}@{host}"))
}

/// The user's name: the first of `$USER`, `$LOGNAME` and the account name that is not blank.
fn login_name(
    env: &dyn Fn(&str) -> Option<String>,
    account: &dyn Fn() -> Option<String>,
) -> Option<String> {
    ["USER", "LOGNAME"]
        .into_iter()
        .filter_map(env)
        .chain(std::iter::once_with(account).flatten())
        .map(|n| n.trim().to_string())
        .find(|n| !n.is_empty())
}

/// What the TUI and `config` show for the operator: its name, or why there is none.
pub fn operator_shown(cli: &Cli) -> String {
    default_operator(cli)
        .unwrap_or_else(|| "(nobody: no --operator, $USER, $LOGNAME or account name)".into())
}

/// `--operator`, else `user@hostname` ([`default_operator`]); an operator that resolves to
/// nothing, or to blanks, is refused: every audit row must say who.
pub fn operator(cli: &Cli) -> Result<String, CliError> {
    match default_operator(cli) {
        Some(name) if !name.trim().is_empty() => Ok(name.trim().to_string()),
        Some(_) => Err(CliError::new(
            "the operator name is empty",
            "pass --operator NAME (or set TURNSCOPE_OPERATOR): the audit trail records who wrote",
            exit::USAGE,
        )),
        None => Err(CliError::new(
            "no operator: --operator is not given, $USER and $LOGNAME are unset and this user id has no account name",
            "pass --operator NAME (or set TURNSCOPE_OPERATOR): the audit trail records who wrote",
            exit::USAGE,
        )),
    }
}

#[cfg(test)]
mod operator_tests {
    use super::login_name;

    fn name(user: Option<&str>, logname: Option<&str>, account: Option<&str>) -> Option<String> {
        let env = |k: &str| match k {
            "USER" => user.map(String::from),
            "LOGNAME" => logname.map(String::from),
            _ => None,
        };
        login_name(&env, &|| account.map(String::from))
    }

    #[test]
    fn the_environment_first_then_the_account() {
        assert_eq!(
            name(Some("ana"), Some("bo"), Some("root")).as_deref(),
            Some("ana")
        );
        assert_eq!(name(None, Some("bo"), Some("root")).as_deref(), Some("bo"));
        // A root shell in a container: no $USER, no $LOGNAME, the account of uid 0.
        assert_eq!(name(None, None, Some("root")).as_deref(), Some("root"));
        // Blank values are not names.
        assert_eq!(
            name(Some(" "), Some(""), Some("svc")).as_deref(),
            Some("svc")
        );
        assert_eq!(name(None, None, None), None);
        assert_eq!(name(Some(""), None, Some("  ")), None);
    }
}

/// Write warning lines where the operator sees them: with the preview, or on stderr beside a
/// JSON document.
pub fn say(lines: &[String], json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    for l in lines {
        if json {
            eprintln!("{}", turnscope_core::text::sanitize(l));
        } else {
            writeln!(out, "{}", turnscope_core::text::sanitize(l))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Question;

    #[test]
    fn a_large_batch_is_confirmed_by_its_count() {
        let one = Question::single("repair");
        assert!(one.accepts("y") && one.accepts("yes") && !one.accepts("") && !one.accepts("n"));
        let small = Question::batch("repair", 9);
        assert!(small.accepts("y") && !small.accepts("9") && !small.accepts(""));
        let large = Question::batch("repair", 10);
        assert!(large.accepts("10"));
        assert!(!large.accepts("y") && !large.accepts("yes") && !large.accepts("11"));
        assert!(!large.accepts(""), "no default");
        assert!(large.prompt().contains("type 10 to confirm"));
    }
}
