//! The 2.x help's scroll: the moving keys scroll it when it is taller than the terminal (as
//! beta.7's help scrolls), any other key closes it, and quit still quits. Its lines (every key the
//! 2.x screens answer, the write keys only in write mode) are the app's (`draw.rs`).

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::keymap::Action;
use crate::theme::Theme;

/// The open help's scroll, and as last drawn its height (a page) and its last scroll (`None`
/// before it is drawn: the drawing then clamps).
#[derive(Debug, Default)]
pub(super) struct HelpView {
    scroll: usize,
    page: usize,
    last: Option<usize>,
}

/// What a key does to the open help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HelpKey {
    Stay,
    Close,
    Quit,
}

impl HelpView {
    /// The key's action (the navigation and global keymap's) while the help is open.
    pub(super) fn on_action(&mut self, action: Option<Action>) -> HelpKey {
        let page = self.page.max(1);
        let last = self.last.unwrap_or(usize::MAX);
        match action {
            Some(Action::Down) => self.scroll = (self.scroll + 1).min(last),
            Some(Action::Up) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::PageDown) => self.scroll = self.scroll.saturating_add(page).min(last),
            Some(Action::PageUp) => self.scroll = self.scroll.saturating_sub(page),
            Some(Action::Top) => self.scroll = 0,
            Some(Action::Bottom) => self.scroll = last,
            Some(Action::Quit) => return HelpKey::Quit,
            _ => return HelpKey::Close,
        }
        HelpKey::Stay
    }

    /// `lines` in a popup over `area`, as tall as they are or the screen, from the scroll.
    pub(super) fn draw(&mut self, f: &mut Frame, area: Rect, lines: Vec<Line<'static>>, t: Theme) {
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
        self.page = page;
        self.last = Some(last);
        self.scroll = self.scroll.min(last);
        let title = if last == 0 {
            " help (any key closes) ".to_string()
        } else {
            format!(
                " help · j/k scroll · any other key closes · {}–{} of {} ",
                self.scroll + 1,
                self.scroll + page,
                lines.len()
            )
        };
        let shown: Vec<Line> = lines.into_iter().skip(self.scroll).take(page).collect();
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
