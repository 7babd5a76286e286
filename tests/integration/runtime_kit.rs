//! The real runtime (`@flue/runtime` 1.0.0-beta.7 on Node 22) for the round-trip and
//! differential suites, installed by the project's own `tests/runtime/setup.sh` into
//! `$TURNSCOPE_RUNTIME_CACHE` (default under `~/.cache`).
//!
//! Every test that needs it is marked `#[cfg_attr(turnscope_no_runtime, ignore = …)]`: where
//! `build.rs` found that the runtime cannot be installed (`npm` not on PATH and nothing in the
//! cache, or `TURNSCOPE_RUNTIME_SKIP` set), the test runner counts those tests as ignored. Where
//! it can, a failed install is a test failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The installed runtime: the Node 22 binary and the directory holding the drivers.
pub struct Runtime {
    pub node: PathBuf,
    pub drivers: PathBuf,
}

fn kit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime")
}

/// The runtime, installed on first use (one install per test process). Panics when the install
/// fails.
pub fn runtime(suite: &str) -> &'static Runtime {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    let got = RUNTIME.get_or_init(|| {
        let out = Command::new("bash")
            .arg(kit_dir().join("setup.sh"))
            .output()
            .map_err(|e| format!("cannot run tests/runtime/setup.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tests/runtime/setup.sh failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines().rev();
        let node = PathBuf::from(lines.next().unwrap_or_default());
        let drivers = PathBuf::from(lines.next().unwrap_or_default());
        if !node.is_file() || !drivers.is_dir() {
            return Err(format!(
                "tests/runtime/setup.sh printed unexpected output: {text}"
            ));
        }
        Ok(Runtime { node, drivers })
    });
    match got {
        Ok(r) => r,
        Err(e) => panic!(
            "{suite}: {e}\nhint: the real runtime needs npm on PATH for its first install; where \
             Node cannot be installed at all, set TURNSCOPE_RUNTIME_SKIP to say why and rebuild: \
             the runtime suites are then counted as ignored"
        ),
    }
}

impl Runtime {
    /// Run one driver (`resume.mjs`, `reconcile-once.mjs`) with `args`; its stdout parsed as
    /// JSON. Panics with the driver's stderr when it fails.
    pub fn drive(&self, driver: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
        let mut cmd = Command::new(&self.node);
        cmd.arg("--no-warnings");
        if driver == "reconcile-once.mjs" {
            // The hook that exports the reconciler's internal functions (see expose-hooks.mjs).
            cmd.arg("--import")
                .arg(self.drivers.join("register-hooks.mjs"));
        }
        cmd.arg(self.drivers.join(driver)).args(args);
        self.json_of(driver, cmd)
    }

    /// Run `script` with Node's `-e`, `args` as its `process.argv[1..]`; its stdout parsed as
    /// JSON. Panics with Node's stderr when it fails.
    pub fn eval(&self, script: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
        let mut cmd = Command::new(&self.node);
        cmd.arg("-e").arg(script).args(args);
        self.json_of("node -e", cmd)
    }

    fn json_of(&self, what: &str, mut cmd: Command) -> serde_json::Value {
        let out = cmd
            .current_dir(&self.drivers)
            .output()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.node.display()));
        assert!(
            out.status.success(),
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let head: String = stdout.chars().take(2000).collect();
            panic!(
                "{what} printed no JSON ({e}), {} bytes:\n{head}…\n{}",
                out.stdout.len(),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

/// Whether this turnscope binary has the subcommand `name` (the suites use commands that are
/// still being added, such as `reconcile`, where they exist).
pub fn turnscope_has(name: &str) -> bool {
    crate::support::turnscope_command()
        .args([name, "--help"])
        .output()
        .is_ok_and(|o| o.status.success())
}
