//! The configuration file through the real binary: precedence (flag > env > file > default),
//! errors that name the key and the line, and `config --print-default`.

use std::path::Path;
use std::process::Output;

use turnscope_tui::config::{parse, Config};

/// Run turnscope with a clean environment: no TURNSCOPE_* variables, and an empty config dir.
fn turnscope(config_home: &Path, envs: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = crate::support::turnscope_command();
    for k in [
        "TURNSCOPE_DB",
        "TURNSCOPE_OPERATOR",
        "TURNSCOPE_REFRESH",
        "TURNSCOPE_THEME",
        "TURNSCOPE_CONFIG",
        "TURNSCOPE_CONTEXT_WINDOW",
    ] {
        cmd.env_remove(k);
    }
    cmd.env("XDG_CONFIG_HOME", config_home);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.args(args).output().expect("run turnscope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value of `key = ...` in `turnscope config` output.
fn value(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{out}"))
        .to_string()
}

const FILE: &str = "db = \"/from/file.db\"\noperator = \"file-op\"\ntheme = \"light\"\nrefresh = \"5s\"\n\n[keys]\nquit = \"x\"\n";

#[test]
fn print_default_parses_back_to_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let o = turnscope(dir.path(), &[], &["config", "--print-default"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(
        text,
        include_str!("../../assets/config.toml"),
        "prints assets/config.toml byte for byte"
    );
    assert!(text.lines().filter(|l| l.starts_with('#')).count() > 10);
    let parsed = parse(&text, Path::new("default.toml")).unwrap();
    assert_eq!(
        Config {
            source: None,
            ..parsed
        },
        Config::default()
    );
}

#[test]
fn the_default_location_is_used_and_a_missing_file_is_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["config"]));
    assert!(out.contains("none"), "{out}");
    assert_eq!(value(&out, "theme"), "dark");
    assert_eq!(value(&out, "read_only_default"), "true");
    std::fs::create_dir_all(dir.path().join("turnscope")).unwrap();
    std::fs::write(dir.path().join("turnscope/config.toml"), FILE).unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["config"]));
    assert_eq!(value(&out, "db"), "/from/file.db");
    assert_eq!(value(&out, "theme"), "light");
    assert_eq!(value(&out, "refresh"), "5s");
    assert_eq!(value(&out, "keys.quit"), "x");
}

#[test]
fn flags_beat_env_beats_file_beats_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(&file, FILE).unwrap();
    let f = file.to_str().unwrap();
    let file_only = stdout(&turnscope(dir.path(), &[], &["--config", f, "config"]));
    assert_eq!(value(&file_only, "operator"), "file-op");
    assert_eq!(value(&file_only, "theme"), "light");
    let env = [
        ("TURNSCOPE_OPERATOR", "env-op"),
        ("TURNSCOPE_THEME", "high-contrast"),
        ("TURNSCOPE_DB", "/from/env.db"),
    ];
    let with_env = stdout(&turnscope(dir.path(), &env, &["--config", f, "config"]));
    assert_eq!(value(&with_env, "operator"), "env-op");
    assert_eq!(value(&with_env, "theme"), "high-contrast");
    assert_eq!(value(&with_env, "db"), "/from/env.db");
    assert_eq!(
        value(&with_env, "refresh"),
        "5s",
        "not overridden: the file"
    );
    let with_flags = stdout(&turnscope(
        dir.path(),
        &env,
        &[
            "--config",
            f,
            "--operator",
            "flag-op",
            "--theme",
            "dark",
            "--db",
            "/flag.db",
            "--refresh",
            "1s",
            "config",
        ],
    ));
    assert_eq!(value(&with_flags, "operator"), "flag-op");
    assert_eq!(value(&with_flags, "theme"), "dark");
    assert_eq!(value(&with_flags, "db"), "/flag.db");
    assert_eq!(value(&with_flags, "refresh"), "1s");
    // TURNSCOPE_CONFIG picks the file like --config.
    let via_env = stdout(&turnscope(
        dir.path(),
        &[("TURNSCOPE_CONFIG", f)],
        &["config"],
    ));
    assert_eq!(value(&via_env, "operator"), "file-op");
}

#[test]
fn read_only_stays_the_default_unless_the_file_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(&file, "read_only_default = true\n").unwrap();
    let f = file.to_str().unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["--config", f, "config"]));
    assert_eq!(value(&out, "read_only_default"), "true");
    let out = stdout(&turnscope(
        dir.path(),
        &[],
        &["--config", f, "--write", "config"],
    ));
    assert_eq!(value(&out, "read_only_default"), "false");
    std::fs::write(&file, "read_only_default = false\n").unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["--config", f, "config"]));
    assert_eq!(value(&out, "read_only_default"), "false");
}

/// A failure with exit 2, an error line naming `path:line` and `needle`, and a hint.
fn assert_config_error(o: &Output, path: &Path, line: usize, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error: ")
            && lines[0].contains(&format!("{}:{line}:", path.display()))
            && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn unknown_keys_and_bad_values_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    let f = file.to_str().unwrap();
    let cases: [(&str, usize, &str); 6] = [
        ("theme = \"dark\"\n\ncolour = \"red\"\n", 3, "colour"),
        ("theme = \"pink\"\n", 1, "pink"),
        ("# refresh\nrefresh = \"fast\"\n", 2, "fast"),
        ("read_only_default = \"no\"\n", 1, "bool"),
        ("[keys]\nquit = \"x\"\nfly = \"f\"\n", 3, "fly"),
        ("[keys]\nquit = \"x\"\nhelp = \"x\"\n", 3, "same key"),
    ];
    for (text, line, needle) in cases {
        std::fs::write(&file, text).unwrap();
        // Any command that reads the configuration refuses it, before touching a database.
        let o = turnscope(dir.path(), &[], &["--config", f, "list"]);
        assert_config_error(&o, &file, line, needle);
    }
    // print-default still works with a broken file: it is how to start over.
    let o = turnscope(
        dir.path(),
        &[],
        &["--config", f, "config", "--print-default"],
    );
    assert!(o.status.success());
    // An explicit --config that does not exist is an error; the default location may be missing.
    let o = turnscope(
        dir.path(),
        &[],
        &["--config", "/nonexistent/turnscope.toml", "config"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: bad configuration: /nonexistent/turnscope.toml: the configuration file does not exist\n\
         hint: create it with `turnscope config --print-default > /nonexistent/turnscope.toml`, or leave out --config (and TURNSCOPE_CONFIG) to use the defaults\n"
    );
}

/// A key bound twice is an error naming both actions, default keys included: `quit = "j"` used
/// to quit on j and leave no key for "down".
#[test]
fn a_key_already_bound_by_default_is_refused_with_both_actions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    let f = file.to_str().unwrap();
    std::fs::write(&file, "[keys]\nquit = \"j\"\n").unwrap();
    let o = turnscope(dir.path(), &[], &["--config", f, "list"]);
    assert_config_error(&o, &file, 2, "quit = \"j\" is already the key of down");
    assert!(stderr(&o).contains("hint: fix that line"), "{}", stderr(&o));
    // Moving "down" too makes it valid.
    std::fs::write(&file, "[keys]\nquit = \"j\"\ndown = \"ctrl-n\"\n").unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["--config", f, "config"]));
    assert_eq!(value(&out, "keys.quit"), "j");
}

/// `turnscope config` prints the file's key names, so a line can be copied into the file.
#[test]
fn config_prints_the_file_key_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&turnscope(dir.path(), &[], &["config"]));
    let keys: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(k, _)| k))
        .filter(|k| !k.contains(' '))
        .collect();
    assert_eq!(
        keys,
        [
            "db",
            "refresh",
            "theme",
            "read_only_default",
            "operator",
            "context_window",
            "flue_version"
        ]
    );
    let defaults = turnscope_tui::config::DEFAULT_FILE;
    for k in keys {
        assert!(
            defaults.contains(&format!("# {k} = ")) || defaults.contains(&format!("{k} = ")),
            "{k} is not a key of the file"
        );
    }
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../docs/configuration.md");
    let start = doc
        .find("```toml\n")
        .expect("a toml block in docs/configuration.md")
        + 8;
    let end = start + doc[start..].find("```").unwrap();
    let c = parse(&doc[start..end], Path::new("docs/configuration.md")).unwrap();
    assert_eq!(c.theme, turnscope_tui::Palette::Dark);
    assert!(c.read_only_default);
    assert_eq!(c.keys.len(), 2);
}

/// Without `$USER` and `$LOGNAME` (a root shell in a container, `kubectl exec`, a systemd unit)
/// the operator is the account of the process's user id, as `id -un` names it; with them, `$USER`.
#[test]
fn the_operator_is_the_account_when_user_is_unset() {
    let dir = tempfile::tempdir().unwrap();
    let account = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let account = String::from_utf8(account.stdout)
        .unwrap()
        .trim()
        .to_string();
    assert!(!account.is_empty(), "id -un names this user");
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("USER")
        .env_remove("LOGNAME")
        .env_remove("TURNSCOPE_OPERATOR")
        .env("XDG_CONFIG_HOME", dir.path());
    let o = cmd.arg("config").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let op = value(&stdout(&o), "operator");
    assert!(op.starts_with(&format!("{account}@")), "{op}");
    assert!(!op.starts_with("unknown@"), "{op}");
    let o = turnscope(
        dir.path(),
        &[("USER", "ana"), ("LOGNAME", "bo")],
        &["config"],
    );
    assert!(value(&stdout(&o), "operator").starts_with("ana@"));
}

/// `flue_version` in the file picks a 2.x journal's classifier where `--flue-version` is not
/// given; the flag beats it; on a beta.7 journal it is unused (the flag is refused there, the
/// file's value is not); and `turnscope config` shows it.
#[test]
fn flue_version_from_the_file_applies_to_2_x_journals_only() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("turnscope");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("config.toml"), "flue_version = \"2.0.5\"\n").unwrap();
    let flue2 = crate::support::unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let db = flue2.to_str().unwrap();
    let doc = |args: &[&str]| -> serde_json::Value {
        let o = turnscope(dir.path(), &[], args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let from_file = doc(&["--db", db, "list", "--json"]);
    assert_eq!(from_file["flueVersion"], "2.0.5");
    assert_eq!(from_file["classifierVariant"], "2.0.5");
    let flag = doc(&["--db", db, "--flue-version", "2.0.0", "list", "--json"]);
    assert_eq!(flag["flueVersion"], "2.0.0");
    assert_eq!(flag["classifierVariant"], "2.0.0");
    let o = turnscope(dir.path(), &[], &["config"]);
    assert_eq!(value(&stdout(&o), "flue_version"), "2.0.5");
    // A beta.7 journal reads as before.
    let beta7 = crate::support::unpack_fixture(dir.path(), "tool-batch-mid");
    let o = turnscope(dir.path(), &[], &["--db", beta7.to_str().unwrap(), "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A release without a classifier is refused naming the line.
    std::fs::write(
        conf.join("config.toml"),
        "theme = \"dark\"\nflue_version = \"3.0.0\"\n",
    )
    .unwrap();
    let o = turnscope(dir.path(), &[], &["--db", db, "list"]);
    assert_config_error(&o, &conf.join("config.toml"), 2, "flue_version \"3.0.0\"");
}
