//! beta.7's image chunks. The runtime stores each image of a user or tool result message as a
//! marker in the entry and its data in `flue_image_chunks` rows, and checks the two against each
//! other whenever it loads the session: one entry that does not match makes the load, and so the
//! reconciliation of every submission of the session, throw. turnscope did not read the rows and
//! planned such a submission as if its session loaded (measured: rule 3, where the real pass
//! throws). Each case is a copy of the `tool-batch-mid` fixture with images added, judged by
//! turnscope and by the real runtime's pass.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::blob_rows::{
    assert_every_write_refused, assert_listed_damaged, assert_the_pass_throws,
    assert_unreadable_by, the_pass,
};
use crate::runtime_kit::runtime;
use crate::support::{turnscope_command, turnscope_json, unpack_fixture};

/// The stuck submission of `tool-batch-mid`; its input is the entry at position 6.
const STUCK: &str = "74384fb4-aaac-4e01-9744-399d916c44d1";
const DO_NOT_MATCH: &str = "[flue] Persisted image chunks do not match persisted image markers.";
const MISSING: &str = "[flue] Persisted image chunks are missing or malformed.";
const ROW_MALFORMED: &str = "[flue] Persisted image chunk row is malformed.";

/// A marker for image `id` appended to the content of the tool result at position 4.
fn marker(id: &str) -> String {
    format!(
        "UPDATE flue_session_entries SET data = json_insert(data, '$.message.content[#]', \
         json('{{\"type\":\"image\",\"data\":\"__flue_image_chunks__:{id}\",\"mimeType\":\"image/png\"}}')) \
         WHERE entry_id = 'ce3b5daf'"
    )
}

/// A chunk row of image `id` owned by `entry`.
fn chunk(entry: &str, id: &str, index: &str, count: &str) -> String {
    format!(
        "INSERT INTO flue_image_chunks VALUES ('session_entry', (SELECT id FROM flue_sessions), \
         '{entry}', '{id}', {index}, {count}, 'iVBORw0KGgoAAAANSUhEUg==')"
    )
}

/// Each damage: its name, its SQL, the runtime's error, and whether the listing's walk (the path
/// from the leaf back to the input) sees it: rows are read whole, markers only on the path.
fn damages() -> Vec<(&'static str, Vec<String>, &'static str, bool)> {
    vec![
        (
            "a marker without its chunk rows",
            vec![marker("0")],
            DO_NOT_MATCH,
            false,
        ),
        (
            "one chunk row of two",
            vec![marker("0"), chunk("ce3b5daf", "0", "0", "2")],
            MISSING,
            true,
        ),
        (
            "a chunk index stored as text",
            vec![marker("0"), chunk("ce3b5daf", "0", "'x'", "1")],
            ROW_MALFORMED,
            true,
        ),
        (
            "chunk rows of an assistant message",
            vec![chunk("8dd456d7", "0", "0", "1")],
            DO_NOT_MATCH,
            true,
        ),
        (
            "one image's marker twice",
            vec![marker("0"), marker("0"), chunk("ce3b5daf", "0", "0", "1")],
            DO_NOT_MATCH,
            true,
        ),
    ]
}

/// The images the runtime writes: two markers, each with its complete chunk rows.
fn intact() -> Vec<String> {
    vec![
        marker("0"),
        marker("1"),
        chunk("ce3b5daf", "0", "0", "2"),
        chunk("ce3b5daf", "0", "1", "2"),
        chunk("ce3b5daf", "1", "0", "1"),
    ]
}

/// A copy of `db` in `dir` with `sql` run on it, each statement changing one row.
pub(crate) fn copy_with(db: &Path, dir: &Path, name: &str, sql: &[String]) -> PathBuf {
    let copy = dir.join(format!("{name}.db"));
    std::fs::copy(db, &copy).unwrap();
    let c = rusqlite::Connection::open(&copy).unwrap();
    for s in sql {
        assert_eq!(c.execute(s, []).unwrap(), 1, "{name}: {s}");
    }
    copy
}

/// The real pass on `db`, for the stuck submission: its disposition, error, and whether it wrote.
fn outcome(rt: &crate::runtime_kit::Runtime, db: &Path) -> (Value, Value, bool) {
    let state = the_pass(rt, db);
    let wrote = state["before"] != state["after"];
    (state["disposition"].clone(), state["error"].clone(), wrote)
}

fn show(db: &Path) -> Value {
    turnscope_json(db, None, &["show", STUCK, "--json"])
}

/// What a plan says the runtime does: verdict, disposition, rule and writes.
fn plan_of(show: &Value) -> Value {
    serde_json::json!([show["verdict"], show["plan"]])
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn a_session_whose_images_do_not_match_is_damaged_as_the_runtime_finds_it() {
    let rt = runtime("image_chunks");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    for (i, (name, sql, throws, walked)) in damages().into_iter().enumerate() {
        let copy = copy_with(&db, dir.path(), &format!("damage-{i}"), &sql);
        assert_unreadable_by(name, &show(&copy), throws);
        if walked {
            assert_listed_damaged(name, &copy);
        }
        assert_every_write_refused(name, &copy, throws);
        // The real pass throws that error on it, and writes nothing.
        assert_the_pass_throws(rt, name, &copy, throws);
    }
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn images_the_runtime_wrote_change_nothing() {
    let rt = runtime("image_chunks");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let with = copy_with(&db, dir.path(), "images", &intact());
    assert_eq!(plan_of(&show(&with)), plan_of(&show(&db)));
    let plain = dir.path().join("plain.db");
    std::fs::copy(&db, &plain).unwrap();
    let (d1, e1, w1) = outcome(rt, &with);
    let (d2, e2, w2) = outcome(rt, &plain);
    assert_eq!((&d1, &e1, w1), (&d2, &e2, w2));
    assert_ne!(d1, "threw", "{e1}");
}

#[test]
fn an_export_keeps_the_image_chunks_and_is_judged_as_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let cases = [("intact", intact()), ("damaged", damages().remove(1).1)];
    for (name, sql) in cases {
        let copy = copy_with(&db, dir.path(), name, &sql);
        // The images are a tool result's: `results` redacts them, `text` does not.
        for (rules, redact) in [
            (None, false),
            (Some("all"), true),
            (Some("results"), true),
            (Some("text"), false),
        ] {
            let json = dir.path().join(format!("{name}-{rules:?}.json"));
            let doc = export(&copy, STUCK, rules, &json);
            let chunks = doc["rows"]["imageChunks"].as_array().unwrap();
            assert_eq!(
                chunks.len(),
                sql.len() - sql.iter().filter(|s| s.starts_with("UPDATE")).count()
            );
            let data = chunks[0]["data"].as_str().unwrap();
            assert_eq!(
                data.starts_with("[redacted:"),
                redact,
                "{name}, {rules:?}: {data}"
            );
            assert_eq!(
                plan_of(&show(&json)),
                plan_of(&show(&copy)),
                "{name}, redacted: {rules:?}"
            );
        }
    }
}

/// `turnscope export ID -o JSON` of `db`, redacted by `rules`: the document written.
pub(crate) fn export(db: &Path, id: &str, rules: Option<&str>, json: &Path) -> Value {
    let mut cmd = turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .args(["export", id, "-o"])
        .arg(json);
    if let Some(rules) = rules {
        cmd.arg(format!("--redact={rules}"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// On PostgreSQL (the journal copied with `copy-to-postgres`'s conversion), every case is
/// planned as on SQLite: the chunk rows are read there too.
#[cfg(feature = "postgres")]
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn postgresql_reads_the_image_chunks_as_sqlite_does() {
    use crate::backends::{Kind, TestDb};
    use turnscope_store::DbTarget;
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    // PostgreSQL's typed columns hold no chunk index stored as text: that damage is SQLite's.
    let cases = damages()
        .into_iter()
        .filter(|(_, _, throws, _)| *throws != ROW_MALFORMED)
        .map(|(name, sql, ..)| (name, sql))
        .chain([("intact", intact())]);
    for (i, (name, sql)) in cases.enumerate() {
        let copy = copy_with(&db, dir.path(), &format!("pg-{i}"), &sql);
        let pg = TestDb::from_sqlite(Kind::Postgres, &copy);
        let DbTarget::Postgres(target) = &pg.target else {
            unreachable!()
        };
        let on_pg = turnscope_json(target.url(), None, &["show", STUCK, "--json"]);
        assert_eq!(plan_of(&on_pg), plan_of(&show(&copy)), "{name}");
    }
}
