//! The `turnscope.export/1` document: one session whole (every entry with its stored data) and
//! every submission of it fully inspected, plus the rows themselves byte for byte (`rows`), so
//! `turnscope --db EXPORT.json` opens it again ([`turnscope_store::export_db`]). The TUI's `e`
//! and `turnscope export` both build it here, so an export taken from either front end is the
//! same document.

use serde_json::{json, Value};

use super::redact::Redaction;
use super::SubmissionReport;
use turnscope_core::journal::history::History;
use turnscope_core::journal::submission_rows::instance_id_of;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_store::export_db::{self, ExportRows, RawEntry};
use turnscope_store::{Backend, StoreError, SubmissionBundle};

/// What to export: the session of one submission (which the document names as selected), or a
/// session by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportTarget<'a> {
    /// A full submission id or a unique prefix of one.
    Submission(&'a str),
    Session(&'a str),
}

/// What `turnscope export X` names: a session key (`agent-session:…`, or any key of a session
/// row), a submission id or unique prefix, else an instance id with exactly one session. An
/// instance with several sessions is an error listing them (an export holds one session).
pub fn resolve(store: &dyn Backend, query: &str) -> Result<ResolvedTarget, StoreError> {
    if query.starts_with("agent-session:") {
        return Ok(ResolvedTarget::Session(query.to_string()));
    }
    match store.find_submission(query) {
        Ok(row) => return Ok(ResolvedTarget::Submission(row.submission_id)),
        Err(StoreError::SubmissionNotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    let sessions = store.list_sessions()?;
    if sessions.iter().any(|s| s.id == query) {
        return Ok(ResolvedTarget::Session(query.to_string()));
    }
    let mut of_instance: Vec<_> = sessions
        .iter()
        .filter(|s| s.instance_id.as_deref() == Some(query))
        .collect();
    // Newest first, so the listing starts with the one most likely meant.
    of_instance.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
    match of_instance.as_slice() {
        [] => Err(StoreError::NothingToExport {
            query: query.to_string(),
        }),
        [one] => Ok(ResolvedTarget::Session(one.id.clone())),
        many => Err(StoreError::SeveralSessions {
            instance: query.to_string(),
            sessions: many.iter().map(|s| s.id.clone()).collect(),
        }),
    }
}

/// A target resolved to full ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedTarget {
    Submission(String),
    Session(String),
}

impl ResolvedTarget {
    pub fn as_target(&self) -> ExportTarget<'_> {
        match self {
            ResolvedTarget::Submission(s) => ExportTarget::Submission(s),
            ResolvedTarget::Session(s) => ExportTarget::Session(s),
        }
    }
}

/// An export built, with what its file name and a summary line need.
#[derive(Debug, Clone)]
pub struct Export {
    pub document: Value,
    pub session_key: String,
    /// The full id of the selected submission, for a submission target.
    pub selected: Option<String>,
    /// Entries in the session (0 when it has no session row).
    pub entries: usize,
    pub submissions: usize,
}

/// Build the export of `target` at `now_ms`. Every submission of the session is read whole
/// (the full read), as `show` and the actions read it, in one read snapshot. With `redaction`
/// the rows are redacted first and the reports computed from the redacted rows, so nothing the
/// rules remove appears anywhere in the document.
pub fn build(
    store: &dyn Backend,
    target: ExportTarget<'_>,
    context_window: Option<u64>,
    now_ms: i64,
    redaction: Option<Redaction>,
) -> Result<Export, StoreError> {
    let (session_key, selected) = match target {
        ExportTarget::Submission(query) => {
            let row = store.find_submission(query)?;
            (row.session_key, Some(row.submission_id))
        }
        ExportTarget::Session(key) => (key.to_string(), None),
    };
    let mut read = None;
    store.in_snapshot(&mut || {
        read = Some(read_rows(store, &session_key, selected.as_deref())?);
        Ok(())
    })?;
    let (mut rows, bundles) = read.unwrap_or_default();
    if rows.session.is_none() && rows.submissions.is_empty() {
        return Err(StoreError::NothingToExport { query: session_key });
    }
    let (reports, record) = match redaction {
        // Judged from the redacted rows, as the export opens: nothing removed shows anywhere.
        Some(r) => {
            drop(bundles);
            r.apply(&mut rows);
            let redacted = export_db::load(&rows, &store.location())?;
            let mut reports = Vec::with_capacity(rows.submissions.len());
            for row in &rows.submissions {
                let id = &row.submission_id;
                reports.push(SubmissionReport::load(
                    &redacted,
                    id,
                    context_window,
                    now_ms,
                )?);
            }
            (reports, redacted.load_session(&session_key)?)
        }
        // The bundles read for the rows (whole, in the same snapshot) are judged as they are.
        None => {
            let record = match bundles.iter().find_map(|b| b.session.clone()) {
                Some(s) => Some(s),
                None => store.load_session(&session_key)?,
            };
            let reports = bundles
                .into_iter()
                .map(|b| SubmissionReport::build(b, context_window, now_ms))
                .collect();
            (reports, record)
        }
    };
    let document = document(
        &store.location(),
        &rows,
        reports,
        record,
        &session_key,
        selected.as_deref(),
        now_ms,
        redaction,
    );
    Ok(Export {
        document,
        session_key,
        selected,
        entries: rows.entries.len(),
        submissions: rows.submissions.len(),
    })
}

/// `session_key`'s session with `redaction` applied to its rows, as an in-memory store (what a
/// redacted export of it opens as): `diff` compares a redacted export with it.
pub fn redacted_copy(
    store: &dyn Backend,
    session_key: &str,
    redaction: Redaction,
) -> Result<turnscope_store::SqliteStore, StoreError> {
    let mut read = None;
    store.in_snapshot(&mut || {
        read = Some(read_rows(store, session_key, None)?.0);
        Ok(())
    })?;
    let mut rows = read.unwrap_or_default();
    redaction.apply(&mut rows);
    export_db::load(&rows, &store.location())
}

/// Every row of the session and its submissions, as stored, and each submission's bundle (the
/// full read); the `selected` submission's whatever its `session_key` holds.
fn read_rows(
    store: &dyn Backend,
    session_key: &str,
    selected: Option<&str>,
) -> Result<(ExportRows, Vec<SubmissionBundle>), StoreError> {
    let mut rows = ExportRows {
        schema_version: store.schema().schema_version.clone(),
        ..ExportRows::default()
    };
    let mut subs = store.session_submissions(session_key)?;
    // A row whose `session_key` is stored as a BLOB is not the session's to `session_key = ?`:
    // the submission exported is kept anyway (its damage is what it is judged by).
    if let Some(id) = selected.filter(|id| !subs.iter().any(|s| s.submission_id == *id)) {
        if let Some(row) = store.submission_by_id(id)? {
            subs.push(row);
            subs.sort_by_key(|s| s.sequence);
        }
    }
    let mut bundles: Vec<SubmissionBundle> = Vec::with_capacity(subs.len());
    for s in &subs {
        // Only the rows that are not the session's are taken from the bundle.
        let b = store.load_bundle(&s.submission_id)?;
        bundles.push(b);
    }
    match store.session_rows() {
        Some(sr) => {
            if let Some(data) = sr.session_data(session_key)? {
                rows.session = Some((session_key.to_string(), data.text));
                rows.session_blob = data.blob;
                sr.for_each_entry(session_key, &mut |id, position, data, blob| {
                    rows.entries.push(RawEntry {
                        entry_id: String::from_utf8_lossy(id).into_owned(),
                        position,
                        data: data.to_vec(),
                        blob,
                    })
                })?;
                rows.image_chunks = sr.stored_image_chunks(session_key)?;
            }
        }
        None => {
            if let Some(s) = store.load_session(session_key)? {
                rows.session = Some((s.id.clone(), s.data.clone()));
                rows.entries = s
                    .entries
                    .iter()
                    .map(|e| RawEntry {
                        entry_id: e.id.to_string(),
                        position: e.position,
                        data: e.raw.as_bytes().to_vec(),
                        // PostgreSQL's `text` holds no BLOB.
                        blob: false,
                    })
                    .collect();
            }
        }
    }
    // The submissions' own chunk rows (a direct prompt's images): the runtime's row parser reads
    // them with each row, so the copy is judged as the journal is.
    if let Some(sr) = store.session_rows() {
        for s in &subs {
            rows.image_chunks
                .extend(sr.stored_submission_chunks(&s.submission_id)?);
        }
    }
    for b in &bundles {
        if let Some(j) = &b.journal {
            if let Some(key) = &j.stream_key {
                for (i, body) in b.stream_chunks.iter().enumerate() {
                    rows.stream_chunks
                        .push((key.clone(), i as i64, body.clone()));
                }
            }
        }
        if let Some(es) = &b.event_stream {
            rows.event_store.get_or_insert(es.store);
            if !rows.event_streams.iter().any(|s| s.path == es.path) {
                rows.event_streams.push(es.clone());
            }
        }
        rows.journals.extend(b.journal.clone());
        rows.submissions.push(b.row.clone());
    }
    Ok((rows, bundles))
}

#[allow(clippy::too_many_arguments)]
fn document(
    location: &str,
    rows: &ExportRows,
    reports: Vec<SubmissionReport>,
    record: Option<turnscope_store::SessionRecord>,
    session_key: &str,
    selected: Option<&str>,
    now_ms: i64,
    redaction: Option<Redaction>,
) -> Value {
    let submissions: Vec<Value> = reports.iter().map(SubmissionReport::to_json).collect();
    let session = record.as_ref().map(|s| {
        let h = History::new(s.entries.clone(), s.leaf_id.clone());
        json!({
            "id": s.id,
            // The stored text when it is not JSON: an export keeps what is there.
            "data": serde_json::from_str::<Value>(&s.data).unwrap_or(Value::String(s.data.clone())),
            "leafId": s.leaf_id,
            "problems": s.data_problems,
            "notUtf8": s.not_utf8,
            "activePath": h.active_path().iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            "entries": s.entries.iter().enumerate().map(|(i, e)| json!({
                "position": e.position,
                "id": e.id.as_str(),
                "onActivePath": h.is_on_active_path(i),
                "kind": e.kind_label(),
                "data": e.json_exact().unwrap_or(Value::String(e.raw.to_string())),
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "schema": export_db::EXPORT_SCHEMA,
        "exportedAt": iso_from_ms(now_ms),
        "database": location,
        "sessionKey": session_key,
        "selectedSubmission": selected,
        "redaction": redaction.map(|r| r.to_json()),
        "session": session,
        "submissions": submissions,
        "rows": rows.to_json(),
    })
}

/// The instance part of a session key, for file names and messages.
pub fn instance_of(session_key: &str) -> Option<String> {
    instance_id_of(session_key)
}

/// The file name the TUI gives the `n`-th export (from 1) of `session_key` at `now_ms`:
/// `turnscope-export-<instance>-<YYYYMMDDTHHMMSS>[-n].json`, the instance reduced to
/// characters safe in any file system.
pub fn file_name(session_key: &str, now_ms: i64, n: usize) -> String {
    let instance = turnscope_core::journal::submission_rows::instance_id_of(session_key)
        .unwrap_or_else(|| "session".into());
    file_name_of_instance(&instance, now_ms, n)
}

/// [`file_name`] of an instance id already known (a 2.x row's, whose session key is the
/// runtime's `agent-session:[agent, instance, harness, session]`).
pub fn file_name_of_instance(instance: &str, now_ms: i64, n: usize) -> String {
    let safe: String = instance
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let stamp: String = iso_from_ms(now_ms)
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect();
    if n <= 1 {
        format!("turnscope-export-{safe}-{stamp}.json")
    } else {
        format!("turnscope-export-{safe}-{stamp}-{n}.json")
    }
}

/// The document as written to a file or stdout: pretty-printed, one trailing newline.
pub fn to_text(document: &Value) -> String {
    let mut text = serde_json::to_string_pretty(document).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_are_safe_and_numbered() {
        // 2026-12-01T14:44:08.123Z
        let now = 1_796_136_248_123;
        let key = r#"agent-session:["a b/c","worker"]"#;
        let first = file_name(key, now, 1);
        assert_eq!(first, "turnscope-export-a_b_c-20261201T144408.json");
        assert_eq!(
            file_name(key, now, 2),
            "turnscope-export-a_b_c-20261201T144408-2.json"
        );
        // A key that names no instance still gives a name.
        assert_eq!(
            file_name("odd", now, 1),
            "turnscope-export-session-20261201T144408.json"
        );
    }
}
