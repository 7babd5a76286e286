//! The runtime's payload check (`isSubmissionPayload`, spec §2 row invariants) over a payload's
//! top-level fields only. A payload is read the way `JSON.parse` reads it, at any depth: values
//! the check does not look at are kept as raw text (serde_json skips them with its own stack, so
//! a dispatch `input` nested thousands deep is still a valid payload, as it is for the runtime),
//! and the last of duplicate keys wins, as in JavaScript.

use std::collections::HashMap;

use serde_json::value::RawValue;

type RawObject = HashMap<String, Box<RawValue>>;

/// The top-level fields of a payload the check reads; not an object: every field absent.
#[derive(Debug, Default)]
pub struct PayloadFields {
    top: Option<RawObject>,
    /// The payload is JSON `null` (the one value whose properties JavaScript cannot read).
    top_is_null: bool,
    /// A direct prompt's inner `payload` value, when it is an object.
    inner: Option<RawObject>,
}

/// `raw` when it is a JSON string.
fn string(raw: &RawValue) -> Option<String> {
    serde_json::from_str(raw.get()).ok()
}

impl PayloadFields {
    fn field(&self, key: &str) -> Option<String> {
        self.top.as_ref()?.get(key).and_then(|r| string(r))
    }
    fn inner_raw(&self) -> Option<&RawValue> {
        self.top.as_ref()?.get("payload").map(|r| &**r)
    }
    pub fn is_object(&self) -> bool {
        self.top.is_some()
    }
    pub fn kind(&self) -> Option<String> {
        self.field("kind")
    }
    pub fn submission_id(&self) -> Option<String> {
        self.field("submissionId")
    }
    pub fn id(&self) -> Option<String> {
        self.field("id")
    }
    pub fn accepted_at(&self) -> Option<String> {
        self.field("acceptedAt")
    }
    pub fn dispatch_id(&self) -> Option<String> {
        self.field("dispatchId")
    }
    pub fn agent(&self) -> Option<String> {
        self.field("agent")
    }
    pub fn has_input(&self) -> bool {
        self.top.as_ref().is_some_and(|t| t.contains_key("input"))
    }
    /// The inner payload's `message` is a string (`DirectAgentPayloadSchema`; images are not
    /// checked here, see [`PayloadFields::direct_hydration`]).
    pub fn message_is_string(&self) -> bool {
        self.inner
            .as_ref()
            .and_then(|i| i.get("message"))
            .is_some_and(|m| string(m).is_some())
    }
    /// What the runtime's image hydration of a direct prompt (`hydrateDirectSubmissionImages`,
    /// before the payload check) does with this payload: it reads `payload.payload.images`, so a
    /// missing or null value on the way throws V8's `TypeError`; images are hydrated against
    /// their stored chunks, whose errors turnscope does not predict.
    pub fn direct_hydration(&self) -> Hydration {
        const NULL_PAYLOAD: &str = "Cannot read properties of null (reading 'payload')";
        const UNDEFINED: &str = "Cannot read properties of undefined (reading 'images')";
        const NULL_INNER: &str = "Cannot read properties of null (reading 'images')";
        if self.top_is_null {
            return Hydration::Throws(NULL_PAYLOAD);
        }
        match (self.inner_raw(), &self.inner) {
            (None, _) => Hydration::Throws(UNDEFINED),
            (Some(raw), None) if raw.get() == "null" => Hydration::Throws(NULL_INNER),
            (Some(_), None) => Hydration::Passes,
            (Some(_), Some(inner)) if inner.contains_key("images") => Hydration::Unknown,
            (Some(_), Some(_)) => Hydration::Passes,
        }
    }
}

/// The outcome of a direct prompt's image hydration, see [`PayloadFields::direct_hydration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hydration {
    /// Nothing thrown: the payload check comes next.
    Passes,
    /// A `TypeError` with this message.
    Throws(&'static str),
    /// The payload has images: the outcome depends on their chunks.
    Unknown,
}

/// Read `payload` as `JSON.parse` would, keeping only what the check compares; `Err` with the
/// parser's message when it is not JSON.
pub fn read(payload: &str) -> Result<PayloadFields, String> {
    let Ok(top) = serde_json::from_str::<RawObject>(payload) else {
        // JSON but not an object, or not JSON at all (then the parser's message).
        serde_json::from_str::<serde::de::IgnoredAny>(payload).map_err(|e| e.to_string())?;
        return Ok(PayloadFields {
            top_is_null: payload.trim_matches([' ', '\t', '\n', '\r']) == "null",
            ..PayloadFields::default()
        });
    };
    let inner = top
        .get("payload")
        .and_then(|r| serde_json::from_str::<RawObject>(r.get()).ok());
    Ok(PayloadFields {
        top: Some(top),
        top_is_null: false,
        inner,
    })
}

#[cfg(test)]
mod tests {
    use super::read;

    #[test]
    fn top_level_fields_are_read_and_the_rest_skipped_at_any_depth() {
        let deep = format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000));
        let p = read(&format!(
            r#"{{"kind":"dispatch","submissionId":"s","id":"i","acceptedAt":"2026-01-01T00:00:00.000Z","dispatchId":"s","input":{deep}}}"#
        ))
        .unwrap();
        assert!(p.is_object() && p.has_input());
        assert_eq!(p.kind().as_deref(), Some("dispatch"));
        assert_eq!(p.dispatch_id().as_deref(), Some("s"));
        assert_eq!(p.accepted_at().as_deref(), Some("2026-01-01T00:00:00.000Z"));
    }

    #[test]
    fn the_last_duplicate_wins_and_non_strings_are_not_strings() {
        let p = read(r#"{"kind":"direct","kind":"dispatch","id":5,"payload":{"message":"hi"}}"#)
            .unwrap();
        assert_eq!(p.kind().as_deref(), Some("dispatch"));
        assert_eq!(p.id().as_deref(), None);
        assert!(p.message_is_string());
        let p = read(r#"{"payload":{"message":{"text":"hi"}}}"#).unwrap();
        assert!(!p.message_is_string());
    }

    /// Each `TypeError` text was read from Node 22 reading `input.payload.images`.
    #[test]
    fn a_direct_payload_s_hydration_throws_v8_s_type_error_where_a_value_is_missing() {
        use super::Hydration::{Passes, Throws, Unknown};
        let h = |v: &str| read(v).unwrap().direct_hydration();
        assert_eq!(h(r#"{"payload":{"message":5}}"#), Passes);
        assert_eq!(h(r#"{"payload":"text"}"#), Passes);
        let undefined = Throws("Cannot read properties of undefined (reading 'images')");
        assert_eq!(h(r#"{"kind":"direct"}"#), undefined);
        assert_eq!(h("[1]"), undefined);
        assert_eq!(h("5"), undefined);
        assert_eq!(
            h(r#"{"payload":null}"#),
            Throws("Cannot read properties of null (reading 'images')")
        );
        assert_eq!(
            h(" null\n"),
            Throws("Cannot read properties of null (reading 'payload')")
        );
        assert_eq!(h(r#"{"payload":{"message":"hi","images":[]}}"#), Unknown);
    }

    #[test]
    fn other_values_are_json_but_not_objects_and_broken_text_is_not_json() {
        for v in ["[1,2]", "\"text\"", "3", "null", "true"] {
            assert!(!read(v).unwrap().is_object(), "{v}");
        }
        for v in ["", "{", "{\"kind\": }", "{} x", "\u{0}"] {
            assert!(read(v).is_err(), "{v:?}");
        }
    }
}
