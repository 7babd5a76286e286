//! The one row filter of the CLI `list` and the TUI lists, on both backends: which submissions a
//! list shows. Its Rust predicate ([`RowFilter::matches`]) and its SQL (the same conditions, on the
//! runtime's `(status, sequence)` index) are written side by side here, so they cannot drift apart
//! unnoticed (the contract tests compare them on the demo database).

use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::SubmissionRow;

/// Which submissions a list shows. `Expired` needs the time it is evaluated at (`now_ms`, passed
/// with the filter), the others do not.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
)]
#[strum(serialize_all = "lowercase")]
pub enum RowFilter {
    /// The runtime's definition: `status='running' AND 0 < lease_expires_at < now`.
    #[default]
    Expired,
    All,
    Queued,
    Running,
    Terminalizing,
    Settled,
    /// Settled with an error (dispatch) or a failed terminal event (direct):
    /// [`SubmissionRow::is_failed`].
    Failed,
}

/// How a backend writes the one parameter (`now_ms` of `Expired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

/// A filter as SQL: the condition (`None`: every row) and whether it takes `now_ms` as its one
/// parameter.
pub(crate) struct FilterSql {
    pub condition: Option<String>,
    pub takes_now: bool,
    /// The condition selects a superset: keep only the rows [`RowFilter::matches`] accepts.
    pub refine_in_rust: bool,
}

impl FilterSql {
    /// `WHERE …`, or nothing for every row.
    pub fn where_clause(&self) -> String {
        self.where_after(None)
    }

    /// `WHERE …` for the rows of a page: the condition, and `sequence > after` when given (a
    /// number of ours, written into the SQL as one).
    pub fn where_after(&self, after: Option<i64>) -> String {
        match (&self.condition, after) {
            (None, None) => String::new(),
            (Some(c), None) => format!("WHERE {c}"),
            (None, Some(a)) => format!("WHERE sequence > {a}"),
            (Some(c), Some(a)) => format!("WHERE ({c}) AND sequence > {a}"),
        }
    }
}

impl RowFilter {
    /// Every filter, in the order the TUI numbers them.
    pub fn all() -> impl Iterator<Item = RowFilter> {
        <RowFilter as strum::IntoEnumIterator>::iter()
    }

    /// The name the CLI (`--status`, the JSON `filter`) and the configuration use.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The one status this filter selects, when it is a plain status filter.
    pub fn status(self) -> Option<SubmissionStatus> {
        match self {
            RowFilter::Queued => Some(SubmissionStatus::Queued),
            RowFilter::Running => Some(SubmissionStatus::Running),
            RowFilter::Terminalizing => Some(SubmissionStatus::Terminalizing),
            RowFilter::Settled => Some(SubmissionStatus::Settled),
            RowFilter::Expired | RowFilter::All | RowFilter::Failed => None,
        }
    }

    /// Whether `row` is one this filter shows at `now_ms`.
    pub fn matches(self, row: &SubmissionRow, now_ms: i64) -> bool {
        match self {
            RowFilter::Expired => row.lease_expired(now_ms),
            RowFilter::All => true,
            RowFilter::Failed => row.is_failed(),
            other => other.status().as_ref() == Some(&row.status),
        }
    }

    /// The SQL of [`matches`](Self::matches) for `dialect`. `terminal_event` is the terminal event
    /// column's name under the database's variant. PostgreSQL's failed filter reads the settled
    /// rows that may have failed and decides in Rust: PostgreSQL 15 has no `IS JSON` test, and a
    /// cast of malformed text would abort the query.
    pub(crate) fn sql(self, dialect: Dialect, terminal_event: &str) -> FilterSql {
        let now = match dialect {
            Dialect::Sqlite => "?1",
            Dialect::Postgres => "$1",
        };
        let plain = |c: String| FilterSql {
            condition: Some(c),
            takes_now: false,
            refine_in_rust: false,
        };
        match self {
            RowFilter::Expired => FilterSql {
                condition: Some(format!(
                    "status = 'running' AND lease_expires_at > 0 AND lease_expires_at < {now}"
                )),
                takes_now: true,
                refine_in_rust: false,
            },
            RowFilter::All => FilterSql {
                condition: None,
                takes_now: false,
                refine_in_rust: false,
            },
            RowFilter::Failed => match dialect {
                Dialect::Sqlite => plain(format!(
                    "status = 'settled' AND (error IS NOT NULL OR (json_valid({t}) AND json_extract({t}, '$.outcome') = 'failed'))",
                    t = terminal_event
                )),
                Dialect::Postgres => FilterSql {
                    condition: Some(format!(
                        "status = 'settled' AND (error IS NOT NULL OR {terminal_event} IS NOT NULL)"
                    )),
                    takes_now: false,
                    refine_in_rust: true,
                },
            },
            status => plain(format!(
                "status = '{}'",
                status.status().map(|s| s.to_string()).unwrap_or_default()
            )),
        }
    }

    /// `--status` values, for the CLI's hint.
    pub fn names() -> String {
        RowFilter::all()
            .map(RowFilter::name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn names_round_trip_and_a_misspelt_one_is_refused() {
        for f in RowFilter::all() {
            assert_eq!(RowFilter::from_str(f.name()).ok(), Some(f));
        }
        assert_eq!(RowFilter::Queued.name(), "queued");
        assert!(RowFilter::from_str("runing").is_err());
        assert_eq!(RowFilter::all().count(), 7);
    }

    #[test]
    fn status_filters_select_their_status_in_sql() {
        let s = RowFilter::Terminalizing.sql(Dialect::Sqlite, "terminal_event_json");
        assert_eq!(s.where_clause(), "WHERE status = 'terminalizing'");
        assert!(!s.takes_now && !s.refine_in_rust);
        let e = RowFilter::Expired.sql(Dialect::Postgres, "terminal_event");
        assert!(e.takes_now);
        assert!(e.where_clause().ends_with("lease_expires_at < $1"));
        assert_eq!(RowFilter::All.sql(Dialect::Sqlite, "x").where_clause(), "");
        // A page after a row: the condition kept whole (its ORs inside), then the sequence.
        let f = RowFilter::Failed.sql(Dialect::Sqlite, "t");
        let paged = f.where_after(Some(-7));
        assert!(paged.starts_with("WHERE (status = 'settled' AND (error IS NOT NULL OR"));
        assert!(paged.ends_with(") AND sequence > -7"), "{paged}");
        assert_eq!(
            RowFilter::All
                .sql(Dialect::Postgres, "x")
                .where_after(Some(12)),
            "WHERE sequence > 12"
        );
    }
}
