//! The flue 2.x operator actions through the binary, on copies of the 2.1.0 crash fixtures, at
//! the real clock: the preview's exact row change, refusals (exit 3, the file untouched), the
//! applied row (only the previewed columns changed, byte for byte), the audit record, `undo`
//! (the before-image back exactly), `undo` refused once the row changed, and the fence of the
//! store's write transaction. The runtime's own handling of each accepted action:
//! `runtime2_actions.rs`.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{turnscope_as, unpack_db};
use turnscope_core::flue2::{Flue2ColumnChange, Flue2Fence};
use turnscope_core::recovery::changes::SqlValue;
use turnscope_store::{ApplyError, AuditInfo, Flue2SqliteWriter};

fn turnscope(db: &Path, args: &[&str]) -> std::process::Output {
    turnscope_as(
        db,
        "tester",
        &[&["--context-window", "200000"], args].concat(),
    )
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Every column of the row, by name.
fn row(db: &Path, id: &str) -> serde_json::Map<String, Value> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT * FROM flue_agent_submissions WHERE submission_id = ?1")
        .unwrap();
    let names: Vec<String> = s.column_names().iter().map(|n| n.to_string()).collect();
    s.query_row([id], |r| {
        let mut m = serde_json::Map::new();
        for (i, n) in names.iter().enumerate() {
            let v = match r.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => json!(n),
                rusqlite::types::ValueRef::Real(f) => json!(f),
                rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                rusqlite::types::ValueRef::Blob(b) => json!(b.len()),
            };
            m.insert(n.clone(), v);
        }
        Ok(m)
    })
    .unwrap()
}

fn stuck(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT submission_id FROM flue_agent_submissions WHERE status = 'running' ORDER BY sequence LIMIT 1",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

fn bytes(db: &Path) -> Vec<u8> {
    std::fs::read(db).unwrap()
}

#[test]
fn abort_previews_applies_audits_and_undoes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let id = stuck(&db);
    let before = row(&db, &id);
    let file = bytes(&db);
    // The preview: one column, and the next pass computed on the row after it.
    let o = turnscope(&db, &["--write", "abort", &id, "--dry-run", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["schema"], "turnscope.flue2.action/1");
    assert_eq!(doc["format"], "flue-2.x");
    assert_eq!(doc["dryRun"], true);
    assert_eq!(doc["applied"], Value::Null);
    let changes = doc["preview"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["column"], "abort_requested_at");
    assert_eq!(changes[0]["before"], Value::Null);
    assert!(changes[0]["after"].as_i64().unwrap() > before["lease_expires_at"].as_i64().unwrap());
    assert_eq!(doc["preview"]["fence"]["attemptId"], before["attempt_id"]);
    assert_eq!(doc["next"]["name"], "abort");
    assert_eq!(doc["next"]["rowAfter"]["error"], "Submission was aborted.");
    assert_eq!(bytes(&db), file, "a dry run wrote");
    // The text preview names the row, the column and the next pass.
    let o = turnscope(&db, &["--write", "abort", &id, "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("abort_requested_at    NULL → "), "{text}");
    assert!(
        text.contains("next            step 3 (abort) of the reconciler"),
        "{text}"
    );
    assert!(text.ends_with("dry run: nothing written.\n"));
    // Read-only without --write.
    let o = turnscope(&db, &["abort", &id]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(bytes(&db), file);

    let o = turnscope(&db, &["--write", "abort", &id, "-y", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let applied = json_of(&o);
    let audit_id = applied["applied"]["auditId"].as_i64().unwrap();
    let after = row(&db, &id);
    let mut expected = before.clone();
    expected.insert("abort_requested_at".into(), changes[0]["after"].clone());
    // Other preview run, other clock: the applied document's own value is what was written.
    expected.insert(
        "abort_requested_at".into(),
        applied["preview"]["changes"][0]["after"].clone(),
    );
    assert_eq!(after, expected, "only abort_requested_at changed");

    let o = turnscope(&db, &["audit", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let trail = json_of(&o);
    assert_eq!(trail["format"], "flue-2.x");
    let rec = &trail["records"][0];
    assert_eq!(rec["id"], audit_id);
    assert_eq!(rec["action"], "abort");
    assert_eq!(rec["operator"], "tester");
    assert_eq!(rec["submission_id"], id.as_str());
    let image = &rec["changes"][0];
    assert_eq!(image["table"], "flue_agent_submissions");
    assert_eq!(
        Value::Object(image["before"].as_object().unwrap().clone()),
        Value::Object(before.clone())
    );
    assert_eq!(
        Value::Object(image["after"].as_object().unwrap().clone()),
        Value::Object(after.clone())
    );
    assert!(rec["summary"]
        .as_str()
        .unwrap()
        .contains("next pass: 3 abort"));

    // Undo: the row as it was, every column.
    let audit = audit_id.to_string();
    let o = turnscope(&db, &["--write", "undo", &audit, "--dry-run", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o)["format"], "flue-2.x");
    assert_eq!(row(&db, &id), after);
    let o = turnscope(&db, &["--write", "undo", &audit, "-y"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(row(&db, &id), before);
    let o = turnscope(&db, &["--write", "undo", &audit, "-y"]);
    assert_eq!(o.status.code(), Some(3), "undone twice");
    assert!(String::from_utf8_lossy(&o.stderr).contains("already undone"));
}

#[test]
fn undo_is_refused_once_the_row_changed_after_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "input-applied", dir.path());
    let id = stuck(&db);
    let o = turnscope(
        &db,
        &["--write", "extend", &id, "--deadline", "1h", "-y", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["next"]["name"], "replace");
    let audit = doc["applied"]["auditId"].as_i64().unwrap().to_string();
    // The runtime acts: its replaceSubmissionAttempt's columns.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET attempt_id = 'attempt_next', attempt_count = attempt_count + 1 WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    let changed = row(&db, &id);
    let o = turnscope(&db, &["--write", "undo", &audit, "-y"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("changed since turnscope wrote them"));
    assert_eq!(row(&db, &id), changed, "a refused undo wrote");
}

#[test]
fn refusals_exit_3_with_the_reason_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 6] = [
        // The deadline passed: the runtime's next pass times it out, it does not requeue it.
        (
            "claimed-before-input",
            &["requeue"],
            "would not requeue it: its next pass takes step 5 timeout",
        ),
        // Its input is on the conversation: the runtime replaces the attempt.
        ("input-applied", &["requeue"], "would not requeue it"),
        (
            "tool-batch-1-of-3",
            &["fail", "--reason", "x"],
            "tool batch is at the leaf",
        ),
        ("completed-unsettled", &["abort"], "settles it completed"),
        ("abort-intent", &["abort"], "already requested"),
        (
            "abort-intent",
            &["extend", "--deadline", "1h"],
            "extending changes nothing",
        ),
    ];
    for (name, args, why) in cases {
        let db = unpack_db("flue-2.1.0", name, dir.path());
        let id = stuck(&db);
        let file = bytes(&db);
        let mut full = vec!["--write", args[0], &id];
        full.extend_from_slice(&args[1..]);
        full.extend(["-y", "--json"]);
        let o = turnscope(&db, &full);
        assert_eq!(o.status.code(), Some(3), "{name} {args:?}");
        let doc = json_of(&o);
        assert!(
            doc["refused"]["reason"].as_str().unwrap().contains(why),
            "{name}: {doc}"
        );
        assert_eq!(doc["applied"], Value::Null);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error: refused: ") && err.contains("\nhint: "),
            "{err}"
        );
        assert_eq!(bytes(&db), file, "{name}: a refusal wrote");
    }
    // Rows the runtime's pass does not reconcile: settled and queued.
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let c = rusqlite::Connection::open(&db).unwrap();
    for status in ["settled", "queued"] {
        let other: String = c
            .query_row(
                "SELECT submission_id FROM flue_agent_submissions WHERE status = ?1",
                [status],
                |r| r.get(0),
            )
            .unwrap();
        // Abort writes a queued row (the runtime honours the intent there); the others do not.
        let o = turnscope(
            &db,
            &["--write", "extend", &other, "--deadline", "1h", "-y"],
        );
        assert_eq!(o.status.code(), Some(3));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&format!("it is {status}, not running"))
        );
    }
}

/// An abort on a queued row writes the intent alone, fenced on the row staying queued.
#[test]
fn abort_on_a_queued_row_writes_the_intent_and_names_who_settles_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let queued: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'queued'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let settled: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE status = 'settled'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let o = turnscope(&db, &["--write", "abort", &settled, "-y"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing is left to abort"));
    let before = row(&db, &queued);
    let o = turnscope(&db, &["--write", "abort", &queued, "-y", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["next"]["name"], "queued", "{doc}");
    let after = row(&db, &queued);
    for (k, v) in &before {
        if k == "abort_requested_at" {
            assert!(after[k].as_i64().unwrap() > 0);
        } else {
            assert_eq!(&after[k], v, "{k}");
        }
    }
}

#[test]
fn usage_errors_exit_2_and_abort_is_refused_on_a_beta7_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "input-applied", dir.path());
    let id = stuck(&db);
    for args in [
        &["--write", "fail", &id, "-y"][..],
        &["--write", "fail", "--all", "-y"],
        // Filters select with --all only; a write needs --write.
        &["--write", "requeue", &id, "--verdict", "stuck", "-y"],
        &["abort", "--all", "-y"],
    ] {
        let o = turnscope(&db, args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let beta7 = crate::support::unpack_fixture(dir.path(), "before-provider");
    let o = turnscope(&beta7, &["--write", "abort", "x", "-y"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("abort is flue 2.x's abort intent"));
}

#[test]
fn extend_then_requeue_writes_the_runtimes_requeue_and_fail_reserves_its_settlement() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "claimed-before-input", dir.path());
    let id = stuck(&db);
    let o = turnscope(
        &db,
        &["--write", "extend", &id, "--deadline", "1h", "-y", "--json"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o)["next"]["name"], "requeue");
    let before = row(&db, &id);
    // The text preview: the runtime's requeue columns, the note, and what the next claim does.
    let o = turnscope(&db, &["--write", "requeue", &id, "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("status                \"running\" → \"queued\""),
        "{text}"
    );
    assert!(text.contains("note: the deadline is recomputed"), "{text}");
    assert!(
        text.contains("next            no reconciler step (queued)"),
        "{text}"
    );
    assert!(
        text.contains("what the next claim will do\n    1. append the input entry "),
        "{text}"
    );
    let o = turnscope(&db, &["--write", "requeue", &id, "-y", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["next"]["name"], "queued");
    assert_eq!(doc["then"]["name"], "requeue");
    assert!(doc["preview"]["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("the deadline is recomputed"));
    let after = row(&db, &id);
    // requeueSubmission's columns (SAES:488), nothing else.
    let mut expected = before.clone();
    for (k, v) in [
        ("status", json!("queued")),
        ("attempt_id", Value::Null),
        ("input_applied_at", Value::Null),
        ("started_at", Value::Null),
        ("owner_id", Value::Null),
        ("lease_expires_at", json!(0)),
    ] {
        expected.insert(k.into(), v);
    }
    assert_eq!(after, expected);

    let db = unpack_db("flue-2.1.0", "terminal-error", dir.path());
    let id = stuck(&db);
    let before = row(&db, &id);
    let o = turnscope(
        &db,
        &[
            "--write",
            "fail",
            &id,
            "--reason",
            "bad input",
            "-y",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json_of(&o);
    assert_eq!(doc["next"]["name"], "finalize");
    let after = row(&db, &id);
    assert_eq!(after["status"], "terminalizing");
    assert_eq!(
        after["settlement_record_id"],
        format!("record_dispatch-submission:{id}:settled")
    );
    let record: Value = serde_json::from_str(after["settlement_record"].as_str().unwrap()).unwrap();
    assert_eq!(record["outcome"], "failed");
    assert_eq!(record["attemptId"], before["attempt_id"]);
    let message = format!("dispatch({id}) failed: failed by an operator: bad input");
    assert_eq!(record["error"]["message"], message.as_str());
    assert_eq!(doc["next"]["rowAfter"]["error"], message.as_str());
    for k in [
        "attempt_id",
        "owner_id",
        "lease_expires_at",
        "started_at",
        "error",
        "settled_at",
    ] {
        assert_eq!(after[k], before[k], "{k}");
    }
}

#[test]
fn the_store_write_is_fenced_on_the_state_the_preview_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "input-applied", dir.path());
    let id = stuck(&db);
    let r = row(&db, &id);
    let fence = Flue2Fence {
        submission_id: id.clone(),
        status: "running".into(),
        attempt_id: r["attempt_id"].as_str().map(String::from),
        owner_id: r["owner_id"].as_str().map(String::from),
        lease_expires_at: r["lease_expires_at"].as_i64().unwrap(),
        no_joined: false,
        live_lease: false,
    };
    let change = |before: Option<i64>| Flue2ColumnChange {
        column: "abort_requested_at",
        before: before.map_or(SqlValue::Null, SqlValue::Int),
        after: SqlValue::Int(5),
    };
    let audit = AuditInfo {
        operator: "t".into(),
        action: "abort".into(),
        reason: None,
        summary: "s".into(),
        now_ms: 0,
        batch_id: None,
        side_effects: None,
    };
    let mut w = Flue2SqliteWriter::open(&db).unwrap();
    // A column not as read, another attempt, a live lease: each refused, nothing written.
    let stale = [
        (
            fence.clone(),
            change(Some(1)),
            "abort_requested_at changed since the preview",
        ),
        (
            Flue2Fence {
                attempt_id: Some("attempt_other".into()),
                ..fence.clone()
            },
            change(None),
            "attempt_id is",
        ),
    ];
    for (f, c, why) in stale {
        match w.apply(&f, &[c], &audit) {
            Err(ApplyError::Fenced(d)) => assert!(d.join("; ").contains(why), "{d:?}"),
            other => panic!("{other:?}"),
        }
    }
    let far = turnscope_store::clock::now_ms() + 3_600_000;
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET lease_expires_at = ?1 WHERE submission_id = ?2",
            rusqlite::params![far, id],
        )
        .unwrap();
    let live = Flue2Fence {
        lease_expires_at: far,
        ..fence.clone()
    };
    match w.apply(&live, &[change(None)], &audit) {
        Err(ApplyError::Fenced(d)) => assert!(d.join("; ").contains("the lease is live")),
        other => panic!("{other:?}"),
    }
    drop(w);
    let now = row(&db, &id);
    assert_eq!(now["abort_requested_at"], Value::Null);
    let audits: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'turnscope_audit'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(audits, 0, "a fenced write left an audit table behind");
}

/// An abort under a live lease, through the binary: the intent alone is written, a lease the
/// owner renews between the preview and the write does not fence it (the runtime's own
/// `requestSessionAbort` holds no lease), another attempt does, the preview names the pass at
/// the lease's end, and `undo` is refused once the owner has renewed the lease.
#[test]
fn abort_under_a_live_lease_writes_only_the_intent_and_undo_stops_at_the_owners_renewal() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let id = stuck(&db);
    let set_lease = |at: i64| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE flue_agent_submissions SET lease_expires_at = ?1 WHERE submission_id = ?2",
                rusqlite::params![at, id],
            )
            .unwrap();
    };
    let far = turnscope_store::clock::now_ms() + 3_600_000;
    set_lease(far);
    // Requeue, extend and fail stay refused under a live lease; their hint names the abort.
    let o = turnscope(&db, &["--write", "requeue", &id, "-y"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("or abort it"));
    let dry = turnscope(&db, &["--write", "abort", &id, "--dry-run"]);
    let text = String::from_utf8_lossy(&dry.stdout).into_owned();
    assert!(
        dry.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(text.contains("the lease not held (live for"), "{text}");
    assert!(
        text.contains("with an abort intent: the owner's deadline scan"),
        "{text}"
    );
    assert!(
        text.contains("were the owner to stop renewing its lease"),
        "{text}"
    );
    assert!(text.contains("step 3 (abort)"), "{text}");
    let before = row(&db, &id);
    // The owner renews its lease after the preview: the write goes through all the same.
    set_lease(far + 10_000);
    let applied = turnscope(&db, &["--write", "abort", &id, "-y", "--json"]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let after = row(&db, &id);
    for (k, v) in &before {
        match k.as_str() {
            "abort_requested_at" => assert!(after[k].as_i64().unwrap() > 0),
            "lease_expires_at" => assert_eq!(after[k], json!(far + 10_000)),
            _ => assert_eq!(&after[k], v, "{k}"),
        }
    }
    // The owner renews again: undo would recall an intent the owner may have read.
    set_lease(far + 20_000);
    let undo = turnscope(&db, &["--write", "undo", "1", "-y"]);
    assert_eq!(undo.status.code(), Some(3));
    assert!(row(&db, &id)["abort_requested_at"].as_i64().is_some());
    // Another attempt since the preview: the runtime's own fence refuses it.
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir2.path());
    let id2 = stuck(&db2);
    let r = row(&db2, &id2);
    let fence = Flue2Fence {
        submission_id: id2.clone(),
        status: "running".into(),
        attempt_id: Some("attempt_other".into()),
        owner_id: r["owner_id"].as_str().map(String::from),
        lease_expires_at: far,
        no_joined: false,
        live_lease: true,
    };
    let change = Flue2ColumnChange {
        column: "abort_requested_at",
        before: SqlValue::Null,
        after: SqlValue::Int(5),
    };
    let audit = AuditInfo {
        operator: "t".into(),
        action: "abort".into(),
        reason: None,
        summary: "s".into(),
        now_ms: 0,
        batch_id: None,
        side_effects: None,
    };
    let mut w = Flue2SqliteWriter::open(&db2).unwrap();
    match w.apply(&fence, &[change], &audit) {
        Err(ApplyError::Fenced(d)) => assert!(d.join("; ").contains("attempt_id is"), "{d:?}"),
        other => panic!("{other:?}"),
    }
}
