//! The configuration file: `--config PATH`, else `$XDG_CONFIG_HOME/turnscope/config.toml`, else
//! `~/.config/turnscope/config.toml`. A missing file is the defaults. Precedence: flags, then
//! environment variables, then the file, then the defaults. Unknown keys and bad values are errors
//! that name the line.
//!
//! Settings as plain data: a leaf that imports nothing from the crate. Key overrides stay strings
//! here (with their line); the keymap that knows action names and key syntax checks them when the
//! command line is resolved (`cli::keys`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The colour palettes (`theme` in the configuration file, `--theme`): only the name; the styles
/// are the TUI's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Palette {
    /// For dark terminal backgrounds (the default).
    #[default]
    Dark,
    /// For light terminal backgrounds: no yellow or white text.
    Light,
    /// Bright colours, bold keys and borders, no dark grey.
    HighContrast,
}

impl Palette {
    pub fn as_str(self) -> &'static str {
        match self {
            Palette::Dark => "dark",
            Palette::Light => "light",
            Palette::HighContrast => "high-contrast",
        }
    }
}

/// One `[keys]` line as written: `action = "key"`, not yet checked against the keymap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    pub action: String,
    pub key: String,
    /// The line (1-based) in the file, for errors; 0 when not read from a file.
    pub line: usize,
}

/// The commented default file, printed by `turnscope config --print-default` (`assets/config.toml`,
/// embedded: the binary needs no file beside it).
pub const DEFAULT_FILE: &str = include_str!("../../../assets/config.toml");

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
    flue_version: Option<toml::Spanned<String>>,
    #[serde(default)]
    keys: BTreeMap<String, toml::Spanned<String>>,
}

/// A refresh interval, validated while parsing so the error carries the line.
#[derive(Debug)]
struct Refresh(Duration);

impl<'de> Deserialize<'de> for Refresh {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
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
    /// The flue 2.x release whose classifier judges a 2.x journal (like `--flue-version`),
    /// checked to be one turnscope has; unused on a beta.7 journal.
    pub flue_version: Option<String>,
    /// `[keys]` in file order.
    pub keys: Vec<KeyOverride>,
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
            flue_version: None,
            keys: Vec::new(),
            source: None,
        }
    }
}

/// A configuration error: the file, the line (1-based) when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

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
    let mut keys: Vec<KeyOverride> = raw
        .keys
        .iter()
        .map(|(name, key)| KeyOverride {
            action: name.clone(),
            key: key.get_ref().clone(),
            line: line_of(text, key.span().start),
        })
        .collect();
    // The TOML table is a map; errors should name lines in the order they are written.
    keys.sort_by_key(|k| k.line);
    if let Some(v) = &raw.flue_version {
        if turnscope_core::flue2::Flue2Variant::for_release(v.get_ref()).is_none() {
            let known: Vec<&str> = turnscope_core::flue2::Flue2Variant::ALL
                .iter()
                .flat_map(|v| v.releases().iter().copied())
                .collect();
            return Err(err(
                Some(line_of(text, v.span().start)),
                format!(
                    "flue_version {:?} is not a flue 2.x release turnscope has a classifier for (one of: {})",
                    v.get_ref(),
                    known.join(", ")
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
        flue_version: raw.flue_version.map(toml::Spanned::into_inner),
        keys,
        source: Some(path.to_path_buf()),
    })
}

/// A refresh interval as written on the command line or in the file: `2s`, `500ms`, `1m`, or a
/// bare number of seconds; 100ms to 1h.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 2s or 500ms)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?} (use ms, s or m)"
            ))
        }
    };
    if !(0.1..=3600.0).contains(&secs) {
        return Err(format!("{text:?} is out of range (100ms to 1h)"));
    }
    Ok(Duration::from_secs_f64(secs))
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError {
            path,
            line: None,
            message: "the configuration file does not exist".into(),
        }),
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
        assert_eq!(c.flue_version.as_deref(), Some("2.0.5"));
        assert_eq!(c.keys.len(), 2, "{:?}", c.keys);
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
    }

    #[test]
    fn flue_version_is_a_release_with_a_classifier() {
        let c = parse("flue_version = \"2.0.0\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.flue_version.as_deref(), Some("2.0.0"));
        let e = parse(
            "theme = \"dark\"\nflue_version = \"2.0.2\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(
            e.message.contains("\"2.0.2\"") && e.message.contains("2.1.0"),
            "{e}"
        );
    }

    #[test]
    fn key_overrides_keep_their_lines_in_file_order() {
        let c = parse("[keys]\nquit = \"x\"\nfly = \"f\"\n", Path::new("c.toml")).unwrap();
        let got: Vec<_> = c
            .keys
            .iter()
            .map(|k| (k.action.as_str(), k.key.as_str(), k.line))
            .collect();
        // `quit` sorts after `fly` in the TOML map; file order puts it first.
        assert_eq!(got, [("quit", "x", 2), ("fly", "f", 3)]);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("10ms").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("2h").is_err());
    }
}
