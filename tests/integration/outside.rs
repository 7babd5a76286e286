//! The suites that need something outside the repository (a PostgreSQL server, the real runtime)
//! are counted as ignored where it is missing (`build.rs` sets the cfgs), never as passed. The
//! contract tests run on every backend inside one test body; their PostgreSQL half is this test,
//! so a run without a server shows it in the runner's own ignored count. Under `CI=true`, a
//! missing part fails the run outright.

#[test]
#[cfg_attr(
    any(turnscope_no_pg, not(feature = "postgres")),
    ignore = "needs PostgreSQL: the contract tests ran on SQLite only (bash .ci/pg-cluster run cargo test --workspace)"
)]
fn the_postgres_half_of_the_contract_tests_runs() {
    assert!(crate::backends::kinds().contains(&crate::backends::Kind::Postgres));
}

/// CI must run every suite: a missing server or runtime there is a failure, not an ignore.
#[test]
#[cfg_attr(
    not(turnscope_ci),
    ignore = "checks CI's machine: runs only under CI=true"
)]
fn ci_has_every_outside_part() {
    let mut missing = Vec::new();
    if cfg!(all(turnscope_no_pg, feature = "postgres")) {
        missing.push("PostgreSQL (TURNSCOPE_TEST_PG)");
    }
    if cfg!(turnscope_no_runtime) {
        missing.push("the real runtime (tests/runtime/setup.sh)");
    }
    if cfg!(turnscope_no_runtime2) {
        missing.push("the real flue 2.1.0 runtime (tests/runtime2/setup.sh)");
    }
    assert!(
        missing.is_empty(),
        "CI=true but these tests were built without {missing:?}: .ci/run must install and start them"
    );
}
