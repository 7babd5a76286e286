//! beta.7 rows in a storage class the runtime does not write. SQLite lets a BLOB into a `TEXT`
//! column, and text into an `INTEGER` one (damage, or a hand-made row). The runtime checks
//! `typeof` before it reads a row: a session or entry row so stored cannot be loaded at all,
//! whatever the bytes say (turnscope must say `damaged`, plan no rule, refuse every write, and
//! keep the damage in an export); a submission row is malformed, and settled as failed by the
//! runtime's pass; a turn journal row makes the reconciliation throw. turnscope used to read the
//! bytes as text and plan the next rule.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::runtime_kit::runtime;
use crate::support::{turnscope_as, turnscope_command, turnscope_json, unpack_fixture};

/// The stuck submission of the `tool-batch-mid` fixture.
const STUCK: &str = "74384fb4-aaac-4e01-9744-399d916c44d1";
const ENTRY_THROWS: &str = "[flue] Persisted session entry row is malformed.";
const SESSION_THROWS: &str = "[flue] Persisted session row is malformed.";

/// Each damage: its name, the SQL that makes it, the runtime's error, and whether it is on the
/// path the listing walks (from the leaf back to the input entry at position 6).
const DAMAGES: &[(&str, &str, &str, bool)] = &[
    (
        "an entry before the input",
        "UPDATE flue_session_entries SET data = CAST(data AS BLOB) WHERE entry_id = 'ba3430eb'",
        ENTRY_THROWS,
        false,
    ),
    (
        "the leaf entry",
        "UPDATE flue_session_entries SET data = CAST(data AS BLOB) WHERE entry_id = '8dd456d7'",
        ENTRY_THROWS,
        true,
    ),
    (
        "the leaf entry's id",
        "UPDATE flue_session_entries SET entry_id = CAST(entry_id AS BLOB) WHERE entry_id = '8dd456d7'",
        ENTRY_THROWS,
        true,
    ),
    (
        "the session data",
        "UPDATE flue_sessions SET data = CAST(data AS BLOB)",
        SESSION_THROWS,
        true,
    ),
];

/// `db` copied to `dir/NAME.db`, then `sql` run on the copy, changing exactly one row (`?1` is
/// the stuck submission's id where it is used).
fn damaged_copy(db: &Path, dir: &Path, name: &str, sql: &str) -> PathBuf {
    let copy = dir.join(format!("{name}.db"));
    std::fs::copy(db, &copy).unwrap();
    let c = rusqlite::Connection::open(&copy).unwrap();
    let n = if sql.contains("?1") {
        c.execute(sql, [STUCK])
    } else {
        c.execute(sql, [])
    };
    assert_eq!(n.unwrap(), 1, "{name}: {sql}");
    copy
}

/// The real runtime's pass on `db`: what it did with the stuck submission (`disposition`,
/// `error`, the rows `before` and `after`).
pub(crate) fn the_pass(rt: &crate::runtime_kit::Runtime, db: &Path) -> Value {
    let ran = rt.drive("reconcile-once.mjs", &["--db".as_ref(), db.as_os_str()]);
    ran["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["submissionId"] == STUCK)
        .unwrap_or_else(|| panic!("{ran}"))
        .clone()
}

/// The real runtime's pass on `db`: it threw `throws` on the stuck submission and wrote nothing.
pub(crate) fn assert_the_pass_throws(
    rt: &crate::runtime_kit::Runtime,
    name: &str,
    db: &Path,
    throws: &str,
) {
    let state = the_pass(rt, db);
    assert_eq!(state["disposition"], "threw", "{name}: {state}");
    assert_eq!(state["error"], format!("Error: {throws}"), "{name}");
    assert_eq!(state["before"], state["after"], "{name}: written");
}

/// The fixture copied once per damage: (name, copy, runtime's error, on the walked path).
fn damaged_copies(dir: &Path) -> Vec<(&'static str, PathBuf, &'static str, bool)> {
    let db = unpack_fixture(dir, "tool-batch-mid");
    DAMAGES
        .iter()
        .enumerate()
        .map(|(i, &(name, sql, throws, on_path))| {
            let copy = damaged_copy(&db, dir, &format!("blob-{i}"), sql);
            (name, copy, throws, on_path)
        })
        .collect()
}

/// `show --json`'s plan is "no rule: the runtime cannot load it", quoting `throws`.
fn assert_unreadable(name: &str, show: &Value, throws: &str) {
    assert_unreadable_by(name, show, throws);
    let problems = show["plan"]["disposition"]["problems"].to_string();
    assert!(problems.contains("stored as a BLOB"), "{name}: {problems}");
}

/// `show --json`'s plan is "no rule: the runtime's reconciliation throws `throws`".
pub(crate) fn assert_unreadable_by(name: &str, show: &Value, throws: &str) {
    assert_eq!(show["verdict"], "damaged", "{name}");
    let plan = &show["plan"];
    assert_eq!(plan["disposition"]["state"], "unreadable", "{name}: {plan}");
    assert!(
        plan["rule"].is_null() && plan["writes"] == Value::Array(vec![]),
        "{name}: {plan}"
    );
    let problems = plan["disposition"]["problems"].to_string();
    assert!(problems.contains(throws), "{name}: {problems}");
}

#[test]
fn a_session_with_a_blob_row_is_damaged_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    for (name, db, throws, on_path) in damaged_copies(dir.path()) {
        assert_unreadable(
            name,
            &turnscope_json(&db, None, &["show", STUCK, "--json"]),
            throws,
        );
        // The listing's walk reads the path only: damage there sends it to the whole read.
        if on_path {
            assert_listed_damaged(name, &db);
        }
        assert_every_write_refused(name, &db, "stored as a BLOB");
    }
}

/// `list --expired` gives the stuck submission the verdict `damaged`.
pub(crate) fn assert_listed_damaged(name: &str, db: &Path) {
    let list = turnscope_json(db, None, &["list", "--expired", "--json"]);
    let row = &list["submissions"][0];
    assert_eq!(row["submission"]["submissionId"], STUCK, "{name}");
    assert_eq!(row["verdict"], "damaged", "{name}: {row}");
}

/// Every write to the stuck submission is refused, naming `why`, and nothing is written.
pub(crate) fn assert_every_write_refused(name: &str, db: &Path, why: &str) {
    let before = std::fs::read(db).unwrap();
    for action in [
        &["repair"][..],
        &["requeue"],
        &["fail", "--reason", "stuck"],
        &["step"],
    ] {
        let args = [&["--write"][..], action, &[STUCK, "-y"]].concat();
        let out = turnscope_as(db, "t", &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("refused") && err.contains(why),
            "{name}: {action:?}: {err}"
        );
    }
    assert!(std::fs::read(db).unwrap() == before, "{name}: written");
}

#[test]
fn the_sessions_view_names_session_data_stored_as_a_blob() {
    let dir = tempfile::tempdir().unwrap();
    for (name, db, throws, _) in damaged_copies(dir.path()) {
        let sessions = turnscope_store::SqliteStore::open(&db)
            .unwrap()
            .list_sessions()
            .unwrap();
        let [s] = &sessions[..] else {
            panic!("{name}: {} sessions", sessions.len())
        };
        let named = s.data_problems.iter().any(|p| p.contains(throws));
        assert_eq!(
            named,
            throws == SESSION_THROWS,
            "{name}: {:?}",
            s.data_problems
        );
    }
}

#[test]
fn an_export_keeps_a_blob_a_blob() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (name, db, throws, _)) in damaged_copies(dir.path()).into_iter().enumerate() {
        let json = dir.path().join(format!("export-{i}.json"));
        let out = turnscope_command()
            .env_remove("TURNSCOPE_DB")
            .arg("--db")
            .arg(&db)
            .args(["export", STUCK, "-o"])
            .arg(&json)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let rows = &doc["rows"];
        let blobs = rows["entries"]
            .as_array()
            .unwrap()
            .iter()
            .chain([&rows["session"]])
            .filter(|e| e["data"]["blob"].is_array())
            .count();
        assert_eq!(blobs, 1, "{name}: {rows}");
        // Opened again, the export is as damaged as its database.
        assert_unreadable(
            name,
            &turnscope_json(&json, None, &["show", STUCK, "--json"]),
            throws,
        );
    }
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn the_real_runtime_cannot_load_a_session_with_a_blob_row() {
    let rt = runtime("blob_rows");
    let dir = tempfile::tempdir().unwrap();
    for (name, db, throws, _) in damaged_copies(dir.path()) {
        // The pass writes nothing for it, as turnscope's plan says.
        let show = turnscope_json(&db, None, &["show", STUCK, "--json"]);
        assert_eq!(show["plan"]["writes"], Value::Array(vec![]), "{name}");
        assert_the_pass_throws(rt, name, &db, throws);
    }
}

/// A stuck submission row with one column in a storage class the runtime's row parser rejects:
/// its name, the SQL, whether the runtime's pass lists it (and so settles it as malformed), and
/// whether turnscope's `step` writes that settlement too (its writes are fenced on
/// `submission_id` and `attempt_id`, which it cannot match in a BLOB).
#[rustfmt::skip]
const ROW_DAMAGES: &[(&str, &str, bool, bool)] = &[
    ("payload", "payload = CAST(payload AS BLOB)", true, true),
    ("session_key", "session_key = CAST(session_key AS BLOB)", true, true),
    ("kind", "kind = CAST(kind AS BLOB)", true, true),
    ("attempt_count", "attempt_count = 'one'", true, true),
    ("attempt_id", "attempt_id = CAST(attempt_id AS BLOB)", true, false),
    ("status", "status = CAST(status AS BLOB)", false, false),
];

/// The fixture copied once per row damage: (column, copy, listed by the runtime, written by turnscope).
fn damaged_rows(dir: &Path) -> Vec<(&'static str, PathBuf, bool, bool)> {
    let db = unpack_fixture(dir, "tool-batch-mid");
    ROW_DAMAGES
        .iter()
        .map(|&(column, set, listed, written)| {
            let sql = format!("UPDATE flue_agent_submissions SET {set} WHERE submission_id = ?1");
            let copy = damaged_copy(&db, dir, &format!("row-{column}"), &sql);
            (column, copy, listed, written)
        })
        .collect()
}

/// The stuck row's status and error, and each checked column's storage class.
fn row_state(db: &Path) -> Vec<String> {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT status, error, typeof(payload), typeof(session_key), typeof(kind), \
             typeof(attempt_count), typeof(attempt_id), settled_at IS NULL FROM \
             flue_agent_submissions WHERE sequence = 2",
            [],
            |r| {
                (0..8)
                    .map(|i| r.get_ref(i).map(|v| format!("{v:?}")))
                    .collect()
            },
        )
        .unwrap()
}

#[test]
fn a_submission_column_in_another_storage_class_is_a_malformed_row() {
    let dir = tempfile::tempdir().unwrap();
    for (column, db, listed, written) in damaged_rows(dir.path()) {
        let show = turnscope_json(&db, None, &["show", STUCK, "--json"]);
        let plan = &show["plan"];
        let list = turnscope_json(&db, None, &["list", "--expired", "--json"]);
        let ids: Vec<&Value> = list["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["submission"]["submissionId"])
            .collect();
        assert_eq!(ids.len(), usize::from(listed), "{column}: {ids:?}");
        if listed {
            assert_eq!(
                plan["disposition"]["state"], "malformed",
                "{column}: {plan}"
            );
            assert!(
                plan["reason"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("{column} is stored as")),
                "{column}: {plan}"
            );
            assert_eq!(
                plan["writes"][0]["error"], "[flue] Persisted agent submission row is malformed.",
                "{column}"
            );
        } else {
            assert_eq!(
                plan["disposition"]["state"], "unknown_status",
                "{column}: {plan}"
            );
            assert_eq!(plan["writes"], Value::Array(vec![]), "{column}: {plan}");
        }
        let before = row_state(&db);
        let out = turnscope_as(&db, "t", &["--write", "step", STUCK, "-y"]);
        let after = row_state(&db);
        if written {
            assert!(
                out.status.success(),
                "{column}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                after[0], "Text([115, 101, 116, 116, 108, 101, 100])",
                "{column}: settled"
            );
        } else {
            assert!(!out.status.success(), "{column}");
            assert_eq!(after, before, "{column}: written");
        }
    }
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn the_real_runtime_settles_such_a_row_as_turnscope_says() {
    let rt = runtime("blob_rows");
    let dir = tempfile::tempdir().unwrap();
    for (column, db, listed, written) in damaged_rows(dir.path()) {
        let ours = dir.path().join(format!("ours-{column}.db"));
        std::fs::copy(&db, &ours).unwrap();
        turnscope_as(&ours, "t", &["--write", "step", STUCK, "-y"]);
        let ran = rt.drive("reconcile-once.mjs", &["--db".as_ref(), db.as_os_str()]);
        let settled = row_state(&db)[0] == "Text([115, 101, 116, 116, 108, 101, 100])";
        assert_eq!(settled, listed, "{column}: {ran}");
        if written {
            // The same row as the runtime's, its time aside.
            assert_eq!(row_state(&ours), row_state(&db), "{column}");
        }
    }
}

/// Turn journal rows the runtime's journal parser rejects: its reconciliation throws when it reads
/// the journal, before any rule (the fixture's deadline passed: rule 3 otherwise).
const JOURNAL_DAMAGES: &[(&str, &str)] = &[
    (
        "attempt_id as a BLOB",
        "attempt_id = CAST(attempt_id AS BLOB)",
    ),
    ("a phase the runtime does not write", "phase = 'paused'"),
    ("committed neither 0 nor 1", "committed = 2"),
];
const JOURNAL_THROWS: &str = "[flue] Persisted turn journal row is malformed.";

fn damaged_journals(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let db = unpack_fixture(dir, "tool-batch-mid");
    JOURNAL_DAMAGES
        .iter()
        .enumerate()
        .map(|(i, &(name, set))| {
            let sql = format!("UPDATE flue_agent_turn_journals SET {set} WHERE submission_id = ?1");
            let copy = damaged_copy(&db, dir, &format!("journal-{i}"), &sql);
            (name, copy)
        })
        .collect()
}

#[test]
fn a_journal_row_the_runtime_rejects_stops_every_rule_and_write() {
    let dir = tempfile::tempdir().unwrap();
    for (name, db) in damaged_journals(dir.path()) {
        assert_unreadable_by(
            name,
            &turnscope_json(&db, None, &["show", STUCK, "--json"]),
            JOURNAL_THROWS,
        );
        let before = std::fs::read(&db).unwrap();
        for action in [&["repair"][..], &["step"], &["fail", "--reason", "stuck"]] {
            let args = [&["--write"][..], action, &[STUCK, "-y"]].concat();
            let out = turnscope_as(&db, "t", &args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("refused"), "{name}: {action:?}: {err}");
        }
        assert!(std::fs::read(&db).unwrap() == before, "{name}: written");
    }
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn the_real_runtime_throws_on_such_a_journal_row() {
    let rt = runtime("blob_rows");
    let dir = tempfile::tempdir().unwrap();
    for (name, db) in damaged_journals(dir.path()) {
        assert_the_pass_throws(rt, name, &db, JOURNAL_THROWS);
    }
}

/// `export` of `db` (`--redact` with `redact`) written to `json`.
fn export_to(db: &Path, json: &Path, redact: bool) {
    let mut c = turnscope_command();
    c.env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .args(["export", STUCK]);
    if redact {
        c.arg("--redact");
    }
    let out = c.arg("-o").arg(json).output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        db.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_export_keeps_a_row_in_another_class_so_and_is_judged_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let rows = damaged_rows(dir.path())
        .into_iter()
        .map(|(column, db, ..)| (column, db));
    for (name, db) in rows.chain(damaged_journals(dir.path())) {
        let shown = turnscope_json(&db, None, &["show", STUCK, "--json"]);
        for redact in [false, true] {
            let json = dir
                .path()
                .join(format!("export-{}-{redact}.json", name.replace(' ', "-")));
            export_to(&db, &json, redact);
            // Before, the copy's row held each column as read (a BLOB payload as text): the
            // reopened export was planned as an intact row.
            let again = turnscope_json(&json, None, &["show", STUCK, "--json"]);
            for key in ["verdict", "plan"] {
                assert_eq!(again[key], shown[key], "{name} (redact {redact}): {key}");
            }
        }
    }
    // A redacted export of a payload stored as a BLOB keeps no word of the prompt, in the row
    // or in what it says of its storage.
    let (_, db, ..) = damaged_rows(dir.path())
        .into_iter()
        .find(|(c, ..)| *c == "payload")
        .unwrap();
    let payload: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT CAST(payload AS TEXT) FROM flue_agent_submissions WHERE submission_id = ?1",
            [STUCK],
            |r| r.get(0),
        )
        .unwrap();
    let task = serde_json::from_str::<Value>(&payload).unwrap()["input"]["task"]
        .as_str()
        .unwrap()
        .to_string();
    let (plain, redacted) = (dir.path().join("p.json"), dir.path().join("r.json"));
    export_to(&db, &plain, false);
    export_to(&db, &redacted, true);
    let stored = |p: &Path| {
        let doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let row = doc["rows"]["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["submission_id"] == STUCK)
            .cloned()
            .unwrap();
        let bytes: Vec<u8> = serde_json::from_value(row["storedAs"]["value"]["blob"].clone())
            .expect("the payload's bytes, as a BLOB");
        (
            row["storedAs"]["column"].clone(),
            String::from_utf8(bytes).unwrap(),
        )
    };
    let (column, bytes) = stored(&plain);
    assert_eq!(
        (column.as_str(), bytes.as_str()),
        (Some("payload"), payload.as_str())
    );
    let (_, bytes) = stored(&redacted);
    assert!(!bytes.contains(&task), "{bytes}");
    let text = std::fs::read_to_string(&redacted).unwrap();
    assert!(
        !text.contains(&task),
        "the redacted export holds the prompt"
    );
}
