//! The configuration file's `[keys]` checked against the TUI's keymap: the file is plain data
//! (`config::KeyOverride`), the keymap knows the action names and the key syntax, and the command
//! line joins the two when it is resolved, so a bad line is an error before anything runs.

use std::path::Path;

use turnscope_tui::config::{ConfigError, KeyOverride};
use turnscope_tui::Overrides;

/// Check `keys` (from the file at `path`, or `None` for no file) and turn them into the keymap's
/// overrides. Errors name the line of the offending key.
pub fn overrides(keys: &[KeyOverride], path: Option<&Path>) -> Result<Overrides, ConfigError> {
    let err = |line: Option<usize>, message: String| ConfigError {
        path: path.map(Path::to_path_buf).unwrap_or_default(),
        line: line.filter(|l| *l > 0),
        message,
    };
    for k in keys {
        Overrides::parse([(k.action.as_str(), k.key.as_str())])
            .map_err(|m| err(Some(k.line), m))?;
    }
    let parsed = Overrides::parse(keys.iter().map(|k| (k.action.as_str(), k.key.as_str())))
        .map_err(|m| err(None, m))?;
    // Two actions on one key would make one of them unreachable.
    for (i, (a, ka)) in parsed.0.iter().enumerate() {
        if let Some(j) = (i + 1..parsed.0.len()).find(|&j| parsed.0[j].1 == *ka) {
            let b = &parsed.0[j].0;
            // The later of the two lines: that is the one just added.
            let line = keys
                .get(i)
                .zip(keys.get(j))
                .map(|(p, q)| p.line.max(q.line));
            return Err(err(
                line,
                format!(
                    "[keys]: {} and {} are both bound to the same key",
                    turnscope_tui::action_name(*a),
                    turnscope_tui::action_name(*b)
                ),
            ));
        }
    }
    if let Some((i, other)) = parsed.default_conflict() {
        let (action, key) = &parsed.0[i];
        let line = keys
            .iter()
            .find(|k| k.action == turnscope_tui::action_name(*action))
            .map(|k| k.line);
        return Err(err(
            line,
            format!(
                "[keys]: {} = {:?} is already the key of {} (rebind {} too, or pick another key)",
                turnscope_tui::action_name(*action),
                turnscope_tui::key_label(key),
                turnscope_tui::action_name(other),
                turnscope_tui::action_name(other),
            ),
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_tui::config::parse;

    fn check(text: &str) -> Result<Overrides, ConfigError> {
        let c = parse(text, Path::new("c.toml")).unwrap();
        overrides(&c.keys, c.source.as_deref())
    }

    #[test]
    fn errors_name_the_line() {
        let e = check("[keys]\nquit = \"x\"\nfly = \"f\"\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("fly"), "{e}");
        let e = check("[keys]\nquit = \"ctrl-\"\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = check("[keys]\nquit = \"x\"\n\nhelp = \"x\"\n").unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("same key"), "{e}");
        assert_eq!(e.path, Path::new("c.toml"));
    }

    #[test]
    fn a_default_key_of_another_action_is_refused_unless_that_one_moves_too() {
        let e = check("[keys]\nhelp = \"x\"\nquit = \"j\"\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert_eq!(
            e.message,
            "[keys]: quit = \"j\" is already the key of down (rebind down too, or pick another key)"
        );
        // Moving down away frees j.
        check("[keys]\nquit = \"j\"\ndown = \"ctrl-j\"\n").unwrap();
        // Keys of panes never focused together do not collide: `b` (raw, in the tree and the
        // detail) for sorting the list.
        check("[keys]\nsort = \"b\"\n").unwrap();
        // But a key everywhere does: `b` for the audit trail would shadow raw in the detail.
        let e = check("[keys]\naudit = \"b\"\n").unwrap_err();
        assert!(e.message.contains("toggle_raw"), "{e}");
    }

    #[test]
    fn good_keys_become_overrides() {
        let o = check("[keys]\nquit = \"x\"\nhelp = \"f1\"\n").unwrap();
        assert_eq!(o.0.len(), 2);
    }
}
