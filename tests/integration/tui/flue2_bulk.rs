//! The 2.x TUI's marks and bulk writes (`--write` only), headless (`Flue2Harness`), against the
//! CLI's bulk apply on a copy of the same journal: space marks rows, `X` previews them grouped as
//! `turnscope --write abort ID ID --dry-run` groups them, `A` writes one fenced, audited
//! transaction per submission under one batch id, and the rows and audit records equal what the
//! CLI's bulk writes (the write times and the batch id aside); read-only has neither marks nor
//! write keys; the incidents screen's space marks a worker's submissions as `incidents --json`
//! groups them; from 10 writes on the count must be typed first.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::support::{flue2_submission_rows, turnscope_as, unpack_db};

const OPERATOR: &str = "tui-test@host";

fn open(db: &Path, now: i64, write: bool) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = 200;
    o.height = 50;
    o.read_only = !write;
    o.operator = OPERATOR.into();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

/// `turnscope --db DB ARGS` at the real clock (writes plan there), as the TUI's operator.
fn cli(db: &Path, args: &[&str]) -> std::process::Output {
    turnscope_as(db, OPERATOR, args)
}

/// Every row, every column as text, the columns an action stamps with the write's clock
/// (`abort_requested_at`, `timeout_at`) said only as set or not.
fn rows(db: &Path) -> Vec<Vec<String>> {
    flue2_submission_rows(db, &["abort_requested_at", "timeout_at"])
}

/// An audit record: action, operator, submission, reason, batch.
type Record = (String, String, String, Option<String>, Option<String>);

/// The audit records, in order.
fn audit(db: &Path) -> Vec<Record> {
    let c = Connection::open(db).unwrap();
    let Ok(mut s) = c.prepare(
        "SELECT action, operator, submission_id, reason, batch_id FROM turnscope_audit ORDER BY id",
    ) else {
        return Vec::new();
    };
    s.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The audit records with the batch id said only as one batch or none.
fn audit_without_batch(db: &Path) -> Vec<(String, String, String, Option<String>, bool)> {
    audit(db)
        .into_iter()
        .map(|(a, o, s, r, b)| (a, o, s, r, b.is_some()))
        .collect()
}

/// Space on each shown row whose id is in `ids` (space steps down, `j` passes the others).
fn mark(h: &mut Flue2Harness, ids: &[String]) {
    h.press("g");
    for id in h.app.shown_ids() {
        h.press(if ids.contains(&id) { "<Space>" } else { "j" });
    }
}

#[test]
fn marked_rows_preview_as_the_cli_bulk_groups_them_and_apply_what_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cli")).unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let twin = unpack_db("flue-2.1.0", "tool-batch-1-of-3", &dir.path().join("cli"));
    let now = super::flue2::after_last_lease(&db);
    let mut h = open(&db, now, true);
    assert!(h.render().contains("space mark"), "the footer says it");
    h.press("?");
    assert!(h.render().contains("mark or unmark the row"));
    h.press("<Esc>2");
    let all = h.app.shown_ids();
    assert_eq!(all.len(), 3, "{all:?}");
    // The settled row (refused by abort) and the running one, marked from the bottom up: the
    // targets are in list order whatever order they were marked in.
    let settled = all[0].clone();
    let running = all[1].clone();
    h.press("G");
    h.press("k<Space>");
    assert_eq!(h.app.marked(), std::slice::from_ref(&running));
    h.press("gg<Space>");
    assert_eq!(h.app.marked(), [settled.clone(), running.clone()]);
    let screen = h.render();
    assert!(screen.contains("●"), "the mark column: {screen}");
    // The selection's cost since the inputs: the two rows' COST figures as list --json has them.
    let listed =
        crate::support::turnscope_json(&db, Some(now), &["list", "--status", "all", "--json"]);
    let total: f64 = listed["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == settled.as_str() || r["id"] == running.as_str())
        .map(|r| {
            r["cost"]["total"]["cost"]
                .as_f64()
                .expect("a conversation's cost")
        })
        .sum();
    assert!(
        h.app
            .status_text()
            .unwrap()
            .contains(&format!("2 marked · ${total:.4}")),
        "{:?}",
        h.app.status_text()
    );
    // Marks survive a refresh (and a view that hides one of them says so).
    h.advance_to(now + 1000);
    assert_eq!(h.app.marked(), [settled.clone(), running.clone()]);
    h.press("1");
    assert!(
        h.render().contains("2 marked, 1 outside the expired view"),
        "{}",
        h.render()
    );
    // u unmarks all; marking again.
    h.press("u");
    assert!(h.app.marked().is_empty());
    h.press("2");
    mark(&mut h, &[settled.clone(), running.clone()]);
    assert_eq!(h.app.marked(), [settled.clone(), running.clone()]);
    // An opened submission's X is its own, marks or not (the one-submission flow).
    h.press("gj<Enter>");
    assert_eq!(h.app.opened(), Some(running.as_str()));
    h.press("X");
    assert_eq!(h.app.write_popup().unwrap().0, format!("Abort {running}"));
    h.press("<Esc><Esc>");
    assert!(h.app.opened().is_none() && h.app.write_popup().is_none());
    assert_eq!(h.app.marked().len(), 2);

    h.press("X");
    let (title, body) = h.app.write_popup().expect("the bulk preview");
    assert_eq!(title, "Abort 2 submissions", "{body:?}");
    assert!(
        body[0].starts_with("abort on 2 submissions (2 marked), each planned at the real clock"),
        "{body:?}"
    );
    // The groups and refusals, line for line, as the CLI's bulk preview prints them.
    let dry = cli(
        &twin,
        &["--write", "abort", &settled, &running, "--dry-run"],
    );
    let text = String::from_utf8_lossy(&dry.stdout);
    let cli_groups: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("abort on 2 submissions"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(cli_groups.len() >= 4, "{text}");
    assert_eq!(body[1..=cli_groups.len()], cli_groups[..], "{text}");
    // And as its document: the planned one under its columns and next pass, the refused one.
    let doc: Value = serde_json::from_slice(
        &cli(
            &twin,
            &[
                "--write",
                "abort",
                &settled,
                &running,
                "--dry-run",
                "--json",
            ],
        )
        .stdout,
    )
    .unwrap();
    for i in doc["items"].as_array().unwrap() {
        let id = i["submissionId"].as_str().unwrap();
        let line = match i["outcome"].as_str().unwrap() {
            "planned" => format!("    {id}  ({})", i["before"].as_str().unwrap()),
            _ => format!("    {id}: {}", i["refused"]["reason"].as_str().unwrap()),
        };
        assert!(body.contains(&line), "{line} in {body:?}");
    }
    assert!(body
        .iter()
        .any(|l| l == "  1 refused (nothing written to them):"));
    assert!(body.join("\n").contains("[ No ]"), "No selected: {body:?}");
    assert!(
        !body.join("\n").contains("type "),
        "under 10: no count typed"
    );

    // ⏎ on No writes nothing; A applies.
    let before = rows(&db);
    h.press("<Enter>");
    assert!(h.app.write_popup().is_none());
    assert_eq!(
        h.app.status_text().as_deref(),
        Some("declined: nothing written")
    );
    assert_eq!(rows(&db), before);
    h.press("XA");
    let (title, body) = h.app.write_popup().expect("the result");
    assert_eq!(title, "Abort of 2 submissions: 1 applied", "{body:?}");
    let recs = audit(&db);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let batch = recs[0].4.clone().expect("a batch id");
    let text = body.join("\n");
    assert!(text.contains(&format!("batch {batch}")), "{text}");
    assert!(
        text.contains(&format!("  {running}: applied · audit #")),
        "{text}"
    );
    assert!(
        text.contains(&format!("  {settled}: refused, nothing written: ")),
        "{text}"
    );
    assert!(
        text.contains(&format!("turnscope --write undo {batch}")),
        "{text}"
    );
    // The marks it went through are done with.
    assert!(h.app.marked().is_empty());

    // The CLI's bulk on the twin: the same rows, the same audit records (batch ids aside).
    let o = cli(
        &twin,
        &["--write", "abort", &settled, &running, "-y", "--json"],
    );
    assert_eq!(o.status.code(), Some(3), "one refused");
    assert_eq!(rows(&db), rows(&twin));
    assert_eq!(audit_without_batch(&db), audit_without_batch(&twin));

    // `u` on the result asks to undo the batch (as the audit trail's U).
    h.press("u");
    let (title, _) = h.app.undo_popup().expect("the undo's reason");
    assert!(title.contains(&batch), "{title}");
    h.press("<Enter>");
    let (_, lines) = h.app.undo_popup().expect("the undo's preview");
    assert!(lines.join("\n").contains("abort_requested_at"), "{lines:?}");
    h.press("A");
    assert!(h.app.undo_popup().unwrap().0.contains("applied"));
    assert_eq!(rows(&db), before);
}

#[test]
fn read_only_has_no_marks_and_no_write_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = super::flue2::after_last_lease(&db);
    let mut h = open(&db, now, false);
    h.press("2<Space><Space>u");
    assert!(h.app.marked().is_empty());
    h.press("XQEF");
    assert!(h.app.write_popup().is_none());
    let screen = h.render();
    assert!(
        !screen.contains("●") && !screen.contains("mark"),
        "{screen}"
    );
    h.press("*V");
    assert!(h.app.marked().is_empty(), "no * or V in read-only");
    h.press("I<Space>X");
    assert!(h.app.marked().is_empty());
    assert!(h.app.write_popup().is_none());
    h.press("<Esc>?");
    assert!(!h.render().contains("mark or unmark"));
    assert!(audit(&db).is_empty());
}

#[test]
fn star_marks_every_row_shown_and_v_the_range_from_the_last_marked() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let mut h = open(&db, NOW_MS, true);
    // `*` in the expired view, narrowed by a query: exactly the rows shown.
    h.press("/dispatch<Enter>");
    let shown = h.app.shown_ids();
    assert!(shown.len() >= 5 && shown.len() < 400, "{}", shown.len());
    h.press("*");
    let mut marked = h.app.marked();
    marked.sort();
    let mut want = shown.clone();
    want.sort();
    assert_eq!(marked, want);
    assert!(
        h.app
            .status_text()
            .unwrap()
            .starts_with(&format!("marked {} more: every row shown", shown.len())),
        "{:?}",
        h.app.status_text()
    );
    // V before any space: says how, marks nothing.
    h.press("u<Esc>");
    h.press("V");
    assert!(h.app.marked().is_empty());
    assert!(h.app.status_text().unwrap().contains("space first"));
    // Space on the 3rd row (the anchor), then V on the 7th: rows 3 to 7.
    let all = h.app.shown_ids();
    h.press("gjj<Space>jjjV");
    assert_eq!(h.app.marked(), all[2..=6].to_vec());
    // And back up: V from the 7th (the new anchor) to the 2nd adds the 2nd only.
    h.press("kkkkkV");
    assert_eq!(h.app.marked(), all[1..=6].to_vec());
}

/// The expired submissions of a generated journal (the `flue2` profile) at its clock, by worker,
/// as `incidents --json` groups them.
fn incident_groups(db: &Path, now: i64) -> Vec<Vec<String>> {
    let doc: Value = serde_json::from_slice(&crate::support::turnscope_ok(
        db,
        Some(now),
        &["incidents", "--json"],
    ))
    .unwrap();
    doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

const NOW_MS: i64 = 1_780_000_000_000;

#[test]
fn incidents_space_marks_each_workers_submissions_and_ten_writes_need_the_count_typed() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let groups = incident_groups(&db, NOW_MS);
    let stuck: usize = groups.iter().map(Vec::len).sum();
    assert!(stuck >= 10, "{groups:?}");
    let mut h = open(&db, NOW_MS, true);
    h.press("I");
    assert_eq!(h.app.screen_name(), Some("Incidents"));
    // Space marks the first worker's submissions, steps to the next; again unmarks only that one.
    h.press("<Space>");
    let mut want = groups[0].clone();
    want.sort();
    let mut got = h.app.marked();
    got.sort();
    assert_eq!(got, want);
    assert!(h.render().contains("●"));
    // Every group marked: every stuck submission.
    for _ in 1..groups.len() {
        h.press("<Space>");
    }
    let mut want: Vec<String> = groups.concat();
    want.sort();
    let mut got = h.app.marked();
    got.sort();
    assert_eq!(got, want);
    h.press("g<Space>");
    assert_eq!(
        h.app.marked().len(),
        stuck - groups[0].len(),
        "unmarked the first"
    );
    h.press("g<Space>");
    assert_eq!(h.app.marked().len(), stuck);

    // X on the marks: requeue would refuse live ones; abort plans each stuck one.
    let before = rows(&db);
    h.press("X");
    let (title, body) = h.app.write_popup().expect("the bulk preview");
    assert_eq!(title, format!("Abort {stuck} submissions"), "{body:?}");
    let writes: usize = body
        .iter()
        .filter_map(|l| {
            l.strip_prefix("  ")?
                .split_once(" to write ")?
                .0
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert!(writes >= 10, "{body:?}");
    let text = body.join("\n");
    assert!(
        text.contains(&format!("type {writes} to apply them all: [")),
        "{text}"
    );
    // A without the count: nothing written, the popup says what it needs.
    h.press("A");
    let (_, body) = h.app.write_popup().expect("still the preview");
    assert!(
        body.last().unwrap().contains(&format!("type {writes}")),
        "{body:?}"
    );
    assert_eq!(rows(&db), before);
    // A wrong count, then the right one.
    h.press("1<BS>");
    h.press(&format!("{}A", writes + 1));
    assert_eq!(rows(&db), before, "a wrong count writes nothing");
    for _ in 0..6 {
        h.press("<BS>");
    }
    h.press(&format!("{writes}A"));
    let (title, body) = h.app.write_popup().expect("the result");
    assert_eq!(
        title,
        format!("Abort of {stuck} submissions: {writes} applied"),
        "{body:?}"
    );
    let recs = audit(&db);
    assert_eq!(recs.len(), writes);
    let batch = recs[0].4.clone().unwrap();
    assert!(recs
        .iter()
        .all(|r| r.0 == "abort" && r.1 == OPERATOR && r.4.as_deref() == Some(&batch)));
    assert!(h.app.status_text().unwrap().contains(&batch));
}

#[test]
fn incidents_write_keys_without_marks_act_on_the_selected_workers_submissions() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::support::generated_flue2_journal(dir.path(), NOW_MS);
    let groups = incident_groups(&db, NOW_MS);
    let Some(n) = groups.iter().position(|g| (2..10).contains(&g.len())) else {
        panic!("no worker with 2 to 9 stuck submissions: {groups:?}");
    };
    let mut h = open(&db, NOW_MS, true);
    h.press("I");
    for _ in 0..n {
        h.press("j");
    }
    h.press("E");
    let (title, body) = h.app.write_popup().expect("the bulk preview");
    assert_eq!(title, format!("Extend {} submissions", groups[n].len()));
    assert!(body[0].contains("(every submission of "), "{body:?}");
    for id in &groups[n] {
        assert!(
            body.iter().any(|l| l.starts_with(&format!("    {id}"))),
            "{id}: {body:?}"
        );
    }
    h.press("<Esc>");
    assert!(audit(&db).is_empty());
}

#[test]
fn w_switches_to_write_mode_in_place_after_asking_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = super::flue2::after_last_lease(&db);
    let mut h = open(&db, now, false);
    assert!(h.render().contains("READ-ONLY"));
    h.press("2X<Space>");
    assert!(h.app.write_popup().is_none() && h.app.marked().is_empty());
    // Asked first, No selected: ⏎ keeps read-only.
    h.press("w");
    let (title, body) = h.app.write_popup().expect("asked");
    assert_eq!(title, "Write mode");
    assert!(body.iter().any(|l| l.contains(OPERATOR)), "{body:?}");
    h.press("<Enter>");
    assert!(h.app.write_popup().is_none());
    assert_eq!(h.app.status_text().as_deref(), Some("still read-only"));
    assert!(h.render().contains("READ-ONLY"));
    // A: the journal opened for writes, the write keys and marks on.
    h.press("wA");
    assert!(
        h.app.status_text().unwrap().starts_with("write mode as"),
        "{:?}",
        h.app.status_text()
    );
    assert!(h.render().contains(" WRITE "));
    h.press("g<Space>");
    assert_eq!(h.app.marked().len(), 1);
    h.press("uX");
    assert!(h.app.write_popup().is_some(), "X previews in write mode");
    h.press("<Esc>");
    // w again: read-only, the marks gone; nothing was written.
    h.press("<Space>w");
    assert!(h.app.marked().is_empty());
    assert!(h.render().contains("READ-ONLY"));
    h.press("X");
    assert!(h.app.write_popup().is_none());
    assert!(audit(&db).is_empty());
    // An export is never written: w says so and asks nothing.
    let export = dir.path().join("export.json");
    crate::support::turnscope_ok(
        &db,
        Some(now),
        &[
            "export",
            &h.app.shown_ids()[0],
            "-o",
            export.to_str().unwrap(),
        ],
    );
    let mut e = open(&export, now, false);
    e.press("w");
    assert!(e.app.write_popup().is_none());
    assert!(
        e.app
            .status_text()
            .unwrap()
            .contains("an export is read-only"),
        "{:?}",
        e.app.status_text()
    );
}
