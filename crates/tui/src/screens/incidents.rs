//! The incidents screen (`I`): the stuck submissions (expired leases) grouped by the worker that
//! held their lease (`core::incidents`), most recent first, with the selected group in full below.
//! It reads the list's expired rows (opening it shows the expired filter), so the plans fill in as
//! the background verdicts arrive. ⏎ opens the list narrowed to the worker; in `--write` mode
//! space marks every submission of the worker and the write keys act on the marks (or, with none,
//! on the selected worker's submissions) through the list's confirm popup.

use std::collections::HashSet;

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::list::{marked_in_order, ListScreen};
use super::{nav_delta, say, step, Ask};
use crate::keymap::Action;
use crate::messages::{ItemDisposition, ListItem};
use crate::text::{clean, fit, pad};
use crate::view_state::{DrawCtx, Hit, Layout, Pane};
use crate::widgets::{render_selectable, scroll_into_view, table_and_strip, table_header};
use turnscope_core::journal::time::human_duration;
use turnscope_core::recovery::incidents::{clock, group, IncidentGroup, PlanKey, StuckRow};

/// The incidents screen's state: the groups as last built from the expired rows, and the cursor.
#[derive(Debug, Clone, Default)]
pub struct IncidentScreen {
    pub groups: Vec<IncidentGroup>,
    pub selected: usize,
    /// The selected group's owner, kept across rebuilds.
    selected_owner: Option<Option<String>>,
    /// Stuck submissions whose plan is still being computed.
    pub computing: usize,
    /// Per owner, the earliest and latest lease expiry seen among its stuck rows since the
    /// screen began: acting on some rows takes them out of the group, not out of the evidence of
    /// when the worker stopped, so its time does not move.
    expiries: std::collections::HashMap<Option<String>, (i64, i64)>,
    /// The stuck rows' cost since the input on the active path (`list`'s COST), by id.
    costs: std::collections::HashMap<String, Option<f64>>,
}

/// The key a list row is grouped under: its plan, or that it is still being computed.
fn plan_key(it: &ListItem) -> PlanKey {
    match it.disposition {
        _ if it.pending => PlanKey::Computing,
        ItemDisposition::Computing => PlanKey::Computing,
        ItemDisposition::Error => PlanKey::Disposition {
            label: "unreadable".to_string(),
        },
        ItemDisposition::Planned(k) => match (it.rule, it.result) {
            (Some(rule), Some(result)) => PlanKey::Rule { rule, result },
            _ => PlanKey::Disposition {
                label: k.label().to_string(),
            },
        },
    }
}

impl IncidentScreen {
    /// Group the expired rows among `items` (the list's loaded rows) at `now_ms`.
    pub fn rebuild(&mut self, items: &[ListItem], now_ms: i64) {
        let rows: Vec<StuckRow> = items
            .iter()
            .filter(|it| it.row.lease_expired(now_ms))
            .map(|it| StuckRow {
                submission_id: &it.row.submission_id,
                owner_id: it.row.owner_id.as_deref(),
                lease_expires_at: it.row.lease_expires_at,
                plan: plan_key(it),
            })
            .collect();
        self.computing = rows.iter().filter(|r| r.plan == PlanKey::Computing).count();
        self.costs = items
            .iter()
            .filter(|it| it.row.lease_expired(now_ms))
            .map(|it| (it.row.submission_id.clone(), it.cost))
            .collect();
        self.groups = group(&rows);
        for g in &mut self.groups {
            let seen = self
                .expiries
                .entry(g.owner_id.clone())
                .or_insert((g.first_expiry, g.last_expiry));
            // A lease that expired later than any seen means the worker renewed it later: it
            // was alive then, and what was seen before is superseded.
            if g.last_expiry > seen.1 + turnscope_core::recovery::incidents::LEASE_MS {
                *seen = (g.first_expiry, g.last_expiry);
            }
            seen.0 = seen.0.min(g.first_expiry);
            seen.1 = seen.1.max(g.last_expiry);
            g.first_expiry = seen.0;
            g.last_expiry = seen.1;
        }
        if let Some(owner) = &self.selected_owner {
            if let Some(i) = self.groups.iter().position(|g| &g.owner_id == owner) {
                self.selected = i;
            }
        }
        self.selected = self.selected.min(self.groups.len().saturating_sub(1));
        self.selected_owner = self.selected_group().map(|g| g.owner_id.clone());
    }

    pub fn selected_group(&self) -> Option<&IncidentGroup> {
        self.groups.get(self.selected)
    }

    pub fn move_cursor(&mut self, delta: isize) {
        self.selected = step(self.selected, self.groups.len(), delta);
        self.selected_owner = self.selected_group().map(|g| g.owner_id.clone());
    }

    /// The incidents screen's own actions: the cursor; ⏎ narrows the list to the selected
    /// worker's stuck submissions; space marks the worker's submissions in the list's `marks`;
    /// esc leaves.
    pub fn handle(
        &mut self,
        a: Action,
        page: usize,
        list: &mut ListScreen,
        write_mode: bool,
    ) -> Vec<Ask> {
        if let Some(delta) = nav_delta(a, page) {
            self.move_cursor(delta);
            return Vec::new();
        }
        match a {
            Action::Enter => {
                let Some(g) = self.selected_group() else {
                    return vec![Ask::Info("no worker left anything stuck".into())];
                };
                list.narrow_to(g.owner_id.clone());
                vec![
                    Ask::ShowList,
                    Ask::Info(format!(
                        "the stuck submissions of {} · esc shows every row of the filter again",
                        clean(&g.who())
                    )),
                ]
            }
            Action::ToggleMark if write_mode => say(self.toggle_group_marks(&mut list.marks)),
            Action::Back => vec![Ask::Leave],
            _ => Vec::new(),
        }
    }

    /// A click on row `row` of the viewport; `true` when it landed on a group.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.groups.len() {
            return false;
        }
        self.selected = i;
        self.selected_owner = self.selected_group().map(|g| g.owner_id.clone());
        true
    }

    /// Stuck submissions over all groups.
    /// Space on a worker: mark every submission of it in `marks` (the list's), or unmark them
    /// when all are marked, and step to the next worker; what the status line says. `None`
    /// without a group.
    pub fn toggle_group_marks(&mut self, marks: &mut HashSet<String>) -> Option<String> {
        let g = self.selected_group()?;
        let all = g.submissions.iter().all(|s| marks.contains(s));
        for id in &g.submissions {
            if all {
                marks.remove(id);
            } else {
                marks.insert(id.clone());
            }
        }
        let who = clean(&g.who());
        self.move_cursor(1);
        let n = marks.len();
        Some(format!(
            "{} {who} · {n} marked · C/R/Q/F/S/E act on every marked row · u unmarks all",
            if all {
                "unmarked"
            } else {
                "marked every submission of"
            },
        ))
    }

    /// The write keys' targets here: the marks (in the list's order), else every submission of
    /// the selected worker.
    pub fn write_targets(
        &self,
        items: &[ListItem],
        marks: &HashSet<String>,
    ) -> Result<Vec<String>, &'static str> {
        if !marks.is_empty() {
            return Ok(marked_in_order(items, marks));
        }
        match self.selected_group() {
            Some(g) => Ok(g.submissions.clone()),
            None => Err("no worker left anything stuck"),
        }
    }

    pub fn stuck(&self) -> usize {
        self.groups.iter().map(IncidentGroup::count).sum()
    }
}

/// What the screen draws besides its own state: the list's marks, and whether the rows it
/// groups are the expired filter's (they are being read otherwise).
pub struct IncidentRows<'a> {
    pub marks: &'a HashSet<String>,
    pub ready: bool,
}

/// The WHEN cell (the column title says UTC): `stopped renewing 09:15:30, 4m30s ago` (`stopped`
/// where narrow) or `expired 09:18:42 … 09:19:30`.
fn when(g: &IncidentGroup, now_ms: i64, wide: bool) -> String {
    let at = |ms: i64| clock(ms, now_ms).trim_end_matches(" UTC").to_string();
    if g.stopped_at_once() {
        let stop = g.last_renewal();
        format!(
            "{} {}, {} ago",
            if wide { "stopped renewing" } else { "stopped" },
            at(stop),
            human_duration(now_ms - stop)
        )
    } else {
        format!("expired {} … {}", at(g.first_expiry), at(g.last_expiry))
    }
}

/// `●` every submission of the group marked, `◐` some, ` ` none.
fn mark_of(g: &IncidentGroup, marks: &HashSet<String>) -> (&'static str, usize) {
    let n = g.submissions.iter().filter(|s| marks.contains(*s)).count();
    let symbol = match n {
        0 => " ",
        n if n == g.count() => "●",
        _ => "◐",
    };
    (symbol, n)
}

impl IncidentScreen {
    pub fn draw(
        &self,
        f: &mut Frame,
        cx: &DrawCtx,
        data: &IncidentRows,
        view: &mut Layout,
        area: Rect,
    ) {
        let t = cx.theme;
        // The strip's top border and its lines: worker, when, plans (often two lines), cost,
        // keys, and marked in write mode.
        let detail_h = if area.height >= 14 {
            7 + u16::from(cx.write_mode)
        } else {
            0
        };
        let (table, d) = table_and_strip(area, detail_h);
        let w = table.width as usize;
        let marker = usize::from(cx.write_mode);
        // The full owner id when there is room for it: it is what `--owner` takes.
        let owner_w = if w >= 140 { 36 } else { 10 };
        let wide = w >= 120;
        let when_w = if wide { 42 } else { 28 };
        let fixed = 1 + marker + owner_w + 1 + 5 + 1 + when_w + 1;
        let plans_w = w.saturating_sub(fixed);
        let titles = [
            (
                if marker == 1 { " WORKER" } else { "WORKER" },
                owner_w + marker,
            ),
            ("STUCK", 5),
            ("WHEN (UTC)", when_w),
            ("WHAT THE RUNTIME'S PLAN DOES", plans_w),
        ];
        let (header, widths, rows_area) = table_header(&titles, table, &t);
        view.incidents = Some(Hit {
            area: table,
            rows: rows_area,
        });
        scroll_into_view(
            &mut view.incidents_offset,
            self.selected,
            rows_area.height as usize,
        );
        let groups: &[IncidentGroup] = if data.ready { &self.groups } else { &[] };
        let rows = groups.iter().map(|g| {
            let owner = match &g.owner_id {
                Some(o) if owner_w >= 36 => clean(o),
                Some(o) => clean(&turnscope_core::journal::submission_rows::short_id(o)),
                None => "(no owner)".to_string(),
            };
            let mut first = Vec::new();
            if marker == 1 {
                first.push(Span::styled(mark_of(g, data.marks).0, t.marked()));
            }
            first.push(Span::raw(pad(&owner, owner_w)));
            let plans = g
                .plans
                .iter()
                .map(|p| format!("{} {}", p.count, p.plan.label()))
                .collect::<Vec<_>>()
                .join(" · ");
            Row::new(vec![
                Cell::from(Line::from(first)),
                Cell::from(Span::styled(
                    format!("{:>5}", g.count()),
                    t.warn().remove_modifier(Modifier::BOLD),
                )),
                Cell::from(Span::styled(
                    pad(&fit(&when(g, cx.now_ms, wide), when_w), when_w),
                    t.dim(),
                )),
                Cell::from(Span::raw(pad(&fit(&plans, plans_w), plans_w))),
            ])
        });
        render_selectable(
            f,
            table,
            Table::new(rows, widths).header(header),
            &t,
            cx.focus == Pane::Incidents,
            view.incidents_offset,
            (!groups.is_empty()).then_some(self.selected),
        );
        if groups.is_empty() {
            let msg = if !data.ready || !cx.loaded {
                "reading the expired leases…"
            } else {
                "no expired lease: no worker left anything stuck"
            };
            f.render_widget(
                Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
                Rect {
                    height: 1,
                    ..rows_area
                },
            );
        }
        if detail_h > 0 {
            self.draw_detail(f, cx, data, groups, d);
        }
    }

    /// What the group's submissions cost since their inputs: `list`'s COST summed (active paths),
    /// and how many have no figure (no input on the path, or the verdict still computing).
    pub fn cost_text(&self, g: &IncidentGroup) -> String {
        turnscope_engine::report::cost_text::costs_sum_text(
            g.submissions
                .iter()
                .map(|id| self.costs.get(id).copied().flatten()),
        )
    }

    fn draw_detail(
        &self,
        f: &mut Frame,
        cx: &DrawCtx,
        data: &IncidentRows,
        groups: &[IncidentGroup],
        area: Rect,
    ) {
        let t = cx.theme;
        let block = Block::new()
            .borders(Borders::TOP)
            .border_style(t.border(false));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let Some(g) = groups.get(self.selected) else {
            return;
        };
        let label = |s: &'static str| Span::styled(format!(" {s:<8}"), t.dim());
        let (_, marked) = mark_of(g, data.marks);
        let mut lines = vec![
            Line::from(vec![
                label("worker"),
                Span::styled(
                    clean(g.owner_id.as_deref().unwrap_or("none recorded")),
                    Style::new(),
                ),
            ]),
            Line::from(vec![label("when"), Span::raw(clean(&g.when(cx.now_ms)))]),
            Line::from(vec![label("plans"), Span::raw(clean(&g.counts()))]),
            Line::from(vec![label("cost"), Span::raw(self.cost_text(g))]),
        ];
        let mut keys = vec![
            Span::styled(" ⏎", t.key()),
            Span::styled(" list them", t.dim()),
        ];
        if cx.write_mode {
            lines.push(Line::from(vec![
                label("marked"),
                Span::styled(
                    format!("{marked} of {}", g.count()),
                    if marked > 0 { t.marked() } else { t.dim() },
                ),
            ]));
            keys.extend([
                Span::styled(" · ␣", t.key()),
                Span::styled(" mark all of them", t.dim()),
                Span::styled(" · C", t.key()),
                Span::styled(" reconcile them (previewed)", t.dim()),
            ]);
        }
        lines.push(Line::from(keys));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
    }
}
