//! turnscope: triage and repair stuck turns in a flue agent-runtime journal database.
//!
//! Layers, each depending only on those before it: [`core`] (pure domain), [`store`] (reading the
//! database), [`cli`] (commands and output).

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
