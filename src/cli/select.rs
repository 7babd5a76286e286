//! The selection `list` and every bulk action share: the status view, the row-level filters
//! (kind, instance, owner, age), the verdict (which needs each submission scanned) and the limit,
//! resolved in one read snapshot.

use super::args::SelectionArgs;
use super::{exit, CliError};
use crate::report::in_order::{in_order, Flow, Work};
use crate::report::verdict_filter::VerdictFilter;
use crate::report::SubmissionReport;
use crate::store::{JournalStore, PathWalker, RowFilter};

/// Listings this long are inspected on two threads; a shorter one is read on one (the second
/// thread's store opens two connections of its own).
const TWO_THREADS_FROM: usize = 16;

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

    /// `--verdict`, checked against every verdict there is (exit 2 listing them).
    pub fn verdict_filter(&self) -> Result<Option<VerdictFilter>, CliError> {
        self.verdict
            .as_deref()
            .map(|v| {
                VerdictFilter::parse(v).map_err(|e| {
                    CliError::new(
                        e.to_string(),
                        format!("use one of: {}", VerdictFilter::names_line()),
                        exit::USAGE,
                    )
                })
            })
            .transpose()
    }
}

/// How many rows each filter of a selection let through, in the order they apply: what an empty
/// result names ("12 expired submissions, none with verdict resume/tool_results").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Funnel {
    /// The status view.
    pub view: RowFilter,
    /// Rows in the view before any other filter.
    pub in_view: usize,
    /// Each filter given, as the operator reads it (`of kind direct`), with the rows left after it.
    pub steps: Vec<(String, usize)>,
}

impl Funnel {
    /// The line an empty result prints: which filter left nothing.
    pub fn nothing_matched(&self) -> String {
        let view = match self.view {
            RowFilter::All => String::new(),
            v => format!("{} ", v.name()),
        };
        let noun = if self.in_view == 1 {
            "submission"
        } else {
            "submissions"
        };
        if self.in_view == 0 {
            return match self.view {
                RowFilter::Expired => "no submission has an expired lease".to_string(),
                RowFilter::All => "the database has no submissions".to_string(),
                RowFilter::Failed => "no submission failed".to_string(),
                status => format!("no submission has status {status}"),
            };
        }
        let mut line = format!("{} {view}{noun}", self.in_view);
        for (what, left) in &self.steps {
            if *left == 0 {
                line.push_str(&format!(", none {what}"));
                return line;
            }
            line.push_str(&format!(", {left} {what}"));
        }
        line
    }
}

/// Resolve `sel` at `now` in one read snapshot and hand each matching submission's report
/// (scanned as for a listing: the active path since the input, not the whole session) to
/// `visit`, oldest first, at most `--limit` of them. Returns the status view used.
/// `list` uses [`scan_counted`] for the counts an empty result names.
pub fn scan(
    store: &dyn JournalStore,
    sel: &SelectionArgs,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<RowFilter, CliError> {
    scan_counted(store, sel, context_window, now, visit).map(|f| f.view)
}

/// [`scan`], also counting what each filter let through ([`Funnel`]).
pub fn scan_counted(
    store: &dyn JournalStore,
    sel: &SelectionArgs,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<Funnel, CliError> {
    let filter = sel.row_filter()?;
    let verdict = sel.verdict_filter()?;
    let mut funnel = Funnel {
        view: filter,
        in_view: 0,
        steps: Vec::new(),
    };
    // An ambiguous --owner is found inside the snapshot and reported after it.
    let mut owner_error: Option<CliError> = None;
    store.in_snapshot(&mut || {
        // Rows are kept only when the kind and instance filters take them, as they are read: an
        // `--instance` listing of a 200,000-row journal held every row (250 MB) to keep a few.
        // Each filter is counted apart, in the order they apply, so an empty result can say
        // which left nothing; `--owner` is resolved among the owners of every row in view.
        let mut rows = Vec::new();
        let mut in_view = 0usize;
        let (mut of_kind, mut of_instance) = (0usize, 0usize);
        let mut owners_in_view: std::collections::BTreeSet<String> = Default::default();
        store.for_each_submission(filter, now, &mut |r| {
            in_view += 1;
            if let (Some(_), Some(o)) = (&sel.owner, &r.owner_id) {
                if !owners_in_view.contains(o) {
                    owners_in_view.insert(o.clone());
                }
            }
            if sel.kind.as_ref().is_some_and(|k| &r.kind != k) {
                return;
            }
            of_kind += 1;
            if sel
                .instance
                .as_ref()
                .is_some_and(|i| r.instance_id().as_ref() != Some(i))
            {
                return;
            }
            of_instance += 1;
            rows.push(r);
        })?;
        let owners = owners_in_view.iter().map(String::as_str);
        let owner = match sel.owner.as_deref().map(|q| resolve_owner(q, owners)) {
            None => None,
            Some(Ok(o)) => Some(o),
            Some(Err(e)) => {
                owner_error = Some(e);
                return Ok(());
            }
        };
        funnel.in_view = in_view;
        funnel.steps.clear();
        if let Some(k) = &sel.kind {
            funnel.steps.push((format!("of kind {k}"), of_kind));
        }
        if let Some(i) = &sel.instance {
            funnel.steps.push((format!("of instance {i}"), of_instance));
        }
        let mut step =
            |what: Option<String>,
             rows: &mut Vec<crate::core::rows::SubmissionRow>,
             keep: &dyn Fn(&crate::core::rows::SubmissionRow) -> bool| {
                if let Some(what) = what {
                    rows.retain(|r| keep(r));
                    funnel.steps.push((what, rows.len()));
                }
            };
        step(
            owner.as_ref().map(|o| format!("held by owner {o}")),
            &mut rows,
            &|r| {
                owner
                    .as_ref()
                    .is_none_or(|o| r.owner_id.as_deref() == Some(o.as_str()))
            },
        );
        step(
            sel.older_than.map(|d| {
                format!(
                    "older than {}",
                    crate::core::time::human_duration(d.as_millis() as i64)
                )
            }),
            &mut rows,
            &|r| {
                sel.older_than.is_none_or(|age| {
                    let since = if r.is_running() && r.lease_expires_at > 0 {
                        r.lease_expires_at
                    } else {
                        r.accepted_at.unwrap_or(now)
                    };
                    now - since >= age.as_millis() as i64
                })
            },
        );
        // Each report holds only its active path since the input (`store::walk`) and is handed
        // on and dropped at once; each thread's walker keeps a few recent walks. A long listing
        // is inspected on two threads reading one snapshot, handed on oldest first.
        let inspect = |store: &dyn JournalStore, walker: &mut PathWalker, i: usize| {
            // The rows were read in this snapshot (the twin's is the same): not read again.
            SubmissionReport::scan_row(store, &rows[i], walker, context_window, now)
        };
        let mut walker = PathWalker::new(context_window.is_some());
        let twin = if sel.limit.is_none() && rows.len() >= TWO_THREADS_FROM {
            store.snapshot_twin()
        } else {
            None
        };
        let mut twin_walker = PathWalker::new(context_window.is_some());
        let mut on_twin =
            twin.map(|twin| move |i: usize| inspect(twin.as_ref(), &mut twin_walker, i));
        let mut matched = 0usize;
        // `--limit 0` selects nothing (the limit is checked after each match).
        let n = if sel.limit == Some(0) { 0 } else { rows.len() };
        in_order(
            n,
            &mut |i| inspect(store, &mut walker, i),
            on_twin.as_mut().map(|f| f as &mut Work<'_, _, _>),
            &mut |report| {
                if let Some(v) = &verdict {
                    // A disposition's name selects its rows (`live`: a worker holds them);
                    // `resume` every resume mode; any other value the exact verdict.
                    if !v.matches(&report.verdict(), Some(report.plan.disposition.kind())) {
                        return Flow::Continue;
                    }
                }
                matched += 1;
                visit(report);
                if sel.limit.is_some_and(|n| matched >= n) {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            },
        )?;
        if let Some(v) = &verdict {
            funnel
                .steps
                .push((format!("with verdict {}", v.as_str()), matched));
        }
        Ok(())
    })?;
    match owner_error {
        Some(e) => Err(e),
        None => Ok(funnel),
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
