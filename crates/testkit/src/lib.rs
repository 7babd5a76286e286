//! What the workspace's test binaries share: the committed fixtures (in the root `tests/fixtures`,
//! reached from any crate), a small seeded random generator, the check that every test file of a
//! binary is compiled, and (feature `journal`) [`JournalBuilder`](journal::JournalBuilder), which
//! writes journals of a given shape.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

#[cfg(feature = "journal")]
pub mod journal;
#[cfg(feature = "journal")]
pub use journal::{JournalBuilder, SessionBuilder, Submission, TurnJournal};

/// The root `tests/fixtures`, as this crate's manifest directory reaches it.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");

/// The committed fixtures (`tests/fixtures` at the workspace root), without `..` in the path.
pub fn fixtures_dir() -> PathBuf {
    let mut out = PathBuf::new();
    for c in Path::new(FIXTURES).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The bytes of a gzipped file.
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

/// The runtime's own answers for the crash fixtures (`tests/fixtures/flue-beta7/manifest.json`).
pub fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures_dir().join("flue-beta7/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// splitmix64: small, seeded, and the same everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Every `.rs` file of a test binary's folder `dir` (the one holding its `main.rs`) is declared
/// as a module, and so is every subfolder holding a `mod.rs`, recursively: a file that is not
/// declared is never compiled, and its tests never run, without a word from cargo.
pub fn assert_no_forgotten_test_files(dir: &Path) {
    let mut forgotten = Vec::new();
    check_folder(dir, &dir.join("main.rs"), &mut forgotten);
    assert!(
        forgotten.is_empty(),
        "test files not declared as modules (add `mod NAME;`), so never compiled:\n{}",
        forgotten.join("\n")
    );
}

fn check_folder(dir: &Path, root_file: &Path, forgotten: &mut Vec<String>) {
    let root = std::fs::read_to_string(root_file)
        .unwrap_or_else(|e| panic!("{}: {e}", root_file.display()));
    let declared = |name: &str| {
        root.lines().any(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            line == format!("mod {name};")
        })
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mod_rs = path.join("mod.rs");
            if mod_rs.is_file() {
                if !declared(&name) {
                    forgotten.push(path.display().to_string());
                }
                check_folder(&path, &mod_rs, forgotten);
            }
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "main" && stem != "mod" && !declared(stem) {
                forgotten.push(path.display().to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixtures_are_reached_from_this_crate() {
        let dir = fixtures_dir();
        assert!(!dir.to_string_lossy().contains(".."), "{}", dir.display());
        assert!(dir.join("flue-beta7/manifest.json").is_file());
        assert!(manifest()["fixtures"]
            .as_array()
            .is_some_and(|f| !f.is_empty()));
    }

    #[test]
    fn a_forgotten_test_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("main.rs"), "mod kept;\npub(crate) mod sub;\n").unwrap();
        std::fs::write(d.join("kept.rs"), "").unwrap();
        std::fs::write(d.join("lost.rs"), "").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/mod.rs"), "mod inner;\n").unwrap();
        std::fs::write(d.join("sub/inner.rs"), "").unwrap();
        std::fs::write(d.join("sub/stray.rs"), "").unwrap();
        std::fs::create_dir(d.join("snapshots")).unwrap();
        std::fs::write(d.join("snapshots/x.snap"), "").unwrap();
        let err = std::panic::catch_unwind(|| assert_no_forgotten_test_files(d))
            .unwrap_err()
            .downcast::<String>()
            .unwrap();
        assert!(err.contains("lost.rs") && err.contains("stray.rs"), "{err}");
        assert!(
            !err.contains("kept.rs") && !err.contains("inner.rs"),
            "{err}"
        );
        std::fs::remove_file(d.join("lost.rs")).unwrap();
        std::fs::remove_file(d.join("sub/stray.rs")).unwrap();
        assert_no_forgotten_test_files(d);
    }
}
