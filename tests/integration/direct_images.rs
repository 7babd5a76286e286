//! beta.7's images of a direct prompt. The runtime stores each as a marker in the row's payload
//! (`{"type":"image","data":"__flue_image_chunks__:0",…}`) and its data in `flue_image_chunks`
//! rows owned by the submission, and its row parser reads those rows with every row, before its
//! own checks (`parseSubmission(row, chunks)`): a row of another type fails any row, a direct
//! prompt's markers must name each stored image once, and the payload check reads the images
//! once hydrated. A row that does not parse is settled failed with the error thrown. turnscope
//! did not read these rows and planned a completed settlement where the pass settles the prompt
//! failed. Each case is a copy of a fixture the real runtime wrote, judged by turnscope and by
//! the real pass, then reconciled by turnscope on another copy.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::image_chunks::{copy_with, export};
use crate::runtime_kit::runtime;
use crate::support::status_and_error;
use crate::support::{turnscope_as, turnscope_json, unpack_fixture};

/// The direct prompt of `completed-before-settle-direct` (committed, not settled).
const DIRECT: &str = "797e37e6-31a2-4849-b850-68065255a559";
/// The dispatch of `tool-batch-mid`.
const DISPATCH: &str = "74384fb4-aaac-4e01-9744-399d916c44d1";

const DO_NOT_MATCH: &str = "[flue] Persisted image chunks do not match persisted image markers.";
const MISSING: &str = "[flue] Persisted image chunks are missing or malformed.";
const ROW_MALFORMED: &str = "[flue] Persisted image chunk row is malformed.";
const PAYLOAD: &str = "[flue] Persisted agent submission payload is malformed.";

/// The direct prompt's payload with `images` (JSON) as its inner payload's images.
fn images(json: &str) -> String {
    format!(
        "UPDATE flue_agent_submissions SET payload = json_set(payload, '$.payload.images', json('{json}'))"
    )
}

const ONE_MARKER: &str =
    r#"[{"type":"image","data":"__flue_image_chunks__:0","mimeType":"image/png"}]"#;

/// A chunk row of image 0 owned by submission `id` (part `part`), its data the SQL `data`.
fn chunk(id: &str, part: &str, index: &str, count: &str, data: &str) -> String {
    format!("INSERT INTO flue_image_chunks VALUES ('submission', '{id}', '{part}', '0', {index}, {count}, {data})")
}

fn own(index: &str, count: &str) -> String {
    chunk(DIRECT, "", index, count, "'iVBORw0K'")
}

/// Image 0 in two rows whose data is 14 MiB less two UTF-16 units, then `tail` (SQL text).
fn at_the_limit(tail: &str) -> Vec<String> {
    vec![
        images(ONE_MARKER),
        chunk(DIRECT, "", "0", "2", "hex(zeroblob(7340031))"),
        chunk(DIRECT, "", "1", "2", tail),
    ]
}

struct Case {
    name: &'static str,
    fixture: &'static str,
    id: &'static str,
    sql: Vec<String>,
    /// The error the runtime settles the row with; `None`: it parses.
    throws: Option<&'static str>,
}

fn case(name: &'static str, sql: Vec<String>, throws: Option<&'static str>) -> Case {
    Case {
        name,
        fixture: "completed-before-settle-direct",
        id: DIRECT,
        sql,
        throws,
    }
}

/// Each checked against the real pass while it was written.
fn cases() -> Vec<Case> {
    vec![
        case(
            "a marker without its rows",
            vec![images(ONE_MARKER)],
            Some(DO_NOT_MATCH),
        ),
        case(
            "a marker with its rows",
            vec![images(ONE_MARKER), own("0", "2"), own("1", "2")],
            None,
        ),
        case(
            "one row of two",
            vec![images(ONE_MARKER), own("0", "2")],
            Some(MISSING),
        ),
        case(
            "rows without a marker",
            vec![own("0", "2"), own("1", "2")],
            Some(DO_NOT_MATCH),
        ),
        case(
            "a chunk index stored as text",
            vec![images(ONE_MARKER), own("0", "2"), own("'x'", "2")],
            Some(ROW_MALFORMED),
        ),
        case(
            "a row of another part, never read",
            vec![chunk(DIRECT, "x", "'x'", "2", "'a'")],
            None,
        ),
        case(
            "images that are a number",
            vec![images("5")],
            Some("blocks.map is not a function"),
        ),
        case(
            "images that are null",
            vec![images("null")],
            Some("Cannot read properties of null (reading 'map')"),
        ),
        case(
            "an image without its mimeType",
            vec![
                images(r#"[{"type":"image","data":"__flue_image_chunks__:0"}]"#),
                own("0", "2"),
                own("1", "2"),
            ],
            Some(PAYLOAD),
        ),
        // Infinity to JSON.parse: read without converting it, not a reason to give up.
        case(
            "an image that is a number out of range",
            vec![
                "UPDATE flue_agent_submissions SET payload = replace(payload, '\"payload\":{', '\"payload\":{\"images\":[1e400],')".into(),
            ],
            Some(PAYLOAD),
        ),
        case("an image of 14 MiB", at_the_limit("'ab'"), None),
        case("an image over 14 MiB", at_the_limit("'abc'"), Some(PAYLOAD)),
        // Six bytes, two UTF-16 units: over the limit in bytes, not in JavaScript's length.
        case(
            "an image of 14 MiB ending in €€",
            at_the_limit("'€€'"),
            None,
        ),
        case(
            "an image over 14 MiB ending in an emoji",
            at_the_limit("'😀a'"),
            Some(PAYLOAD),
        ),
        Case {
            name: "a dispatch's own row of another type",
            fixture: "tool-batch-mid",
            id: DISPATCH,
            sql: vec![chunk(DISPATCH, "", "'x'", "1", "'a'")],
            throws: Some(ROW_MALFORMED),
        },
    ]
}

fn show(db: &Path, id: &str) -> Value {
    turnscope_json(db, None, &["show", id, "--json"])
}

/// The row of `id` in `list --expired --json` on `db`.
fn listed(db: impl AsRef<std::ffi::OsStr>, id: &str) -> Value {
    let list = turnscope_json(db, None, &["list", "--expired", "--json"]);
    list["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["submission"]["submissionId"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {list}"))
        .clone()
}

fn plan_of(show: &Value) -> Value {
    serde_json::json!([show["verdict"], show["plan"]])
}

/// The fixtures, once each, with the case's copies in `dir`.
fn copies(dir: &Path) -> Vec<(Case, PathBuf, PathBuf)> {
    let mut base = std::collections::HashMap::new();
    cases()
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let fixture = base
                .entry(c.fixture)
                .or_insert_with(|| unpack_fixture(dir, c.fixture))
                .clone();
            let copy = copy_with(&fixture, dir, &format!("case-{i}"), &c.sql);
            (c, copy, fixture)
        })
        .collect()
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn a_direct_prompt_s_images_are_checked_as_the_runtime_s_row_parser_checks_them() {
    let rt = runtime("direct_images");
    let dir = tempfile::tempdir().unwrap();
    for (c, copy, fixture) in copies(dir.path()) {
        let name = c.name;
        let plan = show(&copy, c.id);
        let by_runtime = dir.path().join(format!("{name}-runtime.db"));
        std::fs::copy(&copy, &by_runtime).unwrap();
        rt.drive(
            "reconcile-once.mjs",
            &["--db".as_ref(), by_runtime.as_os_str()],
        );
        let (status, error) = status_and_error(&by_runtime, c.id);
        match c.throws {
            Some(throws) => {
                assert_eq!(
                    (status.as_str(), error.as_deref()),
                    ("settled", Some(throws)),
                    "{name}: the real pass"
                );
                assert_eq!(
                    plan["plan"]["disposition"]["state"], "malformed",
                    "{name}: {plan}"
                );
                assert_eq!(plan["plan"]["writes"][0]["error"], throws, "{name}: {plan}");
                // The listing reads the rows too (a page of rows, not one by id).
                assert_eq!(listed(&copy, c.id)["plan"], plan["plan"], "{name}: listed");
                // turnscope's reconcile writes what the pass wrote.
                let out = turnscope_as(&copy, "t", &["--write", "reconcile", c.id, "-y"]);
                assert!(
                    out.status.success(),
                    "{name}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    status_and_error(&copy, c.id),
                    (status, error),
                    "{name}: turnscope's write"
                );
            }
            None => {
                // Planned as without the images, and the pass does as planned.
                assert_eq!(plan_of(&plan), plan_of(&show(&fixture, c.id)), "{name}");
                let plain = dir.path().join(format!("{name}-plain.db"));
                std::fs::copy(&fixture, &plain).unwrap();
                rt.drive("reconcile-once.mjs", &["--db".as_ref(), plain.as_os_str()]);
                assert_eq!(
                    (status, error),
                    status_and_error(&plain, c.id),
                    "{name}: the real pass"
                );
            }
        }
    }
}

/// An export carries the submission's own rows, so the copy is judged as its journal; `text`
/// redacts their data (a prompt's images are the user's), `results` does not.
#[test]
fn an_export_keeps_a_direct_prompt_s_image_rows() {
    let dir = tempfile::tempdir().unwrap();
    for (c, copy, _) in copies(dir.path())
        .into_iter()
        .filter(|(c, ..)| ["a marker with its rows", "rows without a marker"].contains(&c.name))
    {
        for (rules, redact) in [
            (None, false),
            (Some("text"), true),
            (Some("results"), false),
        ] {
            let json = dir.path().join(format!("{}-{rules:?}.json", c.name));
            let doc = export(&copy, DIRECT, rules, &json);
            let chunks = doc["rows"]["imageChunks"].as_array().unwrap();
            assert_eq!(chunks.len(), 2, "{}: {chunks:?}", c.name);
            assert_eq!(chunks[0]["ownerKind"], "submission");
            let data = chunks[0]["data"].as_str().unwrap();
            assert_eq!(data.starts_with("[redacted:"), redact, "{rules:?}: {data}");
            assert_eq!(
                plan_of(&show(&json, DIRECT)),
                plan_of(&show(&copy, DIRECT)),
                "{rules:?}"
            );
        }
    }
}

/// On PostgreSQL (`copy-to-postgres`'s conversion) every case is planned as on SQLite. Its typed
/// columns hold no index stored as text: those cases are SQLite's.
#[cfg(feature = "postgres")]
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn postgresql_reads_a_direct_prompt_s_image_rows_as_sqlite_does() {
    use crate::backends::{Kind, TestDb};
    use turnscope_store::DbTarget;
    let dir = tempfile::tempdir().unwrap();
    for (c, copy, _) in copies(dir.path())
        .into_iter()
        .filter(|(c, ..)| !c.sql.iter().any(|s| s.contains("'x'")))
    {
        let pg = TestDb::from_sqlite(Kind::Postgres, &copy);
        let DbTarget::Postgres(target) = &pg.target else {
            unreachable!()
        };
        let on_pg = turnscope_json(target.url(), None, &["show", c.id, "--json"]);
        assert_eq!(plan_of(&on_pg), plan_of(&show(&copy, c.id)), "{}", c.name);
        assert_eq!(
            listed(target.url(), c.id)["plan"],
            listed(&copy, c.id)["plan"],
            "{}: listed",
            c.name
        );
    }
}
