//! The 2.x app's marks and what its write keys act on (write mode only, as beta.7's): space marks
//! or unmarks the selected list row, or on the incidents screen every submission of the selected
//! worker (then steps to the next worker); `u` unmarks all. `X`/`Q`/`E`/`F` act on the opened
//! submission in its detail (as beta.7's inspect keys); in the list and on the incidents screen
//! on the marks where any are set (in list order), else on the selected row, or on the incidents
//! screen every submission of the selected worker. One target is the one-submission
//! flow (`write.rs`); several are the CLI's bulk apply (`bulk.rs`), planned and applied by the
//! worker with the engine's `flue2_bulk`.

use super::bulk::{BulkConfirm, BulkDone, Targets};
use super::screens::{group_who, Screen};
use super::undo::UndoFlow;
use super::write::{self, Ask, Flow};
use super::{acted, Flue2App, Flue2Request};
use crate::keymap::Action;
use crate::text::clean;
use crate::worker_error::WorkerError;
use turnscope_engine::flue2_bulk::{counts, BulkItem, BulkOutcome};

impl Flue2App {
    /// Space on the list: mark or unmark the selected row and step to the next.
    pub(super) fn toggle_row_mark(&mut self) {
        let Some(id) = self.list.selected_id(self.now_ms) else {
            return;
        };
        if !self.list.marks.remove(&id) {
            self.list.marks.insert(id.clone());
            self.list.anchor = Some(id);
        }
        self.list.move_by(1, self.now_ms);
        self.status = Some(self.marks_said());
    }

    /// `*` on the list: mark every row shown.
    pub(super) fn mark_all_shown(&mut self) {
        let n = self.list.mark_all(self.now_ms);
        self.status = Some(format!(
            "marked {n} more: every row shown · {}",
            self.marks_said()
        ));
    }

    /// `V` on the list: mark the rows from the one `space` marked last to the cursor.
    pub(super) fn mark_range(&mut self) {
        self.status = Some(match self.list.mark_range(self.now_ms) {
            Ok(n) => format!(
                "marked {n} more: the range up to the cursor · {}",
                self.marks_said()
            ),
            Err(e) => e.into(),
        });
    }

    /// Space on the incidents screen: mark every submission of the selected worker, or unmark
    /// them when all are marked, and step to the next worker.
    pub(super) fn toggle_group_marks(&mut self) {
        let Some(g) = self.screen.as_ref().and_then(Screen::selected) else {
            self.status = Some("no worker left anything stuck".into());
            return;
        };
        let ids = group_ids(&g);
        let marks = &mut self.list.marks;
        let all = ids.iter().all(|s| marks.contains(s));
        for id in ids {
            if all {
                marks.remove(&id);
            } else {
                marks.insert(id);
            }
        }
        if let Some(s) = self.screen.as_mut() {
            s.act(Action::Down);
        }
        self.status = Some(format!(
            "{} {} · {}",
            if all {
                "unmarked"
            } else {
                "marked every submission of"
            },
            group_who(&g),
            self.marks_said()
        ));
    }

    /// `u`: unmark every row.
    pub(super) fn clear_marks(&mut self) {
        let n = std::mem::take(&mut self.list.marks).len();
        self.status = Some(format!("unmarked {n} row{}", if n == 1 { "" } else { "s" }));
    }

    fn marks_said(&self) -> String {
        format!(
            "{} · X/Q/E/F act on every marked row · u unmarks all",
            self.marks_summary()
        )
    }

    /// `3 marked`, `3 marked, 1 outside the expired view`.
    pub(super) fn marks_count(&self) -> String {
        let n = self.list.marks.len();
        match self.list.marks_outside_view() {
            0 => format!("{n} marked"),
            out => format!(
                "{n} marked, {out} outside the {} view",
                self.list.view.name()
            ),
        }
    }

    /// [`Self::marks_count`] with the selection's cost since the inputs ([`selection_cost`]),
    /// as beta.7's header totals its selection: `3 marked · $0.0123`.
    pub(super) fn marks_summary(&self) -> String {
        format!(
            "{} · {}",
            self.marks_count(),
            selection_cost(&self.list.marked_costs(), self.list.marks.len())
        )
    }

    /// What the write keys act on here.
    fn write_targets(&self) -> Result<Targets, String> {
        let one = |id: String| Targets {
            ids: vec![id],
            what: String::new(),
        };
        if let Some(d) = &self.detail {
            return Ok(one(d.id.clone()));
        }
        if !self.list.marks.is_empty() {
            return Ok(Targets {
                ids: self.list.marked_in_order(),
                what: self.marks_count(),
            });
        }
        match &self.screen {
            Some(s @ Screen::Incidents { .. }) => match s.selected() {
                Some(g) => Ok(Targets {
                    ids: group_ids(&g),
                    what: format!("every submission of {}", group_who(&g)),
                }),
                None => Err("no worker left anything stuck".into()),
            },
            _ => self
                .list
                .selected_id(self.now_ms)
                .map(one)
                .ok_or_else(|| "select a submission first".into()),
        }
    }

    /// A write key: its targets planned (`F` asks why first).
    pub(super) fn start_write(&mut self, ask: Ask) {
        let targets = match self.write_targets() {
            Ok(t) if !t.ids.is_empty() => t,
            Ok(_) => {
                self.status = Some("select a submission first".into());
                return;
            }
            Err(e) => {
                self.status = Some(e);
                return;
            }
        };
        self.status = None;
        self.write = Some(match ask {
            Ask::Fail(_) => Flow::Reason {
                targets,
                text: String::new(),
            },
            ask => self.plan(targets, ask),
        });
    }

    /// Ask the worker for the plan: one submission's, or every target's as a batch.
    pub(super) fn plan(&mut self, targets: Targets, ask: Ask) -> Flow {
        match targets.ids.as_slice() {
            [id] => {
                let w = Flow::Waiting(format!("planning {} of {}…", ask.name(), clean(id)));
                self.requests.push(Flue2Request::Plan {
                    id: id.clone(),
                    ask,
                });
                w
            }
            ids => {
                let w = Flow::Waiting(format!(
                    "planning {} of {} submissions…",
                    ask.name(),
                    ids.len()
                ));
                self.requests.push(Flue2Request::PlanBulk { targets, ask });
                w
            }
        }
    }

    /// A step of the write flow that the bulk apply adds: apply the batch, undo it.
    pub(super) fn bulk_step(&mut self, step: write::Step) {
        match step {
            write::Step::ApplyBulk { ask, items } => {
                self.write = Some(Flow::Waiting(format!(
                    "applying {} to {} submissions…",
                    ask.name(),
                    items.len()
                )));
                self.requests.push(Flue2Request::ApplyBulk {
                    ask,
                    items,
                    operator: self.cfg.operator.clone(),
                });
            }
            write::Step::Undo(batch) => {
                self.write = None;
                self.undo = Some(UndoFlow::Reason {
                    target: batch,
                    text: String::new(),
                });
            }
            _ => {}
        }
    }

    /// The batch's plans: the preview to confirm, or every refusal when nothing would be written.
    pub(super) fn on_planned_bulk(
        &mut self,
        ask: Ask,
        what: String,
        result: Result<(Vec<BulkItem>, i64), WorkerError>,
    ) {
        self.write = match result {
            Ok((items, _)) => Some(match BulkConfirm::new(ask.clone(), &what, items.clone()) {
                Some(c) => Flow::BulkConfirm(Box::new(c)),
                None => Flow::BulkDone(BulkDone::all_refused(&ask, &what, &items)),
            }),
            Err(e) => {
                self.status = Some(format!("{}: {}", ask.name(), e.line()));
                None
            }
        };
    }

    /// The batch written: each row's NEXT shows its prediction, the marks it went through are
    /// done with, and the result says what happened to each.
    pub(super) fn on_applied_bulk(
        &mut self,
        ask: Ask,
        result: Result<(String, Vec<BulkItem>), String>,
    ) {
        match result {
            Ok((batch, items)) => {
                for i in &items {
                    self.list.marks.remove(&i.id);
                    if let (BulkOutcome::Applied(_), Ok(plan)) = (&i.outcome, &i.plan) {
                        if acted::awaited(plan).is_some() {
                            let predicted = acted::predicted(plan).step.column();
                            self.written.insert(i.id.clone(), format!("⋯ {predicted}"));
                        }
                    }
                }
                let c = counts(&items);
                self.status = Some(format!(
                    "{} of {}: applied {}, refused {}, changed {}, failed {} · batch {batch}{}",
                    ask.name(),
                    items.len(),
                    c.applied,
                    c.refused,
                    c.changed,
                    c.errors,
                    if c.applied > 0 {
                        " · undo: U on its records in the audit trail (a)"
                    } else {
                        ""
                    }
                ));
                self.write = Some(Flow::BulkDone(BulkDone::applied(&ask, &batch, &items)));
            }
            Err(why) => {
                self.write = Some(Flow::Done {
                    title: format!("{} not applied", ask.name()),
                    lines: vec![why],
                })
            }
        }
        self.request_refresh();
    }
}

/// An incidents group's submissions (`incidents --json`'s `submissions`).
fn group_ids(g: &serde_json::Value) -> Vec<String> {
    g["submissions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// The marked rows' cost since their inputs summed (their COST cells' figures), `marked` rows
/// marked: at least that (`≥`) where one has no figure (no conversation, or not among the rows
/// read).
fn selection_cost(costs: &[Option<f64>], marked: usize) -> String {
    // `+ 0.0`: the sum of no figures is `-0.0`, written as 0.
    let total = costs.iter().flatten().sum::<f64>() + 0.0;
    let partial = costs.len() < marked || costs.iter().any(Option::is_none);
    format!("{}${total:.4}", if partial { "≥" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::selection_cost;

    #[test]
    fn the_selection_cost_sums_the_figures_and_says_when_one_is_missing() {
        assert_eq!(selection_cost(&[Some(0.5), Some(0.25)], 2), "$0.7500");
        assert_eq!(selection_cost(&[Some(0.5), None], 2), "≥$0.5000");
        assert_eq!(selection_cost(&[Some(0.0125)], 2), "≥$0.0125");
        assert_eq!(selection_cost(&[], 0), "$0.0000");
    }
}
