//! A lone surrogate's escape (`"\ud83d"`) is what `JSON.stringify` writes for a string cut
//! between the halves of a pair (a tool output sliced to so many UTF-16 units, a streamed partial
//! cut by a crash). `JSON.parse` reads it, so the runtime loads such a row; `serde_json` refuses
//! it. turnscope reads it as the runtime does (the half shown as U+FFFD) on both formats: the
//! same verdict, classification and plan as without it, and no damage. The real beta.7
//! reconciler's answer on such rows is checked by `runtime_differential`'s mutations; flue
//! 2.1.0's classifier is run here. A write that would carry the half back (turnscope would write
//! U+FFFD) is refused, and its plan still names the rule the runtime applies.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, turnscope_command, unpack_db};

/// `db` copied beside itself with every text of `table.column` (`"text":"…`, and a streamed
/// `"delta":"…`) begun with the lone high half of a pair; `None` where no row has one.
fn cut_copy(db: &Path, table: &str, column: &str) -> Option<PathBuf> {
    let cut = db.with_extension("cut.db");
    std::fs::copy(db, &cut).unwrap();
    let sql = format!(
        r#"UPDATE {table} SET {column} = replace(replace({column}, '"text":"', '"text":"\ud83d'), '"delta":"', '"delta":"\ud83d')
           WHERE {column} LIKE '%"text":"%' OR {column} LIKE '%"delta":"%'"#
    );
    let n = rusqlite::Connection::open(&cut)
        .unwrap()
        .execute(&sql, [])
        .unwrap();
    (n > 0).then_some(cut)
}

/// The JSON document `turnscope --db DB ARGS` prints.
pub(crate) fn turnscope_json(db: &Path, args: &[&str]) -> Value {
    let o = turnscope_command()
        // One clock for every run, so the plans' reasons compare.
        .env("TURNSCOPE_NOW_MS", "1796617737650")
        .args(["--db", db.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    // `health` exits 8 when it finds something, which the comparison covers.
    assert!(
        matches!(o.status.code(), Some(0 | 8)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The id of the first submission `list` prints (beta.7 nests it under `submission`, 2.x not).
fn first_submission(db: &Path) -> String {
    let list = turnscope_json(db, &["list", "--status", "all", "--json"]);
    let first = &list["submissions"][0];
    first["submission"]["submissionId"]
        .as_str()
        .or(first["id"].as_str())
        .unwrap()
        .to_string()
}

/// Every submission's verdict, classification, plan and trailing batch as `list --json` prints
/// them, and the kinds of what `health --all` finds in each session.
pub(crate) fn judgements(db: &Path) -> (Vec<Value>, Vec<Value>) {
    let doc = turnscope_json(db, &["list", "--status", "all", "--json"]);
    let list = doc["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            serde_json::json!([
                s["verdict"],
                s["classification"],
                s["plan"],
                s["trailingPartialBatch"]
            ])
        })
        .collect();
    let health = turnscope_json(db, &["health", "--all", "--json"]);
    let found = health["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let kinds: Vec<&Value> = s["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| &f["kind"])
                .collect();
            serde_json::json!([s["session"], kinds])
        })
        .collect();
    (list, found)
}

#[test]
fn beta7_histories_and_streams_with_a_lone_surrogate_are_judged_as_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut changed = 0;
    for name in db_fixture_names("flue-beta7") {
        let db = unpack_db("flue-beta7", &name, dir.path());
        let before = judgements(&db);
        for (table, column) in [
            ("flue_session_entries", "data"),
            ("flue_agent_stream_chunks", "body"),
        ] {
            let Some(cut) = cut_copy(&db, table, column) else {
                continue;
            };
            changed += 1;
            assert_eq!(judgements(&cut), before, "{name}: {table}");
        }
    }
    assert!(changed >= 10, "{changed} tables of fixtures have a text");
}

#[test]
fn the_next_request_shows_the_lone_half_as_the_replacement_character() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-beta7", "completed-before-settle", dir.path());
    let cut = cut_copy(&db, "flue_session_entries", "data").unwrap();
    let id = first_submission(&cut);
    let o = turnscope_command()
        .args(["--db", cut.to_str().unwrap(), "next-request", &id])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{text}");
    assert!(text.contains("\u{fffd}All three tools finished."), "{text}");
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn flue2_records_with_a_lone_surrogate_are_read_as_the_runtime_reads_them() {
    let rt = runtime2("lone_surrogates");
    let dir = tempfile::tempdir().unwrap();
    let mut changed = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let Some(cut) = cut_copy(&db, "flue_conversation_stream_batches", "data") else {
            continue;
        };
        changed += 1;
        assert_eq!(
            rt.drive("classify.mjs", &[cut.as_os_str()]),
            crate::runtime2::committed(&name),
            "{name}: the runtime reads the lone half as it reads the fixture"
        );
        assert_eq!(judgements(&cut), judgements(&db), "{name}");
    }
    assert!(changed >= 10, "{changed} fixtures have a text");
}

/// The demo's submission of `instance`.
fn demo_submission(db: &Path, instance: &str) -> String {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE session_key = ?1 AND status = 'running'",
            [format!(r#"agent-session:["{instance}","default","default"]"#)],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn writes_that_would_carry_a_lone_half_back_are_refused_and_the_plan_still_says_what_the_runtime_does(
) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    // Written at the real clock, which writes plan on: its deadlines are hours ahead.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    turnscope_demo::write_demo(&db, now).unwrap();
    let direct = demo_submission(&db, "alice-laptop");
    let streamed = demo_submission(&db, "podcast-notes");
    let c = rusqlite::Connection::open(&db).unwrap();
    // The completed answer of a direct prompt (rule 1 rebuilds its text into the settlement).
    c.execute(
        r#"UPDATE flue_session_entries SET data = replace(data, '"text":"', '"text":"\ud83d')
           WHERE session_id LIKE '%"alice-laptop"%'"#,
        [],
    )
    .unwrap();
    // A streamed partial not yet in the history (rule 4 appends it, rebuilt from the deltas).
    c.execute(
        r#"UPDATE flue_agent_stream_chunks SET body = replace(body, '"delta":"', '"delta":"\ud83d')
           WHERE substr(stream_key, 1, 37) = ?1 || ':'"#,
        [&streamed],
    )
    .unwrap();
    c.execute(
        r#"UPDATE flue_sessions SET data = json_set(data, '$.leafId', (
             SELECT json_extract(e.data, '$.parentId') FROM flue_session_entries e
             WHERE e.session_id = flue_sessions.id AND e.entry_id = json_extract(flue_sessions.data, '$.leafId')))
           WHERE id LIKE '%"podcast-notes"%'"#,
        [],
    )
    .unwrap();
    drop(c);
    let before = std::fs::read(&db).unwrap();
    for (id, rule, reason) in [
        (&direct, 1, "entry"),
        (&streamed, 4, "the streamed partial"),
    ] {
        let o = turnscope_command()
            .args(["--db", db.to_str().unwrap(), "show", id, "--json"])
            .output()
            .unwrap();
        let show: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(show["plan"]["rule"], rule, "{id}: {}", show["plan"]);
        for action in ["reconcile", "step"] {
            let o = turnscope_command()
                .args(["--db", db.to_str().unwrap(), "--write", action, id, "-y"])
                .args(["--ack-side-effects", "--operator", "test"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success(),
                "{action} {id}: {err} {}",
                String::from_utf8_lossy(&o.stdout)
            );
            assert!(
                err.contains(reason) && err.contains("half of a surrogate pair"),
                "{action} {id}: {err}"
            );
        }
    }
    assert!(std::fs::read(&db).unwrap() == before, "nothing written");
}

#[test]
fn a_redacted_export_drops_text_holding_a_lone_half() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-beta7", "completed-before-settle", dir.path());
    let cut = cut_copy(&db, "flue_session_entries", "data").unwrap();
    redacted_export_drops(&cut, &dir.path().join("beta7"), "All three tools finished");
    // flue 2.x: the input's text, in a batch of records.
    let db = unpack_db("flue-2.1.0", "completed-unsettled", dir.path());
    let cut = cut_copy(&db, "flue_conversation_stream_batches", "data").unwrap();
    redacted_export_drops(&cut, &dir.path().join("flue2"), "scripted turnscope ta");
}

/// `secret` is in the export of the first submission of `cut`, and not in its redacted export
/// (both written into `dir`, made here).
fn redacted_export_drops(cut: &Path, dir: &Path, secret: &str) {
    std::fs::create_dir(dir).unwrap();
    let id = first_submission(cut);
    let export = |name: &str, extra: &[&str]| {
        let file = dir.join(name);
        let o = turnscope_command()
            .args(["--db", cut.to_str().unwrap(), "export", &id, "-o"])
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&file).unwrap()
    };
    assert!(export("plain.json", &[]).contains(secret));
    let redacted = export("redacted.json", &["--redact"]);
    assert!(!redacted.contains(secret), "{redacted}");
}
