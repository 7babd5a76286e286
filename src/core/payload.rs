//! The runtime's payload check (`isSubmissionPayload`, spec §2 row invariants) over a payload's
//! top-level fields only. A payload is read the way `JSON.parse` reads it, at any depth: values
//! the check does not look at are skipped without being built (serde_json skips them with its own
//! stack, so a dispatch `input` nested thousands deep is still a valid payload, as it is for the
//! runtime), and the last of duplicate keys wins, as in JavaScript.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One top-level value the check compares: a string, or anything else (skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Str(String),
    Other,
}

impl Field {
    fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Other => None,
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Field, E> {
        Ok(Field::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Field, E> {
        Ok(Field::Str(v))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
}

/// The top-level fields of a payload the check reads; `object` is false for any other JSON value.
#[derive(Debug, Default)]
pub struct PayloadFields {
    object: bool,
    kind: Option<Field>,
    submission_id: Option<Field>,
    id: Option<Field>,
    accepted_at: Option<Field>,
    dispatch_id: Option<Field>,
    agent: Option<Field>,
    has_input: bool,
    /// A direct prompt's inner `payload`.
    inner: Inner,
}

/// A direct prompt's inner `payload` value.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum Inner {
    #[default]
    Absent,
    Null,
    Object {
        message: Option<Field>,
        has_images: bool,
    },
    /// A string, number, boolean or array.
    Other,
}

impl PayloadFields {
    pub fn is_object(&self) -> bool {
        self.object
    }
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_ref().and_then(Field::as_str)
    }
    pub fn submission_id(&self) -> Option<&str> {
        self.submission_id.as_ref().and_then(Field::as_str)
    }
    pub fn id(&self) -> Option<&str> {
        self.id.as_ref().and_then(Field::as_str)
    }
    pub fn accepted_at(&self) -> Option<&str> {
        self.accepted_at.as_ref().and_then(Field::as_str)
    }
    pub fn dispatch_id(&self) -> Option<&str> {
        self.dispatch_id.as_ref().and_then(Field::as_str)
    }
    pub fn has_input(&self) -> bool {
        self.has_input
    }
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_ref().and_then(Field::as_str)
    }
    /// The inner payload is `{message: string}` without images: `DirectAgentPayloadSchema`
    /// passes (images are not checked here; see [`PayloadFields::direct_error_is_known`]).
    pub fn message_is_string(&self) -> bool {
        matches!(
            self.inner,
            Inner::Object {
                message: Some(Field::Str(_)),
                ..
            }
        )
    }
    /// Whether a direct prompt's malformed payload fails the runtime's check itself (its
    /// `[flue]` text) rather than an exception thrown before it: the runtime first hydrates the
    /// images of `payload.payload` (`hydrateDirectSubmissionImages`), which throws a `TypeError`
    /// when the value or its `payload` is missing or null, and its own errors on image markers.
    pub fn direct_error_is_known(&self) -> bool {
        self.object
            && match &self.inner {
                Inner::Absent | Inner::Null => false,
                Inner::Object { has_images, .. } => !has_images,
                Inner::Other => true,
            }
    }
}

impl<'de> Deserialize<'de> for Inner {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Inner, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Inner;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Inner, A::Error> {
                let (mut message, mut has_images) = (None, false);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "message" => message = Some(map.next_value::<Field>()?),
                        "images" => {
                            has_images = true;
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Inner::Object {
                    message,
                    has_images,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Inner, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Inner::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Inner, E> {
                Ok(Inner::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Inner, E> {
                Ok(Inner::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Inner, E> {
                Ok(Inner::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Inner, E> {
                Ok(Inner::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Inner, E> {
                Ok(Inner::Other)
            }
            fn visit_unit<E>(self) -> Result<Inner, E> {
                Ok(Inner::Null)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for PayloadFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PayloadFields, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PayloadFields;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PayloadFields, A::Error> {
                let mut p = PayloadFields {
                    object: true,
                    ..PayloadFields::default()
                };
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "kind" => &mut p.kind,
                        "submissionId" => &mut p.submission_id,
                        "id" => &mut p.id,
                        "acceptedAt" => &mut p.accepted_at,
                        "dispatchId" => &mut p.dispatch_id,
                        "agent" => &mut p.agent,
                        "input" => {
                            p.has_input = true;
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                        "payload" => {
                            p.inner = map.next_value::<Inner>()?;
                            continue;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<Field>()?);
                }
                Ok(p)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PayloadFields, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(PayloadFields::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
            fn visit_unit<E>(self) -> Result<PayloadFields, E> {
                Ok(PayloadFields::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Read `payload` as `JSON.parse` would, keeping only what the check compares; `Err` with the
/// parser's message when it is not JSON.
pub fn read(payload: &str) -> Result<PayloadFields, String> {
    serde_json::from_str::<PayloadFields>(payload).map_err(|e| e.to_string())
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
        assert_eq!(p.kind(), Some("dispatch"));
        assert_eq!(p.dispatch_id(), Some("s"));
        assert_eq!(p.accepted_at(), Some("2026-01-01T00:00:00.000Z"));
    }

    #[test]
    fn the_last_duplicate_wins_and_non_strings_are_not_strings() {
        let p = read(r#"{"kind":"direct","kind":"dispatch","id":5,"payload":{"message":"hi"}}"#)
            .unwrap();
        assert_eq!(p.kind(), Some("dispatch"));
        assert_eq!(p.id(), None);
        assert!(p.message_is_string());
        let p = read(r#"{"payload":{"message":{"text":"hi"}}}"#).unwrap();
        assert!(!p.message_is_string());
    }

    #[test]
    fn a_direct_payload_s_text_is_known_only_where_image_hydration_cannot_throw() {
        let known = |v: &str| read(v).unwrap().direct_error_is_known();
        assert!(known(r#"{"payload":{"message":5}}"#));
        assert!(known(r#"{"payload":"text"}"#));
        assert!(!known(r#"{"payload":null}"#));
        assert!(!known(r#"{"kind":"direct"}"#));
        assert!(!known(r#"{"payload":{"message":"hi","images":[]}}"#));
        assert!(!known("null"));
        assert!(!known("[1]"));
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
