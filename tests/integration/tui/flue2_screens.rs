//! The TUI's sessions, incidents and audit screens on flue 2.x journals, headless
//! (`Flue2Harness`) on the 2.1.0 crash fixtures: each screen shows what the CLI's `--json` says
//! at the same clock (`incidents`, `sessions QUERY --text QUERY`, `audit`), ⏎ narrows the list to
//! the worker's or the instance's submissions, and with `--write` `u` on the audit trail undoes
//! an action the CLI applied, previewed with No selected, as `turnscope --write undo` does.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::support::{db_fixture_names, unpack_db};

/// A second after the last lease of the journal ended.
fn after_last_lease(db: &Path) -> i64 {
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

fn open(db: &Path, now: i64, write: bool) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = 200;
    o.height = 40;
    o.read_only = !write;
    o.operator = "tui-test@host".into();
    o.display_name = db.file_name().unwrap().to_string_lossy().into_owned();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

/// `turnscope [--write] ARGS --json` at `now`, through the binary; its document, whatever the
/// exit status (a search that finds nothing exits non-zero with no document: `Null`).
fn cli(db: &Path, now: i64, args: &[&str]) -> Value {
    let out = crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .env("TURNSCOPE_OPERATOR", "cli-test@host")
        .arg("--db")
        .arg(db)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn incidents_show_the_cli_groups_and_enter_lists_the_workers_submissions() {
    let dir = tempfile::tempdir().unwrap();
    let mut groups_seen = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        // At the last lease's end (not yet expired) and a second after it.
        for now in [after_last_lease(&db) - 1000, after_last_lease(&db)] {
            let mut h = open(&db, now, false);
            h.press("I");
            assert_eq!(h.app.screen_name(), Some("Incidents"), "{name}");
            let doc = cli(&db, now, &["incidents"]);
            let mut want = doc["groups"].as_array().unwrap().clone();
            for g in &mut want {
                // The CLI's shell line; the screen's ⏎ does what it says.
                g.as_object_mut().unwrap().remove("listCommand");
            }
            assert_eq!(h.app.screen_rows(), want, "{name} at {now}");
            let screen = h.render();
            if want.is_empty() {
                assert!(screen.contains("no worker left anything stuck"), "{screen}");
                continue;
            }
            // The selected (first) worker's cost as `turnscope incidents` words it, and a COST
            // column.
            let text = crate::support::turnscope_ok(&db, Some(now), &["incidents"]);
            let text = String::from_utf8(text).unwrap();
            let cost_line = text
                .lines()
                .find_map(|l| l.trim_start().strip_prefix("cost "))
                .expect("a cost line per worker")
                .trim_start();
            assert!(
                screen.contains(&format!("cost {cost_line} · all {} stuck", doc["stuck"])),
                "{name}: {cost_line}\n{screen}"
            );
            assert!(screen.contains("COST"), "{screen}");
            for g in &want {
                let summary = g["summary"].as_str().unwrap();
                assert!(
                    screen.contains(&summary[..summary.len().min(60)]),
                    "{name}: {summary}\n{screen}"
                );
                groups_seen += 1;
            }
            // ⏎: the list, expired view, only the first group's submissions.
            h.press("<Enter>");
            assert_eq!(h.app.screen_name(), None);
            assert_eq!(h.app.view_name(), "expired");
            let subs: Vec<String> = want[0]["submissions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            let mut shown = h.app.shown_ids();
            shown.sort();
            let mut sorted = subs.clone();
            sorted.sort();
            assert_eq!(shown, sorted, "{name}");
            assert!(h.render().contains("(esc: all)"));
            // esc widens it again.
            h.press("<Esc>");
            assert!(h.app.narrowed().is_none());
            // I again closes the screen.
            h.press("II");
            assert_eq!(h.app.screen_name(), None);
        }
    }
    assert!(groups_seen >= 10, "{groups_seen} groups checked");
}

/// The instance (stream path) of each submission, as `list --status all --json` names it.
fn stream_of_rows(db: &Path, now: i64) -> Vec<(String, String)> {
    cli(db, now, &["list", "--status", "all"])["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let (a, i) = (
                r["instance"]["agent"].as_str()?,
                r["instance"]["instanceId"].as_str()?,
            );
            Some((
                format!("agents/{a}/{i}"),
                r["id"].as_str().unwrap().to_string(),
            ))
        })
        .collect()
}

#[test]
fn sessions_find_what_the_cli_finds_and_enter_lists_the_instances_submissions() {
    let dir = tempfile::tempdir().unwrap();
    let mut queries = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = after_last_lease(&db);
        let mut h = open(&db, now, false);
        // s: every instance, one stream each, in path order.
        h.press("s");
        assert_eq!(h.app.screen_name(), Some("Sessions"));
        let conn = Connection::open(&db).unwrap();
        let paths: Vec<String> = conn
            .prepare("SELECT path FROM flue_conversation_streams ORDER BY path")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let rows: Vec<String> = h
            .app
            .screen_rows()
            .iter()
            .map(|r| r["stream"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(rows, paths, "{name}");
        // f, then a query: a submission id, a prefix of one, the scenario marker's text, a
        // word no record holds.
        let rows_by_stream = stream_of_rows(&db, now);
        let first_id = rows_by_stream[0].1.clone();
        for q in [
            first_id.as_str(),
            &first_id[..8],
            "script:",
            "CRASH",
            "zzzz-no-such-text",
        ] {
            h.press("<Esc><Esc>f");
            for c in q.chars() {
                h.press(&c.to_string());
            }
            h.press("<Enter>");
            let want = cli(&db, now, &["sessions", q, "--text", q]);
            let want = want["matches"].as_array().cloned().unwrap_or_default();
            assert_eq!(h.app.screen_rows(), want, "{name}: {q:?}");
            if want.is_empty() {
                // Only text can be absent (a claim before the input has no user record); an
                // id of the journal is always found.
                assert!(
                    q.starts_with("zzzz") || !q.starts_with("sub_"),
                    "{name}: {q:?}"
                );
                assert!(h.render().contains("0 match(es)"));
                continue;
            }
            queries += 1;
            // ⏎: the first match's instance, its submissions in the list (all statuses).
            let stream = want[0]["stream"].as_str().unwrap().to_string();
            h.press("<Enter>");
            assert_eq!(h.app.screen_name(), None, "{name}");
            assert_eq!(h.app.view_name(), "all");
            let mut expect: Vec<String> = rows_by_stream
                .iter()
                .filter(|(s, _)| *s == stream)
                .map(|(_, id)| id.clone())
                .collect();
            expect.sort();
            let mut shown = h.app.shown_ids();
            shown.sort();
            assert_eq!(shown, expect, "{name}: {q:?} → {stream}");
            assert!(h.render().contains(&format!("instance {stream}")));
            h.press("<Esc>s");
        }
    }
    assert!(queries >= 40, "{queries} queries checked");
}

#[test]
fn the_audit_trail_is_the_clis_and_u_undoes_an_action_in_write_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-call-no-outcome", dir.path());
    let now = after_last_lease(&db);
    let id = cli(&db, now, &["list"])["submissions"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // No trail yet: the screen says so.
    let mut ro = open(&db, now, false);
    ro.press("a");
    assert_eq!(ro.app.screen_name(), Some("Audit trail"));
    assert!(ro.app.screen_rows().is_empty());
    assert!(ro.render().contains("no turnscope action was ever applied"));

    // An extend the CLI applies, audited.
    let applied = cli(
        &db,
        now,
        &["--write", "extend", &id, "--attempts", "3", "-y"],
    );
    assert!(!applied.is_null(), "the extend was not applied");
    let trail = cli(&db, now, &["audit"]);
    let records = trail["records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    ro.press("r");
    assert_eq!(ro.app.screen_rows(), *records);
    assert!(ro.render().contains("extend"));
    // Read-only: u does nothing.
    ro.press("u");
    assert!(ro.app.undo_popup().is_none());
    // ⏎ opens the submission; esc comes back to the trail.
    ro.press("<Enter>");
    assert_eq!(ro.app.opened(), Some(id.as_str()));
    ro.press("<Esc>");
    assert_eq!(ro.app.opened(), None);
    assert_eq!(ro.app.screen_name(), Some("Audit trail"));

    let columns = |db: &Path| -> (i64, i64) {
        Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT max_attempts, timeout_at FROM flue_agent_submissions WHERE submission_id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    };
    let extended = columns(&db);
    let before: (i64, i64) = {
        let c = &records[0]["changes"][0]["before"];
        (
            c["max_attempts"].as_i64().unwrap(),
            c["timeout_at"].as_i64().unwrap(),
        )
    };
    assert_ne!(extended, before);

    let mut h = open(&db, now, true);
    h.press("a");
    assert_eq!(h.app.screen_rows(), *records);
    // u: why (blank skips), then the store's preview with No selected: ⏎ writes nothing.
    h.press("u");
    assert!(h.app.undo_popup().unwrap().0.contains("why?"));
    h.press("<Enter>");
    let (title, body) = h.app.undo_popup().expect("the undo's preview");
    assert!(title.starts_with("Undo 1"), "{title}");
    assert!(
        body.iter().any(|l| l.contains("revert audit #1"))
            && body.iter().any(|l| l.contains("[ No ]")),
        "{body:?}"
    );
    h.press("<Enter>");
    assert!(h.app.undo_popup().is_none());
    assert_eq!(columns(&db), extended, "declining wrote");
    // Again, and A applies it.
    h.press("uwhy<Enter>A");
    let (title, body) = h.app.undo_popup().expect("the result");
    assert_eq!(title, "Undo 1 applied", "{body:?}");
    assert!(body[0].starts_with("undone: 1 row(s) restored"), "{body:?}");
    assert_eq!(columns(&db), before, "the undo did not restore the row");
    h.press("<Esc>");
    // The trail is the CLI's again: the undo's own record, naming the one it undid.
    let trail = cli(&db, now, &["audit"]);
    let records = trail["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert!(records
        .iter()
        .any(|r| r["undoes"] == 1 && r["reason"] == "why"));
    assert_eq!(h.app.screen_rows(), *records);
    assert!(h.render().contains("↶ #2"), "{}", h.render());
    // u on the undone record: refused in one line, nothing asked.
    let undone_row = records.iter().position(|r| r["id"] == 1).unwrap();
    h.press("g");
    for _ in 0..undone_row {
        h.press("j");
    }
    h.press("u");
    assert!(h.app.undo_popup().is_none());
    assert!(
        h.app
            .status_text()
            .is_some_and(|s| s.contains("was undone already")),
        "{:?}",
        h.app.status_text()
    );
}

/// The sessions screen's HEALTH column on every fixture: each instance's cell is what
/// `turnscope health STREAM --json` finds at the same clock (`ok`, or the count of findings and
/// the first one's kind), asked by the worker for the rows in view.
#[test]
fn the_sessions_health_column_is_what_health_finds_for_each_instance() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cells, mut unhealthy) = (0, 0);
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let now = after_last_lease(&db);
        let mut h = open(&db, now, false);
        h.press("s");
        assert_eq!(h.app.screen_name(), Some("Sessions"), "{name}");
        let got = h.app.health_cells();
        assert!(!got.is_empty(), "{name}: no instance listed");
        for (stream, cell) in got {
            let doc = cli(&db, now, &["health", &stream]);
            let findings: Vec<&Value> = doc["sessions"]
                .as_array()
                .unwrap_or_else(|| panic!("{name} {stream}: {doc}"))
                .iter()
                .flat_map(|s| s["findings"].as_array().into_iter().flatten())
                .collect();
            let want = match findings.first() {
                None => "ok".to_string(),
                Some(f) => format!("{} {}", findings.len(), f["kind"].as_str().unwrap()),
            };
            assert_eq!(cell, want, "{name} {stream}");
            cells += 1;
            unhealthy += usize::from(want != "ok");
        }
        assert!(h.render().contains("HEALTH"), "{name}");
    }
    assert!(
        cells > 10 && unhealthy > 0,
        "{cells} cells, {unhealthy} with findings"
    );
}

/// The text search runs on its own thread: while it runs the status says how far it got and
/// that esc stops it; esc asks the worker to stop it (the search no longer held) and keeps what
/// was found; the search's own last message then only completes the count.
#[test]
fn a_running_text_search_shows_its_progress_and_esc_stops_it() {
    use turnscope_tui::flue2::screens_messages::{ScreenResponse, TextState};
    use turnscope_tui::flue2::Flue2Response;
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-call-no-outcome", dir.path());
    let now = after_last_lease(&db);
    let mut h = open(&db, now, false);
    h.press("s");
    h.hold_side = true;
    let q = "script:";
    h.press("f");
    for c in q.chars() {
        h.press(&c.to_string());
    }
    h.press("<Enter>");
    // The ids answered at once; the text still to come.
    let ids = cli(&db, now, &["sessions", q]);
    let by_id = ids["matches"].as_array().cloned().unwrap_or_default();
    assert_eq!(h.app.screen_rows(), by_id);
    let progress = |found: Vec<Value>, state: TextState| {
        Flue2Response::Screen(ScreenResponse::SessionsText {
            query: q.to_string(),
            found,
            searched: 1,
            total: 7,
            state,
        })
    };
    let one = serde_json::json!({"stream": "agents/x/y", "instance": "y", "match": "text"});
    h.answer(progress(vec![one.clone()], TextState::Running));
    let text = h.render();
    assert!(
        text.contains("searching text: 1 of 7 instances · esc stops"),
        "{text}"
    );
    assert_eq!(h.app.screen_rows().len(), by_id.len() + 1);
    h.press("<Esc>");
    assert_eq!(
        h.app.screen_name(),
        Some("Sessions"),
        "esc stops, not closes"
    );
    let text = h.render();
    assert!(
        text.contains("text search stopped after 1 of 7 instances"),
        "{text}"
    );
    assert_eq!(
        h.app.screen_rows().len(),
        by_id.len() + 1,
        "what was found stays"
    );
    // A second esc clears the query, as before.
    h.hold_side = false;
    h.press("<Esc>");
    assert_eq!(h.app.screen_name(), Some("Sessions"));
    assert!(!h.render().contains("stopped after"));
}
