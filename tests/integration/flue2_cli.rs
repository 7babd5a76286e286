//! `list`, `classify` and `show` on flue 2.x journals, through the binary, on every 2.1.0 crash
//! fixture: `classify --json` answers as the runtime's own classifier did
//! (`NAME.classification.json`), `list --expired` lists exactly the running rows whose lease
//! expired (computed here from the rows, at pinned clocks), `show` marks the trailing batch and the
//! recorded-but-uncommitted outcomes where the runtime's state has them, every document plans the
//! same reconciler step (none while the lease holds), and `--flue-version` is refused on a beta.7
//! journal and for an unknown release.

use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::support::{db_fixture_names, fixtures_dir, unpack_db, unpack_fixture};

fn turnscope(db: &Path, now_ms: Option<i64>, args: &[&str]) -> Output {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env_remove("TURNSCOPE_NOW_MS");
    if let Some(now) = now_ms {
        cmd.env("TURNSCOPE_NOW_MS", now.to_string());
    }
    cmd.arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run turnscope")
}

fn json_of(o: &Output, what: &str) -> Value {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The runtime's classification file of fixture `name`.
fn runtime_answer(name: &str) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(
            fixtures_dir()
                .join("flue-2.1.0")
                .join(format!("{name}.classification.json")),
        )
        .unwrap(),
    )
    .unwrap()
}

/// Exit `code`, one `error:` line containing `needle`, one `hint:` line, nothing on stdout.
fn assert_refused(o: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error and one hint line: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn classify_json_answers_as_the_runtime_on_every_2_1_0_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let want = runtime_answer(&name);
        let cw = want["contextWindow"].as_u64().unwrap().to_string();
        for sub in want["submissions"].as_array().unwrap() {
            let id = sub["submissionId"].as_str().unwrap();
            let what = format!("{name} {id}");
            let doc = json_of(
                &turnscope(
                    &db,
                    None,
                    &["--context-window", &cw, "classify", id, "--json"],
                ),
                &what,
            );
            assert_eq!(doc["format"], "flue-2.x", "{what}");
            assert_eq!(doc["flueVersion"], "2.1.0", "{what}");
            assert_eq!(doc["classifierVariant"], "2.0.8", "{what}");
            assert_eq!(doc["submission"]["id"], json!(id), "{what}");
            // The row as the runtime's own reading of it says.
            let row = &doc["submission"];
            assert_eq!(row["status"], sub["status"], "{what}");
            assert_eq!(row["kind"], sub["kind"], "{what}");
            assert_eq!(row["sequence"], sub["sequence"], "{what}");
            assert_eq!(row["attempts"], sub["attemptCount"], "{what}");
            assert_eq!(row["maxAttempts"], sub["maxAttempts"], "{what}");
            assert_eq!(
                row["inputAppliedAt"].is_number(),
                sub["inputApplied"] == true,
                "{what}"
            );
            assert_eq!(
                row["abortRequestedAt"].is_number(),
                sub["abortRequested"] == true,
                "{what}"
            );
            assert_eq!(
                row["joinedInto"].is_string(),
                sub["joined"] == true,
                "{what}"
            );
            assert_eq!(row["settlementOutcome"], sub["settlementOutcome"], "{what}");
            assert_eq!(row["error"], sub["error"], "{what}");
            assert_eq!(doc["classification"], sub["classification"], "{what}");
            assert_eq!(
                doc["trailingPartialToolBatch"], sub["trailingPartialToolBatch"],
                "{what}"
            );
            assert_eq!(doc["inputEntryId"], sub["inputEntryId"], "{what}");
            assert_eq!(doc["inputEntryFound"], sub["inputEntryFound"], "{what}");
            assert_eq!(doc["streamPath"], sub["streamPath"], "{what}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked}");
}

/// The rows' own answer to "running with an expired lease at `now`", in sequence order.
fn expired_from_rows(conn: &Connection, now: i64) -> Vec<String> {
    conn.prepare(
        "SELECT submission_id FROM flue_agent_submissions \
         WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < ?1 ORDER BY sequence",
    )
    .unwrap()
    .query_map([now], |r| r.get(0))
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn list_expired_lists_exactly_the_running_rows_whose_lease_expired() {
    let dir = tempfile::tempdir().unwrap();
    let (mut nonempty, mut empty) = (0, 0);
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let (rows, leases): (i64, Vec<i64>) = (
            conn.query_row("SELECT count(*) FROM flue_agent_submissions", [], |r| {
                r.get(0)
            })
            .unwrap(),
            conn.prepare("SELECT DISTINCT lease_expires_at FROM flue_agent_submissions WHERE lease_expires_at > 0")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect(),
        );
        // Before, at and just after each lease's end: the boundaries of the runtime's test.
        let mut clocks: Vec<i64> = leases.iter().flat_map(|l| [l - 1, *l, l + 1]).collect();
        clocks.push(0);
        for now in clocks {
            let want = expired_from_rows(&conn, now);
            let what = format!("{name} at {now}");
            for args in [&["list", "--json"][..], &["list", "--expired", "--json"]] {
                let doc = json_of(&turnscope(&db, Some(now), args), &what);
                assert_eq!(doc["format"], "flue-2.x", "{what}");
                assert_eq!(doc["view"], "expired", "{what}");
                let got: Vec<&str> = doc["submissions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["id"].as_str().unwrap())
                    .collect();
                assert_eq!(got, want, "{what}");
                assert!(
                    doc["submissions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|s| s["leaseExpired"] == true && s["verdict"]["label"].is_string()),
                    "{what}"
                );
            }
            if want.is_empty() {
                empty += 1;
            } else {
                nonempty += 1;
            }
        }
        let all = json_of(
            &turnscope(&db, Some(0), &["list", "--status", "all", "--json"]),
            &name,
        );
        assert_eq!(
            all["submissions"].as_array().unwrap().len() as i64,
            rows,
            "{name}"
        );
        let running = json_of(
            &turnscope(&db, Some(0), &["list", "--status", "running", "--json"]),
            &name,
        );
        assert!(running["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["status"] == "running"));
    }
    // Both answers were met.
    assert!(nonempty > 0 && empty > 0, "{nonempty} {empty}");
}

#[test]
fn show_marks_the_trailing_batch_and_the_recorded_outcomes_where_the_runtime_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let (mut marked, mut unresolved) = (0, 0);
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let want = runtime_answer(&name);
        let cw = want["contextWindow"].as_u64().unwrap().to_string();
        for sub in want["submissions"].as_array().unwrap() {
            let id = sub["submissionId"].as_str().unwrap();
            let what = format!("{name} {id}");
            let args = ["--context-window", cw.as_str(), "show", id];
            let doc = json_of(
                &turnscope(&db, Some(0), &[&args[..], &["--json"]].concat()),
                &what,
            );
            assert_eq!(doc["schema"], "turnscope.flue2.show/1", "{what}");
            assert_eq!(doc["format"], "flue-2.x", "{what}");
            assert_eq!(doc["classification"], sub["classification"], "{what}");
            let batch_ids = match &doc["trailingBatch"] {
                Value::Null => Value::Null,
                b => json!(b["toolCalls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["id"].clone())
                    .collect::<Vec<_>>()),
            };
            assert_eq!(batch_ids, sub["trailingPartialToolBatch"], "{what}");
            let mut recorded: Vec<&str> = doc["uncommittedToolOutcomes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["toolCallId"].as_str().unwrap())
                .collect();
            recorded.sort();
            assert_eq!(json!(recorded), sub["uncommittedToolOutcomes"], "{what}");
            let ghosts: Vec<Value> = doc["inProgress"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| json!({ "atLeaf": m["atLeaf"] }))
                .collect();
            assert_eq!(json!(ghosts), sub["ghost"], "{what}");
            // Each call of the batch says where its outcome is, as the recorded set says.
            if let Some(calls) = doc["trailingBatch"]["toolCalls"].as_array() {
                for c in calls {
                    let is_recorded = recorded.contains(&c["id"].as_str().unwrap());
                    if is_recorded {
                        assert_eq!(c["outcome"]["state"], "recorded_uncommitted", "{what}");
                    } else {
                        assert_ne!(c["outcome"]["state"], "recorded_uncommitted", "{what}");
                    }
                }
            }

            let text = String::from_utf8(turnscope(&db, Some(0), &args).stdout).unwrap();
            assert!(
                text.lines().next().unwrap().starts_with("format: flue 2.x"),
                "{what}: {text}"
            );
            let has_mark = text.contains("TRAILING UNCOMMITTED BATCH");
            assert_eq!(
                has_mark,
                !sub["trailingPartialToolBatch"].is_null(),
                "{what}: {text}"
            );
            if sub["classification"]["kind"] == "tool_use_unresolved" {
                assert!(has_mark, "{what}: {text}");
                unresolved += 1;
            }
            if has_mark {
                marked += 1;
            }
        }
    }
    assert!(
        unresolved >= 3 && marked > unresolved,
        "{unresolved} {marked}"
    );
}

#[test]
fn show_text_of_a_tool_batch_with_one_outcome_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let conn = Connection::open(&db).unwrap();
    let (id, lease): (String, i64) = conn
        .query_row(
            "SELECT submission_id, lease_expires_at FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let o = turnscope(
        &db,
        Some(lease + 60_000),
        &["--context-window", "200000", "show", &id],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    insta::assert_snapshot!(
        "flue2_show_tool_batch_1_of_3",
        String::from_utf8(o.stdout).unwrap()
    );
}

#[test]
fn flue_version_picks_the_variant_and_is_refused_where_it_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let id = "sub_01M92S7VMD";
    for (release, variant) in [
        ("2.0.0", "2.0.0"),
        ("2.0.3", "2.0.0"),
        ("2.0.5", "2.0.5"),
        ("2.0.8", "2.0.8"),
    ] {
        let doc = json_of(
            &turnscope(
                &db,
                None,
                &["--flue-version", release, "classify", id, "--json"],
            ),
            release,
        );
        assert_eq!(doc["flueVersion"], release);
        assert_eq!(doc["classifierVariant"], variant);
        let text = String::from_utf8(
            turnscope(&db, None, &["classify", id, "--flue-version", release]).stdout,
        )
        .unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .contains(&format!("classifier: flue {release} (variant {variant}")),
            "{text}"
        );
    }
    for args in [
        &["--flue-version", "2.2.0", "list"][..],
        &["--flue-version", "1.0.0-beta.7", "show", id],
    ] {
        assert_refused(&turnscope(&db, None, args), 2, "unknown flue version");
    }
    // A beta.7 journal: refused with the flag, whatever the command; read as before without it.
    let beta7 = unpack_fixture(dir.path(), "tool-batch-mid");
    for args in [
        &["--flue-version", "2.1.0", "list"][..],
        &["--flue-version", "2.1.0", "classify", "x"],
        &["show", "x", "--flue-version", "2.0.5"],
    ] {
        assert_refused(
            &turnscope(&beta7, None, args),
            2,
            "picks a flue 2.x classifier, but this journal was written by flue 1.0.0-beta.7",
        );
    }
    assert!(turnscope(&beta7, None, &["list"]).status.success());
}

#[test]
fn no_command_in_a_pipe_lists_a_2_x_journal_as_list_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let lease: i64 = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT lease_expires_at FROM flue_agent_submissions WHERE status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let bare = turnscope(&db, Some(lease + 1), &[]);
    let list = turnscope(&db, Some(lease + 1), &["list"]);
    assert!(
        bare.status.success(),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
    assert_eq!(bare.stdout, list.stdout);
    assert!(String::from_utf8_lossy(&list.stdout).contains("tool_use_unresolved"));
}

#[test]
fn other_commands_refuse_a_2_x_journal_naming_the_commands_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    for args in [
        &["--write", "step", "x", "--dry-run"][..],
        &["--write", "reconcile", "sub_01M92S7VMD", "-y"],
    ] {
        assert_refused(
            &turnscope(&db, None, args),
            1,
            "only list, show, classify, incidents, sessions, export, wait, diff, next-request, health, audit and the actions abort, requeue, extend, fail and undo read it yet",
        );
    }
    // A list column there is not is refused by name.
    assert_refused(
        &turnscope(&db, None, &["list", "--sort", "age"]),
        2,
        "unknown column \"age\"",
    );
    assert_refused(
        &turnscope(&db, None, &["list", "--status", "failed"]),
        2,
        "unknown status",
    );
}

#[test]
fn a_spilled_batch_reads_as_stored_inline_and_a_missing_chunk_makes_its_stream_unloadable() {
    // No fixture batch reached the runtime's 1 MiB spill: spill one here as the runtime does
    // (CSS:5765, 5817), its JSON text cut in chunk rows and `data` made the marker.
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let id = "sub_01M92S7VMD";
    let args = ["--context-window", "200000", "show", id, "--json"];
    let inline = json_of(&turnscope(&db, Some(0), &args), "inline");
    let conn = Connection::open(&db).unwrap();
    let mut spilled = 0;
    let batches: Vec<(String, i64, String)> = conn
        .prepare("SELECT path, seq, data FROM flue_conversation_stream_batches ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Every batch of 300 characters or more, in three chunks cut at char boundaries.
    for (path, seq, data) in &batches {
        let chars: Vec<char> = data.chars().collect();
        if chars.len() < 300 {
            continue;
        }
        let parts: Vec<String> = chars
            .chunks(chars.len().div_ceil(3))
            .map(|c| c.iter().collect())
            .collect();
        for (i, part) in parts.iter().enumerate() {
            conn.execute(
                "INSERT INTO flue_conversation_stream_batch_chunks (path, seq, chunk_index, chunk_count, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![path, seq, i as i64, parts.len() as i64, part],
            )
            .unwrap();
        }
        conn.execute(
            "UPDATE flue_conversation_stream_batches SET data = ?1 WHERE path = ?2 AND seq = ?3",
            rusqlite::params![
                format!("{{\"$flueChunkCount\":{}}}", parts.len()),
                path,
                seq
            ],
        )
        .unwrap();
        spilled += 1;
    }
    assert!(spilled > 5, "{spilled}");
    let unspilled = json_of(&turnscope(&db, Some(0), &args), "spilled");
    assert_eq!(unspilled, inline);

    // One chunk gone: refused in one line, never guessed at.
    let (path, seq): (String, i64) = conn
        .query_row(
            "SELECT path, seq FROM flue_conversation_stream_batch_chunks WHERE chunk_index = 1 ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    conn.execute(
        "DELETE FROM flue_conversation_stream_batch_chunks WHERE path = ?1 AND seq = ?2 AND chunk_index = 1",
        rusqlite::params![path, seq],
    )
    .unwrap();
    drop(conn);
    // Never guessed at: the runtime's read of the stream fails there (CSS:5826), so the stream
    // cannot be loaded, and the submission's verdict says so with the batch named.
    let shown = json_of(&turnscope(&db, Some(0), &args), "a chunk missing");
    let error = shown["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "batch {seq} of {path}: it is spilled into 3 chunks but 2 chunk rows"
        )),
        "{shown}"
    );
}

#[test]
fn an_unknown_or_ambiguous_id_on_a_2_x_journal_is_refused_as_on_beta7() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    assert_refused(&turnscope(&db, None, &["show", "nope"]), 4, "nope");
    assert_refused(
        &turnscope(&db, None, &["classify", "sub_"]),
        2,
        "matches 3 submissions",
    );
}

/// The reconciler's plan on every running row of every fixture: outside the step table while the
/// lease holds (up to and at its end), in it a millisecond later; `list`'s `NEXT` column, and the
/// `plan` of `list --json`, `classify --json` and `show --json`, agree at each clock; a
/// replacement's writes take the row's attempt count + 1 and a 30 s lease from the clock.
#[test]
fn every_document_plans_the_same_step_and_the_lease_end_decides_whether_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = std::collections::BTreeSet::new();
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let running: Vec<(String, i64, i64)> = conn
            .prepare("SELECT submission_id, lease_expires_at, attempt_count FROM flue_agent_submissions WHERE status = 'running'")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        drop(conn);
        assert!(!running.is_empty(), "{name}");
        for (id, lease, attempts) in running {
            for now in [lease - 1, lease, lease + 1] {
                let cw = ["--context-window", "200000"];
                let list = json_of(
                    &turnscope(
                        &db,
                        Some(now),
                        &[&cw[..], &["list", "--status", "all", "--json"]].concat(),
                    ),
                    "list",
                );
                let listed = list["submissions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["id"] == id.as_str())
                    .unwrap()["plan"]
                    .clone();
                for cmd in ["classify", "show"] {
                    let doc = json_of(
                        &turnscope(&db, Some(now), &[&cw[..], &[cmd, &id, "--json"]].concat()),
                        cmd,
                    );
                    assert_eq!(doc["plan"], listed, "{name} {id} at {now}: {cmd}");
                }
                let text = turnscope(
                    &db,
                    Some(now),
                    &[&cw[..], &["list", "--status", "all"]].concat(),
                );
                let text = String::from_utf8(text.stdout).unwrap();
                let line = text.lines().find(|l| l.starts_with(id.as_str())).unwrap();
                assert!(
                    line.trim_end()
                        .ends_with(listed["column"].as_str().unwrap()),
                    "{name}: {line}"
                );
                if now <= lease {
                    assert_eq!(listed["name"], "lease_held", "{name} {id} at {now}");
                    assert!(listed["writes"].as_array().unwrap().is_empty());
                    continue;
                }
                let step = listed["step"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{name}: {listed}"));
                steps.insert(step);
                if step == 6 {
                    assert_eq!(
                        listed["writes"],
                        json!([{
                            "op": "replace_attempt",
                            "attempt_count": attempts + 1,
                            "lease_expires_at": now + 30_000,
                            "description": listed["writes"][0]["description"],
                        }])
                    );
                    assert!(!listed["resume"].is_null());
                }
            }
        }
    }
    assert!(steps.len() >= 5, "{steps:?}");
}
