//! The README's pictures, from real captures: the built binary runs in tmux on a demo database
//! (its clock pinned, so the pictures change only when the TUI does), `tmux capture-pane -e`
//! reads the screen with its colours, and each screen is rendered to an SVG under `assets/`.
//!
//! ```sh
//! cargo build && cargo run --example screenshots -- target/debug/turnscope assets/screenshots
//! ```
//!
//! Needs tmux. The colours are the terminal's 16 named colours as a common dark scheme renders
//! them, and `#rrggbb` colours as they are.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// "Now" for the demo database and the TUI (the same as the TUI snapshot tests').
const NOW_MS: &str = "1796000000000";
const WIDTH: usize = 120;
const HEIGHT: usize = 36;

/// The pictures: a file name, a caption, and the keys that lead there from the home screen.
const SHOTS: &[(&str, &str, &[&str])] = &[
    ("home.svg", "the stuck-submission list", &[]),
    (
        "detail.svg",
        "a submission's history tree, verdict and plan",
        &["Down", "Down", "Enter"],
    ),
];

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let bin = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "target/debug/turnscope".into()),
    );
    let out_dir = PathBuf::from(args.next().unwrap_or_else(|| "assets/screenshots".into()));
    if !bin.exists() {
        return Err(format!(
            "no turnscope binary at {} (run `cargo build` first)",
            bin.display()
        ));
    }
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    // A fixed path: it is in the pictures' title bar.
    let work = std::env::temp_dir().join("turnscope-shots");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let db = work.join("demo.db");
    let demo = Command::new(&bin)
        .args(["demo", db.to_str().unwrap(), "--json"])
        .env("TURNSCOPE_NOW_MS", NOW_MS)
        .output()
        .map_err(|e| e.to_string())?;
    if !demo.status.success() {
        return Err(String::from_utf8_lossy(&demo.stderr).into_owned());
    }
    for (file, caption, keys) in SHOTS {
        let screen = capture(&bin, &db, keys)?;
        let svg = render_svg(&screen, caption);
        let path = out_dir.join(file);
        std::fs::write(&path, svg).map_err(|e| e.to_string())?;
        println!("wrote {}", path.display());
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tmux(args: &[&str]) -> Result<String, String> {
    // A server of its own, so other tmux sessions neither disturb nor end it.
    let out = Command::new("tmux")
        .args(["-L", "turnscope-screenshots"])
        .args(args)
        .output()
        .map_err(|e| format!("tmux: {e} (apt-get install -y tmux)"))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Run the TUI, press `keys`, and return the screen with its SGR colour sequences.
fn capture(bin: &Path, db: &Path, keys: &[&str]) -> Result<String, String> {
    let name = format!("turnscope-shot-{}", std::process::id());
    let script = format!(
        "TURNSCOPE_NOW_MS={NOW_MS} NO_COLOR= '{}' --db '{}'; sleep 30",
        bin.display(),
        db.display()
    );
    let (w, h) = (WIDTH.to_string(), HEIGHT.to_string());
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &name,
        "-x",
        &w,
        "-y",
        &h,
        "sh",
        "-c",
        &script,
    ])?;
    let result = (|| {
        wait_for(&name, "↻")?;
        for k in keys {
            tmux(&["send-keys", "-t", &name, k])?;
            std::thread::sleep(Duration::from_millis(300));
        }
        std::thread::sleep(Duration::from_millis(700));
        tmux(&["capture-pane", "-e", "-p", "-t", &name])
    })();
    let _ = tmux(&["kill-session", "-t", &name]);
    result
}

fn wait_for(name: &str, needle: &str) -> Result<(), String> {
    for _ in 0..200 {
        if tmux(&["capture-pane", "-p", "-t", name])?.contains(needle) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("the TUI did not show {needle:?} within 20 s"))
}

// ----- the screen as cells ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Colour {
    #[default]
    Default,
    Indexed(u8),
    Rgb(u8, u8, u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pen {
    fg: Colour,
    bg: Colour,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    reverse: bool,
}

impl Pen {
    /// Apply one SGR sequence's parameters.
    fn apply(&mut self, params: &[u16]) {
        let mut i = 0;
        let params = if params.is_empty() { &[0][..] } else { params };
        while i < params.len() {
            match params[i] {
                0 => *self = Pen::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                7 => self.reverse = true,
                22 => (self.bold, self.dim) = (false, false),
                23 => self.italic = false,
                24 => self.underline = false,
                27 => self.reverse = false,
                n @ 30..=37 => self.fg = Colour::Indexed((n - 30) as u8),
                39 => self.fg = Colour::Default,
                n @ 40..=47 => self.bg = Colour::Indexed((n - 40) as u8),
                49 => self.bg = Colour::Default,
                n @ 90..=97 => self.fg = Colour::Indexed((n - 90 + 8) as u8),
                n @ 100..=107 => self.bg = Colour::Indexed((n - 100 + 8) as u8),
                n @ (38 | 48) => {
                    let c = match params.get(i + 1) {
                        Some(5) => {
                            let c = params.get(i + 2).map(|&v| Colour::Indexed(v as u8));
                            i += 2;
                            c
                        }
                        Some(2) => {
                            let g = |k: usize| params.get(i + k).copied().unwrap_or(0) as u8;
                            let c = Some(Colour::Rgb(g(2), g(3), g(4)));
                            i += 4;
                            c
                        }
                        _ => None,
                    };
                    if let Some(c) = c {
                        if n == 38 {
                            self.fg = c;
                        } else {
                            self.bg = c;
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The captured screen: one row of (character, pen) per line.
fn parse_screen(text: &str) -> Vec<Vec<(char, Pen)>> {
    let mut rows = Vec::new();
    let mut pen = Pen::default();
    for line in text.lines().take(HEIGHT) {
        let mut row = Vec::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut seq = String::new();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            if c == 'm' {
                                let params: Vec<u16> = seq
                                    .split([';', ':'])
                                    .filter(|p| !p.is_empty())
                                    .filter_map(|p| p.parse().ok())
                                    .collect();
                                pen.apply(&params);
                            }
                            break;
                        }
                        seq.push(c);
                    }
                }
                continue;
            }
            row.push((c, pen));
        }
        rows.push(row);
    }
    rows
}

// ----- SVG -------------------------------------------------------------------------------------

// DejaVu Sans Mono advances 0.602 em: 8.43 px at 14 px.
const CELL_W: f64 = 8.43;
const CELL_H: f64 = 17.0;
const DEFAULT_FG: &str = "#d0d0d0";
const DEFAULT_BG: &str = "#1c1c1c";
/// The 16 named colours (a common dark terminal scheme).
const ANSI: [&str; 16] = [
    "#1c1c1c", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
];

fn hex(c: Colour, default: &str) -> String {
    match c {
        Colour::Default => default.to_string(),
        Colour::Indexed(n) if n < 16 => ANSI[n as usize].to_string(),
        Colour::Indexed(n) if n >= 232 => {
            let v = 8 + 10 * (n - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
        Colour::Indexed(n) => {
            let n = n - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(n / 36),
                level((n / 6) % 6),
                level(n % 6)
            )
        }
        Colour::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
    }
}

fn escape(c: char) -> String {
    match c {
        '&' => "&amp;".into(),
        '<' => "&lt;".into(),
        '>' => "&gt;".into(),
        c => c.to_string(),
    }
}

/// One `<rect>` per run of equal background and one `<text>` per word of equal pen.
fn render_svg(screen: &str, caption: &str) -> String {
    let rows = parse_screen(screen);
    let (w, h) = (WIDTH as f64 * CELL_W, HEIGHT as f64 * CELL_H);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.1} {h:.1}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">"#
    );
    let _ = writeln!(svg, "<title>turnscope: {caption}</title>");
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>"#
    );
    for (y, row) in rows.iter().enumerate() {
        let colours: Vec<(String, String)> = row
            .iter()
            .map(|(_, p)| {
                let (mut fg, mut bg) = (hex(p.fg, DEFAULT_FG), hex(p.bg, DEFAULT_BG));
                if p.reverse {
                    std::mem::swap(&mut fg, &mut bg);
                }
                (fg, bg)
            })
            .collect();
        let mut x = 0;
        while x < row.len() {
            let end = (x..row.len())
                .find(|&i| colours[i].1 != colours[x].1)
                .unwrap_or(row.len());
            if colours[x].1 != DEFAULT_BG {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{CELL_H}" fill="{}"/>"#,
                    x as f64 * CELL_W,
                    y as f64 * CELL_H,
                    (end - x) as f64 * CELL_W,
                    colours[x].1
                );
            }
            x = end;
        }
        let mut x = 0;
        while x < row.len() {
            let same = |i: usize| {
                row[i].1.bold == row[x].1.bold
                    && row[i].1.dim == row[x].1.dim
                    && row[i].1.italic == row[x].1.italic
                    && row[i].1.underline == row[x].1.underline
                    && colours[i].0 == colours[x].0
            };
            let end = (x..row.len()).find(|&i| !same(i)).unwrap_or(row.len());
            let p = row[x].1;
            let mut attrs = format!(r#" fill="{}""#, colours[x].0);
            if p.bold {
                attrs.push_str(r#" font-weight="bold""#);
            }
            if p.dim {
                attrs.push_str(r#" fill-opacity="0.6""#);
            }
            if p.italic {
                attrs.push_str(r#" font-style="italic""#);
            }
            if p.underline {
                attrs.push_str(r#" text-decoration="underline""#);
            }
            // One <text> per word, placed on its first cell: renderers that ignore per-glyph x
            // lists still keep the grid, and a monospace font keeps each word on it.
            let mut i = x;
            while i < end {
                if row[i].0 == ' ' {
                    i += 1;
                    continue;
                }
                let word_end = (i..end).find(|&k| row[k].0 == ' ').unwrap_or(end);
                let word: String = row[i..word_end].iter().map(|(c, _)| escape(*c)).collect();
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}"{attrs}>{word}</text>"#,
                    i as f64 * CELL_W,
                    y as f64 * CELL_H + CELL_H * 0.78
                );
                i = word_end;
            }
            x = end;
        }
    }
    svg.push_str("</svg>\n");
    svg
}
