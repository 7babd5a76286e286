//! Styles. With `NO_COLOR` set only modifiers (bold, reverse, dim, underline) are used; every
//! meaning that colour carries is also carried by a text marker, so nothing is lost. The colours of
//! each palette are data: `assets/themes.toml`, embedded in the binary.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::messages::ItemDisposition;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::recovery::reconciler::DispositionKind;
use turnscope_store::RowFilter;

/// The theme definitions (`assets/themes.toml`).
pub const THEMES_FILE: &str = include_str!("../../../assets/themes.toml");

/// One palette's colours, by role (the roles are described in `assets/themes.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Colors {
    /// Every coloured text also bold.
    pub bold: bool,
    #[serde(deserialize_with = "color")]
    pub accent: Color,
    #[serde(deserialize_with = "color")]
    pub warn: Color,
    #[serde(deserialize_with = "color")]
    pub ok: Color,
    #[serde(deserialize_with = "color")]
    pub error: Color,
    #[serde(rename = "match", deserialize_with = "color")]
    pub matched: Color,
    #[serde(deserialize_with = "color")]
    pub info: Color,
    #[serde(deserialize_with = "color")]
    pub dim: Color,
    #[serde(deserialize_with = "color")]
    pub badge_text: Color,
    pub selected: RowColors,
    pub selected_unfocused: RowColors,
}

/// A highlighted row: its background, optionally its text colour and an underline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowColors {
    #[serde(default, deserialize_with = "some_color")]
    pub fg: Option<Color>,
    #[serde(deserialize_with = "color")]
    pub bg: Color,
    #[serde(default)]
    pub underline: bool,
}

impl RowColors {
    fn style(&self) -> Style {
        let mut s = Style::new().bg(self.bg);
        if let Some(fg) = self.fg {
            s = s.fg(fg);
        }
        if self.underline {
            s = s.add_modifier(Modifier::UNDERLINED);
        }
        s
    }
}

fn color<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Color, D::Error> {
    let s = String::deserialize(d)?;
    s.parse::<Color>()
        .map_err(|_| serde::de::Error::custom(format!("unknown colour {s:?}")))
}

fn some_color<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Color>, D::Error> {
    color(d).map(Some)
}

/// The three palettes of a themes file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Themes {
    pub dark: Colors,
    pub light: Colors,
    #[serde(rename = "high-contrast")]
    pub high_contrast: Colors,
}

/// Parse a themes file (the embedded one is checked by a test, so this is for that test and for
/// anyone editing `assets/themes.toml`).
pub fn parse_themes(text: &str) -> Result<Themes, String> {
    toml::from_str(text).map_err(|e| e.to_string())
}

fn themes() -> &'static Themes {
    static THEMES: OnceLock<Themes> = OnceLock::new();
    THEMES.get_or_init(|| parse_themes(THEMES_FILE).expect("assets/themes.toml parses (tested)"))
}

pub use crate::config::Palette;

impl Palette {
    /// This palette's colours from `assets/themes.toml`.
    pub fn colors(self) -> &'static Colors {
        let t = themes();
        match self {
            Palette::Dark => &t.dark,
            Palette::Light => &t.light,
            Palette::HighContrast => &t.high_contrast,
        }
    }
}

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

    /// A foreground role, named by its dark-theme colour.
    fn role(&self, c: Color) -> Color {
        let t = self.palette.colors();
        match c {
            Color::Cyan => t.accent,
            Color::Yellow => t.warn,
            Color::Green => t.ok,
            Color::Red => t.error,
            Color::Magenta => t.matched,
            Color::Blue => t.info,
            Color::DarkGray => t.dim,
            other => other,
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            let s = Style::new().fg(self.role(c));
            if self.palette.colors().bold {
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
            self.palette
                .colors()
                .selected
                .style()
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Selected row of a pane without focus.
    pub fn selected_unfocused(&self) -> Style {
        if self.color {
            self.palette.colors().selected_unfocused.style()
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
                .fg(self.palette.colors().badge_text)
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
            Style::new()
                .bg(Color::Magenta)
                .fg(self.palette.colors().badge_text)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Style of a submission status: a damaged one stays plain.
    pub fn status(&self, s: &SubmissionStatus) -> Style {
        match s {
            SubmissionStatus::Running => self.fg(Color::Yellow),
            SubmissionStatus::Settled => self.fg(Color::Green),
            SubmissionStatus::Queued | SubmissionStatus::Terminalizing => self.fg(Color::Blue),
            SubmissionStatus::Other(_) => Style::new(),
        }
    }

    /// Style of a verdict, by the plan's disposition (the colours of the statuses it follows).
    pub fn disposition(&self, d: DispositionKind) -> Style {
        match d {
            DispositionKind::Reconcile => self.fg(Color::Yellow),
            DispositionKind::Failed | DispositionKind::Malformed => self.fg(Color::Red),
            DispositionKind::Completed => self.fg(Color::Green),
            DispositionKind::Pending | DispositionKind::Publishing => self.fg(Color::Blue),
            DispositionKind::Live => self.fg(Color::Cyan),
            DispositionKind::NoLease
            | DispositionKind::UnknownStatus
            | DispositionKind::Unreadable => Style::new(),
        }
    }

    /// Style of a list row's verdict: plain while it is computed or unreadable.
    pub fn item(&self, d: ItemDisposition) -> Style {
        match d {
            ItemDisposition::Planned(k) => self.disposition(k),
            ItemDisposition::Computing | ItemDisposition::Error => Style::new(),
        }
    }

    /// Style of a list filter's count in the header.
    pub fn filter(&self, f: RowFilter) -> Style {
        match f {
            RowFilter::Failed => self.disposition(DispositionKind::Failed),
            f => f.status().map_or(Style::new(), |s| self.status(&s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fg: Option<Color>, bg: Color, underline: bool) -> RowColors {
        RowColors { fg, bg, underline }
    }

    /// The palettes as they were written in code before they became data: the snapshots of the
    /// TUI depend on these staying exactly the same.
    #[test]
    fn every_theme_parses_to_the_palettes_the_tui_was_built_with() {
        let t = parse_themes(THEMES_FILE).unwrap();
        assert_eq!(
            t.dark,
            Colors {
                bold: false,
                accent: Color::Cyan,
                warn: Color::Yellow,
                ok: Color::Green,
                error: Color::Red,
                matched: Color::Magenta,
                info: Color::Blue,
                dim: Color::DarkGray,
                badge_text: Color::White,
                selected: row(Some(Color::White), Color::Blue, false),
                selected_unfocused: row(None, Color::DarkGray, false),
            }
        );
        assert_eq!(
            t.light,
            Colors {
                bold: false,
                accent: Color::Blue,
                warn: Color::Rgb(150, 80, 0),
                ok: Color::Rgb(0, 110, 0),
                error: Color::Rgb(170, 0, 0),
                matched: Color::Rgb(140, 0, 140),
                info: Color::Blue,
                dim: Color::Rgb(108, 108, 108),
                badge_text: Color::Black,
                selected: row(Some(Color::Black), Color::LightBlue, false),
                selected_unfocused: row(Some(Color::Black), Color::Gray, false),
            }
        );
        assert_eq!(
            t.high_contrast,
            Colors {
                bold: true,
                accent: Color::LightCyan,
                warn: Color::LightYellow,
                ok: Color::LightGreen,
                error: Color::LightRed,
                matched: Color::LightMagenta,
                info: Color::LightBlue,
                dim: Color::Gray,
                badge_text: Color::White,
                selected: row(Some(Color::Black), Color::White, false),
                selected_unfocused: row(Some(Color::Black), Color::Gray, true),
            }
        );
        for p in [Palette::Dark, Palette::Light, Palette::HighContrast] {
            let theme = Theme {
                color: true,
                palette: p,
            };
            assert_eq!(theme.selected().add_modifier, Modifier::BOLD, "{p:?}");
        }
    }

    #[test]
    fn a_bad_colour_or_a_missing_role_names_the_problem() {
        let bad = THEMES_FILE.replacen("accent = \"cyan\"", "accent = \"teal-ish\"", 1);
        let e = parse_themes(&bad).unwrap_err();
        assert!(e.contains("unknown colour \"teal-ish\""), "{e}");
        let missing = THEMES_FILE.replacen("ok = \"green\"\n", "", 1);
        let e = parse_themes(&missing).unwrap_err();
        assert!(e.contains("ok"), "{e}");
    }
}
