//! `turnscope sessions [QUERY] [--text TEXT]` on a flue 2.x journal: the agent instances (one
//! conversation stream each) an id names or whose records hold the text
//! (`turnscope_engine::flue2_find`), printed as they are found, as on beta.7.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::AtomicBool;

use serde_json::{json, Value};

use super::args::SessionsArgs;
use super::common::{exit, CliError};
use super::progress::Bar;
use super::sessions::{describe, summary, Shown};
use turnscope_core::journal::search::Needle;
use turnscope_core::text::sanitize;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_find::{find_streams, search_text, Flue2Match, Flue2Searched};
use turnscope_store::{thousands, Flue2SqliteReader};

pub(super) fn run(
    opts: &Flue2Options,
    reader: &Flue2SqliteReader,
    args: &SessionsArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let query = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let text = args.text.as_deref().filter(|t| !t.is_empty());
    if query.is_none() && text.is_none() {
        return Err(CliError::new(
            "sessions needs a QUERY, --text TEXT, or both",
            "turnscope sessions sub_01M92S7V   (an id or instance); turnscope sessions --text 'SK 803'   (text in any instance's records)",
            exit::USAGE,
        ));
    }
    let limit = args.limit.map_or(usize::MAX, |n| n as usize);
    let fv = reader.format_version().to_string();
    let mut shown = Shown::new(args.json, Some(opts.header_line(&fv)), out, limit);
    let searched = reader.in_snapshot(|reader| {
        if let Some(q) = query {
            for m in find_streams(reader, q)? {
                if !show(&mut shown, m) {
                    break;
                }
            }
        }
        let (Some(t), false) = (text, shown.truncated) else {
            return Ok(None);
        };
        let needle = Needle::new(t).expect("not empty");
        // Both callbacks reach the bar, one after the other.
        let bar: RefCell<Option<Bar>> = RefCell::new(None);
        let json = args.json;
        let s = search_text(
            reader,
            &needle,
            &mut |m| match &*bar.borrow() {
                Some(b) => b.suspend(|| show(&mut shown, m)),
                None => show(&mut shown, m),
            },
            &mut |s| {
                bar.borrow_mut()
                    .get_or_insert_with(|| {
                        Bar::new(json, "searching instances", s.streams_total as u64)
                    })
                    .set(s.streams as u64)
            },
            &AtomicBool::new(false),
        );
        if let Some(b) = &mut *bar.borrow_mut() {
            b.clear();
        }
        s.map(Some)
    })?;
    if let Some(e) = shown.error.take() {
        return Err(e.into());
    }
    let what = describe(query, text);
    let searched_text = searched.as_ref().map(|s: &Flue2Searched| {
        if s.finished {
            format!("searched {}", s.describe())
        } else {
            format!(
                "searched {} of {} streams",
                thousands(s.streams),
                thousands(s.streams_total)
            )
        }
    });
    if shown.sessions.is_empty() {
        return Err(not_found(&what, searched_text.as_deref()));
    }
    if args.json {
        let mut doc = opts.header("turnscope.flue2.sessions/1", &fv);
        doc.insert("query".into(), json!(query));
        doc.insert("text".into(), json!(text));
        doc.insert("limit".into(), json!(args.limit));
        doc.insert("instances".into(), json!(shown.sessions.len()));
        doc.insert("truncated".into(), json!(shown.truncated));
        doc.insert("matches".into(), Value::Array(shown.matches));
        doc.insert(
            "searched".into(),
            json!(searched.as_ref().map(|s| json!({
                "streams": s.streams,
                "streamsTotal": s.streams_total,
                "batches": s.batches,
                "bytes": s.bytes,
                "finished": s.finished,
            }))),
        );
        super::output::print_json(shown.out, &Value::Object(doc))?;
        return Ok(());
    }
    let tail = summary(
        ("instance", "instances"),
        shown.sessions.len(),
        &what,
        searched_text.as_deref(),
        shown.truncated.then_some(limit),
    );
    writeln!(shown.out, "{}", sanitize(&tail))?;
    Ok(())
}

fn not_found(what: &str, searched: Option<&str>) -> CliError {
    let searched = searched.map(|s| format!(" ({s})")).unwrap_or_default();
    CliError::new(
        format!("no agent instance matches {what}{searched}"),
        "an id matches only what the journal holds (a submission id from 4 characters, a stream path, an instance, an attempt, owner, conversation or record id); try --text TEXT to search every record",
        exit::NOT_FOUND,
    )
}

/// A match shown: its stream is the key `--limit` counts.
fn show(shown: &mut Shown<'_>, m: Flue2Match) -> bool {
    let key = m.stream.clone();
    shown.show_match(&key, || m.json(), || line(&m))
}

/// `text  agents/worker/s1  record rec_… (user_message) in batch 3: …`, terminal-safe.
fn line(m: &Flue2Match) -> String {
    let value = match &m.record {
        Some(r) => format!(
            "record {} ({}) in batch {}: {}",
            sanitize(&r.id),
            sanitize(&r.kind),
            r.seq,
            sanitize(&m.value)
        ),
        None => sanitize(&m.value),
    };
    format!("{:<15}  {}  {value}", m.kind.label(), sanitize(&m.stream))
}
