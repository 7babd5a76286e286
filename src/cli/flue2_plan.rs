//! A flue 2.x plan in text (the step, why, its writes, the row after it, the resume), as `show`
//! and the 2.x actions' previews print it.

use std::io::Write;

use super::common::CliError;
use turnscope_core::text::sanitize;

/// A plan under `label` (`next` for the one the command's clock gives): the step and why; with
/// `full` its writes, the row after it and the resume.
pub fn write_flue2_plan(
    p: &turnscope_core::flue2::Flue2Plan,
    label: &str,
    full: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let kv = |out: &mut dyn Write, k: &str, v: String| writeln!(out, "  {k:<16}{v}");
    let step = match p.step.number() {
        Some(n) => format!("step {n} ({}) of the reconciler", p.step.name()),
        None => format!("no reconciler step ({})", p.step.name()),
    };
    kv(out, label, format!("{step}: {}", sanitize(&p.why)))?;
    if !full {
        return Ok(());
    }
    for (n, w) in p.writes.iter().enumerate() {
        writeln!(out, "    {}. {}", n + 1, sanitize(&w.describe()))?;
    }
    if let Some(a) = &p.row_after {
        kv(
            out,
            "row after",
            format!(
                "status {}, attempts {}, attempt id {}, error {}{}",
                sanitize(&a.status),
                a.attempt_count,
                match a.attempt_id {
                    turnscope_core::flue2::AttemptChange::Same => "kept",
                    turnscope_core::flue2::AttemptChange::New => "new",
                    turnscope_core::flue2::AttemptChange::Cleared => "cleared",
                },
                a.error
                    .as_deref()
                    .map_or("none".into(), |e| format!("{:?}", sanitize(e))),
                a.settlement_outcome
                    .as_deref()
                    .map_or(String::new(), |o| format!(
                        ", settlement outcome {}",
                        sanitize(o)
                    ))
            ),
        )?;
    }
    if let Some(r) = &p.resume {
        write_flue2_resume(r, out)?;
    }
    Ok(())
}

/// What a replaced attempt or the next claim will do (`resume`), and how it ends.
pub fn write_flue2_resume(
    r: &turnscope_core::flue2::Flue2Resume,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let kv = |out: &mut dyn Write, k: &str, v: String| writeln!(out, "  {k:<16}{v}");
    kv(
        out,
        "resume",
        format!(
            "what the {} will do",
            if r.after == "replacement" {
                "replacement attempt"
            } else {
                "next claim"
            }
        ),
    )?;
    for (n, a) in r.actions.iter().enumerate() {
        writeln!(out, "    {}. {}", n + 1, sanitize(&a.describe()))?;
    }
    writeln!(
        out,
        "    then: {} (classified {} after its repairs)",
        sanitize(&r.end.describe()),
        sanitize(&r.classification)
    )?;
    Ok(())
}
