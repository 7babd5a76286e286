//! The TUI list's kept inspections (`flue2_kept::KeptRows`) against the plain read they stand
//! for, on a generated journal (the `flue2` profile with a whale): every row's `list --json` item
//! and cost equal `Streams::load` + `inspect`'s at the refresh's clock; a later refresh folds no
//! stream and plans every row again at its own clock (leases and deadlines passed in between); a
//! stream whose head moved, or a row that changed, is folded again, and only that one; a stream
//! the worker holds (the opened submission's) is inspected from its fold, not read again.

use std::collections::HashSet;

use serde_json::Value;
use turnscope_core::flue2::Flue2SubmissionRow;
use turnscope_engine::flue2::{item_json, Flue2Options, Streams};
use turnscope_engine::flue2_cost::{cost_json, cost_of};
use turnscope_engine::flue2_kept::KeptRows;
use turnscope_store::Flue2SqliteReader;

const NOW_MS: i64 = 1_780_000_000_000;

/// A row's item and cost as the list shows them.
fn shown(i: &turnscope_engine::flue2::Inspected<'_>, now_ms: i64) -> (Value, Value) {
    (
        item_json(i, now_ms),
        cost_of(i).map_or(Value::Null, |c| cost_json(&c)),
    )
}

#[test]
fn flue2_kept_rows_inspect_and_plan_as_the_plain_read_at_every_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let options = Flue2Options::for_release("2.1.0", 200_000).unwrap();
    let rows = reader.submissions().unwrap();
    let joined = turnscope_core::flue2::joined_by_host(&rows);
    let j = |r: &Flue2SubmissionRow| joined.get(&r.submission_id).cloned().unwrap_or_default();
    let mut all = Streams::default();
    all.load(&reader, &rows).unwrap();
    let heads = reader.stream_heads().unwrap();
    let paths: HashSet<String> = rows
        .iter()
        .filter_map(|r| r.session().map(|k| k.stream_path()))
        .collect();
    assert!(paths.len() > 10, "{} streams", paths.len());

    // Every row compared with the plain read at `now`.
    let compare = |kept: &KeptRows, now: i64| -> Vec<Value> {
        rows.iter()
            .map(|r| {
                let got = kept.inspected(r, now).expect("every row kept");
                let want = all.inspect(r, &options, j(r), now);
                let (got, want) = (shown(&got, now), shown(&want, now));
                assert_eq!(got, want, "{} at {now}", r.submission_id);
                got.0["plan"].clone()
            })
            .collect()
    };

    let none = Streams::default();
    let mut kept = KeptRows::default();
    let first = kept
        .refresh(&reader, &heads, &rows, j, &options, &none)
        .unwrap();
    assert_eq!(first.folded.len(), paths.len(), "each stream folded once");
    assert_eq!(first.inspected, rows.len());
    let at_first = compare(&kept, NOW_MS);

    // Two hours later, nothing appended: nothing folded, every plan made again at that clock.
    let later = NOW_MS + 2 * 3_600_000;
    let again = kept
        .refresh(&reader, &heads, &rows, j, &options, &none)
        .unwrap();
    assert!(again.folded.is_empty() && again.inspected == 0, "{again:?}");
    let at_later = compare(&kept, later);
    let moved = at_first
        .iter()
        .zip(&at_later)
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        moved > 0,
        "no plan changed with the clock: nothing re-planned"
    );

    // A stream whose head moved is folded again, alone; so is the stream of a changed row.
    let whale = rows
        .iter()
        .filter_map(|r| r.session().map(|k| k.stream_path()))
        .max_by_key(|p| all.get(p).map_or(0, |f| f.batches))
        .unwrap();
    let mut moved_heads = heads.clone();
    moved_heads.get_mut(&whale).unwrap().0 += 1;
    let stale = kept
        .refresh(&reader, &moved_heads, &rows, j, &options, &none)
        .unwrap();
    assert_eq!(stale.folded, vec![whale.clone()]);
    compare(&kept, later);
    let mut changed = rows.clone();
    let row = changed
        .iter_mut()
        .find(|r| r.status == "running" && r.session().is_some())
        .expect("a running row");
    row.lease_expires_at += 1;
    let row_path = row.session().unwrap().stream_path();
    let row_id = row.submission_id.clone();
    let refolded = kept
        .refresh(&reader, &moved_heads, &changed, j, &options, &none)
        .unwrap();
    assert_eq!(refolded.folded, vec![row_path]);
    // The row kept is the changed one: the journal's row is no longer kept.
    let original = rows.iter().find(|r| r.submission_id == row_id).unwrap();
    assert!(kept.inspected(original, later).is_none());

    // A stream held (the opened submission's) is inspected from its fold, not read again.
    let mut held = Streams::default();
    held.refresh_paths(&reader, &heads, &HashSet::from([whale.clone()]))
        .unwrap();
    let from_held = kept
        .refresh(&reader, &heads, &rows, j, &options, &held)
        .unwrap();
    assert!(!from_held.folded.contains(&whale), "{from_held:?}");
    assert!(from_held.inspected > 0);
    compare(&kept, later);

    // A view that narrows lets the other rows go.
    let one = &rows[..1];
    kept.refresh(&reader, &heads, one, j, &options, &none)
        .unwrap();
    assert_eq!(kept.len(), 1);
}
