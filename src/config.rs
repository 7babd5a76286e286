//! The configuration file: `--config PATH`, else `$XDG_CONFIG_HOME/turnscope/config.toml`, else
//! `~/.config/turnscope/config.toml`. A missing file is the defaults. Precedence: flags, then
//! environment variables, then the file, then the defaults. Unknown keys and bad values are errors
//! that name the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::tui::{Overrides, Palette};

/// The commented default file, printed by `turnscope config --print-default` (`assets/config.toml`,
/// embedded: the binary needs no file beside it).
pub const DEFAULT_FILE: &str = include_str!("../assets/config.toml");

/// The file as written: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    db: Option<PathBuf>,
    refresh: Option<Refresh>,
    theme: Option<Palette>,
    read_only_default: Option<bool>,
    operator: Option<String>,
    context_window: Option<u64>,
    #[serde(default)]
    keys: BTreeMap<String, toml::Spanned<String>>,
}

/// A refresh interval, validated while parsing so the error carries the line.
#[derive(Debug)]
struct Refresh(Duration);

impl<'de> Deserialize<'de> for Refresh {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::cli::parse_duration(&s)
            .map(Refresh)
            .map_err(serde::de::Error::custom)
    }
}

/// The configuration after the file (not yet the flags and environment).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub db: Option<PathBuf>,
    pub refresh: Duration,
    pub theme: Palette,
    pub read_only_default: bool,
    pub operator: Option<String>,
    pub context_window: Option<u64>,
    pub keys: Overrides,
    /// Where it was read from (`None`: no file, the defaults).
    pub source: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            db: None,
            refresh: Duration::from_secs(2),
            theme: Palette::Dark,
            read_only_default: true,
            operator: None,
            context_window: None,
            keys: Overrides::default(),
            source: None,
        }
    }
}

/// A configuration error: the file, the line (1-based) when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// Parse a configuration file's text. `path` is only used in errors.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let err = |line: Option<usize>, message: String| ConfigError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, e.message().trim().to_string())
    })?;
    let mut pairs = Vec::new();
    for (name, key) in &raw.keys {
        let line = line_of(text, key.span().start);
        Overrides::parse([(name.as_str(), key.get_ref().as_str())])
            .map_err(|m| err(Some(line), m))?;
        pairs.push((name.as_str(), key.get_ref().as_str(), line));
    }
    let keys =
        Overrides::parse(pairs.iter().map(|(n, k, _)| (*n, *k))).map_err(|m| err(None, m))?;
    // Two actions on one key would make one of them unreachable.
    for (i, (a, ka)) in keys.0.iter().enumerate() {
        if let Some(j) = (i + 1..keys.0.len()).find(|&j| keys.0[j].1 == *ka) {
            let b = &keys.0[j].0;
            // The later of the two lines: that is the one just added.
            let line = pairs.get(i).zip(pairs.get(j)).map(|(p, q)| p.2.max(q.2));
            return Err(err(
                line,
                format!(
                    "[keys]: {} and {} are both bound to the same key",
                    crate::tui::action_name(*a),
                    crate::tui::action_name(*b)
                ),
            ));
        }
    }
    let d = Config::default();
    Ok(Config {
        db: raw.db,
        refresh: raw.refresh.map_or(d.refresh, |r| r.0),
        theme: raw.theme.unwrap_or(d.theme),
        read_only_default: raw.read_only_default.unwrap_or(d.read_only_default),
        operator: raw.operator,
        context_window: raw.context_window,
        keys,
        source: Some(path.to_path_buf()),
    })
}

/// Where the file is looked for without `--config`.
pub fn default_path() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(x) = nonempty("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(x).join("turnscope").join("config.toml"));
    }
    nonempty("HOME").map(|h| {
        PathBuf::from(h)
            .join(".config")
            .join("turnscope")
            .join("config.toml")
    })
}

/// Load the configuration: `explicit` (`--config`) must exist; the default path may be missing.
pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let (path, required) = match explicit {
        Some(p) => (p.to_path_buf(), true),
        None => match default_path() {
            Some(p) => (p, false),
            None => return Ok(Config::default()),
        },
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text, &path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(Config::default()),
        Err(e) => Err(ConfigError {
            path,
            line: None,
            message: format!("cannot read the configuration file: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_file_parses_to_the_defaults() {
        let c = parse(DEFAULT_FILE, Path::new("d.toml")).unwrap();
        assert_eq!(Config { source: None, ..c }, Config::default());
    }

    #[test]
    fn every_commented_example_in_the_default_file_is_valid() {
        // Uncomment `# key = value` lines (prose comments have no ` = "` or ` = <digit>`).
        let example: String = DEFAULT_FILE
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest)
                    if rest.split_once(" = ").is_some_and(|(k, v)| {
                        !k.contains(' ')
                            && (v.starts_with('"') || v.starts_with(|c: char| c.is_ascii_digit()))
                    }) =>
                {
                    rest
                }
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let c = parse(&example, Path::new("example.toml")).unwrap();
        assert_eq!(c.db.as_deref(), Some(Path::new("/var/lib/flue/journal.db")));
        assert_eq!(c.operator.as_deref(), Some("alice@ops"));
        assert_eq!(c.context_window, Some(200000));
        assert_eq!(c.keys.0.len(), 2, "{:?}", c.keys);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("refresh = \"2s\"\n\ncolour = 1\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("colour"), "{e}");
        let e = parse("theme = \"pink\"\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = parse("\nrefresh = \"fast\"\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("fast"), "{e}");
        let e = parse("[keys]\nquit = \"x\"\nfly = \"f\"\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("fly"), "{e}");
        let e = parse("[keys]\nquit = \"ctrl-\"\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
    }
}
