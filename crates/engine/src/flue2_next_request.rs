//! `next-request` on a flue 2.x journal: the submission inspected as `show` inspects it (its
//! instance's stream folded, classified, planned at the command's clock), then
//! `turnscope_core::flue2::flue2_next_request` over its conversation and plan. The document is
//! beta.7's `turnscope.next-request/1` ([`NextRequestReport`]) with `"format": "flue-2.x"`, the
//! classifier, the model library the request is transformed with, and the resume it follows.
//!
//! An instance (a stream path or instance id) without a submission named: its conversation's
//! next input follows the stored path (the instance must hold one conversation).

use serde_json::{json, Value};
use turnscope_core::flue2::{
    flue2_next_input, flue2_next_request, Conversation, FLUE2_MODEL_LIBRARY,
};
use turnscope_core::recovery::next_request::ModelLibrary;
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::flue2::{Flue2Options, Streams, FORMAT};
use crate::flue2_export::resolve;
use crate::report::next_request::NextRequestReport;

/// A 2.x next request, with what the 2.x document adds.
pub struct Flue2NextRequestReport {
    pub report: NextRequestReport,
    /// The resume simulated (`plan.resume`), as JSON; `null` where none follows.
    pub resume: Value,
    /// The header fields of every 2.x document (format, classifier).
    pub header: serde_json::Map<String, Value>,
}

impl Flue2NextRequestReport {
    /// `turnscope.next-request/1` with `"format": "flue-2.x"`.
    pub fn to_json(&self) -> Value {
        let mut doc = self.report.to_json();
        if let Some(o) = doc.as_object_mut() {
            for (k, v) in &self.header {
                if k != "schema" {
                    o.insert(k.clone(), v.clone());
                }
            }
            o.insert("format".into(), json!(FORMAT));
            o.insert("modelLibrary".into(), json!(FLUE2_MODEL_LIBRARY));
            o.insert("resume".into(), self.resume.clone());
            o.insert(
                "notRead".into(),
                json!("the fold keeps no signal text or attributes, tool result content, thinking, answering model or compaction summary: messages are exact by role and id, their text partial"),
            );
        }
        doc
    }

    /// The view as lines of text: the 2.x header line, then beta.7's view.
    pub fn text_lines(&self, header_line: String) -> Vec<String> {
        let mut out = vec![header_line];
        // beta.7's line says why no model is known there; on 2.x the fold does not keep it.
        out.extend(self.report.text_lines().into_iter().map(|l| {
            if l.starts_with("model     unknown") {
                "model     not read (the fold does not keep it): nothing renamed, images kept"
                    .into()
            } else {
                l
            }
        }));
        out.push(String::new());
        out.push(format!(
            "transformed as pi-ai {} does; signal text, tool result content and the model are not read (the fold does not keep them)",
            match FLUE2_MODEL_LIBRARY {
                ModelLibrary::PiAi0_83_0 => "0.83.0",
                ModelLibrary::PiAi0_79_10 => "0.79.10",
            }
        ));
        out
    }
}

/// The next request of `query` (a submission id or unique prefix, a stream path or instance id)
/// at `now_ms`, read in one snapshot.
pub fn load(
    reader: &Flue2SqliteReader,
    options: &Flue2Options,
    query: &str,
    now_ms: i64,
) -> Result<Flue2NextRequestReport, StoreError> {
    let mut streams = Streams::default();
    let (stream, row, joined, state) = reader.in_snapshot(|reader| {
        let (stream, row) = resolve(reader, query)?;
        let joined = match &row {
            Some(r) => reader.joined_into(&r.submission_id)?,
            None => Vec::new(),
        };
        let state = match &row {
            Some(r) => {
                streams.load(reader, [r])?;
                None
            }
            None => Some(crate::flue2::fold_stream(reader, &stream)?),
        };
        Ok((stream, row, joined, state))
    })?;
    let header = options.header("turnscope.next-request/1", reader.format_version());
    let Some(row) = row else {
        let folded = state.map(|s| s.state);
        let conversations: Vec<&Conversation> = match &folded {
            Some(Ok(s)) => s.conversations.iter().collect(),
            Some(Err(e)) => {
                return Err(StoreError::Flue2Unreadable {
                    what: format!("the runtime cannot load instance {stream}: {e}"),
                })
            }
            None => Vec::new(),
        };
        let [conversation] = conversations.as_slice() else {
            return Err(StoreError::Flue2Unreadable {
                what: format!(
                    "instance {stream} holds {} conversations: name one of its submissions",
                    conversations.len()
                ),
            });
        };
        let view = flue2_next_input(conversation);
        return Ok(Flue2NextRequestReport {
            report: NextRequestReport {
                session_key: format!("{stream} {}/{}", conversation.harness, conversation.session),
                submission_id: None,
                verdict: None,
                rule: None,
                note: view.note,
                stored_entries: view.stored_entries,
                request: view.request,
            },
            resume: Value::Null,
            header,
        });
    };
    let i = streams.inspect(&row, options, joined, now_ms);
    let view = flue2_next_request(
        i.row,
        i.conversation,
        i.verdict.as_ref().map_err(String::as_str),
        &i.plan,
    );
    Ok(Flue2NextRequestReport {
        report: NextRequestReport {
            session_key: row.session_key.clone(),
            submission_id: Some(row.submission_id.clone()),
            verdict: Some(i.label()),
            rule: Some(i.plan.step.column()),
            note: view.note.clone(),
            stored_entries: view.stored_entries,
            request: view.request,
        },
        resume: view.resume.as_ref().map_or(Value::Null, resume_json),
        header,
    })
}

/// The resume as `plan.resume` of the 2.x documents shows it (each action and the end with its
/// `description`).
fn resume_json(r: &turnscope_core::flue2::Flue2Resume) -> Value {
    let described = |v: Value, d: String| match v {
        Value::Object(mut m) => {
            m.insert("description".into(), json!(d));
            Value::Object(m)
        }
        other => other,
    };
    json!({
        "after": r.after,
        "actions": r.actions.iter().map(|a| described(serde_json::to_value(a).unwrap_or(Value::Null), a.describe())).collect::<Vec<_>>(),
        "classification": r.classification,
        "end": described(serde_json::to_value(&r.end).unwrap_or(Value::Null), r.end.describe()),
    })
}
