//! `export` on flue 2.x journals, through the binary, on every 2.1.0 crash fixture: one agent
//! instance whole, written readable by its owner only, never over a file; opened again with
//! `--db`, `list`, `show` and `classify` answer exactly as on the journal it came from (at one
//! pinned clock), its batches are the journal's; the commands that do not read 2.x refuse it as
//! they refuse the journal, a damaged export is refused in one line, and `--redact` is refused.

use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

const NOW: &str = "1796490000000";

fn turnscope(db: &Path, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn an_export_reopened_answers_as_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let ids: Vec<String> = conn
            .prepare("SELECT submission_id FROM flue_agent_submissions ORDER BY sequence")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for id in &ids {
            let file = dir.path().join(format!("{name}-{id}.json"));
            let said = stdout(
                &turnscope(&db, &["export", id, "-o", file.to_str().unwrap()]),
                &name,
            );
            assert!(said.starts_with("exported instance agents/"), "{said}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&file).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{name}");
            }
            let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            assert_eq!(doc["schema"], "turnscope.flue2.export/1");
            assert_eq!(doc["selected"], id.as_str());
            let stream = doc["stream"].as_str().unwrap();
            let batches: i64 = conn
                .query_row(
                    "SELECT count(*) FROM flue_conversation_stream_batches WHERE path = ?1",
                    [stream],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                doc["rows"]["flue_conversation_stream_batches"]["rows"]
                    .as_array()
                    .unwrap()
                    .len() as i64,
                batches,
                "{name}"
            );
            // The same answers from the export as from the journal (for its instance).
            let instance = stream.rsplit('/').next().unwrap();
            let streams: i64 = conn
                .query_row("SELECT count(*) FROM flue_conversation_streams", [], |r| {
                    r.get(0)
                })
                .unwrap();
            let mut commands = vec![
                vec!["list", "--status", "all", "--instance", instance, "--json"],
                vec!["show", id, "--json"],
                vec!["classify", id, "--json"],
            ];
            if streams == 1 {
                commands.push(vec!["incidents", "--json"]);
            }
            for args in &commands {
                let a = stdout(&turnscope(&db, args), &name);
                let b = stdout(&turnscope(&file, args), &name);
                assert_eq!(a, b, "{name}: {args:?}");
                compared += 1;
            }
            // Writing over it needs --force.
            let o = turnscope(&db, &["export", id, "-o", file.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
            // A command that does not read 2.x refuses the export as it refuses the journal.
            let o = turnscope(&file, &["audit"]);
            assert_eq!(o.status.code(), Some(1));
            assert!(String::from_utf8_lossy(&o.stderr).contains("written by flue 2.x"));
        }
    }
    assert!(compared > 60, "{compared}");
}

#[test]
fn a_damaged_export_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let text = stdout(&turnscope(&db, &["export", "s1"]), "export");
    let doc: Value = serde_json::from_str(&text).unwrap();
    // A column name that is SQL, not a name: refused, nothing run.
    let mut bad = doc.clone();
    bad["rows"]["flue_agent_submissions"]["columns"][0] = "x); DROP TABLE flue_meta; --".into();
    // A row with a value missing.
    let mut short = doc.clone();
    short["rows"]["flue_conversation_streams"]["rows"][0]
        .as_array_mut()
        .unwrap()
        .pop();
    for (tag, d, needle) in [
        ("bad", bad, "is not a table or column name"),
        ("short", short, "values for"),
    ] {
        let f = dir.path().join(format!("{tag}.json"));
        std::fs::write(&f, serde_json::to_string(&d).unwrap()).unwrap();
        let o = turnscope(&f, &["list", "--status", "all"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{tag}: {err}");
        assert_eq!(err.lines().count(), 2, "{tag}: {err}");
        assert!(err.contains(needle), "{tag}: {err}");
        assert!(o.stdout.is_empty());
    }
}

/// A redacted export holds none of the texts, arguments and results, and every submission's
/// verdict and plan read from it are the journal's.
#[test]
fn a_redacted_export_judges_every_submission_as_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let mut had_text = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let conn = Connection::open(&db).unwrap();
        let ids: Vec<String> = conn
            .prepare("SELECT submission_id FROM flue_agent_submissions ORDER BY sequence")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let id = &ids[ids.len() - 1];
        let file = dir.path().join(format!("{name}-redacted.json"));
        let f = file.to_str().unwrap();
        let said = stdout(&turnscope(&db, &["export", id, "--redact", "-o", f]), &name);
        assert!(said.contains("redacted: args, results, text"), "{said}");
        let text = std::fs::read_to_string(&file).unwrap();
        // The scripted task's words, a tool's argument and a tool's output are gone.
        for gone in [
            "scripted turnscope task",
            "\\\"label\\\":\\\"a\\\"",
            "executedBy\\\":1",
        ] {
            assert!(
                !text.contains(gone),
                "{name}: {gone} left in the redacted export"
            );
        }
        assert!(text.contains("[redacted: "), "{name}");
        // Without --redact they are there.
        let plain = stdout(&turnscope(&db, &["export", id]), &name);
        if plain.contains("scripted turnscope task") {
            had_text += 1;
        }
        for args in [&["show", id, "--json"][..], &["classify", id, "--json"]] {
            let judged = |db: &Path| -> Value {
                let v: Value = serde_json::from_str(&stdout(&turnscope(db, args), &name)).unwrap();
                serde_json::json!([
                    v["label"],
                    v["classification"],
                    v["explanation"]["step"],
                    v["trailingPartialToolBatch"],
                    v["plan"],
                    v["submission"]["status"],
                    v["inProgress"].as_array().map(Vec::len),
                    v["uncommittedToolOutcomes"].as_array().map(Vec::len),
                ])
            };
            assert_eq!(judged(&db), judged(&file), "{name}: {args:?}");
        }
    }
    assert!(had_text >= 10, "{had_text}");
}
