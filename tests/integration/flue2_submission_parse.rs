//! 2.x's row parser (`parseSubmission(row, chunks)`) against the real 2.1.0 runtime: a running
//! row whose payload or `flue_submission_chunks` rows the parser rejects is settled failed by the
//! reconciliation pass with the parser's message. On copies of the `mid-stream` fixture, each with
//! its running row's payload or chunk rows changed, `show --json` must plan `malformed` with the
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

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn a_row_the_runtimes_parser_rejects_is_planned_as_the_pass_settles_it() {
    let rt = runtime2("flue2_submission_parse");
    let dir = tempfile::tempdir().unwrap();
    let base = unpack_db("flue-2.1.0", "mid-stream", dir.path());
    let (id, lease): (String, i64) = rusqlite::Connection::open(&base)
        .unwrap()
        .query_row(
            "SELECT submission_id, lease_expires_at FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
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
        let listed = turnscope_json(&db, Some(now), &["list", "--expired", "--json"]);
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
