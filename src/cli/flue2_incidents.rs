//! `turnscope incidents` on a flue 2.x journal: the running submissions whose lease expired,
//! grouped by the worker that held the lease, as on beta.7, each group with the reconciler
//! steps `plan_flue2` says fire next and the command that lists its rows. The grouping and the
//! document are `turnscope_engine::flue2_incidents`'s, which the TUI's incidents screen draws.

use std::io::Write;

use serde_json::{json, Value};

use super::args::Cli;
use super::common::{now_ms, CliError};
use super::incidents::{list_command, write_group_head, write_intro};
use super::output::print_json;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_cost::cost_text;
use turnscope_engine::flue2_incidents::incidents;
use turnscope_store::Flue2SqliteReader;

pub(super) fn run(
    cli: &Cli,
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let now = now_ms(cli);
    let found = incidents(reader, opts, now)?;
    let groups = &found.groups;
    let fv = reader.format_version();
    if json {
        let mut doc = found.doc(opts, fv);
        if let Some(Value::Array(gs)) = doc.get_mut("groups") {
            for (v, g) in gs.iter_mut().zip(groups) {
                if let Some(m) = v.as_object_mut() {
                    m.insert("listCommand".into(), json!(list_command(g)));
                }
            }
        }
        print_json(out, &Value::Object(doc))?;
        return Ok(());
    }
    writeln!(out, "{}", opts.header_line(fv))?;
    if groups.is_empty() {
        writeln!(
            out,
            "no submission has an expired lease: no worker left anything stuck"
        )?;
        return Ok(());
    }
    write_intro(
        out,
        found.stuck.len(),
        groups,
        now,
        " Steps are the runtime's reconciler's (`turnscope show ID` says why).",
    )?;
    for g in groups {
        write_group_head(out, g, now)?;
        let c = found.cost_of(&g.submissions);
        writeln!(
            out,
            "  cost     {} since the inputs ({} tokens)",
            cost_text(Some(&c)),
            c.total_tokens
        )?;
        if let Some(cmd) = list_command(g) {
            writeln!(out, "  list     {}", sanitize(&cmd))?;
        }
    }
    let all_cost = found.total_cost();
    writeln!(
        out,
        "cost since the inputs, all stuck submissions: {} ({} tokens)",
        cost_text(Some(&all_cost)),
        all_cost.total_tokens
    )?;
    Ok(())
}
