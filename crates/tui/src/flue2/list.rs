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

/// One submission as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
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

    /// Replace the rows, keeping the selection on the same submission where it is still shown.
    pub fn set_rows(&mut self, rows: Vec<ListRow>, now_ms: i64) {
        let keep = self.selected_id(now_ms);
        self.rows = rows;
        self.select_id(keep.as_deref(), now_ms);
    }

    /// The marked submissions in list order (the journal's), those outside the view too.
    pub fn marked_in_order(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| self.marks.contains(&r.id))
            .map(|r| r.id.clone())
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
        let titles: Vec<(&str, usize)> = COLUMNS.iter().copied().zip(widths).collect();
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
