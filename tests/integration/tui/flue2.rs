//! The TUI on flue 2.x journals, headless (`Flue2Harness`), on every 2.1.0 crash fixture: the
//! header names the format and the classifier applied (`--flue-version` changes it), the list
//! shows every submission with the classification and NEXT `turnscope list --json` prints at the
//! same clock (expired leases by default, as `list`), and a submission's detail highlights
//! exactly the trailing batch the runtime's own classification names
//! (`NAME.classification.json`), with its recorded-but-uncommitted outcomes. A beta.7 journal's
//! header names beta.7.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::flue2::list::ListRow;
use turnscope_tui::flue2::PARTIAL_MARK;
use turnscope_tui::harness::{Harness, HarnessOptions};
use turnscope_tui::Theme;

use crate::support::{db_fixture_names, fixtures_dir, unpack_db, unpack_fixture};

/// A second after the last lease of the journal ended: every running row's lease has expired.
pub(super) fn after_last_lease(db: &Path) -> i64 {
    let conn = Connection::open(db).unwrap();
    let last: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(lease_expires_at), 0) FROM flue_agent_submissions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    last + 1000
}

/// [`open`] at 2.1.0 in write mode, as an operator the audit rows name.
fn open_write(db: &Path, now: i64, (w, h): (u16, u16)) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = w;
    o.height = h;
    o.read_only = false;
    o.operator = "tui-test@host".into();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

pub(super) fn open(db: &Path, release: &str, now: i64, (w, h): (u16, u16)) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = w;
    o.height = h;
    o.display_name = db.file_name().unwrap().to_string_lossy().into_owned();
    Flue2Harness::open(db, Flue2Options::for_release(release, 0).unwrap(), o).unwrap()
}

/// A row of the TUI's list says what `list --json`'s submission `c` says: its id, verdict and NEXT.
pub(super) fn assert_row_as_listed(row: &ListRow, c: &Value, name: &str) {
    assert_eq!(row.id, c["id"].as_str().unwrap(), "{name}");
    assert_eq!(
        row.verdict,
        c["verdict"]["label"].as_str().unwrap(),
        "{name}"
    );
    assert_eq!(row.next, c["plan"]["column"].as_str().unwrap(), "{name}");
}

/// `turnscope list --json ARGS` at `now`, through the binary.
pub(super) fn cli_list(db: &Path, now: i64, args: &[&str]) -> Value {
    let args: Vec<&str> = ["list"]
        .iter()
        .chain(args)
        .chain(&["--json"])
        .copied()
        .collect();
    crate::support::turnscope_json(db, Some(now), &args)
}

/// The calls of the trailing partial batch the runtime's own classification names.
pub(super) fn batch_calls(want: &Value) -> Vec<&str> {
    want["trailingPartialToolBatch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect()
}

pub(super) fn runtime_answer(name: &str) -> Value {
    let path = fixtures_dir()
        .join("flue-2.1.0")
        .join(format!("{name}.classification.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_header_names_the_2_x_format_and_the_classifier_applied() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    for (release, variant) in [
        ("2.1.0", "2.0.8"),
        ("2.0.0", "2.0.0"),
        ("2.0.3", "2.0.0"),
        ("2.0.5", "2.0.5"),
    ] {
        let mut h = open(&db, release, now, (160, 30));
        let screen = h.render();
        let header = screen.lines().next().unwrap();
        assert!(
            header.contains("tool-batch-1-of-3.db")
                && header.contains("READ-ONLY")
                && header.contains(&format!(
                    "flue 2.x (format_version 1) · classifier: flue {release} (variant {variant})"
                )),
            "{release}: {header}"
        );
        // Narrow: still the format and the rules, shorter.
        h.resize(80, 24);
        let screen = h.render();
        let header = screen.lines().next().unwrap();
        assert!(
            header.contains(&format!("flue 2.x · rules {release} ({variant})")),
            "{release} at 80 columns: {header}"
        );
    }
}

#[test]
fn a_beta7_journals_header_names_beta7() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-batch-mid");
    let mut o = HarnessOptions::new(crate::tui::NOW);
    o.width = 120;
    let mut h = Harness::open(&db, o).unwrap();
    let screen = h.render();
    let header = screen.lines().next().unwrap();
    assert!(header.contains("READ-ONLY  flue 1.0.0-beta.7"), "{header}");
    assert!(!screen.contains("flue 2.x"), "{screen}");
}

#[test]
fn the_list_shows_every_submission_with_the_cli_classification_and_next() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        // At the last lease's end and a second after it: the views and NEXT change there.
        for now in [after_last_lease(&db) - 1000, after_last_lease(&db)] {
            let mut h = open(&db, "2.1.0", now, (200, 40));
            // Expired leases first, as `turnscope list` with no flag.
            let expired = cli_list(&db, now, &[]);
            let want: Vec<&str> = expired["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap())
                .collect();
            assert_eq!(h.app.view_name(), "expired", "{name}");
            assert_eq!(h.app.shown_ids(), want, "{name} at {now}: expired view");
            // Every submission, each with the CLI's verdict and NEXT.
            h.press("2");
            let all = cli_list(&db, now, &["--status", "all"]);
            let rows = h.app.shown_rows();
            let cli = all["submissions"].as_array().unwrap();
            assert_eq!(rows.len(), cli.len(), "{name}");
            let screen = h.render();
            for (row, c) in rows.iter().zip(cli) {
                assert_row_as_listed(row, c, &name);
                assert_eq!(row.status, c["status"].as_str().unwrap(), "{name}");
                // And drawn so, on one line.
                let line = screen
                    .lines()
                    .find(|l| l.contains(&row.id))
                    .unwrap_or_else(|| panic!("{name}: {} not drawn:\n{screen}", row.id));
                assert!(
                    line.contains(&row.verdict) && line.trim_end().ends_with(&row.next),
                    "{name}: {line}"
                );
                checked += 1;
            }
        }
    }
    // 19 submissions over the 15 fixtures, at two clocks.
    assert_eq!(checked, 38);
}

/// The first frame is the rows, before any stream is folded: the view's rows drawn with their
/// columns and `…` where the verdict, NEXT and cost go, the status line saying they are being
/// classified; the list read after it fills them in as `list --json` has them.
#[test]
fn the_first_frame_draws_the_rows_before_their_streams_are_folded() {
    let dir = tempfile::tempdir().unwrap();
    let now = 1_780_000_000_000;
    let db = crate::support::generated_flue2_journal(dir.path(), now);
    let mut o = HarnessOptions::new(now);
    o.width = 200;
    o.height = 60;
    let options = Flue2Options::for_release("2.1.0", 0).unwrap();
    let mut h = Flue2Harness::open_first_frame(&db, options, o).unwrap();
    let expired = cli_list(&db, now, &[]);
    let want = expired["submissions"].as_array().unwrap();
    assert!(want.len() > 5, "{} expired", want.len());
    let ids: Vec<&str> = want.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(h.app.shown_ids(), ids);
    let screen = h.render();
    assert!(!screen.contains("reading…"), "{screen}");
    assert!(screen.contains("classifying them"), "{screen}");
    let rows = h.app.shown_rows();
    for (row, c) in rows.iter().zip(want) {
        assert_eq!(row.status, c["status"].as_str().unwrap());
        assert_eq!((row.verdict.as_str(), row.next.as_str()), ("…", "…"));
    }
    let first = screen.lines().find(|l| l.contains(ids[0])).unwrap();
    assert!(first.contains('…'), "{first}");
    // The list read after it: every row as `list --json` has it.
    h.settle();
    let screen = h.render();
    assert!(!screen.contains("classifying them"), "{screen}");
    let rows = h.app.shown_rows();
    assert_eq!(rows.len(), want.len());
    for (row, c) in rows.iter().zip(want) {
        assert_row_as_listed(row, c, "generated");
    }
    // Another view: its rows outside the last one wait for its list as the first frame's did,
    // the others keep their cells.
    h.press_unanswered("2");
    let screen = h.render();
    assert!(screen.contains("classifying them"), "{screen}");
    let expired: Vec<&str> = ids.clone();
    let waiting = h.app.shown_rows();
    assert!(waiting.len() > want.len());
    for row in &waiting {
        let was_shown = expired.contains(&row.id.as_str());
        assert_eq!(
            row.verdict == "…",
            !was_shown,
            "{}: {}",
            row.id,
            row.verdict
        );
    }
    h.settle();
    let screen = h.render();
    assert!(!screen.contains("classifying them"), "{screen}");
    let all = cli_list(&db, now, &["--status", "all"]);
    let all = all["submissions"].as_array().unwrap();
    let rows = h.app.shown_rows();
    assert_eq!(rows.len(), all.len());
    for (row, c) in rows.iter().zip(all) {
        assert_row_as_listed(row, c, "generated, all");
    }
}

/// The call ids on the detail's highlighted call lines, and every highlighted line's text.
fn highlighted(h: &Flue2Harness) -> (Vec<String>, Vec<String>) {
    let lines: Vec<String> = h
        .app
        .detail_text()
        .into_iter()
        .filter(|(_, partial)| *partial)
        .map(|(t, _)| t)
        .collect();
    let calls = lines
        .iter()
        .filter_map(|l| l.split("call     ").nth(1))
        .map(|rest| rest.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    (calls, lines)
}

#[test]
fn every_detail_highlights_exactly_the_trailing_batch_the_runtime_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut batches = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = after_last_lease(&db);
        let want = runtime_answer(&name);
        let mut h = open(&db, "2.1.0", now, (200, 60));
        h.press("2");
        for (n, sub) in want["submissions"].as_array().unwrap().iter().enumerate() {
            let id = sub["submissionId"].as_str().unwrap();
            let at = h.app.shown_ids().iter().position(|i| i == id).unwrap();
            h.press(&format!("g{}<Enter>", "j".repeat(at)));
            assert_eq!(h.app.opened(), Some(id), "{name} #{n}");
            let (calls, lines) = highlighted(&h);
            let batch: Vec<String> = sub["trailingPartialToolBatch"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            assert_eq!(calls, batch, "{name} {id}: {lines:#?}");
            if batch.is_empty() {
                assert!(lines.is_empty(), "{name} {id}: {lines:#?}");
            } else {
                batches += 1;
                // The assistant that owns the batch, its calls, the summary line: nothing else.
                let owners = lines.iter().filter(|l| l.contains("assistant  ")).count();
                assert_eq!(owners, 1, "{name} {id}: {lines:#?}");
                assert!(
                    lines.last().unwrap().contains("TRAILING UNCOMMITTED BATCH"),
                    "{lines:#?}"
                );
                assert_eq!(lines.len(), batch.len() + 2, "{name} {id}: {lines:#?}");
            }
            // Recorded but not committed: the runtime's uncommitted outcomes of the conversation.
            let text: Vec<String> = h.app.detail_text().into_iter().map(|(t, _)| t).collect();
            let mut recorded: Vec<String> = text
                .iter()
                .filter_map(|l| l.split("recorded, not committed: outcome of ").nth(1))
                .map(|r| r.split_whitespace().next().unwrap().to_string())
                .collect();
            recorded.sort();
            let mut want_recorded: Vec<String> = sub["uncommittedToolOutcomes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            want_recorded.sort();
            assert_eq!(recorded, want_recorded, "{name} {id}");
            // In-progress messages: one line each, as the runtime's ghosts.
            let ghosts = text
                .iter()
                .filter(|l| l.contains("in progress message"))
                .count();
            assert_eq!(
                ghosts,
                sub["ghost"].as_array().map_or(0, Vec::len),
                "{name} {id}"
            );
            h.press("<Esc>");
            assert_eq!(h.app.opened(), None);
        }
    }
    assert!(batches >= 5, "{batches}");
}

#[test]
fn tool_batch_1_of_3_is_drawn_with_the_batch_marked_as_beta7_marks_its_partial_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let want = &runtime_answer("tool-batch-1-of-3")["submissions"][1];
    let id = want["submissionId"].as_str().unwrap();
    let mut h = open(&db, "2.1.0", now, (200, 60));
    // The default view (expired leases) holds the crashed submission alone.
    assert_eq!(h.app.shown_ids(), [id]);
    h.press("<Enter>");
    let screen = h.render();
    assert!(
        screen.contains("classification  step") && screen.contains("tool_use_unresolved"),
        "{screen}"
    );
    assert!(
        screen.contains("next            step 6 (replace)"),
        "{screen}"
    );
    assert!(screen.contains("resume"), "{screen}");
    // Every row whose gutter is the mark is in the partial style, and they are the batch's.
    let buf = h.buffer();
    let partial = Theme::default().partial();
    let mut marked = Vec::new();
    for (y, line) in screen.lines().enumerate() {
        if line.starts_with(PARTIAL_MARK) {
            let cell = &buf[(0, y as u16)];
            assert_eq!(cell.fg, partial.fg.unwrap(), "{line}");
            marked.push(line.to_string());
        }
    }
    let calls = batch_calls(want);
    assert_eq!(marked.len(), calls.len() + 2, "{marked:#?}");
    for c in &calls {
        assert!(marked.iter().any(|l| l.contains(c)), "{c}: {marked:#?}");
    }
    // The one recorded outcome is said recorded, the other two have none.
    let recorded = want["uncommittedToolOutcomes"][0].as_str().unwrap();
    let line_of = |c: &str| {
        marked
            .iter()
            .find(|l| l.contains("call") && l.contains(c))
            .unwrap()
            .clone()
    };
    assert!(line_of(recorded).contains("→ recorded, not committed"));
    for c in calls.iter().filter(|c| **c != recorded) {
        assert!(line_of(c).contains("→ no outcome"), "{}", line_of(c));
    }
}

#[test]
fn keys_search_views_and_no_write_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let mut h = open(&db, "2.1.0", now, (200, 30));
    h.press("2");
    let all = h.app.shown_ids();
    assert_eq!(all.len(), 3);
    // `/` keeps the rows whose cells contain the text.
    h.press("/queued<Enter>");
    assert_eq!(h.app.shown_ids().len(), 1, "{}", h.render());
    assert!(h.render().contains("/queued"));
    h.press("<Esc>");
    assert_eq!(h.app.shown_ids(), all);
    // 3 queued, 4 running, 6 settled: one row each.
    for (key, status) in [("3", "queued"), ("4", "running"), ("6", "settled")] {
        h.press(key);
        let rows = h.app.shown_rows();
        assert_eq!(rows.len(), 1, "{status}");
        assert_eq!(rows[0].status, status);
    }
    // The write keys are absent: R does nothing; a beta.7 key with no 2.x screen (tab, the
    // next pane) says why.
    h.press("2R");
    assert_eq!(h.app.opened(), None);
    assert_eq!(h.app.status_text(), None);
    h.press("<Tab>");
    assert!(
        h.app
            .status_text()
            .is_some_and(|s| s.contains("does not read flue 2.x journals yet")),
        "{:?}",
        h.app.status_text()
    );
    // The detail scrolls: on a short screen the batch is below the fold until G.
    h.resize(100, 16);
    h.press("4<Enter>");
    assert!(h.app.opened().is_some());
    assert!(!h.render().contains("TRAILING UNCOMMITTED BATCH"));
    h.press("G");
    let bottom = h.render();
    assert!(bottom.contains("TRAILING UNCOMMITTED BATCH"), "{bottom}");
    h.press("g");
    assert!(h.render().contains("submission sub_"));
    h.press("<Esc>2");
    // y copies the selected id; ? opens the help, whose moving keys scroll it and any other
    // key closes it; q quits.
    h.press("gy");
    assert_eq!(h.copied, [all[0].clone()]);
    h.press("?");
    assert!(h.app.help_open());
    assert!(h.render().contains("read-only"));
    h.press("j");
    assert!(h.app.help_open());
    h.press("x");
    assert!(!h.app.help_open());
    h.press("q");
    assert!(h.app.quit_requested());
}

/// The help taller than the terminal scrolls (j/k, pages, g/G) and says which lines it shows;
/// while it is open no other key acts (a write key closes it and opens nothing); q quits from it.
#[test]
fn the_help_scrolls_when_it_is_taller_than_the_terminal_and_takes_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let mut h = open_write(&db, now, (100, 16));
    h.press("?");
    let top = h.render();
    assert!(top.contains("write mode"), "{top}");
    assert!(
        top.contains("j/k scroll") && top.contains(" 1–14 of "),
        "{top}"
    );
    let last = "marks the trailing uncommitted tool batch";
    assert!(!top.contains(last), "{top}");
    h.press("G");
    let bottom = h.render();
    assert!(bottom.contains(last), "{bottom}");
    assert!(!bottom.contains("write mode"), "{bottom}");
    // Past the end is clamped: one k shows one line more above.
    h.press("jjjk");
    let up_one = h.render();
    assert!(!up_one.contains(last), "{up_one}");
    h.press("g");
    assert_eq!(h.render(), top);
    h.press("j");
    let down_one = h.render();
    assert!(
        down_one.contains(" 2–15 of ") && !down_one.contains("write mode"),
        "{down_one}"
    );
    h.press("<PgDn><PgUp>");
    assert_eq!(h.render(), down_one);
    // A write key closes the help and opens nothing.
    h.press("X");
    assert!(!h.app.help_open());
    assert!(h.app.write_popup().is_none());
    h.press("?q");
    assert!(h.app.quit_requested());
}

/// A 2.x export (`turnscope export ID`) opens in the same screens, in memory: the same rows,
/// classifications and NEXT as the journal it came from, the same detail.
#[test]
fn a_2_x_export_opens_as_the_journal_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let id = runtime_answer("tool-batch-1-of-3")["submissions"][1]["submissionId"]
        .as_str()
        .unwrap()
        .to_string();
    let export = dir.path().join("export.json");
    let out = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(&db)
        .args(["export", &id, "-o"])
        .arg(&export)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut from_db = open(&db, "2.1.0", now, (200, 60));
    let mut from_export = open(&export, "2.1.0", now, (200, 60));
    from_db.press("2");
    from_export.press("2");
    assert_eq!(from_export.app.shown_rows(), from_db.app.shown_rows());
    assert_eq!(from_export.app.shown_rows().len(), 3);
    let at = from_db
        .app
        .shown_ids()
        .iter()
        .position(|i| *i == id)
        .unwrap();
    let keys = format!("g{}<Enter>", "j".repeat(at));
    from_db.press(&keys);
    from_export.press(&keys);
    assert_eq!(from_export.app.detail_text(), from_db.app.detail_text());
    assert!(from_export
        .app
        .detail_text()
        .iter()
        .any(|(l, partial)| *partial && l.contains("TRAILING UNCOMMITTED BATCH")));
}

/// The row's columns an action writes, as text.
fn action_columns(db: &Path, id: &str) -> String {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT status, abort_requested_at, timeout_at, max_attempts, error, settlement_record_id \
             FROM flue_agent_submissions WHERE submission_id = ?1",
            [id],
            |r| {
                Ok(format!(
                    "{:?}",
                    (
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<String>>(5)?
                    )
                ))
            },
        )
        .unwrap()
}

fn audit_of(db: &Path) -> Vec<(String, String, Option<String>)> {
    let conn = Connection::open(db).unwrap();
    let Ok(mut stmt) =
        conn.prepare("SELECT action, operator, reason FROM turnscope_audit ORDER BY id")
    else {
        return Vec::new();
    };
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `--write` on a 2.x journal: `X` previews the abort (the exact column, the runtime's next pass
/// on the row after it: step 3) with No selected; ⏎ on No writes nothing; `A` applies it, audited
/// under the operator; `F` asks why, then previews the reserved failed settlement. Read-only,
/// the keys do nothing and the help does not list them.
#[test]
fn write_mode_previews_applies_and_audits_each_action_and_read_only_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let id = "sub_01M92S7VMD1J5J5A79SCZA3JAN";
    let before = action_columns(&db, id);

    let mut ro = open(&db, "2.1.0", now, (160, 50));
    ro.press("XQEF");
    assert!(ro.app.write_popup().is_none());
    ro.press("?");
    assert!(!ro.render().contains("abort: the runtime-native intent"));
    assert_eq!(action_columns(&db, id), before);

    let mut h = open_write(&db, now, (160, 50));
    let screen = h.render();
    assert!(
        screen.contains(" WRITE ") && screen.contains("X/Q/E/F act"),
        "{screen}"
    );
    assert_eq!(h.app.shown_ids(), [id]);
    h.press("X");
    let (title, body) = h.app.write_popup().expect("the abort's preview");
    let text = body.join("\n");
    assert_eq!(title, format!("Abort {id}"));
    assert!(
        text.contains("abort_requested_at") && text.contains("NULL →"),
        "{text}"
    );
    assert!(
        text.contains("  3 abort: "),
        "the next pass on the row after it: {text}"
    );
    assert!(text.contains("[ No ]"), "No is selected: {text}");
    h.press("<Enter>");
    assert!(h.app.write_popup().is_none());
    assert_eq!(
        h.app.status_text().as_deref(),
        Some("declined: nothing written")
    );
    assert_eq!(action_columns(&db, id), before);
    assert!(audit_of(&db).is_empty());

    h.press("XA");
    let (title, body) = h.app.write_popup().expect("the result");
    assert_eq!(title, "Abort applied", "{body:?}");
    assert!(body[0].contains("audit #1"), "{body:?}");
    assert_ne!(action_columns(&db, id), before);
    assert_eq!(
        audit_of(&db),
        [("abort".to_string(), "tui-test@host".to_string(), None)]
    );
    // A second abort is refused by the planner: the intent is there already.
    h.press("<Esc>X");
    assert!(h.app.write_popup().is_none());
    assert!(
        h.app
            .status_text()
            .unwrap()
            .starts_with("abort refused, nothing written: "),
        "{:?}",
        h.app.status_text()
    );

    // Extend: a deadline an hour from now (every fixture's has passed), applied; then fail asks
    // why first (an empty reason goes nowhere), previews the reserved settlement, applies it.
    std::fs::create_dir(dir.path().join("b")).unwrap();
    let db2 = unpack_db("flue-2.1.0", "model-called", &dir.path().join("b"));
    let mut h = open_write(&db2, after_last_lease(&db2), (160, 50));
    let id2 = h.app.shown_ids()[0].clone();
    h.press("E");
    let (_, body) = h.app.write_popup().expect("the extend's preview");
    assert!(body.join("\n").contains("timeout_at"), "{body:?}");
    h.press("A");
    assert_eq!(h.app.write_popup().unwrap().0, "Extend applied");
    h.press("<Esc>F<Enter>");
    let (title, _) = h.app.write_popup().unwrap();
    assert!(
        title.starts_with("Fail ") && title.ends_with("why?"),
        "{title}"
    );
    h.press("tool hangs<Enter>");
    let (title, body) = h.app.write_popup().expect("the fail's preview");
    let text = body.join("\n");
    assert_eq!(title, format!("Fail {id2}"), "{text}");
    assert!(text.contains("\"running\" → \"terminalizing\""), "{text}");
    h.press("A");
    assert_eq!(h.app.write_popup().unwrap().0, "Fail applied");
    assert!(action_columns(&db2, &id2).starts_with("(\"terminalizing\""));
    assert_eq!(
        audit_of(&db2),
        [
            ("extend".to_string(), "tui-test@host".to_string(), None),
            (
                "fail".to_string(),
                "tui-test@host".to_string(),
                Some("tool hangs".to_string())
            )
        ]
    );
}

#[test]
fn the_list_and_the_detail_show_the_cost_turnscope_list_and_show_print() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = after_last_lease(&db);
        let mut h = open(&db, "2.1.0", now, (220, 60));
        h.press("2");
        let text = crate::support::turnscope_command()
            .env_remove("TURNSCOPE_DB")
            .env("TURNSCOPE_NOW_MS", now.to_string())
            .arg("--db")
            .arg(&db)
            .args(["list", "--status", "all"])
            .output()
            .unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        let json = cli_list(&db, now, &["--status", "all"]);
        for (row, c) in h
            .app
            .shown_rows()
            .iter()
            .zip(json["submissions"].as_array().unwrap())
        {
            let line = text.lines().find(|l| l.starts_with(&row.id)).unwrap();
            // The CLI's COST cell, the seventh column.
            let cell = line
                .split_whitespace()
                .nth(if line.contains(" ago ") { 8 } else { 6 });
            assert!(
                line.contains(&format!("  {}  ", row.cost)),
                "{name}: {} in {line} ({cell:?})",
                row.cost
            );
            if c["cost"].is_null() {
                assert_eq!(row.cost, "-");
                continue;
            }
            let t = &c["cost"]["total"];
            let want = format!(
                "cost            {} since the input: {} assistant(s), {} tokens",
                row.cost, t["assistants"], t["totalTokens"]
            );
            let mut d = open(&db, "2.1.0", now, (220, 60));
            d.press("2");
            let at = d.app.shown_ids().iter().position(|i| *i == row.id).unwrap();
            // To the top (the view keeps the expired view's selection), then down to the row.
            for _ in 0..d.app.shown_ids().len() {
                d.press("k");
            }
            for _ in 0..at {
                d.press("j");
            }
            d.press("<Enter>");
            assert_eq!(d.app.opened(), Some(row.id.as_str()), "{name}");
            let detail: String = d
                .app
                .detail_text()
                .into_iter()
                .map(|(l, _)| l + "\n")
                .collect();
            assert!(detail.contains(&want), "{name}: {want}\n{detail}");
            assert!(detail.contains("attempts seen"), "{name}\n{detail}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked}");
}
