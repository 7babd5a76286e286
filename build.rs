//! Build information for `turnscope --version`: the commit (when built from a git checkout), the
//! target and the profile.

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
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}
