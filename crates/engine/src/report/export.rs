//! The `turnscope.export/1` document: one session whole (every entry with its stored data) and
//! every submission of it fully inspected. The TUI's `e` and `turnscope export` both build it
//! here, so an export taken from either front end is the same document.

use serde_json::{json, Value};

use super::SubmissionReport;
use turnscope_core::journal::history::History;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_store::{Backend, StoreError};

/// What to export: the session of one submission (which the document names as selected), or a
/// session by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportTarget<'a> {
    /// A full submission id or a unique prefix of one.
    Submission(&'a str),
    Session(&'a str),
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
/// (`SubmissionReport::load`), as `show` and the actions read it.
pub fn build(
    store: &dyn Backend,
    target: ExportTarget<'_>,
    context_window: Option<u64>,
    now_ms: i64,
) -> Result<Export, StoreError> {
    let (session_key, selected) = match target {
        ExportTarget::Submission(query) => {
            let row = store.find_submission(query)?;
            (row.session_key, Some(row.submission_id))
        }
        ExportTarget::Session(key) => (key.to_string(), None),
    };
    let record = store.load_session(&session_key)?;
    let rows = store.session_submissions(&session_key)?;
    let mut submissions = Vec::with_capacity(rows.len());
    for row in &rows {
        let r = SubmissionReport::load(store.reader(), &row.submission_id, context_window, now_ms)?;
        submissions.push(r.to_json());
    }
    let entries = record.as_ref().map_or(0, |s| s.entries.len());
    let session = record.as_ref().map(|s| {
        let h = History::new(s.entries.clone(), s.leaf_id.clone());
        json!({
            "id": s.id,
            // The stored text when it is not JSON: an export keeps what is there.
            "data": serde_json::from_str::<Value>(&s.data).unwrap_or(Value::String(s.data.clone())),
            "leafId": s.leaf_id,
            "problems": s.data_problems,
            "activePath": h.active_path().iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            "entries": s.entries.iter().enumerate().map(|(i, e)| json!({
                "position": e.position,
                "id": e.id.as_str(),
                "onActivePath": h.is_on_active_path(i),
                "kind": e.kind_label(),
                "data": e.json().unwrap_or(Value::String(e.raw.to_string())),
            })).collect::<Vec<_>>(),
        })
    });
    let document = json!({
        "schema": "turnscope.export/1",
        "exportedAt": iso_from_ms(now_ms),
        "database": store.location(),
        "sessionKey": session_key,
        "selectedSubmission": selected,
        "session": session,
        "submissions": submissions,
    });
    Ok(Export {
        document,
        session_key,
        selected,
        entries,
        submissions: rows.len(),
    })
}

/// The file name the TUI gives the `n`-th export (from 1) of `session_key` at `now_ms`:
/// `turnscope-export-<instance>-<YYYYMMDDTHHMMSS>[-n].json`, the instance reduced to
/// characters safe in any file system.
pub fn file_name(session_key: &str, now_ms: i64, n: usize) -> String {
    let instance = turnscope_core::journal::submission_rows::instance_id_of(session_key)
        .unwrap_or_else(|| "session".into());
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
