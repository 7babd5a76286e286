//! `turnscope sessions`: a session found from an id, a key or text, what matched said on each
//! line and in `turnscope.sessions/1`, what was searched said when nothing matched (exit 4),
//! `--limit`, usage errors, and errors under `--json` as `turnscope.error/1`.

use std::process::Output;

use serde_json::Value;

use crate::backends::{kinds, TestDb};
use crate::cli_export::db_arg;
use crate::find::{journal, CONV_A, SUB_B};
use crate::support::turnscope_command;

fn sessions(db: &str, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .arg("sessions")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn doc(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn cli_sessions_finds_a_session_by_id_key_and_text_and_says_what_matched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("find.db");
    journal(&path);
    for kind in kinds() {
        let tdb = TestDb::from_sqlite(kind, &path);
        let db = db_arg(&tdb.target);
        let out = stdout(&sessions(&db, &["conv_01M90NT6BJE9"]));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{kind:?}: {out}");
        assert!(
            lines[0].starts_with("conversation id  agent-session:[\"support-2\"")
                && lines[0].ends_with(CONV_A),
            "{kind:?}: {out}"
        );
        assert_eq!(lines[1], "1 session matches \"conv_01M90NT6BJE9\"");
        let out = stdout(&sessions(&db, &["86bad5c1"]));
        assert!(
            out.starts_with("submission id    agent-session:[\"billing-1\"") && out.contains(SUB_B),
            "{kind:?}: {out}"
        );
        let out = stdout(&sessions(&db, &["--text", "sk 803"]));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{kind:?}: {out}");
        assert!(lines[0].starts_with("text             agent-session:[\"ops-9\""));
        assert!(
            lines[1].contains("entry a0000002 at 1: ")
                && lines[1].contains("ticket SK 803 refunded"),
            "{kind:?}: {out}"
        );
        assert_eq!(
            lines[2],
            "2 sessions match text \"sk 803\" (searched 3 sessions, 63 entries)"
        );
        // An id and text at once; --limit stops at the first session.
        let out = stdout(&sessions(
            &db,
            &["billing", "--text", "sk 803", "--limit", "1"],
        ));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{kind:?}: {out}");
        assert!(lines[0].starts_with("instance         agent-session:[\"billing-1\""));
        assert!(
            lines[1].starts_with("1 session matches \"billing\" or text \"sk 803\" (searched 2 of 3 sessions); stopped at --limit 1, more may match"),
            "{kind:?}: {out}"
        );
        // The document: every match with what matched, and what the text search read.
        let d = doc(&sessions(&db, &["SUPPORT-2", "--text", "SK 803", "--json"]));
        assert_eq!(d["schema"], "turnscope.sessions/1");
        assert_eq!(d["sessions"], 2, "{kind:?}: {d}");
        let m = d["matches"].as_array().unwrap();
        let kinds_seen: Vec<(&str, &str)> = m
            .iter()
            .map(|m| {
                (
                    m["matched"].as_str().unwrap(),
                    m["instance"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds_seen,
            [
                ("instance", "support-2"),
                ("text", "ops-9"),
                ("text", "support-2")
            ],
            "{kind:?}: {d}"
        );
        assert_eq!(m[1]["entry"]["id"], "c0000059");
        assert_eq!(m[1]["entry"]["position"], 59);
        assert_eq!(d["searched"]["sessions"], 3);
        assert_eq!(d["searched"]["sessionsTotal"], 3);
        assert_eq!(d["searched"]["entriesTotal"], 64);
        assert_eq!(d["searched"]["finished"], true);
        assert_eq!(d["truncated"], false);
    }
}

#[test]
fn cli_sessions_without_a_match_says_what_was_searched_and_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("find.db");
    journal(&path);
    let db = path.display().to_string();
    let o = sessions(&db, &["--text", "zebra quartz"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(
            "error: no session matches text \"zebra quartz\" (searched 3 sessions, 64 entries)\nhint: "
        ),
        "{err}"
    );
    // Under --json the error is the document on stdout, with the same exit code.
    let o = sessions(&db, &["conv_01ZZZZ", "--json"]);
    assert_eq!(o.status.code(), Some(4));
    let d = doc(&o);
    assert_eq!(d["schema"], "turnscope.error/1");
    assert_eq!(d["exitCode"], 4);
    assert_eq!(d["error"], "no session matches \"conv_01ZZZZ\"");
    // Neither a query nor text: a usage error.
    let o = sessions(&db, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sessions needs a QUERY"));
    let o = sessions(&db, &["x", "--limit", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // A database that is not there: not found, as the other commands.
    let o = sessions(
        &dir.path().join("nope.db").display().to_string(),
        &["x", "--json"],
    );
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(doc(&o)["schema"], "turnscope.error/1");
}

#[test]
fn cli_sessions_shows_database_text_terminal_safe() {
    use serde_json::json;
    use turnscope_testkit::{JournalBuilder, SessionBuilder};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.db");
    let mut s = SessionBuilder::for_instance("evil\u{1b}[2Jinst", 1_767_225_600_000);
    s.message(
        "e0000001",
        json!({"role": "user", "content": "refund \u{1b}]0;owned\u{7} SK 803 \u{202e}gnp.exe", "timestamp": 1}),
    );
    JournalBuilder::new().session(s).write(&path).unwrap();
    let db = path.display().to_string();
    for args in [&["--text", "SK 803"][..], &["evil"][..]] {
        let out = stdout(&sessions(&db, args));
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
            "{args:?}: {out:?}"
        );
        assert!(out.contains("agent-session:"), "{out}");
    }
}
