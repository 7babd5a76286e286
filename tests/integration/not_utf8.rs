//! Text that is not UTF-8 in a 2.x journal. The runtime writes only UTF-8, so such a byte is
//! damage; but it does not stop the runtime: its `node:sqlite` reads each bad sequence as U+FFFD
//! and `JSON.parse` loads the batch. turnscope reads it the same way: every verdict, classification
//! and plan as without it (the real 2.1.0 classifier says the same of the damaged copy), and the
//! batches named (`show`, `health`); a submission row's columns likewise, and no action writes
//! such a row. (beta.7's rows: `damaged::non_utf8_text_is_read_as_the_
//! runtime_reads_it_and_blocks_writes` and `runtime_differential`'s mutation.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::lone_surrogates::{judgements, turnscope_json};
use crate::runtime_kit::runtime2;
use crate::support::{db_fixture_names, unpack_db};

/// `db` copied beside itself with a byte 0xFF put at the start of every text (`"text":"…`) of
/// its batches; `None` where no batch has one.
fn damaged_copy(db: &Path) -> Option<PathBuf> {
    let copy = db.with_extension("not-utf8.db");
    std::fs::copy(db, &copy).unwrap();
    let n = rusqlite::Connection::open(&copy)
        .unwrap()
        .execute(
            r#"UPDATE flue_conversation_stream_batches
               SET data = CAST(replace(data, '"text":"', '"text":"' || CAST(x'ff' AS TEXT)) AS TEXT)
               WHERE data LIKE '%"text":"%'"#,
            [],
        )
        .unwrap();
    (n > 0).then_some(copy)
}

/// Every 2.1.0 fixture with a text, unpacked into `dir`: its name, itself and its damaged copy
/// ([`damaged_copy`]); at least ten of them.
fn damaged_fixtures(dir: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let out: Vec<_> = db_fixture_names("flue-2.1.0")
        .into_iter()
        .filter_map(|name| {
            let db = unpack_db("flue-2.1.0", &name, dir);
            let copy = damaged_copy(&db)?;
            Some((name, db, copy))
        })
        .collect();
    assert!(out.len() >= 10, "{} fixtures have a text", out.len());
    out
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn flue2_batches_that_are_not_utf8_are_read_as_the_runtime_reads_them() {
    let rt = runtime2("not_utf8");
    let dir = tempfile::tempdir().unwrap();
    for (name, db, copy) in damaged_fixtures(dir.path()) {
        assert_eq!(
            rt.drive("classify.mjs", &[copy.as_os_str()]),
            crate::runtime2::committed(&name),
            "{name}: the runtime reads the damaged batches as it reads the fixture"
        );
        // Every row judged as without the damage (the list once failed whole on it).
        assert_eq!(judgements(&copy).0, judgements(&db).0, "{name}");
        let health = turnscope_json(&copy, &["health", "--all", "--json"]);
        let named = health["totals"]["byKind"]["not_utf8"].as_u64().unwrap();
        assert!(named > 0, "{name}: {health}");
        let list = turnscope_json(&copy, &["list", "--status", "all", "--json"]);
        let damaged: usize = list["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let id = s["id"].as_str().unwrap();
                let show = turnscope_json(&copy, &["show", id, "--json"]);
                let seqs = show["streamNotUtf8Batches"].as_array().unwrap();
                assert!(seqs.iter().all(Value::is_i64), "{show}");
                seqs.len()
            })
            .sum();
        assert!(damaged > 0, "{name}: no show names a damaged batch");
    }
}

/// `health` names a stream's damaged batches on the stream, not as a conversation: the same
/// conversations counted as in the intact fixture, each damaged batch a finding of its own, and
/// in the text no conversation line for them (it once printed " (m1): 0 entries, 0 on the
/// active path").
#[test]
fn flue2_health_names_damaged_batches_on_the_stream_not_as_a_conversation() {
    let dir = tempfile::tempdir().unwrap();
    for (name, db, copy) in damaged_fixtures(dir.path()) {
        let args = ["health", "--all", "--json"];
        let (intact, damaged) = (turnscope_json(&db, &args), turnscope_json(&copy, &args));
        let (t, d) = (&intact["totals"], &damaged["totals"]);
        assert_eq!(d["sessions"], t["sessions"], "{name}: {damaged}");
        assert_eq!(
            d["sessionsWithFindings"], t["sessionsWithFindings"],
            "{name}: {damaged}"
        );
        let batches = d["batchFindings"].as_u64().unwrap();
        assert!(batches > 0, "{name}: {damaged}");
        assert_eq!(d["byKind"]["not_utf8"].as_u64(), Some(batches), "{name}");
        assert_eq!(
            d["findings"].as_u64(),
            Some(t["findings"].as_u64().unwrap() + batches),
            "{name}"
        );
        assert_eq!(t["batchFindings"], 0, "{name}");
        // Each damaged stream's entry says it is one, and together they hold those findings.
        let held: Vec<&Value> = damaged["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["streamBatches"] == true)
            .flat_map(|s| s["findings"].as_array().unwrap())
            .collect();
        assert_eq!(held.len() as u64, batches, "{name}: {damaged}");
        assert!(held.iter().all(|f| f["kind"] == "not_utf8"), "{name}");
        let o = crate::support::turnscope_command()
            .env("TURNSCOPE_NOW_MS", "1796617737650")
            .args(["--db", copy.to_str().unwrap(), "health", "--all"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(8), "{name}");
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(
            !text.contains(": 0 entries, 0 on the active path"),
            "{name}:\n{text}"
        );
        let header = text
            .lines()
            .find(|l| l.contains(" stream: "))
            .unwrap_or_else(|| panic!("{name}: no stream line:\n{text}"));
        assert!(header.contains(" not valid UTF-8"), "{name}: {header}");
        let last = text.lines().last().unwrap();
        let said = match t["findings"].as_u64().unwrap() {
            0 => format!(
                "{batches} finding{} in streams' batches, none in ",
                if batches == 1 { "" } else { "s" }
            ),
            _ => format!(" and {batches} in streams' batches: "),
        };
        assert!(last.contains(&said), "{name}: {last}");
    }
}

/// A submission row with a column that is not UTF-8 no longer stops the list: every row judged
/// as without it, the column named, and every action on that row refused.
#[test]
fn a_flue2_submission_row_that_is_not_utf8_is_named_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut changed = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let copy = db.with_extension("row-not-utf8.db");
        std::fs::copy(&db, &copy).unwrap();
        let c = rusqlite::Connection::open(&copy).unwrap();
        let id: String = c
            .query_row(
                "SELECT submission_id FROM flue_agent_submissions WHERE owner_id IS NOT NULL ORDER BY sequence LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap_or_default();
        if id.is_empty() {
            continue;
        }
        c.execute(
            "UPDATE flue_agent_submissions SET owner_id = CAST(owner_id || x'ff' AS TEXT) WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
        drop(c);
        changed += 1;
        let judged = |db: &Path| {
            let list = turnscope_json(db, &["list", "--status", "all", "--json"]);
            list["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| serde_json::json!([s["id"], s["verdict"], s["classification"], s["plan"]]))
                .collect::<Vec<_>>()
        };
        assert_eq!(judged(&copy), judged(&db), "{name}");
        let show = turnscope_json(&copy, &["show", &id, "--json"]);
        assert_eq!(
            show["submission"]["notUtf8Columns"],
            serde_json::json!(["owner_id"]),
            "{name}"
        );
        assert!(show["submission"]["owner"]
            .as_str()
            .unwrap()
            .ends_with('\u{fffd}'));
        for action in [
            &["abort", id.as_str()][..],
            &["fail", id.as_str(), "--reason", "damaged row"],
            &["requeue", id.as_str()],
        ] {
            let o = crate::support::turnscope_command()
                .args(["--db", copy.to_str().unwrap(), "--write"])
                .args(action)
                .arg("--dry-run")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{name} {action:?}");
            assert!(
                err.contains("owner_id not valid UTF-8"),
                "{name} {action:?}: {err}"
            );
        }
    }
    assert!(changed >= 10, "{changed} fixtures have an owned row");
}
