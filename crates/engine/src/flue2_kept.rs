//! The TUI list's inspections kept between refreshes without their streams: per row of the view,
//! what its `list --json` item needs (verdict, cost, and the reconciler's reads of the fold as
//! [`PlanFacts`]), tagged with the row, joined deliveries and stream head it was made of. A
//! refresh folds again only the streams of rows whose tag changed, in one pipeline as `list` reads
//! them (`fold_streams`), each fold let go once its rows are inspected; every row is planned again
//! at the refresh's clock from its facts ([`PlanFacts::plan`], the step table `plan_flue2` runs),
//! so no plan is shown that was not computed at the list's clock, and memory holds the folds in
//! flight instead of the whole view's.

use std::collections::HashMap;

use turnscope_core::flue2::cost::Flue2Cost;
use turnscope_core::flue2::{
    Flue2Classification, Flue2SubmissionRow, InspectFailure, PlanFacts, ReconcileInput,
};
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::flue2::{Flue2Options, Inspected, Streams};
use crate::flue2_cost::cost_of;

/// One row's inspection without its stream.
struct KeptRow {
    /// What it was made of: a change of any of these folds its stream again.
    row: Flue2SubmissionRow,
    joined: Vec<String>,
    head: Option<(i64, String)>,
    stream_path: Option<String>,
    verdict: Result<Flue2Classification, String>,
    failure: Option<InspectFailure>,
    cost: Option<Flue2Cost>,
    facts: PlanFacts,
}

/// The classification as the step table takes it (as `Streams::inspect` passes it).
fn classification(
    verdict: &Result<Flue2Classification, String>,
    failure: Option<InspectFailure>,
) -> Result<&Flue2Classification, (InspectFailure, &str)> {
    match verdict {
        Ok(c) => Ok(c),
        Err(e) => Err((failure.unwrap_or(InspectFailure::Unloadable), e.as_str())),
    }
}

impl KeptRow {
    fn of(i: &Inspected<'_>, head: Option<(i64, String)>, options: &Flue2Options) -> KeptRow {
        let facts = PlanFacts::of(&ReconcileInput {
            row: i.row,
            instance: i.instance,
            conversation: i.conversation,
            classification: classification(&i.verdict, i.failure),
            joined: &i.joined,
            // The facts hold no clock: the step table is asked at one when planned.
            now_ms: 0,
            variant: options.variant,
        });
        KeptRow {
            row: i.row.clone(),
            joined: i.joined.clone(),
            head,
            stream_path: i.stream_path.clone(),
            verdict: i.verdict.clone(),
            failure: i.failure,
            cost: cost_of(i),
            facts,
        }
    }
}

/// A row to inspect again, with its joined deliveries.
type Stale<'r> = (&'r Flue2SubmissionRow, Vec<String>);

/// How a refresh went: what it had to fold again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptRefresh {
    /// The streams folded by this refresh (their rows new, changed, or their head moved).
    pub folded: Vec<String>,
    /// The rows inspected again (the others' kept facts were planned at the new clock).
    pub inspected: usize,
}

/// The view's rows kept by submission id ([`KeptRows::refresh`]), each inspected as
/// `Streams::load` + `Streams::inspect` inspects it.
#[derive(Default)]
pub struct KeptRows {
    rows: HashMap<String, KeptRow>,
}

impl KeptRows {
    /// Keep `rows` (the view's, read in the snapshot `heads` was read in), inspecting again those
    /// whose row, joined deliveries (`joined`) or stream head changed since they were kept: their
    /// streams folded in one pipeline and each let go after its rows ([`Streams::visit_each`]), or
    /// taken from `held` where it holds one (a stream `held`
    /// holds must be folded at `heads`: the worker's opened submission, refreshed in the same
    /// snapshot). Rows not in `rows` are let go.
    pub fn refresh<'r>(
        &mut self,
        reader: &Flue2SqliteReader,
        heads: &HashMap<String, (i64, String)>,
        rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>,
        joined: impl FnMut(&Flue2SubmissionRow) -> Vec<String>,
        options: &Flue2Options,
        held: &Streams,
    ) -> Result<KeptRefresh, StoreError> {
        let rows: Vec<&Flue2SubmissionRow> = rows.into_iter().collect();
        self.keep_only(rows.iter().copied());
        self.update(reader, heads, rows, joined, options, held)
    }

    /// Let go every row but `rows`'.
    pub fn keep_only<'r>(&mut self, rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>) {
        let ids: std::collections::HashSet<&str> =
            rows.into_iter().map(|r| r.submission_id.as_str()).collect();
        self.rows.retain(|id, _| ids.contains(id.as_str()));
    }

    /// [`KeptRows::refresh`] without letting any row go: a caller refreshing a view in parts
    /// (the worker folds its largest stream last, after the small ones were let go).
    pub fn update<'r>(
        &mut self,
        reader: &Flue2SqliteReader,
        heads: &HashMap<String, (i64, String)>,
        rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>,
        mut joined: impl FnMut(&Flue2SubmissionRow) -> Vec<String>,
        options: &Flue2Options,
        held: &Streams,
    ) -> Result<KeptRefresh, StoreError> {
        let mut stale: Vec<Stale<'r>> = Vec::new();
        for row in rows {
            let path = row.session().map(|k| k.stream_path());
            let head = path.as_ref().and_then(|p| heads.get(p)).cloned();
            let j = joined(row);
            let fresh = self.rows.get(&row.submission_id).is_some_and(|k| {
                // A stream with no head row is read again each time, as `Streams::refresh` does.
                k.row == *row && k.joined == j && head.is_some() && k.head == head
            });
            if !fresh {
                stale.push((row, j));
            }
        }
        let mut inspected = 0;
        // The clock is the step table's only input the facts do not hold: any will do.
        let folded = Streams::visit_each(reader, stale, options, 0, held, |i| {
            let head = i.stream_path.as_ref().and_then(|p| heads.get(p)).cloned();
            let kept = KeptRow::of(&i, head, options);
            self.rows.insert(i.row.submission_id.clone(), kept);
            inspected += 1;
        })?;
        Ok(KeptRefresh { folded, inspected })
    }

    /// `row`'s kept inspection, planned at `now_ms` (`None` where it is not kept, or was kept
    /// for another version of the row).
    pub fn inspected<'a>(&self, row: &'a Flue2SubmissionRow, now_ms: i64) -> Option<Inspected<'a>> {
        let k = self
            .rows
            .get(&row.submission_id)
            .filter(|k| k.row == *row)?;
        let plan = k.facts.plan(
            row,
            classification(&k.verdict, k.failure),
            &k.joined,
            now_ms,
        );
        Some(Inspected {
            row,
            stream_path: k.stream_path.clone(),
            conversation: None,
            instance: None,
            verdict: k.verdict.clone(),
            failure: k.failure,
            joined: k.joined.clone(),
            plan,
            detached_cost: k.cost.clone(),
        })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}
