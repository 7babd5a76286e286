//! The 2.x submissions list: the rows of the engine's `list --json` document
//! (`turnscope.flue2.list/1`, every row), a view (expired leases by default, as beta.7's list and
//! `turnscope list`), a `/` query over the cells, the selection and the table. The VERDICT and
//! NEXT cells are the document's `verdict.label` and `plan.column`: what `turnscope list` prints.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Row, Table};
use ratatui::Frame;
use serde_json::Value;
use std::collections::HashSet;

use crate::text::{clean, fit};
use crate::theme::Theme;
use crate::widgets::{render_selectable, scroll_into_view, table_header};

use super::list_sort::{compare, SortColumn, SortKey as Key, CYCLE};

/// `rows` sorted by `column` as `list --sort` orders them, equal values in sequence order (the
/// rows may come sorted by another column: one pass, ties broken by the sequence).
fn sort_by_column(rows: &mut [ListRow], column: SortColumn, descending: bool) {
    rows.sort_by(|a, b| {
        compare(&a.sort_key(column), &b.sort_key(column), descending)
            .then(a.sequence.cmp(&b.sequence))
    });
}

/// One submission as the list shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListRow {
    pub id: String,
    pub kind: String,
    /// `agent/instance`, `?` where the session key is not one the runtime writes.
    pub instance: String,
    pub status: String,
    pub attempts: String,
    pub lease_expires_at: i64,
    /// The document's `leaseExpired` (the runtime's test at the document's clock).
    pub lease_expired: bool,
    /// `verdict.label`: the classification (`kind` or `resume/<mode>`), or `error`.
    pub verdict: String,
    /// `plan.column`: the reconciler's next step.
    pub next: String,
    /// The classification names a trailing partial tool batch.
    pub partial: bool,
    /// The COST cell: cost since the input.
    pub cost: String,
    /// What the sort keys a row by, as `list --sort` does (`list_sort.rs`): the journal's
    /// sequence, the attempts the row counts, the instance id, the cost since the input, the
    /// reconciler step that fires next.
    pub sequence: i64,
    pub attempt_count: i64,
    pub instance_id: Option<String>,
    pub cost_total: Option<f64>,
    pub next_step: Option<i64>,
}

impl ListRow {
    /// The row of a `list --json` item.
    pub fn from_doc(r: &Value) -> ListRow {
        let text = |v: &Value| v.as_str().map_or_else(String::new, clean);
        let instance = match (&r["instance"]["agent"], &r["instance"]["instanceId"]) {
            (Value::String(a), Value::String(i)) => format!("{}/{}", clean(a), clean(i)),
            _ => "?".into(),
        };
        ListRow {
            id: text(&r["id"]),
            kind: text(&r["kind"]),
            instance,
            status: text(&r["status"]),
            attempts: format!("{}/{}", r["attempts"], r["maxAttempts"]),
            lease_expires_at: r["leaseExpiresAt"].as_i64().unwrap_or(0),
            lease_expired: r["leaseExpired"] == true,
            verdict: text(&r["verdict"]["label"]),
            next: text(&r["plan"]["column"]),
            partial: !r["verdict"]["trailingPartialToolBatch"].is_null(),
            cost: super::cost::cost_cell(&r["cost"]),
            sequence: r["sequence"].as_i64().unwrap_or(0),
            attempt_count: r["attempts"].as_i64().unwrap_or(0),
            instance_id: r["instance"]["instanceId"].as_str().map(clean),
            cost_total: r["cost"]["total"]["cost"].as_f64(),
            next_step: r["plan"]["step"].as_i64(),
        }
    }

    /// Its verdict, next step and cost shown as being read (`…`): a row of the view before its
    /// stream is folded ([`ListState::mark_unclassified`]).
    fn not_classified_yet(&mut self) {
        for cell in [&mut self.verdict, &mut self.next, &mut self.cost] {
            *cell = "…".into();
        }
    }

    /// The row's value in `column`, as `list --sort` keys it (the instance by its id alone).
    fn sort_key(&self, column: SortColumn) -> Key<'_> {
        match column {
            SortColumn::Seq => Key::Int(self.sequence),
            SortColumn::Id => Key::Text(self.id.as_str().into()),
            SortColumn::Kind => Key::Text(self.kind.as_str().into()),
            SortColumn::Instance => self
                .instance_id
                .as_deref()
                .map_or(Key::Missing, |s| Key::Text(s.into())),
            SortColumn::Status => Key::Text(self.status.as_str().into()),
            SortColumn::Att => Key::Int(self.attempt_count),
            SortColumn::Lease if self.lease_expires_at <= 0 => Key::Missing,
            SortColumn::Lease => Key::Int(self.lease_expires_at),
            SortColumn::Cost => self.cost_total.map_or(Key::Missing, Key::Float),
            SortColumn::Verdict => Key::Text(self.verdict.as_str().into()),
            SortColumn::Next => self.next_step.map_or(Key::Missing, Key::Int),
            // Not columns of the list: `o` never picks them.
            SortColumn::Owner | SortColumn::Error => Key::Missing,
        }
    }

    /// The cells, in the column order of [`COLUMNS`].
    fn cells(&self, now_ms: i64) -> [String; 8] {
        [
            self.id.clone(),
            self.kind.clone(),
            self.instance.clone(),
            self.status.clone(),
            self.attempts.clone(),
            lease_text(self.lease_expires_at, self.lease_expired, now_ms),
            self.cost.clone(),
            self.verdict.clone(),
        ]
    }
}

/// Every row of a `list --json` document, in its (sequence) order.
pub fn rows_of(doc: &Value) -> Vec<ListRow> {
    doc["submissions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(ListRow::from_doc)
        .collect()
}

/// A duration as `1h2m`, `3m4s` or `5s` (as `turnscope list`).
fn span(ms: i64) -> String {
    let s = ms.unsigned_abs() / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        _ => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// The lease cell as `turnscope list` writes it: expired (running, past), held, or none.
pub fn lease_text(expires_at: i64, expired: bool, now_ms: i64) -> String {
    if expires_at <= 0 {
        return "-".into();
    }
    let d = expires_at - now_ms;
    if expired {
        format!("expired {} ago", span(d))
    } else if d >= 0 {
        format!("{} left", span(d))
    } else {
        format!("ended {} ago", span(d))
    }
}

/// Which rows the list shows: `turnscope list --status VIEW` on a 2.x journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// `running` with `0 < lease_expires_at < now`: what the reconciler picks up.
    #[default]
    Expired,
    All,
    /// One status of the 2.x row.
    Status(&'static str),
}

impl View {
    pub fn name(self) -> &'static str {
        match self {
            View::Expired => "expired",
            View::All => "all",
            View::Status(s) => s,
        }
    }

    /// Whether the row as stored is in this view at `now_ms` (the worker's test, before the
    /// row is a [`ListRow`]).
    pub fn keeps_row(self, r: &turnscope_core::flue2::Flue2SubmissionRow, now_ms: i64) -> bool {
        match self {
            View::Expired => r.lease_expired(now_ms),
            View::All => true,
            View::Status(s) => r.status == s,
        }
    }

    fn keeps(self, r: &ListRow) -> bool {
        match self {
            View::Expired => r.lease_expired,
            View::All => true,
            View::Status(s) => r.status == s,
        }
    }
}

const COLUMNS: [&str; 9] = [
    "ID", "KIND", "INSTANCE", "STATUS", "ATTEMPTS", "LEASE", "COST", "VERDICT", "NEXT",
];

/// The list narrowed to some submissions: an instance's (the sessions screen's ⏎) or a
/// worker's stuck ones (the incidents screen's ⏎); esc widens it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrow {
    /// `instance agents/worker/s1`, `worker 9f2c1a0b`.
    pub label: String,
    pub ids: Vec<String>,
}

#[derive(Debug, Default)]
pub struct ListState {
    pub narrow: Option<Narrow>,
    pub rows: Vec<ListRow>,
    pub view: View,
    /// The `/` query: rows whose cells contain it (case-insensitive).
    pub query: String,
    /// The selected row's index among the shown rows.
    pub selected: usize,
    pub offset: usize,
    /// Rows the last draw fitted (for paging).
    pub page: usize,
    /// Submissions marked for a bulk write (write mode: space, the incidents screen's space);
    /// kept across refreshes and views while their rows exist.
    pub marks: HashSet<String>,
    /// Draw the mark column (write mode).
    pub marking: bool,
    /// The row `space` marked last: `V` marks from it to the cursor.
    pub anchor: Option<String>,
    /// `o`/`O`: the column the rows are kept sorted by (none: the journal's sequence order),
    /// and whether descending.
    pub sort: Option<SortColumn>,
    pub descending: bool,
}

impl ListState {
    /// The rows the view and the query show.
    pub fn shown(&self, now_ms: i64) -> Vec<&ListRow> {
        let q = self.query.to_lowercase();
        self.rows
            .iter()
            .filter(|r| self.view.keeps(r))
            .filter(|r| self.narrow.as_ref().is_none_or(|n| n.ids.contains(&r.id)))
            .filter(|r| {
                q.is_empty()
                    || r.cells(now_ms)
                        .iter()
                        .chain(std::iter::once(&r.next))
                        .any(|c| c.to_lowercase().contains(&q))
            })
            .collect()
    }

    pub fn selected_id(&self, now_ms: i64) -> Option<String> {
        self.shown(now_ms).get(self.selected).map(|r| r.id.clone())
    }

    /// The rows of the view not classified yet (the first rows read, or a view just chosen, its
    /// rows outside the last one) marked as being read until the view's list is in; how many.
    pub fn mark_unclassified(&mut self) -> usize {
        let view = self.view;
        let mut n = 0;
        for r in self.rows.iter_mut() {
            if view.keeps(r) && r.verdict.is_empty() {
                r.not_classified_yet();
                n += 1;
            }
        }
        n
    }

    /// Replace the rows (in sequence order), keeping them sorted and the selection on the same
    /// submission where it is still shown.
    pub fn set_rows(&mut self, rows: Vec<ListRow>, now_ms: i64) {
        let keep = self.selected_id(now_ms);
        self.rows = rows;
        if let Some(c) = self.sort {
            sort_by_column(&mut self.rows, c, self.descending);
        }
        self.select_id(keep.as_deref(), now_ms);
    }

    /// `o` (the next column, from the first) or `O` (the other direction); what the status
    /// line says. The selection stays on its submission.
    pub fn sort_by(&mut self, next_column: bool, now_ms: i64) -> String {
        let keep = self.selected_id(now_ms);
        if next_column {
            self.sort = Some(self.sort.map_or(CYCLE[0], super::list_sort::next));
        } else {
            self.descending = !self.descending;
        }
        let column = self.sort.unwrap_or(SortColumn::Seq);
        sort_by_column(&mut self.rows, column, self.descending);
        self.select_id(keep.as_deref(), now_ms);
        format!(
            "sorted by {}{} · o next column · O {}",
            column.name(),
            if self.descending { ", descending" } else { "" },
            if self.descending {
                "ascending"
            } else {
                "descending"
            }
        )
    }

    /// The marked submissions in list order (as sorted), those outside the view too.
    pub fn marked_in_order(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| self.marks.contains(&r.id))
            .map(|r| r.id.clone())
            .collect()
    }

    /// `*`: mark every row shown (the view, the narrowing and the `/` query); how many were not
    /// marked yet.
    pub fn mark_all(&mut self, now_ms: i64) -> usize {
        let before = self.marks.len();
        let shown: Vec<String> = self.shown(now_ms).iter().map(|r| r.id.clone()).collect();
        self.marks.extend(shown);
        self.marks.len() - before
    }

    /// `V`: mark the rows shown from the anchor (the row `space` marked last) to the cursor,
    /// both included; how many were not marked yet. `Err` when the anchor is not shown.
    pub fn mark_range(&mut self, now_ms: i64) -> Result<usize, &'static str> {
        let shown: Vec<String> = self.shown(now_ms).iter().map(|r| r.id.clone()).collect();
        let Some(from) = self
            .anchor
            .as_ref()
            .and_then(|a| shown.iter().position(|id| id == a))
        else {
            return Err("mark a row with space first: V marks from it to the cursor");
        };
        let to = self.selected.min(shown.len().saturating_sub(1));
        let (lo, hi) = (from.min(to), from.max(to));
        let before = self.marks.len();
        self.marks.extend(shown[lo..=hi].iter().cloned());
        self.anchor = shown.get(to).cloned();
        Ok(self.marks.len() - before)
    }

    /// The marked rows' costs since their inputs (their COST cells' figures), in list order.
    pub fn marked_costs(&self) -> Vec<Option<f64>> {
        self.rows
            .iter()
            .filter(|r| self.marks.contains(&r.id))
            .map(|r| r.cost_total)
            .collect()
    }

    /// Marks on rows the view does not show (the status line says how many).
    pub fn marks_outside_view(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| self.marks.contains(&r.id) && !self.view.keeps(r))
            .count()
    }

    /// Forget the marks whose rows are gone from the journal; the ids dropped.
    pub fn drop_gone_marks(&mut self) -> Vec<String> {
        let rows = &self.rows;
        let mut gone: Vec<String> = self
            .marks
            .iter()
            .filter(|id| !rows.iter().any(|r| &r.id == *id))
            .cloned()
            .collect();
        gone.sort();
        for id in &gone {
            self.marks.remove(id);
        }
        gone
    }

    pub fn select_id(&mut self, id: Option<&str>, now_ms: i64) {
        let shown = self.shown(now_ms);
        self.selected = id
            .and_then(|id| shown.iter().position(|r| r.id == id))
            .unwrap_or(0)
            .min(shown.len().saturating_sub(1));
    }

    pub fn move_by(&mut self, delta: isize, now_ms: i64) {
        let n = self.shown(now_ms).len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        self.selected = (self.selected as isize + delta).clamp(0, n as isize - 1) as usize;
    }

    pub fn draw(&mut self, f: &mut Frame, t: &Theme, now_ms: i64, area: Rect) {
        let shown: Vec<ListRow> = self.shown(now_ms).into_iter().cloned().collect();
        // In write mode the id cell starts with the mark column: `●` marked, a space not.
        let mark = |r: &ListRow| match (self.marking, self.marks.contains(&r.id)) {
            (false, _) => "",
            (true, true) => "●",
            (true, false) => " ",
        };
        let cells: Vec<[String; 9]> = shown
            .iter()
            .map(|r| {
                let [a, b, c, d, e, g, k, h] = r.cells(now_ms);
                [
                    format!("{}{a}", mark(r)),
                    b,
                    c,
                    d,
                    e,
                    g,
                    k,
                    h,
                    r.next.clone(),
                ]
            })
            .collect();
        // Each column as wide as its widest cell; ids and instances give way on a narrow screen.
        let mut widths = COLUMNS.map(|h| h.chars().count());
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let room = area.width.saturating_sub(2 + 7) as usize;
        let total: usize = widths.iter().sum();
        if total > room {
            let mut over = total - room;
            // Instance, id, kind, lease give way (to a floor each); status, verdict and NEXT
            // never.
            for (col, floor) in [(2usize, 8usize), (0, 10), (1, 4), (5, 8)] {
                let give = over.min(widths[col].saturating_sub(floor));
                widths[col] -= give;
                over -= give;
            }
        }
        // The sorted column's header carries its direction (the sequence has no column).
        let sorted = self.sort.and_then(|c| {
            COLUMNS.iter().position(|h| {
                h.eq_ignore_ascii_case(c.name()) || (c == SortColumn::Att && *h == "ATTEMPTS")
            })
        });
        let arrow = if self.descending { "↓" } else { "↑" };
        let headers: Vec<String> = COLUMNS
            .iter()
            .enumerate()
            .map(|(i, h)| {
                if Some(i) == sorted {
                    format!("{h}{arrow}")
                } else {
                    (*h).to_string()
                }
            })
            .collect();
        if let Some(i) = sorted {
            widths[i] = widths[i].max(headers[i].chars().count());
        }
        let titles: Vec<(&str, usize)> = headers.iter().map(String::as_str).zip(widths).collect();
        let (header, constraints, rows_area) = table_header(&titles, area, t);
        let body: Vec<Row> =
            shown
                .iter()
                .zip(&cells)
                .map(|(r, c)| {
                    let style_of = |col: usize| -> Style {
                        match col {
                            0 if self.marks.contains(&r.id) => t.marked(),
                            3 if r.status == "running" => t.warn(),
                            5 if r.lease_expired => t.error(),
                            7 if r.partial => t.partial(),
                            7 if r.verdict == "error" => t.error(),
                            8 if r.next != "-" => t.key(),
                            _ => Style::new(),
                        }
                    };
                    Row::new(c.iter().enumerate().map(|(i, text)| {
                        Cell::from(Span::styled(fit(text, widths[i]), style_of(i)))
                    }))
                })
                .collect();
        self.page = rows_area.height as usize;
        scroll_into_view(&mut self.offset, self.selected, self.page);
        let table = Table::new(body, constraints).header(header);
        render_selectable(
            f,
            area,
            table,
            t,
            true,
            self.offset,
            (!shown.is_empty()).then_some(self.selected),
        );
    }
}
