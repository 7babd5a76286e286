//! The audit row's row images and `undo`, on SQLite and PostgreSQL: an undo puts back exactly the
//! rows turnscope changed while they still hold what it wrote, refuses (naming the change) once
//! the runtime acted, is audited itself, and works on an audit table of an older turnscope.

use std::path::Path;

use serde_json::Value;
use turnscope_engine::actions::{run, ActionKind, IdSource};
use turnscope_store::{ApplyError, AuditInfo, JournalStore, RowFilter, UndoTarget};

use crate::backends::{kinds, TestDb};

fn info(action: &str, batch: Option<&str>) -> AuditInfo {
    AuditInfo {
        operator: "undo@test".into(),
        action: action.into(),
        reason: Some("test".into()),
        summary: "s".into(),
        now_ms: turnscope_store::clock::now_ms(),
        batch_id: batch.map(str::to_string),
        side_effects: None,
    }
}

/// A demo written at the real clock (writes plan at the real clock).
fn demo(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("demo.db");
    turnscope_demo::write_demo(&db, turnscope_store::clock::now_ms()).unwrap();
    db
}

fn stuck(store: &dyn JournalStore, instance: &str) -> String {
    store
        .list_submissions(RowFilter::Expired, turnscope_store::clock::now_ms())
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some(instance))
        .unwrap_or_else(|| panic!("no stuck submission for {instance}"))
        .submission_id
}

/// Every row of the tables turnscope writes, as text, to compare whole databases.
fn snapshot(db: &TestDb) -> Vec<String> {
    let store = db.open();
    let mut out = Vec::new();
    for r in store.list_submissions(RowFilter::All, 0).unwrap() {
        out.push(format!("{r:?}"));
        let b = store.load_bundle(&r.submission_id).unwrap();
        out.push(format!("{:?}", b.journal));
        out.push(format!(
            "{:?}",
            b.session.as_ref().map(|s| (&s.leaf_id, s.entries.len()))
        ));
    }
    out
}

fn apply(db: &TestDb, kind: ActionKind, id: &str, batch: Option<&str>) -> i64 {
    let store = db.open();
    let now = turnscope_store::clock::now_ms();
    let p = run::prepare(
        store.reader(),
        kind,
        id,
        Some("r"),
        None,
        None,
        now,
        IdSource::Seeded(7),
    )
    .unwrap();
    let mut plan = p
        .plan
        .unwrap_or_else(|r| panic!("{kind:?} {id}: {}", r.reason));
    // The operator has seen the calls the repair answers `interrupted`.
    plan.acknowledge_side_effects();
    run::apply_in_batch(&mut *db.writer(), &plan, "undo@test", now, batch)
        .unwrap()
        .audit_id
}

#[test]
fn undo_restores_exactly_the_rows_of_a_repair_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        let id = stuck(db.open().reader(), "travel-desk");
        let before = snapshot(&db);
        let audit_id = apply(&db, ActionKind::Repair, &id, None);
        assert_ne!(snapshot(&db), before, "{kind:?}: the repair wrote");
        // The audit row holds the exact before-image of every row it changed.
        let records = db.open().audit_records().unwrap();
        let images = records[0].changes.as_ref().expect("row images");
        assert!(images
            .iter()
            .any(|i| i.table == "flue_session_entries" && i.before.is_none() && i.after.is_some()));
        let journal = images
            .iter()
            .find(|i| i.table == "flue_agent_turn_journals")
            .unwrap();
        assert_eq!(
            journal.before.as_ref().unwrap()["phase"],
            Value::from("tool_request_recorded")
        );
        assert_eq!(
            journal.after.as_ref().unwrap()["phase"],
            Value::from("before_provider")
        );
        // A preview writes nothing.
        let preview = db
            .writer()
            .undo(&UndoTarget::Audit(audit_id), &info("undo", None), false)
            .unwrap();
        assert!(preview.audit_ids.is_empty());
        assert!(
            preview
                .restored
                .iter()
                .any(|l| l.starts_with("delete flue_session_entries")),
            "{:?}",
            preview.restored
        );
        let done = db
            .writer()
            .undo(&UndoTarget::Audit(audit_id), &info("undo", None), true)
            .unwrap();
        assert_eq!(done.records, vec![(audit_id, id.clone())]);
        assert_eq!(snapshot(&db), before, "{kind:?}: exactly the rows before");
        let records = db.open().audit_records().unwrap();
        assert_eq!(records[0].action, "undo");
        assert_eq!(records[0].undoes, Some(audit_id));
        // Undone once: refused the second time.
        let again = db
            .writer()
            .undo(&UndoTarget::Audit(audit_id), &info("undo", None), true)
            .unwrap_err();
        assert!(
            matches!(&again, ApplyError::Refused(m) if m.contains("already undone")),
            "{again}"
        );
        assert!(matches!(
            db.writer()
                .undo(&UndoTarget::Audit(9999), &info("undo", None), true),
            Err(ApplyError::NotFound(_))
        ));
    }
}

#[test]
fn undo_refuses_once_the_runtime_acted_and_says_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        let id = stuck(db.open().reader(), "onboarding-17");
        let audit_id = apply(&db, ActionKind::Requeue, &id, None);
        // The runtime claims the requeued submission.
        db.exec(&format!(
            "UPDATE flue_agent_submissions SET status = 'running', attempt_id = 'claimed-by-runtime' WHERE submission_id = '{id}'"
        ));
        let after_claim = snapshot(&db);
        let err = db
            .writer()
            .undo(&UndoTarget::Audit(audit_id), &info("undo", None), true)
            .unwrap_err();
        let ApplyError::Fenced(changed) = &err else {
            panic!("{kind:?}: {err}")
        };
        assert!(
            changed.iter().any(|c| c
                .contains("status is now 'running' (turnscope wrote 'queued')")
                && c.contains("attempt_id is now 'claimed-by-runtime'")),
            "{kind:?}: {changed:?}"
        );
        assert_eq!(snapshot(&db), after_claim, "{kind:?}: nothing written");
    }
}

#[test]
fn a_batch_is_undone_in_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        let before = snapshot(&db);
        let batch = run::new_batch_id();
        let a = stuck(db.open().reader(), "travel-desk");
        let b = stuck(db.open().reader(), "translator-eu");
        apply(&db, ActionKind::Repair, &a, Some(&batch));
        apply(&db, ActionKind::Fail, &b, Some(&batch));
        let records = db.open().audit_records().unwrap();
        assert!(records
            .iter()
            .all(|r| r.batch_id.as_deref() == Some(batch.as_str())));
        let done = db
            .writer()
            .undo(
                &UndoTarget::Batch(batch.clone()),
                &info("undo", Some("b-undo")),
                true,
            )
            .unwrap();
        assert_eq!(done.records.len(), 2);
        assert_eq!(done.audit_ids.len(), 2);
        assert_eq!(snapshot(&db), before, "{kind:?}");
    }
}

#[test]
fn an_audit_table_of_an_older_turnscope_is_read_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let sub = dir.path().join(format!("{kind:?}"));
        std::fs::create_dir(&sub).unwrap();
        let db = TestDb::from_sqlite(kind, &demo(&sub));
        // The table as turnscope 0.1 created it, with one row.
        let ddl = match kind {
            crate::backends::Kind::Sqlite => "CREATE TABLE turnscope_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, operator TEXT NOT NULL, action TEXT NOT NULL, submission_id TEXT NOT NULL, attempt_id TEXT, reason TEXT, summary TEXT NOT NULL, version TEXT NOT NULL)",
            _ => "CREATE TABLE turnscope_audit (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL, operator TEXT NOT NULL, action TEXT NOT NULL, submission_id TEXT NOT NULL, attempt_id TEXT, reason TEXT, summary TEXT NOT NULL, version TEXT NOT NULL)",
        };
        db.exec("DROP TABLE IF EXISTS turnscope_audit");
        db.exec(ddl);
        db.exec("INSERT INTO turnscope_audit (at, operator, action, submission_id, summary, version) VALUES (1, 'old@host', 'repair', 'x', 'old', '0.0.9')");
        let old = db.open().audit_records().unwrap();
        assert_eq!(old.len(), 1);
        assert!(old[0].changes.is_none() && old[0].batch_id.is_none());
        let err = db
            .writer()
            .undo(&UndoTarget::Audit(old[0].id), &info("undo", None), true)
            .unwrap_err();
        assert!(
            matches!(&err, ApplyError::Refused(m) if m.contains("without the rows it changed")),
            "{err}"
        );
        let id = stuck(db.open().reader(), "travel-desk");
        let new_id = apply(&db, ActionKind::Repair, &id, None);
        let records = db.open().audit_records().unwrap();
        assert_eq!(records.len(), 2, "{kind:?}");
        assert_eq!(records[0].id, new_id);
        assert!(records[0].changes.is_some());
        assert_eq!(records[1].operator, "old@host");
    }
}

#[test]
fn cli_undo_previews_asks_reverts_and_refuses_a_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let store = turnscope_store::SqliteStore::open(&db).unwrap();
    let id = stuck(&store, "travel-desk");
    drop(store);
    let cli = |args: &[&str]| {
        crate::support::turnscope_command()
            .env_remove("TURNSCOPE_NOW_MS")
            .env("TURNSCOPE_OPERATOR", "undo@test")
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let o = cli(&["--write", "repair", "--ack-side-effects", &id, "-y"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("undo: `turnscope --write undo 1`"));
    assert_eq!(cli(&["undo", "1"]).status.code(), Some(2), "needs --write");
    let o = cli(&["--write", "undo", "1"]);
    assert_eq!(o.status.code(), Some(2), "off a terminal without -y");
    let o = cli(&["--write", "undo", "1", "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.contains("undo audit #1: revert audit #1")
            && text.contains("dry run: nothing written."),
        "{text}"
    );
    let o = cli(&["--write", "undo", "1", "-y", "--reason", "wrong submission"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("recorded as audit #2"));
    let o = cli(&["--write", "undo", "1", "-y", "--json"]);
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "turnscope.action/1");
    assert_eq!(v["action"], "undo");
    assert!(v["refused"]["reason"]
        .as_str()
        .unwrap()
        .contains("already undone by audit #2"));
    assert_eq!(cli(&["--write", "undo", "77", "-y"]).status.code(), Some(4));
    let audit: Value = serde_json::from_slice(&cli(&["audit", "--json"]).stdout).unwrap();
    assert_eq!(audit["records"][0]["action"], "undo");
    assert_eq!(audit["records"][0]["undoes"], 1);
    assert_eq!(audit["records"][0]["reason"], "wrong submission");
}
