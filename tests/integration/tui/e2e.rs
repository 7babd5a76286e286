//! The real binary in tmux: it opens, answers keys, and restores the terminal.

use super::*;

struct Tmux {
    name: String,
}

impl Tmux {
    /// tmux on a server of this test's own (`-L`): other tmux users on the machine, or another
    /// test run, cannot end it or collide with its session names.
    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.name]);
        c
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = self.tmux().args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn capture(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", &self.name])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    fn wait_for(&self, needle: &str) -> Option<String> {
        // Up to 30 s: CI runs this beside the rest of the suite on two cores.
        for _ in 0..300 {
            let screen = self.capture();
            if screen.contains(needle) {
                return Some(screen);
            }
            if screen.contains("EXIT=") {
                return None; // the program ended
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// Up to 30 s for the screen to satisfy `ok`.
    fn wait_until(&self, ok: impl Fn(&str) -> bool) -> Option<String> {
        for _ in 0..300 {
            let screen = self.capture();
            if ok(&screen) {
                return Some(screen);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    fn flag(&self, f: &str) -> String {
        self.cmd(&["display-message", "-p", "-t", &self.name, f])
            .trim()
            .to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").output();
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run the real binary in tmux on the database, drive it with `keys_then_quit`, and check the
/// terminal was restored afterwards (cooked mode, main screen, cursor shown, mouse off).
fn run_e2e(db: &Path, quit: &[&str], tag: &str) -> String {
    let dir = db.parent().unwrap();
    let stty = dir.join(format!("stty-{tag}.txt"));
    let name = format!("turnscope-e2e-{}-{tag}", std::process::id());
    let script = format!(
        "TURNSCOPE_NOW_MS={NOW} {bin} --db '{db}'; echo \"EXIT=$?\"; stty -a > '{stty}'; sleep 60",
        bin = env!("CARGO_BIN_EXE_turnscope"),
        db = db.display(),
        stty = stty.display()
    );
    let t = Tmux { name: name.clone() };
    let status = t
        .tmux()
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "120",
            "-y",
            "36",
            "sh",
            "-c",
            &script,
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let Some(home) = t.wait_for("READ-ONLY") else {
        panic!(
            "`turnscope --db X` did not open the TUI. Screen:\n{}",
            t.capture()
        );
    };
    assert!(home.contains("turnscope"), "{home}");
    // The first refresh has arrived when the status line shows its age.
    t.wait_for("↻").expect("the list loads");
    assert_eq!(
        t.flag("#{alternate_on}"),
        "1",
        "the TUI uses the alternate screen"
    );
    t.keys(&["2"]);
    t.wait_for("2 all").unwrap();
    t.keys(&["Enter"]);
    let tree = t.wait_for("VERDICT").expect("the tree and verdict open");
    assert!(tree.contains("history"), "{tree}");
    t.keys(&["?"]);
    t.wait_for("Everywhere").expect("help opens");
    t.keys(&["Escape"]);
    // Wait for the help to close before the quit key: ESC and a key read together are Alt+key.
    t.wait_until(|screen| !screen.contains("Everywhere"))
        .expect("esc closes the help");
    t.keys(quit);
    let after = t.wait_for("EXIT=").expect("the program exits");
    assert!(after.contains("EXIT=0"), "{after}");
    for _ in 0..50 {
        if stty.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let modes = std::fs::read_to_string(&stty).unwrap();
    assert_eq!(t.flag("#{alternate_on}"), "0", "left the alternate screen");
    assert_eq!(t.flag("#{cursor_flag}"), "1", "cursor shown again");
    assert_eq!(t.flag("#{mouse_any_flag}"), "0", "mouse capture off");
    modes
}

#[test]
fn end_to_end_in_tmux_restores_the_terminal() {
    assert!(
        tmux_available(),
        "the end-to-end TUI test needs tmux (apt-get install -y tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    for (quit, tag) in [(&["q"][..], "q"), (&["C-c"][..], "ctrl-c")] {
        let modes = run_e2e(&db, quit, tag);
        let words: Vec<&str> = modes.split_whitespace().collect();
        for mode in ["icanon", "echo", "isig"] {
            assert!(words.contains(&mode), "{tag}: `{mode}` restored:\n{modes}");
        }
    }
}

/// A flue 2.x journal through the real binary: `turnscope --db X.db --flue-version 2.0.5` with no
/// command opens the 2.x screens (the header names the format and the classifier the flag
/// picked), ⏎ opens the crashed submission with its trailing batch, and q leaves the terminal as
/// it was.
#[test]
fn a_flue_2_x_journal_opens_in_tmux_and_quits_cleanly() {
    assert!(
        tmux_available(),
        "the end-to-end TUI test needs tmux (apt-get install -y tmux)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    // A second after the crashed attempt's lease ended: it is listed as expired.
    let lease: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT MAX(lease_expires_at) FROM flue_agent_submissions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let name = format!("turnscope-e2e-{}-flue2", std::process::id());
    let script = format!(
        "TURNSCOPE_NOW_MS={now} {bin} --db '{db}' --flue-version 2.0.5; echo \"EXIT=$?\"; sleep 60",
        now = lease + 1000,
        bin = env!("CARGO_BIN_EXE_turnscope"),
        db = db.display(),
    );
    let t = Tmux { name: name.clone() };
    let status = t
        .tmux()
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "160",
            "-y",
            "40",
            "sh",
            "-c",
            &script,
        ])
        .env(
            "XDG_CONFIG_HOME",
            crate::support::fixtures_dir().join("no-config-here"),
        )
        .status()
        .unwrap();
    assert!(status.success());
    let Some(home) = t.wait_for("6 replace") else {
        panic!(
            "`turnscope --db X` did not list the 2.x journal. Screen:\n{}",
            t.capture()
        );
    };
    assert!(
        home.contains("flue 2.x (format_version 1) · classifier: flue 2.0.5 (variant 2.0.5)"),
        "{home}"
    );
    assert_eq!(t.flag("#{alternate_on}"), "1");
    t.keys(&["Enter"]);
    let detail = t
        .wait_for("TRAILING UNCOMMITTED BATCH")
        .expect("the submission opens with its trailing batch");
    assert!(
        detail.contains("‼   call     fetch_record tc_crash_0_0"),
        "{detail}"
    );
    t.keys(&["q"]);
    let after = t.wait_for("EXIT=").expect("the program exits");
    assert!(after.contains("EXIT=0"), "{after}");
    assert_eq!(t.flag("#{alternate_on}"), "0", "left the alternate screen");
    assert_eq!(t.flag("#{cursor_flag}"), "1", "cursor shown again");
}
