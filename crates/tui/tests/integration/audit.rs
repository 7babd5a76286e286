//! The audit trail (`a`): what it says before any write, where it returns to, and that a recorded
//! action opens its submission.

use super::*;

#[test]
fn audit_trail_toggles_and_returns_to_where_it_was_opened() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (120, 30));
    h.press("a");
    assert_eq!(h.root(), Root::Audit);
    assert_eq!(h.focus(), Pane::Audit);
    let screen = h.render();
    assert!(
        screen.contains("no turnscope action was ever applied to this database"),
        "{screen}"
    );
    assert!(h.audit_records().is_empty());
    h.press("a");
    assert_eq!(h.root(), Root::Submissions);
    assert_eq!(h.focus(), Pane::List);
    // Opened from the sessions view, esc goes back there.
    h.press("sa");
    assert_eq!(h.root(), Root::Audit);
    h.press("<Esc>");
    assert_eq!(h.root(), Root::Sessions);
    assert_eq!(h.focus(), Pane::Sessions);
}

#[test]
fn an_audited_action_opens_its_submission() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_copy(dir.path(), "audit");
    let id = demo_id(&db, "sales-assist");
    let mut h = Harness::open(&db, write_opts("demo.db", NOW, (120, 30), dir.path())).unwrap();
    h.press("/sales-assist<Enter>F");
    h.press("customer gave up<Enter><Tab><Enter>");
    let (title, _) = popup(&h);
    assert!(title.starts_with("Fail applied"), "{title}");
    h.press("<Esc>a");
    assert_eq!(h.root(), Root::Audit);
    let recorded: Vec<(&str, &str)> = h
        .audit_records()
        .iter()
        .map(|a| (a.action.as_str(), a.submission_id.as_str()))
        .collect();
    assert_eq!(recorded, [("fail", id.as_str())]);
    assert_eq!(h.selected_id().as_deref(), Some(id.as_str()));
    let screen = h.render();
    assert!(screen.contains("customer gave up"), "{screen}");
    h.press("<Enter>");
    assert_eq!(h.opened_id().as_deref(), Some(id.as_str()));
    assert_eq!(h.focus(), Pane::Tree);
    // Back from the submission: the audit trail again.
    h.press("<Esc>");
    assert!(h.opened_id().is_none());
    assert_eq!((h.root(), h.focus()), (Root::Audit, Pane::Audit));
}
