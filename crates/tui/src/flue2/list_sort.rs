//! The 2.x list's sort keys: `o` steps through the table's columns (after the journal's
//! sequence), `O` turns the direction, in the order `turnscope list --sort COLUMN` prints: the
//! order itself is the engine's (`turnscope_engine::flue2_sort`), one definition for both.

pub use turnscope_engine::flue2_sort::{compare, SortColumn, SortKey};

/// The columns `o` steps through, in the table's order (the list has no OWNER or ERROR column).
pub const CYCLE: [SortColumn; 10] = [
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

/// The column after `c` (`o`), back to the first after the last.
pub fn next(c: SortColumn) -> SortColumn {
    let i = CYCLE.iter().position(|x| *x == c).unwrap_or(0);
    CYCLE[(i + 1) % CYCLE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o_steps_through_every_column_of_the_table_and_back() {
        let mut c = SortColumn::Seq;
        let mut seen = vec![c];
        for _ in 1..CYCLE.len() {
            c = next(c);
            seen.push(c);
        }
        assert_eq!(seen, CYCLE);
        assert_eq!(next(c), SortColumn::Seq);
    }
}
