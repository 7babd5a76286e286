//! The runtime profile written end to end: its shape, its exact whale and its determinism. Here
//! rather than in `scale_runtime.rs` because they go through `scale::write_scale`, which uses
//! the runtime layout (a test there would make the two files use each other).

use std::collections::HashMap;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::scale::{write_scale, ScaleOptions, ScaleSummary};
use super::scale_runtime::options;
use turnscope_demo::testing::{strings, TempDb, NOW};

/// Write the runtime profile at a small factor with a whale of `whale` entries.
fn written(tag: &str, whale: usize) -> (TempDb, ScaleOptions, ScaleSummary) {
    let t = TempDb::new(tag);
    let o = options(0.002, NOW, 7)
        .with_whale_entries(whale)
        .expect("whale fits");
    let s = write_scale(&t.0, &o).expect("written");
    (t, o, s)
}

#[test]
fn small_runtime_database_has_the_shape_and_an_exact_whale() {
    let (t, o, sum) = written("rt-shape", 2_002);
    let c = Connection::open_with_flags(&t.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
    assert_eq!(strings(&c, "PRAGMA integrity_check"), vec!["ok"]);
    assert_eq!((sum.sessions, sum.submissions), (o.sessions, o.submissions));
    assert_eq!(sum.expired, o.expired);
    // Every session but the whale's holds 5–200 entries.
    let mut st = c
        .prepare("SELECT session_id, COUNT(*) FROM flue_session_entries GROUP BY session_id")
        .expect("prepare");
    let sizes: Vec<(String, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("q")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(sizes.len(), o.sessions);
    for (key, n) in &sizes {
        if *key != sum.whale_session_key {
            assert!((5..=200).contains(n), "{key}: {n} entries");
        }
    }
    // Settled assistant tool requests have 3 calls.
    let calls: Vec<String> = strings(
        &c,
        "SELECT data FROM flue_session_entries WHERE data LIKE '%\"stopReason\":\"toolUse\"%' LIMIT 400",
    );
    let three = calls
        .iter()
        .filter(|d| d.matches("\"type\":\"toolCall\"").count() == 3)
        .count();
    assert!(three * 10 >= calls.len() * 8, "{three} of {}", calls.len());
    // The whale: exactly `whale_active` entries on the active path after its input and
    // `whale_abandoned` after it off the path.
    let mut st = c
        .prepare("SELECT entry_id, data FROM flue_session_entries WHERE session_id = ?1 ORDER BY position")
        .expect("prepare");
    let rows: Vec<(String, Value)> = st
        .query_map([&sum.whale_session_key], |r| {
            let d: String = r.get(1)?;
            Ok((r.get(0)?, serde_json::from_str(&d).expect("entry JSON")))
        })
        .expect("q")
        .map(|r| r.expect("row"))
        .collect();
    let pos: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (id.as_str(), i))
        .collect();
    let input = rows
        .iter()
        .position(|(_, v)| v["dispatch"]["dispatchId"] == sum.whale_submission_id.as_str())
        .expect("the whale's input entry");
    let leaf: String = c
        .query_row(
            "SELECT json_extract(data, '$.leafId') FROM flue_sessions WHERE id = ?1",
            [&sum.whale_session_key],
            |r| r.get(0),
        )
        .expect("leaf");
    let mut path = Vec::new();
    let mut at = pos[leaf.as_str()];
    while at != input {
        path.push(at);
        at = pos[rows[at].1["parentId"].as_str().expect("parent")];
    }
    assert_eq!(path.len(), o.whale_active);
    assert_eq!(rows.len() - input - 1 - path.len(), o.whale_abandoned);
    let last = &rows[path[0]].1["message"];
    let request = &rows[path[1]].1["message"];
    assert_eq!(last["role"], "toolResult");
    assert_eq!(request["stopReason"], "toolUse");
    assert_eq!(
        request["content"].as_array().map(|c| c.len() >= 3),
        Some(true)
    );
    let (phase, attempts, max): (String, i64, i64) = c
        .query_row(
            "SELECT j.phase, s.attempt_count, s.max_retry FROM flue_agent_submissions s
             JOIN flue_agent_turn_journals j USING (submission_id) WHERE s.submission_id = ?1",
            [&sum.whale_submission_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("whale row");
    assert_eq!(phase, "tool_request_recorded");
    assert!(attempts > 100 && attempts < max, "{attempts}/{max}");
}

#[test]
fn runtime_profile_is_deterministic() {
    let all = |t: &TempDb| {
        let c = Connection::open_with_flags(&t.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        strings(
            &c,
            "SELECT session_id || position || data FROM flue_session_entries ORDER BY session_id, position",
        )
        .into_iter()
        .chain(strings(
            &c,
            "SELECT submission_id || status || payload FROM flue_agent_submissions ORDER BY sequence",
        ))
        .collect::<Vec<_>>()
    };
    let (a, _, _) = written("rt-det-a", 200);
    let (b, _, _) = written("rt-det-b", 200);
    assert!(all(&a) == all(&b), "two writes with the same seed differ");
}
