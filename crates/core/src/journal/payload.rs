//! The runtime's payload check (`isSubmissionPayload`, spec §2 row invariants) over a payload's
//! top-level fields only. A payload is read the way `JSON.parse` reads it, at any depth: values
//! the check does not look at are kept as raw text (serde_json skips them with its own stack, so
//! a dispatch `input` nested thousands deep is still a valid payload, as it is for the runtime),
//! and the last of duplicate keys wins, as in JavaScript.

use std::collections::HashMap;

use crate::journal::images::{self, ChunkRow, ImageError, ImageGroup};
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
    /// The inner payload's `message` is a string (`DirectAgentPayloadSchema`).
    pub fn message_is_string(&self) -> bool {
        self.inner
            .as_ref()
            .and_then(|i| i.get("message"))
            .is_some_and(|m| string(m).is_some())
    }

    /// What the runtime's image hydration of a direct prompt does with this payload and the
    /// submission's chunk rows (`hydratePersistedDirectSubmission`, between `JSON.parse` and the
    /// payload check), in its order: the rows are reassembled into images (the argument is
    /// evaluated first), then `payload.payload.images` is read (V8's `TypeError` where a value on
    /// the way is missing), its markers must name each image once
    /// (`assertExactImageGroups`), and the images are mapped (a `TypeError` when they are not an
    /// array). `Ok` with the images' lengths when it passes; the payload check comes next.
    pub fn direct_hydration(&self, rows: &[ChunkRow]) -> Result<Vec<ImageGroup>, Thrown> {
        const NULL_PAYLOAD: &str = "Cannot read properties of null (reading 'payload')";
        const UNDEFINED: &str = "Cannot read properties of undefined (reading 'images')";
        const NULL_INNER: &str = "Cannot read properties of null (reading 'images')";
        const NULL_MAP: &str = "Cannot read properties of null (reading 'map')";
        const NOT_A_FUNCTION: &str = "blocks.map is not a function";
        let groups = images::reassemble(rows).map_err(Thrown::Images)?;
        if self.top_is_null {
            return Err(Thrown::TypeError(NULL_PAYLOAD));
        }
        let images = match (self.inner_raw(), &self.inner) {
            (None, _) => return Err(Thrown::TypeError(UNDEFINED)),
            (Some(raw), None) if raw.get() == "null" => return Err(Thrown::TypeError(NULL_INNER)),
            // A string, number, boolean or array: its `images` is undefined.
            (Some(_), None) => None,
            (Some(_), Some(inner)) => inner.get("images"),
        };
        let Some(images) = images else {
            return match images::exact(&[], &groups) {
                Some(e) => Err(Thrown::Images(e)),
                None => Ok(groups),
            };
        };
        let images = Images::read(images);
        let markers: Vec<String> = match &images {
            Images::Array(blocks) => blocks.iter().filter_map(Block::marker).collect(),
            _ => Vec::new(),
        };
        if let Some(e) = images::exact(&markers, &groups) {
            return Err(Thrown::Images(e));
        }
        match images {
            Images::Array(_) => Ok(groups),
            Images::Null => Err(Thrown::TypeError(NULL_MAP)),
            Images::Other => Err(Thrown::TypeError(NOT_A_FUNCTION)),
        }
    }

    /// Why the payload check (`DirectAgentPayloadSchema`) rejects the inner payload's images once
    /// hydrated (`groups`: the images its markers stand for): each must be an object whose `type`
    /// is `"image"`, whose `mimeType` is a string and whose `data` is a string of at most
    /// [`MAX_IMAGE_DATA_UNITS`]. `None` when there are none, or they pass.
    pub fn direct_images_problem(&self, groups: &[ImageGroup]) -> Option<String> {
        let Images::Array(blocks) = Images::read(self.inner.as_ref()?.get("images")?) else {
            return Some("direct payload's images are not an array".into());
        };
        for (i, block) in blocks.iter().enumerate() {
            let units = match (&block.data, block.marker()) {
                (_, Some(id)) => groups
                    .iter()
                    .find(|g| g.id == id)
                    .map_or(0, |g| g.data_units),
                (Some(data), None) => data.encode_utf16().count() as u64,
                (None, None) => {
                    return Some(format!("direct payload's image {i} has no data string"))
                }
            };
            if !block.image {
                return Some(format!(
                    "direct payload's image {i} is not of type \"image\""
                ));
            }
            if !block.mime_type {
                return Some(format!("direct payload's image {i} has no mimeType string"));
            }
            if units > images::MAX_IMAGE_DATA_UNITS {
                return Some(format!(
                    "direct payload's image {i} has {units} characters of data, over the runtime's limit of {}",
                    images::MAX_IMAGE_DATA_UNITS
                ));
            }
        }
        None
    }
}

/// A value the runtime's hydration throws instead of passing, see
/// [`PayloadFields::direct_hydration`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Thrown {
    /// V8's `TypeError`, with this message.
    TypeError(&'static str),
    /// An image chunk check's error.
    Images(ImageError),
}

impl Thrown {
    /// The error's message, as the runtime stores it.
    pub fn message(&self) -> &'static str {
        match self {
            Thrown::TypeError(m) => m,
            Thrown::Images(e) => e.message,
        }
    }
}

/// A direct prompt's `images` as its checks read them: only each block's `type`, `data` and
/// `mimeType` are parsed (as `payload` is, other values are kept as raw text: a number out of
/// `f64`'s range or a deep value is read as `JSON.parse` reads it, without being converted).
enum Images {
    Array(Vec<Block>),
    Null,
    /// A string, number, boolean or object: JavaScript's `map` is not a function of it.
    Other,
}

/// One element of [`Images::Array`].
struct Block {
    /// An object whose `type` is `"image"`.
    image: bool,
    /// Its `data`, when a string.
    data: Option<String>,
    /// Its `mimeType` is a string.
    mime_type: bool,
}

impl Images {
    fn read(raw: &RawValue) -> Images {
        let text = raw.get();
        if text == "null" {
            return Images::Null;
        }
        // `raw` is JSON (read as such with the payload); a lone surrogate as JSON.parse reads it.
        let Ok(items) = crate::js::lone_surrogates::from_str::<Vec<Box<RawValue>>>(text) else {
            return Images::Other;
        };
        Images::Array(
            items
                .iter()
                .map(|item| match serde_json::from_str::<RawObject>(item.get()) {
                    Ok(o) => Block {
                        image: o.get("type").and_then(|t| string(t)).as_deref() == Some("image"),
                        data: o.get("data").and_then(|d| string(d)),
                        mime_type: o.get("mimeType").and_then(|m| string(m)).is_some(),
                    },
                    Err(_) => Block {
                        image: false,
                        data: None,
                        mime_type: false,
                    },
                })
                .collect(),
        )
    }
}

impl Block {
    /// `isImageBlock` with a marker's data: the id of the image it stands for.
    fn marker(&self) -> Option<String> {
        let data = self.data.as_deref().filter(|_| self.image)?;
        data.strip_prefix(images::MARKER_PREFIX).map(str::to_string)
    }
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
    use crate::journal::images::ChunkRow;

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

    fn chunk(id: &str, index: f64, count: f64) -> ChunkRow {
        use crate::journal::images::ChunkCell;
        ChunkRow {
            image_id: ChunkCell::Text(id.into()),
            index: ChunkCell::Number(index),
            count: ChunkCell::Number(count),
            data_is_text: true,
            data_units: 6,
        }
    }

    fn hydration(payload: &str, rows: &[ChunkRow]) -> Result<usize, &'static str> {
        read(payload)
            .unwrap()
            .direct_hydration(rows)
            .map(|g| g.len())
            .map_err(|t| t.message())
    }

    /// Each `TypeError` text was read from Node 22 reading `input.payload.images` and mapping it.
    #[test]
    fn a_direct_payload_s_hydration_throws_v8_s_type_error_where_a_value_is_missing() {
        let h = |v: &str| hydration(v, &[]);
        assert_eq!(h(r#"{"payload":{"message":5}}"#), Ok(0));
        assert_eq!(h(r#"{"payload":"text"}"#), Ok(0));
        let undefined = Err("Cannot read properties of undefined (reading 'images')");
        assert_eq!(h(r#"{"kind":"direct"}"#), undefined);
        assert_eq!(h("[1]"), undefined);
        assert_eq!(h("5"), undefined);
        assert_eq!(
            h(r#"{"payload":null}"#),
            Err("Cannot read properties of null (reading 'images')")
        );
        assert_eq!(
            h(" null\n"),
            Err("Cannot read properties of null (reading 'payload')")
        );
        assert_eq!(h(r#"{"payload":{"message":"hi","images":[]}}"#), Ok(0));
        assert_eq!(
            h(r#"{"payload":{"message":"hi","images":null}}"#),
            Err("Cannot read properties of null (reading 'map')")
        );
        assert_eq!(
            h(r#"{"payload":{"message":"hi","images":5}}"#),
            Err("blocks.map is not a function")
        );
        assert_eq!(
            h(r#"{"payload":{"message":"hi","images":{"0":1e400}}}"#),
            Err("blocks.map is not a function")
        );
        assert_eq!(h(r#"{"payload":{"message":"hi","images":[1e400]}}"#), Ok(0));
    }

    #[test]
    fn a_direct_payload_s_markers_must_name_each_stored_image_once() {
        use crate::journal::images::messages::{DO_NOT_MATCH, MISSING_OR_MALFORMED};
        let marker = |id: &str| {
            format!(
                r#"{{"type":"image","data":"__flue_image_chunks__:{id}","mimeType":"image/png"}}"#
            )
        };
        let with = |blocks: &[String]| {
            format!(
                r#"{{"payload":{{"message":"hi","images":[{}]}}}}"#,
                blocks.join(",")
            )
        };
        let two = [chunk("0", 0.0, 2.0), chunk("0", 1.0, 2.0)];
        assert_eq!(hydration(&with(&[marker("0")]), &two), Ok(1));
        assert_eq!(hydration(&with(&[marker("0")]), &[]), Err(DO_NOT_MATCH));
        assert_eq!(hydration(&with(&[]), &two), Err(DO_NOT_MATCH));
        assert_eq!(
            hydration(r#"{"payload":{"message":"hi"}}"#, &two),
            Err(DO_NOT_MATCH)
        );
        assert_eq!(
            hydration(&with(&[marker("0"), marker("0")]), &two),
            Err(DO_NOT_MATCH)
        );
        // The rows are reassembled before anything of the payload is read.
        assert_eq!(hydration("null", &two[..1]), Err(MISSING_OR_MALFORMED));
        // Images that are not an array have no markers, so rows fail the match first.
        assert_eq!(
            hydration(r#"{"payload":{"message":"hi","images":5}}"#, &two),
            Err(DO_NOT_MATCH)
        );
    }

    #[test]
    fn the_payload_check_reads_each_hydrated_image() {
        let problem = |images: &str, rows: &[ChunkRow]| {
            let p = read(&format!(
                r#"{{"payload":{{"message":"hi","images":{images}}}}}"#
            ))
            .unwrap();
            let groups = p.direct_hydration(rows).unwrap();
            p.direct_images_problem(&groups)
        };
        let ok = r#"[{"type":"image","data":"abc","mimeType":"image/png"}]"#;
        assert_eq!(problem(ok, &[]), None);
        for bad in [
            r#"[{"type":"image","data":"abc"}]"#,
            r#"[{"type":"picture","data":"abc","mimeType":"image/png"}]"#,
            r#"[{"type":"image","data":5,"mimeType":"image/png"}]"#,
            r#"[5]"#,
            // A number JSON.parse reads as Infinity: not an image, and not a reason to give up.
            r#"[1e400]"#,
        ] {
            assert!(problem(bad, &[]).is_some(), "{bad}");
        }
        // A marker's image is as long as its rows together.
        let marker =
            r#"[{"type":"image","data":"__flue_image_chunks__:0","mimeType":"image/png"}]"#;
        let mut big = chunk("0", 0.0, 1.0);
        big.data_units = crate::journal::images::MAX_IMAGE_DATA_UNITS;
        assert_eq!(problem(marker, &[big.clone()]), None);
        big.data_units += 1;
        assert!(problem(marker, &[big]).is_some());
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
