//! The fast reads agree with the full one: the list scan (active path from the input to the leaf,
//! `store::walk`) gives the same verdict, classification and plan, and the compact whole-session
//! read (`show`, the TUI) gives the same `turnscope.show/1` document, for every submission of the
//! demo database, a small scale database and every runtime fixture; damage on the walked path
//! makes the scan read the session whole instead.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::{json, Value};
use turnscope_engine::report::{plan_json, Previews, SubmissionReport};
use turnscope_store::{
    fetch_full, JournalStore, PathWalker, RowFilter, SessionRows, SessionScope, SqliteStore,
};

use turnscope_testkit::{JournalBuilder, SessionBuilder};

use crate::support::{manifest, unpack_fixture};

pub(crate) fn verdict_doc(r: &SubmissionReport) -> Value {
    json!({
        "classification": r.classification().state.to_runtime_json(),
        "explanation": r.classification().explanation,
        "batch": r.classification().trailing_partial_batch,
        "verdict": r.verdict(),
        "plan": plan_json(&r.plan),
    })
}

/// Every submission of `db`: scan == full verdicts (one walker for all, so walks are shared),
/// compact `show` document == full one. Returns how many were checked.
fn check_db(db: &Path, now: i64, window: Option<u64>) -> usize {
    check_sessions(db, now, window, |_| true)
}

/// `check_db` for the submissions of the sessions `keep` takes.
fn check_sessions(db: &Path, now: i64, window: Option<u64>, keep: impl Fn(&str) -> bool) -> usize {
    let store = SqliteStore::open(db).unwrap();
    let mut walker = PathWalker::new(window.is_some());
    let mut rows = store.list_submissions(RowFilter::All, 0).unwrap();
    rows.retain(|r| keep(&r.session_key));
    for row in &rows {
        let id = &row.submission_id;
        let full = SubmissionReport::load(&store, id, window, now).unwrap();
        let scan = SubmissionReport::scan(&store, id, &mut walker, window, now).unwrap();
        assert_eq!(
            verdict_doc(&scan),
            verdict_doc(&full),
            "{}: scan differs for {id}",
            db.display()
        );
        // Without previews, as `show --json` reads: the JSON never prints one (the debug build
        // asserts that nothing reads a dropped preview).
        let compact =
            SubmissionReport::load_compact(&store, id, window, now, Previews::Drop).unwrap();
        assert_eq!(
            compact.to_json(),
            full.to_json(),
            "{}: compact show differs for {id}",
            db.display()
        );
        // `show --json` streams its `following`: the same bytes as the whole document.
        let mut streamed = Vec::new();
        compact.write_json_pretty(&mut streamed).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            serde_json::to_string_pretty(&full.to_json()).unwrap() + "\n",
            "{}: streamed show differs for {id}",
            db.display()
        );
    }
    rows.len()
}

#[test]
fn scan_and_compact_reads_agree_with_the_full_read_on_the_demo_and_the_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo.db");
    let now = turnscope_demo::demo_now_ms();
    turnscope_demo::write_demo(&demo, now).unwrap();
    let mut checked = check_db(&demo, now, None) + check_db(&demo, now, Some(200_000));
    for fixture in manifest()["fixtures"].as_array().unwrap() {
        let name = match fixture["db"].as_str().unwrap() {
            "large.db" => "large-tail".to_string(),
            other => other.trim_end_matches(".db").to_string(),
        };
        let path = unpack_fixture(dir.path(), &name);
        let now = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
        checked += check_db(&path, now, Some(200_000)) + check_db(&path, now, None);
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn scan_agrees_on_a_small_scale_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("scale.db");
    let now = turnscope_demo::demo_now_ms();
    let opts = turnscope_bench::scale::ScaleOptions::scaled(0.0005, now);
    turnscope_bench::scale::write_scale(&db, &opts).unwrap();
    assert!(check_db(&db, now, None) > 50);
}

/// A copy of the demo database with `sql` applied to it.
fn damaged(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let db = dir.join(name);
    turnscope_demo::write_demo(&db, turnscope_demo::demo_now_ms()).unwrap();
    let c = Connection::open(&db).unwrap();
    c.execute_batch(sql).unwrap();
    db
}

#[test]
fn damage_on_the_walked_path_makes_the_scan_read_the_session_whole() {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    // The leaf of every session whose leaf has a parent: its parent id made dangling, its
    // position moved before its parent's (how a cycle shows), its JSON broken, its id changed.
    let leaf =
        "(SELECT json_extract(s.data, '$.leafId') FROM flue_sessions s WHERE s.id = session_id)";
    let cases = [
        format!("UPDATE flue_session_entries SET data = json_set(data, '$.parentId', 'gone') WHERE entry_id = {leaf}"),
        format!("UPDATE flue_session_entries SET position = -5 - position WHERE entry_id = {leaf}"),
        format!("UPDATE flue_session_entries SET data = substr(data, 2) WHERE entry_id = {leaf}"),
        format!("UPDATE flue_session_entries SET data = json_set(data, '$.id', 'other') WHERE entry_id = {leaf}"),
        format!("UPDATE flue_session_entries SET data = CAST(data || x'ff' AS BLOB) WHERE entry_id = {leaf}"),
        "UPDATE flue_sessions SET data = json_set(data, '$.leafId', 'nowhere')".to_string(),
    ];
    for (i, sql) in cases.iter().enumerate() {
        let db = damaged(dir.path(), &format!("d{i}.db"), sql);
        check_db(&db, now, None);
        let store = SqliteStore::open(&db).unwrap();
        let mut walker = PathWalker::new(false);
        for row in store.list_submissions(RowFilter::All, 0).unwrap() {
            SubmissionReport::scan(&store, &row.submission_id, &mut walker, None, now).unwrap();
        }
        assert!(!walker.fallbacks.is_empty(), "case {i}: {sql}");
    }
}

#[test]
fn compact_reads_keep_only_the_input_whole_and_fetch_the_rest_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let now = turnscope_demo::demo_now_ms();
    turnscope_demo::write_demo(&db, now).unwrap();
    let store = SqliteStore::open(&db).unwrap();
    let rows = store.session_rows().unwrap();
    let c = Connection::open(&db).unwrap();
    for row in store.list_submissions(RowFilter::All, 0).unwrap() {
        let r =
            SubmissionReport::load_compact(&store, &row.submission_id, None, now, Previews::Keep)
                .unwrap();
        let Some(s) = r.bundle.session.as_ref() else {
            continue;
        };
        assert_eq!(s.scope, SessionScope::Compact);
        let following: Vec<String> = r
            .following()
            .unwrap_or_default()
            .iter()
            .map(|e| e.id.to_string())
            .collect();
        for e in s.entries.iter() {
            let stored: Vec<u8> = c
                .query_row(
                    "SELECT data FROM flue_session_entries WHERE session_id = ?1 AND entry_id = ?2",
                    [s.id.as_str(), e.id.as_str()],
                    |r| r.get::<_, String>(0),
                )
                .unwrap()
                .into_bytes();
            assert_eq!(e.stored_len as usize, stored.len());
            if r.inspection.input_entry_id.as_deref() == Some(e.id.as_str()) {
                assert!(!e.compact && e.raw.as_bytes() == stored, "{} is full", e.id);
            } else if following.iter().any(|f| *f == e.id) && !e.raw.is_empty() {
                // The path after the input is compact too (a whale submission's is 100,000
                // entries); only entries the compact parser does not handle are parsed whole.
                assert!(!e.compact, "{} holds its text only when parsed whole", e.id);
            }
            let fetched = fetch_full(rows, &s.id, &e.id).unwrap().unwrap();
            assert_eq!(
                fetched.raw.as_bytes(),
                &stored[..],
                "exact bytes of {}",
                e.id
            );
            assert_eq!(fetched.position, e.position);
        }
    }
}

/// Append `cycles` tool rounds after the leaf of every session that has a running submission
/// (an assistant `toolUse` with two calls, its two results, and every 5th round an abandoned
/// result branching off the assistant), so the walk back to the input goes far past its
/// primary-key lookups and reads ahead by position through rows that are not on the path.
pub(crate) fn lengthen(db: &Path, cycles: usize) -> Vec<(String, Vec<String>)> {
    let conn = Connection::open(db).unwrap();
    let keys: Vec<String> = conn
        .prepare(
            "SELECT DISTINCT s.id, json_extract(s.data, '$.leafId') FROM flue_sessions s
             JOIN flue_agent_submissions a ON a.session_key = s.id WHERE a.status = 'running'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut journal = JournalBuilder::new();
    let mut out = Vec::new();
    for (n, key) in keys.into_iter().enumerate() {
        let mut s = SessionBuilder::continuing(&conn, &key).unwrap();
        s.at(1_767_225_600_000); // 2026-01-01T00:00:00.000Z
        let mut path = Vec::new();
        for k in 0..cycles {
            let a = format!("a{n}x{k:05}");
            let call = |j: usize| format!("call_{n}_{k}_{j}");
            s.message(
                &a,
                json!({"role":"assistant","content":[
                    {"type":"toolCall","id":call(0),"name":"t","arguments":{}},
                    {"type":"toolCall","id":call(1),"name":"u","arguments":{}}],
                    "model":"claude-haiku-4-5","usage":{"input":10,"output":2,"cacheRead":0},
                    "stopReason":"toolUse","timestamp":1}),
            );
            path.push(a.clone());
            if k % 5 == 0 {
                s.branch(
                    &a,
                    &format!("x{n}x{k:05}"),
                    json!({"role":"toolResult","toolCallId":call(0),"toolName":"t",
                    "content":[{"type":"text","text":"abandoned"}],"isError":false,"timestamp":1}),
                );
            }
            for j in 0..2 {
                let r = format!("r{n}x{k:05}x{j}");
                s.message(
                    &r,
                    json!({"role":"toolResult","toolCallId":call(j),"toolName":"t",
                    "content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1}),
                );
                path.push(r);
            }
        }
        out.push((key, path));
        journal.session(s);
    }
    drop(conn);
    journal.append_to(db).unwrap();
    out
}

#[test]
fn long_walks_read_ahead_by_position_and_agree_with_the_full_read() {
    // Damage 300 entries from the leaf is in the first read-ahead chunks; 2,000 entries from
    // it, on a path of 2,400, is in a chunk read while the one before it was parsed (the walk's
    // fourth chunk).
    long_walks_agree(120, 300);
    long_walks_agree(800, 2000);
}

/// A walk of about 17,000 entries (5,200 tool rounds) reads on past its third chunk in segments,
/// two halves at once on two connections, and agrees with the full read; damage 12,000 entries
/// from the leaf (in a segment) makes it read the session whole. Only the lengthened session's
/// submissions are checked (the full read of every session is slow in a debug build).
#[test]
fn long_walks_read_segments_in_two_halves_and_agree_with_the_full_read() {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    for damaged in [false, true] {
        let db = dir.path().join(format!("segments-{damaged}.db"));
        turnscope_demo::write_demo(&db, now).unwrap();
        let (key, path) = lengthen(&db, 5200).swap_remove(0);
        if damaged {
            Connection::open(&db)
                .unwrap()
                .execute(
                    "UPDATE flue_session_entries SET data = json_set(data, '$.parentId', 'gone') WHERE session_id = ?1 AND entry_id = ?2",
                    [&key, &path[path.len() - 12000]],
                )
                .unwrap();
        }
        assert!(check_sessions(&db, now, None, |k| k == key) > 0);
        let store = SqliteStore::open(&db).unwrap();
        let mut walker = PathWalker::new(false);
        for row in store.list_submissions(RowFilter::All, 0).unwrap() {
            if row.session_key == key {
                SubmissionReport::scan(&store, &row.submission_id, &mut walker, None, now).unwrap();
            }
        }
        assert!(walker.segments_read > 0);
        assert_eq!(
            !walker.fallbacks.is_empty(),
            damaged,
            "{:?}",
            walker.fallbacks
        );
    }
}

fn long_walks_agree(cycles: usize, depth: usize) {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    // Intact: every verdict agrees and no walk gave up.
    let db = dir.path().join("long.db");
    turnscope_demo::write_demo(&db, now).unwrap();
    let paths = lengthen(&db, cycles);
    assert!(paths.len() > 3);
    check_db(&db, now, None);
    let store = SqliteStore::open(&db).unwrap();
    let mut walker = PathWalker::new(false);
    for row in store.list_submissions(RowFilter::All, 0).unwrap() {
        SubmissionReport::scan(&store, &row.submission_id, &mut walker, None, now).unwrap();
    }
    assert_eq!(walker.fallbacks, Vec::<(String, String)>::new());
    assert_eq!(walker.segments_read, 0);
    drop(store);
    // Damage deep in the walk (past the key lookups): a dangling parent, a parent whose position
    // comes after its child's, and a row off the path sharing a path entry's position (read-ahead
    // chunks end between equal positions, so the lookup must still find it).
    let deep = |p: &Vec<String>| p[p.len() - depth].clone();
    // Each statement gets the session key as ?1 and the deep path entry's id as ?2.
    let cases = [
        ("dangling", "UPDATE flue_session_entries SET data = json_set(data, '$.parentId', 'gone') WHERE session_id = ?1 AND entry_id = ?2", true),
        ("late-parent", "UPDATE flue_session_entries SET position = position + 100000 WHERE session_id = ?1 AND entry_id = ?2", true),
        ("tied-position", "UPDATE flue_session_entries SET position = (SELECT position FROM flue_session_entries WHERE session_id = ?1 AND entry_id = ?2) WHERE session_id = ?1 AND entry_id LIKE 'x%'", false),
    ];
    for (name, damage, falls_back) in cases {
        let db = dir.path().join(format!("{name}.db"));
        turnscope_demo::write_demo(&db, now).unwrap();
        let paths = lengthen(&db, cycles);
        {
            let c = Connection::open(&db).unwrap();
            for (key, path) in &paths {
                c.execute(damage, [key, &deep(path)]).unwrap();
            }
        }
        check_db(&db, now, None);
        let store = SqliteStore::open(&db).unwrap();
        let mut walker = PathWalker::new(false);
        for row in store.list_submissions(RowFilter::All, 0).unwrap() {
            SubmissionReport::scan(&store, &row.submission_id, &mut walker, None, now).unwrap();
        }
        assert_eq!(
            !walker.fallbacks.is_empty(),
            falls_back,
            "{name}: {:?}",
            walker.fallbacks
        );
    }
}

/// A whale session is read in two halves at once, on the store's connection and a second one
/// (`SessionRows::split`), and every document is the one the full read gives, with rows that are
/// not UTF-8 and rows whose `entry_id` is not their `data.id` in each half, and a run of rows
/// sharing the split's position. A position that is not a number (text sorts after every number)
/// makes the store read on one connection; so does a commit between the store's read and the
/// second connection's.
#[test]
fn big_sessions_are_read_in_two_halves_from_one_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    let split_of = |db: &Path, key: &str| -> Option<(i64, usize, usize)> {
        let store = SqliteStore::open(db).unwrap();
        let mut got = None;
        store
            .in_snapshot(&mut || {
                let len = store.entry_count(key)?.unwrap_or(0);
                got = store.split(key, len)?.map(|s| (s.at, s.first_len, s.len));
                Ok(())
            })
            .unwrap();
        got
    };
    // A demo database whose first running session has 2,800 more tool rounds (about 9,000
    // entries, past `SPLIT_FROM`), `sql` run on it (?1 the session's key).
    let whale = |name: &str, sql: &str| -> (PathBuf, String) {
        let db = dir.path().join(format!("{name}.db"));
        turnscope_demo::write_demo(&db, now).unwrap();
        let key = lengthen(&db, 2800)[0].0.clone();
        let c = Connection::open(&db).unwrap();
        for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
            c.execute(statement, [&key]).unwrap();
        }
        (db, key)
    };
    let half = "(SELECT MAX(position) / 2 FROM flue_session_entries WHERE session_id = ?1)";
    let (db, key) = whale(
        "damaged",
        &format!(
            "UPDATE flue_session_entries SET data = CAST(data || x'ff' AS BLOB)
               WHERE session_id = ?1 AND position IN (100, 8000);
             UPDATE flue_session_entries SET entry_id = entry_id || '-col'
               WHERE session_id = ?1 AND position IN (200, 7000);
             UPDATE flue_session_entries SET position = {half}
               WHERE session_id = ?1 AND position BETWEEN {half} - 40 AND {half} + 40"
        ),
    );
    let (at, first_len, len) = split_of(&db, &key).expect("the whale session is split");
    assert!(
        len > 8192 && first_len > 0 && first_len < len,
        "{at} {first_len} {len}"
    );
    let below: usize = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1 AND position < ?2",
            rusqlite::params![key, at],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(below, first_len);
    assert!(check_sessions(&db, now, None, |k| k == key) > 0);

    let (db, key) = whale(
        "text-position",
        "UPDATE flue_session_entries SET position = 'x' WHERE session_id = ?1 AND position = 5",
    );
    assert_eq!(split_of(&db, &key), None);
    assert!(check_sessions(&db, now, None, |k| k == key) > 0);

    // A commit by another connection after the store's read began: the second connection would
    // read a later state, so the store reads alone. The next snapshot may split again.
    let (db, key) = whale("raced", "");
    let store = SqliteStore::open(&db).unwrap();
    let writer = Connection::open(&db).unwrap();
    let mut raced = None;
    store
        .in_snapshot(&mut || {
            let len = store.entry_count(&key)?.unwrap_or(0);
            writer
                .execute(
                    "UPDATE flue_sessions SET data = json_set(data, '$.updatedAt', 'later') WHERE id = ?1",
                    [&key],
                )
                .unwrap();
            raced = Some(store.split(&key, len)?.is_some());
            Ok(())
        })
        .unwrap();
    assert_eq!(raced, Some(false));
    let mut next = None;
    store
        .in_snapshot(&mut || {
            let len = store.entry_count(&key)?.unwrap_or(0);
            next = Some(store.split(&key, len)?.is_some());
            Ok(())
        })
        .unwrap();
    assert_eq!(next, Some(true));
}

/// A listing's second thread reads through a twin store on its own connection, proved to read
/// the store's snapshot: made inside the store's snapshot with nothing committed since it began,
/// it sees what the store sees even after a later commit; a commit between the store's read
/// and the twin's making declines it, as does asking outside a snapshot.
#[test]
fn a_snapshot_twin_reads_the_stores_snapshot_or_is_declined() {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    let db = dir.path().join("twin.db");
    turnscope_demo::write_demo(&db, now).unwrap();
    // A whale session (past `SPLIT_FROM`): the twin reads it in two halves too, on its own
    // second connection, while nothing is committed after the twin's read began.
    let whale = lengthen(&db, 2800)[0].0.clone();
    let splits = |s: &dyn JournalStore| {
        let rows = s.session_rows().unwrap();
        let len = rows.entry_count(&whale).unwrap().unwrap_or(0);
        rows.split(&whale, len).unwrap().is_some()
    };
    let store = SqliteStore::open(&db).unwrap();
    let writer = Connection::open(&db).unwrap();
    let first = store.list_submissions(RowFilter::All, now).unwrap()[0].clone();
    let bump = |attempt: i64| {
        writer
            .execute(
                "UPDATE flue_agent_submissions SET attempt_count = ?1 WHERE submission_id = ?2",
                rusqlite::params![attempt, first.submission_id],
            )
            .unwrap();
    };
    let attempts = |s: &dyn JournalStore| {
        s.find_submission(&first.submission_id)
            .unwrap()
            .attempt_count
    };
    assert!(store.snapshot_twin().is_none(), "outside a snapshot");

    let mut seen = None;
    store
        .in_snapshot(&mut || {
            let mine = attempts(&store);
            let twin = store.snapshot_twin().expect("nothing was committed");
            let split_before = splits(twin.as_ref());
            bump(mine + 7);
            seen = Some((
                mine,
                attempts(twin.as_ref()),
                attempts(&store),
                split_before,
                splits(twin.as_ref()),
            ));
            Ok(())
        })
        .unwrap();
    let (mine, twins, after, split_before, split_after) = seen.unwrap();
    assert_eq!((twins, after), (mine, mine), "both read the snapshot");
    // After the commit the twin's second connection would read a later state: it reads alone.
    assert_eq!((split_before, split_after), (true, false));

    let mut declined = None;
    store
        .in_snapshot(&mut || {
            let mine = attempts(&store);
            bump(mine + 1);
            declined = Some(store.snapshot_twin().is_none());
            Ok(())
        })
        .unwrap();
    assert_eq!(declined, Some(true), "a commit came between");
}
