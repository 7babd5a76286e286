use super::{messages, parse_outcome, ParseOutcome};
use crate::flue2::reconciler::tests::row;
use crate::journal::images::{ChunkCell, ChunkRow};

/// `row()`'s payload with `message` (JSON text) in place; accepted at 1 ms past the epoch.
fn payload(message: &str) -> String {
    format!(
        r#"{{"kind":"dispatch","submissionId":"{}","agent":"worker","id":"i1","acceptedAt":"1970-01-01T00:00:00.001Z","message":{message}}}"#,
        row().submission_id
    )
}

fn chunk(item: &str, index: f64, count: f64, units: u64) -> ChunkRow {
    ChunkRow {
        image_id: ChunkCell::Text(item.into()),
        index: ChunkCell::Number(index),
        count: ChunkCell::Number(count),
        data_is_text: true,
        data_units: units,
    }
}

/// The runtime's message for `payload` with `chunks`, `Ok(())` where it parses.
fn outcome(payload: &str, chunks: &[ChunkRow]) -> Result<(), String> {
    match parse_outcome(&row(), Some(payload), chunks) {
        ParseOutcome::Parses => Ok(()),
        ParseOutcome::Fails { error, problem } => Err(error.unwrap_or(problem)),
        ParseOutcome::Undecided { why } => Err(format!("undecided: {why}")),
    }
}

const USER: &str = r#"{"kind":"user","body":"hi"}"#;
fn is(r: Result<(), String>, message: &str) -> bool {
    r == Err(message.to_string())
}

#[test]
fn a_payload_the_runtime_admits_parses() {
    assert_eq!(outcome(&payload(USER), &[]), Ok(()));
    // Keys no check reads, at any depth and with numbers JSON.parse reads as Infinity.
    let deep = format!("{}1e400{}", "[".repeat(3_000), "]".repeat(3_000));
    let p = payload(USER).replace(r#""agent""#, &format!(r#""extra":{deep},"agent""#));
    assert_eq!(outcome(&p, &[]), Ok(()));
    let signal = r#"{"kind":"signal","type":"deploy","body":"x","attributes":{"a":"b","__proto__":5},"tagName":"deploy.v1-x"}"#;
    assert_eq!(outcome(&payload(signal), &[]), Ok(()));
    // valibot's record takes an array as an object of its indexes.
    let signal = r#"{"kind":"signal","type":"deploy","body":"x","attributes":["b"]}"#;
    assert_eq!(outcome(&payload(signal), &[]), Ok(()));
}

#[test]
fn the_chunk_rows_types_are_checked_before_the_columns_and_the_payload() {
    let mut bad = chunk("0", 0.0, 1.0, 3);
    bad.index = ChunkCell::Number(0.5);
    let mut r = row();
    r.stored_as = Some(crate::journal::submission_rows::StoredAs {
        column: "kind",
        class: "a BLOB",
        value: None,
    });
    let first = |r: &crate::flue2::Flue2SubmissionRow, chunks: &[ChunkRow]| match parse_outcome(
        r,
        Some("not json"),
        chunks,
    ) {
        ParseOutcome::Fails { error, .. } => error,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        first(&r, &[bad]).as_deref(),
        Some(messages::CHUNK_ROW_MALFORMED)
    );
    assert_eq!(first(&r, &[]).as_deref(), Some(messages::ROW_MALFORMED));
    // JSON.parse's own message, as V8 words it.
    assert_eq!(
        first(&row(), &[]).as_deref(),
        Some("Unexpected token 'o', \"not json\" is not valid JSON")
    );
}

#[test]
fn attachments_are_hydrated_from_the_chunk_rows_with_v8s_type_errors_on_the_way() {
    let marker = r#"{"kind":"user","body":"hi","attachments":[{"type":"image","data":"__flue_submission_chunks__:0","mimeType":"image/png"}]}"#;
    let rows = [chunk("0", 0.0, 2.0, 5), chunk("0", 1.0, 2.0, 5)];
    assert_eq!(outcome(&payload(marker), &rows), Ok(()));
    let do_not_match = "[flue] Persisted image chunks do not match persisted image markers.";
    assert!(is(outcome(&payload(marker), &[]), do_not_match));
    assert!(is(outcome(&payload(USER), &rows), do_not_match));
    assert!(is(
        outcome(&payload(marker), &rows[..1]),
        "[flue] Persisted image chunks are missing or malformed."
    ));
    // Rows for a message that is not a user's are a mismatch too (none are expected).
    let signal = r#"{"kind":"signal","type":"t","body":"x"}"#;
    assert!(is(outcome(&payload(signal), &rows), do_not_match));
    let type_error = |text: &str, m: &str| assert!(is(outcome(text, &[]), m), "{text}");
    type_error("null", "Cannot read properties of null (reading 'message')");
    type_error(
        "[1]",
        "Cannot read properties of undefined (reading 'kind')",
    );
    type_error(
        r#""text""#,
        "Cannot read properties of undefined (reading 'kind')",
    );
    type_error(
        &payload(USER).replace(r#","message":{"kind":"user","body":"hi"}"#, ""),
        "Cannot read properties of undefined (reading 'kind')",
    );
    type_error(
        &payload("null"),
        "Cannot read properties of null (reading 'kind')",
    );
    type_error(
        &payload(r#"{"kind":"user","body":"hi","attachments":null}"#),
        "Cannot read properties of null (reading 'map')",
    );
    type_error(
        &payload(r#"{"kind":"user","body":"hi","attachments":{"0":1}}"#),
        "blocks.map is not a function",
    );
    // A message that is a string is not a user's: nothing to hydrate, and the schema fails it.
    type_error(&payload(r#""hi""#), messages::PAYLOAD_MALFORMED);
}

#[test]
fn the_payload_check_ports_the_delivered_message_schema_and_the_rows_identity() {
    let fails = |text: String| {
        assert!(
            is(outcome(&text, &[]), messages::PAYLOAD_MALFORMED),
            "{text}"
        )
    };
    fails(payload(r#"{"kind":"user"}"#));
    fails(payload(r#"{"kind":"user","body":5}"#));
    fails(payload(r#"{"kind":"other","body":"x"}"#));
    fails(payload(
        r#"{"kind":"user","body":"x","attachments":[{"type":"image","data":"x"}]}"#,
    ));
    fails(payload(
        r#"{"kind":"user","body":"x","attachments":[{"type":"image","data":"x","mimeType":"a","filename":null}]}"#,
    ));
    fails(payload(
        r#"{"kind":"user","body":"x","attachments":[{"type":"file","data":"x","mimeType":"a"}]}"#,
    ));
    fails(payload(r#"{"kind":"signal","type":"","body":"x"}"#));
    fails(payload(r#"{"kind":"signal","type":"memory","body":"x"}"#));
    fails(payload(
        r#"{"kind":"signal","type":"t","body":"x","attributes":{"a":1}}"#,
    ));
    fails(payload(
        r#"{"kind":"signal","type":"t","body":"x","attributes":null}"#,
    ));
    fails(payload(
        r#"{"kind":"signal","type":"t","body":"x","tagName":"1tag"}"#,
    ));
    fails(payload(
        r#"{"kind":"signal","type":"t","body":"x","tagName":"a b"}"#,
    ));
    fails(payload(USER).replace(r#""kind":"dispatch""#, r#""kind":"direct""#));
    fails(payload(USER).replace(r#""id":"i1""#, r#""id":"i2""#));
    fails(payload(USER).replace(r#""agent":"worker""#, r#""agent":5"#));
    fails(payload(USER).replace(".001Z", ".002Z"));
    // Over the limit in UTF-16 units once hydrated, not before.
    let marker = r#"{"kind":"user","body":"hi","attachments":[{"type":"image","data":"__flue_submission_chunks__:0","mimeType":"image/png"}]}"#;
    let limit = crate::journal::images::MAX_IMAGE_DATA_UNITS;
    assert_eq!(
        outcome(&payload(marker), &[chunk("0", 0.0, 1.0, limit)]),
        Ok(())
    );
    fails_with_rows(&payload(marker), &[chunk("0", 0.0, 1.0, limit + 1)]);
}

fn fails_with_rows(text: &str, rows: &[ChunkRow]) {
    assert!(
        is(outcome(text, rows), messages::PAYLOAD_MALFORMED),
        "{text}"
    );
}

#[test]
fn an_accepted_at_in_another_form_is_undecided_and_an_unread_payload_parses() {
    let other = payload(USER).replace("1970-01-01T00:00:00.001Z", "1970-01-01T00:00:00.001+00:00");
    assert!(outcome(&other, &[]).is_err_and(|e| e.starts_with("undecided: ")));
    assert_eq!(parse_outcome(&row(), None, &[]), ParseOutcome::Parses);
}

#[test]
fn the_columns_each_status_needs_are_checked_before_the_payload() {
    let column = |change: fn(&mut crate::flue2::Flue2SubmissionRow)| {
        let mut r = row();
        change(&mut r);
        match parse_outcome(&r, Some("not json"), &[]) {
            ParseOutcome::Fails { error, problem } => (error, problem),
            other => panic!("{other:?}"),
        }
    };
    let malformed = Some(messages::ROW_MALFORMED.to_string());
    for change in [
        (|r: &mut crate::flue2::Flue2SubmissionRow| r.attempt_id = None) as fn(&mut _),
        |r| r.started_at = None,
        |r| r.kind = "other".into(),
        |r| r.accepted_at = None,
        |r| r.status = "queued".into(),
        |r| {
            r.status = "joined".into();
            r.joined_into = None;
        },
    ] {
        let (error, problem) = column(change);
        assert_eq!(error, malformed, "{problem}");
    }
    // A queued row with nothing of an attempt set gets to the payload.
    let (error, _) = column(|r| {
        r.status = "queued".into();
        r.attempt_id = None;
        r.started_at = None;
        r.input_applied_at = None;
    });
    assert_eq!(
        error.as_deref(),
        Some("Unexpected token 'o', \"not json\" is not valid JSON")
    );
}

#[test]
fn a_settlement_obligation_parses_where_each_column_is_text_and_the_record_json() {
    use super::obligation_failure;
    let ok = [Some("s"), Some("k"), Some("a"), Some("r"), Some("{}")];
    assert_eq!(obligation_failure(ok), None);
    // `1e400` is JSON to JSON.parse (Infinity).
    assert_eq!(
        obligation_failure([ok[0], ok[1], ok[2], ok[3], Some("[1e400]")]),
        None
    );
    for i in 0..5 {
        let mut c = ok;
        c[i] = None;
        let (problem, error) = obligation_failure(c).unwrap();
        assert_eq!(
            error.as_deref(),
            Some(messages::OBLIGATION_MALFORMED),
            "{problem}"
        );
    }
    let (_, error) = obligation_failure([ok[0], ok[1], ok[2], ok[3], Some("{\"type\":")]).unwrap();
    assert_eq!(error.as_deref(), Some("Unexpected end of JSON input"));
}

#[test]
fn a_payload_json_parse_reads_is_read_at_the_top_too() {
    // `Infinity` to JSON.parse, whose `message` is undefined; `null`, whose `message` throws.
    assert!(is(
        outcome("1e400", &[]),
        "Cannot read properties of undefined (reading 'kind')"
    ));
    assert!(is(
        outcome(" null ", &[]),
        "Cannot read properties of null (reading 'message')"
    ));
}
