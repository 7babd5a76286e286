//! `e`: where the export goes. A one-line path input prefilled with the default file name (in the
//! configured export directory), and a redact toggle (tab): tool arguments, tool results and
//! message text replaced by markers, as `turnscope export --redact`. ⏎ exports, esc cancels,
//! ^u erases. A path that exists, or whose directory does not, is refused in place; the worker
//! never replaces a file.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::messages::Target;
use crate::popups::env::Reply;
use crate::popups::widgets::centered;
use crate::text::{char_width, clean};
use crate::theme::Theme;

#[derive(Debug, Clone, PartialEq)]
pub struct ExportPath {
    pub target: Target,
    pub text: String,
    pub redact: bool,
    pub error: Option<String>,
}

impl ExportPath {
    pub fn new(target: Target, default: &Path) -> ExportPath {
        ExportPath {
            target,
            text: default.display().to_string(),
            redact: false,
            error: None,
        }
    }

    /// The path the popup proposes: in `dir` (the working directory where it is `.` or empty),
    /// the first of the names `name(1)`, `name(2)`, … not taken yet.
    pub fn default_path(dir: &Path, name: impl Fn(usize) -> String) -> PathBuf {
        let here = dir.as_os_str().is_empty() || dir == Path::new(".");
        (1..1000)
            .map(|n| {
                if here {
                    PathBuf::from(name(n))
                } else {
                    dir.join(name(n))
                }
            })
            .find(|p| !p.exists())
            .unwrap_or_else(|| dir.join("turnscope-export.json"))
    }

    /// The path typed, `~/` expanded.
    pub fn path(&self) -> PathBuf {
        let t = self.text.trim();
        match (t.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => PathBuf::from(t),
        }
    }

    /// Why the typed path cannot be written, said before anything is read.
    fn refusal(&self) -> Option<String> {
        let p = self.path();
        let shown = clean(&p.display().to_string());
        if self.text.trim().is_empty() {
            return Some("type a file path".into());
        }
        if p.is_dir() {
            return Some(format!("{shown} is a directory: add a file name"));
        }
        if p.exists() || p.is_symlink() {
            return Some(format!(
                "{shown} exists: an export never replaces a file, choose another name"
            ));
        }
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(d) = dir {
            if !d.is_dir() {
                return Some(format!(
                    "no directory {}: create it first, or choose another",
                    clean(&d.display().to_string())
                ));
            }
        }
        None
    }

    pub fn on_key(&mut self, ev: &KeyEvent) -> Reply {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Esc => return Reply::CloseWith("export cancelled".into()),
            KeyCode::Enter => {
                if let Some(why) = self.refusal() {
                    self.error = Some(why);
                    return Reply::Stay;
                }
                return Reply::Export {
                    target: self.target.clone(),
                    path: self.path(),
                    redact: self.redact,
                };
            }
            KeyCode::Tab | KeyCode::BackTab => self.redact = !self.redact,
            KeyCode::Backspace => {
                self.text.pop();
                self.error = None;
            }
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                self.error = None;
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if self.text.chars().count() < 4096 {
                    self.text.push(c);
                }
                self.error = None;
            }
            _ => {}
        }
        Reply::Stay
    }

    pub fn render(&self, f: &mut Frame, area: Rect, t: Theme) {
        let r = centered(area, 80, 9);
        let what = match &self.target {
            Target::Submission(id) => format!(
                "submission {}'s session",
                clean(&turnscope_core::journal::submission_rows::short_id(id))
            ),
            Target::Session(key) => format!("session {}", clean(key)),
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.title())
            .title(Span::styled(format!(" Export {what} "), t.title()));
        let inner = block.inner(r);
        f.render_widget(Clear, r);
        f.render_widget(block, r);
        let room = (inner.width as usize).saturating_sub(4);
        // The end of a long path: that is where the operator types.
        let shown: String = {
            let chars: Vec<char> = clean(&self.text).chars().collect();
            let mut w = 0;
            let mut start = chars.len();
            while start > 0 && w + char_width(chars[start - 1]) <= room.saturating_sub(1) {
                start -= 1;
                w += char_width(chars[start]);
            }
            chars[start..].iter().collect()
        };
        let mut lines = vec![
            Line::from(Span::styled(
                " Write the session as JSON to (readable by you only, never replacing a file):",
                t.dim(),
            )),
            Line::from(vec![
                Span::styled(" > ", t.key()),
                Span::raw(shown),
                Span::styled("▏", t.key()),
            ]),
            Line::from(vec![
                Span::styled(if self.redact { " [x]" } else { " [ ]" }, t.key()),
                Span::raw(" redact tool arguments, tool results and message text"),
            ]),
        ];
        lines.push(match &self.error {
            Some(e) => Line::from(Span::styled(format!(" ✗ {}", clean(e)), t.error())),
            None => Line::default(),
        });
        lines.push(Line::from(vec![
            Span::styled(" ⏎", t.key()),
            Span::styled(" export", t.dim()),
            Span::styled("   tab", t.key()),
            Span::styled(" redact on/off", t.dim()),
            Span::styled("   esc", t.key()),
            Span::styled(" cancel", t.dim()),
        ]));
        f.render_widget(Paragraph::new(lines), inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn a_path_that_exists_or_has_no_directory_is_refused_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join("taken.json");
        std::fs::write(&taken, "x").unwrap();
        let mut p = ExportPath::new(Target::Session("s".into()), &taken);
        assert_eq!(p.on_key(&key(KeyCode::Enter)), Reply::Stay);
        assert!(
            p.error.as_deref().unwrap().contains("exists"),
            "{:?}",
            p.error
        );
        p.text = dir.path().join("nope/x.json").display().to_string();
        assert_eq!(p.on_key(&key(KeyCode::Enter)), Reply::Stay);
        assert!(p.error.as_deref().unwrap().contains("no directory"));
        p.text = dir.path().join("ok.json").display().to_string();
        p.on_key(&key(KeyCode::Tab));
        assert_eq!(
            p.on_key(&key(KeyCode::Enter)),
            Reply::Export {
                target: Target::Session("s".into()),
                path: dir.path().join("ok.json"),
                redact: true
            }
        );
    }
}
