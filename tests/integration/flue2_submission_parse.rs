//! 2.x's row parser (`parseSubmission(row, chunks)`) against the real 2.1.0 runtime: a running
//! row whose payload or `flue_submission_chunks` rows the parser rejects is settled failed by the
//! reconciliation pass with the parser's message, and so is a queued row the unready pass lists.
//! On copies of the `mid-stream` fixture, each with its running row's columns, payload or chunk rows
//! changed (or the row made a queued one), `show --json` must plan `malformed` with the
//! message the real pass then writes, or, where the runtime parses the row, plan as for the
//! fixture itself while the pass does what it does on the fixture.

use std::path::Path;

use crate::runtime_kit::runtime2;
use crate::support::{status_and_error, turnscope_json, unpack_db};

const MARKER: &str =
    r#"{"type":"image","data":"__flue_submission_chunks__:0","mimeType":"image/png"}"#;
/// The payload check's limit on an attachment's data, in UTF-16 units (`MAX_IMAGE_DATA_LENGTH`).
const LIMIT: usize = 14_680_064;
/// The runtime's chunk length (`IMAGE_DATA_CHUNK_LENGTH`).
const CHUNK: usize = 262_144;

/// The running row made a queued one that is not ready (as admitted, before its input is
/// materialized): the unready pass parses it.
const QUEUED: &str = "UPDATE flue_agent_submissions SET status = 'queued', attempt_id = NULL, \
    started_at = NULL, input_applied_at = NULL, canonical_ready_at = NULL, owner_id = NULL, \
    lease_expires_at = 0 WHERE submission_id = ?1;";

/// One change to the running row: SQL run on the copy (`?1` is the submission id), and the error
/// the runtime's pass settles it with (`None`: the row parses).
struct Case {
    name: &'static str,
    sql: String,
    error: Option<&'static str>,
}

/// `UPDATE` of the row's payload: `json_set(payload, PATH, json(VALUE))` for each pair.
fn set(pairs: &[(&str, &str)]) -> String {
    let mut expr = "payload".to_string();
    for (path, value) in pairs {
        expr = format!("json_set({expr}, '{path}', json('{value}'))");
    }
    format!("UPDATE flue_agent_submissions SET payload = {expr} WHERE submission_id = ?1;")
}

/// Chunk rows of item `0` holding `units` ASCII characters, in the runtime's chunk length.
fn chunk_rows(units: usize, keep: Option<usize>) -> String {
    let count = units.div_ceil(CHUNK).max(1);
    (0..count)
        .filter(|i| keep.is_none_or(|k| *i < k))
        .map(|i| {
            let len = CHUNK.min(units - i * CHUNK);
            format!(
                "INSERT INTO flue_submission_chunks VALUES (?1, '0', {i}, {count}, substr(hex(zeroblob({})), 1, {len}));",
                len.div_ceil(2)
            )
        })
        .collect()
}

fn cases() -> Vec<Case> {
    let attach = |v: &str| set(&[("$.message.attachments", v)]);
    let with_marker = attach(&format!("[{MARKER}]"));
    let do_not_match = Some("[flue] Persisted image chunks do not match persisted image markers.");
    let payload = Some("[flue] Persisted agent submission payload is malformed.");
    vec![
        Case {
            name: "intact attachment",
            sql: format!("{with_marker}{}", chunk_rows(10, None)),
            error: None,
        },
        Case {
            name: "marker without rows",
            sql: with_marker.clone(),
            error: do_not_match,
        },
        Case {
            name: "rows without marker",
            sql: chunk_rows(10, None),
            error: do_not_match,
        },
        Case {
            name: "one row of two",
            sql: format!("{with_marker}{}", chunk_rows(CHUNK + 1, Some(1))),
            error: Some("[flue] Persisted image chunks are missing or malformed."),
        },
        Case {
            name: "a row's index as text",
            sql: format!(
                "{with_marker}INSERT INTO flue_submission_chunks VALUES (?1, '0', 'x', 1, 'ab');"
            ),
            error: Some("[flue] Persisted submission chunk row is malformed."),
        },
        Case {
            name: "attachments null",
            sql: attach("null"),
            error: Some("Cannot read properties of null (reading 'map')"),
        },
        Case {
            name: "attachments 5",
            sql: attach("5"),
            error: Some("blocks.map is not a function"),
        },
        Case {
            name: "message null",
            sql: set(&[("$.message", "null")]),
            error: Some("Cannot read properties of null (reading 'kind')"),
        },
        Case {
            name: "payload an array",
            sql: "UPDATE flue_agent_submissions SET payload = '[1]' WHERE submission_id = ?1;"
                .into(),
            error: Some("Cannot read properties of undefined (reading 'kind')"),
        },
        Case {
            name: "payload not JSON",
            sql:
                "UPDATE flue_agent_submissions SET payload = '{\"kind\":' WHERE submission_id = ?1;"
                    .into(),
            error: Some("Unexpected end of JSON input"),
        },
        Case {
            name: "no mimeType",
            sql: attach(r#"[{"type":"image","data":"abc"}]"#),
            error: payload,
        },
        Case {
            name: "a reserved signal type",
            sql: set(&[(
                "$.message",
                r#"{"kind":"signal","type":"memory","body":"x"}"#,
            )]),
            error: payload,
        },
        Case {
            name: "a signal with attributes as an array",
            sql: set(&[(
                "$.message",
                r#"{"kind":"signal","type":"deploy","body":"x","attributes":["a"],"tagName":"d.v1-x"}"#,
            )]),
            error: None,
        },
        Case {
            name: "a tagName that is no tag name",
            sql: set(&[(
                "$.message",
                r#"{"kind":"signal","type":"deploy","body":"x","tagName":"1x"}"#,
            )]),
            error: payload,
        },
        Case {
            name: "another instance id",
            sql: set(&[("$.id", r#""m2""#)]),
            error: payload,
        },
        Case {
            name: "acceptedAt a millisecond later",
            sql: "UPDATE flue_agent_submissions SET payload = json_set(payload, '$.acceptedAt', \
                  strftime('%Y-%m-%dT%H:%M:%f', (accepted_at + 1) / 1000.0, 'unixepoch') || 'Z') \
                  WHERE submission_id = ?1;"
                .into(),
            error: payload,
        },
        Case {
            name: "running without attempt_id",
            sql: "UPDATE flue_agent_submissions SET attempt_id = NULL WHERE submission_id = ?1;".into(),
            error: Some("[flue] Persisted agent submission row is malformed."),
        },
        Case {
            name: "running without started_at",
            sql: "UPDATE flue_agent_submissions SET started_at = NULL WHERE submission_id = ?1;".into(),
            error: Some("[flue] Persisted agent submission row is malformed."),
        },
        Case {
            name: "a kind of neither",
            sql: "UPDATE flue_agent_submissions SET kind = 'other' WHERE submission_id = ?1;".into(),
            error: Some("[flue] Persisted agent submission row is malformed."),
        },
        Case {
            name: "queued, not ready, message null",
            sql: format!("{QUEUED}{}", set(&[("$.message", "null")])),
            error: Some("Cannot read properties of null (reading 'kind')"),
        },
        Case {
            name: "queued, not ready, with started_at",
            sql: format!("{QUEUED}UPDATE flue_agent_submissions SET started_at = 1 WHERE submission_id = ?1;"),
            error: Some("[flue] Persisted agent submission row is malformed."),
        },
        Case {
            name: "an attachment at the limit",
            sql: format!("{with_marker}{}", chunk_rows(LIMIT, None)),
            error: None,
        },
        Case {
            name: "an attachment over the limit",
            sql: format!("{with_marker}{}", chunk_rows(LIMIT + 1, None)),
            error: payload,
        },
    ]
}

/// `mid-stream` unpacked into `dir`: its path, its running row's id and lease.
fn mid_stream(dir: &Path) -> (std::path::PathBuf, String, i64) {
    let db = unpack_db("flue-2.1.0", "mid-stream", dir);
    let (id, lease) = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT submission_id, lease_expires_at FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    (db, id, lease)
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn a_row_the_runtimes_parser_rejects_is_planned_as_the_pass_settles_it() {
    let rt = runtime2("flue2_submission_parse");
    let dir = tempfile::tempdir().unwrap();
    let (base, id, lease) = mid_stream(dir.path());
    let now = lease + 1000;
    let plan_of =
        |db: &Path| turnscope_json(db, Some(now), &["show", &id, "--json"])["plan"].clone();
    let base_plan = plan_of(&base);
    assert_ne!(base_plan["name"], "malformed", "{base_plan}");
    let untouched = dir.path().join("untouched.db");
    std::fs::copy(&base, &untouched).unwrap();
    rt.reconcile_at(&untouched, now, false);
    let base_after = status_and_error(&untouched, &id);
    let mut differ = Vec::new();
    for case in cases() {
        let db = dir
            .path()
            .join(format!("{}.db", case.name.replace(' ', "-")));
        std::fs::copy(&base, &db).unwrap();
        let c = rusqlite::Connection::open(&db).unwrap();
        for statement in case
            .sql
            .split_inclusive(';')
            .filter(|s| !s.trim().is_empty())
        {
            c.execute(statement, [&id])
                .unwrap_or_else(|e| panic!("{}: {statement}: {e}", case.name));
        }
        drop(c);
        let plan = plan_of(&db);
        // Listed as shown: the listing reads the row and its chunk rows the same way.
        let listed = turnscope_json(&db, Some(now), &["list", "--status", "all", "--json"]);
        let listed = listed["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.as_str())
            .map(|s| s["plan"].clone());
        if listed.as_ref() != Some(&plan) {
            differ.push(format!("{}: listed {listed:?}, shown {plan}", case.name));
        }
        rt.reconcile_at(&db, now, false);
        let after = status_and_error(&db, &id);
        let reason = plan["reason"].as_str().unwrap_or_default();
        match case.error {
            Some(error) => {
                let quoted = format!("{error:?}");
                if plan["name"] != "malformed" || !reason.contains(&quoted) {
                    differ.push(format!(
                        "{}: planned {plan}, the runtime's error is {error}",
                        case.name
                    ));
                }
                if after != ("settled".into(), Some(error.to_string())) {
                    differ.push(format!(
                        "{}: the pass left {after:?}, not settled with {error}",
                        case.name
                    ));
                }
            }
            None => {
                if plan != base_plan {
                    differ.push(format!(
                        "{}: planned {plan}, the fixture {base_plan}",
                        case.name
                    ));
                }
                if after != base_after {
                    differ.push(format!(
                        "{}: the pass left {after:?}, on the fixture {base_after:?}",
                        case.name
                    ));
                }
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Without the runtime: a payload the parser rejects is planned so, the action refused, and
/// nothing written.
#[test]
fn no_action_writes_a_row_whose_payload_the_parser_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "mid-stream", dir.path());
    let c = rusqlite::Connection::open(&db).unwrap();
    let (id, lease): (String, i64) = c
        .query_row(
            "UPDATE flue_agent_submissions SET payload = json_set(payload, '$.message', json('null')) \
             WHERE status = 'running' RETURNING submission_id, lease_expires_at",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(c);
    let now = lease + 1000;
    let plan = turnscope_json(&db, Some(now), &["show", &id, "--json"])["plan"].clone();
    assert_eq!(plan["name"], "malformed", "{plan}");
    crate::support::no_flue2_action_writes(&db, &id, Some(now), "message null");
}

/// A delivered message and payload keys changed at random, each on a row of its own: the values
/// the parser tells apart (strings, numbers, null, arrays, objects, missing keys, reserved and
/// empty types, tag names, marker attachments with and without their rows).
fn generated_payload(
    rng: &mut crate::support::Rng,
    valid: &serde_json::Value,
    id: &str,
) -> (serde_json::Value, bool) {
    use serde_json::json;
    let mut p = valid.clone();
    p["submissionId"] = json!(id);
    let pick = |rng: &mut crate::support::Rng, from: &[serde_json::Value]| {
        from[rng.below(from.len() as u64) as usize].clone()
    };
    let scalars = [
        json!("s"),
        json!(""),
        json!(5),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
    ];
    let mut m = serde_json::Map::new();
    let kind = pick(
        rng,
        &[
            json!("user"),
            json!("user"),
            json!("user"),
            json!("signal"),
            json!("signal"),
            json!("signal"),
            json!("other"),
            json!(5),
        ],
    );
    m.insert("kind".into(), kind.clone());
    if rng.below(12) > 0 {
        m.insert(
            "body".into(),
            if rng.below(8) > 0 {
                json!("hello")
            } else {
                pick(rng, &scalars)
            },
        );
    }
    let mut rows = false;
    if kind == "user" && rng.below(2) == 0 {
        let attachment = |rng: &mut crate::support::Rng| {
            let mut a = serde_json::Map::new();
            for (key, good) in [
                ("type", json!("image")),
                ("data", json!("aGk=")),
                ("mimeType", json!("image/png")),
                ("filename", json!("a.png")),
            ] {
                match rng.below(16) {
                    0 => {}
                    1 => {
                        a.insert(key.into(), pick(rng, &scalars));
                    }
                    _ if key == "filename" && rng.below(2) == 0 => {}
                    _ => {
                        a.insert(key.into(), good);
                    }
                }
            }
            serde_json::Value::Object(a)
        };
        let attachments = match rng.below(6) {
            0 => pick(rng, &scalars),
            1 | 2 => {
                rows = rng.below(4) > 0;
                json!([{"type": "image", "data": "__flue_submission_chunks__:0", "mimeType": "image/png"}])
            }
            _ => serde_json::Value::Array((0..rng.below(3)).map(|_| attachment(rng)).collect()),
        };
        m.insert("attachments".into(), attachments);
    }
    if kind == "signal" || rng.below(4) == 0 {
        if rng.below(6) > 0 {
            m.insert(
                "type".into(),
                pick(
                    rng,
                    &[
                        json!("deploy"),
                        json!("deploy"),
                        json!(""),
                        json!("memory"),
                        json!("compaction"),
                        json!(5),
                    ],
                ),
            );
        }
        if rng.below(2) == 0 {
            m.insert(
                "attributes".into(),
                pick(
                    rng,
                    &[
                        json!({"a": "b"}),
                        json!({}),
                        json!({"a": 1}),
                        json!(["x"]),
                        json!(["x", 1]),
                        json!(null),
                        json!("s"),
                    ],
                ),
            );
        }
        if rng.below(2) == 0 {
            m.insert(
                "tagName".into(),
                pick(
                    rng,
                    &[
                        json!("d.v1-x"),
                        json!("_x"),
                        json!("1x"),
                        json!("a b"),
                        json!("-x"),
                        json!(""),
                        json!(5),
                    ],
                ),
            );
        }
    }
    p["message"] = serde_json::Value::Object(m);
    match rng.below(24) {
        0 => p["agent"] = pick(rng, &scalars),
        1 => p["id"] = json!("other-instance"),
        2 => p["kind"] = json!("direct"),
        3 => p["message"] = pick(rng, &scalars),
        _ => {}
    }
    (p, rows)
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn generated_payloads_are_parsed_as_the_runtimes_parser_parses_them() {
    let rt = runtime2("flue2_submission_parse");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "mid-stream", dir.path());
    let c = rusqlite::Connection::open(&db).unwrap();
    let (id, lease, payload): (String, i64, String) = c
        .query_row(
            "SELECT submission_id, lease_expires_at, payload FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let valid: serde_json::Value = serde_json::from_str(&payload).unwrap();
    // Each generated payload on a copy of the running row of its own, its attempt its own.
    let mut rng = crate::support::Rng(0x2_1_0_9);
    let mut ids = Vec::new();
    for n in 0..160 {
        let new = format!("sub_generated_{n:03}");
        let (p, rows) = generated_payload(&mut rng, &valid, &new);
        c.execute(
            "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status,
               accepted_at, canonical_ready_at, attempt_id, input_applied_at, started_at, attempt_count,
               max_attempts, timeout_at, owner_id, lease_expires_at)
             SELECT ?2, session_key, kind, ?3, status, accepted_at, canonical_ready_at, ?2 || '_attempt',
               input_applied_at, started_at, attempt_count, max_attempts, timeout_at, owner_id,
               lease_expires_at FROM flue_agent_submissions WHERE submission_id = ?1",
            rusqlite::params![id, new, p.to_string()],
        )
        .unwrap();
        if rows {
            c.execute(
                "INSERT INTO flue_submission_chunks VALUES (?1, '0', 0, 1, 'aGk=')",
                [&new],
            )
            .unwrap();
        }
        ids.push(new);
    }
    drop(c);
    let now = lease + 1000;
    let listed = turnscope_json(&db, Some(now), &["list", "--status", "all", "--json"]);
    let plans: std::collections::HashMap<&str, &serde_json::Value> = listed["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), &s["plan"]))
        .collect();
    rt.reconcile_at(&db, now, false);
    let (mut rejected, mut differ) = (0, Vec::new());
    for id in &ids {
        let plan = plans[id.as_str()];
        let (status, error) = status_and_error(&db, id);
        let parser_error = error.filter(|_| status == "settled");
        let reason = plan["reason"].as_str().unwrap_or_default();
        match (plan["name"] == "malformed", &parser_error) {
            (true, Some(e)) if reason.contains(&format!("{e:?}")) => rejected += 1,
            (false, None) => {}
            _ => differ.push(format!(
                "{id}: planned {plan}; the pass left {status} {parser_error:?}"
            )),
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // Both sides of the parser are reached (122 of 160 rejected with this seed).
    assert!(
        (30..=130).contains(&rejected),
        "{rejected} of {} rejected",
        ids.len()
    );
}

/// A terminalizing row of another instance beside the running one, its settlement columns and
/// payload set by `settlement` (SQL on `sub_term`, after the insert).
fn with_terminalizing(db: &Path, id: &str, settlement: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(
        "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status,
           accepted_at, canonical_ready_at, attempt_id, input_applied_at, started_at, attempt_count,
           max_attempts, timeout_at, owner_id, lease_expires_at)
         SELECT 'sub_term', 'agent-session:[\"other\",\"x\",\"default\",\"default\"]', kind,
           json_set(payload, '$.submissionId', 'sub_term', '$.agent', 'other', '$.id', 'x'),
           'terminalizing', accepted_at, canonical_ready_at, 'attempt_term', input_applied_at,
           started_at, 1, max_attempts, timeout_at, owner_id, lease_expires_at
           FROM flue_agent_submissions WHERE submission_id = ?1",
        [id],
    )
    .unwrap();
    c.execute_batch(settlement).unwrap();
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn a_settlement_obligation_that_does_not_parse_stops_every_pass_as_planned() {
    let rt = runtime2("flue2_submission_parse");
    let dir = tempfile::tempdir().unwrap();
    let (base, id, lease) = mid_stream(dir.path());
    let now = lease + 1000;
    let untouched = dir.path().join("untouched.db");
    std::fs::copy(&base, &untouched).unwrap();
    let before = status_and_error(&untouched, &id);
    rt.reconcile_at(&untouched, now, false);
    let replaced = status_and_error(&untouched, &id);
    let attempt = |db: &Path| -> String {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT attempt_id FROM flue_agent_submissions WHERE submission_id = ?1",
                [&id],
                |r| r.get(0),
            )
            .unwrap()
    };
    let first_attempt = attempt(&base);
    let update = |set: &str| {
        format!("UPDATE flue_agent_submissions SET {set} WHERE submission_id = 'sub_term';")
    };
    // (name, SQL, the pass throws, the terminalizing row's plan)
    let cases = [
        ("no settlement_record_id", update("settlement_record = '{}'"), true, "pass_fails"),
        ("a settlement_record that is not JSON", update("settlement_record_id = 'r', settlement_record = '{\"type\":'"), true, "pass_fails"),
        ("a settlement_record_id stored as a BLOB", update("settlement_record_id = CAST('r' AS BLOB), settlement_record = '{}'"), true, "pass_fails"),
        ("an obligation that parses", update("settlement_record_id = 'r', settlement_record = '{}'"), false, "finalize"),
        (
            "an obligation that parses, on a row whose payload does not",
            update("settlement_record_id = 'r', settlement_record = '{}', payload = json_set(payload, '$.message', json('null'))"),
            false,
            "malformed",
        ),
    ];
    let mut differ = Vec::new();
    for (name, sql, throws, term_plan) in cases {
        let db = dir.path().join(format!("{}.db", name.replace(' ', "-")));
        std::fs::copy(&base, &db).unwrap();
        with_terminalizing(&db, &id, &sql);
        let listed = turnscope_json(&db, Some(now), &["list", "--status", "all", "--json"]);
        let plan = |sub: &str| {
            listed["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["id"] == sub)
                .unwrap()["plan"]
                .clone()
        };
        let (running, term) = (plan(&id), plan("sub_term"));
        let running_expected = if throws { "pass_fails" } else { "replace" };
        if running["name"] != running_expected || term["name"] != term_plan {
            differ.push(format!("{name}: planned {running} and {term}"));
        }
        rt.reconcile_at(&db, now, false);
        let (after, moved) = (status_and_error(&db, &id), attempt(&db) != first_attempt);
        let expected = if throws {
            (&before, false)
        } else {
            (&replaced, true)
        };
        if (&after, moved) != expected {
            differ.push(format!(
                "{name}: the pass left the running row {after:?} (attempt replaced: {moved})"
            ));
        }
        if status_and_error(&db, "sub_term").0 != "terminalizing" {
            differ.push(format!("{name}: the pass settled the terminalizing row"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Without the runtime: a journal whose pass throws plans its expired and terminalizing rows
/// `pass_fails`, and `list` says the one cause under its table.
#[test]
fn a_journal_whose_pass_throws_says_so_under_its_list() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id, lease) = mid_stream(dir.path());
    with_terminalizing(
        &db,
        &id,
        "UPDATE flue_agent_submissions SET settlement_record = '{}' WHERE submission_id = 'sub_term';",
    );
    let now = lease + 1000;
    let text = String::from_utf8(crate::support::turnscope_ok(
        &db,
        Some(now),
        &["list", "--status", "all"],
    ))
    .unwrap();
    assert!(
        text.contains("- pass_fails")
            && text.contains("no reconciliation pass gets past its pending settlements: the settlement obligation of terminalizing row sub_term (sequence 2) does not parse: settlement_record_id is not text"),
        "{text}"
    );
    crate::support::no_flue2_action_writes(&db, &id, Some(now), "pass_fails");
    // The intact fixture says nothing of the kind.
    let other = dir.path().join("intact");
    std::fs::create_dir(&other).unwrap();
    let (intact, _, _) = mid_stream(&other);
    let text = String::from_utf8(crate::support::turnscope_ok(
        &intact,
        Some(now),
        &["list", "--status", "all"],
    ))
    .unwrap();
    assert!(!text.contains("pending settlements"), "{text}");
}
