//! The 2.x read path's shortcuts against the plain reads they replace, on a generated journal
//! (the `flue2` profile, tool-heavy streams and a whale): every stream read from its text
//! (`fold_stream`, records never built as JSON trees, most kept as a digest) folds to the same
//! conversations as its records parsed as trees and folded whole (`parse_batch`, `fold_owned`),
//! and `Streams::inspect_each` (one stream held at a time) gives every row the verdict,
//! disposition and plan `Streams::load` + `inspect` give it.

use std::collections::HashMap;

use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};
use turnscope_core::flue2::{parse_batch, InstanceState};
use turnscope_engine::flue2::{fold_stream, item_json, Flue2Options, Streams};
use turnscope_store::Flue2SqliteReader;

const NOW_MS: i64 = 1_780_000_000_000;

#[test]
fn flue2_read_path_folds_and_inspects_as_the_plain_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flue2.db");
    let opts = ScaleOptions::for_profile(ScaleProfile::Flue2, 0.002, NOW_MS)
        .with_whale_entries(3_000)
        .expect("a whale in range");
    write_scale(&db, &opts).expect("the flue2 profile writes");
    let reader = Flue2SqliteReader::open(&db).unwrap();

    let mut streams = 0;
    for s in reader.streams().unwrap() {
        let read = fold_stream(&reader, &s.path).unwrap();
        let records = reader
            .stream_batches(&s.path)
            .unwrap()
            .iter()
            .flat_map(|b| parse_batch(&b.data).unwrap())
            .collect::<Vec<_>>();
        let tree = InstanceState::fold_owned(records).unwrap();
        let read = read.state.unwrap();
        assert_eq!(read.conversations, tree.conversations, "{}", s.path);
        streams += 1;
    }
    assert!(streams > 10, "{streams} streams");

    let options = Flue2Options::for_release("2.1.0", 200_000).unwrap();
    let rows = reader.submissions().unwrap();
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    for r in &rows {
        if let (Some(host), "joined") = (&r.joined_into, r.status.as_str()) {
            joined
                .entry(host.clone())
                .or_default()
                .push(r.submission_id.clone());
        }
    }
    let j = |id: &str| joined.get(id).cloned().unwrap_or_default();
    let mut all = Streams::default();
    all.load(&reader, &rows).unwrap();
    let mut each =
        Streams::inspect_each(&reader, &rows, &options, |r| j(&r.submission_id), NOW_MS).unwrap();
    assert_eq!(each.len(), rows.len());
    let mut planned = 0;
    for r in &rows {
        let want = item_json(
            &all.inspect(r, &options, j(&r.submission_id), NOW_MS),
            NOW_MS,
        );
        let got = item_json(&each.remove(&r.submission_id).unwrap().attach(r), NOW_MS);
        assert_eq!(got, want, "{}", r.submission_id);
        planned += usize::from(want["plan"]["step"].is_number());
    }
    assert!(planned > 0, "no row's plan fires a step: nothing compared");
}
