//! The 2.x next request over record logs folded as the runtime folds them: what recovery writes
//! first is marked, and the context builder and the library drop what they drop. The real
//! runtime's requests are compared in `tests/integration/runtime2_next_request.rs`.

use super::*;
use crate::flue2::classify::{classify_conversation_submission, Flue2Variant};
use crate::flue2::reconciler::tests::{batch_one_of_three, row, Log, NOW, SUB};
use crate::flue2::reconciler::{plan_flue2, ReconcileInput};
use crate::recovery::next_request::{HazardKind, Source};

fn view(row: &Flue2SubmissionRow, log: &Log) -> Flue2NextRequest {
    let state = log.state();
    let conv = state.conversation_for_scope("default", "default");
    let c = classify_conversation_submission(conv, &row.input_entry_id(), 0, Flue2Variant::LATEST)
        .unwrap();
    let plan = plan_flue2(&ReconcileInput {
        row,
        instance: Some(&state),
        conversation: conv,
        classification: Ok(&c),
        joined: &[],
        now_ms: NOW,
        variant: Flue2Variant::LATEST,
    });
    flue2_next_request(row, conv, Ok(&c), &plan)
}

fn roles(v: &Flue2NextRequest) -> Vec<String> {
    v.request
        .messages
        .iter()
        .map(|m| m.message["role"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_repaired_batch_is_sent_whole_with_the_recorded_outcome_kept_and_markers_for_the_rest() {
    let v = view(&row(), &batch_one_of_three());
    assert_eq!(v.request.turn, Turn::Continue);
    assert_eq!(
        roles(&v),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "toolResult"
        ]
    );
    assert_eq!(v.request.recovery, [("tool_repair", 3)]);
    let written: Vec<_> = v.request.messages[2..]
        .iter()
        .map(|m| match &m.source {
            Source::Recovery {
                written: Written::ToolRepair { copied_from },
            } => copied_from.is_some(),
            other => panic!("{other:?}"),
        })
        .collect();
    // tc0's outcome was recorded: committed as recorded; tc1 and tc2 get markers.
    assert_eq!(written, [true, false, false]);
    let h: Vec<HazardKind> = v.request.hazards.iter().map(|h| h.kind).collect();
    assert_eq!(h, [HazardKind::InterruptedResults]);
    assert_eq!(v.request.hazards[0].calls.len(), 2);
    assert_eq!(v.stored_entries, 2);
}

#[test]
fn a_converged_ghost_with_text_is_continued_and_kept_but_the_library_drops_it() {
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.ghost("entry_g", &input, "partial text");
    let v = view(&row(), &l);
    assert_eq!(v.request.turn, Turn::Continue);
    // The runtime keeps the aborted partial before its two signals; pi-ai drops it.
    assert_eq!(roles(&v), ["user", "user", "user"]);
    assert_eq!(
        v.request.recovery,
        [("converge", 1), ("stream_recovery", 2)]
    );
    assert_eq!(
        v.request.hazards[0].kind,
        HazardKind::ContinuationWithoutPartial
    );
}

#[test]
fn no_call_where_the_plan_settles_or_the_resume_fails() {
    // Attempts spent: step 4 settles it failed; no resume, no model call.
    let mut r = row();
    r.attempt_count = 10;
    let v = view(&r, &batch_one_of_three());
    assert!(matches!(&v.request.turn, Turn::NoCall { reason } if reason.contains("4 budget")));
    assert!(v.resume.is_none());
    // Its writes are on the path the next input starts from: the batch settled with markers for
    // tc1 and tc2 (tc0's recorded outcome kept), then the submission_interrupted signal.
    assert_eq!(
        roles(&v),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "toolResult",
            "user"
        ]
    );
    assert_eq!(v.request.recovery, [("tool_repair", 3), ("advisory", 1)]);
    let h: Vec<HazardKind> = v.request.hazards.iter().map(|h| h.kind).collect();
    assert_eq!(h, [HazardKind::InterruptedResults]);
    // A terminal error: the resume fails with its text before any call.
    let mut l = Log::new();
    let input = l.input(SUB, "null");
    l.assistant(
        "entry_e",
        &input,
        "error",
        &[],
        Some("invalid_request_error: bad"),
    );
    let v = view(&row(), &l);
    assert!(
        matches!(&v.request.turn, Turn::NoCall { reason } if reason.contains("invalid_request_error: bad")),
        "{:?}",
        v.request.turn
    );
}

#[test]
fn a_requeued_input_is_appended_by_the_next_claim() {
    let l = Log::new();
    let mut r = row();
    r.input_applied_at = None;
    let v = view(&r, &l);
    assert_eq!(v.request.turn, Turn::Continue);
    assert_eq!(roles(&v), ["user"]);
    assert_eq!(v.request.recovery, [("input", 1)]);
}

#[test]
fn the_83_library_keeps_a_call_item_ids_item_part() {
    use crate::recovery::next_request::{IdNormaliser, ModelLibrary, TargetModel};
    let t = TargetModel {
        provider: "x".into(),
        api: "openai-completions".into(),
        id: "m".into(),
        vision: None,
    };
    let n = IdNormaliser::OpenAiCompletions;
    assert_eq!(
        n.normalise_for("call_1|fc+1", &t, ModelLibrary::PiAi0_79_10)
            .unwrap(),
        "call_1"
    );
    assert_eq!(
        n.normalise_for("call_1|fc+1", &t, ModelLibrary::PiAi0_83_0)
            .unwrap(),
        "call_1_fc_1"
    );
    let long = format!("call_{}|{}", "a".repeat(30), "b".repeat(30));
    // Expected values from pi-ai 0.83.0's own `shortHash` (utils/hash.js) under Node 22.
    assert_eq!(
        crate::recovery::next_request::transform::short_hash(&long),
        "1vi24cmqunzbm"
    );
    assert_eq!(
        crate::recovery::next_request::transform::short_hash("x"),
        "evpdwv6p0anp"
    );
    assert_eq!(
        crate::recovery::next_request::transform::short_hash("😀|é"),
        "1azhxu99huxcf"
    );
    let got = n
        .normalise_for(&long, &t, ModelLibrary::PiAi0_83_0)
        .unwrap();
    assert_eq!(got, format!("call_{}_1vi24cmq", "a".repeat(26)));
}
