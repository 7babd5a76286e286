//! The audit trail (`a`, both modes): every `turnscope_audit` row, newest first, with the
//! selected record in full below. ⏎ opens the recorded submission; `a` or esc goes back to
//! where the trail was opened from (the app's router keeps that). Each record shows its batch (a
//! bulk apply's rows share one) and, once undone, `↶ #N` (undone by audit #N); `/` filters the records by
//! any column's text. In `--write` mode `u` undoes the selected record and `U` its whole bulk
//! apply, each asked why, then previewed; a record that cannot be undone (already undone, no
//! row images, a published terminal event) is refused before the question.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::{nav_delta, step, Ask};
use crate::keymap::Action;
use crate::messages::Target;
use crate::popups::{Popup, Reason};
use crate::text::{clean, pad};
use crate::view_state::{DrawCtx, Hit, Layout, Pane};
use crate::widgets::{render_selectable, scroll_into_view, table_and_strip, table_header};
use crate::worker_error::WorkerError;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_store::{AuditRecord, UndoTarget};

/// The audit trail's state: the rows as last read, and the cursor.
#[derive(Debug, Clone, Default)]
pub struct AuditScreen {
    pub rows: Vec<AuditRecord>,
    pub loaded: bool,
    pub error: Option<WorkerError>,
    /// The cursor, among the records the `/` query shows.
    pub selected: usize,
    /// The `/` filter: records with this text (any case) in any column.
    pub query: String,
}

/// The short form of a batch id in the table.
fn short_batch(b: &str) -> String {
    b.chars().take(9).collect()
}

impl AuditScreen {
    /// The audit record that undid `id`, if one did.
    pub fn undone_by(&self, id: i64) -> Option<i64> {
        self.rows
            .iter()
            .find(|r| r.undoes == Some(id))
            .map(|r| r.id)
    }

    /// The records the `/` query shows, in order.
    pub fn shown(&self) -> Vec<&AuditRecord> {
        let q = self.query.to_lowercase();
        self.rows
            .iter()
            .filter(|r| {
                q.is_empty()
                    || [
                        r.id.to_string(),
                        format!("#{}", r.id),
                        r.operator.clone(),
                        r.action.clone(),
                        r.submission_id.clone(),
                        r.batch_id.clone().unwrap_or_default(),
                        r.reason.clone().unwrap_or_default(),
                        r.summary.clone(),
                        when(r.at),
                    ]
                    .iter()
                    .any(|c| c.to_lowercase().contains(&q))
            })
            .collect()
    }

    pub fn selected_record(&self) -> Option<&AuditRecord> {
        self.shown().get(self.selected).copied()
    }

    /// A new `/` query: the cursor back to the first record it shows.
    pub fn set_query(&mut self, q: String) {
        self.query = q;
        self.selected = 0;
    }

    /// What ⏎ opens and `e` exports: the recorded submission.
    pub fn target(&self) -> Option<Target> {
        self.selected_record()
            .map(|r| Target::Submission(r.submission_id.clone()))
    }

    /// What `u` (`batch`: `U`) undoes: the selected record, or the bulk apply it was part of.
    pub fn undo_target(&self, batch: bool) -> Result<UndoTarget, &'static str> {
        let r = self
            .selected_record()
            .ok_or("select an audit record first")?;
        match (&r.batch_id, batch) {
            (Some(b), true) => Ok(UndoTarget::Batch(b.clone())),
            (None, true) => Err("this record is not part of a bulk apply: u undoes it alone"),
            _ => Ok(UndoTarget::Audit(r.id)),
        }
    }

    /// What `u` / `U` asks: why (the reason popup), unless the trail already shows that the undo
    /// would be refused; then that, in one line, and no question.
    pub fn ask_undo(&self, target: UndoTarget) -> Ask {
        match turnscope_store::refusal_from_trail(&target, &self.rows) {
            Some(why) => Ask::Error(format!("undo refused, nothing written: {why}")),
            None => Ask::Show(Popup::Reason(Reason::for_undo(target))),
        }
    }

    pub fn move_cursor(&mut self, delta: isize) {
        self.selected = step(self.selected, self.shown().len(), delta);
    }

    /// The audit trail's own actions: the cursor, ⏎ opens the recorded submission, `u` / `U`
    /// ask why (optional) before the undo is checked, esc leaves.
    pub fn handle(&mut self, a: Action, page: usize) -> Vec<Ask> {
        if let Some(delta) = nav_delta(a, page) {
            self.move_cursor(delta);
            return Vec::new();
        }
        match a {
            Action::Enter => self.target().map(Ask::Open).into_iter().collect(),
            Action::Undo { batch } => match self.undo_target(batch) {
                Ok(target) => vec![self.ask_undo(target)],
                Err(e) => vec![Ask::Info(e.to_string())],
            },
            Action::StartFilter => vec![Ask::Input(crate::view_state::InputMode::Filter)],
            Action::Back if !self.query.is_empty() => {
                self.set_query(String::new());
                vec![Ask::Info("filter cleared".into())]
            }
            Action::Back => vec![Ask::Leave],
            _ => Vec::new(),
        }
    }

    /// A click on row `row` of the viewport; `true` when it landed on a record.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.shown().len() {
            return false;
        }
        self.selected = i;
        true
    }

    /// The worker read the audit trail (or could not).
    pub fn on_read(&mut self, result: Result<Vec<AuditRecord>, WorkerError>) {
        match result {
            Ok(rows) => {
                self.rows = rows;
                self.loaded = true;
                self.error = None;
                self.selected = self.selected.min(self.shown().len().saturating_sub(1));
            }
            Err(e) => self.error = Some(e),
        }
    }
}

/// `2026-01-05 09:20:00` (UTC).
fn when(ms: i64) -> String {
    iso_from_ms(ms).replace('T', " ").chars().take(19).collect()
}

impl AuditScreen {
    pub fn draw(&self, f: &mut Frame, cx: &DrawCtx, view: &mut Layout, area: Rect) {
        let t = cx.theme;
        let detail_h = if area.height >= 14 { 6 } else { 0 };
        let (table, d) = table_and_strip(area, detail_h);
        let w = table.width as usize;
        // time, operator, action, submission, reason; the summary takes what is left.
        // Narrow terminals get the time of day and a shorter operator, so the undo column
        // (`↶ #12`: undone by audit #12) always shows.
        let wide = w >= 120;
        let (at_w, op_w) = if wide { (19, 16) } else { (8, 12) };
        let fixed = [
            ("#", 4),
            ("AT (UTC)", at_w),
            ("OPERATOR", op_w),
            ("ACTION", 9),
            ("UNDONE", 6),
            ("SUBMISSION", 10),
            ("BATCH", 9),
        ];
        let fixed_w: usize = fixed.iter().map(|(_, c)| c + 1).sum();
        let reason_w = 24.min(w / 5).min(w.saturating_sub(fixed_w + 2));
        let used: usize = fixed_w + reason_w + 2;
        let summary_w = w.saturating_sub(used);
        let mut titles: Vec<(&str, usize)> = fixed.to_vec();
        if reason_w >= 6 {
            titles.push(("REASON", reason_w));
        }
        if summary_w >= 8 {
            titles.push(("SUMMARY", summary_w));
        }
        let (header, widths, rows_area) = table_header(&titles, table, &t);
        view.audit = Some(Hit {
            area: table,
            rows: rows_area,
        });
        let h = rows_area.height as usize;
        scroll_into_view(&mut view.audit_offset, self.selected, h);
        let shown = self.shown();
        let rows = shown.iter().map(|a| {
            let short = clean(&turnscope_core::journal::submission_rows::short_id(
                &a.submission_id,
            ));
            let at = when(a.at);
            let at = if wide {
                at
            } else {
                at.chars().skip(11).collect()
            };
            let undone = match self.undone_by(a.id) {
                Some(by) => Span::styled(pad(&format!("↶ #{by}"), 6), t.partial()),
                None => Span::raw(pad("", 6)),
            };
            let mut cells = vec![
                Cell::from(Span::styled(pad(&a.id.to_string(), 4), t.dim())),
                Cell::from(Span::styled(pad(&at, at_w), t.dim())),
                Cell::from(pad(&clean(&a.operator), op_w)),
                Cell::from(Span::styled(pad(&clean(&a.action), 9), t.key())),
                Cell::from(undone),
                Cell::from(pad(&short, 10)),
                Cell::from(Span::styled(
                    pad(
                        &clean(&a.batch_id.as_deref().map_or("-".into(), short_batch)),
                        9,
                    ),
                    t.dim(),
                )),
            ];
            if reason_w >= 6 {
                cells.push(Cell::from(pad(
                    &clean(a.reason.as_deref().unwrap_or("-")),
                    reason_w,
                )));
            }
            if summary_w >= 8 {
                cells.push(Cell::from(Span::styled(
                    pad(&clean(&a.summary), summary_w),
                    t.dim(),
                )));
            }
            Row::new(cells)
        });
        render_selectable(
            f,
            table,
            Table::new(rows, widths).header(header),
            &t,
            cx.focus == Pane::Audit,
            view.audit_offset,
            (!shown.is_empty()).then_some(self.selected),
        );
        if shown.is_empty() {
            let msg = if let Some(e) = &self.error {
                format!("could not read the audit trail: {}", clean(&e.line()))
            } else if !self.rows.is_empty() {
                format!(
                    "no record matches /{} (esc clears the filter)",
                    clean(&self.query)
                )
            } else if !self.loaded {
                "reading the audit trail…".to_string()
            } else {
                "no turnscope action was ever applied to this database".to_string()
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
            let block = Block::new()
                .borders(Borders::TOP)
                .border_style(t.border(false));
            let inner = block.inner(d);
            f.render_widget(block, d);
            let Some(a) = self.selected_record() else {
                return;
            };
            let label = |s: &'static str| Span::styled(format!(" {s:<11}"), t.dim());
            let lines = vec![
                Line::from(vec![
                    label("record"),
                    Span::raw(format!(
                        "#{} · {} · {} by {} · turnscope {}",
                        a.id,
                        iso_from_ms(a.at),
                        a.action,
                        clean(&a.operator),
                        clean(&a.version)
                    )),
                ]),
                Line::from(vec![
                    label("submission"),
                    Span::raw(format!(
                        "{} · attempt {}",
                        clean(&a.submission_id),
                        clean(a.attempt_id.as_deref().unwrap_or("-"))
                    )),
                ]),
                Line::from(vec![
                    label("batch"),
                    Span::raw({
                        let mut parts = vec![a
                            .batch_id
                            .as_deref()
                            .map_or("- (not part of a bulk apply)".to_string(), |b| {
                                format!("{} (U undoes the whole batch)", clean(b))
                            })];
                        if let Some(u) = a.undoes {
                            parts.push(format!("this record undid #{u}"));
                        }
                        if let Some(by) = self.undone_by(a.id) {
                            parts.push(format!("undone by #{by}"));
                        }
                        parts.join(" · ")
                    }),
                ]),
                Line::from(vec![
                    label("reason"),
                    Span::raw(clean(a.reason.as_deref().unwrap_or("-"))),
                ]),
                Line::from(vec![label("summary"), Span::raw(clean(&a.summary))]),
            ];
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        }
    }
}
