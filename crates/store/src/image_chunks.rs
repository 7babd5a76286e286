//! A session's image chunk rows against its entries' markers, as the runtime's load checks them
//! (`core::journal::images`): the damage found joins the session's data problems, which stop the
//! runtime's load and so every reconciliation of its submissions (`Disposition::Unreadable`).
//!
//! Every entry that owns chunk rows is checked whatever part of the session was read: the rows
//! are read whole (one indexed query; nearly every session has none) and each owner's stored
//! text by id. An entry with markers and no row at all is seen only among the entries read: all
//! of them for `show` and the TUI, the path since the input for a listing's walk (which misses
//! other damage off that path too, see `walk.rs`).

use std::collections::{BTreeMap, BTreeSet};

use turnscope_core::journal::entry::{Entry, EntryImages};
use turnscope_core::journal::images::{self, ChunkRow, ImageError};

use crate::{EntryRow, SessionRows, StoreError};

/// The chunk rows of one session, by the entry owning them, and the damage of the entries
/// that own any.
#[derive(Debug, Default, Clone)]
pub struct SessionImages {
    owners: BTreeSet<String>,
    /// `(position, problem)` of the owning entries whose load throws.
    owned: Vec<(i64, String)>,
}

impl SessionImages {
    /// Read the session's chunk rows and check each owning entry against them.
    pub fn read(rows: &dyn SessionRows, session: &str) -> Result<SessionImages, StoreError> {
        SessionImages::check(rows.image_chunks(session)?, |owner| {
            rows.entry_by_id(session, owner)
        })
    }

    /// Check the session's chunk rows (`SessionRows::image_chunks`) against each owning entry,
    /// `stored` reading an entry by id.
    pub fn check(
        chunks: Vec<(String, ChunkRow)>,
        mut stored: impl FnMut(&str) -> Result<Option<EntryRow>, StoreError>,
    ) -> Result<SessionImages, StoreError> {
        let mut by_owner: BTreeMap<String, Vec<ChunkRow>> = BTreeMap::new();
        for (owner, row) in chunks {
            by_owner.entry(owner).or_default().push(row);
        }
        let mut owned = Vec::new();
        for (owner, chunk_rows) in &by_owner {
            // An owner that is not an entry of the session is never read by the runtime.
            let Some(stored) = stored(owner)? else {
                continue;
            };
            // Text that is not JSON (or a BLOB) stops the load before its images are looked at,
            // and is damage of its own. Read as `JSON.parse` reads it (a lone surrogate's escape
            // is no damage).
            let text = String::from_utf8_lossy(&stored.data);
            let parsed = turnscope_core::js::lone_surrogates::from_str::<serde_json::Value>(&text);
            let Some(value) = parsed.ok().filter(|_| !stored.blob) else {
                continue;
            };
            let markers = images::entry_markers(&value);
            if let Some(e) = images::entry_error(markers.as_deref(), chunk_rows) {
                owned.push((stored.position, problem(owner, stored.position, &e)));
            }
        }
        Ok(SessionImages {
            owners: by_owner.into_keys().collect(),
            owned,
        })
    }

    /// The problems of the owning entries, and of each of `entries` (the entries read) that
    /// has markers but owns no row, in position order.
    pub fn problems<'a>(&self, entries: impl IntoIterator<Item = &'a Entry>) -> Vec<String> {
        self.problems_with(entries.into_iter().filter_map(|e| self.unowned_markers(e)))
    }

    /// The problems of the owning entries and `unowned` (`(position, problem)`, found by
    /// [`SessionImages::unowned_markers`]), in position order.
    pub fn problems_with(&self, unowned: impl IntoIterator<Item = (i64, String)>) -> Vec<String> {
        let mut out = self.owned.clone();
        out.extend(unowned);
        out.sort_by_key(|(position, _)| *position);
        out.into_iter().map(|(_, p)| p).collect()
    }

    /// The problem of an entry with markers that owns no chunk row.
    pub fn unowned_markers(&self, e: &Entry) -> Option<(i64, String)> {
        let markers = match e.image_markers() {
            EntryImages::Ids(ids) if !ids.is_empty() => Some(ids),
            // A compact entry knows it has markers; without rows, how many does not matter.
            EntryImages::Unread => None,
            _ => return None,
        };
        if self.owners.contains(e.id.as_str()) {
            return None;
        }
        let error = match &markers {
            Some(ids) => images::entry_error(Some(ids), &[])?,
            None => ImageError {
                message: images::messages::DO_NOT_MATCH,
                found: "image markers and no chunk row".into(),
            },
        };
        Some((e.position, problem(&e.id, e.position, &error)))
    }
}

fn problem(entry: &str, position: i64, e: &ImageError) -> String {
    format!(
        "entry {entry} at position {position} has {}: the runtime's load throws \"{}\"",
        e.found, e.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_core::journal::images::ChunkCell;

    #[test]
    fn the_problem_names_the_entry_what_was_found_and_the_runtimes_error() {
        let e = images::entry_error(Some(&["0".to_string()]), &[]).unwrap();
        assert_eq!(
            problem("ce3b5daf", 4, &e),
            "entry ce3b5daf at position 4 has 1 image marker and no chunk row: the runtime's load throws \"[flue] Persisted image chunks do not match persisted image markers.\""
        );
        let rows = [ChunkRow {
            image_id: ChunkCell::Text("0".into()),
            index: ChunkCell::Number(0.0),
            count: ChunkCell::Number(2.0),
            data_is_text: true,
            data_units: 0,
        }];
        let e = images::entry_error(Some(&["0".to_string()]), &rows).unwrap();
        assert_eq!(e.found, "image 0: 1 chunk row for a count of 2");
    }
}
