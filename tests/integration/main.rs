//! The binary's test binary: the CLI, conformance against the runtime's own answers, PostgreSQL,
//! and what needs the demo, the scale generator or the real binary. Tests that need only one
//! crate and those below it live in that crate's `tests/integration`.

mod actions;
mod backends;
mod blob_rows;
mod bulk;
mod cli;
mod cli_audit;
mod cli_errors;
mod cli_export;
mod cli_export_open;
mod cli_list;
mod cli_next_request;
mod cli_sessions;
mod config;
mod contract;
mod cost;
mod damaged;
mod damaged_props;
mod direct_images;
mod direct_publish;
mod fidelity;
mod file_circles;
mod find;
mod flue2_actions;
mod flue2_bulk;
mod flue2_classify;
mod flue2_cli;
mod flue2_context_window;
mod flue2_cost;
mod flue2_damaged_batch;
mod flue2_diff;
mod flue2_export;
mod flue2_fold;
mod flue2_health;
mod flue2_incidents;
mod flue2_kept;
mod flue2_list;
mod flue2_next_request;
mod flue2_read_path;
mod flue2_sessions;
mod flue2_show_bytes;
mod flue2_submission_parse;
mod flue2_wait;
mod flue_formats;
mod health;
mod health_runtime;
mod hostile;
mod image_chunks;
mod incidents;
mod js_json_parse;
mod lone_surrogates;
mod next_request;
mod not_utf8;
mod outside;
mod panic_report;
// PostgreSQL-only suites; the backend-neutral ones run on SQLite alone without the feature.
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "postgres")]
mod pg_race;
#[cfg(feature = "postgres")]
mod pg_write_access;
mod read_access;
mod runtime2;
mod runtime2_actions;
mod runtime2_live_abort;
mod runtime2_memos;
mod runtime2_next_request;
mod runtime2_reconcile;
mod runtime_differential;
mod runtime_kit;
mod runtime_roundtrip;
mod safety;
mod scale_flue2;
mod scale_runtime;
mod scan;
mod scan_shared;
mod side_effects;
mod soak;
mod support;
mod tui;
mod undo;
mod wait;

/// Every test file of this folder (and of `tui/`) is compiled.
#[test]
fn no_forgotten_test_files() {
    turnscope_testkit::assert_no_forgotten_test_files(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/integration"
    )));
}
