//! The submissions list (home): the current filter's rows, filtered as you type (`/`), sorted
//! by any column (`o`, `O`), marked for bulk actions in `--write` mode (space; `*` every row
//! shown, `V` the range from the last mark to the cursor, `u` none). Its write keys
//! (R, Q, F, S) plan an action on the marked rows or the selected one; the plan comes back as
//! the confirm popup (`popups/confirm.rs`). Drawn with columns dropped by priority when narrow
//! and a verdict preview of the selected row below.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{nav_delta, say, step, Ask, ScreenCx};
use crate::keymap::{Action, FilterLabel};
use crate::list_query::{self, Subject};
use crate::messages::{status_label, BannerBase, ItemDisposition, ListItem, Target};
use crate::popups::Reason;
use crate::text::{clean, fit, pad, width};
use crate::view_state::{DrawCtx, Hit, InputMode, Layout, Pane};
use crate::widgets::{scroll_into_view, table_and_strip};
use turnscope_engine::actions::ActionKind;
use turnscope_engine::report::{cost_text, lease_text};
use turnscope_store::RowFilter;

/// List columns, in display order; also the sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Seq,
    Id,
    Kind,
    Instance,
    Status,
    Attempts,
    Lease,
    Phase,
    Verdict,
    Rule,
    Cost,
    Error,
}

impl Column {
    pub const ALL: [Column; 12] = [
        Column::Seq,
        Column::Id,
        Column::Kind,
        Column::Instance,
        Column::Status,
        Column::Attempts,
        Column::Lease,
        Column::Phase,
        Column::Verdict,
        Column::Rule,
        Column::Cost,
        Column::Error,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Column::Seq => "SEQ",
            Column::Id => "ID",
            Column::Kind => "KIND",
            Column::Instance => "INSTANCE",
            Column::Status => "STATUS",
            // The CLI's `list` headers: one name for a column wherever it is shown.
            Column::Attempts => "ATT",
            Column::Lease => "LEASE",
            Column::Phase => "PHASE",
            Column::Verdict => "VERDICT",
            Column::Rule => "RULE",
            Column::Cost => "COST",
            Column::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ListScreen {
    pub filter: RowFilter,
    pub sort: Option<Column>,
    pub desc: bool,
    pub query: String,
    /// Why `query` does not parse (the list then shows no row and says this).
    pub query_error: Option<String>,
    /// Indexes into `App::items`, filtered and sorted.
    pub view: Vec<usize>,
    pub selected: usize,
    pub selected_id: Option<String>,
    /// Submissions marked for a bulk action (write mode).
    pub marks: HashSet<String>,
    /// The row last marked with space: where `V` marks a range from.
    pub anchor: Option<String>,
    /// Only the rows whose lease this worker held (`Some(None)`: rows without an owner), set by
    /// ⏎ on the incidents screen; esc clears it.
    pub owner: Option<Option<String>>,
}

/// What esc took off the list ([`ListScreen::peel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peeled {
    Query,
    /// The incidents screen's narrowing to one worker.
    Owner,
    /// This many marks.
    Marks(usize),
}

/// What a write key asks for once its targets are known.
pub enum WriteAsk {
    /// `fail` needs a reason first: the reason popup (`popups/reason.rs`) plans it on ⏎.
    Reason(Reason),
    /// Plan `kind` on these submissions now; the worker's plan comes back as the confirm popup
    /// (`popups/confirm.rs`, `Confirm::for_planned`), with No selected.
    Plan { kind: ActionKind, ids: Vec<String> },
}

impl ListScreen {
    /// R, Q, F, S on the list: the marked rows (in list order), else the selected row.
    pub fn write_targets(&self, items: &[ListItem]) -> Result<Vec<String>, &'static str> {
        if !self.marks.is_empty() {
            return Ok(marked_in_order(items, &self.marks));
        }
        match self.selected_item(items) {
            Some(it) => Ok(vec![it.row.submission_id.clone()]),
            None => Err("nothing selected"),
        }
    }

    /// The selected row of `items` (the app's loaded rows).
    pub fn selected_item<'a>(&self, items: &'a [ListItem]) -> Option<&'a ListItem> {
        self.view.get(self.selected).map(|&i| &items[i])
    }

    /// What ⏎ opens and `e` exports: the selected submission.
    pub fn target(&self, items: &[ListItem]) -> Option<Target> {
        self.selected_item(items)
            .map(|i| Target::Submission(i.row.submission_id.clone()))
    }

    /// Keep the selected row's id, so the next rebuild (a refresh, a sort) finds it again.
    pub fn remember_selection(&mut self, items: &[ListItem]) {
        self.selected_id = self
            .selected_item(items)
            .map(|i| i.row.submission_id.clone());
    }

    /// Move the cursor by `delta` rows (clamped to the rows shown).
    pub fn move_cursor(&mut self, delta: isize, items: &[ListItem]) {
        self.selected = step(self.selected, self.view.len(), delta);
        self.remember_selection(items);
    }

    /// The write key `kind` on `ids`: every action asks why first (required for fail, optional
    /// otherwise), so each audit row can carry a reason.
    pub fn write_ask(kind: ActionKind, ids: Vec<String>) -> WriteAsk {
        WriteAsk::Reason(Reason::new(kind, ids))
    }

    /// The list's own actions (the router sends the ones of its pane, the filter keys and the
    /// marks here); what the router carries out after them.
    pub fn handle(&mut self, a: Action, cx: &ScreenCx, on_list: bool) -> Vec<Ask> {
        if let Some(delta) = nav_delta(a, cx.page) {
            self.move_cursor(delta, cx.items);
            return Vec::new();
        }
        match a {
            Action::Enter => match self.target(cx.items) {
                Some(t) => vec![Ask::Open(t)],
                None => vec![Ask::Info(
                    "nothing selected: try another filter (1-7)".into(),
                )],
            },
            Action::Filter(f) => {
                self.filter = f;
                self.selected = 0;
                vec![Ask::Reread]
            }
            Action::StartFilter => vec![Ask::Input(InputMode::Filter)],
            Action::SortNext | Action::SortReverse => say(self.on_sort(a, cx.items, cx.now_ms)),
            Action::Back => match self.peel() {
                Some(Peeled::Query) => vec![Ask::Rebuild],
                Some(Peeled::Owner) => vec![
                    Ask::Rebuild,
                    Ask::Info(
                        "every row of the filter again (the worker's narrowing is off)".into(),
                    ),
                ],
                Some(Peeled::Marks(n)) => vec![Ask::Info(format!(
                    "unmarked {n} row{}",
                    if n == 1 { "" } else { "s" }
                ))],
                None => Vec::new(),
            },
            Action::ToggleMark if on_list => {
                let Some(id) = self
                    .selected_item(cx.items)
                    .map(|i| i.row.submission_id.clone())
                else {
                    return Vec::new();
                };
                self.toggle_mark(id);
                self.move_cursor(1, cx.items);
                let n = self.marks.len();
                let cost = cost_text::costs_sum_text(self.marked_costs(cx.items));
                vec![Ask::Info(format!(
                    "{n} marked, {cost} · R/Q/F/S act on every marked row · esc unmarks all"
                ))]
            }
            Action::MarkAll | Action::MarkRange | Action::ClearMarks => {
                say(self.bulk_mark(a, cx.items, on_list))
            }
            _ => Vec::new(),
        }
    }

    /// `I`: the incidents screen groups the expired rows, so the list shows that filter; `true`
    /// when it showed another (its rows are then to be read).
    pub fn show_expired(&mut self) -> bool {
        if self.filter == RowFilter::Expired {
            return false;
        }
        self.filter = RowFilter::Expired;
        self.selected = 0;
        true
    }

    /// After a refresh: what changed under the operator in the row that was selected before it
    /// (`before`), unless this app wrote it; counted from the banner's base (`up`) while a banner
    /// about that row is up. `watched` is the selected row as read even when it left the filter.
    pub fn changed_under_you(
        &self,
        before: Option<ListItem>,
        up: Option<&BannerBase>,
        items: &[ListItem],
        watched: Option<&ListItem>,
        own: &HashSet<String>,
    ) -> Option<(String, BannerBase)> {
        let old = banner_base(up, before?);
        let id = &old.row.submission_id;
        if own.contains(id) {
            return None;
        }
        let still = self
            .selected_item(items)
            .is_some_and(|n| &n.row.submission_id == id);
        let new = items
            .iter()
            .find(|i| &i.row.submission_id == id)
            .or(watched.filter(|w| &w.row.submission_id == id))
            .filter(|i| !i.pending)?;
        let mut c = describe_item_change(&old, new)?;
        if !still {
            c = c.replace(" · esc dismisses", " · it left this filter · esc dismisses");
        }
        Some((c, BannerBase::Row(Box::new(old))))
    }

    /// A background verdict changed the selected row from `seen`: the banner, counted from the
    /// banner's base (`up`) while one about that row is up.
    pub fn verdict_changed(
        up: Option<&BannerBase>,
        seen: ListItem,
        new: &ListItem,
    ) -> Option<(String, BannerBase)> {
        let base = banner_base(up, seen);
        describe_item_change(&base, new).map(|c| (c, BannerBase::Row(Box::new(base))))
    }

    /// ⏎ on a worker of the incidents screen: only its rows, from the top.
    pub fn narrow_to(&mut self, owner: Option<String>) {
        self.owner = Some(owner);
        self.query.clear();
        self.selected = 0;
    }

    /// Space: mark or unmark a row for a bulk action (a marked row is where `V` starts).
    pub fn toggle_mark(&mut self, id: String) {
        if !self.marks.remove(&id) {
            self.anchor = Some(id.clone());
            self.marks.insert(id);
        }
    }

    /// The marked rows' costs since their inputs (the COST column's figures); a marked row whose
    /// figure is not in yet, or that is not loaded, has none.
    pub fn marked_costs(&self, items: &[ListItem]) -> Vec<Option<f64>> {
        let by_id: HashMap<&str, Option<f64>> = items
            .iter()
            .filter(|it| self.marks.contains(&it.row.submission_id))
            .map(|it| (it.row.submission_id.as_str(), it.cost))
            .collect();
        self.marks
            .iter()
            .map(|id| by_id.get(id.as_str()).copied().flatten())
            .collect()
    }

    /// `*`: mark every row shown; how many were not marked yet.
    pub fn mark_all(&mut self, items: &[ListItem]) -> usize {
        let before = self.marks.len();
        self.marks.extend(
            self.view
                .iter()
                .map(|&i| items[i].row.submission_id.clone()),
        );
        self.marks.len() - before
    }

    /// `V`: mark the rows shown from the anchor (the row last marked) to the cursor, both
    /// included; how many were not marked yet. `Err` when the anchor is not shown.
    pub fn mark_range(&mut self, items: &[ListItem]) -> Result<usize, &'static str> {
        let at = |id: &String| {
            self.view
                .iter()
                .position(|&i| &items[i].row.submission_id == id)
        };
        let Some(from) = self.anchor.as_ref().and_then(at) else {
            return Err("mark a row with space first: V marks from it to the cursor");
        };
        let (lo, hi) = (from.min(self.selected), from.max(self.selected));
        let before = self.marks.len();
        for &i in &self.view[lo..=hi.min(self.view.len().saturating_sub(1))] {
            self.marks.insert(items[i].row.submission_id.clone());
        }
        self.anchor = self
            .view
            .get(self.selected)
            .map(|&i| items[i].row.submission_id.clone());
        Ok(self.marks.len() - before)
    }

    /// `*`, `V`, `u` (`on_list`: the list is the screen shown): mark or unmark, and what the
    /// status line says about it. `None` for another action.
    pub fn bulk_mark(&mut self, a: Action, items: &[ListItem], on_list: bool) -> Option<String> {
        let said = match a {
            Action::MarkAll if on_list => Ok(format!(
                "marked {} more: every row shown",
                self.mark_all(items)
            )),
            Action::MarkRange if on_list => self
                .mark_range(items)
                .map(|n| format!("marked {n} more: the range up to the cursor")),
            Action::ClearMarks => {
                let n = self.clear_marks();
                Ok(format!("unmarked {n} row{}", if n == 1 { "" } else { "s" }))
            }
            Action::MarkAll | Action::MarkRange => {
                Err("* and V mark the list's rows: they work in the submissions list")
            }
            _ => return None,
        };
        Some(match said {
            Ok(m) => {
                let (n, hidden) = (self.marks.len(), self.hidden_marks(items).len());
                let hidden = if hidden > 0 {
                    format!(", {hidden} hidden by the filter")
                } else {
                    String::new()
                };
                format!("{m} · {n} marked{hidden}")
            }
            Err(e) => e.to_string(),
        })
    }

    /// Esc on the list takes off one layer: the `/` query, then the worker's narrowing, then the
    /// marks. What it took off (`None`: nothing was on); the rows need a rebuild unless only
    /// marks went.
    pub fn peel(&mut self) -> Option<Peeled> {
        if !self.query.is_empty() {
            self.query.clear();
            return Some(Peeled::Query);
        }
        if self.owner.take().is_some() {
            return Some(Peeled::Owner);
        }
        if !self.marks.is_empty() {
            // The anchor stays: V still ranges from the row last marked (only `u` forgets it).
            return Some(Peeled::Marks(std::mem::take(&mut self.marks).len()));
        }
        None
    }

    /// The ids of the rows the next draw shows in `height` rows scrolled to `offset` (the
    /// selected one first): the background verdicts compute these first.
    pub fn visible_ids(&self, items: &[ListItem], height: usize, offset: usize) -> Vec<String> {
        let h = height.max(1);
        // Where the next draw puts the viewport (it scrolls the selection into view).
        let (sel, mut start) = (self.selected, offset);
        if sel < start {
            start = sel;
        } else if sel >= start + h {
            start = sel + 1 - h;
        }
        let end = (start + h).min(self.view.len());
        let mut ids: Vec<String> = self
            .view
            .get(start.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|&i| items[i].row.submission_id.clone())
            .collect();
        if let Some(p) = self
            .selected_id
            .as_ref()
            .and_then(|s| ids.iter().position(|i| i == s))
        {
            let sel = ids.remove(p);
            ids.insert(0, sel);
        }
        ids
    }

    /// `u`: unmark everything; how many were marked.
    pub fn clear_marks(&mut self) -> usize {
        self.anchor = None;
        std::mem::take(&mut self.marks).len()
    }

    /// Marked submissions the list does not show (another filter, the `/` query, the owner).
    pub fn hidden_marks(&self, items: &[ListItem]) -> Vec<String> {
        let shown: HashSet<&str> = self
            .view
            .iter()
            .map(|&i| items[i].row.submission_id.as_str())
            .collect();
        let mut hidden: Vec<String> = self
            .marks
            .iter()
            .filter(|m| !shown.contains(m.as_str()))
            .cloned()
            .collect();
        hidden.sort();
        hidden
    }

    pub fn rebuild(&mut self, items: &[ListItem], now_ms: i64) {
        let f = self.filter;
        // Parsed once per rebuild; a query that does not parse selects nothing and says why.
        let (query, error) = match list_query::parse(&self.query) {
            Ok(q) => (Some(q), None),
            Err(e) => (None, Some(e)),
        };
        self.query_error = error;
        let mut view: Vec<usize> = (0..items.len())
            .filter(|&i| {
                f.matches(&items[i].row, now_ms)
                    && query
                        .as_ref()
                        .is_some_and(|q| q.matches(&subject(&items[i])))
                    && self
                        .owner
                        .as_ref()
                        .is_none_or(|o| items[i].row.owner_id == *o)
            })
            .collect();
        if let Some(col) = self.sort {
            view.sort_by(|&a, &b| {
                let (x, y) = (&items[a], &items[b]);
                let o = match col {
                    Column::Seq => x.row.sequence.cmp(&y.row.sequence),
                    Column::Id => x.row.submission_id.cmp(&y.row.submission_id),
                    Column::Kind => x.row.kind.cmp(&y.row.kind),
                    Column::Instance => x.instance.cmp(&y.instance),
                    Column::Status => x.row.status.as_str().cmp(y.row.status.as_str()),
                    Column::Attempts => x.row.attempt_count.cmp(&y.row.attempt_count),
                    Column::Lease => x.row.lease_expires_at.cmp(&y.row.lease_expires_at),
                    Column::Phase => x.journal.cmp(&y.journal),
                    Column::Verdict => x.verdict.cmp(&y.verdict),
                    Column::Rule => x.rule.cmp(&y.rule),
                    Column::Cost => match (x.cost, y.cost) {
                        (Some(a), Some(b)) => a.total_cmp(&b),
                        (a, b) => b.is_none().cmp(&a.is_none()),
                    },
                    Column::Error => x.row.error.cmp(&y.row.error),
                };
                o.then(x.row.sequence.cmp(&y.row.sequence))
            });
        }
        if self.desc {
            view.reverse();
        }
        self.view = view;
        let keep = self.selected_id.clone();
        self.selected = keep
            .and_then(|id| {
                self.view
                    .iter()
                    .position(|&i| items[i].row.submission_id == id)
            })
            .unwrap_or_else(|| self.selected.min(self.view.len().saturating_sub(1)));
        self.remember_selection(items);
    }

    /// `o` sorts by the next column (then back to the first), `O` reverses; what the status
    /// line says.
    pub fn on_sort(&mut self, a: Action, items: &[ListItem], now_ms: i64) -> Option<String> {
        let said = match a {
            Action::SortNext => {
                let next = match self.sort {
                    None => Column::ALL[0],
                    Some(c) => {
                        let i = Column::ALL.iter().position(|x| *x == c).unwrap_or(0);
                        Column::ALL[(i + 1) % Column::ALL.len()]
                    }
                };
                self.sort = Some(next);
                Some(format!("sorted by {}", next.title().to_lowercase()))
            }
            Action::SortReverse => {
                self.desc = !self.desc;
                None
            }
            _ => return None,
        };
        self.rebuild(items, now_ms);
        said
    }

    /// A click on row `row` of the viewport; `true` when it landed on a row.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.view.len() {
            return false;
        }
        self.selected = i;
        true
    }
}

/// What the `/` filter matches a row on.
fn subject(it: &ListItem) -> Subject<'_> {
    Subject {
        id: &it.row.submission_id,
        instance: &it.instance,
        verdict: &it.verdict,
        disposition: match it.disposition {
            ItemDisposition::Planned(k) => Some(k),
            ItemDisposition::Computing | ItemDisposition::Error => None,
        },
        rule: it.rule,
        kind: &it.row.kind,
        status: it.row.status.as_str(),
        owner: it.row.owner_id.as_deref().unwrap_or(""),
        journal: it.journal.as_ref().map_or("", |(phase, _)| phase.as_str()),
        error: it.row.error.as_deref().unwrap_or(""),
        session_key: &it.row.session_key,
        reason: &it.reason,
    }
}

/// The marked rows in list order (sequence), then those marked under another filter (only the
/// current filter's rows are loaded), by id.
pub fn marked_in_order(items: &[ListItem], marks: &HashSet<String>) -> Vec<String> {
    let mut marked: Vec<&ListItem> = items
        .iter()
        .filter(|i| marks.contains(&i.row.submission_id))
        .collect();
    marked.sort_by_key(|i| i.row.sequence);
    let mut ids: Vec<String> = marked
        .into_iter()
        .map(|i| i.row.submission_id.clone())
        .collect();
    let mut other: Vec<String> = marks.iter().filter(|m| !ids.contains(m)).cloned().collect();
    other.sort();
    ids.extend(other);
    ids
}

/// The row a banner counts its change from: the one it saw first while a banner about the same
/// row is up (`up`), else `seen`.
fn banner_base(up: Option<&BannerBase>, seen: ListItem) -> ListItem {
    match up {
        Some(BannerBase::Row(base)) if base.row.submission_id == seen.row.submission_id => {
            (**base).clone()
        }
        _ => seen,
    }
}

/// What changed in a list row between two refreshes, in the operator's words.
pub fn describe_item_change(old: &ListItem, new: &ListItem) -> Option<String> {
    let (a, b) = (&old.row, &new.row);
    let mut parts = Vec::new();
    if a.attempt_id != b.attempt_id || a.attempt_count != b.attempt_count {
        parts.push(format!("new attempt ({}/{})", b.attempt_count, b.max_retry));
    }
    if let (Some(x), Some(y)) = (old.entry_count, new.entry_count) {
        if y > x {
            parts.push(format!(
                "{} new entr{}",
                y - x,
                if y - x == 1 { "y" } else { "ies" }
            ));
        }
    }
    if a.status != b.status {
        parts.push(format!("now {} ({})", b.status, new.verdict));
    } else if old.verdict != new.verdict {
        parts.push(format!("verdict now {}", new.verdict));
    }
    (!parts.is_empty()).then(|| {
        let short = turnscope_core::journal::submission_rows::short_id(&b.submission_id);
        format!(
            "{short} changed under you: {} · esc dismisses",
            parts.join(", ")
        )
    })
}

/// Columns in the order they are kept when the terminal is narrow. The rule that fires is
/// what an operator acts on, so it outranks the lease; STATUS moves to the end when every shown
/// row has the same one (the expired view: all `running`), where it says nothing.
/// COST last but the error: at 80 columns it does not fit (the detail pane shows it).
const PRIORITY: [Column; 12] = [
    Column::Id,
    Column::Verdict,
    Column::Status,
    Column::Rule,
    Column::Lease,
    Column::Instance,
    Column::Attempts,
    Column::Seq,
    Column::Phase,
    Column::Kind,
    Column::Cost,
    Column::Error,
];

fn rule_text(it: &ListItem) -> String {
    match (it.rule, it.result) {
        (Some(r), Some(res)) => format!("{r} {res}"),
        _ => "-".into(),
    }
}

/// The text of one list cell, terminal-safe. `all_expired`: every shown row's lease has
/// expired (the expired view), so the lease cell leaves out the word the header says.
fn cell(now_ms: i64, it: &ListItem, col: Column, all_expired: bool) -> String {
    clean(&raw_cell(now_ms, it, col, all_expired))
}

/// [`cell`], with RULE marked `✓`/`✗` once the runtime acted after this session's write.
fn marked_cell(
    now_ms: i64,
    it: &ListItem,
    col: Column,
    all_expired: bool,
    data: &ListRows,
) -> String {
    let text = cell(now_ms, it, col, all_expired);
    match data.acted.get(&it.row.submission_id) {
        Some(a) if col == Column::Rule => format!("{text} {}", a.mark()),
        _ => text,
    }
}

fn raw_cell(now_ms: i64, it: &ListItem, col: Column, all_expired: bool) -> String {
    match col {
        Column::Lease if all_expired => format!(
            "{} ago",
            turnscope_core::journal::time::human_duration(now_ms - it.row.lease_expires_at)
        ),
        Column::Seq => it.row.sequence.to_string(),
        Column::Id => turnscope_core::journal::submission_rows::short_id(&it.row.submission_id),
        Column::Kind => it.row.kind.clone(),
        Column::Instance => clean(&it.instance),
        Column::Status => status_label(&it.row.status).to_string(),
        Column::Attempts => format!("{}/{}", it.row.attempt_count, it.row.max_retry),
        Column::Lease => lease_text(&it.row, now_ms),
        Column::Phase => it.journal.as_ref().map_or("-".into(), |(p, _)| clean(p)),
        Column::Verdict => {
            if it.partial.is_some() {
                format!("{} ‼", it.verdict)
            } else {
                it.verdict.clone()
            }
        }
        Column::Rule => rule_text(it),
        Column::Cost => it.cost.map_or("-".into(), cost_text::money),
        Column::Error => it.row.error.as_deref().map(clean).unwrap_or_default(),
    }
}

/// What the list draws besides its own state and the frame's context: the loaded rows (its
/// view indexes into them), which rows flash, and the total for the empty-list message.
pub struct ListRows<'a> {
    pub items: &'a [ListItem],
    pub flashes: &'a HashMap<String, Instant>,
    pub ui_now: Instant,
    /// Rows in the database of every status.
    pub total: usize,
    /// What the query searched when only a page of the filter is loaded
    /// (`App::searched_label`).
    pub searched: Option<String>,
    /// What the runtime did after this session's writes (`✓`/`✗` in RULE, a line in the preview).
    pub acted: &'a HashMap<String, crate::messages::RuntimeActed>,
}

impl ListRows<'_> {
    fn is_flashing(&self, id: &str) -> bool {
        self.flashes
            .get(id)
            .is_some_and(|&until| self.ui_now < until)
    }
}

impl ListScreen {
    /// Whether every shown row's lease has expired (the expired view): then the LEASE cells leave
    /// out the word "expired" ("2h00m ago"), 8 columns fewer, which is the INSTANCE column at 80.
    fn all_expired(&self, items: &[ListItem], now_ms: i64) -> bool {
        !self.view.is_empty()
            && self.view.iter().all(|&i| {
                let row = &items[i].row;
                row.is_running() && row.lease_expires_at != 0 && row.lease_expired(now_ms)
            })
    }

    /// Which columns fit in `w` cells, with their widths, in display order.
    fn columns(&self, cx: &DrawCtx, data: &ListRows, w: usize) -> Vec<(Column, usize)> {
        let shown: Vec<&ListItem> = self.view.iter().map(|&i| &data.items[i]).collect();
        let all_expired = self.all_expired(data.items, cx.now_ms);
        let natural = |c: Column| -> usize {
            let title = c.title();
            let content = shown
                .iter()
                .map(|it| width(&marked_cell(cx.now_ms, it, c, all_expired, data)))
                .max()
                .unwrap_or(0);
            let cap = match c {
                Column::Instance => 18,
                Column::Verdict => 30,
                Column::Error => 60,
                Column::Lease => 18,
                _ => 24,
            };
            content.max(width(title) + 1).min(cap)
        };
        let one_status = shown.windows(2).all(|p| p[0].row.status == p[1].row.status);
        // COST only when some row shown has one (pending rows never do).
        let any_cost = shown.iter().any(|it| it.cost.is_some());
        let order = PRIORITY
            .into_iter()
            .filter(|&c| c != Column::Cost || any_cost)
            .filter(|&c| !(one_status && c == Column::Status))
            .chain(one_status.then_some(Column::Status));
        let mut chosen: Vec<(Column, usize)> = Vec::new();
        let mut used = 1; // left margin
        for c in order {
            let nw = if c == Column::Error { 10 } else { natural(c) };
            if used + nw < w {
                chosen.push((c, nw));
                used += nw + 1;
            }
        }
        // The error column takes what is left.
        if let Some(e) = chosen.iter_mut().find(|(c, _)| *c == Column::Error) {
            e.1 += w.saturating_sub(used);
        }
        chosen.sort_by_key(|(c, _)| Column::ALL.iter().position(|x| x == c));
        chosen
    }

    pub fn draw(
        &self,
        f: &mut Frame,
        cx: &DrawCtx,
        data: &ListRows,
        view: &mut Layout,
        area: Rect,
    ) {
        let t = cx.theme;
        let preview_h = if area.height >= 14 { 5 } else { 0 };
        let (table, preview) = table_and_strip(area, preview_h);
        // The marker column exists only in write mode (marks do too).
        let marker = cx.write_mode;
        let w = table.width as usize - usize::from(marker);
        let cols = self.columns(cx, data, w);
        let all_expired = self.all_expired(data.items, cx.now_ms);
        let bold = t.dim().add_modifier(Modifier::BOLD);
        // In write mode the marker column sits right after the cursor, in the first column's cell.
        let lead = usize::from(marker);
        let widths: Vec<Constraint> = cols
            .iter()
            .enumerate()
            .map(|(i, (_, cw))| Constraint::Length((cw + if i == 0 { lead } else { 0 }) as u16))
            .collect();
        let header = Row::new(cols.iter().enumerate().map(|(i, (c, cw))| {
            let mut title = c.title().to_string();
            let sorted = self.sort == Some(*c) || (self.sort.is_none() && *c == Column::Seq);
            if sorted {
                title.push(if self.desc { '▼' } else { '▲' });
            }
            let lead = if i == 0 {
                " ".repeat(lead)
            } else {
                String::new()
            };
            Cell::from(Line::from(vec![
                Span::raw(lead),
                Span::styled(pad(&title, *cw), bold),
            ]))
        }));
        let rows_area = Rect {
            y: table.y + 1,
            height: table.height.saturating_sub(1),
            ..table
        };
        view.list = Some(Hit {
            area: table,
            rows: rows_area,
        });
        let h = rows_area.height as usize;
        scroll_into_view(&mut view.list_offset, self.selected, h);
        let focused = cx.focus == Pane::List;
        let rows = self.view.iter().enumerate().map(|(r, &idx)| {
            let it = &data.items[idx];
            let selected = r == self.selected;
            // The row's style wins over a cell's (a flashing or selected row reads as one).
            let row_style = if selected {
                if focused {
                    t.selected()
                } else {
                    t.selected_unfocused()
                }
            } else if data.is_flashing(&it.row.submission_id) {
                t.flash()
            } else {
                Style::new()
            };
            let cells = cols.iter().enumerate().map(|(i, (c, cw))| {
                let text = pad(&marked_cell(cx.now_ms, it, *c, all_expired, data), *cw);
                let style = match c {
                    Column::Status => t.status(&it.row.status),
                    Column::Verdict if it.partial.is_some() => t.partial(),
                    Column::Verdict => t.item(it.disposition),
                    Column::Lease if it.row.lease_expired(cx.now_ms) => t.warn(),
                    Column::Error => t.error().remove_modifier(Modifier::BOLD),
                    Column::Seq | Column::Kind | Column::Attempts | Column::Phase => t.dim(),
                    _ => Style::new(),
                };
                let mut spans = Vec::new();
                if i == 0 && marker {
                    spans.push(if self.marks.contains(&it.row.submission_id) {
                        Span::styled("●", row_style.patch(t.marked()))
                    } else {
                        Span::styled(" ", row_style)
                    });
                }
                spans.push(Span::styled(text, style.patch(row_style)));
                Cell::from(Line::from(spans))
            });
            Row::new(cells).style(row_style)
        });
        let rows_widget = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .highlight_symbol("›")
            .highlight_spacing(HighlightSpacing::Always);
        let mut state = TableState::new()
            .with_offset(view.list_offset)
            .with_selected((!self.view.is_empty()).then_some(self.selected));
        f.render_stateful_widget(rows_widget, table, &mut state);
        if self.view.is_empty() {
            let msg = if !cx.loaded {
                "reading the database…".to_string()
            } else if data.total == 0 {
                "the database has no submissions".to_string()
            } else if let Some(e) = &self.query_error {
                format!("/{}: {} (esc clears)", clean(&self.query), clean(e))
            } else if !self.query.is_empty() {
                match &data.searched {
                    // Never a bare "no match" when only a page was searched: say what was.
                    Some(s) => format!(
                        "no submission matches /{} · {s} (esc clears)",
                        clean(&self.query)
                    ),
                    None => format!("no submission matches /{} (esc clears)", clean(&self.query)),
                }
            } else if self.owner.is_some() {
                format!(
                    "no {} submission of this worker now (esc shows them all)",
                    self.filter.label()
                )
            } else {
                match self.filter {
                    RowFilter::Expired => {
                        "no expired lease: nothing for the reconciler to pick up · 2 shows all"
                            .to_string()
                    }
                    fl => format!("no {} submission · 2 shows all", fl.label()),
                }
            };
            f.render_widget(
                Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
                Rect {
                    height: 1,
                    ..rows_area
                },
            );
        }
        if preview_h > 0 {
            self.draw_preview(f, cx, data, preview);
        }
    }

    fn draw_preview(&self, f: &mut Frame, cx: &DrawCtx, data: &ListRows, area: Rect) {
        let t = cx.theme;
        let Some(it) = self.view.get(self.selected).map(|&i| &data.items[i]) else {
            let block = Block::new()
                .borders(Borders::TOP)
                .border_style(t.border(false));
            f.render_widget(block, area);
            return;
        };
        let short = turnscope_core::journal::submission_rows::short_id(&it.row.submission_id);
        let title = Line::from(vec![
            Span::styled(format!(" {short} "), t.title()),
            Span::styled(format!("{} ", it.verdict), t.item(it.disposition)),
            Span::styled(
                crate::tooltip::tooltip(&it.verdict)
                    .map(|m| {
                        let used = short.chars().count() + width(&it.verdict) + 5;
                        fit(
                            &format!("─ {m} "),
                            (area.width as usize).saturating_sub(used),
                        )
                    })
                    .unwrap_or_default(),
                t.dim(),
            ),
        ]);
        let block = Block::new()
            .borders(Borders::TOP)
            .border_style(t.border(false))
            .title(title);
        let inner = block.inner(area);
        f.render_widget(block, area);
        let w = inner.width as usize;
        let label = |s: &'static str| Span::styled(format!(" {s:<7}"), t.dim());
        let mut lines: Vec<Line> = Vec::new();
        if let Some(ex) = &it.explanation {
            lines.push(Line::from(vec![
                label("why"),
                Span::raw(fit(&clean(ex), w.saturating_sub(8))),
            ]));
        }
        let plan = match (it.rule, it.result) {
            (Some(r), Some(res)) => format!("rule {r} → {res}: {}", it.reason),
            _ => format!("{}: {}", it.disposition, it.reason),
        };
        lines.push(Line::from(vec![
            label("plan"),
            Span::raw(fit(&clean(&plan), w.saturating_sub(8))),
        ]));
        if let Some((missing, total)) = it.partial {
            lines.push(Line::from(vec![
                label("batch"),
                Span::styled(
                    fit(
                        &format!("‼ partial batch: {missing} of {total} tool calls have no result"),
                        w.saturating_sub(8),
                    ),
                    t.partial(),
                ),
            ]));
        } else if let Some(first) = it.writes.first() {
            let more = if it.writes.len() > 1 {
                format!(" (+{} more)", it.writes.len() - 1)
            } else {
                String::new()
            };
            lines.push(Line::from(vec![
                label("writes"),
                Span::raw(fit(
                    &format!("1. {}{more}", clean(first)),
                    w.saturating_sub(8),
                )),
            ]));
        }
        if let Some(a) = data.acted.get(&it.row.submission_id) {
            lines.push(Line::from(vec![
                label("runtime"),
                Span::raw(fit(&clean(&a.line()), w.saturating_sub(8))),
            ]));
        }
        lines.push(Line::from(vec![
            Span::styled(" ⏎", t.key()),
            Span::styled(" history tree, verdict and plan", t.dim()),
        ]));
        f.render_widget(Paragraph::new(lines), inner);
    }
}
