//! The whole-session read for `show` and the TUI: every entry, compact (`core::compact`), with a
//! full body only for the submission's input entry (and any other entry with its input marker). The classifier, the planner, `show`'s
//! summaries and the tree read only compact fields from the path after it (for a whale
//! submission that path is its whole history); actions read the session whole themselves. Any
//! other entry's stored text is fetched by id when it is looked at (`SessionRows::entry_by_id`).
//!
//! The same rows are read as by the full loader, so damage (malformed JSON, text that is not
//! UTF-8, cycles, dangling parents) is found and reported the same way.

use std::collections::HashMap;
use std::sync::Arc;

use super::{SessionRecord, StoreError};
use crate::parallel_parse::{parse_rows, ParsedRows};
use crate::session_rows::{SessionLoader, SessionRows, SessionScope, LOSSY_DATA};
use turnscope_core::journal::compact::{parse_compact_previews, Previews};
use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::history::SubmissionKind;
use turnscope_core::journal::search::Needle;

/// `SessionLoader` for `load_compact`; `previews` says whether the messages keep their text
/// previews (only what draws or prints messages as text needs them).
pub struct CompactLoader {
    pub previews: Previews,
}

impl SessionLoader for CompactLoader {
    fn load(
        &mut self,
        rows: &dyn SessionRows,
        key: &str,
        kind: &str,
        submission_id: &str,
    ) -> Result<Option<SessionRecord>, StoreError> {
        load_compact(rows, key, kind, submission_id, self.previews)
    }
}

/// Read session `key` compactly, with a full body for `submission_id`'s input entry.
pub fn load_compact(
    rows: &dyn SessionRows,
    key: &str,
    kind: &str,
    submission_id: &str,
    previews: Previews,
) -> Result<Option<SessionRecord>, StoreError> {
    let Some(session) = rows.session_data(key)? else {
        return Ok(None);
    };
    let mut not_utf8 = Vec::new();
    if session.lossy {
        not_utf8.push(LOSSY_DATA.to_string());
    }
    let ParsedRows {
        entries,
        column_ids,
        lossy: lossy_rows,
    } = parse_rows(rows, key, previews)?;
    not_utf8.extend(lossy_rows);
    let (leaf_id, mut data_problems) = session.parse();
    data_problems
        .extend(crate::image_chunks::SessionImages::read(rows, key)?.problems(&entries[..]));
    let k = SubmissionKind::parse(kind).unwrap_or(SubmissionKind::Dispatch);
    // Every entry carrying the submission's input marker is read whole (nearly always exactly
    // one, the input itself). Finding the one on the active path would build the path here and
    // again in the report, for the whale's 288,000 entries.
    let mut shared = entries;
    let entries = Arc::get_mut(&mut shared).expect("entries are not shared");
    let marked: Vec<usize> = (0..entries.len())
        .filter(|&i| is_input(&entries[i], k, submission_id))
        .collect();
    for i in marked {
        let column = column_ids
            .get(&i)
            .cloned()
            .unwrap_or_else(|| entries[i].id.to_string());
        if let Some(full) = fetch_full(rows, key, &column)? {
            if full.position == entries[i].position {
                entries[i] = full;
            }
        }
    }
    Ok(Some(SessionRecord {
        id: key.to_string(),
        data: session.text,
        leaf_id,
        data_problems,
        not_utf8,
        entries: shared.into(),
        scope: SessionScope::Compact,
    }))
}

/// One entry fully parsed, exactly as the full loader parses it (text read lossily).
pub fn fetch_full(
    rows: &dyn SessionRows,
    key: &str,
    entry_id: &str,
) -> Result<Option<Entry>, StoreError> {
    Ok(rows.entry_by_id(key, entry_id)?.map(|row| match row.blob {
        true => Entry::blob_row(row.position, entry_id, &row.data),
        false => Entry::parse(row.position, entry_id, &String::from_utf8_lossy(&row.data)),
    }))
}

/// A preview read for a row: `(entry id, position, text)`.
pub type FetchedPreview = (String, i64, Option<Box<str>>);

/// The text previews a compact read keeping them (`Previews::Keep`) gives the messages
/// `wanted` (`(entry id, position)`), read in one go and parsed as that read parses them, so a row
/// drawn from a read that dropped its preview shows the same text. Each comes back with `None`
/// when its row is gone, has moved, or is not a message.
pub fn fetch_previews(
    rows: &dyn SessionRows,
    key: &str,
    wanted: &[(String, i64)],
) -> Result<Vec<FetchedPreview>, StoreError> {
    let ids: Vec<&str> = wanted.iter().map(|(id, _)| id.as_str()).collect();
    let mut found: HashMap<Vec<u8>, (i64, Option<Box<str>>)> = HashMap::new();
    rows.entries_by_ids(key, &ids, &mut |id, position, data, _| {
        let id_text = String::from_utf8_lossy(id);
        let (e, _) = parse_compact_previews(position, &id_text, data, Previews::Keep);
        let text = e.message().map(|m| m.text().into_boxed_str());
        found.insert(id.to_vec(), (position, text));
    })?;
    Ok(wanted
        .iter()
        .map(|(id, position)| {
            let text = match found.remove(id.as_bytes()) {
                Some((p, text)) if p == *position => text,
                _ => None,
            };
            (id.clone(), *position, text)
        })
        .collect())
}

/// The positions of session `key`'s entries whose stored JSON contains `needle`, in position
/// order. Streamed row by row: a whale session's JSON is never held.
pub fn search_positions(
    rows: &dyn SessionRows,
    key: &str,
    needle: &Needle,
) -> Result<Vec<i64>, StoreError> {
    let mut hits = Vec::new();
    rows.for_each_entry(key, &mut |_, position, data, _| {
        if needle.matches(data) {
            hits.push(position);
        }
    })?;
    Ok(hits)
}

fn is_input(e: &Entry, kind: SubmissionKind, id: &str) -> bool {
    match kind {
        SubmissionKind::Dispatch => e.dispatch_id().as_deref() == Some(id),
        SubmissionKind::Direct => e.direct_submission_id().as_deref() == Some(id),
    }
}
