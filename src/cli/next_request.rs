//! `turnscope next-request`: what the runtime's next turn sends to the provider
//! ([`turnscope_engine::report::next_request`]), as text or `turnscope.next-request/1`.

use std::io::Write;

use super::args::Cli;
use super::{exit, now_ms, CliError};
use turnscope_engine::report::next_request::{NextRequestError, NextRequestReport};
use turnscope_store::Backend;

pub fn run(
    store: &dyn Backend,
    cli: &Cli,
    target: &str,
    vision: Option<bool>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let report = NextRequestReport::load(store, target, cli.context_window, now_ms(cli), vision)
        .map_err(|e| match e {
            NextRequestError::Store(e) => CliError::from(e),
            NextRequestError::NotWhole(what) => CliError::new(
                format!("the session could not be read whole: {what}"),
                "run it again; if it persists, `turnscope export` the session and report it",
                exit::ERROR,
            ),
        })?;
    if json {
        super::output::print_json(out, &report.to_json())?;
        return Ok(());
    }
    for line in report.text_lines() {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
