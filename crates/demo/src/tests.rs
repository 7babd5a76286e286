//! Tests of the demo database: SQLite-level validity, the runtime's row invariants, the JSON
//! shapes, and (in `tests_rules`) the classification and reconciler rule of every stuck row.

use rusqlite::Connection;
use serde_json::Value;

use super::ids::iso;
use super::*;

use crate::testing::{is_compact, strings, TempDb, NOW};

fn count(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).expect("count")
}

#[test]
fn database_is_valid_and_has_the_runtime_schema() {
    let (_t, c) = TempDb::written("schema");
    assert_eq!(strings(&c, "PRAGMA integrity_check"), vec!["ok"]);
    assert_eq!(strings(&c, "PRAGMA journal_mode"), vec!["wal"]);
    assert_eq!(
        strings(
            &c,
            "SELECT value FROM flue_meta WHERE key = 'schema_version'"
        ),
        vec!["3"]
    );
    let tables = strings(&c, "SELECT name FROM sqlite_master WHERE type = 'table'");
    for t in [
        "flue_meta",
        "flue_sessions",
        "flue_session_entries",
        "flue_agent_submissions",
        "sqlite_sequence",
        "flue_agent_session_deletions",
        "flue_agent_dispatch_receipts",
        "flue_agent_attempt_markers",
        "flue_agent_turn_journals",
        "flue_agent_stream_chunks",
        "flue_image_chunks",
        "flue_runs",
        "flue_event_streams",
        "flue_event_stream_entries",
        "flue_event_stream_keys",
    ] {
        assert!(tables.iter().any(|x| x == t), "missing table {t}");
    }
    let others = strings(
        &c,
        "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL",
    );
    assert_eq!(others.len(), 6, "{others:?}");
    assert!(others.iter().any(|x| x == "flue_event_stream_key_append"));
    let cols = strings(
        &c,
        "SELECT name FROM pragma_table_info('flue_agent_submissions')",
    );
    assert!(
        cols.iter().any(|x| x == "terminal_event_json"),
        "built-in SQLite variant"
    );
    // The trigger kept the event stream consistent.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM flue_event_stream_entries"),
        count(
            &c,
            "SELECT COALESCE(SUM(next_offset), 0) FROM flue_event_streams"
        )
    );
}

#[test]
fn summary_matches_the_tables() {
    let t = TempDb::new("summary");
    let s = write_demo(&t.0, NOW).expect("written");
    let c = Connection::open(&t.0).expect("open");
    assert_eq!(
        s.submissions as i64,
        count(&c, "SELECT COUNT(*) FROM flue_agent_submissions")
    );
    assert_eq!(
        s.sessions as i64,
        count(&c, "SELECT COUNT(*) FROM flue_sessions")
    );
    assert_eq!(
        s.entries as i64,
        count(&c, "SELECT COUNT(*) FROM flue_session_entries")
    );
    assert!(count(&c, "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM flue_session_entries GROUP BY session_id)") >= 40);
    assert!(
        count(
            &c,
            "SELECT COUNT(*) FROM flue_session_entries WHERE data LIKE '{\"type\":\"compaction\"%'"
        ) >= 2
    );
}

#[test]
fn stuck_rows_and_journal_phases_are_all_present() {
    let (_t, c) = TempDb::written("expired");
    let expired = count(
        &c,
        &format!("SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < {NOW}"),
    );
    assert!(expired >= 17, "{expired} expired running rows");
    let live = count(&c, &format!("SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at >= {}", NOW + 29 * 60_000));
    assert_eq!(live, 1);
    for phase in [
        "before_provider",
        "provider_started",
        "tool_request_recorded",
        "committed",
    ] {
        let n = count(
            &c,
            &format!("SELECT COUNT(*) FROM flue_agent_turn_journals WHERE phase = '{phase}'"),
        );
        assert!(n > 0, "no journal in phase {phase}");
    }
    let none = count(
        &c,
        "SELECT COUNT(*) FROM flue_agent_submissions s WHERE status = 'running' \
         AND NOT EXISTS (SELECT 1 FROM flue_agent_turn_journals j WHERE j.submission_id = s.submission_id)",
    );
    assert!(none > 0, "no running row without a journal");
    for status in ["queued", "running", "terminalizing", "settled"] {
        let n = count(
            &c,
            &format!("SELECT COUNT(*) FROM flue_agent_submissions WHERE status = '{status}'"),
        );
        assert!(n > 0, "no {status} row");
    }
    assert!(count(&c, "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'settled' AND kind = 'dispatch' AND error IS NOT NULL") > 0);
    assert!(count(&c, "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'settled' AND kind = 'direct' AND terminal_event_json LIKE '%\"outcome\":\"failed\"%'") > 0);
    // Every journal belongs to a submission of the same session and kind.
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM flue_agent_turn_journals j JOIN flue_agent_submissions s USING (submission_id) WHERE s.session_key = j.session_key AND s.kind = j.kind"),
        count(&c, "SELECT COUNT(*) FROM flue_agent_turn_journals")
    );
}

#[test]
fn entries_are_well_formed_trees() {
    let (_t, c) = TempDb::written("entries");
    for key in strings(&c, "SELECT id FROM flue_sessions") {
        let mut st = c
            .prepare("SELECT entry_id, position, data FROM flue_session_entries WHERE session_id = ?1 ORDER BY position")
            .expect("prepare");
        let rows: Vec<(String, i64, String)> = st
            .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect();
        let mut ids = Vec::new();
        for (i, (id, pos, data)) in rows.iter().enumerate() {
            assert_eq!(*pos, i as i64, "positions of {key}");
            let v: Value = serde_json::from_str(data).expect("entry JSON");
            assert_eq!(v["id"], Value::String(id.clone()));
            assert!(
                id.len() == 8
                    && id
                        .chars()
                        .all(|ch| ch.is_ascii_digit() || ('a'..='f').contains(&ch))
            );
            let parent = &v["parentId"];
            assert!(
                parent.is_null() || ids.contains(&parent.as_str().expect("parent").to_string()),
                "parent of {id}"
            );
            assert!(data.starts_with(&format!(
                "{{\"type\":\"{}\",\"id\":",
                v["type"].as_str().expect("type")
            )));
            assert!(is_compact(data), "compact JSON: {data}");
            ids.push(id.clone());
        }
        let data: String = c
            .query_row(
                "SELECT data FROM flue_sessions WHERE id = ?1",
                [&key],
                |r| r.get(0),
            )
            .expect("session");
        assert!(
            data.starts_with("{\"version\":8,\"conversationId\":\"conv_"),
            "{data}"
        );
        let s: Value = serde_json::from_str(&data).expect("session JSON");
        let leaf = s["leafId"].as_str().expect("leaf");
        assert!(ids.iter().any(|i| i == leaf), "leafId of {key} exists");
        for (field, prefix) in [("conversationId", "conv_"), ("affinityKey", "aff_")] {
            let v = s[field].as_str().expect("id");
            let ulid = v.strip_prefix(prefix).expect("prefix");
            assert_eq!(ulid.len(), 26);
            assert!(('0'..='7').contains(&ulid.chars().next().expect("char")));
            assert!(
                ulid.chars()
                    .all(|ch| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(ch)),
                "{v}"
            );
        }
    }
}

#[test]
fn submission_rows_satisfy_parse_submission() {
    let (_t, c) = TempDb::written("rows");
    let mut st = c
        .prepare(
            "SELECT submission_id, session_key, kind, payload, status, accepted_at, attempt_id, input_applied_at, \
             recovery_requested_at, started_at, attempt_count, sequence FROM flue_agent_submissions ORDER BY sequence",
        )
        .expect("prepare");
    type Row = (
        String,
        String,
        String,
        String,
        String,
        i64,
        Option<String>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        i64,
        i64,
    );
    let rows: Vec<Row> = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
                r.get(10)?,
                r.get(11)?,
            ))
        })
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    let mut last_accepted = 0;
    for (id, key, kind, payload, status, accepted, attempt, applied, recovery, started, count, _) in
        rows
    {
        assert!(
            accepted >= last_accepted,
            "sequence follows admission order"
        );
        last_accepted = accepted;
        let p: Value = serde_json::from_str(&payload).expect("payload JSON");
        assert_eq!(p.to_string(), payload, "compact payload");
        assert!(is_compact(&payload));
        assert_eq!(p["kind"], Value::String(kind.clone()));
        assert_eq!(p["submissionId"], Value::String(id.clone()));
        assert_eq!(
            p["acceptedAt"],
            Value::String(iso(accepted)),
            "acceptedAt parses to accepted_at"
        );
        let instance = p["id"].as_str().expect("id");
        assert_eq!(
            key,
            format!("agent-session:[\"{instance}\",\"default\",\"default\"]")
        );
        if kind == "dispatch" {
            assert!(payload.starts_with("{\"dispatchId\":"), "{payload}");
            assert_eq!(p["dispatchId"], Value::String(id.clone()));
            assert!(p.get("input").is_some());
        } else {
            assert!(payload.starts_with("{\"kind\":\"direct\""), "{payload}");
            assert!(p["payload"]["message"].is_string());
        }
        match status.as_str() {
            "queued" => {
                assert!(
                    attempt.is_none()
                        && applied.is_none()
                        && recovery.is_none()
                        && started.is_none()
                );
            }
            "running" | "terminalizing" => {
                assert!(attempt.is_some() && started.is_some(), "{id}");
                assert!(count >= 1);
            }
            "settled" => assert!(count >= 1 || attempt.is_none()),
            other => panic!("unknown status {other}"),
        }
        if let (Some(a), Some(s), 1) = (applied, started, count) {
            assert!(a > s, "input applied after the claim");
        }
        assert!(accepted < NOW);
    }
    let bad_terminal = count(
        &c,
        "SELECT COUNT(*) FROM flue_agent_submissions WHERE terminal_event_key IS NOT NULL AND \
         (kind <> 'direct' OR terminal_event_key <> 'direct-submission:' || submission_id || ':settled' \
          OR terminal_event_json NOT LIKE '{\"type\":\"submission_settled\",%\"v\":3,%')",
    );
    assert_eq!(bad_terminal, 0);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM flue_agent_submissions WHERE kind = 'direct' AND status = 'settled' AND error IS NOT NULL"), 0);
}

#[test]
fn refuses_to_overwrite_an_existing_file() {
    let t = TempDb::new("exists");
    std::fs::write(&t.0, b"not a database").expect("write");
    let err = write_demo(&t.0, NOW).expect_err("must refuse");
    assert!(matches!(err, DemoError::AlreadyExists(_)), "{err}");
    assert!(err.to_string().contains("refusing to overwrite"));
    assert_eq!(std::fs::read(&t.0).expect("read"), b"not a database");
    // An existing empty file is fine.
    let e = TempDb::new("empty");
    std::fs::write(&e.0, b"").expect("write");
    write_demo(&e.0, NOW).expect("empty file accepted");
    // And a second write to the now non-empty file is refused.
    assert!(matches!(
        write_demo(&e.0, NOW),
        Err(DemoError::AlreadyExists(_))
    ));
}

#[test]
fn same_now_gives_the_same_database() {
    let dump = |tag: &str| {
        let (_t, c) = TempDb::written(tag);
        let mut all = Vec::new();
        let tables = strings(
            &c,
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        );
        for table in tables {
            let mut st = c
                .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
                .expect("prepare");
            let n = st.column_count();
            let mut rows = st.query([]).expect("query");
            while let Some(r) = rows.next().expect("row") {
                let cells: Vec<String> = (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).expect("cell")))
                    .collect();
                all.push(format!("{table}: {}", cells.join("|")));
            }
        }
        all
    };
    assert_eq!(dump("det-a"), dump("det-b"));
}
