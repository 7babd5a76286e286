//! A panic with the TUI on screen: the real binary in tmux, made to panic right after it took the
//! terminal over (raw mode, alternate screen, hidden cursor) by `TURNSCOPE_TEST_PANIC`. The
//! terminal must come back usable, the report must be readable on it, and the log must hold it.

use std::process::Command;
use std::time::Duration;

use crate::support::unpack_fixture;

/// A tmux server of this test's own: other tests' sessions come and go on the default one, and
/// the server exits when its last session does.
fn socket() -> String {
    format!("turnscope-panic-{}", std::process::id())
}

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux")
        .args(["-L", &socket()])
        .args(args)
        .output()
        .expect("tmux is needed for this test (apt-get install -y tmux; .ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &socket(), "kill-server"])
            .output();
    }
}

#[test]
fn a_panic_in_the_tui_restores_the_terminal_then_reports_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let log = dir.path().join("turnscope.log");
    let stty = dir.path().join("stty.txt");
    let name = format!("turnscope-panic-{}", std::process::id());
    let script = format!(
        "TURNSCOPE_TEST_PANIC=1 TURNSCOPE_LOG='{log}' {bin} --db '{db}'; echo \"EXIT=$?\"; \
         stty -a > '{stty}'; sleep 60",
        bin = env!("CARGO_BIN_EXE_turnscope"),
        log = log.display(),
        db = db.display(),
        stty = stty.display()
    );
    let status = Command::new("tmux")
        .args([
            "-L",
            &socket(),
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "160",
            "-y",
            "60",
            "sh",
            "-c",
            &script,
        ])
        .status()
        .expect("tmux is needed for this test (apt-get install -y tmux; .ci/run installs it)");
    assert!(status.success());
    let session = Session(name);
    let capture = || tmux(&["capture-pane", "-p", "-S", "-", "-t", &session.0]);
    let flag = |f: &str| {
        tmux(&["display-message", "-p", "-t", &session.0, f])
            .trim()
            .to_string()
    };
    // Up to 30 s: the suite runs beside it on two cores.
    let mut screen = String::new();
    for _ in 0..300 {
        screen = capture();
        if screen.contains("EXIT=") && stty.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(screen.contains("EXIT=101"), "a panic exits 101:\n{screen}");
    std::thread::sleep(Duration::from_millis(200)); // stty's file is complete
    let modes = std::fs::read_to_string(&stty).unwrap();
    let words: Vec<&str> = modes.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(words.contains(&mode), "`{mode}` restored:\n{modes}");
    }
    assert_eq!(flag("#{alternate_on}"), "0", "left the alternate screen");
    assert_eq!(flag("#{cursor_flag}"), "1", "cursor shown again");
    assert_eq!(flag("#{mouse_any_flag}"), "0", "mouse capture off");
    // The report is on the main screen, where it stays readable after the program ended.
    for needle in [
        "The application panicked",
        "deliberate panic in raw mode",
        "This is a bug in turnscope",
        concat!("turnscope ", env!("CARGO_PKG_VERSION")),
        "appended to",
    ] {
        assert!(screen.contains(needle), "{needle:?} on screen:\n{screen}");
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    for needle in [
        "panic report:",
        "deliberate panic in raw mode",
        "This is a bug in turnscope",
    ] {
        assert!(logged.contains(needle), "{needle:?} in the log:\n{logged}");
    }
    assert!(
        !logged.contains('\x1b'),
        "the log holds no colour codes:\n{logged}"
    );
}
