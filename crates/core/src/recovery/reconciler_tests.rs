//! One test per reconciler rule of spec §5.2, and the derived quick-lookup matrix below it.

use serde_json::json;

use crate::journal::entry::Entry;
use crate::journal::history::History;
use crate::journal::submission_rows::{JournalRow, SubmissionRow};
use crate::recovery::classify_tests::Seq;
use crate::recovery::reconciler::*;

pub(crate) use crate::testing::{sub, NOW, SID};

fn journal(phase: &str) -> JournalRow {
    JournalRow {
        submission_id: SID.into(),
        session_key: sub().session_key,
        kind: "dispatch".into(),
        attempt_id: "att-1".into(),
        operation_id: "op_1".into(),
        turn_id: "turn_1".into(),
        phase: phase.into(),
        revision: 1,
        created_at: NOW - 50_000,
        updated_at: NOW - 40_000,
        checkpoint_leaf_id: None,
        tool_request_json: None,
        stream_key: None,
        stream_consumed_at: None,
        committed: phase == "committed",
        committed_leaf_id: None,
        stored_as: None,
    }
}

/// A history: the dispatch input entry followed by `seq`'s entries.
fn history(seq: &Seq) -> History {
    let input = Entry::parse(
        0,
        "input00",
        &format!(
            r#"{{"type":"message","id":"input00","parentId":null,"timestamp":"t","message":{{"role":"signal","type":"dispatch_input","content":"{{}}"}},"dispatch":{{"dispatchId":"{SID}"}}}}"#
        ),
    );
    let mut entries = vec![input];
    entries.extend(seq.entries().iter().cloned());
    let leaf = entries.last().map(|e| e.id.to_string());
    History::new(entries, leaf)
}

fn plan_with(
    s: &SubmissionRow,
    j: Option<&JournalRow>,
    h: Option<&History>,
    chunks: &[String],
) -> RecoveryPlan {
    let si = inspect_session(s, j, h, chunks, &[], 200_000);
    plan_recovery(s, j, &si, NOW)
}

fn ops(p: &RecoveryPlan) -> Vec<String> {
    p.writes
        .iter()
        .map(|w| {
            serde_json::to_value(w).unwrap()["op"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn stop() -> Seq {
    Seq::new().assistant("stop", json!({}))
}

fn stream_chunks() -> Vec<String> {
    vec![
        r#"[{"type":"text_delta","contentIndex":0,"delta":"lorem ipsum","partial":{"api":"x"}}]"#
            .to_string(),
    ]
}

#[test]
fn rule_0_no_attempt_is_stale() {
    let mut s = sub();
    s.attempt_id = None;
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    // parseSubmission rejects a running row without attempt_id first.
    assert!(matches!(p.disposition, Disposition::Malformed { .. }));
    assert_eq!(ops(&p), ["auto_fail_malformed"]);
}

#[test]
fn rule_1_completed_settles_even_when_exhausted() {
    let mut s = sub();
    s.attempt_count = 10;
    s.timeout_at = NOW - 1;
    let mut j = journal("committed");
    j.stream_key = Some("k".into());
    let p = plan_with(&s, Some(&j), Some(&history(&stop())), &[]);
    assert_eq!((p.rule, p.result), (Some(1), Some(RuleResult::Completed)));
    assert_eq!(ops(&p), ["complete_submission", "delete_stream_chunks"]);
    s.kind = "direct".into();
    let p = plan_with(&s, None, Some(&history(&stop())), &[]);
    // A direct row whose payload says dispatch is malformed; the planner says so instead of settling.
    assert!(matches!(p.disposition, Disposition::Malformed { .. }));
}

#[test]
fn rule_2_retry_budget() {
    let mut s = sub();
    s.attempt_count = 10;
    let p = plan_with(
        &s,
        Some(&journal("before_provider")),
        Some(&history(&Seq::new())),
        &[],
    );
    assert_eq!(p.rule, Some(2));
    assert_eq!(ops(&p), ["append_advisory", "fail_submission"]);
    assert!(
        matches!(&p.writes[1], PlannedWrite::FailSubmission { error } if error == "Submission exceeded maximum recovery attempts (10/10).")
    );
    s.input_applied_at = None;
    let p = plan_with(&s, None, None, &[]);
    // No session row: the runtime's get-or-create saves an empty one before any rule runs.
    assert_eq!(
        ops(&p),
        ["create_session", "append_advisory", "fail_submission"]
    );
    assert!(
        matches!(&p.writes[2], PlannedWrite::FailSubmission { error } if error == messages::RETRY_EXHAUSTED_BEFORE_INPUT)
    );
}

#[test]
fn rule_3_timeout() {
    let mut s = sub();
    s.timeout_at = NOW - 1000;
    let p = plan_with(
        &s,
        Some(&journal("provider_started")),
        Some(&history(&Seq::new())),
        &[],
    );
    assert_eq!(p.rule, Some(3));
    assert!(
        matches!(&p.writes[1], PlannedWrite::FailSubmission { error } if error == messages::TIMEOUT)
    );
    // timeout_at 0 means unset.
    s.timeout_at = 0;
    assert_ne!(
        plan_with(
            &s,
            Some(&journal("before_provider")),
            Some(&history(&Seq::new())),
            &[]
        )
        .rule,
        Some(3)
    );
}

#[test]
fn rule_4_stream_recovery() {
    let mut j = journal("provider_started");
    j.stream_key = Some("sk".into());
    let p = plan_with(
        &sub(),
        Some(&j),
        Some(&history(&Seq::new())),
        &stream_chunks(),
    );
    assert_eq!(p.rule, Some(4));
    assert_eq!(
        ops(&p),
        [
            "recover_stream",
            "mark_stream_consumed",
            "delete_stream_chunks",
            "replace_attempt"
        ]
    );
    // Unrecoverable chunks fall through to rule 5 (input_only, uncertain, provider_started → no) → 9.
    let bad = vec![r#"[{"type":"toolcall","partial":{}}]"#.to_string()];
    assert_eq!(
        plan_with(&sub(), Some(&j), Some(&history(&Seq::new())), &bad).rule,
        Some(9)
    );
    // Already consumed → not rule 4.
    j.stream_consumed_at = Some(NOW - 5);
    assert_ne!(
        plan_with(
            &sub(),
            Some(&j),
            Some(&history(&Seq::new())),
            &stream_chunks()
        )
        .rule,
        Some(4)
    );
}

#[test]
fn rule_5_replace() {
    // J null + input_only (uncertain, provider unreached).
    assert_eq!(
        plan_with(&sub(), None, Some(&history(&Seq::new())), &[]).rule,
        Some(5)
    );
    // before_provider + tool_results (continuable).
    let tr = Seq::new().tool_use(&[("a", "x")]).result("a", "x");
    let p = plan_with(
        &sub(),
        Some(&journal("before_provider")),
        Some(&history(&tr)),
        &[],
    );
    assert_eq!(
        (p.rule, ops(&p)),
        (Some(5), vec!["replace_attempt".to_string()])
    );
    // overflow with provider_started is NOT rescued by rule 5 (uncertain, provider reached) → 9.
    let of = Seq::new().assistant("error", json!({"errorMessage":"prompt is too long"}));
    assert_eq!(
        plan_with(
            &sub(),
            Some(&journal("provider_started")),
            Some(&history(&of)),
            &[]
        )
        .rule,
        Some(9)
    );
    // committed never qualifies.
    assert_eq!(
        plan_with(
            &sub(),
            Some(&journal("committed")),
            Some(&history(&tr)),
            &[]
        )
        .rule,
        Some(9)
    );
}

#[test]
fn rule_6_repair_then_replace() {
    let mut j = journal("tool_request_recorded");
    j.tool_request_json = Some(r#"{"toolCalls":[{"type":"toolCall","id":"tc-1","name":"get_weather","arguments":{}},{"type":"toolCall","id":"tc-2","name":"get_time","arguments":{}}]}"#.into());
    let unresolved = Seq::new().tool_use(&[("tc-1", "get_weather"), ("tc-2", "get_time")]);
    let p = plan_with(&sub(), Some(&j), Some(&history(&unresolved)), &[]);
    assert_eq!(p.rule, Some(6));
    assert_eq!(
        ops(&p),
        [
            "repair_tool_calls",
            "journal_before_provider",
            "replace_attempt"
        ]
    );
    let PlannedWrite::RepairToolCalls { repair } = &p.writes[0] else {
        panic!()
    };
    assert_eq!(repair.synthetic_count(), 2);
    // One result recorded: it is copied, the other is synthetic.
    let partial = Seq::new()
        .tool_use(&[("tc-1", "get_weather"), ("tc-2", "get_time")])
        .result("tc-1", "get_weather");
    let p = plan_with(&sub(), Some(&j), Some(&history(&partial)), &[]);
    let PlannedWrite::RepairToolCalls { repair } = &p.writes[0] else {
        panic!()
    };
    assert_eq!(
        repair.results[0].copied_from.as_deref(),
        Some(partial.entries()[1].id.as_str())
    );
    assert!(repair.results[1].copied_from.is_none());
    // Complete batch: repair is a no-op, C continuable → replace (coordinator test 1332).
    let complete = partial.result("tc-2", "get_time");
    let p = plan_with(&sub(), Some(&j), Some(&history(&complete)), &[]);
    assert_eq!(
        (p.rule, ops(&p)),
        (Some(6), vec!["replace_attempt".to_string()])
    );
    // Rule 6 has no input_applied_at check.
    let mut s = sub();
    s.input_applied_at = None;
    assert_eq!(
        plan_with(&s, Some(&j), Some(&history(&unresolved)), &[]).rule,
        Some(6)
    );
}

#[test]
fn rule_7_requeue_and_rule_8_fail_before_input() {
    let mut s = sub();
    s.input_applied_at = None;
    let p = plan_with(&s, None, None, &[]);
    assert_eq!(
        (p.rule, p.result, ops(&p)),
        (
            Some(7),
            Some(RuleResult::Requeued),
            vec!["create_session".to_string(), "requeue".to_string()]
        )
    );
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    assert_eq!(p.rule, Some(8));
    assert!(
        matches!(&p.writes[1], PlannedWrite::FailSubmission { error } if error == messages::BEFORE_INPUT_MARKER)
    );
}

#[test]
fn rule_9_fail_after_input_with_tool_names() {
    let p = plan_with(&sub(), None, None, &[]);
    assert_eq!(p.rule, Some(9));
    assert!(
        matches!(&p.writes[2], PlannedWrite::FailSubmission { error } if error == messages::AFTER_INPUT_APPLICATION)
    );
    let mut j = journal("tool_request_recorded");
    j.tool_request_json = Some(r#"{"toolCalls":[{"type":"toolCall","id":"t1","name":"lookup"},{"type":"toolCall","id":"t2","name":"search"}]}"#.into());
    j.stream_key = Some("sk".into());
    let p = plan_with(&sub(), Some(&j), None, &[]);
    assert_eq!(p.rule, Some(9));
    assert_eq!(
        ops(&p),
        [
            "create_session",
            "append_advisory",
            "fail_submission",
            "delete_stream_chunks"
        ]
    );
    let PlannedWrite::AppendAdvisory { content, .. } = &p.writes[1] else {
        panic!()
    };
    assert!(
        content.ends_with("Interrupted tool call(s):\n  - lookup (t1)\n  - search (t2)"),
        "{content}"
    );
    assert!(
        matches!(&p.writes[2], PlannedWrite::FailSubmission { error } if error.contains("pending tool call(s): lookup, search."))
    );
}

#[test]
fn a_malformed_row_is_auto_failed_with_the_runtime_s_own_text() {
    let mut s = sub();
    s.started_at = None;
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    assert!(
        matches!(&p.writes[..], [PlannedWrite::AutoFailMalformed { error: Some(error) }] if error == messages::MALFORMED_ROW)
    );
    let mut s = sub();
    s.payload = s.payload.replace("acceptedAt", "acceptedAtX");
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    assert!(
        matches!(&p.writes[..], [PlannedWrite::AutoFailMalformed { error: Some(error) }] if error == messages::MALFORMED_PAYLOAD),
        "{:?}",
        p.writes
    );
    // A payload that is not JSON: the runtime stores JSON.parse's own message, V8's words.
    let mut s = sub();
    s.payload = "{\"kind\": ".into();
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    assert!(
        matches!(
            &p.writes[..],
            [PlannedWrite::AutoFailMalformed { error: Some(error) }] if error == "Unexpected end of JSON input"
        ),
        "{:?}",
        p.writes
    );
    // Both broken: the row check comes first, as in parseSubmission.
    let mut s = sub();
    s.started_at = None;
    s.payload = "{".into();
    let p = plan_with(&s, None, Some(&history(&Seq::new())), &[]);
    assert!(
        matches!(&p.writes[..], [PlannedWrite::AutoFailMalformed { error: Some(error) }] if error == messages::MALFORMED_ROW)
    );
}

/// A chunk row of the submission's own (a direct prompt's image).
fn own_chunk(index: f64, count: f64) -> crate::journal::images::ChunkRow {
    use crate::journal::images::{ChunkCell, ChunkRow};
    ChunkRow {
        image_id: ChunkCell::Text("0".into()),
        index: ChunkCell::Number(index),
        count: ChunkCell::Number(count),
        data_is_text: true,
        data_units: 8,
    }
}

/// The running direct prompt, its payload's inner payload `inner`.
fn direct(inner: &str) -> SubmissionRow {
    let mut s = sub();
    s.kind = "direct".into();
    s.payload = format!(
        r#"{{"agent":"moderator","id":"guild-42","payload":{inner},"acceptedAt":"2027-01-15T08:00:00.000Z","kind":"direct","submissionId":"{SID}"}}"#
    );
    s
}

fn auto_fail_error(s: &SubmissionRow) -> Option<String> {
    let p = plan_with(s, None, Some(&history(&Seq::new())), &[]);
    match &p.writes[..] {
        [PlannedWrite::AutoFailMalformed { error }] => error.clone(),
        other => panic!("no auto-fail: {other:?} ({})", p.reason),
    }
}

/// `parseSubmission(row, chunks)`: the submission's chunk rows are read, and their types checked,
/// before anything of the row; a direct prompt's markers must then name each stored image once.
#[test]
fn the_row_parser_reads_the_submission_s_own_image_chunks_first() {
    use crate::journal::images::{messages as images, ChunkCell};
    let marker = r#"{"type":"image","data":"__flue_image_chunks__:0","mimeType":"image/png"}"#;
    let with_image = format!(r#"{{"message":"hi","images":[{marker}]}}"#);
    // Intact: one marker, its two rows.
    let mut s = direct(&with_image);
    s.image_chunks = vec![own_chunk(0.0, 2.0), own_chunk(1.0, 2.0)];
    assert_eq!(row_problem(&s), None);
    // The marker without its rows, and rows without a marker.
    let s = direct(&with_image);
    assert_eq!(auto_fail_error(&s).as_deref(), Some(images::DO_NOT_MATCH));
    let mut s = direct(r#"{"message":"hi"}"#);
    s.image_chunks = vec![own_chunk(0.0, 1.0)];
    assert_eq!(auto_fail_error(&s).as_deref(), Some(images::DO_NOT_MATCH));
    // One row of two.
    let mut s = direct(&with_image);
    s.image_chunks = vec![own_chunk(0.0, 2.0)];
    assert_eq!(
        auto_fail_error(&s).as_deref(),
        Some(images::MISSING_OR_MALFORMED)
    );
    // A row of another type fails even a dispatch, and before the row's own checks.
    let mut s = sub();
    s.image_chunks = vec![own_chunk(0.0, 1.0)];
    assert_eq!(
        row_problem(&s),
        None,
        "a dispatch's rows are otherwise ignored"
    );
    s.image_chunks[0].index = ChunkCell::Text("0".into());
    s.started_at = None;
    assert_eq!(auto_fail_error(&s).as_deref(), Some(images::ROW_MALFORMED));
    // Images that are not an array: V8's TypeError from mapping them.
    let s = direct(r#"{"message":"hi","images":{"0":1}}"#);
    assert_eq!(
        auto_fail_error(&s).as_deref(),
        Some("blocks.map is not a function")
    );
    // An image the payload check rejects once hydrated.
    let s = direct(r#"{"message":"hi","images":[{"type":"image","data":"abc"}]}"#);
    assert_eq!(
        auto_fail_error(&s).as_deref(),
        Some(messages::MALFORMED_PAYLOAD)
    );
}

#[test]
fn the_budget_and_timeout_rules_carry_the_runtime_s_own_errors() {
    use crate::recovery::failure::RuntimeFailure;
    let mut s = sub();
    s.attempt_count = 11;
    let f = RuntimeFailure::for_rule(2, &s, None).unwrap();
    assert_eq!(f.reason, "exhausted_retry_budget");
    assert_eq!(
        f.serialized().to_string(),
        r#"{"name":"FlueError","message":"Submission exceeded maximum recovery attempts (11/10).","type":"submission_retry_exhausted","details":"Recovery re-attempted the interrupted submission until its attempt budget ran out without a completed response.","meta":{"attemptCount":11,"maxAttempts":10}}"#
    );
    s.input_applied_at = None;
    let f = RuntimeFailure::for_rule(2, &s, None).unwrap();
    assert_eq!(
        f.meta.unwrap().to_string(),
        r#"{"phase":"retry_exhausted_before_input","attemptCount":11,"maxAttempts":10}"#
    );
    let f = RuntimeFailure::for_rule(3, &s, None).unwrap();
    assert_eq!(
        f.serialized().to_string(),
        r#"{"name":"FlueError","message":"Submission exceeded the configured timeout.","type":"submission_timeout","details":"The operation ran longer than the configured durability timeout."}"#
    );
    assert_eq!(f.reason, "exceeded_timeout");
    // Only rule 9 lists the journal's tool calls.
    let mut j = journal("tool_request_recorded");
    j.tool_request_json =
        Some(r#"{"toolCalls":[{"type":"toolCall","id":"t1","name":"lookup"}]}"#.into());
    let f = RuntimeFailure::for_rule(3, &sub(), Some(&j)).unwrap();
    assert_eq!(f.advisory_content(), messages::TIMEOUT);
    let f = RuntimeFailure::for_rule(9, &sub(), Some(&j)).unwrap();
    assert!(f
        .advisory_content()
        .ends_with("\n\nInterrupted tool call(s):\n  - lookup (t1)"));
    assert_eq!(
        f.meta.unwrap().to_string(),
        r#"{"phase":"after_input_application","interruptedTools":[{"name":"lookup","id":"t1"}]}"#
    );
}

#[test]
fn advisory_is_not_written_twice() {
    let mut s = sub();
    s.timeout_at = NOW - 1;
    let advisory =
        Seq::new().msg(json!({"role":"signal","type":"submission_interrupted","content":"x"}));
    let mut h = history(&advisory);
    // Mark the signal as this submission's terminal advisory.
    let last = h.entries.last().unwrap().clone();
    let mut v: serde_json::Value = serde_json::from_str(&last.raw).unwrap();
    v["submissionTerminal"] =
        json!({"submissionId": SID, "kind":"dispatch", "reason":"exceeded_timeout"});
    let n = h.entries.len();
    h.entries.get_mut().unwrap()[n - 1] = Entry::parse(last.position, &last.id, &v.to_string());
    let h = History::new(h.entries.clone(), h.leaf_id.clone());
    let p = plan_with(&s, None, Some(&h), &[]);
    assert_eq!(ops(&p), ["fail_submission"]);
}

#[test]
fn statuses_other_than_running() {
    let mut s = sub();
    s.lease_expires_at = NOW + 18_000;
    assert!(matches!(
        plan_with(&s, None, None, &[]).disposition,
        Disposition::Live {
            expires_in_ms: 18_000
        }
    ));
    s.lease_expires_at = 0;
    assert_eq!(
        plan_with(&s, None, None, &[]).disposition,
        Disposition::NoLease
    );
    // A status the runtime never writes: no query of its selects the row, expired lease or not.
    let mut p = sub();
    p.status = "paused".into();
    let plan = plan_with(&p, None, None, &[]);
    assert_eq!(
        plan.disposition,
        Disposition::UnknownStatus {
            status: "paused".into()
        }
    );
    assert!(plan.writes.is_empty() && plan.rule.is_none());
    let mut q = sub();
    q.status = "queued".into();
    q.attempt_id = None;
    q.input_applied_at = None;
    q.started_at = None;
    assert_eq!(
        plan_with(&q, None, None, &[]).disposition,
        Disposition::Pending
    );
    q.attempt_id = Some("x".into());
    assert!(matches!(
        plan_with(&q, None, None, &[]).disposition,
        Disposition::Malformed { .. }
    ));
    let mut d = sub();
    d.status = "settled".into();
    d.error = Some("boom".into());
    assert_eq!(
        plan_with(&d, None, None, &[]).disposition,
        Disposition::Failed {
            error: "boom".into()
        }
    );
    d.error = None;
    d.terminal_event = Some(
        r#"{"type":"submission_settled","outcome":"failed","error":{"message":"nope"}}"#.into(),
    );
    assert_eq!(
        plan_with(&d, None, None, &[]).disposition,
        Disposition::Failed {
            error: "nope".into()
        }
    );
    d.terminal_event = None;
    assert_eq!(
        plan_with(&d, None, None, &[]).disposition,
        Disposition::Completed
    );
}

/// The derived matrix (C × J) with input applied, budget and timeout not exhausted.
#[test]
fn derived_matrix() {
    let tool_req = r#"{"toolCalls":[{"type":"toolCall","id":"a","name":"x"},{"type":"toolCall","id":"b","name":"y"}]}"#;
    let histories: Vec<(&str, Option<Seq>)> = vec![
        ("completed", Some(stop())),
        (
            "continuable_partial",
            Some(
                Seq::new()
                    .tool_use(&[("a", "x"), ("b", "y")])
                    .result("a", "x"),
            ),
        ),
        (
            "continuable_aborted",
            Some(Seq::new().assistant("aborted", json!({}))),
        ),
        ("uncertain", Some(Seq::new())),
        ("absent", None),
    ];
    // (history, journal column) → expected rule.
    let expected: &[(&str, [u8; 6])] = &[
        // null, before_provider, provider_started recoverable, not recoverable, tool_request_recorded, committed
        ("completed", [1, 1, 1, 1, 1, 1]),
        ("continuable_partial", [5, 5, 4, 5, 6, 9]),
        ("continuable_aborted", [5, 5, 4, 5, 6, 9]),
        ("uncertain", [5, 5, 4, 9, 9, 9]),
        ("absent", [9, 9, 4, 9, 9, 9]),
    ];
    for (name, seq) in &histories {
        let h = seq.as_ref().map(history);
        let row = expected.iter().find(|(n, _)| n == name).unwrap().1;
        for (col, want) in row.iter().enumerate() {
            let mut chunks = vec![];
            let j = match col {
                0 => None,
                1 => Some(journal("before_provider")),
                2 | 3 => {
                    let mut j = journal("provider_started");
                    j.stream_key = Some("sk".into());
                    if col == 2 {
                        chunks = stream_chunks();
                    }
                    Some(j)
                }
                4 => {
                    let mut j = journal("tool_request_recorded");
                    j.tool_request_json = Some(tool_req.into());
                    Some(j)
                }
                _ => Some(journal("committed")),
            };
            let p = plan_with(&sub(), j.as_ref(), h.as_ref(), &chunks);
            assert_eq!(p.rule, Some(*want), "C={name} column {col}: {}", p.reason);
        }
    }
}

/// The words are the runtime's and every document prints them: the enum must not change them,
/// and its order (incidents' tie-break) is theirs alphabetically.
#[test]
fn rule_results_keep_the_runtime_words_and_their_order() {
    use strum::IntoEnumIterator;
    let words: Vec<&str> = RuleResult::iter().map(RuleResult::as_str).collect();
    assert_eq!(
        words,
        ["completed", "failed", "replacement", "requeued", "stale"]
    );
    for r in RuleResult::iter() {
        assert_eq!(serde_json::to_value(r).unwrap(), json!(r.as_str()));
        assert_eq!(r.to_string(), r.as_str());
        assert_eq!(r.as_str().parse::<RuleResult>(), Ok(r));
    }
    for (o, w) in [
        (DirectOutcome::Completed, "completed"),
        (DirectOutcome::Failed, "failed"),
    ] {
        assert_eq!(serde_json::to_value(o).unwrap(), json!(w));
        assert_eq!(o.as_str(), w);
    }
}

/// The disposition words the CLI's VERDICT column, the TUI and `--verdict` use.
#[test]
fn disposition_kinds_keep_their_words() {
    use strum::IntoEnumIterator;
    let words: Vec<&str> = DispositionKind::iter()
        .map(DispositionKind::label)
        .collect();
    assert_eq!(
        words,
        [
            "stuck",
            "live",
            "no-lease",
            "unknown-status",
            "pending",
            "publishing",
            "completed",
            "failed",
            "malformed",
            "damaged"
        ]
    );
}

/// A turn journal row the runtime's parser rejects makes its reconciliation throw when it reads
/// the journal, before any rule: no plan, whatever rule would fire on the rest (here rule 3, the
/// deadline passed).
#[test]
fn a_journal_row_the_runtime_rejects_blocks_every_rule() {
    let mut s = sub();
    s.timeout_at = NOW - 1;
    let fine = journal("provider_started");
    assert_eq!(plan_with(&s, Some(&fine), None, &[]).rule, Some(3));
    let mut stored = journal("provider_started");
    stored.stored_as = Some(crate::journal::submission_rows::StoredAs {
        column: "attempt_id",
        class: "a BLOB",
        value: None,
    });
    let mut kind = journal("provider_started");
    kind.kind = "batch".into();
    for (j, why) in [
        (
            journal("paused"),
            "phase \"paused\" is not one the runtime writes",
        ),
        (stored, "attempt_id is stored as a BLOB"),
        (kind, "kind \"batch\" is not one the runtime writes"),
    ] {
        let p = plan_with(&s, Some(&j), None, &[]);
        assert!(p.rule.is_none() && p.writes.is_empty(), "{why}: {p:?}");
        let Disposition::Unreadable { problems } = &p.disposition else {
            panic!("{why}: {:?}", p.disposition)
        };
        assert_eq!(
            problems,
            &[format!(
                "the turn journal row is malformed ({why}): the runtime's read throws \
                 \"[flue] Persisted turn journal row is malformed.\""
            )]
        );
    }
}
