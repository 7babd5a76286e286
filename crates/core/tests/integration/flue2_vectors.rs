//! 1,500 flue 2.1.0 classifier vectors (`tests/fixtures/flue2-classify-v1.jsonl.gz`): histories
//! of one agent instance up to a kill, realised as real databases through the runtime's own
//! adapter and writer and answered by its own `classifyConversationSubmission` and
//! `findTrailingPartialToolBatch` (2.1.0). turnscope folds each vector's record batches and must
//! give the runtime's answer on every one with the 2.0.8 variant of its classifier, the one 2.1.0
//! has. The older variants may differ only where the study of the dists says they do.

use serde_json::{json, Value};
use turnscope_core::flue2::classify::{is_retryable_error_text, Flue2Classification};
use turnscope_core::flue2::{
    classify_conversation_submission, parse_batch, EntryBody, Flue2Variant, InstanceState,
};

use turnscope_testkit::{fixtures_dir, gunzip};

/// Every record the vector's database holds, batch by batch, in order.
fn records(v: &Value) -> Vec<turnscope_core::flue2::Record> {
    v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["op"] == "append")
        .flat_map(|op| {
            parse_batch(&op["records"].to_string())
                .unwrap_or_else(|e| panic!("{}: a batch does not parse: {e}", v["id"]))
        })
        .collect()
}

fn answer(c: &Flue2Classification) -> (Value, Value) {
    let batch = c.trailing_partial_batch.as_ref().map_or(Value::Null, |b| {
        json!(b
            .tool_calls
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>())
    });
    (c.to_runtime_json(), batch)
}

#[test]
fn agrees_with_the_runtime_on_every_2_1_0_vector() {
    let bytes = gunzip(&fixtures_dir().join("flue2-classify-v1.jsonl.gz"));
    let text = String::from_utf8(bytes).expect("vectors are UTF-8");
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut older_differ = [0usize; 2];
    let mut unexplained = Vec::new();
    let mut labels = std::collections::BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("vector line is JSON");
        let id = v["id"].as_str().unwrap().to_string();
        let cw = v["context_window"].as_u64().unwrap();
        let input = v["input_entry_id"].as_str().unwrap();
        let state = InstanceState::fold(&records(&v))
            .unwrap_or_else(|e| panic!("{id}: the runtime's batches do not fold: {e}"));
        // Every vector's submission is in the default harness and session.
        let conversation = state.conversation_for_scope("default", "default");
        let classify = |variant| {
            classify_conversation_submission(conversation, input, cw, variant)
                .unwrap_or_else(|e| panic!("{id}: {e}"))
        };
        let got = classify(Flue2Variant::V2_0_8);
        let want = (v["expected"].clone(), v["trailing_partial_batch"].clone());
        if answer(&got) != want {
            failures.push(format!(
                "{id}: expected {} / {}, got {} / {} ({:?})",
                want.0,
                want.1,
                got.to_runtime_json(),
                answer(&got).1,
                got.explanation
            ));
        }
        labels.insert(if got.terminal_tool_batch {
            "completed/terminalToolBatch".to_string()
        } else {
            got.label()
        });
        // What sets the older variants apart after the input: a `stop`/`length` assistant with a
        // tool call (a tool batch only from 2.0.8), or an error text only 2.0.5 and later retry.
        let path = conversation
            .map(|c| c.active_path().unwrap())
            .unwrap_or_default();
        let after = path
            .iter()
            .position(|e| e.id == input)
            .map_or(&[][..], |i| &path[i + 1..]);
        let widened = after.iter().any(|e| {
            matches!(&e.body, EntryBody::Assistant { stop_reason, tool_calls, .. }
                if matches!(stop_reason.as_str(), "stop" | "length") && !tool_calls.is_empty())
        });
        let connection_error = after.iter().any(|e| {
            matches!(&e.body, EntryBody::Assistant { stop_reason, error_message: Some(t), .. }
                if stop_reason == "error"
                    && is_retryable_error_text(t, Flue2Variant::V2_0_5)
                    && !is_retryable_error_text(t, Flue2Variant::V2_0_0))
        });
        for (i, variant) in [Flue2Variant::V2_0_0, Flue2Variant::V2_0_5]
            .into_iter()
            .enumerate()
        {
            let old = classify(variant);
            if answer(&old) != answer(&got) {
                older_differ[i] += 1;
                let explained = widened || (variant == Flue2Variant::V2_0_0 && connection_error);
                if !explained {
                    unexplained.push(format!(
                        "{id} {variant:?}: {} vs {}",
                        old.to_runtime_json(),
                        got.to_runtime_json()
                    ));
                }
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 1500, "the vector file should hold 1,500 vectors");
    assert!(
        failures.is_empty(),
        "{} of {checked} vectors disagree:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        unexplained.is_empty(),
        "an older variant differs where no stop/length tool batch or connection error is:\n{}",
        unexplained
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("2.0.0 and 2.0.5 answer otherwise than 2.1.0 on {older_differ:?} vectors");
    // The vectors tell the variants apart (the widened tool batch occurs in them).
    assert!(
        older_differ[0] > 0 && older_differ[1] > 0,
        "{older_differ:?}"
    );
    // Every kind and mode the 2.1.0 classifier returns is met.
    for label in [
        "absent",
        "advanced_past_input",
        "completed",
        "completed/terminalToolBatch",
        "terminal_error",
        "tool_use_unresolved",
        "resume/input_only",
        "resume/tool_results",
        "resume/tool_results_partial",
        "resume/stream_continuation",
        "resume/transient_retry",
        "resume/overflow",
        "resume/aborted_partial",
    ] {
        assert!(
            labels.contains(label),
            "no vector classified {label}: {labels:?}"
        );
    }
}
