//! What the database holds after a list of row changes, computed on a copy of what was read: the
//! planner then runs on the copy, so every prediction says what the runtime's next pass does with
//! exactly those rows (instead of a sentence written next to each action).
//!
//! Pure: the same changes the store applies in its transaction, applied to a `SubmissionBundle`.

use serde_json::Value;

use crate::journal::entry::Entry;
use crate::journal::records::{SessionRecord, SessionScope, SubmissionBundle};
use crate::journal::submission_rows::{JournalRow, SubmissionRow};
use crate::recovery::changes::{ColumnChange, RowChange, SqlValue};

/// `bundle` with `changes` applied, in order. A change that would match nothing in the store
/// (another submission's row, a fence that fails) leaves the copy as it is.
pub fn apply_changes(bundle: &SubmissionBundle, changes: &[RowChange]) -> SubmissionBundle {
    let mut b = bundle.clone();
    // Inserted entries are gathered and merged into the session once: a repair of a 10,000-call
    // batch inserts 10,000 results, and copying and sorting the whole history per insert made the
    // prediction quadratic (18 minutes for that batch). No other change reads the entries, and
    // the session an insert matched cannot be replaced by a later change (`InsertSession` only
    // fills an empty slot), so merging at the end gives the same copy as applying in order.
    let mut inserted: Vec<Entry> = Vec::new();
    for change in changes {
        apply_one(&mut b, change, &mut inserted);
    }
    if let (Some(s), false) = (b.session.as_mut(), inserted.is_empty()) {
        s.entries = s
            .entries
            .replaced_by(merged_by_position(&s.entries, inserted));
    }
    b
}

/// `read` and `inserted` in one slice ordered by position, as a stable sort of the two one after
/// the other orders them (on equal positions, what was read first). When `read` is in position
/// order (every loader reads it so), the two are merged straight into a slice allocated once:
/// sorting a copy and turning it into a slice held a whale's entries three times over.
fn merged_by_position(read: &[Entry], mut inserted: Vec<Entry>) -> std::sync::Arc<[Entry]> {
    inserted.sort_by_key(|e| e.position);
    if !read.is_sorted_by_key(|e| e.position) {
        let mut entries = Vec::with_capacity(read.len() + inserted.len());
        entries.extend(read.iter().cloned());
        entries.append(&mut inserted);
        entries.sort_by_key(|e| e.position);
        return entries.into();
    }
    let total = read.len() + inserted.len();
    let mut old = read.iter().peekable();
    let mut new = inserted.into_iter().peekable();
    // A range mapped is a trusted-length iterator: the slice is allocated once, filled in place.
    (0..total)
        .map(|_| {
            match (old.peek(), new.peek()) {
                (Some(o), Some(n)) if n.position < o.position => new.next(),
                (Some(_), _) => old.next().cloned(),
                (None, _) => new.next(),
            }
            .expect("total counts both")
        })
        .collect()
}

fn leaf_of(data: &str) -> Option<String> {
    serde_json::from_str::<Value>(data)
        .ok()?
        .get("leafId")?
        .as_str()
        .map(str::to_string)
}

/// An update of the submission row while it is running under `attempt_id` (`None`: no attempt).
fn update_running(
    row: &mut SubmissionRow,
    submission_id: &str,
    attempt_id: Option<&String>,
    set: &[ColumnChange],
) {
    if row.submission_id == submission_id
        && row.is_running()
        && row.attempt_id.as_ref() == attempt_id
    {
        for c in set {
            set_submission(row, c);
        }
    }
}

fn apply_one(b: &mut SubmissionBundle, change: &RowChange, inserted: &mut Vec<Entry>) {
    match change {
        RowChange::InsertSession { session_id, data } => {
            if b.session.is_none() && *session_id == b.row.session_key {
                b.session = Some(SessionRecord {
                    id: session_id.clone(),
                    data: data.clone(),
                    leaf_id: leaf_of(data),
                    data_problems: vec![],
                    not_utf8: vec![],
                    entries: Vec::new().into(),
                    scope: SessionScope::Full,
                });
            }
        }
        RowChange::InsertEntry {
            session_id,
            entry_id,
            position,
            data,
        } => {
            if b.session.as_ref().is_some_and(|s| s.id == *session_id) {
                inserted.push(Entry::parse(*position, entry_id, data));
            }
        }
        RowChange::UpdateSessionData {
            session_id,
            old,
            new,
        } => {
            if let Some(s) = b
                .session
                .as_mut()
                .filter(|s| s.id == *session_id && s.data == *old)
            {
                s.data = new.clone();
                s.leaf_id = leaf_of(new);
            }
        }
        RowChange::UpdateJournal {
            submission_id,
            attempt_id,
            set,
        } => {
            if let Some(j) = b.journal.as_mut().filter(|j| {
                j.submission_id == *submission_id && j.attempt_id == *attempt_id && !j.committed
            }) {
                for c in set {
                    set_journal(j, c);
                }
            }
        }
        RowChange::UpdateSubmission {
            submission_id,
            attempt_id,
            set,
        } => update_running(&mut b.row, submission_id, Some(attempt_id), set),
        RowChange::AutoFailSubmission {
            submission_id,
            attempt_id,
            set,
        } => update_running(&mut b.row, submission_id, attempt_id.as_ref(), set),
        RowChange::DeleteStreamChunks { stream_key, .. } => {
            if b.journal.as_ref().and_then(|j| j.stream_key.as_deref()) == Some(stream_key) {
                b.stream_chunks.clear();
            }
        }
        RowChange::CreateEventStream { path } => {
            if let Some(es) = b
                .event_stream
                .as_mut()
                .filter(|es| es.path == *path && es.head.is_none())
            {
                es.head = Some((0, false));
            }
        }
        RowChange::AppendEvent {
            path,
            key,
            seq,
            data,
            ..
        } => {
            let own_key = crate::journal::records::terminal_event_key(&b.row.submission_id);
            if let Some(es) = b
                .event_stream
                .as_mut()
                .filter(|es| es.path == *path && es.head == Some((*seq, false)))
            {
                es.head = Some((seq + 1, false));
                if *key == own_key {
                    es.keyed = Some((*seq, data.clone()));
                }
            }
        }
        RowChange::UpdateTerminalizing {
            submission_id,
            attempt_id,
            set,
        } => {
            let row = &mut b.row;
            if row.submission_id == *submission_id
                && row.status == crate::journal::status::SubmissionStatus::Terminalizing
                && row.attempt_id.as_ref() == Some(attempt_id)
            {
                for c in set {
                    set_submission(row, c);
                }
            }
        }
    }
}

fn int(v: &SqlValue) -> Option<i64> {
    match v {
        SqlValue::Int(i) => Some(*i),
        _ => None,
    }
}

fn text(v: &SqlValue) -> Option<String> {
    match v {
        SqlValue::Text(t) => Some(t.clone()),
        _ => None,
    }
}

fn set_submission(row: &mut SubmissionRow, c: &ColumnChange) {
    let v = &c.new;
    match c.column {
        "status" => {
            row.status =
                crate::journal::status::SubmissionStatus::parse(&text(v).unwrap_or_default())
        }
        "attempt_id" => row.attempt_id = text(v),
        "input_applied_at" => row.input_applied_at = int(v),
        "recovery_requested_at" => row.recovery_requested_at = int(v),
        "started_at" => row.started_at = int(v),
        "settled_at" => row.settled_at = int(v),
        "error" => row.error = text(v),
        "attempt_count" => row.attempt_count = int(v).unwrap_or_default(),
        "max_retry" => row.max_retry = int(v).unwrap_or_default(),
        "timeout_at" => row.timeout_at = int(v).unwrap_or_default(),
        "owner_id" => row.owner_id = text(v),
        "lease_expires_at" => row.lease_expires_at = int(v).unwrap_or_default(),
        "terminal_event_key" => row.terminal_key = text(v),
        "terminal_event_json" => row.terminal_event = text(v),
        "terminal_event_offset" => row.terminal_offset = text(v),
        other => debug_assert!(false, "simulate: unknown submission column {other}"),
    }
}

fn set_journal(j: &mut JournalRow, c: &ColumnChange) {
    let v = &c.new;
    match c.column {
        "attempt_id" => j.attempt_id = text(v).unwrap_or_default(),
        "phase" => {
            j.phase = crate::journal::status::JournalPhase::parse(&text(v).unwrap_or_default())
        }
        "revision" => j.revision = int(v).unwrap_or_default(),
        "updated_at" => j.updated_at = int(v).unwrap_or_default(),
        "checkpoint_leaf_id" => j.checkpoint_leaf_id = text(v),
        "tool_request_json" => j.tool_request_json = text(v),
        "stream_key" => j.stream_key = text(v),
        "stream_consumed_at" => j.stream_consumed_at = int(v),
        "committed" => j.committed = int(v).is_some_and(|i| i != 0),
        "committed_leaf_id" => j.committed_leaf_id = text(v),
        other => debug_assert!(false, "simulate: unknown journal column {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(position: i64, id: &str) -> Entry {
        Entry::parse(
            position,
            id,
            &format!(r#"{{"type":"message","id":"{id}"}}"#),
        )
    }

    /// The merge orders exactly as the stable sort of the two one after the other, ties and
    /// unsorted reads included.
    #[test]
    fn merging_by_position_is_the_stable_sort_of_both() {
        let reads: [&[i64]; 4] = [&[0, 1, 2, 5, 5, 9], &[], &[3, 1, 2], &[4, 4, 4]];
        let inserts: [&[i64]; 4] = [&[5, 3, 10, 0], &[7], &[2], &[4, 4]];
        for read in reads {
            for ins in inserts {
                let read: Vec<Entry> = read
                    .iter()
                    .enumerate()
                    .map(|(k, &p)| entry(p, &format!("r{k}")))
                    .collect();
                let ins: Vec<Entry> = ins
                    .iter()
                    .enumerate()
                    .map(|(k, &p)| entry(p, &format!("i{k}")))
                    .collect();
                let mut want: Vec<Entry> = read.iter().chain(&ins).cloned().collect();
                want.sort_by_key(|e| e.position);
                let got = merged_by_position(&read, ins);
                let ids = |v: &[Entry]| v.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
                assert_eq!(ids(&got), ids(&want));
            }
        }
    }
}
