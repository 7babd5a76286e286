//! Shared helpers: the fixtures and the seeded Rng (from turnscope-testkit, shared with the crates'
//! test binaries), the real binary, and scale journals from the generator.

use std::path::Path;

pub use turnscope_testkit::{fixtures_dir, gunzip, manifest, unpack_fixture, Rng};

/// The `NAME`s of a fixtures folder's `NAME.db.gz` files (`flue-2.1.0`, `flue-formats`), sorted.
pub fn db_fixture_names(folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join(folder))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".db.gz").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// `folder/NAME.db.gz` unpacked to `dir/NAME.db`.
pub fn unpack_db(folder: &str, name: &str, dir: &Path) -> std::path::PathBuf {
    let dest = dir.join(format!("{name}.db"));
    std::fs::write(
        &dest,
        gunzip(&fixtures_dir().join(folder).join(format!("{name}.db.gz"))),
    )
    .unwrap();
    dest
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

/// `turnscope --db DB ARGS…` through the real binary, `TURNSCOPE_DB` unset and, with `now`, the
/// clock pinned there: its success asserted (its stderr shown otherwise), its standard output.
pub fn turnscope_ok(db: impl AsRef<std::ffi::OsStr>, now: Option<i64>, args: &[&str]) -> Vec<u8> {
    let mut cmd = turnscope_command();
    cmd.env_remove("TURNSCOPE_DB");
    if let Some(now) = now {
        cmd.env("TURNSCOPE_NOW_MS", now.to_string());
    }
    let out = cmd.arg("--db").arg(db).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// [`turnscope_ok`]'s output read as one JSON document.
pub fn turnscope_json(
    db: impl AsRef<std::ffi::OsStr>,
    now: Option<i64>,
    args: &[&str],
) -> serde_json::Value {
    let out = turnscope_ok(db, now, args);
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out)))
}

/// `turnscope --db DB ARGS…` through the real binary at the real clock (a write plans and fences
/// there), `operator` naming who writes; its whole output, whatever its exit.
pub fn turnscope_as(db: &Path, operator: &str, args: &[&str]) -> std::process::Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", operator)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// Every row of a 2.x journal's `flue_agent_submissions`, every column as text, in order; the
/// columns of `stamped` (those a write stamps with its own clock) said only as `set` or `NULL`.
pub fn flue2_submission_rows(db: &Path, stamped: &[&str]) -> Vec<Vec<String>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT * FROM flue_agent_submissions ORDER BY sequence")
        .unwrap();
    let names: Vec<String> = s.column_names().iter().map(|n| n.to_string()).collect();
    s.query_map([], |r| {
        (0..names.len())
            .map(|i| {
                let v = match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into(),
                    other => format!("{other:?}"),
                };
                Ok(if v != "NULL" && stamped.contains(&names[i].as_str()) {
                    "set".into()
                } else {
                    v
                })
            })
            .collect()
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
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

/// A small generated flue 2.x journal (the scale generator's `flue2` profile at 0.002, a whale of
/// 3,000 records, leases judged at `now_ms`) at `dir/flue2.db`.
pub fn generated_flue2_journal(dir: &Path, now_ms: i64) -> std::path::PathBuf {
    use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};
    let db = dir.join("flue2.db");
    let opts = ScaleOptions::for_profile(ScaleProfile::Flue2, 0.002, now_ms)
        .with_whale_entries(3_000)
        .expect("a whale in range");
    write_scale(&db, &opts).expect("the flue2 profile writes");
    db
}

/// A submission's `(status, error)` in `db`.
pub fn status_and_error(db: &Path, id: &str) -> (String, Option<String>) {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT status, error FROM flue_agent_submissions WHERE submission_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
}

/// Every 2.x action turnscope offers on a running row (`abort`, `requeue`, `extend`) refused on
/// submission `id` of `db` (at `now`, else the wall clock), and the file not written.
pub fn no_flue2_action_writes(db: &Path, id: &str, now: Option<i64>, what: &str) {
    let before = std::fs::read(db).unwrap();
    for action in [
        &["abort"][..],
        &["requeue"],
        &["extend", "--attempts", "20"],
    ] {
        let args = [
            &["--db", db.to_str().unwrap(), "--write"][..],
            action,
            &[id, "-y"],
        ]
        .concat();
        let mut cmd = turnscope_command();
        if let Some(now) = now {
            cmd.env("TURNSCOPE_NOW_MS", now.to_string());
        }
        let o = cmd.args(&args).output().unwrap();
        assert!(!o.status.success(), "{what} {action:?}");
    }
    assert!(std::fs::read(db).unwrap() == before, "{what}: written");
}
