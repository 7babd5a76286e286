//! The write flow of the flue 2.x screens (`--write` only; the keys are absent otherwise): `X`
//! abort, `Q` requeue, `E` extend, `F` fail (asks why first) on the selected or opened
//! submission. The worker plans the action at the real clock (`turnscope_core::flue2::actions`,
//! the CLI's own planning); the confirm popup shows the preview's lines (the engine's, as the CLI
//! prints them: the fence, each column before and after, the notes) and the runtime's next pass
//! computed on the row after the write, with No selected; `A` (or ⏎ on Yes) applies it in one
//! fenced transaction with its audit record, and the result says the audit id and how to undo.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use turnscope_core::flue2::{Flue2ActionPlan, Flue2Plan};
use turnscope_engine::flue2_actions::preview_lines;

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
            Flow::Reason { id, text } => match ev.code {
                KeyCode::Esc => Step::Close,
                KeyCode::Enter if text.trim().is_empty() => Step::Stay,
                KeyCode::Enter => Step::Plan {
                    id: id.clone(),
                    ask: Ask::Fail(text.trim().to_string()),
                },
                KeyCode::Backspace => {
                    text.pop();
                    Step::Stay
                }
                KeyCode::Char(c) => {
                    text.push(c);
                    Step::Stay
                }
                _ => Step::Stay,
            },
            Flow::Waiting(_) => Step::Stay,
            Flow::Confirm {
                plan, reason, yes, ..
            } => match ev.code {
                KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab => {
                    *yes = !*yes;
                    Step::Stay
                }
                KeyCode::Char('A') => Step::Apply {
                    plan: plan.clone(),
                    reason: reason.clone(),
                },
                KeyCode::Enter if *yes => Step::Apply {
                    plan: plan.clone(),
                    reason: reason.clone(),
                },
                KeyCode::Enter | KeyCode::Esc | KeyCode::Char('n') => Step::Close,
                _ => Step::Stay,
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
            Flow::Reason { text, .. } => vec![
                "fail gives up on the submission for good: the runtime's pass settles it failed with this reason".into(),
                String::new(),
                format!("reason: {text}▏"),
                String::new(),
                "⏎ plan it (previewed, nothing written yet) · esc cancel".into(),
            ],
            Flow::Waiting(w) => vec![w.clone()],
            Flow::Confirm { lines, yes, .. } => {
                let mut v = lines.clone();
                v.push(String::new());
                v.push(format!(
                    "{}   {}      A applies · ←/→ choose · esc/n cancel",
                    if *yes { "[ Yes ]" } else { "  Yes  " },
                    if *yes { "  No  " } else { "[ No ]" }
                ));
                v
            }
            Flow::Done { lines, .. } => {
                let mut v = lines.clone();
                v.push(String::new());
                v.push("any key closes".into());
                v
            }
        }
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        let w = area.width.saturating_sub(4).min(120);
        let body = self.body();
        let h = (body.len() as u16 + 2)
            .min(area.height.saturating_sub(2))
            .max(5);
        let rect = Rect::new(
            area.x + (area.width.saturating_sub(w)) / 2,
            area.y + (area.height.saturating_sub(h)) / 2,
            w,
            h,
        );
        f.render_widget(Clear, rect);
        let lines: Vec<Line> = body
            .into_iter()
            .map(|l| Line::from(Span::raw(clean(&l))))
            .collect();
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(Span::styled(format!(" {} ", self.title()), t.title())),
            ),
            rect,
        );
    }
}
