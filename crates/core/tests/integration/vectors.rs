//! 5,000 classifier vectors computed by the runtime's own `classifySubmissionState` and
//! `findTrailingPartialToolBatch` (1.0.0-beta.7). turnscope must agree on every one.

use serde_json::{json, Value};
use turnscope_core::journal::entry::Entry;
use turnscope_core::recovery::classify::classify_submission_state;

use turnscope_testkit::{fixtures_dir, gunzip};

#[test]
fn agrees_with_the_runtime_on_every_vector() {
    let bytes = gunzip(&fixtures_dir().join("classify-v1.jsonl.gz"));
    let text = String::from_utf8(bytes).expect("vectors are UTF-8");
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("vector line is JSON");
        let id = v["id"].as_str().unwrap().to_string();
        let cw = v["context_window"].as_u64().unwrap();
        let entries: Option<Vec<Entry>> = v["following"].as_array().map(|arr| {
            arr.iter()
                .enumerate()
                .map(|(i, e)| {
                    Entry::parse(i as i64, e["id"].as_str().unwrap_or(""), &e.to_string())
                })
                .collect()
        });
        let refs: Option<Vec<&Entry>> = entries.as_ref().map(|es| es.iter().collect());
        let got = classify_submission_state(refs.as_deref(), cw);
        let got_state = got.state.to_runtime_json();
        let got_batch = got.trailing_partial_batch.as_ref().map_or(Value::Null, |b| {
            json!({"entryId": b.entry_id, "toolCallIds": b.tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()})
        });
        // The runtime never runs the detector without a history.
        let got_batch = if entries.is_none() {
            Value::Null
        } else {
            got_batch
        };
        if got_state != v["expected"] || got_batch != v["trailing_partial_batch"] {
            failures.push(format!(
                "{id}: expected {} / {}, got {got_state} / {got_batch}",
                v["expected"], v["trailing_partial_batch"]
            ));
        }
        checked += 1;
    }
    assert_eq!(checked, 5000, "the vector file should hold 5,000 vectors");
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
}
