//! 2.x's row parser (`parseSubmission(row, chunks)`, SAES:703–712, 2.1.0's
//! `dist/sql-agent-execution-store-CS3_7p5s.mjs`), over a running, queued or terminalizing row:
//! what the runtime's passes do with a running or queued row they cannot parse is settle it failed
//! with the parser's message (`parseOperationalRows` → `failSubmissionSequence`, SAES:664–683); a
//! terminalizing one is deferred. A port, in the runtime's order:
//! 1. the submission's `flue_submission_chunks` rows, each checked for its types as it is read
//!    (`parseChunkRow`, SAES:300; the argument is evaluated before the call);
//! 2. the row's columns (their types, the store's [`Flue2SubmissionRow::stored_as`], then `kind`
//!    and the columns each status needs);
//! 3. `JSON.parse` of `payload`;
//! 4. the attachments' hydration (`hydratePersistedSubmissionAttachments`, CSS:141–225): the rows
//!    regrouped, the markers of a user message's `attachments` against them, V8's `TypeError`
//!    where a value on the way is missing;
//! 5. the payload check (`isSubmissionPayload`, CSS:225): kind, submission id, the delivered
//!    message's schema (valibot, `DeliveredMessageSchema`, DP:2959–2982), the session key rebuilt
//!    from `agent` and `id`, and `Date.parse(acceptedAt)`.
//!
//! A payload is read as in beta.7's port (`journal::payload`): values no check reads are kept as
//! raw text, so a number out of `f64`'s range or a deep value parses as `JSON.parse` parses it.

use std::collections::HashMap;

use serde_json::value::RawValue;

pub use crate::flue2::rows::ParseOutcome;
use crate::flue2::Flue2SubmissionRow;
use crate::journal::images::{self, ChunkRow, ImageGroup, MAX_IMAGE_DATA_UNITS};

/// The runtime's errors, word for word.
pub mod messages {
    /// `parseChunkRow` (SAES:300).
    pub const CHUNK_ROW_MALFORMED: &str = "[flue] Persisted submission chunk row is malformed.";
    /// `parseSubmission`'s column check (SAES:704).
    pub const ROW_MALFORMED: &str = "[flue] Persisted agent submission row is malformed.";
    /// `parseSubmission`'s payload check (SAES:709).
    pub const PAYLOAD_MALFORMED: &str = "[flue] Persisted agent submission payload is malformed.";
    /// `parseSettlementObligation` (SAES:694).
    pub const OBLIGATION_MALFORMED: &str =
        "[flue] Persisted submission settlement obligation is malformed.";
}

/// What a 2.x attachment marker's `data` starts with (`markerPrefix`); the item id follows.
pub const MARKER_PREFIX: &str = "__flue_submission_chunks__:";

/// `RESERVED_SIGNAL_TYPES` (DP:18): a signal message of one of these types is not a delivered
/// message.
const RESERVED_SIGNAL_TYPES: [&str; 9] = [
    "resources",
    "instructions",
    "environment",
    "stream_interrupted",
    "stream_continued",
    "submission_aborted",
    "submission_interrupted",
    "compaction",
    "memory",
];

/// The row parser over `row`, its `payload` and its `flue_submission_chunks` rows as the store
/// read them (`ORDER BY item_id, chunk_index`). `payload` `None`: not read (the store reads it
/// for the rows a pass parses: running, queued and terminalizing), then only the rows' types and
/// the columns are checked.
pub fn parse_outcome(
    row: &Flue2SubmissionRow,
    payload: Option<&str>,
    chunks: &[ChunkRow],
) -> ParseOutcome {
    let fail = |problem: String, error: &str| ParseOutcome::Fails {
        problem,
        error: Some(error.to_string()),
    };
    if images::rows_error(chunks).is_some() {
        return fail(
            "a flue_submission_chunks row of the submission has a column of another type".into(),
            messages::CHUNK_ROW_MALFORMED,
        );
    }
    if let Some(problem) = column_problem(row) {
        return fail(problem, messages::ROW_MALFORMED);
    }
    let Some(payload) = payload else {
        return ParseOutcome::Parses;
    };
    let top = match Json::read(payload) {
        Ok(top) => top,
        Err(e) => {
            return ParseOutcome::Fails {
                problem: format!("payload is not valid JSON: {e}"),
                error: crate::js::parse_error::parse_error_message(payload),
            }
        }
    };
    let groups = match hydration(&top, chunks) {
        Ok(groups) => groups,
        Err(Thrown::Images(e)) => return fail(format!("its attachments: {}", e.found), e.message),
        Err(Thrown::TypeError(m)) => {
            return fail(
                "the payload has no message whose attachments can be read".into(),
                m,
            )
        }
    };
    match payload_problem(row, &top, &groups) {
        Some(Problem::Fails(problem)) => fail(problem, messages::PAYLOAD_MALFORMED),
        Some(Problem::Undecided(why)) => ParseOutcome::Undecided { why },
        None => ParseOutcome::Parses,
    }
}

/// The column checks of `parseSubmission` (SAES:704), all one condition: each column's type (the
/// store's `stored_as`), `kind` one of the two, and the columns each status needs set or unset.
fn column_problem(row: &Flue2SubmissionRow) -> Option<String> {
    if let Some(stored) = &row.stored_as {
        return Some(stored.to_string());
    }
    if !matches!(row.kind.as_str(), "dispatch" | "direct") {
        return Some(format!(
            "kind {:?} is neither dispatch nor direct",
            row.kind
        ));
    }
    let status = row.status.as_str();
    let set = match status {
        "queued" => [
            ("attempt_id", row.attempt_id.is_some()),
            ("input_applied_at", row.input_applied_at.is_some()),
            ("started_at", row.started_at.is_some()),
            ("joined_into", row.joined_into.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(column, _)| format!("a queued row with {column} set")),
        "running" | "terminalizing" => [
            ("attempt_id", row.attempt_id.is_none()),
            ("started_at", row.started_at.is_none()),
        ]
        .into_iter()
        .find(|(_, unset)| *unset)
        .map(|(column, _)| format!("a {status} row without {column}")),
        "joining" | "joined" if row.joined_into.is_none() => {
            Some(format!("a {status} row without joined_into"))
        }
        _ => None,
    };
    set.or_else(|| {
        row.accepted_at
            .is_none()
            .then(|| "accepted_at is not a number".to_string())
    })
}

/// `parseSettlementObligation` (SAES:694) over a terminalizing row's `submission_id`,
/// `session_key`, `attempt_id`, `settlement_record_id` and `settlement_record`, each `None` where
/// it is not text (`typeof` other than `"string"`): `None` where it parses, else what is wrong and
/// the runtime's message (`None`: `JSON.parse`'s, which turnscope cannot give for this text). The
/// pass maps every terminalizing row through it before its expired-lease scan
/// (`listPendingSubmissionSettlements`, SAES:427), so one that throws throws the whole pass.
pub fn obligation_failure(columns: [Option<&str>; 5]) -> Option<(String, Option<String>)> {
    const NAMES: [&str; 5] = [
        "submission_id",
        "session_key",
        "attempt_id",
        "settlement_record_id",
        "settlement_record",
    ];
    if let Some(i) = columns.iter().position(Option::is_none) {
        return Some((
            format!("{} is not text", NAMES[i]),
            Some(messages::OBLIGATION_MALFORMED.to_string()),
        ));
    }
    let record = columns[4].unwrap_or_default();
    Json::read(record).err().map(|e| {
        (
            format!("settlement_record is not JSON: {e}"),
            crate::js::parse_error::parse_error_message(record),
        )
    })
}

enum Thrown {
    TypeError(&'static str),
    Images(images::ImageError),
}

enum Problem {
    Fails(String),
    Undecided(String),
}

type RawObject = HashMap<String, Box<RawValue>>;

/// A JSON value as the checks read it: objects one level at a time, the rest raw.
enum Json {
    Object(RawObject),
    Array(Vec<Box<RawValue>>),
    Null,
    /// A string, a number or a boolean.
    Other,
}

impl Json {
    /// `text` read as `JSON.parse` reads it; `Err` with serde_json's message when it is not JSON.
    fn read(text: &str) -> Result<Json, String> {
        if let Ok(o) = crate::js::lone_surrogates::from_str::<RawObject>(text) {
            return Ok(Json::Object(o));
        }
        if let Ok(a) = crate::js::lone_surrogates::from_str::<Vec<Box<RawValue>>>(text) {
            return Ok(Json::Array(a));
        }
        // Not an object or an array: null, a string, a number, a boolean, or not JSON at all.
        crate::js::lone_surrogates::from_str::<serde::de::IgnoredAny>(text)
            .map_err(|e| e.to_string())?;
        Ok(if text.trim_matches([' ', '\t', '\n', '\r']) == "null" {
            Json::Null
        } else {
            Json::Other
        })
    }

    fn of(raw: &RawValue) -> Json {
        // `raw` was read as JSON with its parent: it reads again.
        Json::read(raw.get()).unwrap_or(Json::Other)
    }

    fn object(&self) -> Option<&RawObject> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }
}

/// `o[key]` when it is a string.
fn string_field(o: &RawObject, key: &str) -> Option<String> {
    o.get(key)
        .and_then(|r| crate::js::lone_surrogates::from_str::<String>(r.get()).ok())
}

/// `isImageBlock(block)` with a marker's data: the id of the item it stands for.
fn marker(block: &RawValue) -> Option<String> {
    let Json::Object(o) = Json::of(block) else {
        return None;
    };
    if string_field(&o, "type").as_deref() != Some("image") {
        return None;
    }
    string_field(&o, "data")?
        .strip_prefix(MARKER_PREFIX)
        .map(str::to_string)
}

/// `hydrateSubmissionAttachments(input, reassemblePersistedChunks(rows))`: `Ok` with the items'
/// lengths when it passes.
fn hydration(input: &Json, rows: &[ChunkRow]) -> Result<Vec<ImageGroup>, Thrown> {
    let groups = images::reassemble(rows).map_err(Thrown::Images)?;
    let exact = |markers: &[String]| match images::exact(markers, &groups) {
        Some(e) => Err(Thrown::Images(e)),
        None => Ok(()),
    };
    // `input.message.kind`: V8's TypeError where `input` or its message cannot be read.
    let message = match input {
        Json::Null => {
            return Err(Thrown::TypeError(
                "Cannot read properties of null (reading 'message')",
            ))
        }
        Json::Object(o) => o.get("message").map(|m| Json::of(m)),
        _ => None,
    };
    let message = match message {
        None => {
            return Err(Thrown::TypeError(
                "Cannot read properties of undefined (reading 'kind')",
            ))
        }
        Some(Json::Null) => {
            return Err(Thrown::TypeError(
                "Cannot read properties of null (reading 'kind')",
            ))
        }
        Some(m) => m,
    };
    let attachments = message
        .object()
        .filter(|o| string_field(o, "kind").as_deref() == Some("user"))
        .and_then(|o| o.get("attachments"));
    let Some(attachments) = attachments else {
        exact(&[])?;
        return Ok(groups);
    };
    let attachments = Json::of(attachments);
    let markers: Vec<String> = match &attachments {
        Json::Array(blocks) => blocks.iter().filter_map(|b| marker(b)).collect(),
        _ => Vec::new(),
    };
    exact(&markers)?;
    match attachments {
        Json::Array(_) => Ok(groups),
        Json::Null => Err(Thrown::TypeError(
            "Cannot read properties of null (reading 'map')",
        )),
        _ => Err(Thrown::TypeError("blocks.map is not a function")),
    }
}

/// `isSubmissionPayload(input, row)` on the hydrated input (`groups`: the items its markers stand
/// for); `None` when it passes.
fn payload_problem(
    row: &Flue2SubmissionRow,
    input: &Json,
    groups: &[ImageGroup],
) -> Option<Problem> {
    let fails = |p: &str| Some(Problem::Fails(p.to_string()));
    let Some(o) = input.object() else {
        return fails("payload is not a JSON object");
    };
    if string_field(o, "kind").as_deref() != Some(row.kind.as_str())
        || string_field(o, "submissionId").as_deref() != Some(row.submission_id.as_str())
    {
        return fails("payload kind/submissionId differ from the row");
    }
    let message = o.get("message").map_or(Json::Other, |m| Json::of(m));
    if let Some(p) = message_problem(&message, groups) {
        return Some(Problem::Fails(format!("payload message: {p}")));
    }
    let (Some(agent), Some(id)) = (string_field(o, "agent"), string_field(o, "id")) else {
        return fails("payload has no agent or id string");
    };
    // `createSessionStorageKey(agent, id, "default", "default")`: JSON.stringify of the four.
    let key = format!(
        "agent-session:{}",
        serde_json::to_string(&[agent.as_str(), id.as_str(), "default", "default"])
            .unwrap_or_default()
    );
    if key != row.session_key {
        return fails("payload agent and id do not rebuild session_key");
    }
    let Some(accepted) = string_field(o, "acceptedAt") else {
        return fails("payload acceptedAt is not a string");
    };
    match crate::journal::time::ms_from_iso(&accepted) {
        Some(ms) if Some(ms) == row.accepted_at => None,
        Some(_) => fails("payload acceptedAt does not match accepted_at"),
        None => Some(Problem::Undecided(format!(
            "payload acceptedAt {accepted:?} is not in the form the runtime writes (YYYY-MM-DDTHH:MM:SS.mmmZ), and turnscope does not port Date.parse's other forms"
        ))),
    }
}

/// `DeliveredMessageSchema` (a variant on `kind`: a user or a signal message); `None` when it
/// passes. `message` absent is `undefined`, which is no object either.
fn message_problem(message: &Json, groups: &[ImageGroup]) -> Option<String> {
    let Some(m) = message.object() else {
        return Some("not an object".into());
    };
    let string = |k: &str| string_field(m, k);
    // valibot's `optional`: absent passes, any present value (even null) must be of the type.
    let present = |k: &str| m.contains_key(k);
    match string("kind").as_deref() {
        Some("user") => {
            if string("body").is_none() {
                return Some("a user message without a body string".into());
            }
            if present("attachments") {
                return attachments_problem(&Json::of(&m["attachments"]), groups);
            }
            None
        }
        Some("signal") => {
            match string("type") {
                None => return Some("a signal without a type string".into()),
                Some(t) if t.is_empty() => return Some("a signal with an empty type".into()),
                Some(t) if RESERVED_SIGNAL_TYPES.contains(&t.as_str()) => {
                    return Some(format!("a signal of the reserved type {t:?}"))
                }
                Some(_) => {}
            }
            if string("body").is_none() {
                return Some("a signal without a body string".into());
            }
            if present("attributes") && !attributes_ok(&Json::of(&m["attributes"])) {
                return Some("a signal whose attributes are not strings by key".into());
            }
            if present("tagName") && !string("tagName").is_some_and(|t| tag_name_ok(&t)) {
                return Some("a signal whose tagName is not an XML tag name".into());
            }
            None
        }
        _ => Some("kind is neither \"user\" nor \"signal\"".into()),
    }
}

/// `v.array(DeliveredAttachmentSchema)` on the hydrated attachments.
fn attachments_problem(attachments: &Json, groups: &[ImageGroup]) -> Option<String> {
    let Json::Array(blocks) = attachments else {
        return Some("attachments are not an array".into());
    };
    for (i, block) in blocks.iter().enumerate() {
        let Json::Object(o) = Json::of(block) else {
            return Some(format!("attachment {i} is not an object"));
        };
        if string_field(&o, "type").as_deref() != Some("image") {
            return Some(format!("attachment {i} is not of type \"image\""));
        }
        let units = match (marker(block), string_field(&o, "data")) {
            (Some(id), _) => groups
                .iter()
                .find(|g| g.id == id)
                .map_or(0, |g| g.data_units),
            (None, Some(data)) => data.encode_utf16().count() as u64,
            (None, None) => return Some(format!("attachment {i} has no data string")),
        };
        if units > MAX_IMAGE_DATA_UNITS {
            return Some(format!(
                "attachment {i} has {units} characters of data, over the runtime's limit of {MAX_IMAGE_DATA_UNITS}"
            ));
        }
        if string_field(&o, "mimeType").is_none() {
            return Some(format!("attachment {i} has no mimeType string"));
        }
        if o.contains_key("filename") && string_field(&o, "filename").is_none() {
            return Some(format!(
                "attachment {i} has a filename that is not a string"
            ));
        }
    }
    None
}

/// `v.record(v.string(), v.string())`: an object (an array is one too) whose own keys, but
/// `__proto__`, `prototype` and `constructor`, hold strings.
fn attributes_ok(attributes: &Json) -> bool {
    let is_string = |r: &RawValue| crate::js::lone_surrogates::from_str::<String>(r.get()).is_ok();
    match attributes {
        Json::Object(o) => o
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "__proto__" | "prototype" | "constructor"))
            .all(|(_, v)| is_string(v)),
        Json::Array(a) => a.iter().all(|v| is_string(v)),
        _ => false,
    }
}

/// `/^[A-Za-z_][A-Za-z0-9_.-]*$/`.
fn tag_name_ok(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

#[cfg(test)]
#[path = "submission_parse_tests.rs"]
mod tests;
