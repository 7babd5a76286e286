//! A 2.x row the runtime cannot read: a batch's `data` stored as a BLOB rather than text, or a
//! spill whose chunks are not all there. The runtime's read of that stream
//! throws (`materializeBatchData`: `stored.startsWith is not a function`, or "Spilled batch chunk
//! rows do not match the recorded count."), so that instance cannot be loaded; every other stream
//! reads as before. turnscope once failed the whole `list` (and `health`, `show`) on such a row.
//! (A missing chunk: `flue2_cli::a_spilled_batch_reads_as_stored_inline_and_a_missing_chunk_…`.)
//! A submission row with a column in another storage class (a `kind` stored as a BLOB) failed
//! every read of the table too; the runtime's row parser rejects that row alone, and its pass
//! settles it as failed.

use std::path::Path;

use serde_json::Value;

use crate::lone_surrogates::turnscope_json;
use crate::runtime_kit::runtime2;
use crate::support::{generated_flue2_journal, unpack_db};

/// The generated journal's clock (its leases expire before it).
const NOW: i64 = 1_796_000_000_000;

/// `list --expired --json` at [`NOW`]: each row's id, stream and judgement.
fn judged(db: &Path) -> Vec<(String, String, Value)> {
    let o = crate::support::turnscope_ok(db, Some(NOW), &["list", "--expired", "--json"]);
    let doc: Value = serde_json::from_slice(&o).unwrap();
    doc["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let judgement = serde_json::json!([s["verdict"], s["classification"], s["plan"]]);
            let i = &s["instance"];
            let stream = format!(
                "agents/{}/{}",
                i["agent"].as_str().unwrap(),
                i["instanceId"].as_str().unwrap()
            );
            (s["id"].as_str().unwrap().to_string(), stream, judgement)
        })
        .collect()
}

#[test]
fn a_batch_whose_data_is_not_text_makes_its_stream_unloadable_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let intact = generated_flue2_journal(dir.path(), NOW);
    let before = judged(&intact);
    assert!(before.len() > 3, "{} expired rows", before.len());
    // The first expired row's stream, damaged in the middle.
    let path = before[0].1.clone();
    // A number or NULL cannot be stored there: the column's TEXT affinity (and NOT NULL) makes
    // text of a number, which the runtime parses (and finds no array of records in).
    for (kind, value) in [("Blob", "CAST(data AS BLOB)"), ("Blob", "x'5b5d'")] {
        let db = dir.path().join(format!("damaged-{}.db", value.len()));
        std::fs::copy(&intact, &db).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        let seq: i64 = c
            .query_row(
                "SELECT seq FROM flue_conversation_stream_batches WHERE path = ?1 \
                 ORDER BY seq LIMIT 1 OFFSET 1",
                [&path],
                |r| r.get(0),
            )
            .unwrap();
        let sql = format!(
            "UPDATE flue_conversation_stream_batches SET data = {value} WHERE path = ?1 AND seq = ?2"
        );
        assert_eq!(c.execute(&sql, rusqlite::params![path, seq]).unwrap(), 1);
        drop(c);
        let after = judged(&db);
        assert_eq!(after.len(), before.len(), "{kind}: every row listed");
        let why = format!(
            "the runtime cannot load this instance: batch {seq} of {path}: its data is stored \
             as {kind}, not text: the runtime's read of the stream fails on it (TypeError: \
             stored.startsWith is not a function)"
        );
        for ((id, stream, was), (id_after, _, now)) in before.iter().zip(&after) {
            assert_eq!(id, id_after);
            if *stream == path {
                assert_eq!(now[0]["label"], "error", "{kind} {id}: {now}");
                assert_eq!(now[0]["error"], why.as_str(), "{kind} {id}");
            } else {
                assert_eq!(
                    now, was,
                    "{kind} {id}: another stream's row judged differently"
                );
            }
        }
        // `health` names the stream unloadable, and only that one.
        let health = turnscope_json(&db, &["health", "--all", "--json"]);
        let unloadable: Vec<&Value> = health["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["findings"][0]["kind"] == "unreadable")
            .collect();
        assert_eq!(unloadable.len(), 1, "{kind}: {health}");
        let what = unloadable[0]["findings"][0]["what"].as_str().unwrap();
        assert!(
            what.ends_with(&why["the runtime cannot load this instance: ".len()..]),
            "{what}"
        );
        // An export keeps the BLOB a BLOB (it was refused once): opened again, plain or
        // redacted, the damaged instance's rows are judged as on the journal.
        let id = &before
            .iter()
            .find(|(_, stream, _)| *stream == path)
            .unwrap()
            .0;
        for redact in [None, Some("--redact")] {
            let out = dir
                .path()
                .join(format!("export-{}-{}.json", value.len(), redact.is_some()));
            let mut args = vec!["export", id.as_str(), "-o", out.to_str().unwrap()];
            args.extend(redact);
            crate::support::turnscope_ok(&db, Some(NOW), &args);
            let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
            let batches = &doc["rows"]["flue_conversation_stream_batches"];
            let d = batches["columns"]
                .as_array()
                .unwrap()
                .iter()
                .position(|c| c == "data")
                .unwrap();
            let blobs = batches["rows"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r[d]["blob"].is_array())
                .count();
            assert_eq!(blobs, 1, "{kind} {redact:?}");
            let reopened: Vec<_> = judged(&out)
                .into_iter()
                .map(|(id, _, judgement)| (id, judgement))
                .collect();
            let on_journal: Vec<_> = after
                .iter()
                .filter(|(_, stream, _)| *stream == path)
                .map(|(id, _, judgement)| (id.clone(), judgement.clone()))
                .collect();
            assert_eq!(reopened, on_journal, "{kind} {redact:?}");
        }
    }
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_runtime_fails_to_read_such_a_stream_with_the_error_turnscope_names() {
    let rt = runtime2("flue2_damaged_batch");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "mid-stream", dir.path());
    let c = rusqlite::Connection::open(&db).unwrap();
    let path: String = c
        .query_row(
            "UPDATE flue_conversation_stream_batches SET data = CAST(data AS BLOB) \
             WHERE seq = 1 RETURNING path",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(c);
    let folded = rt.drive("fold.mjs", &[db.as_os_str()]);
    let stream = folded["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == path.as_str())
        .unwrap_or_else(|| panic!("no stream {path}: {folded}"));
    let thrown = stream["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{stream}"));
    assert_eq!(thrown, "TypeError: stored.startsWith is not a function");
    let list = turnscope_json(&db, &["list", "--status", "all", "--json"]);
    for s in list["submissions"].as_array().unwrap() {
        let error = s["verdict"]["error"].as_str().unwrap_or_default();
        assert!(error.ends_with(&format!("({thrown})")), "{s}");
    }
}

/// What the 2.x runtime's row parser throws on a row it rejects (SAES:704); its pass settles a
/// running row with that error.
const MALFORMED_ROW: &str = "[flue] Persisted agent submission row is malformed.";

#[test]
fn a_submission_column_in_another_storage_class_is_that_rows_and_no_others() {
    let dir = tempfile::tempdir().unwrap();
    let intact = generated_flue2_journal(dir.path(), NOW);
    let before = judged(&intact);
    let id = before[0].0.clone();
    for (column, set) in [
        ("kind", "kind = CAST(kind AS BLOB)"),
        // Read by its `typeof` only (not selected itself): it was not seen at all.
        ("payload", "payload = CAST(payload AS BLOB)"),
        ("attempt_count", "attempt_count = 'one'"),
    ] {
        let db = dir.path().join(format!("row-{column}.db"));
        std::fs::copy(&intact, &db).unwrap();
        let sql = format!("UPDATE flue_agent_submissions SET {set} WHERE submission_id = ?1");
        let c = rusqlite::Connection::open(&db).unwrap();
        assert_eq!(c.execute(&sql, [&id]).unwrap(), 1);
        drop(c);
        // It used to fail every read of the table: `Invalid column type Blob`.
        let after = judged(&db);
        assert_eq!(after.len(), before.len(), "{column}: every row listed");
        for ((was_id, _, was), (now_id, _, now)) in before.iter().zip(&after) {
            assert_eq!(was_id, now_id);
            if *now_id == id {
                assert_eq!(now[2]["name"], "malformed", "{column}: {now}");
                let reason = now[2]["reason"].as_str().unwrap();
                assert!(
                    reason.starts_with(&format!("{column} is stored as "))
                        && reason.contains(MALFORMED_ROW),
                    "{column}: {reason}"
                );
            } else {
                assert_eq!(
                    now, was,
                    "{column} {now_id}: another row judged differently"
                );
            }
        }
        // No action writes it.
        crate::support::no_flue2_action_writes(&db, &id, None, column);
    }
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_runtime_settles_such_a_row_as_turnscope_says() {
    let rt = runtime2("flue2_damaged_batch");
    for column in ["kind", "payload"] {
        let dir = tempfile::tempdir().unwrap();
        let db = unpack_db("flue-2.1.0", "mid-stream", dir.path());
        let c = rusqlite::Connection::open(&db).unwrap();
        let (id, lease): (String, i64) = c
            .query_row(
                &format!(
                    "UPDATE flue_agent_submissions SET {column} = CAST({column} AS BLOB) \
                     WHERE status = 'running' RETURNING submission_id, lease_expires_at"
                ),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        drop(c);
        let now = lease + 1000;
        let shown = crate::support::turnscope_json(&db, Some(now), &["show", &id, "--json"]);
        let reason = shown["plan"]["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("{column} is stored as a BLOB"))
                && reason.contains(MALFORMED_ROW),
            "{column}: {}",
            shown["plan"]
        );
        rt.reconcile_at(&db, now, false);
        let (status, error): (String, String) = rusqlite::Connection::open(&db)
            .unwrap()
            .query_row(
                "SELECT status, error FROM flue_agent_submissions WHERE submission_id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            (status.as_str(), error.as_str()),
            ("settled", MALFORMED_ROW),
            "{column}"
        );
    }
}
