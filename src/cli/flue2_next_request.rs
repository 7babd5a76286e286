//! `turnscope next-request` on a flue 2.x journal (or export): what the runtime's next model
//! call sends, as text or `turnscope.next-request/1` with `"format": "flue-2.x"`
//! ([`turnscope_engine::flue2_next_request`]).

use std::io::Write;

use super::args::Cli;
use super::common::{exit, now_ms, CliError};
use super::output::print_json;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_next_request::load;
use turnscope_store::Flue2SqliteReader;

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    target: &str,
    vision: Option<bool>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if vision.is_some() {
        // The fold does not keep the answering model nor images' bytes: nothing to apply it to.
        return Err(CliError::new(
            "--vision does not apply to a flue 2.x journal: turnscope does not read the model or the images of its records",
            "leave out --vision",
            exit::USAGE,
        ));
    }
    let report = load(reader, opts, target, now_ms(cli))?;
    if json {
        print_json(out, &report.to_json())?;
        return Ok(());
    }
    for line in report.text_lines(opts.header_line(reader.format_version())) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
