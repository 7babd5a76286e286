//! The TUI through the real binary: one end-to-end run in tmux, and the list on a scale database
//! from the generator (turnscope-bench). The headless TUI tests are turnscope-tui's own
//! (crates/tui/tests/integration).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod e2e;
mod flue2;
mod flue2_acted;
mod flue2_bulk;
mod flue2_clock;
mod flue2_detail_search;
mod flue2_export;
mod flue2_next_request;
mod flue2_palette;
mod flue2_screens;
mod flue2_sort;
mod scale;

/// The clock of the demo and scale databases.
const NOW: i64 = 1_767_604_800_000;

/// The demo database, written by the real binary (`turnscope demo PATH`). A demo that cannot be
/// written fails the test.
pub(crate) fn demo_db(dir: &Path) -> PathBuf {
    let path = dir.join("demo.db");
    let out = crate::support::turnscope_command()
        .args(["demo", path.to_str().unwrap(), "--json"])
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success() && path.exists(),
        "`turnscope demo PATH` did not write a database: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    path
}
