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
    if let Ok(f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
    {
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
                "{} {msg}",
                crate::core::time::iso_from_ms(crate::core::time::now_ms())
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
