//! The growth scenario (`cargo bench --bench scale -- --growth`): does doubling the whale's history
//! at most double the cost, and does memory stay under the bound?
//!
//! For each profile (`session`, `runtime`) and each size (15,000, 30,000, 60,000, 120,000,
//! 240,000 entries: the whale session's active path for `session`, the whale submission's active
//! path after its input for `runtime`; a fifth again on abandoned branches), it generates a
//! database with the generator (`turnscope-scale PATH --scale F --profile P --whale-entries N`) (everything else
//! small; cached under the cache directory, keyed by the parameters), then measures, each the
//! median of the runs in child processes with peak RSS from `wait4`:
//!
//! * `show`: `turnscope show WHALE --json` (the release binary);
//! * `open`: the TUI whale open (the `whale_open` child: tree, verdict and plan drawn);
//! * `floor`: the `sqlite3` shell reading the whale's rows (the whale open's floor).
//!
//! It prints time and peak RSS per size, the ratio per doubling and pass/fail against the
//! targets: ×2 data at most ×2.2 time per doubling (the 0.2 is measurement noise on a shared
//! machine), the whole range at most 9/8 of the data ratio (×8 data ≤ ×9 time), RSS ≤ 150 MB.
//!
//! Environment: `TURNSCOPE_BENCH_GROWTH_SIZES` (comma-separated entries, default the five above),
//! `TURNSCOPE_BENCH_GROWTH_PROFILES` (default `session,runtime`), `TURNSCOPE_BENCH_GROWTH_SCALE`
//! (the `--scale` of everything else, default 0.01), `TURNSCOPE_BENCH_CACHE` (default
//! `$TMPDIR/turnscope-bench-growth`), `TURNSCOPE_NOW_MS` (generation and lease clock, default
//! 1780000000000 so cached files stay valid), `TURNSCOPE_BENCH_RUNS` (default 3).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};

use serde_json::{json, Value};

use crate::stats::{median, ms};
use crate::{env_or, floor, mb, pass, setup_at, spawn_scenario, whale_show};

const SIZES: [usize; 5] = [15_000, 30_000, 60_000, 120_000, 240_000];
/// A fixed clock, so a cached database's expired leases stay expired and its live ones live.
const NOW_MS: i64 = 1_780_000_000_000;
/// Per doubling, time may grow by this factor (2 plus noise).
const PER_DOUBLING: f64 = 2.2;

fn list<T: std::str::FromStr>(name: &str, default: Vec<T>) -> Result<Vec<T>, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .map_err(|_| format!("{name}: {x:?} is not valid"))
            })
            .collect(),
    }
}

/// The cached database for these parameters, generated first if missing.
fn database(
    cache: &Path,
    profile: &str,
    scale: f64,
    entries: usize,
    now_ms: i64,
) -> Result<PathBuf, String> {
    let db = cache.join(format!(
        "{profile}-scale{scale}-whale{entries}-seed1-now{now_ms}.db"
    ));
    if db.exists() {
        return Ok(db);
    }
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let part = db.with_extension("part");
    let _ = std::fs::remove_file(&part);
    eprintln!("generating {} …", db.display());
    let t0 = Instant::now();
    // In process: the generator is a library of `turnscope-bench`, not part of the binary.
    let profile = match profile {
        "runtime" => ScaleProfile::Runtime,
        _ => ScaleProfile::Session,
    };
    let opts = ScaleOptions::for_profile(profile, scale, now_ms).with_whale_entries(entries)?;
    write_scale(&part, &opts).map_err(|e| format!("generating {}: {e}", part.display()))?;
    std::fs::rename(&part, &db).map_err(|e| e.to_string())?;
    eprintln!(
        "  {:.1} s, {:.0} MB",
        t0.elapsed().as_secs_f64(),
        std::fs::metadata(&db).map_or(0, |m| m.len()) as f64 / 1e6
    );
    Ok(db)
}

/// One size of one profile.
fn point(
    db: &Path,
    entries: usize,
    now_ms: i64,
    sq: Option<&floor::Sqlite3>,
) -> Result<Value, String> {
    let s = setup_at(db, now_ms)?;
    let floors = floor::Floors::new(db, now_ms, &s.whale_key);
    // Warm-up: the page cache of the whale's rows.
    if let Some(q) = sq {
        q.time(db, &floors.whale)?;
    }
    whale_show(&s)?;
    spawn_scenario(&s, "whale_open")?;
    let mut shows = Vec::new();
    let mut opens = Vec::new();
    let (mut show_rss, mut open_rss) = (0, 0);
    for _ in 0..s.runs {
        let (t, rss, _) = whale_show(&s)?;
        shows.push(t);
        show_rss = show_rss.max(rss);
        let r = spawn_scenario(&s, "whale_open")?;
        let open = r.event("opened")?.1["open_ms"].as_f64().unwrap_or(0.0);
        opens.push(Duration::from_secs_f64(open / 1e3));
        open_rss = open_rss.max(r.rss_kb);
    }
    let floor_ms = sq
        .map(|q| q.median(db, &floors.whale, s.runs))
        .transpose()?;
    Ok(json!({
        "whale_entries": entries,
        "session_entries": s.whale_entries,
        "database_mb": (std::fs::metadata(db).map_or(0, |m| m.len()) as f64 / 1e5).round() / 10.0,
        "show": {"ms": ms(median(&shows)), "peak_rss_mb": mb(show_rss)},
        "open": {"ms": ms(median(&opens)), "peak_rss_mb": mb(open_rss)},
        "floor_ms": floor_ms,
    }))
}

/// Ratios per doubling and the verdicts of one profile's points, for `key` (`show`, `open`).
fn verdict(points: &[Value], key: &str) -> Value {
    let t = |p: &Value| p[key]["ms"].as_f64().unwrap_or(0.0);
    let n = |p: &Value| p["whale_entries"].as_f64().unwrap_or(1.0);
    let steps: Vec<Value> = points
        .windows(2)
        .map(|w| {
            let data = n(&w[1]) / n(&w[0]);
            let time = t(&w[1]) / t(&w[0]).max(1e-9);
            // Per doubling of the data, whatever the step.
            let per_doubling = time.powf(1.0 / data.log2());
            json!({"from": n(&w[0]), "to": n(&w[1]), "time_ratio": (time * 100.0).round() / 100.0,
                   "per_doubling": (per_doubling * 100.0).round() / 100.0,
                   "result": pass(per_doubling <= PER_DOUBLING)})
        })
        .collect();
    let (first, last) = (points.first(), points.last());
    let whole = match (first, last) {
        (Some(a), Some(b)) if points.len() > 1 => {
            let data = n(b) / n(a);
            let time = t(b) / t(a).max(1e-9);
            json!({"data_ratio": data, "time_ratio": (time * 100.0).round() / 100.0,
                   "target": format!("<= {:.2}x (9/8 of the data ratio)", data * 9.0 / 8.0),
                   "result": pass(time <= data * 9.0 / 8.0)})
        }
        _ => Value::Null,
    };
    let rss_ok = points
        .iter()
        .all(|p| p[key]["peak_rss_mb"].as_f64().unwrap_or(f64::MAX) <= 150.0);
    let steps_ok = steps.iter().all(|s| s["result"] == "pass");
    json!({
        "steps": steps,
        "whole_range": whole,
        "per_doubling_target": format!("<= {PER_DOUBLING} per doubling (2 plus noise)"),
        "result": pass(steps_ok && whole["result"] != "FAIL"),
        "rss_target": "<= 150 MB at every size",
        "rss_result": pass(rss_ok),
    })
}

pub fn run() -> Result<(), String> {
    let sizes: Vec<usize> = list("TURNSCOPE_BENCH_GROWTH_SIZES", SIZES.to_vec())?;
    let profiles: Vec<String> = list(
        "TURNSCOPE_BENCH_GROWTH_PROFILES",
        vec!["session".to_string(), "runtime".to_string()],
    )?;
    let scale: f64 = env_or("TURNSCOPE_BENCH_GROWTH_SCALE", 0.01);
    let now_ms: i64 = env_or("TURNSCOPE_NOW_MS", NOW_MS);
    let cache = std::env::var("TURNSCOPE_BENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("turnscope-bench-growth"));
    let sq = floor::Sqlite3::find();
    let mut by_profile = serde_json::Map::new();
    for profile in &profiles {
        let mut points = Vec::new();
        for &n in &sizes {
            let db = database(&cache, profile, scale, n, now_ms)?;
            eprintln!("{profile}: whale {n} entries …");
            points.push(point(&db, n, now_ms, sq.as_ref())?);
        }
        let show = verdict(&points, "show");
        let open = verdict(&points, "open");
        by_profile.insert(
            profile.clone(),
            json!({"points": points, "show": show, "open": open}),
        );
    }
    let doc = json!({
        "schema": "turnscope.bench.growth/1",
        "scale": scale,
        "now_ms": now_ms,
        "cache": cache.display().to_string(),
        "machine": floor::machine(),
        "runs": env_or("TURNSCOPE_BENCH_RUNS", 3usize).max(1),
        "floor_tool": sq.as_ref().map(|q| q.version.clone()),
        "profiles": by_profile,
    });
    table(&doc);
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn table(d: &Value) {
    let f = |v: &Value| v.as_f64().map_or("-".to_string(), |x| format!("{x:.1}"));
    let empty = serde_json::Map::new();
    for (profile, p) in d["profiles"].as_object().unwrap_or(&empty) {
        eprintln!();
        eprintln!(
            "growth, profile {profile} (everything else at --scale {}):",
            d["scale"]
        );
        eprintln!(
            "{:>9} {:>8} {:>11} {:>9} {:>8} {:>11} {:>9} {:>8} {:>11} {:>8}",
            "entries",
            "DB MB",
            "show ms",
            "RSS MB",
            "×/doubl",
            "open ms",
            "RSS MB",
            "×/doubl",
            "sqlite3 ms",
            "×/doubl"
        );
        let points = p["points"].as_array().cloned().unwrap_or_default();
        let floor_step = |i: usize| -> String {
            if i == 0 {
                return "-".into();
            }
            let (a, b) = (&points[i - 1], &points[i]);
            match (a["floor_ms"].as_f64(), b["floor_ms"].as_f64()) {
                (Some(x), Some(y)) if x > 0.0 => {
                    let data = b["whale_entries"].as_f64().unwrap_or(1.0)
                        / a["whale_entries"].as_f64().unwrap_or(1.0);
                    format!("{:.2}", (y / x).powf(1.0 / data.log2()))
                }
                _ => "-".into(),
            }
        };
        for (i, pt) in points.iter().enumerate() {
            let step = |key: &str| {
                if i == 0 {
                    "-".to_string()
                } else {
                    f(&p[key]["steps"][i - 1]["per_doubling"])
                }
            };
            eprintln!(
                "{:>9} {:>8} {:>11} {:>9} {:>8} {:>11} {:>9} {:>8} {:>11} {:>8}",
                pt["whale_entries"].as_u64().unwrap_or(0),
                f(&pt["database_mb"]),
                f(&pt["show"]["ms"]),
                f(&pt["show"]["peak_rss_mb"]),
                step("show"),
                f(&pt["open"]["ms"]),
                f(&pt["open"]["peak_rss_mb"]),
                step("open"),
                f(&pt["floor_ms"]),
                floor_step(i),
            );
        }
        for key in ["show", "open"] {
            let v = &p[key];
            eprintln!(
                "{key}: {}: {}; whole range ×{} for ×{} data ({}): {}; RSS ≤ 150 MB: {}",
                v["per_doubling_target"].as_str().unwrap_or(""),
                v["steps"]
                    .as_array()
                    .map(|s| s.iter().all(|x| x["result"] == "pass"))
                    .map_or("-", pass),
                f(&v["whole_range"]["time_ratio"]),
                f(&v["whole_range"]["data_ratio"]),
                v["whole_range"]["target"].as_str().unwrap_or("-"),
                v["whole_range"]["result"].as_str().unwrap_or("-"),
                v["rss_result"].as_str().unwrap_or("-"),
            );
        }
    }
    eprintln!();
}
