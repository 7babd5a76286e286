//! How long each action holds the write lock (`BEGIN IMMEDIATE` acquired → `COMMIT` done), on
//! fresh copies of the demo database. The runtime's busy timeout is 0, so this is the window in
//! which its own writes would fail.
//!
//! `cargo bench --bench write_lock` prints one JSON line per action.

use std::time::Duration;

use turnscope_engine::actions::{
    plan_fail, plan_repair, plan_requeue, plan_step, ActionPlan, EntryIds,
};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{AuditInfo, JournalStore, RowFilter, SqliteStore, SqliteWriter};

const NOW: i64 = 1_796_018_889_175;
const ROUNDS: usize = 30;

fn main() {
    let dir = std::env::temp_dir().join(format!("turnscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    type Planner = fn(&SubmissionReport, &mut EntryIds) -> Option<ActionPlan>;
    let cases: [(&str, &str, Planner); 5] = [
        ("repair", "travel-desk", |r, ids| {
            plan_repair(r, NOW, ids).ok()
        }),
        ("requeue", "guild-42", |r, ids| {
            plan_requeue(r, NOW, ids).ok()
        }),
        ("fail", "translator-eu", |r, ids| {
            plan_fail(r, "bench", NOW, ids).ok()
        }),
        ("step", "podcast-notes", |r, ids| {
            plan_step(r, NOW, ids).ok()
        }),
        ("repair-first-write", "billing-bot", |r, ids| {
            plan_repair(r, NOW, ids).ok()
        }),
    ];
    for (name, instance, planner) in cases {
        let mut held: Vec<Duration> = Vec::new();
        for round in 0..ROUNDS {
            let db = dir.join(format!("{name}-{round}.db"));
            turnscope_demo::write_demo(&db, NOW).unwrap();
            let store = SqliteStore::open(&db).unwrap();
            let row = store
                .list_submissions(RowFilter::Expired, NOW)
                .unwrap()
                .into_iter()
                .find(|r| r.instance_id().as_deref() == Some(instance))
                .unwrap();
            let report =
                SubmissionReport::load(&store, &row.submission_id, Some(200_000), NOW).unwrap();
            let mut ids = EntryIds::for_report(&report);
            let plan = planner(&report, &mut ids).expect("the action applies");
            let mut writer = SqliteWriter::open(&db).unwrap();
            if name != "repair-first-write" {
                // Create the audit table first, as on any database turnscope already wrote to.
                writer
                    .connection()
                    .execute_batch(turnscope_store::AUDIT_DDL)
                    .unwrap();
            }
            let audit = AuditInfo {
                operator: "bench".into(),
                action: name.into(),
                reason: None,
                summary: plan.summary.clone(),
                now_ms: NOW,
                batch_id: None,
                side_effects: None,
            };
            held.push(
                writer
                    .apply(&plan.fence, &plan.changes, &audit)
                    .unwrap()
                    .lock_held,
            );
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
            }
        }
        held.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{{\"action\":\"{name}\",\"rounds\":{ROUNDS},\"lock_held_ms\":{{\"median\":{:.3},\"p90\":{:.3},\"max\":{:.3}}}}}",
            ms(held[ROUNDS / 2]),
            ms(held[ROUNDS * 9 / 10]),
            ms(held[ROUNDS - 1])
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
