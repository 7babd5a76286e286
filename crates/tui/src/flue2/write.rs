//! The write flow of the flue 2.x screens (`--write` only; the keys are absent otherwise): `X`
//! abort, `Q` requeue, `E` extend, `F` fail (asks why first) on the selected or opened
//! submission. The worker plans the action at the real clock (`turnscope_core::flue2::actions`,
//! the CLI's own planning); the confirm popup shows the preview's lines (the engine's, as the CLI
//! prints them: the fence, each column before and after, the notes) and the runtime's next pass
//! computed on the row after the write, with No selected; `A` (or ⏎ on Yes) applies it in one
//! fenced transaction with its audit record, and the result says the audit id and how to undo.
//! On several submissions (the marks, an incidents worker's) the flow is the CLI's bulk apply
//! (`bulk.rs`).

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;
use turnscope_core::flue2::{Flue2ActionPlan, Flue2Plan};
use turnscope_engine::flue2_actions::preview_lines;
use turnscope_engine::flue2_bulk::BulkItem;

pub use super::ask::{ask_of, Ask, KEYS};
use super::bulk::{BulkConfirm, BulkDone, BulkStep, Targets};
use super::popup::{self, Choice, Typed};
use crate::text::clean;
use crate::theme::Theme;

/// Where the write flow is.
#[derive(Debug, Clone)]
pub enum Flow {
    /// `F`: typing why.
    Reason { targets: Targets, text: String },
    /// Waiting for the worker (`planning fail of …`, `applying …`).
    Waiting(String),
    Confirm {
        plan: Box<Flue2ActionPlan>,
        reason: Option<String>,
        lines: Vec<String>,
        yes: bool,
    },
    /// The result (applied, or refused by the fence): any key closes it.
    Done { title: String, lines: Vec<String> },
    /// Several submissions' preview (`bulk.rs`).
    BulkConfirm(Box<BulkConfirm>),
    /// Several submissions' result.
    BulkDone(BulkDone),
    /// `w` in read-only: switch to write mode? (No selected.)
    EnableWrites { operator: String, yes: bool },
}

/// What a key in the flow asks the app for.
pub enum Step {
    Stay,
    Close,
    Plan {
        targets: Targets,
        ask: Ask,
    },
    Apply {
        plan: Box<Flue2ActionPlan>,
        reason: Option<String>,
    },
    /// Apply the previewed batch, one fenced transaction per submission under one batch id.
    ApplyBulk {
        ask: Ask,
        items: Vec<BulkItem>,
    },
    /// Undo this batch (the audit trail's `U`, from a bulk result).
    Undo(String),
    /// Open the journal for writes and turn the write keys on.
    EnableWrites,
}

fn bulk_step(s: BulkStep) -> Step {
    match s {
        BulkStep::Stay => Step::Stay,
        BulkStep::Close => Step::Close,
        BulkStep::Apply { ask, items } => Step::ApplyBulk { ask, items },
        BulkStep::Undo(batch) => Step::Undo(batch),
    }
}

/// A plan's lines for the popup: the preview, then the runtime's next pass on the row after it.
pub fn confirm_lines(plan: &Flue2ActionPlan, now_ms: i64) -> Vec<String> {
    let mut out = preview_lines(plan, now_ms);
    out.push(String::new());
    out.push("the runtime's next pass, computed on the row after the write:".into());
    out.extend(plan_lines(&plan.next));
    if let Some(then) = &plan.then {
        out.push(plan.then_heading().into());
        out.extend(plan_lines(then));
    }
    out
}

fn plan_lines(p: &Flue2Plan) -> Vec<String> {
    let mut out = vec![format!("  {}: {}", p.step.column(), p.why)];
    for (n, w) in p.writes.iter().enumerate() {
        out.push(format!("    {}. {}", n + 1, w.describe()));
    }
    out
}

impl Flow {
    pub fn on_key(&mut self, ev: KeyEvent) -> Step {
        match self {
            Flow::Reason { targets, text } => match popup::reason_key(ev.code, text) {
                Typed::Close => Step::Close,
                // fail needs a reason: a blank one goes nowhere.
                Typed::Submit if text.trim().is_empty() => Step::Stay,
                Typed::Submit => Step::Plan {
                    targets: targets.clone(),
                    ask: Ask::Fail(text.trim().to_string()),
                },
                Typed::Stay => Step::Stay,
            },
            Flow::Waiting(_) => Step::Stay,
            Flow::Confirm {
                plan, reason, yes, ..
            } => match popup::confirm_key(ev.code, yes) {
                Choice::Apply => Step::Apply {
                    plan: plan.clone(),
                    reason: reason.clone(),
                },
                Choice::Close => Step::Close,
                Choice::Stay => Step::Stay,
            },
            Flow::Done { .. } => Step::Close,
            Flow::BulkConfirm(c) => bulk_step(c.on_key(ev)),
            Flow::BulkDone(d) => bulk_step(d.on_key(ev)),
            Flow::EnableWrites { yes, .. } => match popup::confirm_key(ev.code, yes) {
                Choice::Apply => Step::EnableWrites,
                Choice::Close => Step::Close,
                Choice::Stay => Step::Stay,
            },
        }
    }

    pub fn title(&self) -> String {
        match self {
            Flow::Reason { targets, .. } => match targets.ids.as_slice() {
                [id] => format!("Fail {}: why?", clean(id)),
                ids => format!(
                    "Fail {} submissions ({}): why?",
                    ids.len(),
                    clean(&targets.what)
                ),
            },
            Flow::Waiting(w) => w.clone(),
            Flow::Confirm { plan, .. } => {
                let a = plan.action;
                let mut t = a.to_string();
                if let Some(c) = t.get_mut(0..1) {
                    c.make_ascii_uppercase();
                }
                format!("{t} {}", clean(&plan.fence.submission_id))
            }
            Flow::Done { title, .. } => title.clone(),
            Flow::BulkConfirm(c) => c.title(),
            Flow::BulkDone(d) => d.title.clone(),
            Flow::EnableWrites { .. } => "Write mode".into(),
        }
    }

    /// The popup's text lines (raw: drawn through `clean`).
    pub fn body(&self) -> Vec<String> {
        match self {
            Flow::Reason { targets, text } => popup::reason_body(
                if targets.ids.len() > 1 {
                    "fail gives up on each submission for good: the runtime's pass settles each failed with this reason"
                } else {
                    "fail gives up on the submission for good: the runtime's pass settles it failed with this reason"
                },
                text,
                "⏎ plan it (previewed, nothing written yet) · esc cancel",
            ),
            Flow::Waiting(w) => vec![w.clone()],
            Flow::Confirm { lines, yes, .. } => popup::confirm_body(lines, *yes),
            Flow::Done { lines, .. } => popup::done_body(lines),
            Flow::BulkConfirm(c) => c.body(),
            Flow::BulkDone(d) => d.body(),
            // beta.7's words (`Confirm::enable_writes`), with the 2.x write keys.
            Flow::EnableWrites { operator, yes } => popup::confirm_body(
                &[
                    "Switch to write mode?".into(),
                    String::new(),
                    "The write keys (X Q E F, marks, undo) come on. Every write still shows its exact rows and the runtime's next pass, and asks before it applies.".into(),
                    format!("Each applied write is audited as {operator}."),
                    "w switches back to read-only.".into(),
                ],
                *yes,
            ),
        }
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        match self {
            Flow::BulkConfirm(c) => c.draw(f, t, area),
            Flow::BulkDone(d) => d.draw(f, t, area),
            _ => popup::draw(f, t, area, &self.title(), self.body()),
        }
    }
}
