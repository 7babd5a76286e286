//! turnscope-engine's test binary: reports on databases the real runtime wrote, read through the
//! SQLite store.

mod fixtures;
mod live;

/// Every test file of this folder is compiled.
#[test]
fn no_forgotten_test_files() {
    turnscope_testkit::assert_no_forgotten_test_files(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/integration"
    )));
}
