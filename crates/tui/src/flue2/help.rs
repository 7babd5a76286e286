//! The 2.x help: every key the 2.x screens answer and what it does, the write keys only in write
//! mode. It takes every key while open: the moving keys scroll it when it is taller than the
//! terminal (as beta.7's help scrolls), any other key closes it, and quit still quits.

use super::*;

/// The open help's scroll, and as last drawn its height (a page) and its last scroll (`None`
/// before it is drawn: the drawing then clamps).
#[derive(Debug, Default)]
pub(super) struct HelpView {
    scroll: usize,
    page: usize,
    last: Option<usize>,
}

impl Flue2App {
    /// A key while the help is open.
    pub(super) fn help_key(&mut self, ev: KeyEvent) {
        let action = keymap::lookup_with(&[Ctx::Nav, Ctx::Global], &ev, false, &self.cfg.keys);
        let Some(view) = self.help.as_mut() else {
            return;
        };
        let page = view.page.max(1);
        let last = view.last.unwrap_or(usize::MAX);
        match action {
            Some(Action::Down) => view.scroll = (view.scroll + 1).min(last),
            Some(Action::Up) => view.scroll = view.scroll.saturating_sub(1),
            Some(Action::PageDown) => view.scroll = view.scroll.saturating_add(page).min(last),
            Some(Action::PageUp) => view.scroll = view.scroll.saturating_sub(page),
            Some(Action::Top) => view.scroll = 0,
            Some(Action::Bottom) => view.scroll = last,
            Some(Action::Quit) => {
                self.help = None;
                self.quit = true;
            }
            _ => self.help = None,
        }
    }

    pub(super) fn draw_help(&mut self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let mut lines = vec![
            Line::styled(
                if self.cfg.write {
                    "A flue 2.x journal, write mode: the submissions, their detail, four actions, undo."
                } else {
                    "A flue 2.x journal, read-only: the submissions, their detail, sessions, incidents, audit."
                },
                t.title(),
            ),
            Line::styled(
                "s sessions · f find one (id or text) · I incidents · a audit trail · esc back",
                t.dim(),
            ),
            Line::raw(""),
        ];
        for (a, text) in HANDLED {
            lines.push(Line::from(vec![
                Span::styled(format!("{:<10}", self.key_label(*a)), t.key()),
                Span::raw(*text),
            ]));
        }
        // The write keys exist only in write mode (k9s: dangerous keys absent in read-only).
        if self.cfg.write {
            for (k, text) in write::KEYS {
                lines.push(Line::from(vec![
                    Span::styled(format!("{k:<10}"), t.key()),
                    Span::raw(text),
                ]));
            }
            for (key, text) in [
                (
                    self.write_key_label(Action::ToggleMark),
                    "mark or unmark the row; on incidents, every submission of the worker",
                ),
                (
                    self.write_key_label(Action::MarkAll),
                    "mark every row shown (the view and the / query)",
                ),
                (
                    self.write_key_label(Action::MarkRange),
                    "mark the rows from the last one marked to the cursor",
                ),
                (self.write_key_label(Action::ClearMarks), "unmark every row"),
                (
                    "X/Q/E/F".into(),
                    "with marks: act on every marked row, one batch (previewed)",
                ),
            ] {
                lines.push(Line::from(vec![
                    Span::styled(format!("{key:<10}"), t.key()),
                    Span::raw(text),
                ]));
            }
            lines.push(Line::from(vec![
                Span::styled(format!("{:<10}", "u / U"), t.key()),
                Span::raw("audit trail: undo the record / its bulk apply (asks why, previewed)"),
            ]));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!(
                "{} marks the trailing uncommitted tool batch the classification names",
                PARTIAL_MARK
            ),
            t.partial(),
        ));
        let h = (lines.len() as u16 + 2).min(area.height);
        let w = 84.min(area.width);
        let r = Rect {
            x: area.x + (area.width - w) / 2,
            y: area.y + (area.height - h) / 2,
            width: w,
            height: h,
        };
        let page = usize::from(h.saturating_sub(2));
        let last = lines.len().saturating_sub(page);
        let Some(view) = self.help.as_mut() else {
            return;
        };
        view.page = page;
        view.last = Some(last);
        view.scroll = view.scroll.min(last);
        let title = if last == 0 {
            " help (any key closes) ".to_string()
        } else {
            format!(
                " help · j/k scroll · any other key closes · {}–{} of {} ",
                view.scroll + 1,
                view.scroll + page,
                lines.len()
            )
        };
        let shown: Vec<Line> = lines.into_iter().skip(view.scroll).take(page).collect();
        f.render_widget(Clear, r);
        f.render_widget(
            Paragraph::new(shown).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(t.border(true))
                    .title(title),
            ),
            r,
        );
    }
}
