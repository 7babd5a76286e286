//! The submissions of one session share its walk: a session of many submissions over a long path
//! is walked about once, whatever order its submissions are listed in and however many other
//! sessions are read between them, and its records are views into one allocation. Each of them
//! walked the whole path again (hours for `list --status all` on the scale database's long
//! session, 2,500 submissions over 120,000 entries).

use std::path::Path;

use serde_json::json;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, PathWalker, RowFilter, SqliteStore};
use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};

use crate::scan::verdict_doc;

/// A session of `turns` dispatch submissions, each an input then `cycles` tool rounds (an
/// assistant `toolUse` with two calls, then their results) and a final answer; the last turn
/// stops after the first result of its last round, its submission running with an expired
/// lease. Returns the submission ids, oldest first, and the path's length.
fn many_turns(db: &Path, n: usize, turns: usize, cycles: usize) -> (Vec<String>, usize) {
    let mut s = SessionBuilder::for_instance(&format!("many-turns-{n}"), 1_795_132_800_000) // 2026-11-20
        .ids("c", "k");
    let mut journal = JournalBuilder::new();
    let mut ids = Vec::new();
    for t in 0..turns {
        let sid = format!("00000000-0000-4000-8000-{n:04}{t:08}");
        s.message_with(
            &format!("in{t:04}"),
            json!({"role":"signal","type":"dispatch_input",
            "tagName":"dispatch","content":"{}","attributes":{"dispatchId":sid},"timestamp":1}),
            vec![("dispatch", json!({"dispatchId":sid}))],
        );
        let last = t + 1 == turns;
        for k in 0..cycles {
            let call = |j: usize| format!("call_{t}_{k}_{j}");
            s.message(
                &format!("a{t:04}x{k:04}"),
                json!({"role":"assistant","content":[
                {"type":"toolCall","id":call(0),"name":"t","arguments":{}},
                {"type":"toolCall","id":call(1),"name":"t","arguments":{}}],
                "model":"claude-haiku-4-5","usage":{"input":10,"output":2,"cacheRead":0},
                "stopReason":"toolUse","timestamp":1}),
            );
            let results = if last && k + 1 == cycles { 1 } else { 2 };
            for j in 0..results {
                s.message(
                    &format!("r{t:04}x{k:04}x{j}"),
                    json!({"role":"toolResult",
                    "toolCallId":call(j),"toolName":"t","content":[{"type":"text","text":"ok"}],
                    "isError":false,"timestamp":1}),
                );
            }
        }
        if !last {
            s.message(
                &format!("done{t:04}"),
                json!({"role":"assistant",
                "content":[{"type":"text","text":"done"}],"model":"claude-haiku-4-5",
                "usage":{"input":10,"output":2,"cacheRead":0},"stopReason":"stop","timestamp":1}),
            );
        }
        let lease = if last { 1_795_000_000_000 } else { 0 };
        let sub = Submission::dispatch(
            &sid,
            s.key(),
            "a",
            "many-turns",
            &json!({}),
            1_794_999_000_000,
        )
        .claimed(&format!("attempt-{t}"), "worker", 1_794_999_000_002, lease)
        .input_applied(1_794_999_000_001)
        .timeout_at(1_899_999_999_999);
        journal.submission(if last {
            sub
        } else {
            sub.settled(1_795_000_000_000, None)
        });
        ids.push(sid);
    }
    let path = s.len();
    journal.session(s).append_to(db).unwrap();
    (ids, path)
}

#[test]
fn a_session_of_many_submissions_is_walked_once_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let now = turnscope_demo::demo_now_ms();
    let db = dir.path().join("many.db");
    turnscope_demo::write_demo(&db, now).unwrap();
    // 24 turns of 272 entries: a long walk, kept while short ones come and go; two more such
    // sessions interleave with it, as the scale database's longest sessions do.
    let (ids, path) = many_turns(&db, 0, 24, 90);
    let (more, more_path): (Vec<Vec<String>>, Vec<usize>) =
        (1..3).map(|n| many_turns(&db, n, 24, 90)).unzip();
    assert!(path > 4096, "{path}");
    let store = SqliteStore::open(&db).unwrap();
    let full: Vec<_> = ids
        .iter()
        .map(|id| verdict_doc(&SubmissionReport::load(&store, id, None, now).unwrap()))
        .collect();
    // One submission of each of 12 other sessions, read between two of this one's (more
    // sessions than the walker keeps).
    let mut others: Vec<(String, String)> = store
        .list_submissions(RowFilter::All, 0)
        .unwrap()
        .into_iter()
        .filter(|r| !r.session_key.contains("many-turns"))
        .map(|r| (r.session_key, r.submission_id))
        .collect();
    others.sort();
    others.dedup_by(|a, b| a.0 == b.0);
    let others: Vec<String> = others.into_iter().map(|(_, id)| id).take(12).collect();
    assert_eq!(others.len(), 12);
    let newest_first: Vec<usize> = (0..ids.len()).rev().collect();
    let oldest_first: Vec<usize> = (0..ids.len()).collect();
    let scattered: Vec<usize> = (0..ids.len()).map(|i| (i * 7) % ids.len()).collect();
    for (name, order) in [
        ("oldest first", &oldest_first),
        ("newest first", &newest_first),
        ("scattered", &scattered),
    ] {
        let mut walker = PathWalker::new(false);
        let mut reports = Vec::new();
        // What the other sessions' walks cost at most, between two of this session's.
        let others_walked = {
            let mut w = PathWalker::new(false);
            for o in &others {
                SubmissionReport::scan(&store, o, &mut w, None, now).unwrap();
            }
            w.entries_walked
        };
        assert!(ids.len() * others_walked < path / 2, "{others_walked}");
        for &i in order.iter() {
            for o in &others {
                SubmissionReport::scan(&store, o, &mut walker, None, now).unwrap();
            }
            let r = SubmissionReport::scan(&store, &ids[i], &mut walker, None, now).unwrap();
            assert_eq!(verdict_doc(&r), full[i], "{name}: submission {i}");
            reports.push(r);
            for m in &more {
                SubmissionReport::scan(&store, &m[i], &mut walker, None, now).unwrap();
            }
        }
        assert_eq!(walker.fallbacks, Vec::<(String, String)>::new(), "{name}");
        // The long paths are walked once; the other sessions' short walks may be repeated.
        // Walking one again to each input would walk about 12 times its path.
        let paths = path + more_path.iter().sum::<usize>();
        assert!(
            walker.entries_walked <= paths + ids.len() * others_walked,
            "{name}: {} entries walked for paths of {paths}",
            walker.entries_walked
        );
        let allocations = |rs: &[SubmissionReport]| {
            let mut distinct: Vec<&SubmissionReport> = Vec::new();
            for r in rs {
                let e = &r.bundle.session.as_ref().unwrap().entries;
                if !distinct
                    .iter()
                    .any(|d| d.bundle.session.as_ref().unwrap().entries.shares_with(e))
                {
                    distinct.push(r);
                }
            }
            distinct.len()
        };
        // Oldest first, the first walk reaches every later input: one allocation for all. In
        // another order the shared path is extended, to at least twice its length each time.
        let most = if name == "oldest first" { 1 } else { 6 };
        assert!(
            allocations(&reports) <= most,
            "{name}: {}",
            allocations(&reports)
        );
    }
}
