//! Styles. With `NO_COLOR` set only modifiers (bold, reverse, dim, underline) are used; every
//! meaning that colour carries is also carried by a text marker, so nothing is lost.

use ratatui::style::{Color, Modifier, Style};

pub use crate::config::Palette;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// False with `NO_COLOR`: modifiers only.
    pub color: bool,
    pub palette: Palette,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            color: true,
            palette: Palette::Dark,
        }
    }
}

/// Whether `NO_COLOR` is set to a non-empty value (no-color.org).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Theme {
        Theme::with_palette(Palette::Dark)
    }

    /// This palette, without colour when `NO_COLOR` is set.
    pub fn with_palette(palette: Palette) -> Theme {
        Theme {
            color: !no_color_env(),
            palette,
        }
    }

    /// The colour for this palette: (dark, light, high-contrast).
    fn pick(&self, dark: Color, light: Color, hc: Color) -> Color {
        match self.palette {
            Palette::Dark => dark,
            Palette::Light => light,
            Palette::HighContrast => hc,
        }
    }

    /// A foreground role, named by its dark-theme colour.
    fn role(&self, c: Color) -> Color {
        match c {
            Color::Cyan => self.pick(Color::Cyan, Color::Blue, Color::LightCyan),
            Color::Yellow => self.pick(Color::Yellow, Color::Rgb(150, 80, 0), Color::LightYellow),
            Color::Green => self.pick(Color::Green, Color::Rgb(0, 110, 0), Color::LightGreen),
            Color::Red => self.pick(Color::Red, Color::Rgb(170, 0, 0), Color::LightRed),
            Color::Magenta => {
                self.pick(Color::Magenta, Color::Rgb(140, 0, 140), Color::LightMagenta)
            }
            Color::Blue => self.pick(Color::Blue, Color::Blue, Color::LightBlue),
            Color::DarkGray => self.pick(Color::DarkGray, Color::Gray, Color::Gray),
            other => other,
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            let s = Style::new().fg(self.role(c));
            if self.palette == Palette::HighContrast {
                s.add_modifier(Modifier::BOLD)
            } else {
                s
            }
        } else {
            Style::new()
        }
    }

    pub fn base(&self) -> Style {
        Style::new()
    }

    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(self.role(Color::DarkGray))
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn selected(&self) -> Style {
        if self.color {
            Style::new()
                .bg(self.pick(Color::Blue, Color::LightBlue, Color::White))
                .fg(self.pick(Color::White, Color::Black, Color::Black))
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Selected row of a pane without focus.
    pub fn selected_unfocused(&self) -> Style {
        if self.color {
            match self.palette {
                Palette::Dark => Style::new().bg(Color::DarkGray),
                Palette::Light => Style::new().bg(Color::Gray).fg(Color::Black),
                Palette::HighContrast => Style::new()
                    .bg(Color::Gray)
                    .fg(Color::Black)
                    .add_modifier(Modifier::UNDERLINED),
            }
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => self.fg(Color::Cyan),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, _) => self.dim(),
        }
    }

    /// The trailing partial batch: the thing an operator must see first.
    pub fn partial(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub fn ok(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn matched(&self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn badge_read_only(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Green)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// `--write` mode: loud, and distinct from READ-ONLY also without colour (the text differs).
    pub fn badge_write(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED)
        }
    }

    /// A row marked for a bulk action.
    pub fn marked(&self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn banner(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// A row whose state just changed (flashes once).
    pub fn flash(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Magenta).fg(Color::White)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Style of a status (or verdict) word.
    pub fn status(&self, s: &str) -> Style {
        match s {
            "running" | "stuck" => self.fg(Color::Yellow),
            "failed" | "malformed" => self.fg(Color::Red),
            "settled" | "completed" => self.fg(Color::Green),
            "queued" | "pending" | "terminalizing" | "publishing" => self.fg(Color::Blue),
            "live" => self.fg(Color::Cyan),
            _ => Style::new(),
        }
    }
}
