//! turnscope's port of flue 2.x's classifier (`turnscope_core::flue2::classify`) answers as the
//! runtime does: every submission of every 2.1.0 crash fixture, its stream folded by turnscope and
//! classified with the 2.0.8 variant (2.1.0's), must equal the runtime's own answer committed as
//! `NAME.classification.json` (`tests/runtime2/classify.mjs`), with the same trailing partial batch
//! and input entry.

use rusqlite::Connection;
use serde_json::{json, Value};
use turnscope_core::flue2::{
    classify_conversation_submission, parse_batch, submission_entry_id, Flue2Variant,
    InstanceState, Record, SessionKey,
};

use crate::flue2_fold::stream_values;
use crate::support::{db_fixture_names, fixtures_dir, unpack_db};

fn fold_stream(conn: &Connection, path: &str) -> InstanceState {
    let records: Vec<Record> = stream_values(conn, path)
        .into_iter()
        .flat_map(|v| parse_batch(&Value::Array(vec![v]).to_string()).unwrap())
        .collect();
    InstanceState::fold(&records).unwrap()
}

#[test]
fn every_fixture_classifies_as_the_runtime_classified_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut labels = std::collections::BTreeSet::new();
    for name in db_fixture_names("flue-2.1.0") {
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(
                fixtures_dir()
                    .join("flue-2.1.0")
                    .join(format!("{name}.classification.json")),
            )
            .unwrap(),
        )
        .unwrap();
        let cw = want["contextWindow"].as_u64().unwrap();
        let conn = Connection::open(unpack_db("flue-2.1.0", &name, dir.path())).unwrap();
        let rows: Vec<(String, String, String)> = conn
            .prepare("SELECT submission_id, session_key, kind FROM flue_agent_submissions ORDER BY sequence")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let subs = want["submissions"].as_array().unwrap();
        assert_eq!(rows.len(), subs.len(), "{name}");
        for ((id, key, kind), want) in rows.iter().zip(subs) {
            assert_eq!(want["submissionId"], json!(id), "{name}");
            let key = SessionKey::parse(key).unwrap();
            assert_eq!(want["streamPath"], json!(key.stream_path()), "{name}");
            let state = fold_stream(&conn, &key.stream_path());
            let conversation = state.conversation_for_scope(&key.harness, &key.session);
            let input = submission_entry_id(kind, id);
            assert_eq!(want["inputEntryId"], json!(input), "{name} {id}");
            assert_eq!(
                want["inputEntryFound"],
                json!(conversation.is_some_and(|c| c.has_entry(&input))),
                "{name} {id}"
            );
            let got =
                classify_conversation_submission(conversation, &input, cw, Flue2Variant::V2_0_8)
                    .unwrap();
            assert_eq!(
                got.to_runtime_json(),
                want["classification"],
                "{name} {id}: {:?}",
                got.explanation
            );
            // The runtime's trailing partial batch is asked only where the input is on the path.
            let batch = got.trailing_partial_batch.as_ref().map(|b| {
                json!(b
                    .tool_calls
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>())
            });
            assert_eq!(
                batch.unwrap_or(Value::Null),
                want["trailingPartialToolBatch"],
                "{name} {id}"
            );
            labels.insert(got.label());
            checked += 1;
        }
    }
    // Every shape the fixtures hold was met.
    assert!(checked >= 15, "{checked}");
    for label in [
        "absent",
        "completed",
        "terminal_error",
        "tool_use_unresolved",
        "resume/input_only",
        "resume/overflow",
        "resume/transient_retry",
        "resume/tool_results_partial",
    ] {
        assert!(
            labels.contains(label),
            "no fixture classified {label}: {labels:?}"
        );
    }
}
