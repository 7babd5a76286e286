//! Tests of 2.x health: each finding kind on a record log folded as the runtime folds it, and
//! nothing on a healthy one; the next submission's repairs computed by the resume port.

use super::*;
use crate::flue2::reconciler::tests::{batch_one_of_three, Log, SUB};
use crate::flue2::writes::Flue2Write;

fn findings(log: &Log) -> Vec<Finding> {
    let state = log.state();
    conversation_findings(state.conversation_for_scope("default", "default").unwrap())
}

fn kinds(f: &[Finding]) -> Vec<&'static str> {
    f.iter().map(|f| f.hazard.kind()).collect()
}

#[test]
fn a_completed_turn_is_healthy() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "stop", &[], None);
    assert!(findings(&l).is_empty());
}

#[test]
fn a_batch_at_the_leaf_with_one_outcome_recorded_is_unresolved_with_two_missing() {
    let f = findings(&batch_one_of_three());
    assert_eq!(kinds(&f), ["unresolved_calls"]);
    let Hazard::UnresolvedCalls {
        assistant,
        calls,
        missing,
        recorded,
        at_leaf,
        later_entries,
        trailing,
        ..
    } = &f[0].hazard
    else {
        unreachable!()
    };
    assert_eq!(assistant.entry, "entry_a1");
    assert_eq!(assistant.position, 1);
    assert_eq!(calls.len(), 3);
    assert_eq!(missing, &["tc1", "tc2"]);
    assert_eq!(*recorded, 1);
    assert!(*at_leaf && *trailing);
    assert_eq!(*later_entries, 0);
    assert_eq!(f[0].submission.as_deref(), Some(SUB));
}

#[test]
fn the_next_submission_marker_settles_a_batch_left_at_the_leaf() {
    let state = batch_one_of_three().state();
    let conv = state.conversation_for_scope("default", "default").unwrap();
    let actions = next_submission_repairs(conv, Flue2Variant::LATEST);
    assert_eq!(actions.len(), 1, "{actions:?}");
    let ResumeAction::SettleBatchBeforeInput {
        write:
            Flue2Write::MarkerSettleBatch {
                assistant_entry_id,
                kept,
                markers,
                ..
            },
    } = &actions[0]
    else {
        panic!("{actions:?}")
    };
    assert_eq!(assistant_entry_id, "entry_a1");
    assert_eq!(kept, &["tc0"]);
    assert_eq!(
        markers.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["tc1", "tc2"]
    );
}

#[test]
fn a_ghost_is_an_in_progress_assistant_without_a_stop_reason_and_the_next_submission_converges_it()
{
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g1", &input, "half an ans");
    let f = findings(&l);
    assert_eq!(kinds(&f), ["in_progress_assistant"]);
    let Hazard::InProgressAssistant { at, stop_reason } = &f[0].hazard else {
        unreachable!()
    };
    assert_eq!((at.entry.as_str(), at.position), ("entry_g1", 1));
    assert_eq!(stop_reason, &None);
    let state = l.state();
    let conv = state.conversation_for_scope("default", "default").unwrap();
    let actions = next_submission_repairs(conv, Flue2Variant::LATEST);
    assert!(
        matches!(&actions[..], [ResumeAction::Converge { write: Flue2Write::ConvergeGhost { message_id, .. } }] if message_id == "entry_g1"),
        "{actions:?}"
    );
}

#[test]
fn nothing_to_repair_for_the_next_submission_on_a_healthy_leaf() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "stop", &[], None);
    let state = l.state();
    let conv = state.conversation_for_scope("default", "default").unwrap();
    assert!(next_submission_repairs(conv, Flue2Variant::LATEST).is_empty());
}

#[test]
fn a_continued_aborted_partial_is_dropped_by_pi_ai() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "aborted", &[], None);
    l.push(
        r#""type":"signal","messageId":"entry_s1","parentId":"entry_a1","signalType":"stream_interrupted","content":"x""#,
        Some(SUB),
    );
    l.push(
        r#""type":"signal","messageId":"entry_s2","parentId":"entry_s1","signalType":"stream_continued","content":"x""#,
        Some(SUB),
    );
    let f = findings(&l);
    assert_eq!(kinds(&f), ["dropped_partial"], "{f:?}");
    let Hazard::DroppedPartial {
        partial,
        continued,
        partial_chars,
    } = &f[0].hazard
    else {
        unreachable!()
    };
    assert_eq!(partial.entry, "entry_a1");
    assert_eq!(continued.entry, "entry_s2");
    assert_eq!(*partial_chars, "hello".len());
}

#[test]
fn an_aborted_partial_without_the_signals_is_left_out_without_a_finding() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "aborted", &[], None);
    assert!(findings(&l).is_empty());
}

#[test]
fn a_batch_committed_whole_is_healthy_and_a_call_id_reused_later_is_a_duplicate() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant("entry_a1", &input, "toolUse", &[("tc0", "fetch")], None);
    l.outcome("entry_a1", "tc0", "fetch");
    l.push(
        r#""type":"tool_results_committed","assistantMessageId":"entry_a1","parentId":"entry_a1","outcomeIds":["r9"]"#,
        Some(SUB),
    );
    assert!(findings(&l).is_empty(), "{:?}", findings(&l));
    let leaf = format!(
        "entry_tool_result_{}_{}",
        crate::flue2::classify::encode_canonical_id("entry_a1"),
        crate::flue2::classify::encode_canonical_id("tc0")
    );
    l.assistant("entry_a2", &leaf, "toolUse", &[("tc0", "fetch")], None);
    let f = findings(&l);
    assert_eq!(
        kinds(&f),
        ["duplicate_call_id", "unresolved_calls"],
        "{f:?}"
    );
    let Hazard::DuplicateCallId {
        assistants,
        same_batch,
        ..
    } = &f[0].hazard
    else {
        unreachable!()
    };
    assert_eq!(
        assistants
            .iter()
            .map(|a| a.entry.as_str())
            .collect::<Vec<_>>(),
        ["entry_a1", "entry_a2"]
    );
    assert!(!same_batch);
}
