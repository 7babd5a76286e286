//! turnscope: triage and repair stuck turns in a flue agent-runtime journal database.
//!
//! Layers, each using only those before it:
//!
//! 1. [`core`]: the pure domain (entries, classifier, recovery planner, the domain records). No
//!    I/O and no clock: `now` is a parameter.
//! 2. [`store`]: reading and writing the journal database (SQLite, PostgreSQL) behind traits.
//! 3. [`report`]: one submission fully inspected, the documents `show`/`classify` print.
//! 4. [`actions`]: repair, requeue, fail and step as previewable plans, and
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
pub mod report;
pub mod store;
pub mod text;
pub mod tui;
