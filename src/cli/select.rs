//! The selection `list` and every bulk action share: the status view, the row-level filters
//! (kind, instance, owner, age), the verdict (which needs each submission scanned) and the limit,
//! resolved in one read snapshot.

use super::args::SelectionArgs;
use super::{exit, CliError};
use crate::report::in_order::{in_order, Flow, Work};
use crate::report::verdict_filter::VerdictFilter;
use crate::report::SubmissionReport;
use std::collections::BTreeSet;

use crate::core::rows::SubmissionRow;
use crate::store::{JournalStore, PathWalker, RowFilter, RowPage, StoreError};

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
        // `--owner` is resolved among the owners of every row in view: read first, on their own.
        let owner = match sel.owner.as_deref() {
            None => None,
            Some(query) => {
                let mut owners: BTreeSet<String> = BTreeSet::new();
                store.for_each_submission(filter, now, RowPage::WHOLE, &mut |r| {
                    if let Some(o) = r.owner_id {
                        owners.insert(o);
                    }
                })?;
                match resolve_owner(query, owners.iter().map(String::as_str)) {
                    Ok(o) => Some(o),
                    Err(e) => {
                        owner_error = Some(e);
                        return Ok(());
                    }
                }
            }
        };
        let mut counts = Counts::default();
        let mut inspecting = Inspecting::new(context_window);
        let mut after = None;
        // The view is read a page at a time, each page's rows inspected before the next is read
        // (all in this one snapshot): every row of a 148,000-row journal held at once was 190 MB
        // before the first was inspected. Rows are kept only when the row filters take them.
        loop {
            let mut rows = Vec::new();
            let page = RowPage {
                after,
                rows: Some(sel.page_rows.map_or(PAGE_ROWS, |n| n as usize)),
            };
            let last = store.for_each_submission(filter, now, page, &mut |r| {
                if counts.keep(sel, owner.as_deref(), now, &r) {
                    rows.push(r);
                }
            })?;
            let Some(last) = last else { break };
            after = Some(last);
            let flow = inspecting.page(store, sel, &rows, now, &mut |report| {
                if let Some(v) = &verdict {
                    // A disposition's name selects its rows (`live`: a worker holds them);
                    // `resume` every resume mode; any other value the exact verdict.
                    if !v.matches(&report.verdict(), Some(report.plan.disposition.kind())) {
                        return Flow::Continue;
                    }
                }
                counts.matched += 1;
                visit(report);
                if sel.limit.is_some_and(|n| counts.matched >= n) {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            })?;
            if flow == Flow::Stop {
                break;
            }
        }
        counts.fill(&mut funnel, sel, owner.as_deref(), verdict.as_ref());
        Ok(())
    })?;
    match owner_error {
        Some(e) => Err(e),
        None => Ok(funnel),
    }
}

/// Rows of the view read at a time: a few megabytes of rows, and enough for both threads.
const PAGE_ROWS: usize = 4096;

/// What each filter let through so far, over the pages read.
#[derive(Default)]
struct Counts {
    in_view: usize,
    of_kind: usize,
    of_instance: usize,
    of_owner: usize,
    older: usize,
    matched: usize,
}

impl Counts {
    /// Whether the row filters take `r`, counting it at each one it passes, in the order they
    /// apply.
    fn keep(
        &mut self,
        sel: &SelectionArgs,
        owner: Option<&str>,
        now: i64,
        r: &SubmissionRow,
    ) -> bool {
        self.in_view += 1;
        if sel.kind.as_ref().is_some_and(|k| &r.kind != k) {
            return false;
        }
        self.of_kind += 1;
        if sel
            .instance
            .as_ref()
            .is_some_and(|i| r.instance_id().as_ref() != Some(i))
        {
            return false;
        }
        self.of_instance += 1;
        if owner.is_some_and(|o| r.owner_id.as_deref() != Some(o)) {
            return false;
        }
        self.of_owner += 1;
        let old_enough = sel.older_than.is_none_or(|age| {
            let since = if r.is_running() && r.lease_expires_at > 0 {
                r.lease_expires_at
            } else {
                r.accepted_at.unwrap_or(now)
            };
            now - since >= age.as_millis() as i64
        });
        if !old_enough {
            return false;
        }
        self.older += 1;
        true
    }

    /// The funnel of the filters given, as the operator reads them.
    fn fill(
        &self,
        funnel: &mut Funnel,
        sel: &SelectionArgs,
        owner: Option<&str>,
        verdict: Option<&VerdictFilter>,
    ) {
        funnel.in_view = self.in_view;
        funnel.steps.clear();
        if let Some(k) = &sel.kind {
            funnel.steps.push((format!("of kind {k}"), self.of_kind));
        }
        if let Some(i) = &sel.instance {
            funnel
                .steps
                .push((format!("of instance {i}"), self.of_instance));
        }
        if let Some(o) = owner {
            funnel
                .steps
                .push((format!("held by owner {o}"), self.of_owner));
        }
        if let Some(d) = sel.older_than {
            let age = crate::core::time::human_duration(d.as_millis() as i64);
            funnel.steps.push((format!("older than {age}"), self.older));
        }
        if let Some(v) = verdict {
            funnel
                .steps
                .push((format!("with verdict {}", v.as_str()), self.matched));
        }
    }
}

/// The inspection of a listing's pages: each thread's walker keeps a few recent walks across
/// pages, and the second thread's snapshot twin is made once, for the first page long enough.
struct Inspecting {
    walker: PathWalker,
    twin_walker: PathWalker,
    twin: Option<Box<dyn JournalStore + Send>>,
    twin_tried: bool,
    context_window: Option<u64>,
}

impl Inspecting {
    fn new(context_window: Option<u64>) -> Self {
        Inspecting {
            walker: PathWalker::new(context_window.is_some()),
            twin_walker: PathWalker::new(context_window.is_some()),
            twin: None,
            twin_tried: false,
            context_window,
        }
    }

    /// Inspect `rows` in order and hand each report to `then`; `Flow::Stop` when `then` stopped.
    fn page(
        &mut self,
        store: &dyn JournalStore,
        sel: &SelectionArgs,
        rows: &[SubmissionRow],
        now: i64,
        then: &mut dyn FnMut(&SubmissionReport) -> Flow,
    ) -> Result<Flow, StoreError> {
        // `--limit 0` selects nothing (the limit is checked after each match).
        let n = if sel.limit == Some(0) { 0 } else { rows.len() };
        if !self.twin_tried && sel.limit.is_none() && n >= TWO_THREADS_FROM {
            self.twin_tried = true;
            self.twin = store.snapshot_twin();
        }
        let context_window = self.context_window;
        // Each report holds only its active path since the input (`store::walk`) and is handed
        // on and dropped at once. A long page is inspected on two threads reading one snapshot,
        // handed on oldest first. The rows were read in this snapshot (the twin's is the same):
        // not read again.
        let inspect = |store: &dyn JournalStore, walker: &mut PathWalker, i: usize| {
            SubmissionReport::scan_row(store, &rows[i], walker, context_window, now)
        };
        let twin_walker = &mut self.twin_walker;
        // Borrowed mutably, which the other thread may hold (a store is not shared between
        // threads, only handed to one).
        let mut on_twin = self
            .twin
            .as_mut()
            .filter(|_| n >= TWO_THREADS_FROM)
            .map(|twin| move |i: usize| inspect(&**twin, twin_walker, i));
        let walker = &mut self.walker;
        let mut stopped = Flow::Continue;
        in_order(
            n,
            &mut |i| inspect(store, walker, i),
            on_twin.as_mut().map(|f| f as &mut Work<'_, _, _>),
            &mut |report| {
                let flow = then(report);
                if flow == Flow::Stop {
                    stopped = Flow::Stop;
                }
                flow
            },
        )?;
        Ok(stopped)
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
