//! The one integration-test binary: conformance against the runtime's own answers, and the CLI.

mod actions;
mod cli;
mod config;
mod damaged;
mod damaged_props;
mod fixtures;
mod hostile;
mod soak;
mod support;
mod tui;
mod tui_scale;
mod vectors;
