//! `turnscope next-request` on flue 2.x journals, through the binary (no runtime needed; the
//! comparison with the real 2.1.0 runtime's requests is `runtime2_next_request.rs`): on every
//! 2.1.0 fixture, each submission's view agrees with the `plan` `show --json` prints at the same
//! clock (the turn follows the resume's end; the recovery writes are the resume's), an export
//! answers as its journal, an instance's view is its stored path before the next input, and bad
//! input is refused in one line.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{db_fixture_names, turnscope_command, unpack_db};

fn run(db: &Path, now: i64, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn json(db: &Path, now: i64, args: &[&str]) -> Value {
    crate::support::turnscope_json(db, Some(now), args)
}

/// The clock a second after the fixture's last lease ended.
fn clock(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(
        "SELECT MAX(lease_expires_at) + 1000 FROM flue_agent_submissions",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn every_submissions_view_follows_the_plan_show_prints() {
    let dir = tempfile::tempdir().unwrap();
    let (mut continued, mut without) = (0, 0);
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = clock(&db);
        let ids: Vec<String> = {
            let c = rusqlite::Connection::open(&db).unwrap();
            let mut st = c
                .prepare("SELECT submission_id FROM flue_agent_submissions")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        for id in ids {
            let show = json(&db, now, &["show", &id, "--json"]);
            let view = json(&db, now, &["next-request", &id, "--json"]);
            let case = format!("{name} {id}");
            assert_eq!(view["format"], "flue-2.x", "{case}");
            assert_eq!(view["submissionId"], id.as_str(), "{case}");
            let plan = &show["plan"];
            let resume = &plan["resume"];
            let turn = view["turn"]["kind"].as_str().unwrap();
            match resume["end"]["end"].as_str() {
                Some("model_turn") => {
                    assert!(
                        matches!(turn, "continue" | "compaction_first"),
                        "{case}: {turn}"
                    );
                    continued += 1;
                }
                Some(_) | None => {
                    assert_eq!(turn, "no_call", "{case}");
                    without += 1;
                }
            }
            assert_eq!(
                view["resume"], *resume,
                "{case}: the resume simulated is the plan's"
            );
            // Every batch the resume repairs, or a terminal step marker-settles, is sent whole,
            // its results written by recovery; a terminal signal written is sent after it.
            let len = |v: &Value| v.as_array().map_or(0, Vec::len);
            let repaired: usize = resume["actions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|a| a["op"] == "repair_batch")
                .map(|a| len(&a["kept"]) + len(&a["unresolved"]))
                .sum::<usize>()
                + plan["writes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|w| w["op"] == "marker_settle_batch")
                    .map(|w| len(&w["kept"]) + len(&w["markers"]))
                    .sum::<usize>();
            let signals = plan["writes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|w| w["op"] == "terminal_signal" && w["already_present"] == false)
                .count();
            let advisories = view["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["source"]["write"] == "advisory")
                .count();
            assert_eq!(advisories, signals, "{case}");
            let written: usize = view["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| {
                    m["source"]["from"] == "recovery" && m["source"]["write"] == "tool_repair"
                })
                .count();
            assert_eq!(written, repaired, "{case}");
        }
    }
    assert!(continued >= 8 && without >= 5, "{continued} {without}");
}

#[test]
fn an_export_answers_as_its_journal_and_an_instance_shows_its_stored_path() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = clock(&db);
    let id = "sub_01M92S7VMD";
    let export = dir.path().join("e.json");
    let o = run(&db, now, &["export", id, "-o", export.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = json(&db, now, &["next-request", id, "--json"]);
    let b = json(&export, now, &["next-request", id, "--json"]);
    assert_eq!(a["messages"], b["messages"]);
    assert_eq!(a["turn"], b["turn"]);
    assert_eq!(a["hazards"], b["hazards"]);
    assert_eq!(a["turn"]["kind"], "continue");
    // The instance: its conversation's stored path, the next input after it; the uncommitted
    // batch at its leaf is left out and named.
    let i = json(&db, now, &["next-request", "agents/worker/s1", "--json"]);
    assert_eq!(i["turn"]["kind"], "next_input");
    assert_eq!(i["submissionId"], Value::Null);
    assert_eq!(i["recovery"], serde_json::json!([]));
    assert_eq!(i["hazards"][0]["kind"], "unseen_calls");
    assert_eq!(i["storedEntries"], 8);
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "mid-stream", dir.path());
    let now = clock(&db);
    for (args, code, needle) in [
        (
            &["next-request", "sub_", "--vision", "no"][..],
            2,
            "--vision does not apply",
        ),
        (&["next-request", "nope"][..], 4, "no submission matches"),
    ] {
        let o = run(&db, now, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("clock:")).collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with("error: ") && lines[0].contains(needle),
            "{err}"
        );
        assert!(lines[1].starts_with("hint: "), "{err}");
        assert!(o.stdout.is_empty());
    }
}
