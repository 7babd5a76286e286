//! Shared helpers: unpack committed (gzipped) fixtures into a temporary directory.

use std::io::Read;
use std::path::{Path, PathBuf};

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn gunzip(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

/// Unpack `tests/fixtures/flue-beta7/<name>.db.gz` as `<dir>/<name>.db`.
pub fn unpack_fixture(dir: &Path, name: &str) -> PathBuf {
    let gz = fixtures_dir()
        .join("flue-beta7")
        .join(format!("{name}.db.gz"));
    let dest = dir.join(format!("{name}.db"));
    std::fs::write(&dest, gunzip(&gz)).unwrap();
    dest
}

pub fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures_dir().join("flue-beta7/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The real binary, isolated from the machine's configuration file and environment.
pub fn turnscope_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_turnscope"));
    cmd.env("XDG_CONFIG_HOME", fixtures_dir().join("no-config-here"))
        .env_remove("TURNSCOPE_CONFIG")
        .env_remove("TURNSCOPE_THEME")
        .env_remove("TURNSCOPE_REFRESH")
        .env_remove("TURNSCOPE_CONTEXT_WINDOW");
    cmd
}

/// splitmix64: small, seeded, and the same everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A scale journal at `path` from the generator (`turnscope-bench`, kept out of the binary): the
/// same rows `turnscope-scale PATH --scale FACTOR --seed SEED [--profile runtime]
/// [--whale-entries N]` writes at `now_ms`.
pub fn scale_db(
    path: &Path,
    factor: f64,
    seed: u64,
    runtime: bool,
    whale_entries: Option<usize>,
    now_ms: i64,
) -> turnscope_bench::scale::ScaleSummary {
    use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};
    let profile = if runtime {
        ScaleProfile::Runtime
    } else {
        ScaleProfile::Session
    };
    let mut opts = ScaleOptions::for_profile(profile, factor, now_ms);
    opts.seed = seed;
    if let Some(n) = whale_entries {
        opts = opts.with_whale_entries(n).expect("whale entries in range");
    }
    write_scale(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
