//! The incidents screen (`I`) and the list's bulk marks (`*`, `V`, `u`, marks hidden by the
//! filter), on the demo database, at 80x24 and 160x48.

use super::*;
use turnscope_tui::{Action, Overrides};

/// The demo's expired rows of one owner, as the store reads them.
fn expired_of(db: &Path, owner: Option<&str>) -> Vec<String> {
    let store = SqliteStore::open(db).unwrap();
    let mut ids: Vec<String> = store
        .list_submissions(RowFilter::Expired, NOW)
        .unwrap()
        .into_iter()
        .filter(|r| r.owner_id.as_deref() == owner)
        .map(|r| r.submission_id)
        .collect();
    ids.sort();
    ids
}

/// Each submission's cost since its input on the active path (`list`'s COST), read again here
/// with the listing's walk.
fn path_costs(db: &std::path::Path, ids: &[String]) -> Vec<Option<f64>> {
    let store = SqliteStore::open(db).unwrap();
    let mut walker = turnscope_store::PathWalker::new(false);
    ids.iter()
        .map(|id| {
            turnscope_engine::report::SubmissionReport::scan(&store, id, &mut walker, None, NOW)
                .unwrap()
                .path_cost()
                .map(|c| c.cost)
        })
        .collect()
}

#[test]
fn incidents_group_the_expired_rows_by_worker_and_open_one_in_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    for size in SIZES {
        let mut h = Harness::open(&db, opts("demo.db", NOW, size, dir.path())).unwrap();
        // From another filter: the screen switches the list to the expired rows it groups.
        h.press("2");
        h.press("I");
        assert_eq!(h.root(), Root::Incidents);
        let groups = h.incident_groups().to_vec();
        assert_eq!(groups.len(), 3, "three workers left rows stuck");
        assert_eq!(
            groups.iter().map(|g| g.count()).sum::<usize>(),
            h.count(RowFilter::Expired)
        );
        for g in &groups {
            let mut ids = g.submissions.clone();
            ids.sort();
            assert_eq!(ids, expired_of(&db, g.owner_id.as_deref()));
            assert!(g.plans.iter().all(|p| p.plan.label() != "computing"));
        }
        let screen = h.render();
        // The selected group's cost: its rows' COST (the listing's, read again here) summed.
        let sum: f64 = path_costs(&db, &groups[0].submissions)
            .into_iter()
            .flatten()
            .sum();
        assert!(sum > 0.0);
        assert!(
            screen.contains(&format!(" cost    ${sum:.4} since the inputs")),
            "{sum}: {screen}"
        );
        let (w, ht) = size;
        settings().bind(|| insta::assert_snapshot!(format!("incidents_{w}x{ht}"), screen));
        // `y` copies the worker's full id (what `--owner` takes).
        h.press("j");
        assert_eq!(h.selected_id(), groups[1].owner_id);
        // ⏎: the list, narrowed to that worker; esc widens it again.
        h.press("<Enter>");
        assert_eq!(h.root(), Root::Submissions);
        let mut shown: Vec<String> = h
            .rows()
            .iter()
            .map(|r| r.row.submission_id.clone())
            .collect();
        shown.sort();
        let mut want = groups[1].submissions.clone();
        want.sort();
        assert_eq!(shown, want);
        let screen = h.render();
        assert!(
            screen.lines().nth(1).unwrap().contains(&format!(
                "worker {}",
                &groups[1].owner_id.as_ref().unwrap()[..8]
            )),
            "{screen}"
        );
        h.press("<Esc>");
        assert_eq!(h.rows().len(), h.count(RowFilter::Expired));
        // I goes back to where it was opened from.
        h.press("II");
        assert_eq!(h.root(), Root::Submissions);
    }
}

#[test]
fn space_on_a_worker_marks_all_of_it_and_c_reconciles_them_through_the_confirm_popup() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "incident-bulk");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("I");
    let g = h.selected_incident().unwrap().clone();
    assert!(g.count() >= 2 && g.count() < 10, "{g:?}");
    h.press("<Space>");
    assert_eq!(h.marked(), g.count());
    let screen = h.render();
    assert!(
        screen
            .lines()
            .next()
            .unwrap()
            .contains(&format!("{} marked", g.count())),
        "{screen}"
    );
    // Space moves on to the next worker (as it moves to the next row in the list).
    h.press("k");
    let screen = h.render();
    assert!(
        screen.contains(&format!("marked  {} of {}", g.count(), g.count())),
        "{screen}"
    );
    for (w, ht) in SIZES {
        h.resize(w, ht);
        let screen = h.render();
        settings().bind(|| insta::assert_snapshot!(format!("incidents_marked_{w}x{ht}"), screen));
    }
    // Space again on the same worker unmarks it.
    h.press("<Space>");
    assert_eq!(h.marked(), 0);
    h.press("k<Space>");
    let before = db_state(&db);
    h.press("C");
    h.press("dead worker<Enter>");
    let (title, lines) = popup(&h);
    assert_eq!(
        title,
        format!("Reconcile {} marked submissions?", g.count())
    );
    for id in &g.submissions {
        assert!(lines.contains(&id[..8]), "{id} in {lines}");
    }
    h.press("<Enter>");
    assert_eq!(db_state(&db), before, "⏎ on No writes nothing");
    h.press("A");
    // Rule 6 answers the dead worker's calls `interrupted`: acknowledged on a second confirmation.
    assert_eq!(popup(&h).0, "Reconcile: side effects?");
    assert_eq!(
        db_state(&db),
        before,
        "nothing written before the acknowledgment"
    );
    h.press("A");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Reconcile:"), "{title}");
    let audit = audit_rows(&db);
    assert!(!audit.is_empty());
    assert!(audit
        .iter()
        .all(|a| a.0 == "reconcile" && g.submissions.contains(&a.1)));
    assert_eq!(h.marked(), 0, "the applied marks are cleared");
}

#[test]
fn incidents_say_when_nothing_is_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    write_empty_journal(&db).unwrap();
    let mut h = Harness::open(&db, opts("empty.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("I");
    assert!(h.incident_groups().is_empty());
    assert!(h
        .render()
        .contains("no expired lease: no worker left anything stuck"));
}

#[test]
fn bulk_marks_every_row_a_range_and_none_and_count_the_hidden_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "marks");
    for size in SIZES {
        let mut h = Harness::open(&db, write_opts("demo.db", NOW, size, dir.path())).unwrap();
        let n = h.rows().len();
        h.press("*");
        assert_eq!(h.marked(), n, "* marks every row shown");
        h.press("u");
        assert_eq!(h.marked(), 0, "u unmarks all");
        // V without a mark says how to start a range.
        h.press("V");
        assert_eq!(h.marked(), 0);
        assert!(h.status_text().unwrap().contains("space first"));
        // space on row 2 (cursor moves to 3), then down to 5: V marks rows 2..=5.
        h.press("gj<Space>jjV");
        assert_eq!(h.marked(), 4);
        let marked: Vec<String> = h.rows()[1..5]
            .iter()
            .map(|r| r.row.submission_id.clone())
            .collect();
        // The header totals the marked rows' cost since their inputs (COST, read again here).
        let costs = path_costs(&db, &marked);
        let sum: f64 = costs.iter().flatten().sum();
        let unknown = costs.iter().filter(|c| c.is_none()).count();
        let head = h.render().lines().next().unwrap().to_string();
        let at_least = if unknown > 0 { "≥" } else { "" };
        let want = format!(
            "4 marked · {at_least}{}",
            turnscope_engine::report::cost_text::money(sum)
        );
        assert!(head.contains(&want), "{want}: {head}");
        // Narrow the list to one of them: the other three are hidden by the filter.
        h.press(&format!("/{}<Enter>", &marked[0][..8]));
        assert_eq!(h.rows().len(), 1);
        let mut hidden = marked[1..].to_vec();
        hidden.sort();
        assert_eq!(h.hidden_marks(), hidden);
        let screen = h.render();
        assert!(
            screen
                .lines()
                .next()
                .unwrap()
                .contains(", 3 hidden by the filter"),
            "{screen}"
        );
        let (w, ht) = size;
        settings().bind(|| insta::assert_snapshot!(format!("marks_hidden_{w}x{ht}"), screen));
        // The bulk preview names the hidden ones.
        h.press("F");
        h.press("cleanup<Enter>");
        let (title, lines) = popup(&h);
        assert_eq!(title, "Fail 4 marked submissions?");
        assert!(lines.contains("· 3 hidden by the filter ·"), "{lines}");
        assert_eq!(
            lines.matches("· hidden by the filter").count(),
            3,
            "{lines}"
        );
        h.press("<Esc>");
        h.press("<Esc>u");
        assert_eq!(h.marked(), 0);
    }
}

#[test]
fn bulk_mark_keys_are_configurable_and_absent_in_read_only_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut o = write_opts("demo.db", NOW, (80, 24), dir.path());
    o.keys = Overrides::parse([("mark_all", "M"), ("clear_marks", "ctrl-x")]).unwrap();
    let mut h = Harness::open(&db, o).unwrap();
    h.press("*");
    assert_eq!(h.marked(), 0, "the default key is replaced");
    h.press("M");
    assert_eq!(h.marked(), h.rows().len());
    h.press("<C-x>");
    assert_eq!(h.marked(), 0);
    let mut ro = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    ro.press("*gjV");
    ro.dispatch(Action::MarkAll);
    assert_eq!(ro.marked(), 0, "no marks in read-only mode");
}

/// A worker's stop time does not move when rows leave its group: three leases of one worker
/// expired a second apart (renewed together), the last one then settles (as after an action),
/// and the group still says the worker stopped when it did.
#[test]
fn a_groups_stop_time_stays_when_some_of_its_rows_are_acted_on() {
    use turnscope_testkit::journal::{JournalBuilder, SessionBuilder, Submission};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("worker.db");
    let mut j = JournalBuilder::new();
    let mut ids = Vec::new();
    for i in 0..3i64 {
        let s = SessionBuilder::for_instance(&format!("w{i}"), NOW - 600_000);
        let key = s.key().to_string();
        j.session(s);
        let id = format!(
            "{:08x}-0000-4000-8000-000000000000",
            0xa000_0000u32 + i as u32
        );
        j.submission(
            Submission::dispatch(
                &id,
                &key,
                "agent",
                &format!("w{i}"),
                &serde_json::json!({}),
                NOW - 500_000,
            )
            .claimed(
                &format!("att-{i}"),
                "worker-9f2c1a0b",
                NOW - 400_000,
                NOW - 60_000 + i * 1_000,
            ),
        );
        ids.push(id);
    }
    j.write(&db).unwrap();
    let mut h = Harness::open(&db, opts("worker.db", NOW, (160, 30), dir.path())).unwrap();
    h.press("I");
    let stop = |screen: &str| {
        let at = screen
            .find("stopped renewing at ")
            .unwrap_or_else(|| panic!("{screen}"));
        screen[at..at + 40].to_string()
    };
    let before = stop(&h.render());
    assert!(h.render().contains("3 stuck"), "{}", h.render());
    // The row whose lease expired last leaves the group.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE flue_agent_submissions SET status = 'settled', settled_at = ?1, lease_expires_at = 0 WHERE submission_id = ?2",
        rusqlite::params![NOW, ids[2]],
    )
    .unwrap();
    drop(conn);
    h.refresh();
    let screen = h.render();
    assert!(screen.contains("2 stuck"), "{screen}");
    assert_eq!(stop(&screen), before);
}
