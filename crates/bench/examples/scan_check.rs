//! Check the list scan against the whole-session read on any database:
//! `cargo run --release --example scan_check -- DB [NOW_MS]`. For every expired submission it
//! compares the verdict, classification and plan of `SubmissionReport::scan` (active path since
//! the input) with `SubmissionReport::load_compact` (every entry; equal to the full read, see
//! tests/integration/scan.rs), and prints the differences and the walk's fallbacks.

use std::path::Path;

use serde_json::json;
use turnscope_engine::report::{plan_json, Previews, SubmissionReport};
use turnscope_store::{JournalStore, PathWalker, RowFilter, SqliteStore};

fn doc(r: &SubmissionReport) -> serde_json::Value {
    json!({
        "classification": r.classification().state.to_runtime_json(),
        "batch": r.classification().trailing_partial_batch,
        "verdict": r.verdict(),
        "plan": plan_json(&r.plan),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let db = args.get(1).expect("usage: scan_check DB [NOW_MS]");
    let now: i64 = args.get(2).map_or_else(
        || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64)
        },
        |s| s.parse().expect("NOW_MS"),
    );
    let store = SqliteStore::open(Path::new(db)).expect("open");
    let mut walker = PathWalker::new(false);
    let rows = store
        .list_submissions(RowFilter::Expired, now)
        .expect("list");
    let mut differ = 0;
    for row in &rows {
        let id = &row.submission_id;
        let scan = SubmissionReport::scan(&store, id, &mut walker, None, now).expect("scan");
        let whole =
            SubmissionReport::load_compact(&store, id, None, now, Previews::Drop).expect("load");
        if doc(&scan) != doc(&whole) {
            differ += 1;
            println!("{id}: scan {} / whole {}", doc(&scan), doc(&whole));
        }
    }
    println!(
        "{} expired submissions, {differ} differ, {} read whole by the walk: {:?}",
        rows.len(),
        walker.fallbacks.len(),
        walker.fallbacks
    );
}
