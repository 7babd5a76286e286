//! The order of a 2.x list sorted by a column, one definition for both front ends:
//! `turnscope list --sort COLUMN` (`-COLUMN` descending) on a 2.x journal keys each inspected
//! submission ([`key_of`]); the TUI's `o`/`O` key the rows of the same `list --json` document.
//! Numbers sort as numbers (a cost by its exact figure), a row without a value last in either
//! direction, equal values in the order given (the journal's sequence).

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::flue2::Inspected;
use crate::flue2_cost::cost_total;

/// A column a 2.x list sorts by: the table's headers, lowercased, after the journal's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Seq,
    Id,
    Kind,
    Instance,
    Status,
    Att,
    Lease,
    Verdict,
    Next,
    Cost,
    Owner,
    Error,
}

impl SortColumn {
    pub const ALL: [SortColumn; 12] = [
        SortColumn::Seq,
        SortColumn::Id,
        SortColumn::Kind,
        SortColumn::Instance,
        SortColumn::Status,
        SortColumn::Att,
        SortColumn::Lease,
        SortColumn::Verdict,
        SortColumn::Next,
        SortColumn::Cost,
        SortColumn::Owner,
        SortColumn::Error,
    ];

    /// The name `--sort` takes.
    pub fn name(self) -> &'static str {
        match self {
            SortColumn::Seq => "seq",
            SortColumn::Id => "id",
            SortColumn::Kind => "kind",
            SortColumn::Instance => "instance",
            SortColumn::Status => "status",
            SortColumn::Att => "att",
            SortColumn::Lease => "lease",
            SortColumn::Verdict => "verdict",
            SortColumn::Next => "next",
            SortColumn::Cost => "cost",
            SortColumn::Owner => "owner",
            SortColumn::Error => "error",
        }
    }

    /// The column `name` names (any case); beta.7's `rule` is the 2.x reconciler's step, NEXT.
    pub fn parse(name: &str) -> Option<SortColumn> {
        let name = name.trim().to_lowercase();
        let name = if name == "rule" { "next" } else { &name };
        SortColumn::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// A row's value in the sorted column.
#[derive(Debug, Clone, PartialEq)]
pub enum SortKey<'a> {
    Int(i64),
    Float(f64),
    Text(Cow<'a, str>),
    Missing,
}

/// Two rows' values in the sorted column: a missing one after every present one in either
/// direction.
pub fn compare(a: &SortKey, b: &SortKey, descending: bool) -> Ordering {
    let o = match (a, b) {
        (SortKey::Missing, SortKey::Missing) => return Ordering::Equal,
        (SortKey::Missing, _) => return Ordering::Greater,
        (_, SortKey::Missing) => return Ordering::Less,
        (SortKey::Int(x), SortKey::Int(y)) => x.cmp(y),
        (SortKey::Float(x), SortKey::Float(y)) => x.total_cmp(y),
        (SortKey::Text(x), SortKey::Text(y)) => x.cmp(y),
        // One column gives one kind of value.
        _ => Ordering::Equal,
    };
    if descending {
        o.reverse()
    } else {
        o
    }
}

/// `rows` sorted by `column`, each row's value `key` gives: stable, so rows of equal values keep
/// the order given.
pub fn sort_rows<T>(
    rows: &mut [T],
    column: SortColumn,
    descending: bool,
    key: impl Fn(&T, SortColumn) -> SortKey<'_>,
) {
    rows.sort_by(|a, b| compare(&key(a, column), &key(b, column), descending));
}

/// An inspected submission's value in `column` (the instance by its id alone, COST by the cost
/// since the input, NEXT by the reconciler's step).
pub fn key_of<'a>(i: &'a Inspected<'_>, column: SortColumn) -> SortKey<'a> {
    let r = i.row;
    let text = |s: Option<&'a str>| s.map_or(SortKey::Missing, |s| SortKey::Text(s.into()));
    match column {
        SortColumn::Seq => SortKey::Int(r.sequence),
        SortColumn::Id => SortKey::Text(r.submission_id.as_str().into()),
        SortColumn::Kind => SortKey::Text(r.kind.as_str().into()),
        SortColumn::Instance => match r.session() {
            Some(k) => SortKey::Text(k.instance_id.into()),
            None => SortKey::Missing,
        },
        SortColumn::Status => SortKey::Text(r.status.as_str().into()),
        SortColumn::Att => SortKey::Int(r.attempt_count),
        SortColumn::Lease if r.lease_expires_at <= 0 => SortKey::Missing,
        SortColumn::Lease => SortKey::Int(r.lease_expires_at),
        SortColumn::Verdict => SortKey::Text(i.label().into()),
        SortColumn::Next => i
            .plan
            .step
            .number()
            .map_or(SortKey::Missing, |n| SortKey::Int(n.into())),
        SortColumn::Cost => cost_total(i).map_or(SortKey::Missing, SortKey::Float),
        SortColumn::Owner => text(r.owner_id.as_deref()),
        SortColumn::Error => text(r.error.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row: its sequence, cost and lease.
    struct Row(i64, Option<f64>, i64);

    fn key(r: &Row, c: SortColumn) -> SortKey<'_> {
        match c {
            SortColumn::Cost => r.1.map_or(SortKey::Missing, SortKey::Float),
            SortColumn::Lease if r.2 <= 0 => SortKey::Missing,
            SortColumn::Lease => SortKey::Int(r.2),
            _ => SortKey::Int(r.0),
        }
    }

    fn sorted(rows: &mut [Row], c: SortColumn, descending: bool) -> Vec<i64> {
        sort_rows(rows, c, descending, key);
        rows.iter().map(|r| r.0).collect()
    }

    #[test]
    fn a_missing_value_is_last_either_way_and_ties_keep_the_order_given() {
        let mut rows = vec![
            Row(1, Some(0.5), 0),
            Row(2, None, 10),
            Row(3, Some(0.25), 20),
            Row(4, Some(0.5), 5),
        ];
        assert_eq!(sorted(&mut rows, SortColumn::Cost, false), [3, 1, 4, 2]);
        assert_eq!(sorted(&mut rows, SortColumn::Cost, true), [1, 4, 3, 2]);
        assert_eq!(sorted(&mut rows, SortColumn::Lease, true), [3, 2, 4, 1]);
        assert_eq!(sorted(&mut rows, SortColumn::Seq, false), [1, 2, 3, 4]);
    }

    #[test]
    fn columns_by_name_any_case_and_rule_as_next() {
        for c in SortColumn::ALL {
            assert_eq!(SortColumn::parse(c.name()), Some(c));
            assert_eq!(SortColumn::parse(&c.name().to_uppercase()), Some(c));
        }
        assert_eq!(SortColumn::parse("rule"), Some(SortColumn::Next));
        assert_eq!(SortColumn::parse("phase"), None);
    }
}
