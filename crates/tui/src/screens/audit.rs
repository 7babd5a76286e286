//! The audit trail (`a`, both modes): every `turnscope_audit` row, newest first, with the
//! selected record in full below. ⏎ opens the recorded submission; `a` or esc goes back to
//! where the trail was opened from (the app's router keeps that). In `--write` mode `u` undoes
//! the selected record and `U` its whole bulk apply, each asked why, then previewed.

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
    pub selected: usize,
}

impl AuditScreen {
    pub fn selected_record(&self) -> Option<&AuditRecord> {
        self.rows.get(self.selected)
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

    pub fn move_cursor(&mut self, delta: isize) {
        self.selected = step(self.selected, self.rows.len(), delta);
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
                Ok(target) => vec![Ask::Show(Popup::Reason(Reason::for_undo(target)))],
                Err(e) => vec![Ask::Info(e.to_string())],
            },
            Action::Back => vec![Ask::Leave],
            _ => Vec::new(),
        }
    }

    /// A click on row `row` of the viewport; `true` when it landed on a record.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.rows.len() {
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
                self.selected = self.selected.min(self.rows.len().saturating_sub(1));
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
        let fixed = [
            ("AT (UTC)", 19),
            ("OPERATOR", 16),
            ("ACTION", 7),
            ("SUBMISSION", 10),
        ];
        let reason_w = 24.min(w / 5);
        let used: usize = fixed.iter().map(|(_, c)| c + 1).sum::<usize>() + reason_w + 2;
        let summary_w = w.saturating_sub(used);
        let mut titles: Vec<(&str, usize)> = fixed.to_vec();
        titles.push(("REASON", reason_w));
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
        let rows = self.rows.iter().map(|a| {
            let short = clean(&turnscope_core::journal::submission_rows::short_id(
                &a.submission_id,
            ));
            let mut cells = vec![
                Cell::from(Span::styled(pad(&when(a.at), 19), t.dim())),
                Cell::from(pad(&clean(&a.operator), 16)),
                Cell::from(Span::styled(pad(&clean(&a.action), 7), t.key())),
                Cell::from(pad(&short, 10)),
                Cell::from(pad(&clean(a.reason.as_deref().unwrap_or("-")), reason_w)),
            ];
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
            (!self.rows.is_empty()).then_some(self.selected),
        );
        if self.rows.is_empty() {
            let msg = if let Some(e) = &self.error {
                format!("could not read the audit trail: {}", clean(&e.line()))
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
                    label("reason"),
                    Span::raw(clean(a.reason.as_deref().unwrap_or("-"))),
                ]),
                Line::from(vec![label("summary"), Span::raw(clean(&a.summary))]),
            ];
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        }
    }
}
