//! The confirm dialog: the preview of a write (No selected until the operator switches), the
//! informational popups that report plans, refusals and results, and step mode's "next step".
//!
//! Pressing R (or Q, F, S) in the list asks the worker for a plan ([`super::super::screens`]);
//! the plan arrives here ([`Confirm::for_planned`]), ⏎ on Yes or `A` answers [`Reply::Apply`],
//! and the worker's report comes back as [`Confirm::for_applied`]. `A` means nothing outside a
//! popup (`y` copies an id everywhere else), and a bulk of [`TYPE_COUNT_FROM`] or more writes
//! asks for its count to be typed before it applies.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::keymap::Action;
use crate::popups::env::{PopupView, Reply};
use crate::popups::widgets::{button, centered};
use crate::popups::{text_of, PopupLine, Tone};
use crate::text::{char_width, clean, fit, width};
use crate::theme::Theme;
use crate::write::popup_text::{self, Outcome, OutcomeResult, PlanItem, Planned};
use turnscope_engine::actions::ActionKind;

/// What a popup's Yes does.
#[derive(Debug, Clone, PartialEq)]
pub enum PopupAction {
    /// Nothing: an informational popup (⏎ or y closes it).
    Close,
    /// Apply these previewed plans, each in its own fenced transaction. Needs an explicit Yes:
    /// the No button is selected when the popup opens.
    Apply {
        kind: ActionKind,
        items: Vec<PlanItem>,
    },
    /// Step mode, after a step: plan the next write of the runtime's plan for this submission.
    NextStep { submission_id: String },
    /// Apply this previewed undo (its rows were checked; the worker checks again under the lock).
    Undo {
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
    },
    /// Switch to write mode (`w` in read-only mode).
    EnableWrites,
}

/// A bulk of this many writes or more asks for the count to be typed before it applies.
pub const TYPE_COUNT_FROM: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    pub title: String,
    pub lines: Vec<PopupLine>,
    /// What the Yes button says ("apply", "ok", "next step").
    pub confirm_label: String,
    pub action: PopupAction,
    pub scroll: usize,
    /// The selected button: Yes when true. Starts false (No) for writes.
    pub yes: bool,
    /// A bulk of [`TYPE_COUNT_FROM`] or more: the count that must be typed before Yes applies.
    pub count_required: Option<usize>,
    /// What the operator typed of it so far.
    pub typed: String,
    /// A bulk preview's other view (with or without each submission's rows): `d` switches.
    pub other_view: Option<Vec<PopupLine>>,
    /// An apply's result: what `u` undoes (the batch, or the one record).
    pub undo: Option<turnscope_store::UndoTarget>,
}

/// What the status line says when a plan or a result arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Clear it (the popup says everything).
    Clear,
    Info(String),
    Error(String),
}

impl Confirm {
    /// An informational popup with one button.
    pub fn info(title: impl Into<String>, lines: Vec<PopupLine>) -> Confirm {
        Confirm {
            title: title.into(),
            lines,
            confirm_label: "ok".into(),
            action: PopupAction::Close,
            scroll: 0,
            yes: true,
            count_required: None,
            typed: String::new(),
            other_view: None,
            undo: None,
        }
    }

    /// `w` in read-only mode: what write mode means, No selected.
    pub fn enable_writes(operator: &str) -> Confirm {
        let lines = vec![
            PopupLine::new(Tone::Heading, "Switch to write mode?"),
            PopupLine::blank(),
            PopupLine::new(
                Tone::Normal,
                "The write keys (C R Q F S E, marks, undo) come on. Every write still shows its exact rows and the runtime's next step, and asks before it applies.",
            ),
            PopupLine::new(Tone::Normal, format!("Each applied write is audited as {operator}.")),
            PopupLine::new(Tone::Normal, "w switches back to read-only."),
        ];
        Confirm {
            confirm_label: "write mode".into(),
            action: PopupAction::EnableWrites,
            yes: false,
            ..Confirm::info("Write mode", lines)
        }
    }

    /// A refusal (or nothing to write): one button, which closes it.
    pub fn refusal(title: impl Into<String>, lines: Vec<PopupLine>) -> Confirm {
        Confirm {
            confirm_label: "close".into(),
            ..Confirm::info(title, lines)
        }
    }

    /// A checked undo's preview: No is selected.
    pub fn for_undo(
        target: &turnscope_store::UndoTarget,
        reason: Option<String>,
        u: &turnscope_store::Undone,
    ) -> Confirm {
        let lines = crate::worker_undo::preview_lines(target, reason.as_deref(), u);
        Confirm {
            title: format!("Undo {target}?"),
            lines,
            confirm_label: "Yes, undo".into(),
            action: PopupAction::Undo {
                target: target.clone(),
                reason,
            },
            scroll: 0,
            yes: false,
            count_required: None,
            typed: String::new(),
            other_view: None,
            undo: None,
        }
    }

    /// An applied undo: what was restored, and the audit rows that record it (`ids`, `#7`).
    pub fn for_undone(
        target: &turnscope_store::UndoTarget,
        u: &turnscope_store::Undone,
        ids: &[String],
    ) -> Confirm {
        let head = format!(
            "restored {} · write lock held {:.2} ms · recorded as audit {}",
            turnscope_core::text::plural(u.restored.len() as u64, "row", "rows"),
            u.lock_held.as_secs_f64() * 1000.0,
            ids.join(", ")
        );
        let lines = [PopupLine::new(Tone::Applied, head), PopupLine::blank()]
            .into_iter()
            .chain(
                u.restored
                    .iter()
                    .map(|l| PopupLine::new(Tone::Row, format!("  {l}"))),
            )
            .collect();
        Confirm::info(format!("Undone: {target}"), lines)
    }

    /// An undo the worker refused (`why`, one line): nothing was written, said once.
    pub fn undo_refused(target: &turnscope_store::UndoTarget, why: &str) -> Confirm {
        Confirm::info(
            format!("Undo refused: {target}"),
            vec![PopupLine::new(Tone::Refused, undo_refusal_line(why))],
        )
    }

    /// A digit or a backspace while a count must be typed: `true` when the key was taken.
    pub fn on_count_key(&mut self, code: crossterm::event::KeyCode) -> bool {
        if self.count_required.is_none() {
            return false;
        }
        match code {
            crossterm::event::KeyCode::Char(c) if c.is_ascii_digit() => {
                if self.typed.len() < 6 {
                    self.typed.push(c);
                }
                true
            }
            crossterm::event::KeyCode::Backspace => {
                self.typed.pop();
                true
            }
            _ => false,
        }
    }

    /// A write's preview: No is selected.
    fn apply(
        title: String,
        lines: Vec<PopupLine>,
        label: String,
        kind: ActionKind,
        items: Vec<PlanItem>,
    ) -> Confirm {
        let writes = items
            .iter()
            .filter(|i| i.result.as_ref().is_ok_and(|p| !p.is_noop()))
            .count();
        Confirm {
            title,
            lines,
            confirm_label: label,
            action: PopupAction::Apply { kind, items },
            scroll: 0,
            yes: false,
            count_required: (writes >= TYPE_COUNT_FROM).then_some(writes),
            typed: String::new(),
            other_view: None,
            undo: None,
        }
    }

    /// The second confirmation of a write whose plans answer tool calls `interrupted`: the
    /// ledger of the calls that may have run, No selected; Yes applies the plans acknowledged.
    pub fn for_side_effects(kind: ActionKind, mut items: Vec<PlanItem>) -> Confirm {
        let calls: usize = items
            .iter()
            .filter_map(|i| i.result.as_ref().ok())
            .map(|p| p.side_effects.len())
            .sum();
        let mut lines = vec![
            PopupLine::new(
                Tone::Heading,
                format!(
                    "{} will be answered `interrupted`, but may already have run:",
                    turnscope_core::text::plural(calls as u64, "tool call", "tool calls")
                ),
            ),
            PopupLine::new(
                Tone::Normal,
                "the model is told they did not finish and may call them again; check each effect (a payment, a mail, a deploy) first.",
            ),
            PopupLine::blank(),
        ];
        lines.extend(popup_text::side_effect_lines(&items));
        lines.push(PopupLine::blank());
        lines.push(PopupLine::new(
            Tone::Normal,
            "Yes records the acknowledgment in the audit row with the write.",
        ));
        for plan in items.iter_mut().filter_map(|i| i.result.as_mut().ok()) {
            plan.acknowledge_side_effects();
        }
        Confirm::apply(
            format!("{}: side effects?", popup_text::title_word(kind)),
            lines,
            "Yes, they may have run: apply".into(),
            kind,
            items,
        )
    }

    /// Whether Yes must first go through [`Confirm::for_side_effects`].
    pub fn needs_side_effect_ack(items: &[PlanItem]) -> bool {
        items
            .iter()
            .filter_map(|i| i.result.as_ref().ok())
            .any(|p| p.unacknowledged_side_effects().is_some())
    }

    pub fn is_write(&self) -> bool {
        matches!(
            self.action,
            PopupAction::Apply { .. } | PopupAction::Undo { .. }
        )
    }

    /// The worker's plans for a write: the preview to confirm, or why there is nothing to.
    pub fn for_planned(p: Planned) -> (Confirm, Note) {
        let kind = p.kind;
        let live = p.live_runtime.clone();
        let write_note = || match live.first() {
            Some(w) => Note::Error(w.clone()),
            None => Note::Clear,
        };
        if p.items.len() == 1 {
            let item = p.items.into_iter().next().expect("one item");
            return match &item.result {
                Ok(plan) if !plan.is_noop() => {
                    let (title, lines) = popup_text::confirm_single(kind, &item, plan, &live);
                    let label = format!("Yes, {}", kind.as_str());
                    (
                        Confirm::apply(title, lines, label, kind, vec![item]),
                        write_note(),
                    )
                }
                _ => {
                    let (title, lines) = popup_text::refused_single(kind, &item);
                    let note = match &item.result {
                        Err(r) => {
                            Note::Error(format!("refused: {} · instead: {}", r.reason, r.instead))
                        }
                        Ok(_) => Note::Info("nothing to write".into()),
                    };
                    (Confirm::refusal(title, lines), note)
                }
            };
        }
        let writes = p.applicable() > 0;
        // The live runtime is a warning of a write only.
        let live: &[String] = if writes { &live } else { &[] };
        let (title, lines) = popup_text::confirm_bulk(&p, live, false);
        let (_, rows) = popup_text::confirm_bulk(&p, live, true);
        if !writes {
            let note = Note::Error(
                "nothing to apply: every marked submission was refused or has nothing to write"
                    .into(),
            );
            let mut c = Confirm::refusal(title, lines);
            c.other_view = Some(rows);
            return (c, note);
        }
        let label = format!("Yes, {} {}", kind.as_str(), p.applicable());
        let mut c = Confirm::apply(title, lines, label, kind, p.items);
        c.other_view = Some(rows);
        (c, write_note())
    }

    /// The popup shown while the worker applies.
    pub fn applying(kind: ActionKind, items: &[PlanItem]) -> Confirm {
        let n = items
            .iter()
            .filter(|i| i.result.as_ref().is_ok_and(|p| !p.is_noop()))
            .count();
        Confirm::info(
            format!("{}: applying…", popup_text::title_word(kind)),
            vec![PopupLine::from(format!(
                "writing {n} submission{}, each in its own fenced transaction…",
                if n == 1 { "" } else { "s" }
            ))],
        )
    }

    /// The worker's report of an apply: what was written (before → now), or why not, and
    /// what undoes it (`u`).
    pub fn for_applied(kind: ActionKind, outcomes: &[Outcome]) -> (Confirm, Note) {
        let (undo, undo_lines) = popup_text::undo_offer(outcomes);
        let with_undo = |mut c: Confirm| {
            if !undo_lines.is_empty() {
                c.lines.push(PopupLine::blank());
                c.lines.extend(undo_lines.iter().cloned());
            }
            c.undo = undo.clone();
            c
        };
        if outcomes.len() == 1 {
            let o = &outcomes[0];
            let (title, lines, next) = popup_text::result_single(kind, o);
            let note = match &o.result {
                OutcomeResult::Applied { applied, .. } => Note::Info(format!(
                    "{} {}: {} written, lock held {:.2} ms, audit #{}",
                    kind.as_str(),
                    popup_text::short_id(&o.submission_id),
                    turnscope_core::text::plural(applied.rows_written as u64, "row", "rows"),
                    applied.lock_held.as_secs_f64() * 1000.0,
                    applied.audit_id
                )),
                OutcomeResult::Fenced(d) => Note::Error(format!(
                    "nothing written: {} changed since the preview ({})",
                    popup_text::short_id(&o.submission_id),
                    d.join("; ")
                )),
                _ => Note::Error(text_of(&lines).join(" ")),
            };
            let popup = if next {
                Confirm {
                    title,
                    lines,
                    confirm_label: "next step".into(),
                    action: PopupAction::NextStep {
                        submission_id: o.submission_id.clone(),
                    },
                    scroll: 0,
                    yes: true,
                    count_required: None,
                    typed: String::new(),
                    other_view: None,
                    undo: None,
                }
            } else {
                Confirm::info(title, lines)
            };
            return (with_undo(popup), note);
        }
        let note = Note::Info(format!(
            "{}: {}",
            kind.as_str(),
            popup_text::Counts::of(outcomes).line()
        ));
        let (title, lines) = popup_text::result_bulk(kind, outcomes);
        (with_undo(Confirm::info(title, lines)), note)
    }

    /// The popup's keys: ⏎ presses the selected button, `y` is Yes, Tab switches, esc cancels.
    pub fn on_action(&mut self, a: Action) -> Reply {
        match a {
            Action::Confirm | Action::Yes => {
                let go = a == Action::Yes || self.yes;
                match &self.action {
                    PopupAction::Close => Reply::Close,
                    PopupAction::NextStep { .. } if !go => Reply::CloseWith(
                        "stopped stepping: the rest is left to the runtime (S steps again)".into(),
                    ),
                    PopupAction::EnableWrites if !go => {
                        Reply::CloseWith("stayed read-only".into())
                    }
                    // ⏎ on No: nothing happens, and the popup stays.
                    _ if !go => Reply::StayWith(
                        "No is selected: nothing written · A applies · Tab selects Yes · esc cancels"
                            .into(),
                    ),
                    PopupAction::Apply { .. }
                        if self
                            .count_required
                            .is_some_and(|n| self.typed != n.to_string()) =>
                    {
                        let n = self.count_required.unwrap_or_default();
                        Reply::StayWith(format!(
                            "type {n} (the number of writes) to apply them all · esc cancels"
                        ))
                    }
                    PopupAction::Undo { target, reason } => Reply::Undo {
                        target: target.clone(),
                        reason: reason.clone(),
                    },
                    PopupAction::Apply { kind, items } => Reply::Apply {
                        kind: *kind,
                        items: items.clone(),
                    },
                    PopupAction::EnableWrites => Reply::EnableWrites,
                    PopupAction::NextStep { submission_id } => Reply::Plan {
                        kind: ActionKind::Step,
                        ids: vec![submission_id.clone()],
                        reason: None,
                    },
                }
            }
            Action::ToggleRows => {
                if let Some(other) = self.other_view.take() {
                    self.other_view = Some(std::mem::replace(&mut self.lines, other));
                    self.scroll = 0;
                }
                Reply::Stay
            }
            Action::Undo { .. } => match &self.undo {
                Some(target) => Reply::AskUndo(target.clone()),
                None => Reply::Stay,
            },
            Action::SwitchButton => {
                if self.action != PopupAction::Close {
                    self.yes = !self.yes;
                }
                Reply::Stay
            }
            Action::Cancel if self.is_write() => {
                Reply::CloseWith("cancelled: nothing written".into())
            }
            Action::Cancel | Action::Back => Reply::Close,
            _ => Reply::Stay,
        }
    }

    pub fn render(&self, f: &mut Frame, area: Rect, t: Theme, view: &mut PopupView) {
        let pw = area.width.saturating_sub(2).min(120);
        let text_w = pw.saturating_sub(4) as usize;
        let wrapped: Vec<Line> = self
            .lines
            .iter()
            .flat_map(|l| {
                let style = l.tone.style(t);
                wrap(&l.text, text_w)
                    .into_iter()
                    .map(move |piece| Line::from(Span::styled(format!(" {piece}"), style)))
            })
            .collect();
        // Borders, the body, a blank line and the buttons.
        let h = (wrapped.len() as u16 + 4).min(area.height.saturating_sub(2));
        let r = centered(area, pw, h);
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Double)
            .border_style(if self.is_write() {
                t.partial()
            } else {
                t.border(true)
            })
            .title(Span::styled(
                format!(
                    " {} ",
                    fit(&clean(&self.title), pw.saturating_sub(4) as usize)
                ),
                t.title(),
            ));
        let inner = block.inner(r);
        f.render_widget(Clear, r);
        f.render_widget(block, r);
        let body_h = inner.height.saturating_sub(2) as usize;
        let total = wrapped.len();
        let max = total.saturating_sub(body_h);
        view.max_scroll = Some(max);
        let scroll = self.scroll.min(max);
        let visible: Vec<Line> = wrapped.into_iter().skip(scroll).take(body_h).collect();
        f.render_widget(
            Paragraph::new(visible),
            Rect {
                height: body_h as u16,
                ..inner
            },
        );
        if total > body_h {
            let pos = format!(
                " {}-{}/{} · j/k scroll ",
                scroll + 1,
                (scroll + body_h).min(total),
                total
            );
            let x = r.right().saturating_sub(width(&pos) as u16 + 1);
            f.render_widget(
                Paragraph::new(Span::styled(pos, t.dim())),
                Rect {
                    x,
                    y: r.bottom().saturating_sub(1),
                    width: r.right().saturating_sub(x),
                    height: 1,
                },
            );
        }
        let label = &self.confirm_label;
        let keys = match &self.action {
            PopupAction::Close => {
                let mut keys = vec![
                    Span::raw(" "),
                    button(t, label, true),
                    Span::styled("   esc close", t.dim()),
                ];
                if self.other_view.is_some() {
                    keys.push(Span::styled(" · d rows", t.dim()));
                }
                if self.undo.is_some() {
                    keys.push(Span::styled(" · u undo", t.key()));
                }
                keys
            }
            PopupAction::Apply { .. } | PopupAction::Undo { .. } => {
                let mut keys = vec![
                    Span::raw(" "),
                    button(t, "No", !self.yes),
                    Span::raw("  "),
                    button(t, label, self.yes),
                ];
                if let Some(n) = self.count_required {
                    keys.push(Span::styled(format!("   type {n}: "), t.key()));
                    keys.push(Span::raw(format!(
                        "[{:<w$}]",
                        self.typed,
                        w = n.to_string().len()
                    )));
                }
                keys.push(Span::styled(
                    if self.other_view.is_some() {
                        "   A apply · Tab switch · d rows"
                    } else {
                        "   A apply · Tab switch · esc cancel"
                    },
                    t.dim(),
                ));
                keys
            }
            PopupAction::NextStep { .. } => vec![
                Span::raw(" "),
                button(t, "stop here", !self.yes),
                Span::raw("  "),
                button(t, label, self.yes),
                Span::styled("   A next step · Tab switch · esc stop", t.dim()),
            ],
            PopupAction::EnableWrites => vec![
                Span::raw(" "),
                button(t, "stay read-only", !self.yes),
                Span::raw("  "),
                button(t, label, self.yes),
                Span::styled("   A write mode · Tab switch · esc cancel", t.dim()),
            ],
        };
        f.render_widget(
            Paragraph::new(Line::from(keys)),
            Rect {
                y: inner.bottom().saturating_sub(1),
                height: 1,
                ..inner
            },
        );
    }
}

/// A refused undo in one line: the store's `refused, nothing written: …` is said once.
pub fn undo_refusal_line(why: &str) -> String {
    let why = why
        .strip_prefix("refused, nothing written: ")
        .or_else(|| why.strip_prefix("refused: "))
        .unwrap_or(why);
    format!("refused, nothing written: {why}")
}

/// Wrap `line` to `w` cells: prose after a space near the edge, row data (JSON, SQL values)
/// exactly at the edge so every byte stays visible; continuation lines keep the line's
/// indentation plus two, so a long row stays visibly one row.
fn wrap(line: &str, w: usize) -> Vec<String> {
    let line = clean(line);
    if width(&line) <= w || w < 8 {
        return vec![line];
    }
    let words = !is_row_data(&line);
    let lead = line.chars().take_while(|c| *c == ' ').count().min(w / 2) + 2;
    let mut out = Vec::new();
    let mut cur: Vec<char> = Vec::new();
    let mut used = 0;
    let mut first = true;
    for c in line.chars() {
        let cw = char_width(c);
        if used + cw > w {
            let start = if first { 0 } else { lead };
            let mut carry: Vec<char> = Vec::new();
            if let Some(sp) = cur.iter().rposition(|&x| x == ' ').filter(|_| words) {
                // Any word that fits on a line moves whole to the next one.
                if cur.iter().take(sp).skip(start).any(|&x| x != ' ') {
                    carry = cur.split_off(sp + 1);
                }
            }
            let piece: String = cur.iter().collect();
            out.push(if words {
                piece.trim_end().to_string()
            } else {
                piece
            });
            cur = " ".repeat(lead).chars().chain(carry).collect();
            used = cur.iter().map(|&x| char_width(x)).sum();
            first = false;
        }
        cur.push(c);
        used += cw;
    }
    if cur.iter().any(|c| *c != ' ') {
        out.push(cur.into_iter().collect());
    }
    out
}

/// Whether a popup line shows row data (a JSON document, a quoted SQL value), which wraps at
/// the edge with every byte kept, rather than prose. An apostrophe inside a word ("runtime's")
/// is prose; a quote that opens or closes a value is data.
fn is_row_data(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    line.contains('{')
        || chars.iter().enumerate().any(|(i, &c)| {
            c == '\''
                && !(i > 0
                    && chars[i - 1].is_alphanumeric()
                    && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_wraps_between_words_even_with_an_apostrophe_or_a_long_word() {
        let text =
            "these rows alone would turn the runtime's next pass from rule 6 into reconciliation";
        for w in [20, 33, 47] {
            let out = wrap(text, w);
            let joined: Vec<&str> = out.iter().flat_map(|l| l.split_whitespace()).collect();
            assert_eq!(
                joined,
                text.split_whitespace().collect::<Vec<_>>(),
                "{w}: {out:?}"
            );
            assert!(out.iter().all(|l| width(l) <= w), "{w}: {out:?}");
        }
        // A quoted SQL value is row data: cut at the edge, nothing trimmed.
        assert_eq!(
            wrap("    error: NULL → 'a b c d'", 16),
            ["    error: NULL ", "      → 'a b c d", "      '"]
        );
    }

    #[test]
    fn wrap_keeps_the_indent_of_long_rows() {
        let out = wrap("    abcdefghijklmnop", 10);
        assert_eq!(out, ["    abcdef", "      ghij", "      klmn", "      op"]);
        assert_eq!(wrap("short", 10), ["short"]);
        // Prose breaks after a space near the edge.
        assert_eq!(
            wrap("the quick brown fox jumps", 12),
            ["the quick", "  brown fox", "  jumps"]
        );
        // Row data wraps at the edge, spaces kept.
        assert_eq!(
            wrap("{\"a\":\"b c d e f\"}", 10),
            ["{\"a\":\"b c ", "  d e f\"}"]
        );
    }

    #[test]
    fn enter_on_no_stays_and_yes_applies() {
        let mut c = Confirm::apply(
            "t".into(),
            vec![],
            "Yes, repair".into(),
            ActionKind::Repair,
            vec![],
        );
        assert!(matches!(c.on_action(Action::Confirm), Reply::StayWith(_)));
        assert_eq!(c.on_action(Action::SwitchButton), Reply::Stay);
        assert!(matches!(c.on_action(Action::Confirm), Reply::Apply { .. }));
        assert_eq!(
            c.on_action(Action::Cancel),
            Reply::CloseWith("cancelled: nothing written".into())
        );
    }
}
