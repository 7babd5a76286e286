//! Many submissions at once: the selection `list` and the bulk actions share (`--owner` among
//! the filters), and bulk actions over it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use turnscope_store::DbTarget;

use crate::backends::{kinds, TestDb};
use crate::support::turnscope_command;

/// A demo journal written at the real clock, so its leases stand as the demo meant them.
fn demo(dir: &Path) -> PathBuf {
    let db = dir.join("demo.db");
    turnscope_demo::write_demo(&db, turnscope_store::clock::now_ms()).unwrap();
    db
}

/// `--db`'s value for a test database (a PostgreSQL URL with its test credentials).
fn db_arg(db: &TestDb) -> String {
    match &db.target {
        DbTarget::Sqlite(p) | DbTarget::Export(p) => p.display().to_string(),
        #[cfg(feature = "postgres")]
        DbTarget::Postgres(t) => t.url(),
        #[cfg(not(feature = "postgres"))]
        DbTarget::Postgres(_) => unreachable!("no PostgreSQL without the feature"),
    }
}

fn cmd(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
    let mut c = turnscope_command();
    c.env_remove("TURNSCOPE_NOW_MS")
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_OPERATOR", "bulk@test")
        .arg("--db")
        .arg(db)
        .args(args);
    c
}

fn run(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    cmd(db, args).stdin(Stdio::null()).output().unwrap()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// The audit records of a database, newest first, from `turnscope audit --json`.
fn audit(db: impl AsRef<std::ffi::OsStr>) -> Vec<Value> {
    let o = run(db, &["audit", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    json_of(&o)["records"].as_array().unwrap().clone()
}

/// Entry ids a plan draws at random, replaced for snapshots (`leaf → 9f2c01ab`).
fn redact_new_ids(text: &str) -> String {
    regex::Regex::new(r"leaf → [0-9a-f]{8}")
        .unwrap()
        .replace_all(text, "leaf → [new entry]")
        .into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn listed(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Vec<Value> {
    let o = run(db, &[&["list", "--json"], args].concat());
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["submissions"].as_array().unwrap().clone()
}

fn owner(s: &Value) -> &str {
    s["submission"]["ownerId"].as_str().unwrap_or("")
}

#[test]
fn owner_selects_one_workers_submissions_by_a_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let db = db.as_path();
    let all = listed(db, &[]);
    let mut owners: Vec<&str> = all.iter().map(owner).collect();
    owners.sort_unstable();
    owners.dedup();
    assert!(
        owners.len() >= 2,
        "the demo's stuck rows have several owners"
    );
    for o in &owners {
        let expected = all.iter().filter(|s| owner(s) == *o).count();
        let by_prefix = listed(db, &["--owner", &o[..8]]);
        assert_eq!(by_prefix.len(), expected, "{o}");
        assert!(by_prefix.iter().all(|s| owner(s) == *o));
        assert_eq!(listed(db, &["--owner", o]).len(), expected);
    }
    // With the other filters: the intersection.
    let first = owners[0];
    let with_kind = listed(db, &["--owner", first, "--kind", "direct"]);
    assert!(with_kind
        .iter()
        .all(|s| owner(s) == first && s["submission"]["kind"] == "direct"));
    // An owner nobody has selects nothing.
    assert!(listed(db, &["--owner", "no-such-worker"]).is_empty());
    // A prefix two owners share is a usage error naming them (the demo's ids are fixed: two of
    // its workers' ids start with the same character).
    let (a, b) = owners
        .iter()
        .flat_map(|a| owners.iter().map(move |b| (*a, *b)))
        .find(|(a, b)| a < b && a[..1] == b[..1])
        .expect("two demo workers share a first character");
    let o = run(db, &["list", "--owner", &a[..1]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: --owner") && err.contains(a) && err.contains(b),
        "{err}"
    );
    assert!(err.lines().nth(1).unwrap().starts_with("hint: "), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    // As JSON too: nothing of the list document is written (it is streamed item by item), only
    // the error's own document.
    let o = run(db, &["list", "--json", "--owner", &a[..1]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "turnscope.error/1");
    assert!(
        doc["error"].as_str().unwrap().starts_with("--owner"),
        "{doc}"
    );
}

/// What each item of a bulk document ended as, by submission id.
fn outcomes(doc: &Value) -> Vec<(String, String)> {
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["submissionId"].as_str().unwrap().to_string(),
                i["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Several ids, and `--all` with filters, on SQLite and (with TURNSCOPE_TEST_PG) PostgreSQL:
/// one batch id on every audit row of the batch, the refused ones written to not at all.
#[test]
fn bulk_on_ids_and_on_a_filtered_selection_on_every_backend() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let db = TestDb::from_sqlite(kind, &demo(dir.path()));
        let url = db_arg(&db);
        // --all with a filter: only the unresolved tool batches, each repaired.
        let unresolved = listed(&url, &["--verdict", "tool_use_unresolved"]);
        assert_eq!(unresolved.len(), 2, "{kind:?}");
        let o = run(
            &url,
            &[
                "--write",
                "repair",
                "--ack-side-effects",
                "--all",
                "--verdict",
                "tool_use_unresolved",
                "-y",
                "--json",
            ],
        );
        assert!(o.status.success(), "{kind:?}: {}", stderr(&o));
        let doc = json_of(&o);
        assert_eq!(doc["schema"], "turnscope.bulk/1");
        assert_eq!(doc["counts"]["applied"], 2, "{kind:?}: {doc:#}");
        let batch = doc["batch"].as_str().unwrap().to_string();
        let records = audit(&url);
        assert_eq!(records.len(), 2, "{kind:?}");
        assert!(
            records.iter().all(|r| r["batch"] == batch.as_str()),
            "{kind:?}: {records:#?}"
        );
        let mut audited: Vec<&str> = records
            .iter()
            .map(|r| r["submission_id"].as_str().unwrap())
            .collect();
        let mut selected: Vec<&str> = unresolved
            .iter()
            .map(|s| s["submission"]["submissionId"].as_str().unwrap())
            .collect();
        audited.sort_unstable();
        selected.sort_unstable();
        assert_eq!(audited, selected, "{kind:?}");
        // Repaired, they no longer have an unresolved batch: the same selection is empty now.
        assert!(listed(&url, &["--verdict", "tool_use_unresolved"]).is_empty());

        // Several ids (prefixes, one given twice): one batch over exactly those.
        let past = listed(&url, &["--verdict", "advanced_past_input"]);
        assert_eq!(past.len(), 2, "{kind:?}");
        let ids: Vec<String> = past
            .iter()
            .map(|s| {
                s["submission"]["submissionId"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let (a, b) = (&ids[0][..8], &ids[1][..8]);
        let o = run(
            &url,
            &[
                "--write",
                "fail",
                a,
                b,
                a,
                "--reason",
                "provider outage",
                "-y",
                "--json",
            ],
        );
        assert!(o.status.success(), "{kind:?}: {}", stderr(&o));
        let doc = json_of(&o);
        assert_eq!(
            outcomes(&doc),
            vec![
                (ids[0].clone(), "applied".to_string()),
                (ids[1].clone(), "applied".to_string())
            ],
            "{kind:?}"
        );
        let second = doc["batch"].as_str().unwrap();
        assert_ne!(second, batch, "a batch id per bulk apply");
        let records = audit(&url);
        assert_eq!(records.len(), 4, "{kind:?}");
        let of_second: Vec<&Value> = records.iter().filter(|r| r["batch"] == second).collect();
        assert_eq!(of_second.len(), 2, "{kind:?}");
        assert!(of_second
            .iter()
            .all(|r| r["action"] == "fail" && r["reason"] == "provider outage"));
    }
}

/// A refusal does not stop the batch: the others are applied, the exit status is 3, and the
/// summary names the reasons.
#[test]
fn a_partly_refused_batch_applies_the_rest_and_exits_3() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let db = TestDb::from_sqlite(kind, &demo(dir.path()));
        let url = db_arg(&db);
        let o = run(
            &url,
            &["--write", "repair", "--ack-side-effects", "--all", "-y"],
        );
        assert_eq!(o.status.code(), Some(3), "{kind:?}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let summary = text
            .lines()
            .find(|l| l.starts_with("applied "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            summary.starts_with("applied 4, nothing to write 1, refused 17 (batch b"),
            "{summary}"
        );
        assert!(
            text.contains("refused at the preview (listed above):"),
            "{text}"
        );
        assert!(
            text.contains("  4 · no unresolved tool batch: the history is resume/input_only"),
            "{text}"
        );
        let err = stderr(&o);
        assert!(
            err.starts_with("error: 17 submission(s) of the batch were refused"),
            "{err}"
        );
        assert_eq!(
            audit(&url).len(),
            4,
            "{kind:?}: the four writes, and only them"
        );
    }
}

/// `fail --all` fails the direct prompts too, whose terminal events reach their streams'
/// subscribers: the preview says, before any question, that the batch cannot be undone and
/// which of its rows are why. Nothing to write is never counted as refused.
#[test]
fn a_bulk_preview_names_the_rows_that_cannot_be_undone() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let direct: Vec<String> = listed(&db, &["--kind", "direct"])
        .iter()
        .filter(|r| r["plan"]["rule"] != 1 && r["plan"]["rule"] != 7)
        .map(|r| r["submission"]["submissionId"].as_str().unwrap()[..8].to_string())
        .collect();
    assert!(direct.len() >= 2, "{direct:?}");
    let o = run(&db, &["fail", "--all", "--reason", "outage", "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let warning = text
        .lines()
        .find(|l| l.starts_with("warning: cannot be undone as a batch: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning.contains(&format!(
            "{} of 17 writes append a direct prompt's terminal event",
            direct.len()
        )),
        "{warning}"
    );
    for id in &direct {
        assert!(warning.contains(id.as_str()), "{id}: {warning}");
    }
    assert!(
        text.find(warning).unwrap() < text.find("dry run: nothing written.").unwrap(),
        "{text}"
    );
    // The same warning in the JSON document.
    let o = run(
        &db,
        &["fail", "--all", "--reason", "outage", "--dry-run", "--json"],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["cannotUndo"]
            .as_str()
            .map(|w| format!("warning: {w}"))
            .as_deref(),
        Some(warning)
    );
    // Without a direct prompt among the writes: nothing to say.
    let o = run(
        &db,
        &[
            "fail",
            "--all",
            "--kind",
            "dispatch",
            "--reason",
            "x",
            "--dry-run",
        ],
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("cannot be undone"));
    // Rule 5's nothing to write is its own count, never refused.
    let o = run(&db, &["reconcile", "--all", "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("\nnothing to write: 7\n"), "{text}");
    assert!(!text.contains("refused"), "{text}");
    assert_eq!(o.status.code(), Some(0), "{text}");
}

/// `step` on rule 5 (the attempt replacement is the runtime's) has nothing to write, as
/// `reconcile` says, with the same exit status 0; the runtime plan marks nothing as the step's.
#[test]
fn step_and_reconcile_agree_on_rule_5() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let rows = listed(&db, &["--verdict", "resume/stream_continuation"]);
    let id = rows[0]["submission"]["submissionId"].as_str().unwrap();
    assert_eq!(rows[0]["plan"]["rule"], 5);
    let step = run(&db, &["--write", "step", "--ack-side-effects", id, "-y"]);
    let reconcile = run(
        &db,
        &["--write", "reconcile", "--ack-side-effects", id, "-y"],
    );
    for o in [&step, &reconcile] {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    }
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let (step, reconcile) = (text(&step), text(&reconcile));
    let said = "rule 5 → replacement: nothing for turnscope to write; left to the runtime: replace the attempt";
    assert!(
        step.contains(said) && reconcile.contains(said),
        "{step}\n{reconcile}"
    );
    assert!(step.ends_with("nothing written.\n"), "{step}");
    assert!(!step.contains('▶'), "{step}");
    assert!(audit(&db).is_empty());
}

#[test]
fn the_grouped_preview_of_a_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let o = run(&db, &["repair", "--all", "--dry-run"]);
    // A dry run with refusals says so in its exit status too.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    insta::assert_snapshot!(
        "bulk_repair_all_dry_run",
        redact_new_ids(&String::from_utf8_lossy(&o.stdout))
    );
    assert!(audit(&db).is_empty());
    // Capped groups: at most 20 ids each, then "and N more" (the scale data's settled rows,
    // every one refused: only running submissions are recovered).
    let scale = dir.path().join("scale.db");
    let opts =
        turnscope_bench::scale::ScaleOptions::scaled(0.002, turnscope_store::clock::now_ms());
    turnscope_bench::scale::write_scale(&scale, &opts).unwrap();
    let o = run(
        &scale,
        &["repair", "--all", "--status", "settled", "--dry-run"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let heading =
        regex::Regex::new(r"^  (\d+) · the submission is settled \(completed\), not running$")
            .unwrap();
    let (at, count) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            heading
                .captures(l)
                .map(|c| (i, c[1].parse::<usize>().unwrap()))
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(count > 20, "{text}");
    assert!(lines[at + 1].starts_with("    instead: "), "{text}");
    let ids = lines[at + 2..]
        .iter()
        .take_while(|l| l.starts_with("    ") && !l.starts_with("    and "))
        .count();
    assert_eq!(ids, 20, "{text}");
    assert_eq!(
        lines[at + 2 + 20],
        format!("    and {} more", count - 20),
        "{text}"
    );
}

#[test]
fn the_bulk_json_document() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let o = run(
        &db,
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "--all",
            "--verdict",
            "tool_use_unresolved",
            "--rate",
            "50/s",
            "-y",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json_of(&o);
    assert!(doc["batch"].as_str().unwrap().starts_with('b'));
    assert_eq!(doc["rate"], 50.0, "--rate is parsed and applied");
    // Turn ids are ULIDs of the demo's clock.
    let text = regex::Regex::new(r"turn_[0-9A-Z]{26}")
        .unwrap()
        .replace_all(&doc.to_string(), "turn_[ulid]")
        .into_owned();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["batch"] = "[batch]".into();
    doc["now"] = "[now]".into();
    doc["database"] = "[database]".into();
    for item in doc["items"].as_array_mut().unwrap() {
        assert!(item["applied"]["lockHeldMs"].as_f64().unwrap() >= 0.0);
        item["applied"]["lockHeldMs"] = "[ms]".into();
        let summary = redact_new_ids(item["summary"].as_str().unwrap());
        item["summary"] = summary.into();
    }
    insta::assert_json_snapshot!("bulk_repair_json", doc);
}

#[test]
fn usage_errors_of_a_bulk() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let expect_usage = |args: &[&str], needle: &str| {
        let o = run(&db, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    expect_usage(
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "--all",
            "--rate",
            "0/s",
            "-y",
        ],
        "out of range",
    );
    expect_usage(
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "--all",
            "--rate",
            "fast",
            "-y",
        ],
        "not a rate",
    );
    expect_usage(
        &["--write", "repair", "--ack-side-effects", "-y"],
        "<SUBMISSIONS>",
    );
    expect_usage(
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "abc",
            "--all",
            "-y",
        ],
        "cannot be used with",
    );
    expect_usage(
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "abc",
            "--verdict",
            "completed",
            "-y",
        ],
        "--verdict completed selects with --all",
    );
    expect_usage(&["repair", "--all"], "read-only by default");
    expect_usage(&["--write", "fail", "--all", "-y"], "fail needs a reason");
    // Off a terminal without -y: refused before anything is written, whatever stdin says.
    let o = cmd(&db, &["--write", "extend", "--all", "--attempts", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(b"22\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to write without an explicit yes"));
    assert!(audit(&db).is_empty());
    // An id that names nothing stops the batch before its preview.
    let o = run(
        &db,
        &[
            "--write",
            "repair",
            "--ack-side-effects",
            "no-such-id",
            "also-not",
            "-y",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

/// The command line `script` runs in a pseudo-terminal.
fn script_line(db: &Path, args: &[&str]) -> String {
    std::iter::once(env!("CARGO_BIN_EXE_turnscope").to_string())
        .chain(["--db".into(), db.display().to_string()])
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run in a pseudo-terminal (util-linux `script`); `before_answer` runs once the prompt is on
/// the screen, then `answer` is typed.
fn at_terminal(db: &Path, args: &[&str], answer: &str, before_answer: &dyn Fn()) -> (i32, String) {
    let mut child = Command::new("script")
        .args(["-qec", &script_line(db, args), "/dev/null"])
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "bulk@test")
        .env(
            "XDG_CONFIG_HOME",
            crate::support::fixtures_dir().join("no-config-here"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs the terminal tests");
    let mut screen = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    // Read until the question is asked (or the program ends without asking).
    while !String::from_utf8_lossy(&screen).contains("apply these writes") {
        match stdout.read(&mut byte) {
            Ok(1) => screen.push(byte[0]),
            _ => break,
        }
    }
    // The question ends with ": " or "] "; wait for it whole.
    while !(screen.ends_with(b": ") || screen.ends_with(b"] ")) {
        match stdout.read(&mut byte) {
            Ok(1) => screen.push(byte[0]),
            _ => break,
        }
    }
    before_answer();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).unwrap();
    drop(stdin);
    stdout.read_to_end(&mut screen).unwrap();
    let status = child.wait().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&screen).into_owned(),
    )
}

#[test]
fn one_question_for_the_batch_and_the_count_typed_from_ten() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let nothing = &|| {};
    // 4 writes: y/N, No by default.
    let repair = ["--write", "repair", "--ack-side-effects", "--all"];
    let (code, screen) = at_terminal(&db, &repair, "\n", nothing);
    assert_eq!(code, 5, "{screen}");
    assert!(
        screen.contains("apply these writes to 4 submissions? [y/N]"),
        "{screen}"
    );
    assert!(screen.contains("declined: nothing written"), "{screen}");
    assert!(
        screen.contains("hint: answer y at the prompt to apply, or add -y"),
        "{screen}"
    );
    assert!(audit(&db).is_empty());
    // Beside --json the question goes to stderr and the document says it was declined.
    let json_repair = ["--write", "repair", "--ack-side-effects", "--all", "--json"];
    let (code, screen) = at_terminal(&db, &json_repair, "n\n", nothing);
    assert_eq!(code, 5, "{screen}");
    let start = screen.find("{\r\n").expect("a JSON document");
    let end = screen.rfind('}').unwrap() + 1;
    let doc: Value = serde_json::from_str(&screen[start..end]).expect("the JSON document");
    assert_eq!(doc["declined"], true);
    assert_eq!(doc["batch"], Value::Null);
    assert!(doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["outcome"] != "applied"));
    assert!(audit(&db).is_empty());
    // 22 writes: `y` is not enough, the count is.
    let extend = ["--write", "extend", "--all", "--attempts", "2"];
    let (code, screen) = at_terminal(&db, &extend, "y\n", nothing);
    assert_eq!(code, 5, "{screen}");
    assert!(
        screen.contains("apply these writes to 22 submissions? type 22 to confirm"),
        "{screen}"
    );
    assert!(audit(&db).is_empty());
    let (code, screen) = at_terminal(&db, &extend, "21\n", nothing);
    assert_eq!(code, 5, "{screen}");
    // The hint says what the prompt takes: the count, not `y`.
    assert!(
        screen.contains("hint: type 22 at the prompt to apply, or add -y"),
        "{screen}"
    );
    assert!(audit(&db).is_empty());
    let (code, screen) = at_terminal(&db, &extend, "22\n", nothing);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("applied 22, nothing to write 0, refused 0"),
        "{screen}"
    );
    assert_eq!(audit(&db).len(), 22);
}

/// A submission that changes between the preview and its write is refused by its fence (the
/// summary names it); the rest of the batch is applied, and is in the database: the outside
/// writer here closes its connection while turnscope waits at the prompt, which deleted the WAL
/// under turnscope's writer (and lost its commits) when looking at the `--db` file closed a
/// descriptor of it and so dropped SQLite's locks.
#[test]
fn a_change_since_the_preview_refuses_that_one_and_the_batch_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let targets = listed(&db, &["--verdict", "tool_use_unresolved"]);
    let changed = targets[0]["submission"]["submissionId"]
        .as_str()
        .unwrap()
        .to_string();
    let worker_claims_it = || {
        // A worker claims it while the operator reads the preview.
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE flue_agent_submissions SET lease_expires_at = lease_expires_at + 1 WHERE submission_id = ?1",
                [&changed],
            )
            .unwrap();
    };
    let args = [
        "--write",
        "repair",
        "--ack-side-effects",
        "--all",
        "--verdict",
        "tool_use_unresolved",
    ];
    let (code, screen) = at_terminal(&db, &args, "y\n", &worker_claims_it);
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("applied 1, nothing to write 0, refused 1"),
        "{screen}"
    );
    assert!(screen.contains("not applied at the write:"), "{screen}");
    assert!(
        screen.contains("changed since the preview (nothing written)"),
        "{screen}"
    );
    assert!(screen.contains(&changed), "{screen}");
    let records = audit(&db);
    assert_eq!(records.len(), 1, "{screen}");
    assert_ne!(records[0]["submission_id"], changed.as_str());
}

/// Bars are drawn on stderr at a terminal only: nothing in a pipe, nothing beside --json.
#[test]
fn progress_bars_only_at_a_terminal_and_never_beside_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let extend = ["--write", "extend", "--all", "--attempts", "2", "-y"];
    let o = run(&db, &extend);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "a pipe gets no bar: {:?}", stderr(&o));
    let (code, screen) = at_terminal(&db, &extend, "", &|| {});
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("extend [") && screen.contains("22/22"),
        "{screen}"
    );
    // The pre-write integrity check's spinner (cleared once the check is done).
    assert!(
        screen.contains("checking the database before writing"),
        "{screen}"
    );
    let mut json_run = extend.to_vec();
    json_run.push("--json");
    let (code, screen) = at_terminal(&db, &json_run, "", &|| {});
    assert_eq!(code, 0, "{screen}");
    assert!(
        !screen.contains("22/22") && !screen.contains("checking the database"),
        "no bar beside JSON: {screen}"
    );
    // The live-runtime warning goes to stderr beside the document; the document is whole.
    let start = screen.find("{\r\n").expect("a JSON document");
    let doc: Value = serde_json::from_str(screen[start..].trim()).expect("the JSON document");
    assert_eq!(doc["counts"]["applied"], 22);
}

/// copy-to-postgres: a bar per table at a terminal, nothing in a pipe (PostgreSQL only).
#[cfg(feature = "postgres")]
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_copy_to_postgres_draws_bars_only_at_a_terminal() {
    use crate::backends::{fresh_pg_database, pg_admin};
    let admin = pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let src = demo(dir.path());
    let src = src.to_str().unwrap();
    let (piped, _piped_db) = fresh_pg_database(&admin);
    let url = piped.url();
    let o = run(&url, &["--write", "copy-to-postgres", src]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "a pipe gets no bar: {}", stderr(&o));
    let (watched, _watched_db) = fresh_pg_database(&admin);
    let url = watched.url();
    let (code, screen) = at_terminal(
        Path::new(&url),
        &["--write", "copy-to-postgres", src],
        "",
        &|| {},
    );
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("copying flue_session_entries ["),
        "{screen}"
    );
    assert!(screen.contains("copied "), "{screen}");
}

#[test]
fn the_man_page_and_help_describe_bulk_actions() {
    let man = turnscope_command().arg("man").output().unwrap();
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(man.contains(".SH \"BULK ACTIONS\""), "{man}");
    assert!(
        man.contains("turnscope.bulk/1") && man.contains("\\-\\-rate N/s"),
        "{man}"
    );
    for action in ["repair", "requeue", "fail", "step", "reconcile", "extend"] {
        let help = turnscope_command()
            .args([action, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        for flag in [
            "--all",
            "--rate",
            "--owner",
            "--verdict",
            "--older-than",
            "--limit",
        ] {
            assert!(help.contains(flag), "{action} --help lacks {flag}");
        }
    }
}
