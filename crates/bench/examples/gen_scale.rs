//! Generate the scale journal database and time it:
//! `cargo run --release --example gen_scale -- PATH [--factor F] [--seed N] [--now MS] [--classify]`
//!
//! Prints one JSON line: the summary, elapsed seconds and file size. `--classify` then runs
//! turnscope's own classifier and planner over every expired submission and prints a second JSON
//! line with the submission counts per status and the expired ones per classification label and
//! reconciler rule. `--classify-only --now MS` does only that, on an existing file written with
//! that `now`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use turnscope_bench::scale::{write_scale, ScaleOptions};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, ListQueries, RowFilter, SqliteStore};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let (mut factor, mut seed, mut now, mut classify, mut generate) =
        (1.0f64, None, None, false, true);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--factor" => factor = value().parse().unwrap_or_else(|_| usage("bad --factor")),
            "--seed" => seed = Some(value().parse().unwrap_or_else(|_| usage("bad --seed"))),
            "--now" => now = Some(value().parse().unwrap_or_else(|_| usage("bad --now"))),
            "--classify" => classify = true,
            "--classify-only" => (classify, generate) = (true, false),
            p if path.is_none() && !p.starts_with("--") => path = Some(PathBuf::from(p)),
            other => usage(&format!("unexpected argument {other}")),
        }
    }
    let path = path.unwrap_or_else(|| usage("missing PATH"));
    let now = now.unwrap_or_else(turnscope_demo::demo_now_ms);
    let mut opts = ScaleOptions::scaled(factor, now);
    if let Some(s) = seed {
        opts.seed = s;
    }
    if generate {
        generate_file(&path, &opts, factor);
    }
    if classify {
        classify_file(&path, opts.now_ms);
    }
}

fn generate_file(path: &std::path::Path, opts: &ScaleOptions, factor: f64) {
    let now = opts.now_ms;
    let t = Instant::now();
    let s = write_scale(path, opts).unwrap_or_else(|e| {
        eprintln!("gen_scale: {e}");
        std::process::exit(1)
    });
    let elapsed = t.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({
            "path": path.display().to_string(), "elapsed_s": (elapsed * 100.0).round() / 100.0,
            "bytes": s.bytes, "mib": s.bytes / (1 << 20), "submissions": s.submissions,
            "sessions": s.sessions, "entries": s.entries, "expired": s.expired,
            "whale_submission_id": s.whale_submission_id, "whale_session_key": s.whale_session_key,
            "now_ms": now, "seed": opts.seed, "factor": factor,
        })
    );
}

fn classify_file(path: &std::path::Path, now: i64) {
    let t = Instant::now();
    let store = SqliteStore::open(path).expect("open");
    let statuses: BTreeMap<String, i64> = store
        .status_counts()
        .expect("counts")
        .into_iter()
        .map(|(s, n)| (s.to_string(), n))
        .collect();
    let failed = store
        .count_where(RowFilter::Failed, now)
        .expect("failed count");
    let mut labels: BTreeMap<String, usize> = BTreeMap::new();
    let mut rules: BTreeMap<String, usize> = BTreeMap::new();
    for row in store
        .list_submissions(RowFilter::Expired, now)
        .expect("list")
    {
        let r =
            SubmissionReport::load(&store, &row.submission_id, Some(200_000), now).expect("load");
        *labels.entry(r.classification().state.label()).or_default() += 1;
        let rule = r
            .plan
            .rule
            .map_or("none".to_string(), |n| format!("rule {n}"));
        *rules.entry(rule).or_default() += 1;
    }
    println!(
        "{}",
        json!({"statuses": statuses, "failed_settled": failed, "expired_labels": labels, "expired_rules": rules,
                   "classify_s": (t.elapsed().as_secs_f64() * 100.0).round() / 100.0})
    );
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "gen_scale: {msg}\nusage: gen_scale PATH [--factor F] [--seed N] [--now MS] [--classify | --classify-only]"
    );
    std::process::exit(2)
}
