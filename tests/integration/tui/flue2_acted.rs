//! After a write in the 2.x screens, the row shows what the runtime was predicted to do next and,
//! once the runtime writes the row, whether it did (`✓`) or not (`✗`), with what it did on the
//! status line. The runtime here is the real flue 2.1.0 (`reconcile-once.mjs`, one pass at the
//! real clock until idle); the forced mismatch is a replacement written over an abort's
//! prediction.

use std::path::Path;

use rusqlite::Connection;
use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::runtime_kit::runtime2;
use crate::support::unpack_db;

const STUCK: &str = "sub_01M92S7VMD1J5J5A79SCZA3JAN";

fn write_harness(db: &Path) -> Flue2Harness {
    let mut o = HarnessOptions::new(turnscope_store::clock::now_ms());
    o.width = 200;
    o.height = 40;
    o.read_only = false;
    o.operator = "tui-test@host".into();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

/// The NEXT cell of `id` in the list shown.
fn next_of(h: &Flue2Harness, id: &str) -> String {
    h.app
        .shown_rows()
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| r.next)
        .unwrap_or_else(|| panic!("{id} is not shown"))
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn after_an_abort_the_row_shows_the_prediction_then_the_real_runtime_doing_it() {
    let rt = runtime2("tui::flue2_acted");
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let mut h = write_harness(&db);
    h.press("2");
    // At the real clock the fixture's deadline has passed: left alone, the pass times it out.
    assert_eq!(next_of(&h, STUCK), "5 timeout");
    h.press("XA");
    assert!(h.app.write_popup().unwrap().0.ends_with("applied"));
    h.press("<Esc>");
    assert_eq!(next_of(&h, STUCK), "⋯ 3 abort");
    // The runtime's pass, at the real clock, until it is idle.
    let side = dir.path().join("side.jsonl");
    rt.drive_with_env(
        "reconcile-once.mjs",
        &[
            "--db".as_ref(),
            db.as_os_str(),
            "--now".as_ref(),
            turnscope_store::clock::now_ms().to_string().as_ref(),
            "--until-idle".as_ref(),
        ],
        &[("HARNESS_SIDE_FILE", side.as_os_str())],
    );
    h.press("r");
    assert_eq!(next_of(&h, STUCK), "✓ 3 abort");
    let status = h.app.status_text().unwrap();
    assert!(
        status.starts_with(&format!("✓ {STUCK}: the runtime did aborted (step 3"))
            && status.ends_with(", as predicted"),
        "{status}"
    );
    assert!(h.render().contains("✓ 3 abort"));
}

#[test]
fn a_runtime_that_does_something_else_is_marked_as_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let mut h = write_harness(&db);
    h.press("2XA<Esc>");
    assert_eq!(next_of(&h, STUCK), "⋯ 3 abort");
    // Read again before the runtime acts: still waiting.
    h.press("r");
    assert_eq!(next_of(&h, STUCK), "⋯ 3 abort");
    // A replacement instead (the columns replaceSubmissionAttempt writes), not the abort.
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET attempt_id = 'attempt_other', attempt_count = attempt_count + 1, \
             lease_expires_at = lease_expires_at + 1 WHERE submission_id = ?1",
            [STUCK],
        )
        .unwrap();
    h.press("r");
    assert_eq!(next_of(&h, STUCK), "✗ 3 abort");
    let status = h.app.status_text().unwrap();
    assert!(
        status.contains("the runtime did replaced (step 6")
            && status.ends_with("; predicted 3 abort"),
        "{status}"
    );
}
