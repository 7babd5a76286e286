//! The fold's own tests (checked against the runtime's reducer in tests/integration: flue2_fold, runtime2).

use super::*;
use crate::flue2::records::parse_batch;

#[test]
fn base64url_is_the_runtimes_canonical_id() {
    // As in the fixtures: entry_dispatch_<b64url("sub_01M92S4JZSQ29N95009S4YYSC5")>.
    assert_eq!(
        base64url("sub_01M92S4JZSQ29N95009S4YYSC5"),
        "c3ViXzAxTTkyUzRKWlNRMjlOOTUwMDlTNFlZU0M1"
    );
    assert_eq!(base64url(""), "");
    assert_eq!(base64url("a"), "YQ");
    assert_eq!(base64url("ab"), "YWI");
    assert_eq!(base64url("\u{ff}\u{fe}"), "w7_Dvg");
}

fn rec(fields: &str) -> String {
    format!(
        r#"{{"v":1,"conversationId":"c1","harness":"default","session":"default","timestamp":"2026-01-01T00:00:00.000Z",{fields}}}"#
    )
}

fn fold(records: &[String]) -> Result<InstanceState, FoldError> {
    let batch = parse_batch(&format!("[{}]", records.join(","))).unwrap();
    InstanceState::fold(&batch)
}

fn created() -> String {
    rec(r#""id":"r0","type":"conversation_created","kind":"root""#)
}

fn user(id: &str, parent: &str) -> String {
    rec(&format!(
        r#""id":"r_{id}","type":"user_message","messageId":"{id}","parentId":{parent},"content":[{{"type":"text","text":"hi"}}],"submissionId":"s1""#
    ))
}

#[test]
fn appends_must_extend_the_leaf() {
    let state = fold(&[created(), user("entry_a", "null")]).unwrap();
    let c = &state.conversations[0];
    assert_eq!(c.active_leaf_id.as_deref(), Some("entry_a"));
    let e = fold(&[created(), user("entry_a", "null"), user("entry_b", "null")]).unwrap_err();
    assert_eq!(
        e.reason,
        "Entry parent \"null\" is not the conversation tail \"entry_a\". Appends are linear."
    );
    let e = fold(&[created(), user("a", "null")]).unwrap_err();
    assert_eq!(e.reason, "Graph entry ids must use the \"entry_\" prefix.");
}

#[test]
fn a_root_creation_with_a_child_identity_field_is_refused_from_either_reader() {
    for field in CHILD_IDENTITY {
        let batch = format!(
            "[{}]",
            rec(&format!(
                r#""id":"r0","type":"conversation_created","kind":"root","{field}":"x""#
            ))
        );
        let tree = InstanceState::fold(&parse_batch(&batch).unwrap()).unwrap_err();
        let mut state = InstanceState::new();
        let read = crate::flue2::records_text::read_batch_undigested(&batch).unwrap();
        let from_text = read
            .into_iter()
            .map(|r| state.apply_read(r))
            .find_map(Result::err);
        let Some(ReadRefusal::Fold(from_text)) = from_text else {
            panic!("{field}: {from_text:?}");
        };
        assert_eq!(
            tree.reason,
            "Root conversation creation contains child identity fields."
        );
        assert_eq!(from_text, tree, "{field}");
    }
}

#[test]
fn only_a_settlement_keeps_its_json_after_the_fold() {
    let settled = rec(
        r#""id":"r_settled","type":"submission_settled","submissionId":"s1","attemptId":"a1","outcome":"completed""#,
    );
    let state = fold(&[created(), user("entry_a", "null"), settled.clone()]).unwrap();
    assert!(state.record("r_entry_a").is_none() && state.has_record("r_entry_a"));
    assert_eq!(
        state.record("r_settled").unwrap().raw,
        serde_json::from_str::<Value>(&settled).unwrap()
    );
    // A repeat of a record whose JSON was dropped is still told from a different one.
    let repeat = fold(&[
        created(),
        user("entry_a", "null"),
        settled.clone(),
        user("entry_a", "null"),
    ]);
    assert!(repeat.is_ok());
    let changed = user("entry_a", "null").replace("\"hi\"", "\"ho\"");
    let e = fold(&[created(), user("entry_a", "null"), settled, changed]).unwrap_err();
    assert_eq!(
        e.reason,
        "Record id \"r_entry_a\" was reused with different content."
    );
}

#[test]
fn a_reused_id_must_repeat_its_record() {
    let same = fold(&[created(), user("entry_a", "null"), user("entry_a", "null")]);
    assert!(same.is_ok());
    let other = rec(
        r#""id":"r_entry_a","type":"signal","messageId":"entry_b","parentId":"entry_a","signalType":"x""#,
    );
    let e = fold(&[created(), user("entry_a", "null"), other]).unwrap_err();
    assert_eq!(
        e.reason,
        "Record id \"r_entry_a\" was reused with different content."
    );
}

/// Records read without digests fold alike until an id repeats; then the fold cannot tell a
/// repeat from a different record and says so, where the digested read decides.
#[test]
fn a_repeat_read_without_digests_is_refused_as_undigested() {
    use crate::flue2::records_text::{read_batch, read_batch_undigested};
    let apply_all = |read: Vec<ReadRecord>| {
        let mut state = InstanceState::new();
        for r in read {
            state.apply_read(r)?;
        }
        Ok::<_, ReadRefusal>(state)
    };
    let distinct = format!("[{},{}]", created(), user("entry_a", "null"));
    let a = apply_all(read_batch_undigested(&distinct).unwrap()).unwrap();
    let b = apply_all(read_batch(&distinct).unwrap()).unwrap();
    assert_eq!(a.conversations, b.conversations);
    let changed = user("entry_a", "null").replace("\"hi\"", "\"ho\"");
    for second in [user("entry_a", "null"), changed] {
        let batch = format!("[{},{},{second}]", created(), user("entry_a", "null"));
        assert_eq!(
            apply_all(read_batch_undigested(&batch).unwrap()).unwrap_err(),
            ReadRefusal::Undigested
        );
        let digested = apply_all(read_batch(&batch).unwrap());
        assert_eq!(digested.is_ok(), !second.contains("\"ho\""));
    }
}

#[test]
fn a_ghost_stays_in_progress_and_blocks_appends() {
    let started = rec(
        r#""id":"r1","type":"assistant_message_started","messageId":"entry_m","parentId":"entry_a","submissionId":"s1""#,
    );
    let text = rec(
        r#""id":"r2","type":"assistant_text_started","messageId":"entry_m","blockId":"b0","blockIndex":0"#,
    );
    let delta = |id: &str, seq: usize| {
        rec(&format!(
            r#""id":"{id}","type":"assistant_text_delta","messageId":"entry_m","blockId":"b0","sequence":{seq},"delta":"x{seq}""#
        ))
    };
    let state = fold(&[
        created(),
        user("entry_a", "null"),
        started.clone(),
        text.clone(),
        delta("r3", 0),
        delta("r4", 1),
    ])
    .unwrap();
    let ghost = &state.conversations[0].in_progress[0];
    assert_eq!(ghost.blocks[0].deltas, ["x0", "x1"]);
    let e = fold(&[
        created(),
        user("entry_a", "null"),
        started.clone(),
        text.clone(),
        delta("r3", 1),
    ])
    .unwrap_err();
    assert_eq!(e.reason, "Expected delta sequence 0, received 1.");
    let e = fold(&[
        created(),
        user("entry_a", "null"),
        started,
        user("entry_b", "\"entry_a\""),
    ])
    .unwrap_err();
    assert_eq!(
        e.reason,
        "Cannot advance the conversation while an assistant message is in progress."
    );
}

#[test]
fn a_completed_message_leaves_in_progress_and_forgets_its_records_the_other_ghost_stays() {
    let started = |id: &str, m: &str| {
        rec(&format!(
            r#""id":"{id}","type":"assistant_message_started","messageId":"{m}","parentId":"entry_a","submissionId":"s1""#
        ))
    };
    let text = |id: &str, m: &str| {
        rec(&format!(
            r#""id":"{id}","type":"assistant_text_started","messageId":"{m}","blockId":"b0","blockIndex":0"#
        ))
    };
    let delta = |id: &str, m: &str, seq: usize| {
        rec(&format!(
            r#""id":"{id}","type":"assistant_text_delta","messageId":"{m}","blockId":"b0","sequence":{seq},"delta":"{m}{seq}""#
        ))
    };
    let done = rec(
        r#""id":"r9","type":"assistant_text_completed","messageId":"entry_n","blockId":"b0","deltaCount":2"#,
    );
    let completed = rec(
        r#""id":"r10","type":"assistant_message_completed","messageId":"entry_n","stopReason":"stop","usage":{"input":3}"#,
    );
    let state = fold(&[
        created(),
        user("entry_a", "null"),
        started("r1", "entry_m"),
        text("r2", "entry_m"),
        delta("r3", "entry_m", 0),
        started("r4", "entry_n"),
        text("r5", "entry_n"),
        delta("r6", "entry_n", 0),
        delta("r7", "entry_n", 1),
        done,
        completed,
    ])
    .unwrap();
    let c = &state.conversations[0];
    // The completed message is committed with its text, and only it left `in_progress`.
    assert_eq!(c.active_leaf_id.as_deref(), Some("entry_n"));
    match &c.entry("entry_n").unwrap().body {
        EntryBody::Assistant { text, usage, .. } => {
            assert_eq!(text, "entry_n0entry_n1");
            assert_eq!(usage.as_ref().unwrap().value()["input"], 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.in_progress.len(), 1);
    assert_eq!(c.in_progress[0].message_id, "entry_m");
    assert_eq!(c.in_progress[0].blocks[0].deltas, ["entry_m0"]);
    // Its block records were forgotten; its start and completion, and the ghost's, are kept.
    for id in ["r5", "r6", "r7", "r9"] {
        assert!(!state.has_record(id), "{id}");
    }
    for id in ["r1", "r2", "r3", "r4", "r10"] {
        assert!(state.has_record(id), "{id}");
    }
}

#[test]
fn a_committed_outcome_is_kept_as_its_digest_a_repair_markers_whole() {
    let records = |outcome_id: &str| {
        vec![
            created(),
            user("entry_a", "null"),
            rec(
                r#""id":"r1","type":"assistant_message_started","messageId":"entry_m","parentId":"entry_a","submissionId":"s1""#,
            ),
            rec(
                r#""id":"r2","type":"assistant_tool_call","messageId":"entry_m","blockId":"b0","blockIndex":0,"toolCallId":"t1","name":"bash""#,
            ),
            rec(
                r#""id":"r3","type":"assistant_message_completed","messageId":"entry_m","stopReason":"toolUse""#,
            ),
            rec(&format!(
                r#""id":"{outcome_id}","type":"tool_outcome","assistantMessageId":"entry_m","toolCallId":"t1","toolName":"bash","isError":true,"content":[{{"type":"text","text":"out"}}]"#
            )),
            rec(&format!(
                r#""id":"r5","type":"tool_results_committed","assistantMessageId":"entry_m","parentId":"entry_m","outcomeIds":["{outcome_id}"]"#
            )),
        ]
    };
    let plain = fold(&records("r4")).unwrap();
    assert!(plain.record("r4").is_none() && plain.has_record("r4"));
    let marker = format!("{}x", super::super::kept::REPAIR_OUTCOME);
    let kept = fold(&records(&marker)).unwrap();
    assert!(matches!(
        kept.record(&marker).map(|r| &r.body),
        Some(Body::ToolOutcome { is_error: true, .. })
    ));
    // Its repeat is still compared as a whole: the same passes, a different one is refused.
    let mut again = records("r4");
    again.push(again[5].clone());
    assert!(fold(&again).is_ok());
    again.push(again[5].replace("\"out\"", "\"other\""));
    let e = fold(&again).unwrap_err();
    assert_eq!(
        e.reason,
        "Record id \"r4\" was reused with different content."
    );
}

/// A tool call keeps the `seq` of the batch that recorded it (what `health` reads its arguments
/// back from), each call its own batch's; a record folded outside a batch keeps none.
#[test]
fn a_tool_call_keeps_the_seq_of_its_batch() {
    let call = |id: &str, block: usize| {
        rec(&format!(
            r#""id":"r_{id}","type":"assistant_tool_call","messageId":"entry_m","blockId":"b{block}","blockIndex":{block},"toolCallId":"{id}","name":"bash""#
        ))
    };
    let batches = [
        vec![
            created(),
            user("entry_a", "null"),
            rec(
                r#""id":"r1","type":"assistant_message_started","messageId":"entry_m","parentId":"entry_a","submissionId":"s1""#,
            ),
        ],
        vec![call("t1", 0)],
        vec![
            call("t2", 1),
            rec(
                r#""id":"r3","type":"assistant_message_completed","messageId":"entry_m","stopReason":"toolUse""#,
            ),
        ],
    ];
    let parsed = |seqs: [i64; 3]| {
        seqs.into_iter()
            .zip(&batches)
            .map(|(seq, b)| (seq, parse_batch(&format!("[{}]", b.join(","))).unwrap()))
            .collect::<Vec<_>>()
    };
    let calls = |state: &InstanceState| match &state.conversations[0].entry("entry_m").unwrap().body
    {
        EntryBody::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.batch_seq))
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let state = InstanceState::fold_owned(parsed([4, 7, 9])).unwrap();
    assert_eq!(
        calls(&state),
        [("t1".to_string(), Some(7)), ("t2".to_string(), Some(9))]
    );
    // The batch ended: a record applied afterwards is outside it.
    let mut state = InstanceState::fold_owned(parsed([4, 7, 9]).into_iter().take(2)).unwrap();
    for r in parse_batch(&format!("[{}]", batches[2].join(","))).unwrap() {
        state.apply(&r).unwrap();
    }
    assert_eq!(
        calls(&state),
        [("t1".to_string(), Some(7)), ("t2".to_string(), None)]
    );
}
