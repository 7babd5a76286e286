//! Tests of 2.x cost and attempts on record logs folded as the runtime folds them: the sums are
//! the usage the log's completions carry (10 in, 5 out, 15 in all each: `Log::assistant`).

use super::*;
use crate::flue2::reconciler::tests::{batch_one_of_three, Log, SUB};

#[test]
fn the_cost_sums_every_completed_assistant_of_the_submission_and_counts_ghosts_apart() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "aborted", &[], None);
    l.ghost("entry_g1", "entry_a1", "more");
    let state = l.state();
    let conv = state.conversation_for_scope("default", "default").unwrap();
    let c = submission_cost(conv, &[SUB]);
    assert_eq!(c.aborted.assistants, 1);
    assert_eq!(
        (c.aborted.input, c.aborted.output, c.aborted.total_tokens),
        (10, 5, 15)
    );
    // No `cost` object in the stored usage: counted, marked incomplete.
    assert_eq!(c.aborted.incomplete, 1);
    assert_eq!(c.active.assistants, 0);
    assert_eq!(c.in_progress, 1);
    assert_eq!(c.total().total_tokens, 15);
    // Another submission's cost is not this one's.
    assert_eq!(submission_cost(conv, &["sub_other"]).total().assistants, 0);
}

#[test]
fn a_tool_batch_is_on_the_active_path() {
    let state = batch_one_of_three().state();
    let conv = state.conversation_for_scope("default", "default").unwrap();
    let c = submission_cost(conv, &[SUB]);
    assert_eq!(
        (c.active.assistants, c.active.input, c.active.output),
        (1, 10, 5)
    );
    assert_eq!(c.abandoned.assistants + c.aborted.assistants, 0);
}

#[test]
fn usage_figures_read_the_five_counts_and_the_cost_total() {
    let u = serde_json::json!({"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"total":0.5}});
    assert_eq!(
        usage_figures(Some(&u)),
        Some([1.0, 2.0, 3.0, 4.0, 10.0, 0.5])
    );
    assert_eq!(usage_figures(Some(&serde_json::json!("x"))), None);
    assert_eq!(usage_figures(None), None);
}

#[test]
fn an_attempt_says_how_far_it_got() {
    let log = batch_one_of_three();
    let mut a = AttemptLog::new(SUB);
    for r in log.parsed() {
        a.push(&r);
    }
    let attempts = a.finish();
    assert_eq!(attempts.len(), 1);
    let a = &attempts[0];
    assert_eq!(a.attempt_id, "att_1");
    assert!(a.input_appended);
    assert_eq!(a.provider_started, 1);
    assert_eq!(a.completed, ["toolUse"]);
    assert_eq!((a.tool_calls, a.outcomes, a.commits), (3, 1, 0));
    assert_eq!(a.unfinished, 0);
    assert_eq!(a.usage.total_tokens, 15);
    assert!(!a.settled);
}

#[test]
fn a_ghost_is_an_unfinished_message_of_its_attempt_and_other_submissions_are_skipped() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g1", &input, "half");
    let mut a = AttemptLog::new(SUB);
    let mut other = AttemptLog::new("sub_other");
    for r in l.parsed() {
        a.push(&r);
        other.push(&r);
    }
    let attempts = a.finish();
    assert_eq!(attempts[0].unfinished, 1);
    assert_eq!(attempts[0].provider_started, 1);
    assert!(attempts[0].completed.is_empty());
    assert!(other.finish().is_empty());
}
