//! Concurrency on PostgreSQL: two turnscope writers and a simulated runtime writer (its
//! conditional `UPDATE … RETURNING` compare-and-set, like the runtime) race on one submission,
//! many times over. Exactly one wins; nothing is duplicated and nothing is lost. A row lock held
//! by someone else makes turnscope refuse at once ("busy"), writing nothing.

use std::sync::{Arc, Barrier};

use turnscope_core::recovery::changes::RowChange;
use turnscope_engine::actions::{plan_fail, plan_repair, ActionPlan, EntryIds};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{ApplyError, AuditInfo, DbTarget, StoreError};

use crate::backends::{pg_admin, Kind, TestDb};
use crate::support::unpack_fixture;

const NOW: i64 = 1_796_014_405_862;
const ID: &str = "74384fb4";
const SESSION: &str = "agent-session:[\"s1\",\"default\",\"default\"]";
const REAL: &str = r#"{"type":"message","id":"feed0001","parentId":"8dd456d7","timestamp":"2026-11-30T04:52:56.000Z","message":{"role":"toolResult","toolCallId":"tc_crash_0_0","toolName":"fetch_record","content":[{"type":"text","text":"real"}],"details":{},"isError":false,"timestamp":1796014376000}}"#;

fn client(db: &TestDb) -> postgres::Client {
    match &db.target {
        DbTarget::Postgres(t) => postgres::Client::connect(&t.url(), postgres::NoTls).unwrap(),
        DbTarget::Sqlite(_) | DbTarget::Export(_) => unreachable!(),
    }
}

fn seeded_ids(r: &SubmissionReport, seed: u64) -> EntryIds {
    let mut n = seed << 20;
    EntryIds::with_source(
        r,
        Box::new(move || {
            n += 0x1235;
            n
        }),
    )
}

fn audit(action: &str) -> AuditInfo {
    AuditInfo {
        operator: "race@test".into(),
        action: action.into(),
        reason: Some("race".into()),
        summary: "race".into(),
        now_ms: NOW,
        batch_id: None,
        side_effects: None,
    }
}

/// What the runtime read before the race: the session data it holds, and the attempt it runs.
fn runtime_view(c: &mut postgres::Client, id: &str) -> (String, String) {
    let data = c
        .query_one("SELECT data FROM flue_sessions WHERE id = $1", &[&SESSION])
        .unwrap()
        .get(0);
    let attempt = c
        .query_one(
            "SELECT attempt_id FROM flue_agent_submissions WHERE submission_id = $1",
            &[&id],
        )
        .unwrap()
        .get(0);
    (data, attempt)
}

/// What the runtime then does, as one conditional write based on that view:
/// `completeSubmission` (fail rounds), or a session save of a real tool result guarded on the
/// data it holds (repair rounds, taking the runtime's `FOR SHARE` lock first).
fn runtime_write(
    c: &mut postgres::Client,
    id: &str,
    view: &(String, String),
    repair_round: bool,
) -> bool {
    let (old, attempt) = view;
    let mut tx = c.transaction().unwrap();
    let won = if repair_round {
        let mut v: serde_json::Value = serde_json::from_str(old).unwrap();
        v["leafId"] = "feed0001".into();
        let new = serde_json::to_string(&v).unwrap();
        tx.execute(
            "SELECT data FROM flue_sessions WHERE id = $1 FOR SHARE",
            &[&SESSION],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES ($1, 'feed0001', 8, $2)",
            &[&SESSION, &REAL],
        )
        .is_ok()
            && !tx
                .query(
                    "UPDATE flue_sessions SET data = $1 WHERE id = $2 AND data = $3 RETURNING id",
                    &[&new, &SESSION, old],
                )
                .unwrap()
                .is_empty()
    } else {
        !tx.query(
            "UPDATE flue_agent_submissions SET status = 'settled', settled_at = $1, error = NULL
             WHERE submission_id = $2 AND status = 'running' AND attempt_id = $3 RETURNING submission_id",
            &[&NOW, &id, attempt],
        )
        .unwrap()
        .is_empty()
    };
    if won {
        tx.commit().unwrap();
    } else {
        tx.rollback().unwrap();
    }
    won
}

fn inserted_ids(plan: &ActionPlan) -> Vec<String> {
    plan.changes
        .iter()
        .filter_map(|c| match c {
            RowChange::InsertEntry { entry_id, .. } => Some(entry_id.clone()),
            _ => None,
        })
        .collect()
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_two_turnscope_writers_and_the_runtime_race_exactly_one_wins() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let src = unpack_fixture(dir.path(), "tool-batch-mid");
    let mut wins = [0usize; 3];
    for round in 0..24 {
        let repair_round = round % 2 == 0;
        let db = Arc::new(TestDb::from_sqlite(Kind::Postgres, &src));
        let r = SubmissionReport::load(db.open().reader(), ID, Some(200_000), NOW).unwrap();
        let plans: Vec<ActionPlan> = (1..=2)
            .map(|seed| {
                if repair_round {
                    plan_repair(&r, NOW, &mut seeded_ids(&r, seed)).unwrap()
                } else {
                    plan_fail(&r, "race", NOW, &mut seeded_ids(&r, seed)).unwrap()
                }
            })
            .collect();
        let full_id = r.row().submission_id.clone();
        let barrier = Arc::new(Barrier::new(3));
        let mut handles = Vec::new();
        for plan in plans.clone() {
            let (db, barrier) = (db.clone(), barrier.clone());
            handles.push(std::thread::spawn(move || {
                let mut w = db.writer();
                barrier.wait();
                match w.apply(&plan.fence, &plan.changes, &audit(plan.action.as_str())) {
                    Ok(_) => true,
                    Err(ApplyError::Fenced(_))
                    | Err(ApplyError::Store(StoreError::Locked { .. })) => false,
                    Err(e) => panic!("round {round}: {e}"),
                }
            }));
        }
        let runtime = {
            let (db, barrier) = (db.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut c = client(&db);
                let view = runtime_view(&mut c, &full_id);
                barrier.wait();
                runtime_write(&mut c, &full_id, &view, repair_round)
            })
        };
        let won: Vec<bool> = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .chain([runtime.join().unwrap()])
            .collect();
        assert_eq!(
            won.iter().filter(|w| **w).count(),
            1,
            "round {round}: {won:?}"
        );
        for (i, w) in won.iter().enumerate() {
            wins[i] += usize::from(*w);
        }
        // Nothing duplicated: one audit row per turnscope win, unique entry ids, at most one
        // result per tool call id, at most one advisory.
        let turnscope_won = won[0] || won[1];
        assert_eq!(
            db.int("SELECT COUNT(*) FROM turnscope_audit"),
            i64::from(turnscope_won)
        );
        assert_eq!(
            db.int("SELECT COUNT(*) - COUNT(DISTINCT entry_id) FROM flue_session_entries"),
            0
        );
        let session = db.open().load_session(SESSION).unwrap().unwrap();
        let mut call_ids: Vec<String> = session
            .entries
            .iter()
            .filter_map(|e| e.json())
            .filter(|v| v["message"]["role"] == "toolResult")
            .filter_map(|v| v["message"]["toolCallId"].as_str().map(str::to_string))
            .collect();
        let n = call_ids.len();
        call_ids.sort();
        call_ids.dedup();
        assert_eq!(
            call_ids.len(),
            n,
            "round {round}: a tool call has two results"
        );
        assert!(
            db.int("SELECT COUNT(*) FROM flue_session_entries WHERE data LIKE '%submission_interrupted%'")
                <= 1
        );
        // Nothing lost: the winner's rows are all there.
        if let Some(i) = won[..2].iter().position(|w| *w) {
            for id in inserted_ids(&plans[i]) {
                assert!(
                    session.entries.iter().any(|e| e.id == id),
                    "round {round}: entry {id} lost"
                );
            }
            assert_eq!(
                session.leaf_id.as_deref(),
                inserted_ids(&plans[i]).last().map(String::as_str)
            );
        } else if repair_round {
            assert_eq!(session.leaf_id.as_deref(), Some("feed0001"));
        } else {
            assert_eq!(
                db.int(&format!(
                    "SELECT COUNT(*) FROM flue_agent_submissions WHERE submission_id = '{}' AND status = 'settled' AND error IS NULL",
                    r.row().submission_id
                )),
                1
            );
        }
    }
    eprintln!("race wins (writer 1, writer 2, runtime): {wins:?}");
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_a_row_locked_by_someone_else_is_refused_as_busy_and_nothing_is_written() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let src = unpack_fixture(dir.path(), "tool-batch-mid");
    let db = TestDb::from_sqlite(Kind::Postgres, &src);
    let r = SubmissionReport::load(db.open().reader(), ID, Some(200_000), NOW).unwrap();
    let plan = plan_repair(&r, NOW, &mut seeded_ids(&r, 1)).unwrap();
    let entries = db.int("SELECT COUNT(*) FROM flue_session_entries");
    let mut holder = client(&db);
    let mut tx = holder.transaction().unwrap();
    tx.execute(
        "SELECT 1 FROM flue_agent_submissions WHERE submission_id = $1 FOR UPDATE",
        &[&r.row().submission_id],
    )
    .unwrap();
    let started = std::time::Instant::now();
    let err = db
        .writer()
        .apply(&plan.fence, &plan.changes, &audit("repair"))
        .unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "NOWAIT: no queueing"
    );
    match &err {
        ApplyError::Store(e @ StoreError::Locked { .. }) => {
            assert!(e.to_string().contains("busy"), "{e}");
            assert!(e.hint().contains("retry"), "{}", e.hint());
        }
        other => panic!("expected busy, got {other}"),
    }
    tx.rollback().unwrap();
    assert_eq!(db.int("SELECT COUNT(*) FROM flue_session_entries"), entries);
    assert_eq!(db.int("SELECT COUNT(*) FROM turnscope_audit"), 0);
    // Once the lock is gone the same plan applies.
    db.writer()
        .apply(&plan.fence, &plan.changes, &audit("repair"))
        .unwrap();
}
