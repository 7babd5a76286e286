//! Frame time of the TUI on a long session: `cargo run --release --example tui_bench [ENTRIES]`.
//!
//! Writes a synthetic journal whose one session has ENTRIES entries (default 5000), opens its stuck
//! submission in the tree at 160x48 (TestBackend, so no terminal I/O is timed), and times full
//! frames (layout + draw into the buffer + ratatui's diff) while scrolling, paging and toggling.

use std::time::{Duration, Instant};

use turnscope_tui::harness::{write_synthetic_journal, Harness, HarnessOptions};

fn stats(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let n = v.len();
    let mean = v.iter().sum::<Duration>() / n as u32;
    println!(
        "{name:<34} n={n:<5} mean {:>8.3} ms   p50 {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms",
        mean.as_secs_f64() * 1e3,
        v[n / 2].as_secs_f64() * 1e3,
        v[(n * 99 / 100).min(n - 1)].as_secs_f64() * 1e3,
        v[n - 1].as_secs_f64() * 1e3
    );
}

fn main() {
    let entries: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let dir = std::env::temp_dir().join(format!("turnscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("bench.db");
    let now = 1_767_600_000_000;
    let written = write_synthetic_journal(&db, entries, now).unwrap();
    let mut o = HarnessOptions::new(now);
    o.width = 160;
    o.height = 48;
    let t = Instant::now();
    let mut h = Harness::open(&db, o).unwrap();
    let refresh = t.elapsed();
    let t = Instant::now();
    h.press("<Enter>");
    let open = t.elapsed();
    h.render();
    let tree_rows = h.tree_row_count();
    println!("session: {written} entries; tree rows visible when open: {tree_rows}");
    println!("first refresh (list + verdicts): {:.1} ms; open submission (load + classify + tree): {:.1} ms", refresh.as_secs_f64() * 1e3, open.as_secs_f64() * 1e3);

    let frame = |h: &mut Harness, keys: &str| {
        h.press(keys);
        let t = Instant::now();
        h.draw_frame();
        t.elapsed()
    };
    stats(
        "scroll j x1000 (tree, top)",
        (0..1000).map(|_| frame(&mut h, "j")).collect(),
    );
    stats(
        "page down x200",
        (0..200).map(|_| frame(&mut h, "<PgDn>")).collect(),
    );
    stats(
        "jump to end G / top g x100",
        (0..100)
            .map(|i| frame(&mut h, if i % 2 == 0 { "G" } else { "g" }))
            .collect(),
    );
    frame(&mut h, "Z");
    let rows = h.tree_row_count();
    stats(
        &format!("expand all ({rows} rows), scroll x1000"),
        (0..1000).map(|_| frame(&mut h, "j")).collect(),
    );
    stats(
        "collapse/expand all x50",
        (0..50)
            .map(|i| frame(&mut h, if i % 2 == 0 { "z" } else { "Z" }))
            .collect(),
    );
    // Key handling included: expand/collapse all relayouts the whole tree (O(rows)).
    stats(
        "z/Z key + frame x50",
        (0..50)
            .map(|i| {
                let t = Instant::now();
                h.press(if i % 2 == 0 { "z" } else { "Z" });
                h.draw_frame();
                t.elapsed()
            })
            .collect(),
    );
    stats("detail pane scroll x500", {
        frame(&mut h, "<Tab>");
        (0..500).map(|_| frame(&mut h, "j")).collect()
    });
    let _ = std::fs::remove_dir_all(&dir);
}
