//! A write on several 2.x submissions at once (the marks, or every submission of an incidents
//! worker): the popups of the CLI's bulk apply (`turnscope_engine::flue2_bulk`, the one
//! implementation). The worker plans every target at the real clock; the confirm shows the
//! grouped preview and the refusals, scrollable, with No selected and, from 10 writes on, the
//! count to type first (as the CLI asks it); the result says what happened to each id, the batch
//! id and how to undo it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use turnscope_engine::flue2_bulk::{
    counts, preview_heading, preview_lines, unwritten_line, writes, BulkItem, BulkOutcome,
};

use super::ask::Ask;
use super::popup::{self, Choice};
use crate::text::clean;
use crate::theme::Theme;
use crate::write::confirm::TYPE_COUNT_FROM;

/// The submissions a write key acts on, and how the preview names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets {
    /// Full ids, in list order (the marks) or the group's (an incidents worker).
    pub ids: Vec<String>,
    /// `3 marked`, `every submission of worker 9f2c1a0b`.
    pub what: String,
}

/// What a key on a bulk popup asks the flow for.
pub enum BulkStep {
    Stay,
    Close,
    /// Apply the previewed batch.
    Apply {
        ask: Ask,
        items: Vec<BulkItem>,
    },
    /// Undo the batch written.
    Undo(String),
}

/// Lines a page key scrolls.
const PAGE: usize = 10;

/// The bulk preview, waiting for a yes.
#[derive(Debug, Clone)]
pub struct BulkConfirm {
    pub ask: Ask,
    pub items: Vec<BulkItem>,
    /// The heading, the groups and the refusals.
    pub lines: Vec<String>,
    pub yes: bool,
    /// From [`TYPE_COUNT_FROM`] writes on: the count to type before it applies.
    pub need: Option<usize>,
    pub typed: String,
    pub scroll: usize,
    /// What the last key was refused for (`type 12 …`).
    pub note: Option<String>,
}

impl BulkConfirm {
    /// The preview of `items` (planned for `ask` on `what`); `None` when nothing would be written
    /// (every one refused), which [`refused_lines`] says instead.
    pub fn new(ask: Ask, what: &str, items: Vec<BulkItem>) -> Option<BulkConfirm> {
        let n = writes(&items);
        if n == 0 {
            return None;
        }
        let mut lines = vec![preview_heading(ask.name(), items.len(), what)];
        // All of them: the popup scrolls (the CLI cuts each group at 20 and --json has the rest).
        lines.extend(preview_lines(&items, usize::MAX));
        Some(BulkConfirm {
            need: (n >= TYPE_COUNT_FROM).then_some(n),
            ask,
            items,
            lines,
            yes: false,
            typed: String::new(),
            scroll: 0,
            note: None,
        })
    }

    pub fn title(&self) -> String {
        format!(
            "{} {} submissions",
            capitalized(self.ask.name()),
            self.items.len()
        )
    }

    pub fn on_key(&mut self, ev: KeyEvent) -> BulkStep {
        self.note = None;
        match ev.code {
            KeyCode::Char(c) if c.is_ascii_digit() && self.need.is_some() => {
                if self.typed.len() < 6 {
                    self.typed.push(c);
                }
                return BulkStep::Stay;
            }
            KeyCode::Backspace if self.need.is_some() => {
                self.typed.pop();
                return BulkStep::Stay;
            }
            code if scroll(code, &mut self.scroll, self.lines.len()) => return BulkStep::Stay,
            _ => {}
        }
        match popup::confirm_key(ev.code, &mut self.yes) {
            Choice::Apply => match self.need {
                Some(n) if self.typed != n.to_string() => {
                    self.note = Some(format!(
                        "type {n} (the number of writes) to apply them all · esc cancels"
                    ));
                    BulkStep::Stay
                }
                _ => BulkStep::Apply {
                    ask: self.ask.clone(),
                    items: self.items.clone(),
                },
            },
            Choice::Close => BulkStep::Close,
            Choice::Stay => BulkStep::Stay,
        }
    }

    /// The lines under the scrolled preview: the count to type, the choice, a refused key's note.
    fn tail(&self) -> Vec<String> {
        let mut v = vec![String::new()];
        if let Some(n) = self.need {
            v.push(format!(
                "{n} writes: type {n} to apply them all: [{:<w$}]",
                self.typed,
                w = n.to_string().len()
            ));
        }
        v.push(format!(
            "{}   {}      A applies · ←/→ choose · j/k scroll · esc/n cancel",
            if self.yes { "[ Yes ]" } else { "  Yes  " },
            if self.yes { "  No  " } else { "[ No ]" }
        ));
        if let Some(note) = &self.note {
            v.push(note.clone());
        }
        v
    }

    /// Every line, the preview's and the tail's (tests read them).
    pub fn body(&self) -> Vec<String> {
        let mut v = self.lines.clone();
        v.extend(self.tail());
        v
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        popup::draw_scrolled(
            f,
            t,
            area,
            &self.title(),
            &self.lines,
            self.scroll,
            self.tail(),
        );
    }
}

/// A bulk write's result: what happened to each id, the batch and how to undo it.
#[derive(Debug, Clone)]
pub struct BulkDone {
    pub title: String,
    pub lines: Vec<String>,
    pub scroll: usize,
    /// The batch id, where anything was written: `u` undoes it.
    pub batch: Option<String>,
}

impl BulkDone {
    /// The result of `items` applied under `batch`.
    pub fn applied(ask: &Ask, batch: &str, items: &[BulkItem]) -> BulkDone {
        let c = counts(items);
        let mut lines = vec![format!(
            "applied {}, refused {}, changed since the preview {}, failed {} · batch {batch}",
            c.applied, c.refused, c.changed, c.errors
        )];
        for i in items {
            let what = match (&i.outcome, &i.plan) {
                (BulkOutcome::Applied(a), _) => format!("applied · audit #{}", a.audit_id),
                (_, Err(r)) => format!("refused, nothing written: {}", r.reason),
                _ => unwritten_line(i).unwrap_or_else(|| "not written".into()),
            };
            lines.push(format!("  {}: {what}", i.id));
        }
        let batch = (c.applied > 0).then(|| batch.to_string());
        if let Some(b) = &batch {
            lines.push(String::new());
            lines.push(format!(
                "undo what the runtime has not acted on yet: u here, or U on one of its records in the audit trail (a), or turnscope --write undo {b}"
            ));
        }
        BulkDone {
            title: format!(
                "{} of {} submissions: {} applied",
                capitalized(ask.name()),
                items.len(),
                c.applied
            ),
            lines,
            scroll: 0,
            batch,
        }
    }

    /// Every target refused at planning: nothing to confirm.
    pub fn all_refused(ask: &Ask, what: &str, items: &[BulkItem]) -> BulkDone {
        let mut lines = vec![preview_heading(ask.name(), items.len(), what)];
        lines.extend(preview_lines(items, usize::MAX));
        lines.push(String::new());
        lines.push("nothing to write: every one is refused".into());
        BulkDone {
            title: format!("{} refused", capitalized(ask.name())),
            lines,
            scroll: 0,
            batch: None,
        }
    }

    pub fn on_key(&mut self, ev: KeyEvent) -> BulkStep {
        match (ev.code, &self.batch) {
            (KeyCode::Char('u'), Some(b)) => BulkStep::Undo(b.clone()),
            (code, _) if scroll(code, &mut self.scroll, self.lines.len()) => BulkStep::Stay,
            _ => BulkStep::Close,
        }
    }

    fn tail(&self) -> Vec<String> {
        vec![
            String::new(),
            if self.batch.is_some() {
                "u undo the batch · j/k scroll · any other key closes".into()
            } else {
                "j/k scroll · any other key closes".into()
            },
        ]
    }

    pub fn body(&self) -> Vec<String> {
        let mut v = self.lines.clone();
        v.extend(self.tail());
        v
    }

    pub fn draw(&self, f: &mut Frame, t: &Theme, area: Rect) {
        popup::draw_scrolled(
            f,
            t,
            area,
            &self.title,
            &self.lines,
            self.scroll,
            self.tail(),
        );
    }
}

/// A scroll key on `n` lines: `true` when it was one.
fn scroll(code: KeyCode, at: &mut usize, n: usize) -> bool {
    let last = n.saturating_sub(1);
    *at = match code {
        KeyCode::Down | KeyCode::Char('j') => (*at + 1).min(last),
        KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
        KeyCode::PageDown => (*at + PAGE).min(last),
        KeyCode::PageUp => at.saturating_sub(PAGE),
        KeyCode::Home | KeyCode::Char('g') => 0,
        _ => return false,
    };
    true
}

fn capitalized(name: &str) -> String {
    let mut t = clean(name);
    if let Some(c) = t.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    t
}
