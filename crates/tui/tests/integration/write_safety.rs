//! The TUI's write safety: the apply key means nothing elsewhere (`y` copies, never applies), a
//! bulk of 10 or more asks for its count, every action can carry a reason, a bulk apply shares
//! one batch id, and the audit trail's `u` / `U` undo (previewed, audited).

use turnscope_store::{JournalStore, SqliteStore};
use turnscope_tui::harness::{Harness, PopupKind};

use super::{demo_copy, demo_id, popup, write_opts, NOW};

/// The journal's rows (the audit table aside: an undo leaves it behind, by design).
fn db_state(db: &std::path::Path) -> String {
    super::db_state(db)
        .lines()
        .filter(|l| *l != "Text(\"turnscope_audit\")")
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn y_never_applies_and_a_repair_carries_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "y");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (120, 40), dir.path())).unwrap();
    h.press("/billing-bot<Enter>R");
    assert_eq!(
        h.popup_kind(),
        Some(PopupKind::Reason),
        "every action asks why"
    );
    h.press("tool timed out twice<Enter>");
    assert_eq!(h.popup_kind(), Some(PopupKind::WriteConfirm));
    // The demo holds one live lease: the dialog names the live runtime and its next pass.
    let (_, lines) = popup(&h);
    // Its lease expired 4 minutes ago beside a live runtime: no "within 15 s" is promised for
    // it, only what is true of its state.
    assert!(
        lines.contains("warning: a runtime is live: 1 submission(s) hold a live lease")
            && lines.contains("lease expired 4m00s ago and it is still running: the live runtime has not reconciled it")
            && lines.contains("a pass that does would apply rule 6 → replacement")
            && !lines.contains("within 15 s"),
        "{lines}"
    );
    // Decision first: what it does, the prediction and the warnings before any row.
    let at = |s: &str| lines.find(s).unwrap_or_else(|| panic!("{s}: {lines}"));
    assert!(
        at("repair: append 2 tool results") < at("prediction:"),
        "{lines}"
    );
    assert!(
        at("prediction:") < at("warning: a runtime is live"),
        "{lines}"
    );
    assert!(
        at("warning: a runtime is live") < at("insert entry"),
        "{lines}"
    );
    assert!(h
        .status_text()
        .unwrap()
        .starts_with("warning: a runtime is live"));
    let state = db_state(&db);
    // `y` copies an id everywhere else: in the dialog it does nothing at all.
    h.press("y");
    assert_eq!(h.popup_kind(), Some(PopupKind::WriteConfirm));
    assert_eq!(db_state(&db), state, "y wrote something");
    h.press("A");
    // The second confirmation, of the calls the repair answers `interrupted`: y does nothing
    // there either.
    assert_eq!(popup(&h).0, "Repair: side effects?");
    h.press("y");
    assert_eq!(
        db_state(&db),
        state,
        "y on the second confirmation wrote something"
    );
    h.press("A");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Repair applied"), "{title}");
    let records = SqliteStore::open(&db).unwrap().audit_records().unwrap();
    assert_eq!(records[0].reason.as_deref(), Some("tool timed out twice"));
    let acknowledged = records[0]
        .side_effects
        .as_ref()
        .expect("the ledger is audited");
    assert!(!acknowledged.as_array().unwrap().is_empty());
    assert!(records[0].batch_id.is_none(), "a single apply is no batch");
}

#[test]
fn a_bulk_of_ten_asks_for_its_count_records_one_batch_and_undoes_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "bulk10");
    let before = db_state(&db);
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    // Dispatches only: a direct prompt's failure appends its terminal event to the event stream,
    // which no undo takes back (`undo.rs`).
    h.press("/kind:dispatch<Enter>");
    let n = h.rows().len();
    assert!(n >= 12, "the demo has {n} expired dispatches");
    h.press("g");
    for _ in 0..n {
        h.press("<Space>");
    }
    h.press("F");
    h.press("mass cleanup<Enter>");
    assert_eq!(h.popup_kind(), Some(PopupKind::WriteConfirm));
    let (_, lines) = popup(&h);
    // `12 marked: 12 will write (then 12 failed) · 0 nothing to write · 0 refused · …`
    let planned: usize = lines
        .split(": ")
        .nth(1)
        .and_then(|w| w.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{lines}"));
    assert!(planned >= 10, "{planned} planned:\n{lines}");
    assert!(h.render().contains(&format!("type {planned}:")));
    // A alone does not apply a bulk this big; a wrong count neither.
    h.press("A");
    assert_eq!(h.popup_kind(), Some(PopupKind::WriteConfirm));
    assert!(h
        .status_text()
        .unwrap()
        .contains(&format!("type {planned}")));
    h.press("9A");
    assert_eq!(h.popup_kind(), Some(PopupKind::WriteConfirm));
    assert_eq!(db_state(&db), before, "nothing written before the count");
    h.press(&format!("<BS>{planned}A"));
    let (title, _) = popup(&h);
    assert!(
        title.starts_with(&format!("Fail: {planned} applied")),
        "{title}"
    );
    let records = SqliteStore::open(&db).unwrap().audit_records().unwrap();
    assert_eq!(records.len(), planned);
    let batch = records[0].batch_id.clone().expect("a batch id");
    assert!(records
        .iter()
        .all(|r| r.batch_id.as_deref() == Some(batch.as_str())
            && r.reason.as_deref() == Some("mass cleanup")));
    // The result offers the undo of the whole batch: u asks why, then previews it.
    let (_, lines) = popup(&h);
    assert!(
        lines.contains(&format!("u undoes batch {batch} (previewed, asks why)")),
        "{lines}"
    );
    h.press("u");
    assert_eq!(h.popup_kind(), Some(PopupKind::Reason));
    h.press("wrong filter<Enter>");
    let (title, lines) = popup(&h);
    assert_eq!(title, format!("Undo batch {batch}?"), "{lines}");
    assert!(lines.contains("revert audit #"), "{lines}");
    h.press("A");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Undone: batch"), "{title}");
    let after = db_state(&db);
    let differ: Vec<&str> = after
        .lines()
        .filter(|l| !before.lines().any(|b| b == *l))
        .map(|l| &l[..l.len().min(200)])
        .collect();
    assert!(differ.is_empty(), "not back as it was: {differ:#?}");
    let records = SqliteStore::open(&db).unwrap().audit_records().unwrap();
    assert_eq!(records.len(), planned * 2);
    assert!(records[..planned]
        .iter()
        .all(|r| r.action == "undo" && r.reason.as_deref() == Some("wrong filter")));
    // Our own undo is no "changed under you".
    h.press("<Esc>");
    h.refresh();
    assert_eq!(h.banner(), None);
    // The audit trail: the batch column, each undone record marked, `/` filters, and an undo of
    // an undone record refused in one line before any question.
    h.press("a");
    let screen = h.render();
    assert!(screen.contains("BATCH"), "{screen}");
    assert!(screen.contains(&batch[..9]), "{screen}");
    assert!(
        screen.contains("UNDONE") && screen.contains("↶ #"),
        "{screen}"
    );
    assert!(screen.contains("u/U undo/batch"), "{screen}");
    h.press("/mass cleanup<Enter>");
    let shown = h.render();
    assert_eq!(
        shown.matches("↶ #").count(),
        planned,
        "only the fail records: {shown}"
    );
    let state = db_state(&db);
    h.press("u");
    assert_eq!(h.popup_kind(), None, "no question for a refused undo");
    let status = h.status_text().unwrap();
    assert!(
        status.starts_with("undo refused, nothing written: audit #")
            && status.contains("was already undone by audit #")
            && status.matches("nothing written").count() == 1,
        "{status}"
    );
    h.press("U");
    assert_eq!(h.popup_kind(), None, "the batch neither");
    assert_eq!(db_state(&db), state);
}

#[test]
fn u_undoes_one_record_and_refuses_once_the_rows_changed() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "undo1");
    let id = demo_id(&db, "onboarding-17");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (120, 40), dir.path())).unwrap();
    h.press(&format!("/{}<Enter>Q<Enter>A", &id[..8]));
    let (title, _) = popup(&h);
    assert!(title.starts_with("Requeue applied"), "{title}");
    // The runtime claims it before the operator undoes.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET status = 'running', attempt_id = 'runtime-claim' WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    let state = db_state(&db);
    h.press("<Esc><Esc>a");
    h.press("u<Enter>");
    let (title, lines) = popup(&h);
    assert!(
        title.starts_with("Undo refused: audit #1"),
        "{title}\n{lines}"
    );
    assert!(
        lines.contains("status is now 'running' (turnscope wrote 'queued')"),
        "{lines}"
    );
    assert_eq!(lines.matches("nothing written").count(), 1, "{lines}");
    assert!(!lines.contains("refused: refused"), "{lines}");
    assert_eq!(db_state(&db), state, "nothing written");
}

/// As the binary runs under `TURNSCOPE_NOW_MS`: the header says the clock is pinned, and a lease
/// live by the real clock is refused even where the pinned clock (two hours ahead) shows it
/// expired.
#[test]
fn a_pinned_clock_is_shown_and_never_moves_the_live_lease_guard() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo-now.db");
    let now = turnscope_store::clock::now_ms();
    turnscope_demo::write_demo(&db, now).unwrap();
    let live = SqliteStore::open(&db)
        .unwrap()
        .list_submissions(turnscope_store::RowFilter::Running, now)
        .unwrap()
        .into_iter()
        .find(|r| r.lease_expires_at > now + 60_000)
        .expect("the demo has a submission under a live lease")
        .submission_id;
    let before = db_state(&db);
    let mut o = write_opts("demo.db", now + 2 * 3_600_000, (160, 48), dir.path());
    o.real_safety_clock = true;
    let mut h = Harness::open(&db, o).unwrap();
    assert!(h.render().contains("clock pinned to"), "{}", h.render());
    h.press(&format!("4/{}<Enter>", &live[..8]));
    let shown = h
        .loaded_rows()
        .iter()
        .find(|i| i.row.submission_id == live)
        .map(|i| i.disposition.label())
        .expect("the live row is listed");
    assert_ne!(shown, "live", "the pinned clock shows its lease expired");
    for key in ["F", "R", "S", "C"] {
        h.press(key);
        if h.popup_kind() == Some(PopupKind::Reason) {
            h.press("pinned clock<Enter>");
        }
        let (title, lines) = popup(&h);
        assert!(
            lines.contains("the lease is live"),
            "{key}: {title}\n{lines}"
        );
        h.press("<Esc>");
    }
    drop(h);
    assert_eq!(db_state(&db), before, "nothing written under a live lease");
}
