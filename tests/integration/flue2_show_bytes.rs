//! A 2.x `show --json` writes its `following` as it formats it (`ShowDocument::write_pretty`,
//! in chunks on two threads for a long conversation), never as one JSON tree: its bytes must be
//! those of the tree the TUI and `diff` read (`show_json`) pretty-printed, keys in the same order.

use std::path::Path;

use serde_json::Value;
use turnscope_bench::scale::{write_scale, ScaleOptions, ScaleProfile};
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_diff::show_doc;
use turnscope_store::Flue2SqliteReader;

use crate::support::{turnscope_ok, unpack_db};

const NOW_MS: i64 = 1_780_000_000_000;

fn show_bytes(db: &Path, id: &str) -> Vec<u8> {
    turnscope_ok(db, Some(NOW_MS), &["show", id, "--json"])
}

/// The submission ids `sql` selects.
fn ids(db: &Path, sql: &str) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare(sql).unwrap();
    let ids = st.query_map([], |r| r.get(0)).unwrap();
    ids.collect::<Result<_, _>>().unwrap()
}

/// The tree's bytes: `show_doc`'s document with the keys only the CLI adds (`cost`, `attempts`,
/// taken from the CLI's own output) after the rest, as the CLI adds them.
fn tree_bytes(db: &Path, id: &str, printed: &Value) -> Vec<u8> {
    let reader = Flue2SqliteReader::open(db).unwrap();
    let opts = Flue2Options::for_release("2.1.0", 0).unwrap();
    let mut doc = show_doc(&reader, &opts, id, NOW_MS).unwrap();
    let o = doc.as_object_mut().unwrap();
    for k in ["cost", "attempts"] {
        o.insert(k.into(), printed[k].clone());
    }
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap();
    bytes.push(b'\n');
    bytes
}

fn assert_same_bytes(db: &Path, id: &str) -> usize {
    let printed = show_bytes(db, id);
    let parsed: Value = serde_json::from_slice(&printed).expect("show --json is JSON");
    let expected = tree_bytes(db, id, &parsed);
    assert!(
        printed == expected,
        "show {id}: the written document differs from the tree's at byte {}",
        printed
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(printed.len().min(expected.len()))
    );
    parsed["following"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_whales_written_document_is_the_trees_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flue2.db");
    let opts = ScaleOptions::for_profile(ScaleProfile::Flue2, 0.002, NOW_MS)
        .with_whale_entries(12_000)
        .unwrap();
    let s = write_scale(&db, &opts).unwrap();
    // Long enough for the second formatting thread (four chunks of 512 entries and more).
    let following = assert_same_bytes(&db, &s.whale_submission_id);
    assert!(following > 4 * 512, "{following} entries after the input");
    // Every other submission of the journal, short or long.
    let all = "SELECT submission_id FROM flue_agent_submissions ORDER BY sequence LIMIT 40";
    for id in ids(&db, all) {
        assert_same_bytes(&db, &id);
    }
}

#[test]
fn every_runtime_fixtures_written_document_is_the_trees_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flue-2.1.0"))
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().unwrap();
                n.strip_suffix(".db.gz").map(str::to_string)
            })
            .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let ids = ids(&db, "SELECT submission_id FROM flue_agent_submissions");
        assert!(!ids.is_empty(), "{name}");
        for id in ids {
            assert_same_bytes(&db, &id);
        }
    }
}
