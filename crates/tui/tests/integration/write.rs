//! Write mode (`--write`): previews, confirmations, refusals, fences, bulk actions, step mode.

use super::*;
use turnscope_core::journal::status::SubmissionStatus;

#[test]
fn read_only_mode_has_no_write_actions() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "ro");
    let mut text = String::new();
    for write in [false, true] {
        // Tall enough for the whole help.
        let mut o = opts("demo.db", NOW, (160, 115), dir.path());
        o.read_only = !write;
        let mut h = Harness::open(&db, o).unwrap();
        let list = h.render();
        h.press("<Enter>");
        let tree = h.render();
        h.press("<Esc>?");
        let help = h.render();
        let last = |s: &str| s.lines().last().unwrap_or("").to_string();
        let first = |s: &str| s.lines().next().unwrap_or("").to_string();
        text.push_str(&format!(
            "── {} ──\nheader: {}\nlist footer: {}\ntree footer: {}\n{help}",
            if write { "--write" } else { "read-only" },
            first(&list),
            last(&list),
            last(&tree)
        ));
        for part in ["C/R/Q/F/S/E act", "␣ mark"] {
            assert_eq!(list.contains(part), write, "{part} in the list footer");
            assert_eq!(tree.contains("C/R/Q/F/S/E act"), write, "tree footer");
        }
        assert_eq!(list.contains("READ-ONLY"), !write);
        assert_eq!(list.contains(" WRITE "), write);
        assert_eq!(help.contains("repair: complete the trailing"), write);
    }
    settings().bind(|| insta::assert_snapshot!("write_keys_by_mode", text));

    // Read-only: the keys do nothing at all, in the list and in an opened submission.
    let before = db_bytes(&db);
    let mut h = Harness::open(&db, opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    for keys in ["R", "Q", "F", "S", "C", "E", "<Space>R", "<Space>F"] {
        h.press(keys);
        assert!(
            h.popup().is_none(),
            "{keys} opened a popup in read-only mode"
        );
        assert!(h.marked() == 0, "{keys} marked a row in read-only mode");
        assert!(h.idle());
    }
    h.press("g<Enter>");
    for keys in ["R", "Q", "F", "S", "C", "E"] {
        h.press(keys);
        assert!(h.popup().is_none(), "{keys} in the tree, read-only");
    }
    // Not even a stray action call writes (the app guards it too).
    h.dispatch(turnscope_tui::Action::Act(
        turnscope_engine::actions::ActionKind::Repair,
    ));
    assert!(h.popup().is_none());
    drop(h);
    assert!(
        db_bytes(&db) == before,
        "read-only mode changed the database"
    );
    assert!(audit_rows(&db).is_empty());
}

#[test]
fn repair_previews_waits_for_yes_applies_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let db = demo_copy(dir.path(), &format!("repair-{}x{}", size.0, size.1));
        let id = demo_id(&db, "billing-bot");
        assert_eq!(
            report_of(&db, &id).classification().state.label(),
            "tool_use_unresolved"
        );
        let mut h = Harness::open(&db, write_opts("demo.db", NOW, size, dir.path())).unwrap();
        h.press("/billing-bot<Enter>R<Enter>");
        let (title, lines) = popup(&h);
        assert!(title.starts_with("Repair 83b5277a"), "{title}");
        for part in [
            "insert entry",
            "\"isError\":true",
            "update flue_sessions.data",
            "phase: 'tool_request_recorded' → 'before_provider'",
            "prediction: the runtime's next pass applies rule 5 → replacement",
        ] {
            assert!(lines.contains(part), "{part} missing:\n{lines}");
        }
        assert!(
            h.popup()
                .is_some_and(|p| p.kind == PopupKind::WriteConfirm && !p.yes_selected),
            "No is selected"
        );
        text.push_str(&format!("── {}x{} ──\n", size.0, size.1));
        text.push_str(&h.render());
        let state = db_state(&db);
        // ⏎ on the default button: nothing happens.
        h.press("<Enter>");
        assert!(h.popup_kind() == Some(PopupKind::WriteConfirm));
        assert!(h.status_text().unwrap().contains("No is selected"));
        assert_eq!(db_state(&db), state, "⏎ on No wrote something");
        // A answers Yes (y copies an id everywhere, so it never applies); the repair answers
        // calls `interrupted`, so a second confirmation lists them first, No selected again.
        h.press("A");
        let (title, lines) = popup(&h);
        assert_eq!(title, "Repair: side effects?", "{lines}");
        assert!(
            lines.contains("answered `interrupted`, but may already have run")
                && lines.contains("issued by attempt")
                && lines.contains("trace: "),
            "{lines}"
        );
        assert!(
            h.popup()
                .is_some_and(|p| p.kind == PopupKind::WriteConfirm && !p.yes_selected),
            "No is selected on the second confirmation"
        );
        h.press("<Enter>");
        assert_eq!(
            db_state(&db),
            state,
            "⏎ on No of the second confirmation wrote something"
        );
        h.press("A");
        let (title, lines) = popup(&h);
        assert!(title.starts_with("Repair applied"), "{title}\n{lines}");
        assert!(
            lines.contains("applied: 4 rows written · write lock held"),
            "{lines}"
        );
        assert!(lines.contains("audit #1"), "{lines}");
        assert!(
            lines.contains(
                "before → now: tool_use_unresolved · rule 6 → resume/tool_results · rule 5"
            ),
            "{lines}"
        );
        let r = report_of(&db, &id);
        assert_eq!(r.classification().state.label(), "resume/tool_results");
        assert_eq!(r.plan.rule, Some(5));
        // The list shows the new verdict (refreshed), and no "changed under you" banner for our write.
        let item = h
            .loaded_rows()
            .iter()
            .find(|i| i.row.submission_id == id)
            .unwrap();
        assert_eq!(item.verdict, "resume/tool_results");
        assert_eq!(item.rule, Some(5));
        assert!(h.banner().is_none(), "{:?}", h.banner());
        // The audit pane lists it.
        h.press("<Esc>a");
        assert_eq!(h.root(), turnscope_tui::Root::Audit);
        let rec = &h.audit_records()[0];
        assert_eq!(
            (
                rec.action.as_str(),
                rec.submission_id.as_str(),
                rec.operator.as_str()
            ),
            ("repair", id.as_str(), "tester@host")
        );
        let screen = h.render();
        assert!(
            screen.contains("tester@host") && screen.contains("83b5277a"),
            "{screen}"
        );
        if size == (160, 48) {
            let audit = mask(&screen);
            settings().bind(|| insta::assert_snapshot!("write_audit_pane", audit));
        }
        // a again (or esc) goes back.
        h.press("a");
        assert_eq!(h.root(), turnscope_tui::Root::Submissions);
        assert_eq!(audit_rows(&db).len(), 1);
        // Idempotent: a second repair has nothing to write.
        h.press("R<Enter>");
        let (title, _) = popup(&h);
        assert!(
            title.contains("refused") || title.contains("nothing to write"),
            "{title}"
        );
        h.press("A");
        assert_eq!(audit_rows(&db).len(), 1);
    }
    settings().bind(|| insta::assert_snapshot!("write_repair_confirm", text));
}

#[test]
fn fail_requires_a_reason_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "fail");
    let id = demo_id(&db, "sales-assist");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("/sales-assist<Enter>F");
    assert!(h.popup_kind() == Some(PopupKind::Reason));
    // Empty: refused in place.
    h.press("<Enter>");
    match h.popup() {
        Some(p) if p.kind == PopupKind::Reason => assert_eq!(
            p.error.as_deref(),
            Some("a reason is required to fail a submission")
        ),
        other => panic!("{other:?}"),
    }
    h.press("   <Enter>");
    assert!(
        h.popup()
            .is_some_and(|p| p.kind == PopupKind::Reason && p.error.is_some()),
        "blank is no reason"
    );
    let screen = h.render();
    assert!(screen.contains("a reason is required"), "{screen}");
    h.press("<C-u>customer gave up<BS>p");
    let screen = h.render();
    settings().bind(|| insta::assert_snapshot!("write_fail_reason", screen));
    h.press("<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Fail c2097c8e"), "{title}");
    assert!(lines.contains("reason: customer gave up"), "{lines}");
    assert!(lines.contains("status: 'running' → 'settled'"), "{lines}");
    h.press("<Tab><Enter>");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Fail applied"), "{title}");
    assert_eq!(
        audit_rows(&db),
        [(
            "fail".to_string(),
            id.clone(),
            Some("customer gave up".to_string()),
            "tester@host".to_string()
        )]
    );
    let r = report_of(&db, &id);
    assert_eq!(r.row().status, SubmissionStatus::Settled);
    assert!(r.row().error.is_some());
    // Esc in the reason input cancels: nothing written.
    h.press("<Esc>2g");
    h.press("F");
    h.press("why not<Esc>");
    assert!(h.popup().is_none());
    assert_eq!(audit_rows(&db).len(), 1);
}

#[test]
fn a_refusal_shows_its_reason_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "refuse");
    let before = db_state(&db);
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    // billing-bot's input was applied: the runtime never requeues after that.
    h.press("/billing-bot<Enter>Q<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Requeue refused"), "{title}");
    assert!(
        lines.contains("refused: the input was already applied to the session"),
        "{lines}"
    );
    assert!(
        lines.contains("instead: repair the tool batch, or fail it"),
        "{lines}"
    );
    assert!(lines.contains("nothing written."));
    let status = h.status_text().unwrap();
    assert!(
        status.starts_with("refused:") && status.contains("instead:"),
        "{status}"
    );
    let screen = h.render();
    assert!(screen.contains("Requeue refused"), "{screen}");
    h.press("A");
    assert!(h.popup().is_none());
    // A live lease is refused as well (the runtime owns it): open it from the running filter.
    h.press("<Esc>4");
    let live = h
        .loaded_rows()
        .iter()
        .find(|i| i.disposition.label() == "live")
        .map(|i| i.row.submission_id.clone())
        .expect("the demo has one submission under a live lease");
    h.press(&format!("/{}<Enter>R<Enter>", &live[..8]));
    let (_, lines) = popup(&h);
    assert!(lines.contains("the lease is live"), "{lines}");
    h.press("<Esc>");
    drop(h);
    assert_eq!(db_state(&db), before);
}

#[test]
fn a_change_between_preview_and_confirm_is_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "fence");
    let id = demo_id(&db, "billing-bot");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    h.press("/billing-bot<Enter><Enter>");
    assert!(h.opened_id().is_some(), "acting from the opened submission");
    h.press("R<Enter>");
    assert!(h.popup_kind() == Some(PopupKind::WriteConfirm));
    {
        // The runtime moves on meanwhile: a new journal revision.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE flue_agent_turn_journals SET revision = revision + 1 WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    }
    let after_external = db_state(&db);
    // Yes, then Yes on the calls it answers `interrupted`.
    h.press("AA");
    let (title, lines) = popup(&h);
    assert!(title.contains("changed since the preview"), "{title}");
    assert!(lines.contains("nothing written"), "{lines}");
    assert!(
        lines.contains("the turn journal changed (now tool_request_recorded, revision 4)"),
        "{lines}"
    );
    let status = h.status_text().unwrap();
    assert!(status.contains("changed since the preview"), "{status}");
    assert_eq!(db_state(&db), after_external, "nothing written");
    assert!(audit_rows(&db).is_empty());
    // The view was refreshed: a new preview is planned from the new state, and applies.
    h.press("<Esc>R<Enter>");
    let (_, lines) = popup(&h);
    assert!(lines.contains("revision: 4 → 5"), "{lines}");
    h.press("AA");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Repair applied"), "{title}");
}

#[test]
fn bulk_fail_previews_the_set_then_summarises() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "bulk");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    // The first three expired rows: completed (fail refused), advanced_past_input, tool_use_unresolved.
    let ids: Vec<String> = h.rows()[..3]
        .iter()
        .map(|it| it.row.submission_id.clone())
        .collect();
    h.press("g<Space><Space><Space>");
    assert_eq!(h.marked(), 3);
    let screen = h.render();
    assert!(
        screen.lines().next().unwrap().contains("3 marked"),
        "{screen}"
    );
    assert_eq!(screen.matches('●').count(), 3, "{screen}");
    // Unmark and mark again: space toggles.
    h.press("k<Space>");
    assert_eq!(h.marked(), 2);
    h.press("k<Space>");
    assert_eq!(h.marked(), 3);
    h.press("F");
    h.press("bulk cleanup<Enter>");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Fail 3 marked submissions?");
    assert!(
        lines
            .starts_with("3 marked: 2 will write (then 2 failed) · 0 nothing to write · 1 refused"),
        "{lines}"
    );
    // Grouped: the refusal's reason heads its group, then what to do instead, then who.
    let at = |s: &str| lines.find(s).unwrap_or_else(|| panic!("{s}: {lines}"));
    assert!(
        at("\nrefused: 1\n") < at("would discard that answer"),
        "{lines}"
    );
    assert!(
        at("would discard that answer") < at("    instead: settle it as completed"),
        "{lines}"
    );
    assert!(
        lines.contains(&format!(
            "    ✗ {} (weather-desk) · completed · rule 1",
            &ids[0][..8]
        )),
        "{lines}"
    );
    assert!(lines.contains("\nwill write: 2\n"), "{lines}");
    // Rows on demand: d shows each submission's rows, d hides them again.
    assert!(
        !lines.contains("\"type\":\"submission_interrupted\""),
        "{lines}"
    );
    h.press("d");
    let (_, rows) = popup(&h);
    assert!(
        rows.contains("\"type\":\"submission_interrupted\""),
        "{rows}"
    );
    h.press("d");
    assert_eq!(popup(&h).1, lines);
    let before = db_state(&db);
    h.press("<Enter>");
    assert_eq!(db_state(&db), before, "⏎ on No");
    h.press("A");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Fail: 2 applied · 1 refused");
    assert!(lines.starts_with("2 applied · 1 refused\n"), "{lines}");
    assert!(lines.contains("u undoes batch b"), "{lines}");
    let summary = mask_batch(&mask(&h.render()));
    settings().bind(|| insta::assert_snapshot!("write_bulk_summary", summary));
    assert!(h.marked() == 0, "marks are cleared after a bulk action");
    // The database: two settled with the runtime's error, the completed one untouched.
    let statuses: Vec<String> = ids
        .iter()
        .map(|id| report_of(&db, id).row().status.to_string())
        .collect();
    assert_eq!(statuses, ["running", "settled", "settled"]);
    // Each with the runtime's failure for the rule that applies to it (rule 3's timeout where
    // the deadline passed, rule 9's interruption otherwise).
    for id in &ids[1..] {
        let r = report_of(&db, id);
        let error = r.row().error.clone().unwrap();
        assert!(
            error == turnscope_core::recovery::reconciler::messages::TIMEOUT
                || error.contains("interrupted"),
            "{error}"
        );
    }
    let audit = audit_rows(&db);
    assert_eq!(audit.len(), 2);
    assert!(audit
        .iter()
        .all(|a| a.0 == "fail" && a.2.as_deref() == Some("bulk cleanup")));
}

#[test]
fn step_twice_through_rule_9_advisory_then_settlement() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "step");
    let id = demo_id(&db, "translator-eu");
    let entries = |db: &Path| {
        report_of(db, &id)
            .bundle
            .session
            .as_ref()
            .map_or(0, |s| s.entries.len())
    };
    let n0 = entries(&db);
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("/translator-eu<Enter>S<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Step 12e460b0"), "{title}");
    // Decision first: what the step writes, the prediction, then the next pass failing it
    // anyway with the way out, and only then the plan and the rows.
    assert!(
        lines.starts_with("step: rule 9, the next write of 3 left in the runtime's plan: append the submission_interrupted advisory signal"),
        "{lines}"
    );
    let at = |s: &str| lines.find(s).unwrap_or_else(|| panic!("{s}: {lines}"));
    assert!(
        at("\nprediction: ")
            < at("\nwarning: the runtime's next pass fails this submission anyway (rule 9")
    );
    assert!(at("\nway out: ") < at("runtime plan: "), "{lines}");
    assert!(
        at("runtime plan: ") < at("\"type\":\"submission_interrupted\""),
        "{lines}"
    );
    assert!(lines.contains("runtime plan: rule 9 → failed"), "{lines}");
    assert!(
        lines.contains("▶ 1. append the submission_interrupted advisory signal"),
        "{lines}"
    );
    assert!(lines.contains("    2. settle as failed"), "{lines}");
    assert!(
        lines.contains("\"type\":\"submission_interrupted\""),
        "{lines}"
    );
    let mut text = h.render();
    h.press("A");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Step applied"), "{title}");
    assert!(
        lines.contains(&format!("session: {n0} → {} entries", n0 + 1)),
        "{lines}"
    );
    // Numbered as the first step was: what is left in the plan the step reads.
    assert!(
        lines.contains(
            "next step: the next 2 writes of 2 left in the runtime's plan: settle as failed"
        ),
        "{lines}"
    );
    assert_eq!(h.popup_kind(), Some(PopupKind::NextStep));
    text.push_str(&mask(&h.render()));
    assert_eq!(entries(&db), n0 + 1);
    assert_eq!(report_of(&db, &id).row().status, SubmissionStatus::Running);
    // The operator stops here; S again later continues with the next write.
    h.press("<Esc>S<Enter>");
    let (_, lines) = popup(&h);
    assert!(lines.contains("▶ 1. settle as failed"), "{lines}");
    assert!(lines.contains("▶ 2. delete the stream chunks"), "{lines}");
    assert!(
        lines.starts_with("step: rule 9, the next 2 writes of 2 left in the runtime's plan"),
        "{lines}"
    );
    assert!(lines.contains("status: 'running' → 'settled'"), "{lines}");
    h.press("A");
    let (_, lines) = popup(&h);
    assert!(
        lines.contains("before → now: terminal_error · rule 9 → failed · failed"),
        "{lines}"
    );
    assert!(lines.contains("status: running → settled"), "{lines}");
    assert!(lines.contains("no writes left"), "{lines}");
    text.push_str(&mask(&h.render()));
    settings().bind(|| insta::assert_snapshot!("write_step", text));
    let r = report_of(&db, &id);
    assert_eq!(r.row().status, SubmissionStatus::Settled);
    assert_eq!(entries(&db), n0 + 1, "the advisory once");
    let audit = audit_rows(&db);
    assert_eq!(audit.len(), 2);
    assert!(audit.iter().all(|a| a.0 == "step"));
    // Nothing left to step.
    h.press("<Esc>2S<Enter>");
    let (title, _) = popup(&h);
    assert!(title.contains("refused"), "{title}");
}

/// `w` switches to write mode in place (after a confirm whose No is selected), keeping the
/// screen; `w` again goes back to read-only; with no operator to record, it is refused with
/// the reason, and a database opened immutable says it takes no writes.
#[test]
fn w_switches_write_mode_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("2j<Enter>");
    let opened = h.opened_id().expect("a submission is open");
    assert!(h.render().contains("READ-ONLY"));
    h.press("R");
    assert!(h
        .status_text()
        .unwrap_or_default()
        .contains("press w (write mode)"));
    h.press("w");
    let screen = h.render();
    assert!(
        screen.contains("Switch to write mode?") && screen.contains("audited as tester@host"),
        "{screen}"
    );
    // ⏎ on the selected No: still read-only.
    h.press("<Enter>");
    assert!(h.render().contains("READ-ONLY"));
    h.press("wA");
    let screen = h.render();
    assert!(
        screen.contains(" WRITE ") && !screen.contains("READ-ONLY"),
        "{screen}"
    );
    assert_eq!(
        h.opened_id().as_deref(),
        Some(opened.as_str()),
        "the place is kept"
    );
    assert!(h
        .status_text()
        .unwrap_or_default()
        .contains("write mode as tester@host"));
    // A write key now plans (its preview opens).
    h.press("C");
    assert!(h.popup().is_some(), "{}", h.render());
    h.press("<Esc>");
    h.press("w");
    assert!(h.render().contains("READ-ONLY"));
    // Nobody to record: refused with the reason.
    let mut o = opts("demo.db", NOW, (160, 48), dir.path());
    o.write_refusal = Some("no operator: pass --operator NAME".into());
    let mut h = Harness::open(&db, o).unwrap();
    h.press("w");
    assert!(h.popup().is_none());
    assert!(h
        .status_text()
        .unwrap_or_default()
        .contains("write mode is not available: no operator"));
    assert!(h.render().contains("READ-ONLY"));
}

/// Ten marked rows reconciled: the preview is grouped (about twenty lines, not a dump of every
/// row), "nothing to write" is its own group and never called refused, before the apply and
/// after it.
#[test]
fn bulk_reconcile_is_grouped_and_nothing_to_write_is_never_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "bulk-reconcile");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (80, 24), dir.path())).unwrap();
    // The first ten expired rows: six with writes (rules 1, 2, 3, 9), four rule 5.
    h.press("g");
    for _ in 0..10 {
        h.press("<Space>");
    }
    h.press("C<Enter>");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Reconcile 10 marked submissions?");
    assert!(
        lines.starts_with(
            "10 marked: 6 will write (then 4 failed, 2 completed) · 4 nothing to write · 0 refused"
        ),
        "{lines}"
    );
    assert!(
        lines.contains("\nnothing to write: 4\n  4 · nothing to write\n"),
        "{lines}"
    );
    assert!(!lines.contains("refused:"), "{lines}");
    assert!(
        lines.lines().count() <= 30,
        "{} lines:\n{lines}",
        lines.lines().count()
    );
    // Each submission's rows on demand.
    h.press("d");
    let (_, rows) = popup(&h);
    assert!(rows.lines().count() > 60, "{rows}");
    assert!(rows.contains("status: 'running' → 'settled'"), "{rows}");
    h.press("d");
    let mut text = h.render();
    h.press("A");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Reconcile: 6 applied · 4 nothing to write");
    assert!(!lines.contains("refused"), "{lines}");
    assert!(
        h.status_text().unwrap() == "reconcile: 6 applied · 4 nothing to write",
        "{:?}",
        h.status_text()
    );
    text.push_str(&mask_batch(&mask(&h.render())));
    settings().bind(|| insta::assert_snapshot!("write_bulk_reconcile_80x24", text));
}

/// A batch holding a direct prompt's settlement says before the apply which of its writes cannot
/// be undone (the terminal event reaches the stream's subscribers), and its result offers no undo.
#[test]
fn a_bulk_that_publishes_says_which_rows_cannot_be_undone() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "bulk-publish");
    let support = demo_id(&db, "support-7");
    let sales = demo_id(&db, "sales-assist");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    for id in [&support, &sales] {
        h.press(&format!("/{}<Enter><Space><Esc>", &id[..8]));
    }
    assert_eq!(h.marked(), 2);
    h.press("C<Enter>");
    let (_, lines) = popup(&h);
    let warning = format!(
        "warning: cannot be undone as a batch: 1 of 2 writes append a direct prompt's terminal event to its event stream, where subscribers may read it at once ({})",
        &support[..8]
    );
    assert!(lines.contains(&warning), "{lines}");
    // Said before the groups and their rows.
    assert!(
        lines.find(&warning).unwrap() < lines.find("will write: 2").unwrap(),
        "{lines}"
    );
    h.press("A");
    let (_, lines) = popup(&h);
    assert!(
        lines.contains(&format!(
            "undo: not possible: {} appended a terminal event",
            &support[..8]
        )),
        "{lines}"
    );
    assert!(!lines.contains("u undoes"), "{lines}");
}

/// One direct prompt failed: its terminal event goes to the stream's subscribers, and the
/// dialog says, with the warnings and before the rows, that the write cannot be undone.
#[test]
fn a_single_write_that_publishes_says_it_cannot_be_undone() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "single-publish");
    let id = demo_id(&db, "support-7");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press(&format!("/{}<Enter>F", &id[..8]));
    h.press("gave up<Enter>");
    let (_, lines) = popup(&h);
    let warning = format!(
        "warning: cannot be undone: the write appends a direct prompt's terminal event to its event stream, where subscribers may read it at once ({})",
        &id[..8]
    );
    assert!(lines.contains(&warning), "{lines}");
    assert!(
        lines.find(&warning).unwrap() < lines.find("writes, in one fenced transaction").unwrap(),
        "{lines}"
    );
    h.press("A");
    let (_, lines) = popup(&h);
    assert!(lines.contains("undo: not possible"), "{lines}");
}

/// After a write the app keeps following the submission: once the runtime acts on its row, the
/// RULE cell is marked `✓` (or `✗`) and the preview and the status line say what it did beside
/// what was predicted after the write.
#[test]
fn after_a_write_the_row_says_whether_the_runtime_did_what_was_predicted() {
    let dir = tempfile::tempdir().unwrap();
    for (case, runtime_sql, mark) in [
        // The runtime's replacement of the attempt: rule 5, as the repair's prediction said.
        (
            "as-predicted",
            "UPDATE flue_agent_submissions SET attempt_id = 'attempt-2', attempt_count = attempt_count + 1, lease_expires_at = lease_expires_at + 86400000 WHERE submission_id = ?1",
            "✓",
        ),
        // A worker alive after all renews the lease under the same attempt: no rule fired.
        (
            "not-as-predicted",
            "UPDATE flue_agent_submissions SET lease_expires_at = lease_expires_at + 86400000 WHERE submission_id = ?1",
            "✗",
        ),
    ] {
        let db = demo_copy(dir.path(), &format!("acted-{case}"));
        let id = demo_id(&db, "billing-bot");
        let mut h = Harness::open(&db, write_opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
        h.press("/billing-bot<Enter>R<Enter>");
        h.press("A");
        h.press("A");
        let (title, _) = popup(&h);
        assert!(title.starts_with("Repair applied"), "{title}");
        h.press("<Esc>");
        // Nothing happened yet: no mark.
        h.refresh();
        assert!(!h.render().contains(&format!("replacement {mark}")), "{case}");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(runtime_sql, [&id])
            .unwrap();
        h.refresh();
        let status = h.status_text().unwrap_or_default();
        assert!(status.contains(&format!("{mark} the runtime did")), "{case}: {status}");
        let screen = h.render();
        assert!(screen.contains(&format!(" {mark}")), "{case}:\n{screen}");
        assert!(screen.contains("runtime"), "{case}:\n{screen}");
        if mark == "✓" {
            assert!(status.contains("rule 5 → replacement") && status.contains("as predicted"), "{status}");
        } else {
            assert!(status.contains("lease_renewed") && status.contains("predicted rule 5"), "{status}");
        }
    }
}
