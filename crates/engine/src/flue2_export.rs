//! `turnscope export` on a flue 2.x journal: one agent instance whole (its stream's batches and
//! its submission rows, as stored: `turnscope_store`'s `export_rows`), each submission inspected
//! as `list` inspects it, in one document (`turnscope.flue2.export/1`) that `--db` opens again
//! read-only.

use serde_json::{json, Value};
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_store::{Flue2SqliteReader, StoreError, FLUE2_EXPORT_SCHEMA};

use crate::flue2::{item_json, Flue2Options, Streams};
use crate::flue2_find::instance_of;
use crate::flue2_redact::redact_rows;
use crate::report::redact::Redaction;

/// A built export and what it holds, for the line the CLI prints.
pub struct Flue2Export {
    pub document: Value,
    pub stream: String,
    /// The submission asked for, when the target was one.
    pub selected: Option<String>,
    pub submissions: usize,
    pub batches: usize,
}

/// The stream `target` names: a stream path or an instance id (one stream), else a submission
/// id or unique prefix (its instance's stream), and the submission it named.
pub fn resolve(
    reader: &Flue2SqliteReader,
    target: &str,
) -> Result<(String, Option<Flue2SubmissionRow>), StoreError> {
    let streams = reader.streams()?;
    if let Some(s) = streams.iter().find(|s| s.path == target) {
        return Ok((s.path.clone(), None));
    }
    let by_instance: Vec<_> = streams
        .iter()
        .filter(|s| instance_of(s) == target)
        .collect();
    match by_instance.as_slice() {
        [one] => return Ok((one.path.clone(), None)),
        [] => {}
        many => {
            return Err(StoreError::Ambiguous {
                query: target.into(),
                candidates: many.iter().map(|s| s.path.clone()).collect(),
            })
        }
    }
    let row = reader.find_submission(target)?;
    let path = row
        .session()
        .map(|k| k.stream_path())
        .ok_or_else(|| StoreError::Flue2Unreadable {
            what: format!(
                "submission {} has a session key the runtime does not write ({:?}): it names no agent instance",
                row.submission_id, row.session_key
            ),
        })?;
    Ok((path, Some(row)))
}

/// Build the export of `target` at `now_ms`, its rows redacted by `redaction` where given.
/// The submissions' reports are computed on the rows as exported (redacted), as `--db` on the
/// file computes them.
pub fn build(
    reader: &Flue2SqliteReader,
    options: &Flue2Options,
    target: &str,
    now_ms: i64,
    redaction: Option<Redaction>,
) -> Result<Flue2Export, StoreError> {
    let (stream, selected, ids, mut rows) = reader.in_snapshot(|reader| {
        let (stream, selected) = resolve(reader, target)?;
        let ids: Vec<String> = reader
            .submissions()?
            .into_iter()
            .filter(|r| r.session().is_some_and(|k| k.stream_path() == stream))
            .map(|r| r.submission_id)
            .collect();
        let rows = reader.export_rows(&stream, &ids)?;
        Ok((stream, selected, ids, rows))
    })?;
    if let Some(r) = redaction {
        redact_rows(&mut rows, r);
    }
    let exported = Flue2SqliteReader::from_rows(&rows, reader.path())?;
    let mut built = inspect(&exported, options, &stream, now_ms)?;
    let mut doc = options.header(FLUE2_EXPORT_SCHEMA, reader.format_version());
    doc.insert("exportedAt".into(), json!(now_ms));
    doc.insert("source".into(), json!(reader.path().display().to_string()));
    doc.insert("target".into(), json!(target));
    doc.insert(
        "selected".into(),
        json!(selected.as_ref().map(|r| &r.submission_id)),
    );
    doc.insert("stream".into(), json!(stream));
    if let Some(r) = redaction {
        doc.insert(
            "redaction".into(),
            json!({
                "rules": r.rules(),
                "marker": "[redacted: N chars] for a string (an empty one stays empty); [redacted: number] and [redacted: boolean] for other values; objects keep their keys, arrays their length",
                "kept": "ids, types, stop reasons, error messages, usage, signal types, timestamps, tool names and call ids, the submission rows' columns but the payload's message",
            }),
        );
    }
    doc.insert(
        "submissions".into(),
        Value::Array(std::mem::take(&mut built.0)),
    );
    doc.insert("rows".into(), rows);
    Ok(Flue2Export {
        document: Value::Object(doc),
        stream,
        selected: selected.map(|r| r.submission_id),
        submissions: ids.len(),
        batches: built.1,
    })
}

/// Each submission of the instance at `stream` as `list --json` shows it, and the batches read.
fn inspect(
    reader: &Flue2SqliteReader,
    options: &Flue2Options,
    stream: &str,
    now_ms: i64,
) -> Result<(Vec<Value>, usize), StoreError> {
    reader.in_snapshot(|reader| {
        let all = reader.submissions()?;
        let joined = turnscope_core::flue2::joined_by_host(&all);
        let rows: Vec<Flue2SubmissionRow> = all
            .into_iter()
            .filter(|r| r.session().is_some_and(|k| k.stream_path() == stream))
            .collect();
        let mut streams = Streams::default();
        streams.load(reader, &rows)?;
        let batches = streams.get(stream).map_or(0, |f| f.batches);
        let items: Vec<Value> = rows
            .iter()
            .map(|r| {
                let j = joined.get(&r.submission_id).cloned().unwrap_or_default();
                item_json(&streams.inspect(r, options, j, now_ms), now_ms)
            })
            .collect();
        Ok((items, batches))
    })
}
