//! Progress bars on stderr, drawn only where a person watches: stderr a terminal and stdout not
//! a JSON document. Pipes, scripts and `--json` get nothing (not even a carriage return).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::CliError;
use turnscope_store::{DbTarget, JournalWriter};

/// Whether bars are drawn for this command.
fn watched(json: bool) -> bool {
    !json && std::io::stderr().is_terminal()
}

fn style(total: Option<u64>) -> ProgressStyle {
    let template = match total {
        Some(_) => "{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})",
        None => "{spinner} {msg} ({elapsed})",
    };
    ProgressStyle::with_template(template)
        .expect("a fixed template")
        .progress_chars("=> ")
}

/// One bar (or spinner) on stderr, or nothing when nobody watches.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar for `total` units of `what`.
    pub fn new(json: bool, what: &str, total: u64) -> Bar {
        Bar {
            bar: watched(json).then(|| make(what, Some(total))),
        }
    }

    pub fn advance(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Set the count done.
    pub fn set(&mut self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    /// Run `f` (writing to the terminal) with the bar cleared, then draw it again.
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Remove the bar from the terminal.
    pub fn clear(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    /// Leave the finished bar on its line: what was done, and how long it took.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}

fn make(what: &str, total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    bar.set_style(style(total));
    bar.set_message(what.to_string());
    if total.is_none() {
        // A spinner moves while the work gives no count (one long SQL statement).
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    bar
}

/// [`turnscope_store::progress::Progress`] drawn as one bar per stage.
pub struct Stages {
    watched: bool,
    bar: Option<ProgressBar>,
}

impl Stages {
    pub fn new(json: bool) -> Stages {
        Stages {
            watched: watched(json),
            bar: None,
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}

impl turnscope_store::progress::Progress for Stages {
    fn stage(&mut self, what: &str, total: Option<u64>) {
        self.finish();
        if self.watched {
            self.bar = Some(make(what, total));
        }
    }

    fn advance(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }
}

impl Drop for Stages {
    fn drop(&mut self) {
        self.finish();
    }
}

/// [`turnscope_store::open_writer`] with a spinner over its integrity check (SQLite reads every
/// page of the file before any write, which takes a while on a large journal).
pub fn open_writer(db: &DbTarget, json: bool) -> Result<Box<dyn JournalWriter>, CliError> {
    let spinner = (watched(json) && matches!(db, DbTarget::Sqlite(_))).then(|| {
        make(
            "checking the database before writing (PRAGMA quick_check)",
            None,
        )
    });
    let writer = turnscope_store::open_writer(db);
    if let Some(s) = spinner {
        // Cleared: the check is a step before the preview, not a result.
        s.finish_and_clear();
    }
    Ok(writer?)
}
