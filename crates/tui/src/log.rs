//! A tiny append-only log file. The screen belongs to the UI, so nothing is ever printed while
//! it runs; without a log file these calls do nothing.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

static LOG: Mutex<Option<File>> = Mutex::new(None);
static FRAMES: Mutex<(u64, Duration, Duration)> = Mutex::new((0, Duration::ZERO, Duration::ZERO));

pub fn init(path: Option<PathBuf>) {
    let Some(p) = path else { return };
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        // The log names databases and submissions: readable by its owner only.
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    if let Ok(f) = o.open(&p) {
        if let Ok(mut g) = LOG.lock() {
            *g = Some(f);
        }
    }
}

pub fn line(msg: &str) {
    if let Ok(mut g) = LOG.lock() {
        if let Some(f) = g.as_mut() {
            let _ = writeln!(
                f,
                "{} {}",
                turnscope_core::journal::time::iso_from_ms(turnscope_store::clock::now_ms()),
                turnscope_core::text::sanitize(msg)
            );
        }
    }
}

/// Record a frame's draw time; every 200 frames the mean and max go to the log.
pub fn frame(d: Duration) {
    let report = {
        let Ok(mut g) = FRAMES.lock() else { return };
        g.0 += 1;
        g.1 += d;
        g.2 = g.2.max(d);
        if g.0 == 200 {
            let r = (g.1 / 200, g.2);
            *g = (0, Duration::ZERO, Duration::ZERO);
            Some(r)
        } else {
            None
        }
    };
    if let Some((mean, max)) = report {
        line(&format!("frames: mean {mean:?}, max {max:?} over 200"));
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    #[test]
    fn log_file_is_private_and_lines_are_terminal_safe() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("turnscope.log");
        super::init(Some(path.clone()));
        super::line("refresh failed: \x1b]52;c;aGk=\x07 \u{202e}x\r\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "log mode {mode:o}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("refresh failed: \\x1b]52;c;aGk=\\x07 \\u{202e}x\\x0d\\n"),
            "{text}"
        );
        assert!(!text
            .trim_end_matches('\n')
            .chars()
            .any(turnscope_core::text::is_hostile_char));
        // Later tests in this process must not write here.
        if let Ok(mut g) = super::LOG.lock() {
            *g = None;
        }
    }
}
