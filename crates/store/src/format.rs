//! Which runtime wrote a database: the table set and `flue_meta` tell flue 1.0.0-beta.7's turn
//! journal (the one format turnscope reads) from the formats that came after it.
//!
//! What each release writes, read from its own migration code and from databases it created
//! (docs/flue2.md):
//!
//! | writer | `flue_meta` | tables that tell it |
//! | --- | --- | --- |
//! | 1.0.0-beta.7 (and before) | `schema_version` 1–3 | `flue_sessions`, `flue_session_entries` |
//! | 1.0.0-beta.8, beta.9 (identical schema) | `schema_version` 4 | `flue_conversation_streams`, no session tables |
//! | 2.0.0 – 2.1.0 (identical schema) | `format_version` 1 | `flue_conversation_streams`, no session tables |
//!
//! 2.x checks `format_version` before anything else and refuses every other value
//! (`assertSupportedFlueFormatVersion`); neither beta writes the key. So a `format_version` row
//! alone says 2.x or later, whatever the tables.

use crate::StoreError;

/// The format a database was written in, as far as its tables and `flue_meta` tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalFormat {
    /// flue 1.0.0-beta.7 (or an earlier beta it migrates): the turn journal, a tree of entries.
    /// turnscope reads it.
    Beta7 {
        /// `flue_meta.schema_version`: "1", "2" or "3".
        schema_version: String,
    },
    /// flue 1.0.0-beta.8 or beta.9 (the same schema): `schema_version` 4, conversation streams
    /// beside beta.7's event streams and runs, no session tables. Not read.
    Beta8or9,
    /// flue 2.x: `flue_meta.format_version` (2.0.0–2.1.0 write "1"): conversation streams, a
    /// record log per agent instance. Not read yet.
    Flue2 {
        /// The stored value: "1" for every 2.x release so far.
        format_version: String,
    },
    /// Neither: not a flue database, or a `schema_version` none of these wrote.
    Unknown,
}

/// What `flue_meta` holds (`None`: no such key, or no `flue_meta` table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlueMeta {
    pub format_version: Option<String>,
    pub schema_version: Option<String>,
}

/// The tables beta.7 cannot do without (turnscope reads these).
pub(crate) const BETA7_TABLES: [&str; 3] = [
    "flue_agent_submissions",
    "flue_sessions",
    "flue_session_entries",
];

/// The format of a database with these `tables` (names, any order) and this `flue_meta`.
/// Pure: each backend reads the two and asks this.
pub fn detect_format(tables: &[String], meta: &FlueMeta) -> JournalFormat {
    let has = |t: &str| tables.iter().any(|n| n == t);
    if let Some(format_version) = &meta.format_version {
        return JournalFormat::Flue2 {
            format_version: format_version.clone(),
        };
    }
    let schema_version = meta.schema_version.as_deref();
    if schema_version == Some("4")
        && has("flue_agent_submissions")
        && has("flue_conversation_streams")
        && !has("flue_session_entries")
    {
        return JournalFormat::Beta8or9;
    }
    match schema_version {
        Some(v @ ("1" | "2" | "3")) if BETA7_TABLES.iter().all(|t| has(t)) => {
            JournalFormat::Beta7 {
                schema_version: v.to_string(),
            }
        }
        _ => JournalFormat::Unknown,
    }
}

impl JournalFormat {
    /// The one-line refusal of a format turnscope does not read (its writer named), or `None`
    /// for beta.7 and for `Unknown` (which the caller refuses by what is missing).
    pub fn refusal(&self) -> Option<StoreError> {
        match self {
            JournalFormat::Beta7 { .. } | JournalFormat::Unknown => None,
            JournalFormat::Beta8or9 => Some(StoreError::Beta8or9Format {
                schema_version: "4".into(),
            }),
            JournalFormat::Flue2 { format_version } => Some(StoreError::NewerFormat {
                format_version: format_version.clone(),
            }),
        }
    }

    /// Who wrote it, in words.
    pub fn writer(&self) -> &'static str {
        match self {
            JournalFormat::Beta7 { .. } => "flue 1.0.0-beta.7",
            JournalFormat::Beta8or9 => "flue 1.0.0-beta.8 or beta.9",
            JournalFormat::Flue2 { .. } => "flue 2.x",
            JournalFormat::Unknown => "an unknown writer",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn meta(format: Option<&str>, schema: Option<&str>) -> FlueMeta {
        FlueMeta {
            format_version: format.map(str::to_string),
            schema_version: schema.map(str::to_string),
        }
    }

    const BETA7: &[&str] = &[
        "flue_agent_submissions",
        "flue_event_streams",
        "flue_meta",
        "flue_session_entries",
        "flue_sessions",
    ];
    // As beta.9's own migrate() creates them (beta.8 creates the same).
    const BETA9: &[&str] = &[
        "flue_agent_attempt_markers",
        "flue_agent_dispatch_receipts",
        "flue_agent_submissions",
        "flue_attachment_chunks",
        "flue_attachments",
        "flue_conversation_stream_batches",
        "flue_conversation_streams",
        "flue_event_stream_entries",
        "flue_event_stream_keys",
        "flue_event_streams",
        "flue_image_chunks",
        "flue_meta",
        "flue_runs",
    ];
    // As 2.0.0's and 2.1.0's migrate() create them.
    const FLUE2: &[&str] = &[
        "flue_agent_submissions",
        "flue_attachment_chunks",
        "flue_attachments",
        "flue_conversation_fold_checkpoint_chunks",
        "flue_conversation_fold_checkpoints",
        "flue_conversation_stream_batch_chunks",
        "flue_conversation_stream_batches",
        "flue_conversation_streams",
        "flue_meta",
        "flue_submission_chunks",
    ];

    #[test]
    fn each_writer_is_told_by_its_tables_and_meta() {
        for v in ["1", "2", "3"] {
            assert_eq!(
                detect_format(&names(BETA7), &meta(None, Some(v))),
                JournalFormat::Beta7 {
                    schema_version: v.into()
                }
            );
        }
        assert_eq!(
            detect_format(&names(BETA9), &meta(None, Some("4"))),
            JournalFormat::Beta8or9
        );
        assert_eq!(
            detect_format(&names(FLUE2), &meta(Some("1"), None)),
            JournalFormat::Flue2 {
                format_version: "1".into()
            }
        );
    }

    #[test]
    fn format_version_wins_over_tables_as_in_the_runtime() {
        // 2.x reads format_version first; beta.7 and beta.8/9 never write it.
        assert_eq!(
            detect_format(&names(BETA7), &meta(Some("2"), Some("3"))),
            JournalFormat::Flue2 {
                format_version: "2".into()
            }
        );
    }

    #[test]
    fn anything_else_is_unknown() {
        // beta.7's tables with schema_version 4 (no beta wrote that), or no version at all.
        for m in [
            meta(None, Some("4")),
            meta(None, None),
            meta(None, Some("x")),
        ] {
            assert_eq!(detect_format(&names(BETA7), &m), JournalFormat::Unknown);
        }
        // 2.x's tables without flue_meta: the runtime itself refuses them as "unversioned".
        assert_eq!(
            detect_format(&names(FLUE2), &meta(None, None)),
            JournalFormat::Unknown
        );
        // A legacy schema_version 8, which 2.x relabels as format_version 1 when it opens it.
        assert_eq!(
            detect_format(&names(FLUE2), &meta(None, Some("8"))),
            JournalFormat::Unknown
        );
        assert_eq!(
            detect_format(&names(&["orders"]), &meta(None, None)),
            JournalFormat::Unknown
        );
    }

    #[test]
    fn refusals_name_the_writer() {
        let flue2 = JournalFormat::Flue2 {
            format_version: "1".into(),
        };
        assert_eq!(
            flue2.refusal().unwrap().to_string(),
            "this journal was written by flue 2.x (flue_meta.format_version = 1), a newer runtime format turnscope does not read yet"
        );
        assert_eq!(
            JournalFormat::Beta8or9.refusal().unwrap().to_string(),
            "this journal was written by flue 1.0.0-beta.8 or beta.9 (flue_meta.schema_version = 4), a format turnscope does not read"
        );
        assert!(JournalFormat::Unknown.refusal().is_none());
        assert!(JournalFormat::Beta7 {
            schema_version: "3".into()
        }
        .refusal()
        .is_none());
    }
}
