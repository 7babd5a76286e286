use super::*;
use serde_json::json;

fn row(id: &str, index: f64, count: f64) -> ChunkRow {
    ChunkRow {
        image_id: ChunkCell::Text(id.into()),
        index: ChunkCell::Number(index),
        count: ChunkCell::Number(count),
        data_is_text: true,
        data_units: 10,
    }
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn error(markers: Option<&[String]>, rows: &[ChunkRow]) -> Option<&'static str> {
    entry_error(markers, rows).map(|e| e.message)
}

#[test]
fn markers_are_image_blocks_whose_data_is_a_marker() {
    let content = json!([
        {"type": "text", "text": "__flue_image_chunks__:9"},
        {"type": "image", "data": "__flue_image_chunks__:0", "mimeType": "image/png"},
        {"type": "image", "data": "iVBORw0KGgo", "mimeType": "image/png"},
        {"type": "image", "data": 7},
        {"type": "image", "data": "__flue_image_chunks__:1"},
        ["__flue_image_chunks__:2"],
        null
    ]);
    assert_eq!(marker_ids(&content), ids(&["0", "1"]));
    assert!(marker_ids(&json!("__flue_image_chunks__:0")).is_empty());
}

#[test]
fn only_user_and_tool_result_messages_have_markers() {
    let with = |role: &str| {
        json!({"type": "message", "id": "e", "message": {"role": role, "content": [
            {"type": "image", "data": "__flue_image_chunks__:0"}
        ]}})
    };
    assert_eq!(entry_markers(&with("user")), Some(ids(&["0"])));
    assert_eq!(entry_markers(&with("toolResult")), Some(ids(&["0"])));
    assert_eq!(entry_markers(&with("assistant")), None);
    assert_eq!(entry_markers(&json!({"type": "compaction"})), None);
    assert_eq!(
        entry_markers(&json!({"type": "message", "message": null})),
        None
    );
    assert_eq!(
        entry_markers(&json!({"type": "message", "message": {"role": "user", "content": "hi"}})),
        Some(vec![])
    );
}

#[test]
fn an_entry_whose_markers_and_chunks_agree_loads() {
    let m = ids(&["0", "1"]);
    let rows = [row("0", 0.0, 2.0), row("0", 1.0, 2.0), row("1", 0.0, 1.0)];
    assert_eq!(error(Some(&m), &rows), None);
    // No image, no row: what nearly every entry is.
    assert_eq!(error(Some(&[]), &[]), None);
    assert_eq!(error(None, &[]), None);
    // A REAL that is an integer is a number the runtime accepts.
    assert_eq!(error(Some(&ids(&["0"])), &[row("0", 0.0, 1.0)]), None);
}

#[test]
fn markers_without_their_chunks_do_not_match() {
    let e = entry_error(Some(&ids(&["0"])), &[]).unwrap();
    assert_eq!(e.message, messages::DO_NOT_MATCH);
    assert_eq!(e.found, "1 image marker and no chunk row");
    // One image's rows gone of two.
    assert_eq!(
        error(Some(&ids(&["0", "1"])), &[row("0", 0.0, 1.0)]),
        Some(messages::DO_NOT_MATCH)
    );
    // A repeated marker.
    assert_eq!(
        error(Some(&ids(&["0", "0"])), &[row("0", 0.0, 1.0)]),
        Some(messages::DO_NOT_MATCH)
    );
    // Chunks of another id.
    assert_eq!(
        error(Some(&ids(&["0"])), &[row("1", 0.0, 1.0)]),
        Some(messages::DO_NOT_MATCH)
    );
}

#[test]
fn chunks_of_an_entry_that_is_not_an_image_message_do_not_match() {
    assert_eq!(
        error(None, &[row("0", 0.0, 1.0)]),
        Some(messages::DO_NOT_MATCH)
    );
    assert_eq!(
        entry_error(Some(&[]), &[row("0", 0.0, 1.0)]).unwrap().found,
        "no image marker, 1 image with chunk rows"
    );
}

#[test]
fn a_group_that_does_not_add_up_is_missing_or_malformed() {
    let m = ids(&["0"]);
    for rows in [
        vec![row("0", 0.0, 2.0)],
        vec![row("0", 1.0, 2.0), row("0", 2.0, 2.0)],
        vec![row("0", 0.0, 2.0), row("0", 1.0, 3.0)],
        vec![row("0", 0.0, 0.0)],
        vec![row("0", 0.0, 1.0), row("0", 0.0, 1.0)],
    ] {
        assert_eq!(
            error(Some(&m), &rows),
            Some(messages::MISSING_OR_MALFORMED),
            "{rows:?}"
        );
    }
    // The group check comes before the markers'.
    assert_eq!(
        error(None, &[row("0", 0.0, 2.0)]),
        Some(messages::MISSING_OR_MALFORMED)
    );
}

#[test]
fn a_column_of_another_type_is_a_malformed_row_whatever_else_is_wrong() {
    let m = ids(&["0"]);
    let mut r = row("0", 0.0, 1.0);
    r.data_is_text = false;
    let mut id = row("0", 0.0, 1.0);
    id.image_id = ChunkCell::Number(0.0);
    let mut frac = row("0", 0.0, 1.0);
    frac.index = ChunkCell::Number(0.5);
    let mut text = row("0", 0.0, 1.0);
    text.count = ChunkCell::Text("1".into());
    for bad in [r, id, frac, text] {
        // Read first: before the other image's missing row is counted.
        let rows = [row("1", 0.0, 2.0), bad.clone()];
        assert_eq!(
            error(Some(&m), &rows),
            Some(messages::ROW_MALFORMED),
            "{bad:?}"
        );
    }
}

/// Every reader of an entry says the same of its markers: the full parse gives their ids, the
/// compact readers (byte scanner, serde visitors) that there are some, to be read by id.
#[test]
fn entries_say_which_markers_they_hold() {
    use crate::journal::compact::{parse_compact_previews, Previews};
    use crate::journal::entry::{Entry, EntryImages};
    let entry = |role: &str, data: &str| {
        format!(
            r#"{{"type":"message","id":"e1","parentId":null,"message":{{"role":"{role}","content":[{{"type":"text","text":"see"}},{{"type":"image","data":{data},"mimeType":"image/png"}}]}}}}"#
        )
    };
    let marker = r#""__flue_image_chunks__:0""#;
    let escaped = r#""\u005f_flue_image_chunks__:0""#;
    for (role, data, full, compact) in [
        (
            "user",
            marker,
            EntryImages::Ids(ids(&["0"])),
            EntryImages::Unread,
        ),
        (
            "toolResult",
            escaped,
            EntryImages::Ids(ids(&["0"])),
            EntryImages::Unread,
        ),
        (
            "user",
            r#""iVBORw0KGgo""#,
            EntryImages::Ids(vec![]),
            EntryImages::Ids(vec![]),
        ),
        (
            "assistant",
            marker,
            EntryImages::NotImageMessage,
            EntryImages::NotImageMessage,
        ),
    ] {
        let raw = entry(role, data);
        assert_eq!(Entry::parse(0, "e1", &raw).image_markers(), full, "{raw}");
        for previews in [Previews::Keep, Previews::Drop] {
            let (e, _) = parse_compact_previews(0, "e1", raw.as_bytes(), previews);
            assert_eq!(e.image_markers(), compact, "{raw}");
        }
        // The serde visitors (a key with an escape is theirs, not the scanner's).
        let declined = raw.replace(r#""mimeType""#, r#""mime\u0054ype""#);
        let (e, _) = parse_compact_previews(0, "e1", declined.as_bytes(), Previews::Keep);
        assert_eq!(e.image_markers(), compact, "{declined}");
    }
    let compaction = r#"{"type":"compaction","id":"c","summary":"s"}"#;
    assert_eq!(
        Entry::parse(0, "c", compaction).image_markers(),
        EntryImages::NotImageMessage
    );
}
