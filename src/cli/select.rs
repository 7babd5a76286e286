//! The selection `list` and every bulk action share: the status view, the row-level filters
//! (kind, instance, owner, age), the verdict (which needs each submission scanned) and the limit,
//! resolved in one read snapshot.

use super::args::SelectionArgs;
use super::{exit, CliError};
use crate::report::SubmissionReport;
use crate::store::{JournalStore, PathWalker, RowFilter};

/// How many owner ids an ambiguous `--owner` prefix error names before "and N more".
const OWNERS_SHOWN: usize = 5;

impl SelectionArgs {
    /// The status view: `--status`, else the expired view.
    pub fn row_filter(&self) -> Result<RowFilter, CliError> {
        match self.status.as_deref() {
            None => Ok(RowFilter::Expired),
            Some(s) => s.parse::<RowFilter>().map_err(|_| {
                CliError::new(
                    format!("unknown status {s:?}"),
                    format!("use one of: {} (or --expired)", RowFilter::names()),
                    exit::USAGE,
                )
            }),
        }
    }
}

/// Resolve `sel` at `now` in one read snapshot and hand each matching submission's report
/// (scanned as for a listing: the active path since the input, not the whole session) to
/// `visit`, oldest first, at most `--limit` of them. Returns the status view used.
pub fn scan(
    store: &dyn JournalStore,
    sel: &SelectionArgs,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<RowFilter, CliError> {
    let filter = sel.row_filter()?;
    // An ambiguous --owner is found inside the snapshot and reported after it.
    let mut owner_error: Option<CliError> = None;
    store.in_snapshot(&mut || {
        let mut rows = store.list_submissions(filter, now)?;
        let owners = rows.iter().filter_map(|r| r.owner_id.as_deref());
        let owner = match sel.owner.as_deref().map(|q| resolve_owner(q, owners)) {
            None => None,
            Some(Ok(o)) => Some(o),
            Some(Err(e)) => {
                owner_error = Some(e);
                return Ok(());
            }
        };
        // Row-level filters first, so only the rows selected are inspected.
        rows.retain(|r| {
            sel.kind.as_ref().is_none_or(|k| &r.kind == k)
                && sel
                    .instance
                    .as_ref()
                    .is_none_or(|i| r.instance_id().as_ref() == Some(i))
                && owner
                    .as_ref()
                    .is_none_or(|o| r.owner_id.as_deref() == Some(o.as_str()))
                && sel.older_than.is_none_or(|age| {
                    let since = if r.is_running() && r.lease_expires_at > 0 {
                        r.lease_expires_at
                    } else {
                        r.accepted_at.unwrap_or(now)
                    };
                    now - since >= age.as_millis() as i64
                })
        });
        // Each report holds only its active path since the input (`store::walk`) and is handed
        // on and dropped at once; the walker keeps a few recent walks.
        let mut walker = PathWalker::new(context_window.is_some());
        let mut matched = 0usize;
        for row in rows {
            if sel.limit.is_some_and(|n| matched >= n) {
                break;
            }
            let report = SubmissionReport::scan(
                store,
                &row.submission_id,
                &mut walker,
                context_window,
                now,
            )?;
            if let Some(v) = &sel.verdict {
                let verdict = report.verdict();
                // `resume` matches every resume mode; otherwise the label must match exactly.
                let hit =
                    &verdict == v || verdict.strip_prefix("resume/").is_some() && v == "resume";
                if !hit {
                    continue;
                }
            }
            matched += 1;
            visit(&report);
        }
        Ok(())
    })?;
    match owner_error {
        Some(e) => Err(e),
        None => Ok(filter),
    }
}

/// The owner id `query` names among `owners` (those of the rows in view): an exact owner id,
/// else the one owner id it is a prefix of. No owner at all selects nothing (the filter still
/// applies); two or more is a usage error naming them.
fn resolve_owner<'a>(
    query: &str,
    owners: impl Iterator<Item = &'a str>,
) -> Result<String, CliError> {
    let mut owners: Vec<&str> = owners.collect();
    owners.sort_unstable();
    owners.dedup();
    if owners.contains(&query) {
        return Ok(query.to_string());
    }
    let hits: Vec<&str> = owners
        .into_iter()
        .filter(|o| o.starts_with(query))
        .collect();
    match hits.as_slice() {
        [] => Ok(query.to_string()),
        [one] => Ok((*one).to_string()),
        many => {
            let shown: Vec<String> = many
                .iter()
                .take(OWNERS_SHOWN)
                .map(|o| crate::text::sanitize(o))
                .collect();
            let more = many.len().saturating_sub(OWNERS_SHOWN);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            Err(CliError::new(
                format!(
                    "--owner {:?} matches {} owners: {}{tail}",
                    crate::text::sanitize(query),
                    many.len(),
                    shown.join(", ")
                ),
                "give more of the owner id (`turnscope show <submission>` prints a row's owner)",
                exit::USAGE,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_owner;

    #[test]
    fn owner_prefixes() {
        let owners = ["9f2c-aaaa", "9f2c-aaaa", "9f3d-bbbb", "9f"];
        let resolve = |q: &str, n: usize| resolve_owner(q, owners[..n].iter().copied());
        assert_eq!(resolve("9f2", 4).unwrap(), "9f2c-aaaa");
        // An exact id wins over being a prefix of others.
        assert_eq!(resolve("9f", 4).unwrap(), "9f");
        let e = resolve("9f", 3).unwrap_err();
        assert_eq!(e.code, super::exit::USAGE);
        assert!(
            e.message.contains("matches 2 owners: 9f2c-aaaa, 9f3d-bbbb"),
            "{}",
            e.message
        );
        // No owner: nothing is selected, and that is not an error.
        assert_eq!(resolve("zz", 4).unwrap(), "zz");
    }
}
