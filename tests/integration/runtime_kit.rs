//! The real runtime (`@flue/runtime` 1.0.0-beta.7 on Node 22) for the round-trip and
//! differential suites, installed by the project's own `tests/runtime/setup.sh` into
//! `$TURNSCOPE_RUNTIME_CACHE` (default under `~/.cache`); and flue 2.1.0 for the `runtime2`
//! suite, installed by `tests/runtime2/setup.sh` into `$TURNSCOPE_RUNTIME2_CACHE`.
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

fn kit_dir(kit: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(kit)
}

/// The runtime, installed on first use (one install per test process). Panics when the install
/// fails.
pub fn runtime(suite: &str) -> &'static Runtime {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    installed(suite, RUNTIME.get_or_init(|| install("runtime")))
}

/// flue 2.1.0 (`@flue/runtime` 2.1.0 on Node 22), installed by `tests/runtime2/setup.sh` into
/// `$TURNSCOPE_RUNTIME2_CACHE` on first use; its tests are marked
/// `#[cfg_attr(turnscope_no_runtime2, ignore = …)]`. Panics when the install fails.
pub fn runtime2(suite: &str) -> &'static Runtime {
    static RUNTIME2: OnceLock<Result<Runtime, String>> = OnceLock::new();
    installed(suite, RUNTIME2.get_or_init(|| install("runtime2")))
}

/// `tests/KIT/setup.sh` run, and what it printed: the drivers directory, then the Node binary.
fn install(kit: &str) -> Result<Runtime, String> {
    let out = Command::new("bash")
        .arg(kit_dir(kit).join("setup.sh"))
        .output()
        .map_err(|e| format!("cannot run tests/{kit}/setup.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tests/{kit}/setup.sh failed ({}):\n{}",
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
            "tests/{kit}/setup.sh printed unexpected output: {text}"
        ));
    }
    Ok(Runtime { node, drivers })
}

fn installed<'a>(suite: &str, got: &'a Result<Runtime, String>) -> &'a Runtime {
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
    /// Run one driver (`resume.mjs`, `reconcile-once.mjs`; flue 2.1.0's `classify.mjs`, `fold.mjs`) with
    /// `args`; its stdout parsed as JSON. Panics with the driver's stderr when it fails.
    pub fn drive(&self, driver: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
        self.drive_with_env(driver, args, &[])
    }

    /// flue 2.1.0's `reconcile-once.mjs` on `db` with its clock at `now`: one pass, or with
    /// `until_idle` every pass until none has work left; its report.
    pub fn reconcile_at(&self, db: &Path, now: i64, until_idle: bool) -> serde_json::Value {
        let now = now.to_string();
        let mut args = vec![
            "--db".as_ref(),
            db.as_os_str(),
            "--now".as_ref(),
            now.as_ref(),
        ];
        if until_idle {
            args.push("--until-idle".as_ref());
        }
        self.drive("reconcile-once.mjs", &args)
    }

    /// [`Runtime::drive`] with `env` added to the driver's environment (`resume.mjs` with
    /// `TURNSCOPE_RECORD_CONTEXT`, whose fake model then records each call's context).
    pub fn drive_with_env(
        &self,
        driver: &str,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> serde_json::Value {
        let mut cmd = Command::new(&self.node);
        cmd.envs(env.iter().copied());
        cmd.arg("--no-warnings");
        if matches!(driver, "reconcile-once.mjs" | "classify.mjs" | "fold.mjs") {
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
