//! The write flow of the flue 2.x screens (`--write` only; the keys are absent otherwise): `X`
//! abort, `Q` requeue, `E` extend, `F` fail (asks why first) on the selected or opened
//! submission. The worker plans the action at the real clock (`turnscope_core::flue2::actions`,
//! the CLI's own planning); the confirm popup shows the preview's lines (the engine's, as the CLI
//! prints them: the fence, each column before and after, the notes) and the runtime's next pass
//! computed on the row after the write, with No selected; `A` (or ⏎ on Yes) applies it in one
//! fenced transaction with its audit record, and the result says the audit id and how to undo.

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;
use turnscope_core::flue2::{Flue2ActionPlan, Flue2Plan};
use turnscope_engine::flue2_actions::preview_lines;

use super::popup::{self, Choice, Typed};
use crate::text::clean;
use crate::theme::Theme;

/// What the operator asked for; the worker makes it a `Flue2Action` on the row it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Abort,
    Requeue,
    /// beta.7's `E`: 3 more attempts where the budget is what ends it (step 4), else a deadline
    /// an hour from now.
    Extend,
    Fail(String),
}

impl Ask {
    pub fn name(&self) -> &'static str {
        match self {
            Ask::Abort => "abort",
            Ask::Requeue => "requeue",
            Ask::Extend => "extend",
            Ask::Fail(_) => "fail",
        }
    }
}

/// The write keys and what the help says of each.
pub const KEYS: [(char, &str); 4] = [
    (
        'X',
        "abort: the runtime-native intent; its next pass settles it aborted (previewed)",
    ),
    (
        'Q',
        "requeue: back to the queue, only where the runtime's step 7 would (previewed)",
    ),
    (
        'E',
        "extend: 3 more attempts where the budget ends it, else deadline now + 1h (previewed)",
    ),
    (
        'F',
        "fail: a reserved failed settlement the runtime's pass finishes; asks why (previewed)",
    ),
];

/// The ask a write key makes (`F` asks for its reason first).
pub fn ask_of(c: char) -> Option<Ask> {
    Some(match c {
        'X' => Ask::Abort,
        'Q' => Ask::Requeue,
        'E' => Ask::Extend,
        'F' => Ask::Fail(String::new()),
        _ => return None,
    })
}

/// Where the write flow is.
#[derive(Debug, Clone)]
pub enum Flow {
    /// `F`: typing why.
    Reason { id: String, text: String },
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
}

/// What a key in the flow asks the app for.
pub enum Step {
    Stay,
    Close,
    Plan {
        id: String,
        ask: Ask,
    },
    Apply {
        plan: Box<Flue2ActionPlan>,
        reason: Option<String>,
    },
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
            Flow::Reason { id, text } => match popup::reason_key(ev.code, text) {
                Typed::Close => Step::Close,
                // fail needs a reason: a blank one goes nowhere.
                Typed::Submit if text.trim().is_empty() => Step::Stay,
                Typed::Submit => Step::Plan {
                    id: id.clone(),
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
        }
    }

    pub fn title(&self) -> String {
        match self {
            Flow::Reason { id, .. } => format!("Fail {}: why?", clean(id)),
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
        }
    }

    /// The popup's text lines (raw: drawn through `clean`).
    pub fn body(&self) -> Vec<String> {
        match self {
            Flow::Reason { text, .. } => popup::reason_body(
                "fail gives up on the submission for good: the runtime's pass settles it failed with this reason",
                text,
                "⏎ plan it (previewed, nothing written yet) · esc cancel",
            ),
            Flow::Waiting(w) => vec![w.clone()],
            Flow::Confirm { lines, yes, .. } => popup::confirm_body(lines, *yes),
            Flow::Done { lines, .. } => popup::done_body(lines),
        }
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        popup::draw(f, t, area, &self.title(), self.body());
    }
}
