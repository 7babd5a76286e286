//! A kept plan is the live plan: for rows on every side of the step table's edges (status, lease,
//! deadline, abort, budget, attempt, inspection failure), over histories that reach each repair
//! (a partial batch, a ghost, an absent input, a completed answer, no conversation of its own),
//! the facts taken at one clock plan exactly as `plan_flue2` does at every other clock.

use super::*;
use crate::flue2::classify::{classify_conversation_submission, Flue2Variant};
use crate::flue2::reconciler::tests::{batch_one_of_three, row, Log, NOW, SUB};
use crate::flue2::reconciler::{plan_flue2, Flue2Step};

/// The histories: each reaches a different part of what the steps read.
fn logs() -> Vec<(&'static str, Log)> {
    let mut ghost = Log::new();
    let input = ghost.input(SUB, "null");
    ghost.ghost("entry_g", &input, "half");
    let mut done = Log::new();
    let input = done.input(SUB, "null");
    done.assistant("entry_a1", &input, "stop", &[], None);
    let mut absent = Log::new();
    absent.input("sub_other", "null");
    let mut elsewhere = Log::scoped("other", "s");
    elsewhere.input("sub_other", "null");
    vec![
        ("batch", batch_one_of_three()),
        ("ghost", ghost),
        ("completed", done),
        ("absent", absent),
        ("elsewhere", elsewhere),
    ]
}

/// The rows: the default expired running row, changed one column at a time.
fn rows() -> Vec<(&'static str, crate::flue2::Flue2SubmissionRow)> {
    let base = row();
    let with = |f: &dyn Fn(&mut crate::flue2::Flue2SubmissionRow)| {
        let mut r = base.clone();
        f(&mut r);
        r
    };
    vec![
        ("expired", base.clone()),
        ("held", with(&|r| r.lease_expires_at = NOW + 20_000)),
        ("no lease", with(&|r| r.lease_expires_at = 0)),
        ("deadline soon", with(&|r| r.timeout_at = NOW + 10_000)),
        ("abort", with(&|r| r.abort_requested_at = Some(5))),
        ("budget", with(&|r| r.attempt_count = 10)),
        ("no attempt", with(&|r| r.attempt_id = None)),
        ("queued", with(&|r| r.status = "queued".into())),
        ("settled", with(&|r| r.status = "settled".into())),
        (
            "terminalizing",
            with(&|r| {
                r.status = "terminalizing".into();
                r.lease_expires_at = NOW + 5_000;
                r.settlement_record_id = Some("record_x".into());
                r.settlement_record = Some(r#"{"id":"record_x","outcome":"failed"}"#.into());
            }),
        ),
    ]
}

#[test]
fn kept_facts_plan_as_the_fold_does_at_every_clock() {
    // Before the lease ends, between it and the deadline, past the deadline, far past.
    let clocks = [
        NOW - 30_000,
        NOW,
        NOW + 15_000,
        NOW + 25_000,
        NOW + 7_200_000,
    ];
    let joined = vec!["sub_joined".to_string()];
    let mut steps: Vec<Flue2Step> = Vec::new();
    for (log_name, log) in logs() {
        let state = log.state();
        for (row_name, r) in rows() {
            let scope = if log_name == "elsewhere" {
                None
            } else {
                state.conversation_for_scope("default", "default")
            };
            let classified = classify_conversation_submission(
                scope,
                &r.input_entry_id(),
                0,
                Flue2Variant::LATEST,
            );
            let classification = match &classified {
                Ok(c) => Ok(c),
                Err(_) => Err((InspectFailure::ClassifierThrows, "throws")),
            };
            for failure in [None, Some(InspectFailure::Unloadable)] {
                let classification = match failure {
                    Some(f) => Err((f, "cannot load")),
                    None => classification,
                };
                let input = |now_ms| ReconcileInput {
                    row: &r,
                    instance: Some(&state),
                    conversation: scope,
                    classification,
                    joined: &joined,
                    now_ms,
                    variant: Flue2Variant::LATEST,
                };
                // Taken at the first clock, asked at every one.
                let facts = PlanFacts::of(&input(clocks[0]));
                for now in clocks {
                    let live = plan_flue2(&input(now));
                    let kept = facts.plan(&r, classification, &joined, now);
                    assert_eq!(kept, live, "{log_name}, {row_name}, {failure:?}, at {now}");
                    steps.push(live.step);
                }
            }
        }
    }
    // The comparison went through every step a kept fact feeds.
    for s in [
        Flue2Step::Completed,
        Flue2Step::Abort,
        Flue2Step::Budget,
        Flue2Step::Timeout,
        Flue2Step::Replace,
        Flue2Step::Requeue,
        Flue2Step::Inspect,
        Flue2Step::FinalizeSettlement,
        Flue2Step::LeaseHeld,
    ] {
        assert!(steps.contains(&s), "no case reached {s:?}");
    }
}

#[test]
fn a_row_that_reads_no_conversation_keeps_nothing() {
    let log = batch_one_of_three();
    let state = log.state();
    let mut r = row();
    r.status = "settled".into();
    let facts = PlanFacts::of(&ReconcileInput {
        row: &r,
        instance: Some(&state),
        conversation: state.conversation_for_scope("default", "default"),
        classification: Err((InspectFailure::Unloadable, "x")),
        joined: &[],
        now_ms: NOW,
        variant: Flue2Variant::LATEST,
    });
    assert!(facts.settle.is_none() && facts.terminal.is_none() && facts.resume.is_none());
}
