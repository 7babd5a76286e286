//! The exact rows an action writes, and the state it was planned against (its fence). Pure data:
//! the actions layer builds them, the preview prints them, the store applies them in one
//! transaction after re-checking the fence.

use serde::Serialize;

/// Everything a preview relied on. The store re-reads these inside the write transaction; any
/// difference aborts the write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fence {
    pub submission_id: String,
    pub status: String,
    pub attempt_id: Option<String>,
    /// The lease must still be expired (`0 < lease_expires_at < now`) when `require_expired_lease`.
    pub lease_expires_at: i64,
    pub require_expired_lease: bool,
    /// `(attempt_id, phase, revision, committed)` of the journal row, or `None` when there was none.
    pub journal: Option<(String, String, i64, bool)>,
    /// The session row: `(leafId, entry count)`, or `None` when there was none.
    pub session: Option<(Option<String>, i64)>,
}

/// One row change, in the order it is applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum RowChange {
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
    /// `DELETE FROM flue_agent_stream_chunks WHERE stream_key = ?`.
    DeleteStreamChunks { stream_key: String, segments: usize },
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

impl RowChange {
    /// Human preview lines: the exact row inserted, or `column: old → new`.
    pub fn preview(&self) -> Vec<String> {
        match self {
            RowChange::InsertEntry {
                entry_id,
                position,
                data,
                ..
            } => {
                vec![
                    format!("insert entry {entry_id} at position {position}:"),
                    format!("    {data}"),
                ]
            }
            RowChange::UpdateSessionData {
                session_id,
                old,
                new,
            } => vec![
                format!("update flue_sessions.data of {session_id}:"),
                format!("    - {old}"),
                format!("    + {new}"),
            ],
            RowChange::UpdateJournal { set, .. } => {
                let mut v = vec!["update flue_agent_turn_journals:".to_string()];
                v.extend(set.iter().map(ColumnChange::line));
                v
            }
            RowChange::UpdateSubmission { set, .. } => {
                let mut v = vec!["update flue_agent_submissions:".to_string()];
                v.extend(set.iter().map(ColumnChange::line));
                v
            }
            RowChange::DeleteStreamChunks {
                stream_key,
                segments,
            } => {
                vec![format!(
                    "delete {segments} stream chunk segment(s) of {stream_key}"
                )]
            }
        }
    }
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
