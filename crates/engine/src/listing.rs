//! The listing driver both front ends use: a view of the journal's submissions (a status view,
//! then the row filters kind, instance, owner and age, then the verdict and the rule, then a limit), read a
//! page at a time in one read snapshot and each submission inspected as for a listing (the
//! active path since its input, not the whole session), on two threads where the page is long.
//!
//! `list`, every bulk action and `incidents` call [`scan_counted`]; the CLI only parses its flags
//! into a [`Selection`].

use std::collections::BTreeSet;
use std::time::Duration;

use crate::in_order::{in_order, Flow, Work};
use crate::report::rule_filter::RuleFilter;
use crate::report::verdict_filter::VerdictFilter;
use crate::report::SubmissionReport;
use turnscope_core::journal::submission_rows::SubmissionRow;
use turnscope_store::{JournalStore, PathWalker, RowFilter, RowPage, StoreError};

/// Listings this long are inspected on two threads; a shorter one is read on one (the second
/// thread's store opens two connections of its own).
const TWO_THREADS_FROM: usize = 16;

/// How many owner ids an ambiguous owner prefix error names before "and N more".
const OWNERS_SHOWN: usize = 5;

/// Which submissions a listing takes, as plain data (the CLI's flags, parsed).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The status view (the expired leases by default).
    pub view: RowFilter,
    pub kind: Option<String>,
    pub instance: Option<String>,
    /// An owner id, or a prefix only one owner among the rows in view has.
    pub owner: Option<String>,
    /// Lease expired at least this long ago (running rows), accepted that long ago (others).
    pub older_than: Option<Duration>,
    pub verdict: Option<VerdictFilter>,
    /// The reconciler rule the plan fires next (after the verdict).
    pub rule: Option<RuleFilter>,
    /// At most this many matches, oldest first.
    pub limit: Option<usize>,
    /// Rows of the view read at a time (default [`PAGE_ROWS`]).
    pub page_rows: Option<usize>,
}

/// Why a listing stopped.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The owner prefix names two or more owners; `hint` says what to give instead.
    #[error("{message}")]
    AmbiguousOwner { message: String, hint: String },
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

/// Resolve `sel` at `now` in one read snapshot and hand each matching submission's report to
/// `visit`, oldest first, at most `sel.limit` of them; returns what each filter let through
/// ([`Funnel`]), which an empty result names.
pub fn scan_counted(
    store: &dyn JournalStore,
    sel: &Selection,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<Funnel, ListingError> {
    let filter = sel.view;
    let verdict = sel.verdict.as_ref();
    let mut funnel = Funnel {
        view: filter,
        in_view: 0,
        steps: Vec::new(),
    };
    // An ambiguous --owner is found inside the snapshot and reported after it.
    let mut owner_error: Option<ListingError> = None;
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
                rows: Some(sel.page_rows.unwrap_or(PAGE_ROWS)),
            };
            let last = store.for_each_submission(filter, now, page, &mut |r| {
                if counts.keep(sel, owner.as_deref(), now, &r) {
                    rows.push(r);
                }
            })?;
            let Some(last) = last else { break };
            after = Some(last);
            let flow = inspecting.page(store, sel, &rows, now, &mut |report| {
                if let Some(v) = verdict {
                    // A disposition's name selects its rows (`live`: a worker holds them);
                    // `resume` every resume mode; any other value the exact verdict.
                    if !v.matches(&report.verdict(), Some(report.plan.disposition.kind())) {
                        return Flow::Continue;
                    }
                }
                counts.of_verdict += 1;
                if sel
                    .rule
                    .as_ref()
                    .is_some_and(|r| !r.matches(report.plan.rule))
                {
                    return Flow::Continue;
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
        counts.fill(&mut funnel, sel, owner.as_deref(), verdict);
        Ok(())
    })?;
    match owner_error {
        Some(e) => Err(e),
        None => Ok(funnel),
    }
}

/// Rows of the view read at a time: a few megabytes of rows, and enough for both threads.
pub const PAGE_ROWS: usize = 4096;

/// What each filter let through so far, over the pages read.
#[derive(Default)]
struct Counts {
    in_view: usize,
    of_kind: usize,
    of_instance: usize,
    of_owner: usize,
    older: usize,
    of_verdict: usize,
    matched: usize,
}

impl Counts {
    /// Whether the row filters take `r`, counting it at each one it passes, in the order they
    /// apply.
    fn keep(&mut self, sel: &Selection, owner: Option<&str>, now: i64, r: &SubmissionRow) -> bool {
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
        sel: &Selection,
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
            let age = turnscope_core::journal::time::human_duration(d.as_millis() as i64);
            funnel.steps.push((format!("older than {age}"), self.older));
        }
        if let Some(v) = verdict {
            funnel.steps.push((v.describe(), self.of_verdict));
        }
        if let Some(r) = &sel.rule {
            funnel.steps.push((r.describe(), self.matched));
        }
    }
}

/// The inspection of a listing's pages: each thread's walker keeps a few recent walks across
/// pages, and the second thread's snapshot twin is made once, for the first page long enough.
struct Inspecting {
    inspector: RowInspector,
    twin_inspector: RowInspector,
    twin: Option<Box<dyn JournalStore + Send>>,
    twin_tried: bool,
}

impl Inspecting {
    fn new(context_window: Option<u64>) -> Self {
        Inspecting {
            inspector: RowInspector::new(context_window),
            twin_inspector: RowInspector::new(context_window),
            twin: None,
            twin_tried: false,
        }
    }

    /// Inspect `rows` in order and hand each report to `then`; `Flow::Stop` when `then` stopped.
    fn page(
        &mut self,
        store: &dyn JournalStore,
        sel: &Selection,
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
        // Each report holds only its active path since the input (`store::walk`) and is handed
        // on and dropped at once. A long page is inspected on two threads reading one snapshot,
        // handed on oldest first. The rows were read in this snapshot (the twin's is the same):
        // not read again.
        let inspect = |store: &dyn JournalStore, inspector: &mut RowInspector, i: usize| {
            inspector.inspect(store, &rows[i], now)
        };
        let twin_inspector = &mut self.twin_inspector;
        // Borrowed mutably, which the other thread may hold (a store is not shared between
        // threads, only handed to one).
        let mut on_twin = self
            .twin
            .as_mut()
            .filter(|_| n >= TWO_THREADS_FROM)
            .map(|twin| move |i: usize| inspect(&**twin, twin_inspector, i));
        let inspector = &mut self.inspector;
        let mut stopped = Flow::Continue;
        in_order(
            n,
            &mut |i| inspect(store, inspector, i),
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

/// One submission inspected as a listing inspects it: the active path since its input (not the
/// whole session), through a walker whose cache of session walks is kept from row to row, so
/// rows of one session do not walk it again. The listing driver holds two (one per thread); the
/// TUI's verdict worker holds one for the life of the screen.
pub struct RowInspector {
    walker: PathWalker,
    context_window: Option<u64>,
}

impl RowInspector {
    pub fn new(context_window: Option<u64>) -> Self {
        RowInspector {
            walker: PathWalker::new(context_window.is_some()),
            context_window,
        }
    }

    /// The report of `row` as of `now_ms`; the row is not read again.
    pub fn inspect(
        &mut self,
        store: &dyn JournalStore,
        row: &SubmissionRow,
        now_ms: i64,
    ) -> Result<SubmissionReport, StoreError> {
        SubmissionReport::scan_row(store, row, &mut self.walker, self.context_window, now_ms)
    }
}

/// The owner id `query` names among `owners` (those of the rows in view): an exact owner id,
/// else the one owner id it is a prefix of. No owner at all selects nothing (the filter still
/// applies); two or more is a usage error naming them.
pub fn resolve_owner<'a>(
    query: &str,
    owners: impl Iterator<Item = &'a str>,
) -> Result<String, ListingError> {
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
                .map(|o| turnscope_core::text::sanitize(o))
                .collect();
            let more = many.len().saturating_sub(OWNERS_SHOWN);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            Err(ListingError::AmbiguousOwner {
                message: format!(
                    "--owner {:?} matches {} owners: {}{tail}",
                    turnscope_core::text::sanitize(query),
                    many.len(),
                    shown.join(", ")
                ),
                hint:
                    "give more of the owner id (`turnscope show <submission>` prints a row's owner)"
                        .into(),
            })
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
        assert!(
            e.to_string()
                .contains("matches 2 owners: 9f2c-aaaa, 9f3d-bbbb"),
            "{e}"
        );
        // No owner: nothing is selected, and that is not an error.
        assert_eq!(resolve("zz", 4).unwrap(), "zz");
    }
}
