//! A direct prompt's settlement, written whole as the runtime's pass writes it
//! (`settleDirectSubmission`): reserve the terminal outbox, append the `submission_settled` event
//! once to `agents/<agent>/<instance>`, record its offset, finalize. On every store: the built-in
//! SQLite (keys table and trigger), the `@flue/libsql` SQLite shape (`event_key` column, no
//! trigger) and PostgreSQL. And `undo` refuses a record that appended an event.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_core::journal::records::EventStore;
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::reconciler::RuleResult;
use turnscope_engine::actions::{plan_fail, plan_reconcile, ActionPlan, NextOutcome};
use turnscope_store::{ApplyError, AuditInfo, UndoTarget};

use crate::actions::{apply_on, demo, demo_id_in, ids, report_on, DEMO_NOW};
use crate::backends::{kinds, Kind, TestDb};
use crate::fidelity::assert_published;

/// The demo's SQLite journal turned into the `@flue/libsql` shape (spec §1.2): the `terminal_*`
/// columns, `flue_event_stream_entries.event_key` with its partial unique index instead of the
/// keys table and its trigger.
fn to_libsql(db: &Path) {
    Connection::open(db)
        .unwrap()
        .execute_batch(
            "ALTER TABLE flue_agent_submissions RENAME COLUMN terminal_event_key TO terminal_key;
             ALTER TABLE flue_agent_submissions RENAME COLUMN terminal_event_json TO terminal_event;
             ALTER TABLE flue_agent_submissions RENAME COLUMN terminal_event_offset TO terminal_offset;
             DROP TRIGGER flue_event_stream_key_append;
             ALTER TABLE flue_event_stream_entries ADD COLUMN event_key TEXT;
             UPDATE flue_event_stream_entries SET event_key = (SELECT key FROM flue_event_stream_keys k
               WHERE k.path = flue_event_stream_entries.path AND k.seq = flue_event_stream_entries.seq);
             DROP TABLE flue_event_stream_keys;
             CREATE UNIQUE INDEX flue_event_stream_entries_path_event_key_idx
               ON flue_event_stream_entries (path, event_key) WHERE event_key IS NOT NULL;",
        )
        .unwrap();
}

/// The demo (with `sql` run on it first) on every store: built-in SQLite, libsql-shaped SQLite,
/// and PostgreSQL when configured; each with the event store it should be read as.
fn stores(dir: &Path, sql: &str) -> Vec<(TestDb, EventStore)> {
    let mut out = Vec::new();
    let make = |name: &str| {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let db = demo(&sub);
        if !sql.is_empty() {
            Connection::open(&db).unwrap().execute_batch(sql).unwrap();
        }
        db
    };
    for kind in kinds() {
        let store = match kind {
            Kind::Sqlite => EventStore::KeysTable,
            Kind::Postgres => EventStore::Postgres,
        };
        out.push((
            TestDb::from_sqlite(kind, &make(&format!("{kind:?}"))),
            store,
        ));
    }
    let libsql = make("libsql");
    to_libsql(&libsql);
    out.push((
        TestDb::from_sqlite(Kind::Sqlite, &libsql),
        EventStore::EventKeyColumn,
    ));
    out
}

fn change_names(plan: &ActionPlan) -> Vec<&'static str> {
    plan.changes.iter().map(RowChange::name).collect()
}

fn terminal_event(db: &TestDb, id: &str) -> Value {
    let r = report_on(db, id, DEMO_NOW);
    serde_json::from_str(r.row().terminal_event.as_deref().unwrap()).unwrap()
}

/// Rows of the event stream keyed by `id`'s terminal key, in the table that store keys them in.
fn keyed_rows(db: &TestDb, store: EventStore, id: &str) -> i64 {
    let key = format!("direct-submission:{id}:settled");
    db.int(&match store {
        EventStore::KeysTable => {
            format!("SELECT COUNT(*) FROM flue_event_stream_keys WHERE key = '{key}'")
        }
        _ => format!("SELECT COUNT(*) FROM flue_event_stream_entries WHERE event_key = '{key}'"),
    })
}

#[test]
fn rule_1_and_a_failure_publish_and_settle_on_every_store() {
    let dir = tempfile::tempdir().unwrap();
    for (db, store) in stores(dir.path(), "") {
        let what = format!("{:?}/{store:?}", db.kind);
        // Rule 1: the answer is in the history; its result event is rebuilt from it.
        let id = demo_id_in(db.open().reader(), "alice-laptop");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.plan.rule, Some(1), "{what}: {}", r.plan.reason);
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        let names = change_names(&plan);
        assert_eq!(
            names[..4],
            [
                "update_submission",
                "append_event",
                "update_terminalizing",
                "update_terminalizing"
            ],
            "{what}: reserve, append once, record the offset, finalize"
        );
        let preview = plan.changes[1].preview().join("\n");
        let table = match store {
            EventStore::KeysTable => "insert flue_event_stream_keys row",
            _ => "insert flue_event_stream_entries row",
        };
        assert!(preview.starts_with(table), "{what}: {preview}");
        assert_eq!(
            (
                plan.prediction.outcome.as_str(),
                plan.prediction.verdict.as_str()
            ),
            ("completed", "completed"),
            "{what}: computed from the rows"
        );
        assert_eq!(keyed_rows(&db, store, &id), 0);
        apply_on(&db, &plan, DEMO_NOW).unwrap_or_else(|e| panic!("{what}: {e}"));
        let after = report_on(&db, &id, DEMO_NOW);
        assert_published(&after, &db);
        assert_eq!(keyed_rows(&db, store, &id), 1, "{what}");
        let event = terminal_event(&db, &id);
        assert_eq!(event["outcome"], "completed");
        let keys: Vec<&String> = event["result"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["text", "usage", "model"], "{what}");
        assert!(event["result"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Summary:"));

        // A failure (rule 9 by `fail`): the same four writes with the failure event.
        let id = demo_id_in(db.open().reader(), "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        let plan = plan_fail(&r, "operator gave up", DEMO_NOW, &mut ids(&r)).unwrap();
        assert_eq!(
            plan.prediction.outcome,
            NextOutcome::Result(RuleResult::Failed),
            "{what}"
        );
        apply_on(&db, &plan, DEMO_NOW).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_published(&report_on(&db, &id, DEMO_NOW), &db);
        assert_eq!(terminal_event(&db, &id)["outcome"], "failed");
    }
}

#[test]
fn a_missing_stream_is_created_and_a_closed_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = "agents/support/support-7";
    let gone = format!(
        "DELETE FROM flue_event_stream_keys WHERE path = '{path}';
         DELETE FROM flue_event_stream_entries WHERE path = '{path}';
         DELETE FROM flue_event_streams WHERE path = '{path}';"
    );
    for (db, store) in stores(&dir.path().join("gone"), &gone) {
        let id = demo_id_in(db.open().reader(), "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        assert_eq!(r.bundle.event_stream.as_ref().unwrap().head, None);
        let plan = plan_reconcile(&r, DEMO_NOW, &mut ids(&r)).unwrap();
        assert!(
            change_names(&plan).contains(&"create_event_stream"),
            "{store:?}"
        );
        apply_on(&db, &plan, DEMO_NOW).unwrap_or_else(|e| panic!("{store:?}: {e}"));
        let after = report_on(&db, &id, DEMO_NOW);
        assert_published(&after, &db);
        assert_eq!(
            after.row().terminal_offset.as_deref(),
            Some("0000000000000000_0000000000000000"),
            "{store:?}: the first event of a new stream"
        );
    }
    let closed = format!("UPDATE flue_event_streams SET closed = 1 WHERE path = '{path}'");
    for (db, store) in stores(&dir.path().join("closed"), &closed) {
        let id = demo_id_in(db.open().reader(), "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        // `fail` refuses whole; `reconcile` writes the advisory and leaves the settlement.
        let refusal = plan_fail(&r, "x", DEMO_NOW, &mut ids(&r)).unwrap_err();
        assert!(
            refusal
                .reason
                .contains(&format!("the event stream {path} is closed")),
            "{store:?}: {}",
            refusal.reason
        );
        // `reconcile` writes what comes before the settlement (if anything) and says why it
        // stops there.
        let why = match plan_reconcile(&r, DEMO_NOW, &mut ids(&r)) {
            Ok(plan) => {
                assert!(
                    !change_names(&plan).iter().any(|c| c.contains("event")),
                    "{store:?}: {:?}",
                    change_names(&plan)
                );
                plan.summary
            }
            Err(refusal) => refusal.reason,
        };
        assert!(
            why.contains(&format!("the event stream {path} is closed")),
            "{store:?}: {why}"
        );
    }
}

#[test]
fn undo_refuses_a_record_that_published_an_event() {
    let dir = tempfile::tempdir().unwrap();
    for (db, store) in stores(dir.path(), "") {
        let id = demo_id_in(db.open().reader(), "support-7");
        let r = report_on(&db, &id, DEMO_NOW);
        let plan = plan_fail(&r, "operator gave up", DEMO_NOW, &mut ids(&r)).unwrap();
        let audit_id = apply_on(&db, &plan, DEMO_NOW).unwrap().audit_id;
        // The audit's images hold the event row the write inserted.
        let record = db.open().audit_records().unwrap().remove(0);
        assert!(
            record.changes.as_ref().unwrap().iter().any(|img| {
                img.table == "flue_event_stream_entries"
                    && img.before.is_none()
                    && img.after.is_some()
            }),
            "{store:?}"
        );
        let settled_before = report_on(&db, &id, DEMO_NOW).row().clone();
        let info = AuditInfo {
            operator: "undo@test".into(),
            action: "undo".into(),
            reason: Some("test".into()),
            summary: "s".into(),
            now_ms: turnscope_store::clock::now_ms(),
            batch_id: None,
            side_effects: None,
        };
        let err = db
            .writer()
            .undo(&UndoTarget::Audit(audit_id), &info, true)
            .unwrap_err();
        let ApplyError::Refused(why) = &err else {
            panic!("{store:?}: {err}")
        };
        assert!(
            why.contains("appended a terminal event to the event stream agents/support/support-7")
                && why.contains("subscribers may have seen it"),
            "{store:?}: {why}"
        );
        assert_eq!(
            report_on(&db, &id, DEMO_NOW).row(),
            &settled_before,
            "{store:?}: nothing restored"
        );
        assert_eq!(
            db.open().audit_records().unwrap().len(),
            1,
            "no undo recorded"
        );
    }
}

#[test]
fn the_cli_says_a_published_failure_cannot_be_undone_and_undo_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = demo_id_in(
        &turnscope_store::SqliteStore::open(&db).unwrap(),
        "support-7",
    );
    let run = |args: &[&str]| {
        crate::support::turnscope_command()
            .arg("--db")
            .arg(&db)
            .args(["--operator", "cli@test"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--write", "fail", &id, "--reason", "gave up", "-y"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("insert flue_event_stream_keys row"), "{out}");
    assert!(
        out.contains("note: this write appends the terminal event to the event stream agents/support/support-7, where subscribers read it: it cannot be undone"),
        "{out}"
    );
    assert!(
        out.contains("undo: not possible: the terminal event was appended to the event stream agents/support/support-7"),
        "{out}"
    );
    let o = run(&["--write", "undo", "1", "-y"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("subscribers may have seen it"), "{err}");
}
