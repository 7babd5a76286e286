//! beta.7's image chunks (spec §2.7): the runtime stores each image of a user or tool result
//! message as a marker, `{"type":"image","data":"__flue_image_chunks__:0",…}`, with the image's
//! data in `flue_image_chunks` rows owned by the entry, and checks the two against each other
//! whenever it loads the session: `SqlSessionStore.load` hydrates every entry with its chunk rows
//! (`hydratePersistedSessionEntry`), and one entry that does not match makes the whole load throw.
//! A port of those checks (`persisted-images.ts`, `sql-persisted-chunk-store.ts` of 1.0.0-beta.7),
//! pure: the store reads the rows, [`entry_error`] says what the runtime's load does with them.

use serde_json::Value;

/// What a marker's `data` starts with; the image's id follows.
pub const MARKER_PREFIX: &str = "__flue_image_chunks__:";

/// The runtime's errors, word for word.
pub mod messages {
    /// `parseChunkRow`: a column of another type.
    pub const ROW_MALFORMED: &str = "[flue] Persisted image chunk row is malformed.";
    /// `reassemblePersistedChunks`: a group whose indexes or counts do not add up.
    pub const MISSING_OR_MALFORMED: &str =
        "[flue] Persisted image chunks are missing or malformed.";
    /// `assertExactImageGroups`: markers and groups are not the same ids.
    pub const DO_NOT_MATCH: &str =
        "[flue] Persisted image chunks do not match persisted image markers.";
}

/// A chunk row's column as the runtime's `typeof` sees it (`node:sqlite` reads an INTEGER or a
/// REAL as a number, TEXT as a string, anything else as neither).
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkCell {
    Text(String),
    Number(f64),
    Other,
}

impl ChunkCell {
    /// `typeof v === "number" && Number.isInteger(v)`.
    fn integer(&self) -> Option<f64> {
        match self {
            ChunkCell::Number(n) if n.is_finite() && n.fract() == 0.0 => Some(*n),
            _ => None,
        }
    }
}

/// One `flue_image_chunks` row of an owner, as read: `image_id`, `chunk_index`, `chunk_count`, and
/// whether `data` is text (its content is never needed: only its type is checked).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRow {
    pub image_id: ChunkCell,
    pub index: ChunkCell,
    pub count: ChunkCell,
    pub data_is_text: bool,
    /// The data's length as JavaScript's `length` counts it (UTF-16 code units). Read only for
    /// a submission's own rows, where the payload check limits a direct prompt's hydrated image
    /// ([`MAX_IMAGE_DATA_UNITS`]); 0 for an entry's (its checks never look at the data).
    pub data_units: u64,
}

/// The payload check's limit on a direct prompt's image data (`MAX_IMAGE_DATA_LENGTH`, in UTF-16
/// code units).
pub const MAX_IMAGE_DATA_UNITS: u64 = 14 * 1024 * 1024;

/// A complete image of an owner's rows: its id and its data's length (the sum of its rows').
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageGroup {
    pub id: String,
    pub data_units: u64,
}

/// Why loading an entry throws: the runtime's message, and what turnscope found (for the operator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError {
    pub message: &'static str,
    pub found: String,
}

/// `markerIds`: the ids of `content`'s image blocks whose data is a marker, in order (repeats
/// kept: a repeat is itself a mismatch). `content` other than an array has none.
pub fn marker_ids(content: &Value) -> Vec<String> {
    let Some(blocks) = content.as_array() else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| marker_of(b).map(str::to_string))
        .collect()
}

/// The id of a block that is an image (`isImageBlock`: an object whose `type` is `"image"` and
/// whose `data` is a string) whose data is a marker.
fn marker_of(block: &Value) -> Option<&str> {
    let o = block.as_object()?;
    if o.get("type").and_then(Value::as_str) != Some("image") {
        return None;
    }
    o.get("data")?.as_str()?.strip_prefix(MARKER_PREFIX)
}

/// Whether a block's `data` string is a marker (what the compact readers check of each block).
pub fn is_marker(data: &str) -> bool {
    data.starts_with(MARKER_PREFIX)
}

/// The markers the runtime looks for in a stored entry (`hydrateSessionEntryImages`): `None` when
/// the entry is not a message or its message is not a user or tool result one (then it must own
/// no chunk row at all), else the marker ids of its `content`.
pub fn entry_markers(entry: &Value) -> Option<Vec<String>> {
    if entry.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let message = entry.get("message")?.as_object()?;
    match message.get("role").and_then(Value::as_str) {
        Some("user" | "toolResult") => {
            Some(message.get("content").map(marker_ids).unwrap_or_default())
        }
        _ => None,
    }
}

/// What loading one entry does with its chunk rows (`rows` in the order the runtime reads them:
/// `ORDER BY image_id, chunk_index`): `None` when it loads, else the error it throws. `markers`
/// as [`entry_markers`] gives them. The checks run in the runtime's order: each row's types as
/// it is read, then each image's group of rows, then markers against groups.
pub fn entry_error(markers: Option<&[String]>, rows: &[ChunkRow]) -> Option<ImageError> {
    match reassemble(rows) {
        Ok(groups) => exact(markers.unwrap_or(&[]), &groups),
        Err(e) => Some(e),
    }
}

/// `assertExactImageGroups`: `None` when `markers` name each of `groups` once and nothing else.
pub fn exact(markers: &[String], groups: &[ImageGroup]) -> Option<ImageError> {
    let distinct: std::collections::BTreeSet<&str> = markers.iter().map(String::as_str).collect();
    let exact = distinct.len() == markers.len()
        && distinct.len() == groups.len()
        && groups.iter().all(|g| distinct.contains(g.id.as_str()));
    if exact {
        return None;
    }
    let ids = || {
        groups
            .iter()
            .map(|g| g.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let found = match (markers.len(), groups.len()) {
        (0, _) => format!(
            "no image marker, {} with chunk rows",
            plural(groups.len(), "image")
        ),
        (m, 0) => format!("{} and no chunk row", plural(m, "image marker")),
        (m, g) => format!(
            "{} ({}), chunk rows for {} ({})",
            plural(m, "image marker"),
            markers.join(", "),
            plural(g, "image"),
            ids()
        ),
    };
    Some(ImageError {
        message: messages::DO_NOT_MATCH,
        found,
    })
}

/// `parseChunkRow` over the rows alone: the error of the first row of another type. The runtime
/// reads a submission's rows this way before any check of the row itself.
pub fn rows_error(rows: &[ChunkRow]) -> Option<ImageError> {
    rows.iter()
        .find(|r| parsed(r).is_none())
        .map(|_| row_malformed())
}

fn row_malformed() -> ImageError {
    ImageError {
        message: messages::ROW_MALFORMED,
        found: "a chunk row with a column of another type".into(),
    }
}

/// A row's `(image_id, index, count)` when its columns have the types `parseChunkRow` wants.
fn parsed(r: &ChunkRow) -> Option<(&str, f64, f64)> {
    match (
        &r.image_id,
        r.index.integer(),
        r.count.integer(),
        r.data_is_text,
    ) {
        (ChunkCell::Text(id), Some(index), Some(count), true) => Some((id, index, count)),
        _ => None,
    }
}

/// `parseChunkRow` over the rows, then `reassemblePersistedChunks`: the images whose rows are
/// complete, with their data's length, in order of first appearance.
pub fn reassemble(rows: &[ChunkRow]) -> Result<Vec<ImageGroup>, ImageError> {
    // Each image's rows, `(index, count, data_units)`, in order of first appearance.
    type Rows = Vec<(f64, f64, u64)>;
    let mut rows_of: Vec<(&str, Rows)> = Vec::new();
    for r in rows {
        let (id, index, count) = parsed(r).ok_or_else(row_malformed)?;
        match rows_of.iter_mut().find(|(i, _)| *i == id) {
            Some((_, group)) => group.push((index, count, r.data_units)),
            None => rows_of.push((id, vec![(index, count, r.data_units)])),
        }
    }
    let mut groups = Vec::with_capacity(rows_of.len());
    for (id, mut group) in rows_of {
        // `toSorted((l, r) => l.index - r.index)`: stable, by index.
        group.sort_by(|a, b| a.0.total_cmp(&b.0));
        let expected = group[0].1;
        let complete = expected >= 1.0
            && group.len() as f64 == expected
            && group
                .iter()
                .enumerate()
                .all(|(i, &(index, count, _))| count == expected && index == i as f64);
        if !complete {
            return Err(ImageError {
                message: messages::MISSING_OR_MALFORMED,
                found: format!(
                    "image {id}: {} for a count of {expected}",
                    plural(group.len(), "chunk row")
                ),
            });
        }
        groups.push(ImageGroup {
            id: id.to_string(),
            data_units: group.iter().map(|g| g.2).sum(),
        });
    }
    Ok(groups)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
