use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use turnscope::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                cli::exit::USAGE as u8
            } else {
                0
            });
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli::run(&cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.message.is_empty() => ExitCode::from(e.code as u8),
        Err(e) => {
            let _ = out.flush();
            eprintln!("error: {}", cli::sanitize(&e.message));
            if let Some(h) = &e.hint {
                eprintln!("hint: {}", cli::sanitize(h));
            }
            ExitCode::from(e.code as u8)
        }
    }
}
