//! The same database on PostgreSQL (`TURNSCOPE_BENCH_PG=postgres://…`, a copy made with
//! `turnscope --write --db URL copy-to-postgres FILE`): the first frame and the whale open, each
//! next to its floor, the `psql` shell running the same SQL.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::stats::{median, ms};
use crate::{mb, pass, ratio, spawn_scenario_on, Setup};

/// `psql` on `url` running `sql`, timed from process start to exit (unaligned output, discarded:
/// aligned formatting of the whale's 285 MB would time psql's formatting, not the database).
fn psql(url: &str, sql: &str) -> Result<Duration, String> {
    let t0 = Instant::now();
    let st = Command::new(std::env::var("TURNSCOPE_BENCH_PSQL").unwrap_or_else(|_| "psql".into()))
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-o",
            "/dev/null",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("running psql: {e}"))?;
    let took = t0.elapsed();
    if !st.success() {
        return Err(format!("psql failed on: {sql}"));
    }
    Ok(took)
}

fn psql_median(url: &str, sql: &str, runs: usize) -> Result<f64, String> {
    let v: Vec<Duration> = (0..runs)
        .map(|_| psql(url, sql))
        .collect::<Result<_, _>>()?;
    Ok(ms(median(&v)))
}

/// `None` when `TURNSCOPE_BENCH_PG` is unset.
pub fn measure(s: &Setup, first_frame_sql: &str, whale_sql: &str) -> Result<Option<Value>, String> {
    let Ok(url) = std::env::var("TURNSCOPE_BENCH_PG") else {
        return Ok(None);
    };
    eprintln!("PostgreSQL: warming up…");
    spawn_scenario_on(s, &url, "first_frame")?;
    spawn_scenario_on(s, &url, "whale_open")?;
    let mut ff = Vec::new();
    let mut ff_rss = 0;
    let mut wo = Vec::new();
    let mut wo_rss = 0;
    for _ in 0..s.runs {
        let r = spawn_scenario_on(s, &url, "first_frame")?;
        let (t, v) = r.event("drawn")?;
        ff.push(*t);
        ff_rss = ff_rss.max(v["hwm_kb"].as_u64().unwrap_or(0));
        let r = spawn_scenario_on(s, &url, "whale_open")?;
        let open = r.event("opened")?.1["open_ms"].as_f64().unwrap_or(0.0);
        wo.push(Duration::from_secs_f64(open / 1e3));
        wo_rss = wo_rss.max(r.rss_kb);
    }
    let ff_ms = ms(median(&ff));
    let wo_ms = ms(median(&wo));
    let ff_floor = psql_median(&url, first_frame_sql, s.runs)?;
    let wo_floor = psql_median(&url, whale_sql, s.runs)?;
    // The URL as shown everywhere else: without a password.
    let shown = turnscope_store::DbTarget::parse(&url)
        .map(|t| t.display())
        .unwrap_or_else(|_| "postgres://…".into());
    Ok(Some(json!({
        "database": shown,
        "floor_tool": "psql",
        "first_frame": {
            "ms": ff_ms, "floor_ms": ff_floor, "ratio": ratio(ff_ms, Some(ff_floor)),
            "peak_rss_mb": mb(ff_rss),
            "target": "<= 150 ms and <= 2x floor",
            "result": pass(ff_ms <= 150.0 && ff_ms <= 2.0 * ff_floor),
            "rss_result": pass(mb(ff_rss) <= 150.0),
        },
        "whale_open": {
            "ms": wo_ms, "floor_ms": wo_floor, "ratio": ratio(wo_ms, Some(wo_floor)),
            "peak_rss_mb": mb(wo_rss),
            "target": "<= 2x floor and <= 1000 ms",
            "result": pass(wo_ms <= 1000.0 && wo_ms <= 2.0 * wo_floor),
            "rss_result": pass(mb(wo_rss) <= 150.0),
        },
    })))
}
