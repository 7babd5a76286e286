//! The scenarios, each run in its own child process (the bench binary re-executed with
//! `--scenario NAME`), so every figure has its own process start and its own peak RSS. They drive
//! the app only through `turnscope_tui::harness` (headless, TestBackend 160x48). A child prints
//! `BENCH {json}` lines; the parent timestamps the first one of `first_frame` as it arrives.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use turnscope_tui::harness::{Harness, HarnessOptions};

use crate::stats::{ms, summary};

pub struct ChildArgs {
    pub db: PathBuf,
    pub now_ms: i64,
    pub whale_submission: String,
    pub writer: bool,
}

fn report(v: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "BENCH {v}");
    let _ = out.flush();
}

/// Peak resident set of this process so far (kB), from /proc.
pub fn vm_hwm_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn harness(a: &ChildArgs, auto_background: bool) -> Harness {
    let mut o = HarnessOptions::new(a.now_ms);
    o.width = 160;
    o.height = 48;
    o.display_name = "scale.db".into();
    o.auto_background = auto_background;
    Harness::open(&a.db, o).unwrap_or_else(|e| panic!("opening {}: {e}", a.db.display()))
}

pub fn run(name: &str, a: &ChildArgs) {
    match name {
        "first_frame" => first_frame(a),
        "whale_open" => {
            whale_open(a, false);
        }
        "scroll" => scroll(a),
        "refresh" => refresh(a),
        "flue2_whale_open" => flue2_whale_open(a),
        other => panic!("unknown scenario {other}"),
    }
}

/// Process start → the expired list drawn (running rows' verdicts still pending), then how long
/// until every verdict is in.
fn first_frame(a: &ChildArgs) {
    let t0 = Instant::now();
    let mut h = harness(a, false);
    let screen = h.render();
    let drawn = t0.elapsed();
    let rows = h.rows().len();
    let pending = h.loaded_rows().iter().filter(|i| i.pending).count();
    assert!(
        screen.contains("SEQ") && (rows > 0 || a.whale_submission.is_empty()),
        "the list was not drawn:\n{screen}"
    );
    report(
        json!({"event": "drawn", "in_process_ms": ms(drawn), "rows": rows, "pending": pending,
        "progress_shown": screen.contains("verdicts "), "hwm_kb": vm_hwm_kb()}),
    );
    let t1 = Instant::now();
    let mut batches = 0;
    while h.background_step() {
        batches += 1;
        if batches % 8 == 0 {
            h.render();
        }
    }
    let screen = h.render();
    let left = h.loaded_rows().iter().filter(|i| i.pending).count();
    assert_eq!(left, 0, "verdicts still pending:\n{screen}");
    report(
        json!({"event": "done", "verdicts_ms": ms(t1.elapsed()), "batches": batches,
        "hwm_kb": vm_hwm_kb()}),
    );
}

/// Select the whale's expired submission (filter by its id) and open it: tree, verdict and plan
/// drawn. Returns the harness with the whale open.
fn whale_open(a: &ChildArgs, quiet: bool) -> Harness {
    let mut h = harness(a, true);
    h.press("/");
    h.press(&a.whale_submission);
    h.press("<Enter>");
    h.render();
    assert_eq!(
        h.selected_row().map(|i| i.row.submission_id.clone()),
        Some(a.whale_submission.clone()),
        "the whale submission is not in the expired list"
    );
    let t0 = Instant::now();
    h.press("<Enter>");
    let screen = h.render();
    let took = t0.elapsed();
    assert_eq!(h.opened_loaded(), Ok(true), "the whale did not open");
    let detail = h.detail_text();
    let tree_nodes = h.tree_nodes();
    let visible = h.tree_row_count();
    if !quiet {
        report(
            json!({"event": "opened", "open_ms": ms(took), "tree_nodes": tree_nodes,
            "visible_rows": visible, "verdict_drawn": !detail.is_empty() && screen.contains("submission"),
            "hwm_kb": vm_hwm_kb()}),
        );
    }
    h
}

/// Scroll the whale's tree end to end: page steps from top to bottom (everything expanded), then
/// 2,000 line steps down from the top. Each frame: the key, then a full draw.
fn scroll(a: &ChildArgs) {
    let mut h = whale_open(a, true);
    h.press("Z");
    h.press("g");
    h.render();
    let frame = |h: &mut Harness, keys: &str| {
        let t = Instant::now();
        h.press(keys);
        h.render();
        t.elapsed()
    };
    let rows = h.tree_row_count();
    let mut pages = Vec::new();
    loop {
        let before = h.tree_cursor();
        pages.push(frame(&mut h, "<PgDn>"));
        let after = h.tree_cursor();
        if after == before || pages.len() > 1_000_000 {
            break;
        }
    }
    frame(&mut h, "g");
    let lines: Vec<Duration> = (0..2000).map(|_| frame(&mut h, "j")).collect();
    let mut all = pages.clone();
    all.extend(lines.iter().copied());
    // The tree search over the whale's stored text (the worker reads every row of the session)
    // for a text no row holds, so every byte is compared. Timed: one keystroke of it (the
    // tree's own search and one scan); the harness answers each keystroke in line, where the
    // worker would coalesce those typed during a scan.
    h.press("/zz-turnscope-bench-absen");
    let t = Instant::now();
    h.press("t");
    let search = t.elapsed();
    h.press("<Enter>");
    let hits = h.search().1;
    report(
        json!({"event": "scrolled", "tree_rows": rows, "page": summary(&pages),
        "line": summary(&lines), "all": summary(&all), "search_ms": ms(search),
        "search_hits": hits, "hwm_kb": vm_hwm_kb()}),
    );
}

/// Live refresh cycles while a writer thread does runtime-like writes (lease renewals of live
/// submissions, appends to expired submissions' sessions), every change undone right after, so
/// the database ends as it began.
fn refresh(a: &ChildArgs) {
    let mut h = harness(a, true);
    h.render();
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let writer = a.writer.then(|| {
        let (db, stop, writes, now) = (a.db.clone(), stop.clone(), writes.clone(), a.now_ms);
        std::thread::spawn(move || crate::writer::run(&db, now, &stop, &writes))
    });
    // Let the writer start.
    std::thread::sleep(Duration::from_millis(50));
    let mut snapshot = Vec::new();
    let mut complete = Vec::new();
    let mut changed = Vec::new();
    for _ in 0..7 {
        std::thread::sleep(Duration::from_millis(60));
        let t0 = Instant::now();
        h.request_refresh();
        h.settle_requests();
        h.render();
        snapshot.push(t0.elapsed());
        let mut n = 0;
        while h.background_step() {
            n += 1;
        }
        h.render();
        complete.push(t0.elapsed());
        changed.push(n);
    }
    stop.store(true, Ordering::SeqCst);
    let writer_result = writer.map(|w| w.join());
    let writer_ok = match &writer_result {
        None => true,
        Some(Ok(Ok(()))) => true,
        Some(Ok(Err(e))) => panic!("the writer failed: {e}"),
        Some(Err(_)) => panic!("the writer panicked"),
    };
    report(json!({"event": "refreshed", "cycles": snapshot.len(),
        "snapshot": summary(&snapshot), "complete": summary(&complete),
        "writer": a.writer && writer_ok, "writes": writes.load(Ordering::SeqCst),
        "hwm_kb": vm_hwm_kb()}));
}

pub fn db_arg(p: &Path) -> String {
    p.display().to_string()
}

/// The TUI on a flue 2.x journal: open it (the expired view read, its streams folded), select
/// the whale's submission (filter by its id), then ⏎: the detail's document read and drawn; then
/// scrolled.
fn flue2_whale_open(a: &ChildArgs) {
    use turnscope_engine::flue2::Flue2Options;
    use turnscope_tui::flue2::harness::Flue2Harness;
    let mut o = HarnessOptions::new(a.now_ms);
    o.width = 160;
    o.height = 48;
    o.display_name = "flue2.db".into();
    let t0 = Instant::now();
    let options = Flue2Options::for_release("2.1.0", 0).expect("2.1.0");
    let mut h = Flue2Harness::open(&a.db, options, o)
        .unwrap_or_else(|e| panic!("opening {}: {e}", a.db.display()));
    let listed = t0.elapsed();
    let list_hwm = vm_hwm_kb();
    h.press("/");
    h.press(&a.whale_submission);
    h.press("<Enter>");
    assert_eq!(
        h.app.shown_ids(),
        std::slice::from_ref(&a.whale_submission),
        "the whale submission is not in the expired list"
    );
    let t1 = Instant::now();
    h.press("<Enter>");
    let screen = h.render();
    let took = t1.elapsed();
    assert!(
        h.app.opened_doc().is_some()
            && screen.contains(&format!("submission {}", a.whale_submission)),
        "the whale did not open:\n{screen}"
    );
    // Scrolling the whale's detail, key + full draw per frame: 300 `j`, 60 `PgDn`, `G` (the
    // last rows), 300 `k`, `g`.
    let mut frames = Vec::new();
    let mut frame = |keys: &str| {
        let t = Instant::now();
        h.press(keys);
        h.render();
        frames.push(t.elapsed());
    };
    for _ in 0..300 {
        frame("j");
    }
    for _ in 0..60 {
        frame("<PgDn>");
    }
    frame("G");
    for _ in 0..300 {
        frame("k");
    }
    frame("g");
    report(
        json!({"event": "opened", "open_ms": ms(took), "list_ms": ms(listed),
            "list_hwm_kb": list_hwm, "scroll": summary(&frames), "hwm_kb": vm_hwm_kb()}),
    );
}
