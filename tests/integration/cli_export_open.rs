//! An export opened again (`turnscope --db EXPORT.json …`), export targets (session keys,
//! instances), `--redact`, and `turnscope diff` before and after a repair.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use turnscope_store::{JournalStore, RowFilter, SqliteStore};
use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};

use crate::support::{manifest, turnscope_command, unpack_fixture};

fn run(db: &Path, now: i64, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .env("TURNSCOPE_OPERATOR", "cli@test")
        .arg("--db")
        .arg(db)
        .args(["--context-window", "200000"])
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stdout));
    })
}

/// The error line and hint of a failed run, checked to be one line each.
fn fails(o: &Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("clock:")).collect();
    assert_eq!(lines.len(), 2, "one error line and one hint: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[1].starts_with("hint: "),
        "{err}"
    );
    err
}

/// `v` without the fields that name where it was read.
fn without_location(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                for k in ["database", "location", "source"] {
                    o.remove(k);
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn fixture_now(db: &Path) -> i64 {
    let store = SqliteStore::open(db).unwrap();
    let rows = store.list_submissions(RowFilter::All, 0).unwrap();
    rows.iter().map(|r| r.lease_expires_at).max().unwrap_or(0) + 1
}

fn fixture_names() -> Vec<String> {
    manifest()["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["db"]
                .as_str()
                .unwrap()
                .trim_end_matches(".db")
                .to_string()
        })
        // The committed ones (the manifest also names the big ones kept out of the repository).
        .filter(|n| {
            crate::support::fixtures_dir()
                .join(format!("flue-beta7/{n}.db.gz"))
                .exists()
        })
        .collect()
}

fn ids_of(db: &Path) -> Vec<String> {
    SqliteStore::open(db)
        .unwrap()
        .list_submissions(RowFilter::All, 0)
        .unwrap()
        .into_iter()
        .map(|r| r.submission_id)
        .collect()
}

fn export_to(db: &Path, now: i64, target: &str, file: &Path, extra: &[&str]) {
    let mut args = vec!["export", target, "-o", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(db, now, &args);
    assert!(
        o.status.success(),
        "{target}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn cli_export_opened_again_reads_like_the_database_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in fixture_names() {
        let db = unpack_fixture(dir.path(), &name);
        let now = fixture_now(&db);
        for (n, id) in ids_of(&db).iter().enumerate() {
            let file = dir.path().join(format!("{name}-{n}.json"));
            export_to(&db, now, id, &file, &[]);
            for cmd in ["show", "classify"] {
                let live = ok(&run(&db, now, &[cmd, id, "--json"]));
                let opened = ok(&run(&file, now, &[cmd, id, "--json"]));
                assert_eq!(
                    without_location(opened),
                    without_location(live),
                    "{name} {id} {cmd}"
                );
            }
            // The session's listing: the same rows and verdicts.
            let session = SqliteStore::open(&db)
                .unwrap()
                .find_submission(id)
                .unwrap()
                .session_key;
            let live = ok(&run(&db, now, &["list", "--status", "all", "--json"]));
            let opened = ok(&run(&file, now, &["list", "--status", "all", "--json"]));
            let of_session = |v: &Value| -> Vec<Value> {
                v["submissions"]
                    .as_array()
                    .or_else(|| v["rows"].as_array())
                    .unwrap_or_else(|| panic!("{v}"))
                    .iter()
                    .filter(|r| r.to_string().contains(&session.replace('"', "\\\"")))
                    .cloned()
                    .map(without_location)
                    .collect()
            };
            assert_eq!(of_session(&opened), of_session(&live), "{name} list");
            // Exported again from the export: the same rows.
            let again = dir.path().join(format!("{name}-{n}-again.json"));
            export_to(&file, now, id, &again, &[]);
            let rows = |p: &Path| -> Value {
                serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap()["rows"]
                    .clone()
            };
            assert_eq!(rows(&again), rows(&file), "{name}: rows byte for byte");
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked} submissions");
}

#[test]
fn cli_export_redacted_keeps_the_verdict_and_plan_and_drops_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut secrets_checked = 0;
    for name in fixture_names() {
        let db = unpack_fixture(dir.path(), &name);
        let now = fixture_now(&db);
        for (n, id) in ids_of(&db).iter().enumerate() {
            let file = dir.path().join(format!("{name}-{n}-redacted.json"));
            export_to(&db, now, id, &file, &["--redact"]);
            let text = std::fs::read_to_string(&file).unwrap();
            let doc: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                doc["redaction"]["rules"],
                serde_json::json!(["args", "results", "text"]),
                "{name}"
            );
            let live = ok(&run(&db, now, &["show", id, "--json"]));
            // The document's own reports and the export opened again: the original's verdict.
            let stored = doc["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["submission"]["submissionId"] == live["submission"]["submissionId"])
                .unwrap_or_else(|| panic!("{name}: {id} in the export"))
                .clone();
            let opened = ok(&run(&file, now, &["show", id, "--json"]));
            for (what, v) in [("stored", &stored), ("opened", &opened)] {
                for key in ["classification", "verdict", "plan", "inspection"] {
                    assert_eq!(v[key], live[key], "{name} {id} {what} {key}");
                }
            }
            let live_c = ok(&run(&db, now, &["classify", id, "--json"]));
            let opened_c = ok(&run(&file, now, &["classify", id, "--json"]));
            assert_eq!(
                without_location(opened_c),
                without_location(live_c),
                "{name}"
            );
            // No tool argument, tool result text or message text of the original is left.
            let original = ok(&run(&db, now, &["export", id]));
            let entries = original["session"]["entries"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            // Ids stay (a value may repeat one): they are not what is checked.
            let ids: Vec<String> = entries
                .iter()
                .flat_map(|e| {
                    let m = &e["data"]["message"];
                    let blocks = m["content"].as_array().cloned().unwrap_or_default();
                    blocks
                        .iter()
                        .filter_map(|b| b["id"].as_str().map(String::from))
                        .chain(m["toolCallId"].as_str().map(String::from))
                        .collect::<Vec<_>>()
                })
                .collect();
            for e in &entries {
                let m = &e["data"]["message"];
                let mut secrets: Vec<String> = Vec::new();
                for b in m["content"].as_array().into_iter().flatten() {
                    for key in ["text", "thinking"] {
                        if let Some(s) = b[key].as_str() {
                            secrets.push(s.to_string());
                        }
                    }
                    if let Some(args) = b["arguments"].as_object() {
                        secrets.extend(args.values().filter_map(|v| v.as_str()).map(String::from));
                    }
                }
                if m["role"] == "signal" {
                    // The runtime's own signal texts are kept; the dispatched input is not.
                    secrets.retain(|_| false);
                    if m["type"] == "dispatch_input" {
                        secrets.extend(m["content"].as_str().map(String::from));
                    }
                }
                for s in secrets.iter().filter(|s| s.len() >= 12 && !ids.contains(s)) {
                    let quoted = serde_json::to_string(s).unwrap();
                    assert!(
                        !text.contains(&quoted),
                        "{name}: {quoted} left in the export"
                    );
                    secrets_checked += 1;
                }
            }
        }
    }
    assert!(secrets_checked >= 10, "{secrets_checked} texts checked");
}

#[test]
fn cli_export_takes_a_session_key_or_an_instance_and_lists_several_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("j.db");
    let t0 = 1_796_000_000_000;
    let mut j = JournalBuilder::new();
    let mut keys = Vec::new();
    for (instance, sessions) in [("travel-desk", 1), ("billing", 2)] {
        for n in 0..sessions {
            let mut s = SessionBuilder::new(
                format!(
                    "agent-session:{}",
                    serde_json::json!([instance, format!("conv-{n}"), "default"])
                ),
                t0 + n as i64,
            );
            s.message(
                &format!("{instance}{n}"),
                serde_json::json!({"role":"user","content":"hello","timestamp":t0}),
            );
            keys.push(s.key().to_string());
            let id = format!("5ub{n}{}-0000-4000-8000-000000000000", instance.len());
            j.submission(Submission::direct(
                &id,
                s.key(),
                "worker",
                instance,
                "hello",
                t0,
            ));
            j.session(s);
        }
    }
    j.write(&db).unwrap();
    let now = t0 + 10_000;

    // An instance with one session: that session.
    let o = run(&db, now, &["export", "travel-desk"]);
    let doc = ok(&o);
    assert_eq!(doc["sessionKey"], keys[0].as_str());
    assert_eq!(doc["selectedSubmission"], Value::Null);
    // A session key: the same document.
    let by_key = ok(&run(&db, now, &["export", &keys[0]]));
    assert_eq!(by_key, doc);
    let file = dir.path().join("td.json");
    let o = run(
        &db,
        now,
        &["export", "travel-desk", "-o", file.to_str().unwrap()],
    );
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.starts_with("exported session agent-session:") && said.contains("1 submission)"),
        "{said}"
    );
    // An instance with two: refused, both listed, the hint names one key.
    let err = fails(&run(&db, now, &["export", "billing"]), 2);
    assert!(err.contains("instance \"billing\" has 2 sessions"), "{err}");
    assert!(err.contains(&keys[1]) && err.contains(&keys[2]), "{err}");
    assert!(err.contains("hint: an export holds one session"), "{err}");
    // Nothing of the kind.
    let err = fails(&run(&db, now, &["export", "nobody"]), 4);
    assert!(
        err.contains("no submission, session or instance matches"),
        "{err}"
    );
    // A rule that is none: said so, with the spelling that works.
    let err = fails(
        &run(&db, now, &["export", "travel-desk", "--redact=travel"]),
        2,
    );
    assert!(err.contains("unknown redaction rule \"travel\""), "{err}");
    // A bare --redact before the target takes it as its rules: the target is then missing.
    let o = run(&db, now, &["export", "--redact", "travel-desk"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(ok(&run(
        &db,
        now,
        &["export", "travel-desk", "--redact", "args,text"]
    ))["redaction"]["rules"]
        .to_string()
        .contains("text"));
}

/// A copy of `tool-batch-mid` whose deadline is an hour from the real clock (writes plan at it).
fn repairable(dir: &Path) -> (PathBuf, i64) {
    let db = unpack_fixture(dir, "tool-batch-mid");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET timeout_at = ?1",
            [turnscope_store::clock::now_ms() + 3_600_000],
        )
        .unwrap();
    (db.clone(), fixture_now(&db))
}

#[test]
fn cli_diff_shows_a_repair_between_an_export_and_the_live_database() {
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = repairable(dir.path());
    let before = dir.path().join("before.json");
    export_to(&db, now, "74384fb4", &before, &[]);
    let b = before.to_str().unwrap();
    let redacted = dir.path().join("before-redacted.json");
    export_to(&db, now, "74384fb4", &redacted, &["--redact"]);
    let r = redacted.to_str().unwrap();
    // A redacted export and the database it came from: the database side is redacted alike.
    let o = run(&db, now, &["diff", r, "74384fb4"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // Nothing changed yet: equal, exit 0, each side judged.
    let o = run(&db, now, &["diff", b, "74384fb4"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("no difference"));
    let o = run(&db, now, &["diff", b, b, "--json"]);
    assert_eq!(o.status.code(), Some(0));

    let o = turnscope_command()
        .env("TURNSCOPE_OPERATOR", "cli@test")
        .args([
            "--write",
            "--db",
            db.to_str().unwrap(),
            "repair",
            "74384fb4",
            "--yes",
            "--ack-side-effects",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let o = run(&db, now, &["diff", b, "74384fb4"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("  + "), "an added entry: {text}");
    assert!(text.contains("toolResult"), "{text}");
    assert!(text.contains("session leaf: "), "{text}");
    assert!(
        text.contains("a: verdict ") && text.contains("b: verdict "),
        "{text}"
    );

    let o = run(&db, now, &["diff", b, "74384fb4", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["schema"], "turnscope.diff/1");
    assert_eq!(d["equal"], false);
    let added: Vec<&Value> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["change"] == "added")
        .collect();
    assert!(!added.is_empty(), "{d:#}");
    assert!(added
        .iter()
        .all(|e| e["preview"].as_str().unwrap().starts_with("toolResult")));
    assert_ne!(d["leaf"], Value::Null);
    // Each side's verdict is the one `show` computes there.
    let live = ok(&run(&db, now, &["show", "74384fb4", "--json"]));
    assert_eq!(d["b"]["verdict"], live["verdict"]);
    assert_eq!(d["b"]["plan"], live["plan"]);
    let old = ok(&run(&before, now, &["show", "74384fb4", "--json"]));
    assert_eq!(d["a"]["verdict"], old["verdict"]);
    assert_eq!(d["a"]["classification"], old["classification"]);
    assert_ne!(d["a"]["classification"], d["b"]["classification"], "{d:#}");

    // The redacted export before: the same three entries added, nothing "changed" by the
    // redaction, and the verdicts are those of the unredacted diff.
    let o = run(&db, now, &["diff", r, "74384fb4", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let dr: Value = serde_json::from_slice(&o.stdout).unwrap();
    let changes = |d: &Value| -> Vec<(String, String)> {
        d["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["change"].as_str().unwrap().to_string(),
                    e["id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(changes(&dr), changes(&d));
    assert!(dr["b"]["source"]
        .as_str()
        .unwrap()
        .contains("redacted like the other side"));
    for side in ["a", "b"] {
        assert_eq!(dr[side]["verdict"], d[side]["verdict"]);
        assert_eq!(dr[side]["plan"], d[side]["plan"]);
    }

    // Errors are never exit 1.
    let o = run(&db, now, &["diff", b, "zzzz"]);
    assert_eq!(o.status.code(), Some(4));
    let o = run(&db, now, &["diff", db.to_str().unwrap(), "74384fb4"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn cli_export_opened_is_read_only_and_other_json_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = repairable(dir.path());
    let file = dir.path().join("e.json");
    export_to(&db, now, "74384fb4", &file, &[]);
    let o = turnscope_command()
        .env("TURNSCOPE_OPERATOR", "cli@test")
        .args([
            "--write",
            "--db",
            file.to_str().unwrap(),
            "repair",
            "74384fb4",
            "--yes",
            "--ack-side-effects",
        ])
        .output()
        .unwrap();
    let err = fails(&o, 1);
    assert!(err.contains("error: an export is read-only: "), "{err}");
    // Another document of turnscope's, broken JSON: said what they are.
    let show = dir.path().join("show.json");
    std::fs::write(&show, run(&db, now, &["show", "74384fb4", "--json"]).stdout).unwrap();
    let err = fails(&run(&show, now, &["list"]), 1);
    assert!(
        err.contains("is a turnscope.show/1 document, not a turnscope export"),
        "{err}"
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": \"turnscope.export/1\", ").unwrap();
    let err = fails(&run(&broken, now, &["list"]), 1);
    assert!(err.contains("does not parse"), "{err}");
}

#[test]
fn tui_opens_an_export_read_only_with_its_list_and_tree() {
    use turnscope_tui::harness::{Harness, HarnessOptions};
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = repairable(dir.path());
    let file = dir.path().join("e.json");
    export_to(&db, now, "74384fb4", &file, &[]);
    let target = turnscope_store::DbTarget::parse(file.to_str().unwrap()).unwrap();
    assert!(target.is_export(), "{target:?}");
    let mut o = HarnessOptions::new(now);
    o.context_window = Some(200_000);
    // Asked for write mode: an export stays read-only.
    o.read_only = false;
    let mut h = Harness::open_target(&target, o).unwrap();
    h.press("2");
    let ids: Vec<String> = h
        .rows()
        .iter()
        .map(|r| r.row.submission_id.clone())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.iter().any(|i| i.starts_with("74384fb4")));
    while h.selected_id().is_some_and(|i| !i.starts_with("74384fb4")) {
        h.press("j");
    }
    h.press("<Enter>");
    let screen = h.render();
    assert!(screen.contains("tool_use_unresolved"), "{screen}");
    // A write key says why nothing happens, and what to do.
    h.press("R");
    let status = h.status_text().unwrap();
    assert!(status.starts_with("an export is read-only: "), "{status}");
    // w (write mode) is refused too, and nothing switches.
    h.press("w");
    assert!(h.popup().is_none());
    let status = h.status_text().unwrap();
    assert!(status.contains("an export is read-only"), "{status}");
    assert!(h.render().contains("READ-ONLY"));
    // The writer is refused: the export is read-only.
    assert!(turnscope_store::open_writer(&target)
        .err()
        .unwrap()
        .to_string()
        .starts_with("an export is read-only: "));
}

#[test]
fn cli_diff_shows_changed_and_removed_entries_in_history_order() {
    let dir = tempfile::tempdir().unwrap();
    let (db, now) = repairable(dir.path());
    let before = dir.path().join("before.json");
    export_to(&db, now, "74384fb4", &before, &[]);
    // By hand: one entry's stored text changed, a later one removed.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ids: Vec<(String, String)> = conn
        .prepare("SELECT entry_id, data FROM flue_session_entries ORDER BY position")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (changed, data) = &ids[2];
    let (removed, _) = &ids[4];
    let edited = data.replacen("\"text\":\"", "\"text\":\"EDITED \\u001b[31m", 1);
    assert_ne!(&edited, data);
    conn.execute(
        "UPDATE flue_session_entries SET data = ?1 WHERE entry_id = ?2",
        [&edited, changed],
    )
    .unwrap();
    conn.execute(
        "DELETE FROM flue_session_entries WHERE entry_id = ?1",
        [removed],
    )
    .unwrap();
    drop(conn);
    let o = run(
        &db,
        now,
        &["diff", before.to_str().unwrap(), "74384fb4", "--json"],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<(String, String)> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["change"].as_str().unwrap().into(),
                e["id"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("changed".into(), changed.clone()),
            ("removed".into(), removed.clone())
        ],
        "{d:#}"
    );
    assert_eq!(d["rows"], serde_json::json!([]), "no row changed");
    // The text form: signs, and the edited text terminal-safe.
    let o = run(&db, now, &["diff", before.to_str().unwrap(), "74384fb4"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("  ~ {changed} ")), "{text}");
    assert!(text.contains(&format!("  - {removed} ")), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}
