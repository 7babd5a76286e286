//! `sessions` on flue 2.x journals, through the binary, on every 2.1.0 crash fixture: each id
//! 2.x keeps (stream path, instance, submission id and prefix, attempt, owner, conversation and
//! record ids) finds the stream SQL says holds it, and `--text` finds exactly the streams whose
//! records hold the text (SQL `LIKE`), naming the record and batch; nothing found is exit 4 with
//! nothing on stdout.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

fn sessions(db: &Path, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .arg("sessions")
        .args(args)
        .output()
        .unwrap()
}

fn found(db: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = args.to_vec();
    all.push("--json");
    let o = sessions(db, &all);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["schema"], "turnscope.flue2.sessions/1");
    assert_eq!(doc["format"], "flue-2.x");
    doc["matches"].as_array().unwrap().clone()
}

fn strings(conn: &Connection, sql: &str) -> Vec<(String, String)> {
    conn.prepare(sql)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The stream a session key names, in SQL.
const STREAM_OF_KEY: &str = "'agents/' || json_extract(substr(session_key, 15), '$[0]') || '/' \
     || json_extract(substr(session_key, 15), '$[1]')";

#[test]
fn every_id_finds_the_stream_that_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let mut cases: Vec<(&str, String, String)> = Vec::new();
        for (path, instance) in strings(
            &conn,
            "SELECT path, json_extract(identity_json, '$.instanceId') FROM flue_conversation_streams",
        ) {
            cases.push(("stream", path.clone(), path.clone()));
            cases.push(("instance", instance, path));
        }
        for (id, stream) in strings(
            &conn,
            &format!("SELECT submission_id, {STREAM_OF_KEY} FROM flue_agent_submissions"),
        ) {
            cases.push(("submission", id[..10].to_string(), stream.clone()));
            cases.push(("submission", id, stream));
        }
        for column in ["attempt_id", "owner_id"] {
            for (id, stream) in strings(
                &conn,
                &format!(
                    "SELECT {column}, {STREAM_OF_KEY} FROM flue_agent_submissions \
                     WHERE {column} IS NOT NULL"
                ),
            ) {
                let kind = if column == "owner_id" {
                    "owner"
                } else {
                    "attempt"
                };
                cases.push((kind, id, stream));
            }
        }
        // Record and conversation ids, as the batches hold them (inline batches only).
        let records = strings(
            &conn,
            "SELECT json_extract(r.value, '$.id') || ' ' || b.seq || ' ' || \
             json_extract(r.value, '$.type') || ' ' || json_extract(r.value, '$.conversationId'), b.path \
             FROM flue_conversation_stream_batches b, json_each(b.data) r \
             WHERE json_valid(b.data) AND json_type(b.data) = 'array'",
        );
        assert!(!records.is_empty(), "{name}");
        for (what, stream) in &records {
            let parts: Vec<&str> = what.split(' ').collect();
            let m = found(&db, &[parts[0]]);
            let hit = m
                .iter()
                .find(|m| m["stream"] == stream.as_str())
                .unwrap_or_else(|| panic!("{name}: {what}: {m:?}"));
            assert_eq!(hit["matched"], "record", "{name}: {what}");
            assert_eq!(hit["record"]["id"], parts[0]);
            assert_eq!(hit["record"]["seq"].to_string(), parts[1]);
            assert_eq!(hit["record"]["type"], parts[2]);
            checked += 1;
        }
        let conversation = records[0].0.split(' ').nth(3).unwrap().to_string();
        cases.push(("conversation", conversation, records[0].1.clone()));
        for (kind, query, stream) in cases {
            let m = found(&db, &[&query]);
            assert!(
                m.iter()
                    .any(|m| m["stream"] == stream.as_str() && m["matched"] == kind),
                "{name}: {kind} {query}: {m:?}"
            );
            checked += 1;
        }
        let o = sessions(&db, &["no-such-id-anywhere"]);
        assert_eq!(o.status.code(), Some(4));
        assert!(o.stdout.is_empty());
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn text_finds_exactly_the_streams_whose_records_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        for phrase in [
            "SCRIPTED turnscope",
            "three-tools",
            "tool_results_committed",
            "zebra-xylophone",
        ] {
            let want: BTreeSet<String> = conn
                .prepare(
                    "SELECT DISTINCT path FROM flue_conversation_stream_batches WHERE data LIKE ?1",
                )
                .unwrap()
                .query_map([format!("%{phrase}%")], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            if want.is_empty() {
                let o = sessions(&db, &["--text", phrase]);
                assert_eq!(o.status.code(), Some(4), "{name}: {phrase}");
                assert!(o.stdout.is_empty());
                continue;
            }
            let m = found(&db, &["--text", phrase]);
            let got: BTreeSet<String> = m
                .iter()
                .map(|m| m["stream"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(got, want, "{name}: {phrase}");
            for hit in &m {
                assert_eq!(hit["matched"], "text");
                let value = hit["value"].as_str().unwrap().to_lowercase();
                assert!(value.contains(&phrase.to_lowercase()), "{name}: {value}");
                // The record named holds the text, in the batch named.
                let data: String = conn
                    .query_row(
                        "SELECT data FROM flue_conversation_stream_batches WHERE path = ?1 AND seq = ?2",
                        rusqlite::params![hit["stream"].as_str().unwrap(), hit["record"]["seq"].as_i64().unwrap()],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert!(
                    data.contains(hit["record"]["id"].as_str().unwrap()),
                    "{name}"
                );
            }
        }
        // Text output: the format line, a line per stream, the summary (where it is found:
        // a fixture killed before its input was appended holds no user message).
        let o = sessions(&db, &["--text", "scripted"]);
        if o.status.code() == Some(4) {
            continue;
        }
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.starts_with("format: flue 2.x"), "{text}");
        assert!(text.contains(" text \"scripted\" (searched"), "{text}");
    }
}

/// A query that is a row's id whole (a submission, attempt or owner id, a stream path) is
/// answered from the rows alone: the records, every batch of every stream, are not read for a
/// conversation or record id (as beta.7's `sessions` never reads the entries for an id). A
/// prefix, a conversation id and a record id still read them, and find what they name.
#[test]
fn an_exact_row_id_skips_the_record_scan() {
    use turnscope_engine::flue2_find::{find_streams, find_streams_scanned, MatchKind};
    let dir = tempfile::tempdir().unwrap();
    let mut exact = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let reader = turnscope_store::Flue2SqliteReader::open(&db).unwrap();
        let conn = Connection::open(&db).unwrap();
        let batches: usize = conn
            .query_row(
                "SELECT COUNT(*) FROM flue_conversation_stream_batches",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let rows: Vec<(String, Option<String>, Option<String>)> = conn
            .prepare("SELECT submission_id, attempt_id, owner_id FROM flue_agent_submissions")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (sub, attempt, owner) in &rows {
            for q in [Some(sub), attempt.as_ref(), owner.as_ref()]
                .into_iter()
                .flatten()
            {
                let (m, scan) = find_streams_scanned(&reader, q).unwrap();
                assert!(!m.is_empty(), "{name}: {q}");
                assert!(scan.skipped, "{name}: {q}");
                assert_eq!(scan.batches, 0, "{name}: {q} read the records");
                // The same answer as through find_streams (and so the CLI).
                assert_eq!(find_streams(&reader, q).unwrap(), m);
                exact += 1;
            }
            // A prefix is not an id whole: the records are read.
            let (_, scan) = find_streams_scanned(&reader, &sub[..10]).unwrap();
            assert!(!scan.skipped && scan.batches == batches, "{name}: prefix");
        }
        // A conversation id and a record id are only in the records: read, and found.
        let (conv, record): (String, String) = conn
            .query_row(
                "SELECT json_extract(data, '$[0].conversationId'), json_extract(data, '$[0].id') FROM flue_conversation_stream_batches ORDER BY path, seq LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        for (q, kind) in [
            (&conv, MatchKind::Conversation),
            (&record, MatchKind::Record),
        ] {
            let (m, scan) = find_streams_scanned(&reader, q).unwrap();
            assert!(!scan.skipped && scan.batches > 0, "{name}: {q}");
            assert!(m.iter().any(|m| m.kind == kind), "{name}: {q} {m:?}");
        }
    }
    assert!(exact >= 40, "{exact} exact ids checked");
}
