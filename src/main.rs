use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use turnscope::cli::{self, Cli};

#[global_allocator]
static ALLOCATOR: turnscope_store::memory::Allocator = turnscope_store::memory::Allocator {};

fn main() -> ExitCode {
    // A command until the TUI starts, which sets its own (`turnscope_tui::run`).
    turnscope_store::memory::configure_allocator(turnscope_store::memory::Process::Command);
    install_panic_report();
    let cli = match Cli::try_parse_args() {
        Ok(c) => c,
        Err(e) => {
            if e.use_stderr() && json_in_args() {
                // A script that asked for JSON gets its usage error as the error document too.
                let text = e.render().to_string();
                let mut lines = text.lines().filter(|l| !l.trim().is_empty());
                let message = lines
                    .next()
                    .unwrap_or("invalid arguments")
                    .trim_start_matches("error: ")
                    .to_string();
                let hint: Vec<&str> = lines
                    .map(str::trim)
                    .filter(|l| !l.starts_with("For more information"))
                    .collect();
                let doc = serde_json::json!({
                    "schema": "turnscope.error/1",
                    "error": message,
                    "hint": (!hint.is_empty()).then(|| hint.join(" ")),
                    "exitCode": cli::exit::USAGE,
                });
                println!("{doc:#}");
            }
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                cli::exit::USAGE as u8
            } else {
                0
            });
        }
    };
    let stdout = std::io::stdout();
    let mut out = Counted {
        inner: stdout.lock(),
        written: 0,
    };
    // Errors are the operator's to fix: one `error:` line and one `hint:` line, never a report.
    match cli::run(&cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.message.is_empty() => ExitCode::from(e.code as u8),
        Err(e) => {
            let _ = out.flush();
            // A script that asked for JSON reads the error as JSON on stdout too, unless part of
            // a document is already there (a streamed listing cut short stays unclosed).
            if cli::json_requested(&cli) && out.written == 0 {
                let doc = serde_json::json!({
                    "schema": "turnscope.error/1",
                    "error": e.message,
                    "hint": e.hint,
                    "exitCode": e.code,
                });
                let _ = writeln!(out, "{doc:#}");
                let _ = out.flush();
            }
            eprintln!("error: {}", cli::sanitize(&e.message));
            if let Some(h) = &e.hint {
                eprintln!("hint: {}", cli::sanitize(h));
            }
            ExitCode::from(e.code as u8)
        }
    }
}

/// Whether the command line asks for JSON (`--json`, `-o json`, `--output json`), read from the
/// raw arguments: for errors of arguments that did not parse.
fn json_in_args() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().enumerate().any(|(i, a)| {
        a == "--json"
            || a == "-ojson"
            || a == "--output=json"
            || ((a == "-o" || a == "--output") && args.get(i + 1).is_some_and(|v| v == "json"))
    })
}

/// Stdout, counting what was written to it.
struct Counted<W> {
    inner: W,
    written: usize,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A panic is a bug: color-eyre's report, with what to send and where, printed after the terminal
/// is given back (a report written over the TUI's alternate screen in raw mode would be lost) and
/// appended to the log file when `TURNSCOPE_LOG` names one.
fn install_panic_report() {
    let log = std::env::var_os("TURNSCOPE_LOG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let colour = std::io::stderr().is_terminal() && !turnscope_tui::no_color_env();
    let builder = if colour {
        color_eyre::config::HookBuilder::default()
    } else {
        color_eyre::config::HookBuilder::blank()
    };
    let (panic_hook, eyre_hook) = builder
        .display_env_section(true)
        .panic_section(bug_report_section(log.as_deref()))
        .into_hooks();
    // Only fails when a hook is already installed, and then that one reports.
    let _ = eyre_hook.install();
    std::panic::set_hook(Box::new(move |info| {
        turnscope_tui::restore_terminal();
        let report = panic_hook.panic_report(info).to_string();
        eprintln!("{report}");
        if let Some(path) = &log {
            append_to_log(path, &report);
        }
    }));
}

/// Where to file the bug, what to say about this build, and how to get a log.
fn bug_report_section(log: Option<&Path>) -> String {
    let repository = env!("CARGO_PKG_REPOSITORY");
    let file_at = if repository.is_empty() {
        "the turnscope issue tracker".to_string()
    } else {
        format!("{repository}/issues")
    };
    let features = if cfg!(feature = "postgres") {
        "postgres"
    } else {
        "no postgres"
    };
    let log_line = match log {
        Some(p) => format!(
            "this report was also appended to {} (TURNSCOPE_LOG); attach that file",
            p.display()
        ),
        None => "rerun with TURNSCOPE_LOG=/tmp/turnscope.log set, and attach that file".into(),
    };
    format!(
        "This is a bug in turnscope. Please report it.\n\
         \x20 where:   {file_at}\n\
         \x20 version: turnscope {} ({features}; {}-{})\n\
         \x20 log:     {log_line}\n\
         \x20 send:    this report, the command you ran, and what you did just before; the log\n\
         \x20          names databases and submission ids, so look it over first",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
    )
}

/// Append the report, without colour codes, to the log (owner-readable only, like the TUI's log).
fn append_to_log(path: &Path, report: &str) {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    if let Ok(mut f) = o.open(path) {
        let plain = strip_ansi(report);
        let now = turnscope_core::journal::time::iso_from_ms(turnscope_store::clock::now_ms());
        let _ = writeln!(f, "{now} panic report:\n{plain}");
    }
}

/// `text` without SGR colour sequences (the only escapes color-eyre writes).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}
