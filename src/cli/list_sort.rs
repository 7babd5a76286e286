//! `list --sort COLUMN`: the columns by their header names, checked (exit 2 naming them), and
//! each row's key for the chosen one.

use super::{exit, CliError};
use turnscope_engine::report::SubmissionReport;

/// A column `list` can sort by (the table's header names, lowercased).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Seq,
    Id,
    Kind,
    Instance,
    Status,
    Att,
    Lease,
    Phase,
    Verdict,
    Rule,
    Cost,
    Owner,
    Error,
}

impl SortColumn {
    pub const ALL: [SortColumn; 13] = [
        SortColumn::Seq,
        SortColumn::Id,
        SortColumn::Kind,
        SortColumn::Instance,
        SortColumn::Status,
        SortColumn::Att,
        SortColumn::Lease,
        SortColumn::Phase,
        SortColumn::Verdict,
        SortColumn::Rule,
        SortColumn::Cost,
        SortColumn::Owner,
        SortColumn::Error,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortColumn::Seq => "seq",
            SortColumn::Id => "id",
            SortColumn::Kind => "kind",
            SortColumn::Instance => "instance",
            SortColumn::Status => "status",
            SortColumn::Att => "att",
            SortColumn::Lease => "lease",
            SortColumn::Phase => "phase",
            SortColumn::Verdict => "verdict",
            SortColumn::Rule => "rule",
            SortColumn::Cost => "cost",
            SortColumn::Owner => "owner",
            SortColumn::Error => "error",
        }
    }
}

/// A row's value in the sorted column: numbers as numbers, a missing value after every present
/// one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SortKey {
    Int(i64),
    Text(String),
    Missing,
}

/// `--sort`: a column and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortBy {
    pub column: SortColumn,
    pub descending: bool,
}

impl SortBy {
    /// `lease`, `-lease` (descending); case is ignored.
    pub fn parse(text: &str) -> Result<SortBy, CliError> {
        let t = text.trim().to_lowercase();
        let (descending, name) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.as_str()),
        };
        let column = SortColumn::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                CliError::new(
                    format!("unknown column {text:?} for --sort"),
                    format!(
                        "sort by one of: {} (a leading - sorts descending: --sort=-lease)",
                        SortColumn::ALL.map(SortColumn::name).join(", ")
                    ),
                    exit::USAGE,
                )
            })?;
        Ok(SortBy { column, descending })
    }

    /// `r`'s key in this column.
    pub fn key(&self, r: &SubmissionReport) -> SortKey {
        let row = r.row();
        let text = |s: Option<&str>| s.map_or(SortKey::Missing, |s| SortKey::Text(s.to_string()));
        match self.column {
            SortColumn::Seq => SortKey::Int(row.sequence),
            SortColumn::Id => SortKey::Text(row.submission_id.clone()),
            SortColumn::Kind => SortKey::Text(row.kind.clone()),
            SortColumn::Instance => text(row.instance_id().as_deref()),
            SortColumn::Status => SortKey::Text(row.status.to_string()),
            SortColumn::Att => SortKey::Int(row.attempt_count),
            // No lease (0) after every lease; the earliest expiry first.
            SortColumn::Lease => match row.lease_expires_at {
                0 => SortKey::Missing,
                t => SortKey::Int(t),
            },
            SortColumn::Phase => text(r.bundle.journal.as_ref().map(|j| j.phase.as_str())),
            SortColumn::Verdict => SortKey::Text(r.verdict()),
            SortColumn::Rule => r
                .plan
                .rule
                .map_or(SortKey::Missing, |n| SortKey::Int(n.into())),
            // The COST cell's figure (cost since the input on the active path).
            SortColumn::Cost => r
                .path_cost()
                .map_or(SortKey::Missing, |c| SortKey::Int(float_key(c.cost))),
            SortColumn::Owner => text(row.owner_id.as_deref()),
            SortColumn::Error => text(row.error.as_deref()),
        }
    }
}

/// An integer that orders as `x` does (`f64::total_cmp`): a cost keeps every digit.
pub(super) fn float_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_directions() {
        let s = SortBy::parse("Lease").unwrap();
        assert_eq!((s.column, s.descending), (SortColumn::Lease, false));
        let s = SortBy::parse("-rule").unwrap();
        assert_eq!((s.column, s.descending), (SortColumn::Rule, true));
        let e = SortBy::parse("tries").unwrap_err();
        assert_eq!(e.code, exit::USAGE);
        assert_eq!(e.message, "unknown column \"tries\" for --sort");
        let hint = e.hint.unwrap();
        assert!(
            hint.contains(
                "seq, id, kind, instance, status, att, lease, phase, verdict, rule, cost, owner, error"
            ),
            "{hint}"
        );
    }

    #[test]
    fn missing_values_sort_last() {
        assert!(SortKey::Int(5) < SortKey::Missing);
        assert!(SortKey::Text("a".into()) < SortKey::Missing);
        assert!(SortKey::Int(2) < SortKey::Int(10));
    }

    #[test]
    fn costs_sort_as_numbers() {
        let costs = [-1.5, -0.0, 0.0, 0.0001, 0.0043, 0.01, 1.0, 12.75];
        for w in costs.windows(2) {
            assert!(float_key(w[0]) < float_key(w[1]), "{w:?}");
        }
    }
}
