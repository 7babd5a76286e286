//! turnscope: triage and repair stuck turns in a flue agent-runtime journal database.
//!
//! Layers, each using only those before it:
//!
//! 1. [`core`]: the pure domain (entries, classifier, recovery planner, the domain records). No
//!    I/O and no clock: `now` is a parameter.
//! 2. [`store`]: reading and writing the journal database (SQLite, PostgreSQL) behind traits.
//! 3. [`report`]: one submission fully inspected, the documents `show`/`classify` print.
//! 4. [`actions`]: repair, requeue, fail, step, reconcile, extend and undo as previewable plans, and
//!    [`actions::run`], the one runner (prepare → apply with audit → re-read).
//! 5. [`cli`] and [`tui`]: the two front ends (`cli` also starts the TUI and [`demo`]).
//!
//! Leaves any layer above `core` may use: [`text`] (terminal-safe text), [`config`] (the
//! configuration file as plain data), [`clock`] (the wall clock). [`demo`] writes example
//! databases from core, store and report. The integration test `layers.rs` fails on any other
//! arrow between these modules and on any circle between files.

pub mod actions;
pub mod cli;
pub mod clock;
pub mod config;
pub mod core;
pub mod demo;
pub mod progress;
pub mod report;
pub mod store;
pub mod text;
pub mod tui;

/// Puts every thread on glibc's one main malloc arena. glibc gives each thread that allocates its
/// own arena (up to eight per core), and pages freed in one are not reused by another: the read
/// path's parse threads and the TUI's worker each grew one. Two arenas (the previous setting)
/// already took the worst scenario from 154 to 137 MB, but left the whale open's resident peak
/// bimodal, set by how the threads were scheduled (pinned to one CPU, 151–153 MiB in seven runs
/// of eight). Measured with the scale bench's `whale_open` child on the 240,000-entry runtime
/// whale, ten runs alternated: 131–148 MiB with two arenas (three of five above 140), 131–134 MiB
/// with one, in the same time (631–824 ms against 717–811 ms); `show --json` and
/// `list --expired --json` keep their time and peak (`farm-bench`, paired: 1.01× and 0.97×
/// wall). The binary calls this first thing, and the bench's children do too, so they measure
/// what the binary does. Elsewhere (not glibc) it does nothing.
pub fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
