//! The exact rows an action writes, and the state it was planned against (its fence). Pure data:
//! the actions layer builds them, the preview prints them, the store applies them in one
//! transaction after re-checking the fence.

use serde::Serialize;

use crate::journal::records::EventStore;

/// Everything a preview relied on. The store re-reads these inside the write transaction; any
/// difference aborts the write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fence {
    pub submission_id: String,
    pub status: String,
    pub attempt_id: Option<String>,
    /// The lease must still be expired (`0 < lease_expires_at < now`) when `require_expired_lease`.
    pub lease_expires_at: i64,
    pub require_expired_lease: bool,
    /// `(attempt_id, phase, revision, committed)` of the journal row, or `None` when there was none.
    #[serde(serialize_with = "journal_json")]
    pub journal: Option<(String, String, i64, bool)>,
    /// The session row: `(leafId, entry count)`, or `None` when there was none.
    #[serde(serialize_with = "session_json")]
    pub session: Option<(Option<String>, i64)>,
}

/// The fence's journal in JSON as the other documents name its fields (`attemptId`, …).
fn journal_json<S: serde::Serializer>(
    j: &Option<(String, String, i64, bool)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    j.as_ref()
        .map(|(attempt, phase, revision, committed)| {
            serde_json::json!({"attemptId": attempt, "phase": phase, "revision": revision, "committed": committed})
        })
        .serialize(s)
}

/// The fence's session in JSON: `{"leafId", "entryCount"}`.
fn session_json<S: serde::Serializer>(
    v: &Option<(Option<String>, i64)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    v.as_ref()
        .map(|(leaf, count)| serde_json::json!({"leafId": leaf, "entryCount": count}))
        .serialize(s)
}

/// One row change, in the order it is applied.
#[derive(Debug, Clone, PartialEq, Serialize, strum::IntoStaticStr)]
#[serde(tag = "change", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RowChange {
    /// `INSERT INTO flue_sessions` of a session the runtime would create (its get-or-create);
    /// matches nothing when a row for the key appeared since the read.
    InsertSession { session_id: String, data: String },
    /// `INSERT INTO flue_session_entries`.
    InsertEntry {
        session_id: String,
        entry_id: String,
        position: i64,
        data: String,
    },
    /// `UPDATE flue_sessions SET data = new WHERE id = ? AND data = old`.
    UpdateSessionData {
        session_id: String,
        old: String,
        new: String,
    },
    /// `UPDATE flue_agent_turn_journals` (fenced on attempt and `committed = 0`).
    UpdateJournal {
        submission_id: String,
        attempt_id: String,
        set: Vec<ColumnChange>,
    },
    /// `UPDATE flue_agent_submissions` (fenced on status and attempt).
    UpdateSubmission {
        submission_id: String,
        attempt_id: String,
        set: Vec<ColumnChange>,
    },
    /// The runtime parser's auto-fail of a malformed row (`failSubmissionSequence`): `UPDATE
    /// flue_agent_submissions` where the row is still running, under the attempt it had (`NULL`
    /// where the row had none, which is one way a row is malformed).
    AutoFailSubmission {
        submission_id: String,
        attempt_id: Option<String>,
        set: Vec<ColumnChange>,
    },
    /// `DELETE FROM flue_agent_stream_chunks WHERE stream_key = ?`.
    DeleteStreamChunks { stream_key: String, segments: usize },
    /// `createStream(path)`: the stream's `flue_event_streams` row (`next_offset 0`, open), where
    /// it has none; matches nothing when one appeared since the read.
    CreateEventStream { path: String },
    /// `appendEventOnce(path, key, event)`: the event at `seq`, the stream's `next_offset`, and
    /// `next_offset + 1`, as `store` keys events. Fenced on an open stream still at `seq`.
    AppendEvent {
        path: String,
        key: String,
        seq: i64,
        data: String,
        store: EventStore,
    },
    /// `recordSubmissionTerminalOffset` / `finalizeSubmissionTerminal`: `UPDATE
    /// flue_agent_submissions` of the row while it is terminalizing under `attempt_id`.
    UpdateTerminalizing {
        submission_id: String,
        attempt_id: String,
        set: Vec<ColumnChange>,
    },
}

/// A change that is a fenced `UPDATE` of a submission's row or its journal, as every backend
/// writes it: `UPDATE table SET set WHERE submission_id = ? AND attempt_id IS ? AND guard`, plus
/// each column's old value.
pub struct GuardedUpdate<'a> {
    pub table: &'static str,
    /// The state the row must still be in.
    pub guard: &'static str,
    pub submission_id: &'a str,
    /// `None` matches a row without an attempt (a malformed row's auto-fail).
    pub attempt_id: Option<&'a str>,
    pub set: &'a [ColumnChange],
}

impl RowChange {
    /// The fenced update this change is, `None` for the inserts, the session and stream writes.
    pub fn guarded_update(&self) -> Option<GuardedUpdate<'_>> {
        const SUBMISSIONS: &str = "flue_agent_submissions";
        let (table, guard, submission_id, attempt_id, set) = match self {
            RowChange::UpdateJournal {
                submission_id,
                attempt_id,
                set,
            } => (
                "flue_agent_turn_journals",
                "committed = 0",
                submission_id,
                Some(attempt_id),
                set,
            ),
            RowChange::UpdateSubmission {
                submission_id,
                attempt_id,
                set,
            } => (
                SUBMISSIONS,
                "status = 'running'",
                submission_id,
                Some(attempt_id),
                set,
            ),
            RowChange::AutoFailSubmission {
                submission_id,
                attempt_id,
                set,
            } => (
                SUBMISSIONS,
                "status = 'running'",
                submission_id,
                attempt_id.as_ref(),
                set,
            ),
            RowChange::UpdateTerminalizing {
                submission_id,
                attempt_id,
                set,
            } => (
                SUBMISSIONS,
                "status = 'terminalizing' AND kind = 'direct'",
                submission_id,
                Some(attempt_id),
                set,
            ),
            _ => return None,
        };
        Some(GuardedUpdate {
            table,
            guard,
            submission_id,
            attempt_id: attempt_id.map(String::as_str),
            set,
        })
    }

    /// The change's name (`update_submission`, `append_event`, …), as `--json` tags it.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

/// A column's value before and after. `new` is an SQL value; `Expr` covers `revision + 1`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnChange {
    pub column: &'static str,
    pub old: SqlValue,
    pub new: SqlValue,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SqlValue {
    Null,
    Int(i64),
    Text(String),
}

impl SqlValue {
    pub fn text(s: impl Into<String>) -> SqlValue {
        SqlValue::Text(s.into())
    }

    /// A `status` value, as the runtime stores it.
    pub fn status(s: crate::journal::status::SubmissionStatus) -> SqlValue {
        SqlValue::Text(s.as_str().to_string())
    }

    /// A journal `phase` value, as the runtime stores it.
    pub fn phase(p: &crate::journal::status::JournalPhase) -> SqlValue {
        SqlValue::Text(p.as_str().to_string())
    }

    pub fn opt_text(s: Option<&str>) -> SqlValue {
        s.map_or(SqlValue::Null, |s| SqlValue::Text(s.to_string()))
    }

    pub fn opt_int(i: Option<i64>) -> SqlValue {
        i.map_or(SqlValue::Null, SqlValue::Int)
    }

    /// Display form for previews: SQL literal syntax.
    pub fn literal(&self) -> String {
        match self {
            SqlValue::Null => "NULL".into(),
            SqlValue::Int(i) => i.to_string(),
            SqlValue::Text(t) => format!("'{}'", t.replace('\'', "''")),
        }
    }
}

/// What a preview line shows, so a view can style it without reading its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewPart {
    /// The row written: `insert entry …`, `update <table>…`, `delete …`.
    Row,
    /// A value as it is now (replaced by the next `New` line).
    Old,
    /// The value written.
    New,
    /// A row's content or a `column: old → new` change.
    Value,
}

impl RowChange {
    /// Human preview lines: the exact row inserted, or `column: old → new`.
    pub fn preview(&self) -> Vec<String> {
        self.preview_parts().into_iter().map(|(_, l)| l).collect()
    }

    /// [`preview`](Self::preview) with what each line shows.
    pub fn preview_parts(&self) -> Vec<(PreviewPart, String)> {
        use PreviewPart::{New, Old, Row, Value};
        match self {
            RowChange::InsertSession { session_id, data } => vec![
                (
                    Row,
                    format!("insert session {session_id} (only while no entry row has its key):"),
                ),
                (Value, format!("    {data}")),
            ],
            RowChange::InsertEntry {
                entry_id,
                position,
                data,
                ..
            } => {
                vec![
                    (
                        Row,
                        format!("insert entry {entry_id} at position {position}:"),
                    ),
                    (Value, format!("    {data}")),
                ]
            }
            RowChange::UpdateSessionData {
                session_id,
                old,
                new,
            } => vec![
                (Row, format!("update flue_sessions.data of {session_id}:")),
                (Old, format!("    - {old}")),
                (New, format!("    + {new}")),
            ],
            RowChange::UpdateJournal { set, .. } => {
                column_lines("update flue_agent_turn_journals:", set)
            }
            RowChange::UpdateSubmission { set, .. } | RowChange::AutoFailSubmission { set, .. } => {
                column_lines("update flue_agent_submissions:", set)
            }
            RowChange::UpdateTerminalizing { set, .. } => {
                column_lines("update flue_agent_submissions (terminalizing):", set)
            }
            RowChange::CreateEventStream { path } => vec![(
                Row,
                format!("insert event stream {path} (flue_event_streams: next_offset 0, open)"),
            )],
            RowChange::AppendEvent {
                path,
                key,
                seq,
                data,
                store,
            } => {
                let mut v = vec![(
                    Row,
                    match store {
                        EventStore::KeysTable => format!(
                            "insert flue_event_stream_keys row {key} at seq {seq} of {path} (its trigger copies it into flue_event_stream_entries and moves next_offset {seq} → {}):",
                            seq + 1
                        ),
                        _ => format!(
                            "insert flue_event_stream_entries row at seq {seq} of {path}, event_key {key}:"
                        ),
                    },
                )];
                v.push((Value, format!("    {data}")));
                if *store != EventStore::KeysTable {
                    v.push((Row, format!("update flue_event_streams of {path}:")));
                    v.push((Value, format!("    next_offset: {seq} → {}", seq + 1)));
                }
                v
            }
            RowChange::DeleteStreamChunks {
                stream_key,
                segments,
            } => {
                vec![(
                    Row,
                    format!(
                        "delete {segments} stream chunk segment{} of {stream_key}",
                        if *segments == 1 { "" } else { "s" }
                    ),
                )]
            }
        }
    }
}

/// An update's preview: the columns whose value changes, one line each; those written with the
/// value they already hold (`error: NULL → NULL`) are named on one line, not listed as changes.
fn column_lines(row: &str, set: &[ColumnChange]) -> Vec<(PreviewPart, String)> {
    let mut v = vec![(PreviewPart::Row, row.to_string())];
    v.extend(
        set.iter()
            .filter(|c| c.old != c.new)
            .map(|c| (PreviewPart::Value, c.line())),
    );
    let same: Vec<&str> = set
        .iter()
        .filter(|c| c.old == c.new)
        .map(|c| c.column)
        .collect();
    if !same.is_empty() {
        v.push((
            PreviewPart::Value,
            format!("    unchanged: {}", same.join(", ")),
        ));
    }
    v
}

impl ColumnChange {
    pub fn new(column: &'static str, old: SqlValue, new: SqlValue) -> ColumnChange {
        ColumnChange { column, old, new }
    }

    fn line(&self) -> String {
        format!(
            "    {}: {} → {}",
            self.column,
            self.old.literal(),
            self.new.literal()
        )
    }
}

/// What a writer read again inside its transaction (under its locks), to compare with the
/// [`Fence`]. Each backend only reads; the comparison is this one function for all of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FenceSeen {
    /// `(status, attempt_id, lease_expires_at)`; `None` when the submission row is gone.
    pub submission: Option<(String, Option<String>, i64)>,
    /// `(attempt_id, phase, revision, committed)` of the journal row, if any.
    pub journal: Option<(String, String, i64, bool)>,
    /// Read only when the fence names a session: `(flue_sessions.data, entry count)`, data
    /// `None` when the row is gone.
    pub session: Option<(Option<String>, i64)>,
}

impl Fence {
    /// Every way `seen` differs from what the preview showed, in the operator's words; empty when
    /// the fence holds. The lease must still be expired at `now_ms` when the fence requires it.
    pub fn differences(&self, seen: &FenceSeen, now_ms: i64) -> Vec<String> {
        let Some((status, attempt, lease)) = &seen.submission else {
            return vec!["the submission no longer exists".into()];
        };
        let mut diffs = Vec::new();
        if *status != self.status {
            diffs.push(format!("status is now {status} (was {})", self.status));
        }
        if *attempt != self.attempt_id {
            diffs.push(format!(
                "attempt is now {} (a new attempt started)",
                attempt.as_deref().unwrap_or("none")
            ));
        }
        if self.require_expired_lease && !(*lease > 0 && *lease < now_ms) {
            diffs.push("the lease is live again: a worker claimed it".into());
        } else if *lease != self.lease_expires_at {
            diffs.push("the lease was renewed".into());
        }
        if seen.journal != self.journal {
            diffs.push(match &seen.journal {
                Some((_, phase, rev, _)) => {
                    format!("the turn journal changed (now {phase}, revision {rev})")
                }
                None => "the turn journal row disappeared".into(),
            });
        }
        if let Some((leaf, count)) = &self.session {
            match &seen.session {
                Some((Some(data), now_count)) => {
                    let now_leaf = serde_json::from_str::<serde_json::Value>(data)
                        .ok()
                        .and_then(|v| v.get("leafId").and_then(|l| l.as_str()).map(str::to_string));
                    if &now_leaf != leaf || now_count != count {
                        diffs.push(format!(
                            "the session changed (leaf {}, {now_count} {})",
                            now_leaf.as_deref().unwrap_or("none"),
                            // core uses no other module: the plural is spelled out here.
                            if *now_count == 1 { "entry" } else { "entries" }
                        ));
                    }
                }
                _ => diffs.push("the session row disappeared".into()),
            }
        }
        diffs
    }
}

#[cfg(test)]
mod preview_tests {
    use super::*;

    fn append(store: EventStore) -> RowChange {
        RowChange::AppendEvent {
            path: "agents/a/i".into(),
            key: "direct-submission:s1:settled".into(),
            seq: 2,
            data: "{}".into(),
            store,
        }
    }

    #[test]
    fn an_append_previews_the_rows_each_store_writes() {
        assert_eq!(
            append(EventStore::KeysTable).preview(),
            [
                "insert flue_event_stream_keys row direct-submission:s1:settled at seq 2 of agents/a/i (its trigger copies it into flue_event_stream_entries and moves next_offset 2 → 3):",
                "    {}"
            ]
        );
        // Without the trigger the head is a row change of its own.
        assert_eq!(
            append(EventStore::EventKeyColumn).preview(),
            [
                "insert flue_event_stream_entries row at seq 2 of agents/a/i, event_key direct-submission:s1:settled:",
                "    {}",
                "update flue_event_streams of agents/a/i:",
                "    next_offset: 2 → 3"
            ]
        );
    }
}

#[cfg(test)]
mod fence_tests {
    use super::*;

    const NOW: i64 = 1_000;

    fn fence() -> Fence {
        Fence {
            submission_id: "s1".into(),
            status: "running".into(),
            attempt_id: Some("a1".into()),
            lease_expires_at: 500,
            require_expired_lease: true,
            journal: Some(("a1".into(), "tool_request_recorded".into(), 3, false)),
            session: Some((Some("e9".into()), 9)),
        }
    }

    fn seen() -> FenceSeen {
        FenceSeen {
            submission: Some(("running".into(), Some("a1".into()), 500)),
            journal: Some(("a1".into(), "tool_request_recorded".into(), 3, false)),
            session: Some((Some(r#"{"version":8,"leafId":"e9"}"#.into()), 9)),
        }
    }

    #[test]
    fn the_state_the_preview_saw_holds() {
        assert!(fence().differences(&seen(), NOW).is_empty());
    }

    #[test]
    fn each_change_since_the_preview_is_named() {
        type Change = fn(&mut FenceSeen);
        let cases: [(Change, &str); 9] = [
            (|s| s.submission = None, "the submission no longer exists"),
            (
                |s| s.submission.as_mut().unwrap().0 = "settled".into(),
                "status is now settled (was running)",
            ),
            (
                |s| s.submission.as_mut().unwrap().1 = Some("a2".into()),
                "attempt is now a2 (a new attempt started)",
            ),
            (
                |s| s.submission.as_mut().unwrap().2 = NOW + 30_000,
                "the lease is live again: a worker claimed it",
            ),
            (
                |s| s.submission.as_mut().unwrap().2 = 600,
                "the lease was renewed",
            ),
            (
                |s| s.journal.as_mut().unwrap().2 = 4,
                "the turn journal changed (now tool_request_recorded, revision 4)",
            ),
            (|s| s.journal = None, "the turn journal row disappeared"),
            (
                |s| s.session.as_mut().unwrap().1 = 10,
                "the session changed (leaf e9, 10 entries)",
            ),
            (
                |s| s.session = Some((None, 0)),
                "the session row disappeared",
            ),
        ];
        for (change, want) in cases {
            let mut s = seen();
            change(&mut s);
            assert_eq!(
                fence().differences(&s, NOW),
                vec![want.to_string()],
                "{want}"
            );
        }
    }

    #[test]
    fn a_fence_without_a_session_ignores_the_session() {
        let mut f = fence();
        f.session = None;
        let mut s = seen();
        s.session = None;
        assert!(f.differences(&s, NOW).is_empty());
    }
}

#[cfg(test)]
mod name_tests {
    use super::{EventStore, RowChange};

    /// `name` is the tag every `--json` document carries for the change.
    #[test]
    fn a_change_s_name_is_its_json_tag() {
        let changes = [
            RowChange::CreateEventStream { path: "p".into() },
            RowChange::AppendEvent {
                path: "p".into(),
                key: "k".into(),
                seq: 0,
                data: "{}".into(),
                store: EventStore::KeysTable,
            },
            RowChange::AutoFailSubmission {
                submission_id: "s".into(),
                attempt_id: None,
                set: vec![],
            },
            RowChange::DeleteStreamChunks {
                stream_key: "k".into(),
                segments: 1,
            },
        ];
        for c in &changes {
            assert_eq!(serde_json::to_value(c).unwrap()["change"], c.name());
        }
        assert_eq!(
            changes[2].guarded_update().map(|u| u.attempt_id),
            Some(None)
        );
        assert!(changes[0].guarded_update().is_none());
    }
}
