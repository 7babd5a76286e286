//! turnscope's binary: the command line ([`cli`]), which also opens the TUI (`turnscope_tui`).
//!
//! The layers are crates, each using only those before it: `turnscope-core` (pure domain),
//! `turnscope-store` (SQLite, PostgreSQL), `turnscope-engine` (report, actions), `turnscope-demo`,
//! `turnscope-tui`, and this one. See `docs/architecture.md`.

pub mod cli;
