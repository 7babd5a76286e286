//! turnscope-core's test binary: the domain against the runtime's own answers, no database.

mod flue2_vectors;
mod vectors;

/// Every test file of this folder is compiled.
#[test]
fn no_forgotten_test_files() {
    turnscope_testkit::assert_no_forgotten_test_files(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/integration"
    )));
}
