//! The flue 2.x scenarios, run instead of the others when the database is a 2.x journal
//! (`flue_meta.format_version` present; `turnscope-scale PATH --scale 1 --profile flue2`):
//!
//! 1. `flue2_list`: `turnscope list --expired --json` (release binary), next to the `sqlite3`
//!    floor reading the same rows: every submission row, then every batch (and spilled chunk)
//!    of every expired row's stream, in `seq` order;
//! 2. `flue2_whale_show`: `turnscope show WHALE --json`, the whale being the expired row whose
//!    stream has the most batches, next to the floor reading its row and its stream's batches
//!    and chunks;
//! 3. `flue2_health`: `turnscope health --all --json` (every stream folded, one at a time),
//!    next to the floor reading every submission row, every stream's path, and every batch and
//!    spilled chunk of every stream in `(path, seq)` order; its target is issue 32's (≤ 2× floor,
//!    ≤ 150 MB);
//! 4. `flue2_tui_whale_open`: the TUI's whale open on 2.x (a child process per run,
//!    `child::flue2_whale_open`): ⏎ on the whale's row → its detail drawn, against the whale
//!    show's floor; and when the list was drawn; then the detail scrolled (300 `j`, 60 `PgDn`,
//!    `G`, 300 `k`, `g`), each frame a key and a full draw: p99 ≤ 8 ms as beta.7's tree scroll.
//!
//! Targets (issue 31): each ≤ 1.5× its floor (health: ≤ 2×, issue 32), peak RSS ≤ 150 MB.
//! Printed, never asserted.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Value};

use crate::floor::Sqlite3;
use crate::stats::{median, ms};
use crate::{env_or, mb, pass, ratio, scan, wall_ms, whale_show, Setup};

/// Whether `db` is a flue 2.x journal (the runtime's `format_version` key).
pub fn is_flue2(db: &Path) -> bool {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM flue_meta WHERE key = 'format_version'",
                [],
                |r| r.get::<_, i64>(0),
            )
        })
        .is_ok_and(|n| n > 0)
}

/// A quoted SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The stream path of a session key, in SQL (`agents/<agent>/<instance>`).
const PATH_OF_KEY: &str = "'agents/' || json_extract(substr(session_key, 15), '$[0]') || '/' || json_extract(substr(session_key, 15), '$[1]')";

struct Flue2Setup {
    s: Setup,
    whale_path: String,
    whale_batches: usize,
    list_floor: String,
    whale_floor: String,
    health_floor: String,
}

fn setup(db: &Path) -> Result<Flue2Setup, String> {
    let now_ms = env_or("TURNSCOPE_NOW_MS", wall_ms());
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| e.to_string())?;
    let err = |e: rusqlite::Error| e.to_string();
    let expired_sql = format!(
        "SELECT submission_id, {PATH_OF_KEY} FROM flue_agent_submissions WHERE status = 'running' \
         AND lease_expires_at > 0 AND lease_expires_at < {now_ms} AND session_key LIKE 'agent-session:[%'"
    );
    let mut st = conn.prepare(&expired_sql).map_err(err)?;
    let expired: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut best: Option<(usize, String, String)> = None;
    for (id, path) in &expired {
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM flue_conversation_stream_batches WHERE path = ?1",
                [path],
                |r| r.get(0),
            )
            .map_err(err)?;
        if best.as_ref().is_none_or(|b| n as usize > b.0) {
            best = Some((n as usize, id.clone(), path.clone()));
        }
    }
    let (whale_batches, whale_submission, whale_path) =
        best.ok_or("no expired submission in this 2.x journal")?;
    let mut paths: Vec<&str> = expired.iter().map(|(_, p)| p.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let in_list = paths.iter().map(|p| lit(p)).collect::<Vec<_>>().join(",");
    // What turnscope reads: every row (the expired ones are picked from them), then each
    // expired row's stream, batches in order and spilled chunks.
    let rows = "SELECT sequence, submission_id, session_key, kind, status, accepted_at, canonical_ready_at, \
                attempt_id, input_applied_at, abort_requested_at, started_at, joined_into, settled_at, error, \
                attempt_count, max_attempts, timeout_at, owner_id, lease_expires_at, settlement_record_id, \
                settlement_record FROM flue_agent_submissions ORDER BY sequence;";
    let list_floor = format!(
        "{rows} SELECT seq, submission_id, attempt_id, data FROM flue_conversation_stream_batches \
         WHERE path IN ({in_list}) ORDER BY path, seq; SELECT chunk_index, chunk_count, data FROM \
         flue_conversation_stream_batch_chunks WHERE path IN ({in_list}) ORDER BY path, seq, chunk_index;"
    );
    let health_floor = format!(
        "{rows} SELECT path FROM flue_conversation_streams ORDER BY path; SELECT seq, submission_id, \
         attempt_id, data FROM flue_conversation_stream_batches ORDER BY path, seq; SELECT chunk_index, \
         chunk_count, data FROM flue_conversation_stream_batch_chunks ORDER BY path, seq, chunk_index;"
    );
    let w = lit(&whale_path);
    let whale_floor = format!(
        "SELECT * FROM flue_agent_submissions WHERE submission_id = {}; SELECT seq, submission_id, \
         attempt_id, data FROM flue_conversation_stream_batches WHERE path = {w} ORDER BY seq; \
         SELECT chunk_index, chunk_count, data FROM flue_conversation_stream_batch_chunks WHERE \
         path = {w} ORDER BY seq, chunk_index;",
        lit(&whale_submission)
    );
    Ok(Flue2Setup {
        s: Setup {
            db: db.to_path_buf(),
            now_ms,
            runs: env_or("TURNSCOPE_BENCH_RUNS", 3usize).max(1),
            expired: expired.len(),
            whale_key: whale_path.clone(),
            whale_submission,
            whale_entries: whale_batches,
        },
        whale_path,
        whale_batches,
        list_floor,
        whale_floor,
        health_floor,
    })
}

/// The TUI's whale open on a 2.x journal (headless, a child process per run): the median time
/// from ⏎ on the whale's row to its detail drawn, the median time to the list drawn, the
/// largest p99 of the detail's scroll frames over the runs, and the peak RSS of the whole run.
fn tui_whale_open(s: &Setup) -> Result<(f64, f64, f64, u64), String> {
    let mut open = Vec::new();
    let mut list = Vec::new();
    let mut scroll_p99: f64 = 0.0;
    let mut rss = 0;
    for _ in 0..s.runs {
        let r = crate::spawn_scenario(s, "flue2_whale_open")?;
        let v = &r.event("opened")?.1;
        open.push(Duration::from_secs_f64(
            v["open_ms"].as_f64().unwrap_or(0.0) / 1e3,
        ));
        list.push(Duration::from_secs_f64(
            v["list_ms"].as_f64().unwrap_or(0.0) / 1e3,
        ));
        scroll_p99 = scroll_p99.max(v["scroll"]["p99_ms"].as_f64().unwrap_or(f64::MAX));
        rss = rss.max(r.rss_kb);
    }
    Ok((ms(median(&open)), ms(median(&list)), scroll_p99, rss))
}

fn figure(
    name: &str,
    took: &[Duration],
    rss: u64,
    floor: Option<f64>,
    extra: Value,
) -> (Value, bool) {
    figure_within(name, 1.5, took, rss, floor, extra)
}

/// [`figure`] against a target of `times` × the floor.
fn figure_within(
    name: &str,
    times: f64,
    took: &[Duration],
    rss: u64,
    floor: Option<f64>,
    extra: Value,
) -> (Value, bool) {
    let t = ms(median(took));
    let r = ratio(t, floor);
    let ok = floor.is_some_and(|f| t <= times * f) && rss <= 150 * 1024;
    eprintln!(
        "{name:<24} {t:>10.1} ms   floor {:>10}   ratio {:>6}   peak RSS {:>7.1} MB   ≤{times}× floor, ≤150 MB: {}",
        floor.map_or("-".into(), |f| format!("{f:.1} ms")),
        r.as_f64().map_or("-".into(), |x| format!("{x:.2}×")),
        mb(rss),
        pass(ok)
    );
    let mut v = json!({
        "ms": t,
        "floor_ms": floor,
        "ratio": r,
        "peak_rss_mb": mb(rss),
        "target": format!("<= {times}x floor, <= 150 MB"),
        "met": ok,
    });
    if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
        o.extend(e);
    }
    (v, ok)
}

/// `turnscope health --all --json` (the release binary): the time, the peak RSS and the findings
/// counted (exit 8 with findings, 0 without).
fn health_all(s: &Setup) -> Result<(Duration, u64, u64), String> {
    let t0 = std::time::Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_turnscope"))
        .arg("--db")
        .arg(&s.db)
        .args(["health", "--all", "--json"])
        .env("TURNSCOPE_NOW_MS", s.now_ms.to_string())
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env_remove("TURNSCOPE_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("running turnscope health: {e}"))?;
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().expect("piped"), &mut out)
        .map_err(|e| e.to_string())?;
    let (code, rss) = crate::wait_exit_rusage(child);
    let took = t0.elapsed();
    if !matches!(code, Some(0 | 8)) {
        return Err(format!("turnscope health --all --json failed ({code:?})"));
    }
    let doc: Value = serde_json::from_slice(&out).map_err(|e| format!("health output: {e}"))?;
    Ok((took, rss, doc["totals"]["findings"].as_u64().unwrap_or(0)))
}

pub fn run(db: &Path) -> Result<(), String> {
    let f = setup(db)?;
    let s = &f.s;
    eprintln!(
        "scale bench, flue 2.x, on {} ({:.1} GB): {} expired, whale {} ({} batches); {} runs per figure after a warm-up",
        s.db.display(),
        std::fs::metadata(&s.db).map_or(0, |m| m.len()) as f64 / 1e9,
        s.expired,
        f.whale_path,
        f.whale_batches,
        s.runs
    );
    let sq = Sqlite3::find();
    eprintln!("warming up…");
    if let Some(q) = &sq {
        q.time(&s.db, &f.list_floor)?;
        q.time(&s.db, &f.whale_floor)?;
    }
    scan(s)?;
    whale_show(s)?;

    let mut list_t = Vec::new();
    let mut list_rss = 0;
    let mut rows = 0;
    for _ in 0..s.runs {
        let (t, rss, n) = scan(s)?;
        list_t.push(t);
        list_rss = list_rss.max(rss);
        rows = n;
    }
    let list_floor = sq
        .as_ref()
        .map(|q| q.median(&s.db, &f.list_floor, s.runs))
        .transpose()?;
    let mut show_t = Vec::new();
    let mut show_rss = 0;
    let mut bytes = 0;
    for _ in 0..s.runs {
        let (t, rss, b) = whale_show(s)?;
        show_t.push(t);
        show_rss = show_rss.max(rss);
        bytes = b;
    }
    let show_floor = sq
        .as_ref()
        .map(|q| q.median(&s.db, &f.whale_floor, s.runs))
        .transpose()?;

    let (list, list_ok) = figure(
        "list --expired --json",
        &list_t,
        list_rss,
        list_floor,
        json!({ "rows": rows }),
    );
    let (show, show_ok) = figure(
        "whale show --json",
        &show_t,
        show_rss,
        show_floor,
        json!({ "output_bytes": bytes, "batches": f.whale_batches }),
    );
    if let Some(q) = &sq {
        q.time(&s.db, &f.health_floor)?;
    }
    health_all(s)?;
    let mut health_t = Vec::new();
    let mut health_rss = 0;
    let mut found = 0;
    for _ in 0..s.runs {
        let (t, rss, n) = health_all(s)?;
        health_t.push(t);
        health_rss = health_rss.max(rss);
        found = n;
    }
    let health_floor = sq
        .as_ref()
        .map(|q| q.median(&s.db, &f.health_floor, s.runs))
        .transpose()?;
    let (health, health_ok) = figure_within(
        "health --all --json",
        2.0,
        &health_t,
        health_rss,
        health_floor,
        json!({ "findings": found }),
    );
    let (open_ms, list_ms, scroll_p99, tui_rss) = tui_whale_open(s)?;
    // Its floor is the whale show's: the same rows.
    let (tui, tui_ok) = figure(
        "TUI whale open",
        &[Duration::from_secs_f64(open_ms / 1e3)],
        tui_rss,
        show_floor,
        json!({ "list_drawn_ms": list_ms }),
    );
    eprintln!(
        "{:<24} {list_ms:>10.1} ms   (the expired view read, its streams folded)",
        "TUI list drawn"
    );
    let scroll_ok = scroll_p99 <= 8.0;
    eprintln!(
        "{:<24} {scroll_p99:>10.1} ms   p99 of every frame (j, PgDn, G, k, g on the whale's detail), the worst run   ≤8 ms: {}",
        "TUI detail scroll p99",
        pass(scroll_ok)
    );
    let doc = json!({
        "schema": "turnscope.bench.scale.flue2/1",
        "database": s.db.display().to_string(),
        "now_ms": s.now_ms,
        "runs": s.runs,
        "expired": s.expired,
        "whale": { "submission": s.whale_submission, "stream": f.whale_path, "batches": f.whale_batches },
        "machine": crate::floor::machine(),
        "floor_sql": {
            "list": "every submission row in sequence order; then SELECT seq, submission_id, attempt_id, data FROM flue_conversation_stream_batches WHERE path IN (every expired row's stream) ORDER BY path, seq; and their flue_conversation_stream_batch_chunks rows",
            "whale": f.whale_floor,
            "health": "every submission row; every stream's path; every stream's batches in (path, seq) order and every spilled chunk",
        },
        "flue2_list": list,
        "flue2_whale_show": show,
        "flue2_tui_whale_open": tui,
        "flue2_health": health,
        "flue2_tui_detail_scroll": { "p99_ms": scroll_p99, "target": "p99 <= 8 ms", "met": scroll_ok },
        "met": list_ok && show_ok && tui_ok && health_ok && scroll_ok,
    });
    println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    Ok(())
}
