//! Row parsing shared by the backends: whatever the database, a row becomes a list of SQLite-style
//! values (`ValueRef`) and is turned into `SubmissionRow` / `JournalRow` by the same helpers as
//! the SQLite backend's (`text_of`, `opt_int`, …), so both backends read a row identically.

use rusqlite::types::ValueRef;

use super::Variant;
use turnscope_core::journal::images::ChunkCell;
use turnscope_core::journal::status::{JournalPhase, SubmissionStatus};
use turnscope_core::journal::submission_rows::{JournalRow, StoredAs, StoredValue, SubmissionRow};

/// The submission columns both backends read, before the variant's terminal columns.
pub(super) const SUBMISSION_COLUMNS: [&str; 18] = [
    "sequence",
    "submission_id",
    "session_key",
    "kind",
    "payload",
    "status",
    "accepted_at",
    "attempt_id",
    "input_applied_at",
    "recovery_requested_at",
    "started_at",
    "settled_at",
    "error",
    "attempt_count",
    "max_retry",
    "timeout_at",
    "owner_id",
    "lease_expires_at",
];

/// `bytes` as text, read as the runtime's `node:sqlite` reads it: each sequence that is not UTF-8
/// as U+FFFD (`Cow::Owned` then, else borrowed). `from_utf8` first: `from_utf8_lossy` alone
/// validates byte by byte (`Utf8Chunks`), which cost `list --expired` on the 2 GB 2.x journal
/// 1.11x its wall time.
pub(crate) fn lossy_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Text of a column whatever its storage class (damaged rows may hold blobs or numbers).
pub(crate) fn text_of(v: ValueRef<'_>) -> String {
    text_and_lossy(v).0
}

/// [`text_of`], and whether the text was not UTF-8 ([`lossy_text`]): one validation for both.
pub(crate) fn text_and_lossy(v: ValueRef<'_>) -> (String, bool) {
    match v {
        ValueRef::Null => (String::new(), false),
        ValueRef::Integer(i) => (i.to_string(), false),
        ValueRef::Real(f) => (f.to_string(), false),
        ValueRef::Text(t) | ValueRef::Blob(t) => match lossy_text(t) {
            std::borrow::Cow::Borrowed(s) => (s.to_owned(), false),
            std::borrow::Cow::Owned(s) => (s, true),
        },
    }
}

pub(crate) fn opt_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        other => Some(text_of(other)),
    }
}

pub(crate) fn opt_int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// The submission SELECT list for `variant`, with `NULL AS c` for columns `present` lacks (an
/// older schema version), in the order `submission_from_values` reads.
pub(super) fn submission_select_list(present: &[String], variant: Variant) -> String {
    let terminal = variant.terminal_columns();
    SUBMISSION_COLUMNS
        .iter()
        .chain(terminal.iter())
        .map(|c| {
            if present.iter().any(|p| p == c) {
                c.to_string()
            } else {
                // An older schema version may lack a column; read it as NULL.
                format!("NULL AS {c}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The journal SELECT list, in the order `journal_from_values` reads.
pub(super) const JOURNAL_COLUMNS: &str =
    "submission_id, session_key, kind, attempt_id, operation_id, turn_id, phase, revision,
     created_at, updated_at, checkpoint_leaf_id, tool_request_json, stream_key,
     stream_consumed_at, committed, committed_leaf_id";

fn at<'a>(v: &'a [ValueRef<'a>], i: usize) -> ValueRef<'a> {
    v.get(i).copied().unwrap_or(ValueRef::Null)
}

/// The same mapping as the SQLite backend's `submission_from_row`.
pub(super) fn submission_from_values(v: &[ValueRef<'_>]) -> SubmissionRow {
    SubmissionRow {
        sequence: opt_int(at(v, 0)).unwrap_or(0),
        submission_id: text_of(at(v, 1)),
        session_key: text_of(at(v, 2)),
        kind: text_of(at(v, 3)),
        payload: text_of(at(v, 4)),
        status: SubmissionStatus::parse(&status_text(at(v, 5))),
        accepted_at: opt_int(at(v, 6)),
        attempt_id: opt_text(at(v, 7)),
        input_applied_at: opt_int(at(v, 8)),
        recovery_requested_at: opt_int(at(v, 9)),
        started_at: opt_int(at(v, 10)),
        settled_at: opt_int(at(v, 11)),
        error: opt_text(at(v, 12)),
        attempt_count: opt_int(at(v, 13)).unwrap_or(0),
        max_retry: opt_int(at(v, 14)).unwrap_or(10),
        timeout_at: opt_int(at(v, 15)).unwrap_or(0),
        owner_id: opt_text(at(v, 16)),
        lease_expires_at: opt_int(at(v, 17)).unwrap_or(0),
        terminal_key: opt_text(at(v, 18)),
        terminal_event: opt_text(at(v, 19)),
        terminal_offset: opt_text(at(v, 20)),
        stored_as: stored_as(v),
        image_chunks: Vec::new(),
    }
}

/// A status column as SQL compares it: its text, else `TEXT stored as CLASS`, which no status
/// the runtime's queries select equals (a BLOB `running` is not `= 'running'`).
pub(crate) fn status_text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(_) => text_of(v),
        _ => format!("{} stored as {}", text_of(v), v.data_type()),
    }
}

/// The first column `parseSubmission` checks whose storage class it rejects (`typeof` string or
/// number, some of them nullable): SQLite keeps a BLOB in a TEXT column, and text that is not a
/// number in an INTEGER one. PostgreSQL's typed columns never differ.
fn stored_as(v: &[ValueRef<'_>]) -> Option<StoredAs> {
    first_in_another_class(v, &SUBMISSION_CHECKED)
}

/// The submission columns `parseSubmission` checks (index in `submission_from_values`' order).
/// Not `sequence`: an INTEGER PRIMARY KEY holds integers only. Not `status`: a row whose status
/// is no text never meets the reconciler's `status = 'running'` (see `status_text`).
const SUBMISSION_CHECKED: [(usize, &str, Class); 12] = [
    (1, "submission_id", Class::Text),
    (2, "session_key", Class::Text),
    (3, "kind", Class::Text),
    (4, "payload", Class::Text),
    (6, "accepted_at", Class::Number),
    (7, "attempt_id", Class::TextOrNull),
    (8, "input_applied_at", Class::NumberOrNull),
    (9, "recovery_requested_at", Class::NumberOrNull),
    (10, "started_at", Class::NumberOrNull),
    (13, "attempt_count", Class::Number),
    (14, "max_retry", Class::Number),
    (15, "timeout_at", Class::Number),
];

/// A storage class a runtime row parser accepts for a column (`typeof`).
#[derive(Clone, Copy)]
pub(crate) enum Class {
    Text,
    TextOrNull,
    Number,
    NumberOrNull,
}

/// The first of `checked` (index, column, class) whose value is in another storage class.
pub(crate) fn first_in_another_class(
    v: &[ValueRef<'_>],
    checked: &[(usize, &'static str, Class)],
) -> Option<StoredAs> {
    checked.iter().find_map(|&(i, column, class)| {
        let found = match (at(v, i), class) {
            (ValueRef::Text(_), Class::Text | Class::TextOrNull)
            | (ValueRef::Integer(_) | ValueRef::Real(_), Class::Number | Class::NumberOrNull)
            | (ValueRef::Null, Class::TextOrNull | Class::NumberOrNull) => return None,
            (ValueRef::Null, _) => STORED_CLASSES[0],
            (ValueRef::Integer(_) | ValueRef::Real(_), _) => STORED_CLASSES[1],
            (ValueRef::Text(_), _) => STORED_CLASSES[2],
            (ValueRef::Blob(_), _) => STORED_CLASSES[3],
        };
        Some(StoredAs {
            column,
            class: found,
            value: Some(stored_value(at(v, i))),
        })
    })
}

/// What a [`StoredAs`] says a column holds instead: a class, or (`committed`) a value.
const STORED_CLASSES: [&str; 5] = [
    "NULL",
    "a number",
    "text",
    "a BLOB",
    "a value other than 0 or 1",
];

/// The column and class a [`StoredAs`] read back (an export's `storedAs`) names, as this reader
/// names them: `None` for a column a row parser does not check or a class it does not find.
pub(crate) fn stored_as_names(column: &str, class: &str) -> Option<(&'static str, &'static str)> {
    let column = SUBMISSION_CHECKED
        .iter()
        .chain(&JOURNAL_CHECKED)
        .map(|&(_, c, _)| c)
        .chain(["committed"])
        .find(|c| *c == column)?;
    let class = STORED_CLASSES.into_iter().find(|c| *c == class)?;
    Some((column, class))
}

/// `v` as SQLite stores it.
pub(crate) fn stored_value(v: ValueRef<'_>) -> StoredValue {
    match v {
        ValueRef::Null => StoredValue::Null,
        ValueRef::Integer(i) => StoredValue::Integer(i),
        ValueRef::Real(x) => StoredValue::Real(x.to_bits()),
        ValueRef::Text(t) => StoredValue::Text(t.to_vec()),
        ValueRef::Blob(b) => StoredValue::Blob(b.to_vec()),
    }
}

/// The first column the runtime's turn journal parser rejects: its storage class, or a
/// `committed` other than 0 or 1.
fn journal_stored_as(v: &[ValueRef<'_>]) -> Option<StoredAs> {
    first_in_another_class(v, &JOURNAL_CHECKED).or_else(|| match at(v, 14) {
        ValueRef::Integer(0 | 1) => None,
        ValueRef::Real(x) if x == 0.0 || x == 1.0 => None,
        other => Some(StoredAs {
            column: "committed",
            class: STORED_CLASSES[4],
            value: Some(stored_value(other)),
        }),
    })
}

/// The turn journal columns the runtime's journal parser checks (index in
/// `journal_from_values`' order), but `committed` (0 or 1).
const JOURNAL_CHECKED: [(usize, &str, Class); 14] = [
    (0, "submission_id", Class::Text),
    (1, "session_key", Class::Text),
    (2, "kind", Class::Text),
    (3, "attempt_id", Class::Text),
    (4, "operation_id", Class::Text),
    (5, "turn_id", Class::Text),
    (6, "phase", Class::Text),
    (7, "revision", Class::Number),
    (8, "created_at", Class::Number),
    (9, "updated_at", Class::Number),
    (10, "checkpoint_leaf_id", Class::TextOrNull),
    (12, "stream_key", Class::TextOrNull),
    (13, "stream_consumed_at", Class::NumberOrNull),
    (15, "committed_leaf_id", Class::TextOrNull),
];

/// The same mapping as the SQLite backend's `journal_from_row`.
pub(super) fn journal_from_values(v: &[ValueRef<'_>]) -> JournalRow {
    JournalRow {
        submission_id: text_of(at(v, 0)),
        session_key: text_of(at(v, 1)),
        kind: text_of(at(v, 2)),
        attempt_id: text_of(at(v, 3)),
        operation_id: text_of(at(v, 4)),
        turn_id: text_of(at(v, 5)),
        phase: JournalPhase::parse(&text_of(at(v, 6))),
        revision: opt_int(at(v, 7)).unwrap_or(0),
        created_at: opt_int(at(v, 8)).unwrap_or(0),
        updated_at: opt_int(at(v, 9)).unwrap_or(0),
        checkpoint_leaf_id: opt_text(at(v, 10)),
        tool_request_json: opt_text(at(v, 11)),
        stream_key: opt_text(at(v, 12)),
        stream_consumed_at: opt_int(at(v, 13)),
        committed: opt_int(at(v, 14)).unwrap_or(0) != 0,
        committed_leaf_id: opt_text(at(v, 15)),
        stored_as: journal_stored_as(v),
    }
}

/// The journal problem the SQLite backend reports (an unknown phase), for text that is valid UTF-8.
pub(super) fn journal_problem(row: &JournalRow) -> Option<String> {
    row.runtime_rejects()
        .map(|p| format!("the journal row is malformed to the runtime ({p})"))
}

/// A chunk row's cell as the runtime's `typeof` sees it through `node:sqlite`.
pub(crate) fn chunk_cell(v: ValueRef<'_>) -> ChunkCell {
    match v {
        ValueRef::Text(t) => ChunkCell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(i) => ChunkCell::Number(i as f64),
        ValueRef::Real(f) => ChunkCell::Number(f),
        ValueRef::Null | ValueRef::Blob(_) => ChunkCell::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exports_stored_as_names_only_what_the_readers_check() {
        // Every column and class the readers produce is one an export may name again.
        let blob = ValueRef::Blob(b"x");
        let mut row = vec![ValueRef::Integer(1); 16];
        for (i, column, _) in SUBMISSION_CHECKED.iter().chain(&JOURNAL_CHECKED) {
            row[*i] = blob;
            let found = first_in_another_class(&row, &[(*i, column, Class::Text)]).unwrap();
            assert_eq!(
                stored_as_names(found.column, found.class),
                Some((found.column, found.class))
            );
            row[*i] = ValueRef::Integer(1);
        }
        assert_eq!(
            stored_as_names("committed", "a value other than 0 or 1"),
            Some(("committed", "a value other than 0 or 1"))
        );
        assert_eq!(stored_as_names("status", "a BLOB"), None);
        assert_eq!(stored_as_names("payload", "a duck"), None);
    }
}
