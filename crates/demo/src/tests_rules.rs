//! Checks that every stuck scenario leads where its doc comment says, using turnscope's own store,
//! classifier and planner on the written file (the classifier and planner are themselves checked
//! against the runtime's vectors, fixtures and resume reports; the scenarios were also checked
//! against the real runtime once, see the module docs).

use turnscope_core::journal::entry::Role;
use turnscope_core::recovery::reconciler::Disposition;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, RowFilter, SqliteStore};

use crate::testing::{TempDb, NOW};

/// (instance, classification, reconciler rule) of every expired running submission.
const EXPECTED: [(&str, &str, u8); 22] = [
    ("guild-42", "absent", 7),
    ("onboarding-17", "absent", 7),
    ("support-7", "absent", 9),
    ("ci-runner-5", "advanced_past_input", 9),
    ("sales-assist", "advanced_past_input", 9),
    ("weather-desk", "completed", 1),
    ("alice-laptop", "completed", 1),
    ("research-lab", "completed+overflow", 1),
    ("billing-bot", "tool_use_unresolved", 6),
    ("etl-nightly", "tool_use_unresolved", 3),
    ("translator-eu", "terminal_error", 9),
    ("newsroom-2", "resume/input_only", 5),
    ("dana-phone", "resume/input_only", 5),
    ("pdf-render-1", "resume/input_only", 2),
    ("intake-form", "resume/input_only", 8),
    ("legal-review", "resume/overflow", 5),
    ("status-page", "resume/transient_retry", 5),
    ("docs-bot", "resume/stream_continuation", 5),
    ("warehouse-3", "resume/tool_results", 5),
    ("travel-desk", "resume/tool_results_partial", 6),
    ("crm-sync", "resume/tool_results_partial", 5),
    ("podcast-notes", "resume/aborted_partial", 4),
];

fn label(r: &SubmissionReport) -> String {
    match &r.classification().state {
        turnscope_core::recovery::classify::SubmissionState::Completed {
            overflow: true, ..
        } => "completed+overflow".into(),
        s => s.label(),
    }
}

#[test]
fn every_stuck_row_reaches_its_documented_rule() {
    let (t, _c) = TempDb::written("rules");
    let store = SqliteStore::open(&t.0).expect("open demo");
    let stuck = store
        .list_submissions(RowFilter::Expired, NOW)
        .expect("list");
    assert_eq!(stuck.len(), EXPECTED.len());
    let mut rules_seen = [false; 10];
    for row in &stuck {
        let instance = row.instance_id().expect("instance");
        let (_, class, rule) = EXPECTED
            .iter()
            .find(|e| e.0 == instance)
            .unwrap_or_else(|| panic!("unexpected stuck {instance}"));
        let r =
            SubmissionReport::load(&store, &row.submission_id, Some(200_000), NOW).expect("load");
        assert_eq!(
            (label(&r), r.plan.rule),
            (class.to_string(), Some(*rule)),
            "{instance}: {}",
            r.plan.reason
        );
        rules_seen[*rule as usize] = true;
    }
    assert!(
        rules_seen[1..].iter().all(|s| *s),
        "every rule 1-9 is exercised"
    );
}

#[test]
fn every_kind_mode_and_phase_is_present() {
    let (t, _c) = TempDb::written("kinds");
    let store = SqliteStore::open(&t.0).expect("open demo");
    let mut labels = std::collections::BTreeSet::new();
    let mut phases = std::collections::BTreeSet::new();
    let mut dispositions = std::collections::BTreeSet::new();
    for row in store.list_submissions(RowFilter::All, 0).expect("list") {
        let r =
            SubmissionReport::load(&store, &row.submission_id, Some(200_000), NOW).expect("load");
        if matches!(r.plan.disposition, Disposition::Reconcile) {
            labels.insert(r.classification().state.label());
            phases.insert(
                r.bundle
                    .journal
                    .as_ref()
                    .map_or("none".to_string(), |j| j.phase.to_string()),
            );
        }
        dispositions.insert(r.plan.disposition.label());
    }
    for kind in [
        "absent",
        "advanced_past_input",
        "completed",
        "tool_use_unresolved",
        "terminal_error",
    ] {
        assert!(labels.contains(kind), "{kind} missing from {labels:?}");
    }
    for mode in turnscope_core::recovery::classify::ResumeMode::ALL {
        assert!(
            labels.contains(&format!("resume/{}", mode.as_str())),
            "{mode:?} missing"
        );
    }
    for phase in [
        "none",
        "before_provider",
        "provider_started",
        "tool_request_recorded",
        "committed",
    ] {
        assert!(phases.contains(phase), "{phase} missing from {phases:?}");
    }
    for d in [
        "stuck",
        "live",
        "pending",
        "publishing",
        "completed",
        "failed",
    ] {
        assert!(
            dispositions.contains(d),
            "{d} missing from {dispositions:?}"
        );
    }
}

#[test]
fn repaired_session_has_the_repair_branch() {
    let (t, _c) = TempDb::written("repair");
    let store = SqliteStore::open(&t.0).expect("open demo");
    let row = store
        .list_submissions(RowFilter::All, 0)
        .expect("list")
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some("shop-eu") && r.attempt_count == 2)
        .expect("the repaired submission");
    let r = SubmissionReport::load(&store, &row.submission_id, Some(200_000), NOW).expect("load");
    let following = r.following().expect("input on the active path");
    let roles: Vec<Role> = following
        .iter()
        .map(|e| e.message().expect("message").role.clone())
        .collect();
    use Role::*;
    assert_eq!(
        roles,
        [Assistant, ToolResult, ToolResult, ToolResult, Assistant]
    );
    let texts: Vec<String> = following[1..4]
        .iter()
        .map(|e| e.message().expect("m").text())
        .collect();
    assert!(
        texts[0].contains("ch_3P1042")
            && texts[1].contains("interrupted")
            && texts[2].contains("interrupted")
    );
    assert_eq!(r.classification().state.label(), "completed");
    // The original partial result stays in the table on an abandoned branch, byte-identical message.
    let h = r.history.as_ref().expect("history");
    let branches = h.abandoned_branches();
    assert_eq!(branches.len(), 1, "{branches:?}");
    let (anchor, members) = &branches[0];
    assert_eq!(
        h.entries[anchor.expect("anchored")].id,
        following[0].id,
        "branches from the assistant"
    );
    let original = &h.entries[members[0]];
    let copy = following[1];
    let message = |raw: &str| {
        serde_json::from_str::<serde_json::Value>(raw).expect("json")["message"].to_string()
    };
    assert_eq!(message(&original.raw), message(&copy.raw), "verbatim copy");
}
