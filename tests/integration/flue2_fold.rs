//! turnscope's fold of flue 2.x's record log (`turnscope_core::flue2`) equals the runtime's own:
//! every stream of every 2.1.0 crash fixture, its batches read in `seq` order (spilled ones put
//! back together), folded, and printed in the shape `tests/runtime2/fold.mjs` prints the runtime's
//! reducer state in, must equal the committed `NAME.fold.json`.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde_json::{json, Value};
use turnscope_core::flue2::{
    parse_batch, BlockKind, ContentBlock, Conversation, Entry, EntryBody, InstanceState, Parent,
    Record,
};

use crate::support::{db_fixture_names, fixtures_dir, unpack_db};

/// Every stream of every 2.1.0 fixture: (fixture, path, its records as stored, in order).
pub fn fixture_streams() -> Vec<(String, String, Vec<Value>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for name in db_fixture_names("flue-2.1.0") {
        let conn = Connection::open(unpack_db("flue-2.1.0", &name, dir.path())).unwrap();
        let paths: Vec<String> = conn
            .prepare("SELECT path FROM flue_conversation_streams ORDER BY path")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for path in paths {
            let records = stream_values(&conn, &path);
            out.push((name.clone(), path, records));
        }
    }
    out
}

/// Every record of stream `path` as stored (JSON), batch by batch, spilled batches put together.
pub fn stream_values(conn: &Connection, path: &str) -> Vec<Value> {
    let mut stmt = conn
        .prepare(
            "SELECT seq, data FROM flue_conversation_stream_batches WHERE path = ?1 ORDER BY seq",
        )
        .unwrap();
    let batches: Vec<(i64, String)> = stmt
        .query_map([path], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut records = Vec::new();
    for (seq, data) in batches {
        let data = if data.starts_with("{\"$flueChunkCount\"") {
            let mut chunks = conn
                .prepare("SELECT data FROM flue_conversation_stream_batch_chunks WHERE path = ?1 AND seq = ?2 ORDER BY chunk_index")
                .unwrap();
            chunks
                .query_map(rusqlite::params![path, seq], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect::<String>()
        } else {
            data
        };
        // Parsed once as typed records, to fail here on a record turnscope cannot type.
        parse_batch(&data).unwrap_or_else(|e| panic!("{path}#{seq}: {e}"));
        match serde_json::from_str(&data).unwrap() {
            Value::Array(items) => records.extend(items),
            other => panic!("{path}#{seq}: not an array: {other}"),
        }
    }
    records
}

fn parent(p: &Parent) -> Value {
    match p {
        Parent::Id(id) => json!(id),
        Parent::Null | Parent::Undefined => Value::Null,
    }
}

fn entry_shape(e: &Entry) -> Value {
    let mut out = json!({ "id": e.id, "parentId": parent(&e.parent_id) });
    let o = out.as_object_mut().unwrap();
    if let Some(s) = &e.submission_id {
        o.insert("submissionId".into(), json!(s));
    }
    match &e.body {
        EntryBody::Compaction {
            first_kept_entry_id,
        } => {
            o.insert("type".into(), json!("compaction"));
            o.insert("firstKeptEntryId".into(), json!(first_kept_entry_id));
        }
        EntryBody::User { content } => {
            o.insert("role".into(), json!("user"));
            let text: String = content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.as_str()),
                    ContentBlock::Attachment(_) => None,
                })
                .collect();
            o.insert("text".into(), json!(text));
        }
        EntryBody::Signal { signal_type } => {
            o.insert("role".into(), json!("signal"));
            o.insert("signalType".into(), json!(signal_type));
        }
        EntryBody::Assistant {
            stop_reason,
            error_message,
            text,
            tool_calls,
            ..
        } => {
            o.insert("role".into(), json!("assistant"));
            o.insert("stopReason".into(), json!(stop_reason));
            if let Some(m) = error_message {
                o.insert("errorMessage".into(), json!(m));
            }
            o.insert("text".into(), json!(text));
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| json!({ "id": c.id, "name": c.name }))
                .collect();
            o.insert("toolCalls".into(), json!(calls));
        }
        EntryBody::ToolResult {
            tool_call_id,
            tool_name,
            is_error,
            terminate,
        } => {
            o.insert("role".into(), json!("toolResult"));
            o.insert("toolCallId".into(), json!(tool_call_id));
            o.insert("toolName".into(), json!(tool_name));
            o.insert("isError".into(), json!(is_error));
            if *terminate {
                o.insert("terminate".into(), json!(true));
            }
        }
    }
    out
}

fn conversation_shape(c: &Conversation) -> Value {
    json!({
        "conversationId": c.conversation_id,
        "kind": c.kind,
        "harness": c.harness,
        "session": c.session,
        "activeLeafId": c.active_leaf_id,
        "entries": c.entries.len(),
        "activePath": c.active_path().unwrap().into_iter().map(entry_shape).collect::<Vec<_>>(),
        "inProgressMessages": c.in_progress.iter().map(|m| json!({
            "messageId": m.message_id,
            "parentId": parent(&m.parent_id),
            "submissionId": m.submission_id,
            "blocks": m.blocks.iter().map(|b| match b.kind {
                BlockKind::ToolCall => {
                    let call = b.tool_call.as_ref().unwrap();
                    json!({ "type": "tool_call", "blockIndex": b.block_index, "toolCallId": call.id, "name": call.name })
                }
                kind => json!({
                    "type": if kind == BlockKind::Text { "text" } else { "reasoning" },
                    "blockIndex": b.block_index,
                    "text": b.deltas.concat(),
                    "completed": b.completed,
                }),
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "uncommittedToolOutcomes": c.uncommitted_outcomes.iter().map(|o| json!({
            "recordId": o.record_id,
            "assistantMessageId": o.assistant_message_id,
            "toolCallId": o.tool_call_id,
            "isError": o.is_error,
        })).collect::<Vec<_>>(),
    })
}

#[test]
fn the_fold_of_every_2_1_0_fixture_equals_the_runtimes() {
    let mut streams_of: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let (mut ghosts, mut uncommitted, mut tool_results) = (0, 0, 0);
    for (name, path, values) in fixture_streams() {
        let records: Vec<Record> = values
            .into_iter()
            .map(|v| Record::from_value(v).unwrap_or_else(|e| panic!("{name}: {path}: {e}")))
            .collect();
        let state = InstanceState::fold(&records).unwrap_or_else(|e| panic!("{name}: {path}: {e}"));
        for c in &state.conversations {
            ghosts += c.in_progress.len();
            uncommitted += c.uncommitted_outcomes.len();
            tool_results += c
                .entries
                .values()
                .filter(|e| matches!(e.body, EntryBody::ToolResult { .. }))
                .count();
        }
        streams_of.entry(name).or_default().push(json!({
            "path": path,
            "conversations": state.conversations.iter().map(conversation_shape).collect::<Vec<_>>(),
        }));
    }
    assert!(streams_of.len() >= 15, "{:?}", streams_of.keys());
    let folder = fixtures_dir().join("flue-2.1.0");
    for (name, streams) in streams_of {
        let ours = json!({ "runtime": "@flue/runtime 2.1.0", "streams": streams });
        let text = std::fs::read_to_string(folder.join(format!("{name}.fold.json"))).unwrap();
        let runtime: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            ours, runtime,
            "{name}: turnscope's fold differs from the runtime's"
        );
    }
    // The fixtures exercise the fold's three kinds of state.
    assert!(
        ghosts >= 1 && uncommitted >= 5 && tool_results >= 6,
        "{ghosts} {uncommitted} {tool_results}"
    );
}

/// The read path's fold (`fold_stream`: batch by batch as the reader hands them over, each
/// record kept without a copy) gives the runtime's fold too, on every stream of every fixture.
#[test]
fn the_streamed_fold_of_every_2_1_0_fixture_equals_the_runtimes() {
    let dir = tempfile::tempdir().unwrap();
    let folder = fixtures_dir().join("flue-2.1.0");
    let mut streams = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let reader = turnscope_store::Flue2SqliteReader::open(&db).unwrap();
        let text = std::fs::read_to_string(folder.join(format!("{name}.fold.json"))).unwrap();
        let runtime: Value = serde_json::from_str(&text).unwrap();
        for want in runtime["streams"].as_array().unwrap() {
            let path = want["path"].as_str().unwrap();
            let folded = turnscope_engine::flue2::fold_stream(&reader, path).unwrap();
            let state = folded
                .state
                .unwrap_or_else(|e| panic!("{name}: {path}: {e}"));
            let ours = json!({
                "path": path,
                "conversations": state.conversations.iter().map(conversation_shape).collect::<Vec<_>>(),
            });
            assert_eq!(&ours, want, "{name}: {path}: the streamed fold differs");
            streams += 1;
        }
    }
    assert!(streams >= 15, "{streams} streams");
}

/// `Streams::refresh` (the TUI's list, every refresh) keeps a folded stream while its head
/// (`next_offset`, `incarnation`) is unchanged, folds it again once the head moves, and lets go
/// of the streams no row asks for. Shown by a batch deleted behind the head (which the runtime
/// never does): the kept fold does not see it until the head moves.
#[test]
fn a_kept_fold_is_used_until_its_streams_head_moves() {
    use turnscope_engine::flue2::Streams;
    use turnscope_store::Flue2SqliteReader;
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let writer = Connection::open(&db).unwrap();
    let reader = Flue2SqliteReader::open(&db).unwrap();
    let rows = reader.submissions().unwrap();
    let path = rows[0].session().unwrap().stream_path();
    // The batches each fold read.
    let batches = |s: &Streams| s.get(&path).map(|f| f.batches);
    let mut streams = Streams::default();
    let heads = reader.stream_heads().unwrap();
    streams.refresh(&reader, &heads, &rows).unwrap();
    let before = batches(&streams).unwrap();
    // The last batch taken away behind the head: it did not move, the kept fold stands.
    writer
        .execute(
            "DELETE FROM flue_conversation_stream_batches \
             WHERE path = ?1 AND seq = (SELECT max(seq) FROM flue_conversation_stream_batches WHERE path = ?1)",
            [&path],
        )
        .unwrap();
    streams
        .refresh(&reader, &reader.stream_heads().unwrap(), &rows)
        .unwrap();
    assert_eq!(batches(&streams), Some(before));
    // The head moves: folded again, from the rows as they are now.
    writer
        .execute(
            "UPDATE flue_conversation_streams SET next_offset = next_offset + 1 WHERE path = ?1",
            [&path],
        )
        .unwrap();
    streams
        .refresh(&reader, &reader.stream_heads().unwrap(), &rows)
        .unwrap();
    let mut fresh = Streams::default();
    fresh.load(&reader, &rows).unwrap();
    assert_eq!(batches(&streams), batches(&fresh));
    assert_ne!(
        batches(&fresh),
        Some(before),
        "the batch is gone from a fresh fold"
    );
    // No row asks for it: let go.
    streams
        .refresh(&reader, &reader.stream_heads().unwrap(), std::iter::empty())
        .unwrap();
    assert!(streams.get(&path).is_none());
}
