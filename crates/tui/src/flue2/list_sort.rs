//! The 2.x list's sort (`o` the next column, `O` the other direction), in the order
//! `turnscope list --sort COLUMN` (`-COLUMN` descending) prints on a 2.x journal: each column's
//! value as the CLI keys it (numbers as numbers, the COST cell's total by its exact figure), a
//! row without one last in either direction, equal values in sequence order.

use std::cmp::Ordering;

/// A column the list sorts by: the table's, in its order, after the journal's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Seq,
    Id,
    Kind,
    Instance,
    Status,
    Att,
    Lease,
    Cost,
    Verdict,
    Next,
}

impl SortColumn {
    pub const ALL: [SortColumn; 10] = [
        SortColumn::Seq,
        SortColumn::Id,
        SortColumn::Kind,
        SortColumn::Instance,
        SortColumn::Status,
        SortColumn::Att,
        SortColumn::Lease,
        SortColumn::Cost,
        SortColumn::Verdict,
        SortColumn::Next,
    ];

    /// The name `--sort` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            SortColumn::Seq => "seq",
            SortColumn::Id => "id",
            SortColumn::Kind => "kind",
            SortColumn::Instance => "instance",
            SortColumn::Status => "status",
            SortColumn::Att => "att",
            SortColumn::Lease => "lease",
            SortColumn::Cost => "cost",
            SortColumn::Verdict => "verdict",
            SortColumn::Next => "next",
        }
    }

    /// The column after this one (`o`), back to the first after the last.
    pub fn next(self) -> SortColumn {
        let i = SortColumn::ALL.iter().position(|c| *c == self).unwrap_or(0);
        SortColumn::ALL[(i + 1) % SortColumn::ALL.len()]
    }
}

/// A row's value in the sorted column (`ListRow::sort_key`).
pub enum Key<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
    Missing,
}

fn compare(a: &Key, b: &Key, descending: bool) -> Ordering {
    let o = match (a, b) {
        (Key::Missing, Key::Missing) => return Ordering::Equal,
        (Key::Missing, _) => return Ordering::Greater,
        (_, Key::Missing) => return Ordering::Less,
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Float(x), Key::Float(y)) => x.total_cmp(y),
        (Key::Text(x), Key::Text(y)) => x.cmp(y),
        // One column gives one kind of key.
        _ => Ordering::Equal,
    };
    if descending {
        o.reverse()
    } else {
        o
    }
}

/// `rows` (in sequence order, as the list document has them) sorted by `column`, each row's
/// value `key` gives: stable, so equal values stay in sequence order.
pub fn sort_rows<T>(
    rows: &mut [T],
    column: SortColumn,
    descending: bool,
    key: impl Fn(&T, SortColumn) -> Key<'_>,
) {
    rows.sort_by(|a, b| compare(&key(a, column), &key(b, column), descending));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row: its sequence, cost and lease.
    struct Row(i64, Option<f64>, i64);

    fn key(r: &Row, c: SortColumn) -> Key<'_> {
        match c {
            SortColumn::Cost => r.1.map_or(Key::Missing, Key::Float),
            SortColumn::Lease if r.2 <= 0 => Key::Missing,
            SortColumn::Lease => Key::Int(r.2),
            _ => Key::Int(r.0),
        }
    }

    fn sorted(rows: &mut [Row], c: SortColumn, descending: bool) -> Vec<i64> {
        sort_rows(rows, c, descending, key);
        rows.iter().map(|r| r.0).collect()
    }

    #[test]
    fn a_missing_value_is_last_either_way_and_ties_keep_sequence_order() {
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
    fn o_steps_through_every_column_and_back() {
        let mut c = SortColumn::Seq;
        let mut seen = vec![c];
        for _ in 1..SortColumn::ALL.len() {
            c = c.next();
            seen.push(c);
        }
        assert_eq!(seen, SortColumn::ALL);
        assert_eq!(c.next(), SortColumn::Seq);
    }
}
