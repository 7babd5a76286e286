//! A session's history: the append-only entry list plus the `leafId` pointer (spec §2.3–2.4, §2.8).

use std::collections::HashSet;
use std::hash::BuildHasher;

// foldhash, not std's SipHash: these maps hold every entry id of a session (a whale has 120,000),
// and hashing them was a tenth of a whale `show`'s single-threaded tail. Its seed is still random
// per process.
use foldhash::{HashMap, HashMapExt};
use hashbrown::HashTable;

use crate::journal::entry::Entry;
use crate::journal::entry_slice::EntrySlice;

/// What kind of submission an input entry belongs to (`flue_agent_submissions.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum SubmissionKind {
    Dispatch,
    Direct,
}

impl SubmissionKind {
    /// The stored text; `None` for one the runtime does not write.
    pub fn parse(s: &str) -> Option<SubmissionKind> {
        s.parse().ok()
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Damage found while walking the tree. The runtime itself would hang on a cycle; we stop and say so.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathDamage {
    /// `leafId` names an entry that does not exist.
    #[error("leafId {0} names no entry")]
    MissingLeaf(String),
    /// An entry's `parentId` names an entry that does not exist (the path stops there, as in the runtime).
    #[error("entry {entry} has parentId {parent}, which names no entry")]
    DanglingParent { entry: String, parent: String },
    /// Following `parentId` returns to an entry already visited.
    #[error("parentId chain loops back to entry {at}")]
    Cycle { at: String },
}

/// Entry ids to their indexes in `entries`, a later duplicate id winning, like the runtime's
/// `new Map(entries.map(e => [e.id, e]))`. The table holds only the indexes, hashed by the id
/// each points at: 9 bytes a slot instead of a `&str` key's 25 (a whale's map was 13 MB).
pub(crate) struct IdIndex<'a> {
    entries: &'a [Entry],
    table: HashTable<usize>,
    hasher: foldhash::fast::RandomState,
    /// Some id is held by more than one entry.
    duplicates: bool,
}

impl<'a> IdIndex<'a> {
    pub(crate) fn new(entries: &'a [Entry]) -> IdIndex<'a> {
        let hasher = foldhash::fast::RandomState::default();
        let hash = |id: &str| hasher.hash_one(id);
        let mut table = HashTable::with_capacity(entries.len());
        let mut duplicates = false;
        for (i, e) in entries.iter().enumerate() {
            let id = e.id.as_str();
            let same = |&j: &usize| entries[j].id.as_str() == id;
            match table.entry(hash(id), same, |&j: &usize| hash(entries[j].id.as_str())) {
                hashbrown::hash_table::Entry::Occupied(mut slot) => {
                    *slot.get_mut() = i;
                    duplicates = true;
                }
                hashbrown::hash_table::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
        IdIndex {
            entries,
            table,
            hasher,
            duplicates,
        }
    }

    fn get(&self, id: &str) -> Option<usize> {
        self.table
            .find(self.hasher.hash_one(id), |&j| {
                self.entries[j].id.as_str() == id
            })
            .copied()
    }

    /// `get` for the parent of the entry at `child`: the runtime appends a child right after its
    /// parent in most turns, so the entry before it is tried first. It is the answer only when no
    /// id repeats (with a repeat, a later entry of the same id wins).
    pub(crate) fn get_parent(&self, id: &str, child: usize) -> Option<usize> {
        match child.checked_sub(1) {
            Some(before) if !self.duplicates && self.entries[before].id.as_str() == id => {
                Some(before)
            }
            _ => self.get(id),
        }
    }
}

/// A session's entries in append order plus its leaf pointer.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Shared with the `SessionRecord` it was built from (a whale session is read once).
    pub entries: EntrySlice,
    pub leaf_id: Option<String>,
    /// Indexes into `entries` along the active path, root first.
    active: Vec<usize>,
    on_path: Vec<bool>,
    pub damage: Vec<PathDamage>,
}

impl History {
    pub fn new(entries: impl Into<EntrySlice>, leaf_id: Option<String>) -> History {
        let entries: EntrySlice = entries.into();
        if let Some(h) = History::walked(&entries, &leaf_id) {
            return h;
        }
        // Like the runtime's `new Map(entries.map(e => [e.id, e]))`: a later duplicate id wins.
        let by_id = IdIndex::new(&entries);
        let mut active = Vec::new();
        let mut damage = Vec::new();
        // The entries already walked (the path itself, as it grows): a cycle returns to one.
        let mut on_path = vec![false; entries.len()];
        let mut current = match leaf_id.as_deref() {
            Some(leaf) if !leaf.is_empty() => match by_id.get(leaf) {
                Some(i) => Some(i),
                None => {
                    damage.push(PathDamage::MissingLeaf(leaf.to_string()));
                    None
                }
            },
            _ => None,
        };
        while let Some(i) = current {
            if std::mem::replace(&mut on_path[i], true) {
                damage.push(PathDamage::Cycle {
                    at: entries[i].id.to_string(),
                });
                break;
            }
            active.push(i);
            current = match entries[i].parent_id.as_deref() {
                // A path walked back to its input ends there on purpose.
                _ if i == 0 && entries.first_is_root() => None,
                Some(p) if !p.is_empty() => match by_id.get_parent(p, i) {
                    Some(j) => Some(j),
                    None => {
                        damage.push(PathDamage::DanglingParent {
                            entry: entries[i].id.to_string(),
                            parent: p.to_string(),
                        });
                        None
                    }
                },
                _ => None,
            };
        }
        active.reverse();
        History {
            entries,
            leaf_id,
            active,
            on_path,
            damage,
        }
    }

    /// A walked path (`EntrySlice::path_from`) whose leaf is its last entry and each of whose
    /// entries is the child of the one before: the whole of it is the active path. With every id
    /// unique this is what the general walk finds, without hashing every id: a listing builds a
    /// history for each submission of a session over its path since that submission's input
    /// (2,500 of them over the scale database's 120,000-entry session). `None` otherwise.
    fn walked(entries: &EntrySlice, leaf_id: &Option<String>) -> Option<History> {
        if !(entries.first_is_root() && entries.ids_unique()) {
            return None;
        }
        let last = entries.last()?;
        let linked = !last.id.is_empty()
            && leaf_id.as_deref() == Some(last.id.as_str())
            && entries.windows(2).all(|w| {
                w[1].parent_id
                    .as_deref()
                    .is_some_and(|p| !p.is_empty() && p == w[0].id.as_str())
            });
        linked.then(|| History {
            entries: entries.clone(),
            leaf_id: leaf_id.clone(),
            active: (0..entries.len()).collect(),
            on_path: vec![true; entries.len()],
            damage: Vec::new(),
        })
    }

    /// Damage that makes the runtime itself fail (or hang) when it loads this session: entries whose
    /// JSON does not parse or that are stored as BLOBs, and a `parentId` cycle on the active path.
    pub fn load_blockers(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| match &e.body {
                crate::journal::entry::EntryBody::Malformed { error }
                    if error.starts_with("invalid JSON")
                        || error.as_str() == crate::journal::entry::BLOB_ROW =>
                {
                    Some(format!(
                        "entry {} at position {} is malformed ({error})",
                        e.id, e.position
                    ))
                }
                _ => None,
            })
            .collect();
        out.extend(
            self.damage
                .iter()
                .filter(|d| matches!(d, PathDamage::Cycle { .. }))
                .map(|d| d.to_string()),
        );
        out
    }

    /// The active path, root first.
    pub fn active_path(&self) -> Vec<&Entry> {
        self.active.iter().map(|&i| &self.entries[i]).collect()
    }

    /// Indexes (into `entries`) of the active path, root first.
    pub fn active_indexes(&self) -> &[usize] {
        &self.active
    }

    pub fn is_on_active_path(&self, index: usize) -> bool {
        self.on_path.get(index).copied().unwrap_or(false)
    }

    /// `getActivePathSince(id)`: entries strictly after `id` on the active path; empty when `id` is
    /// not on it.
    pub fn active_path_since(&self, id: &str) -> Vec<&Entry> {
        let path = self.active_path();
        match path.iter().position(|e| e.id == id) {
            Some(i) => path[i + 1..].to_vec(),
            None => Vec::new(),
        }
    }

    /// Position of a submission's input entry on the active path (spec §2.8): the first entry whose
    /// `dispatch.dispatchId` (dispatch) or `directSubmissionId` (direct) equals the submission id.
    pub fn find_input(&self, kind: SubmissionKind, submission_id: &str) -> Option<&Entry> {
        self.find_input_index(kind, submission_id)
            .map(|i| &self.entries[i])
    }

    /// `find_input` as an index into `entries`.
    pub fn find_input_index(&self, kind: SubmissionKind, submission_id: &str) -> Option<usize> {
        self.active.iter().copied().find(|&i| {
            let e = &self.entries[i];
            match kind {
                SubmissionKind::Dispatch => e.dispatch_id().as_deref() == Some(submission_id),
                SubmissionKind::Direct => {
                    e.direct_submission_id().as_deref() == Some(submission_id)
                }
            }
        })
    }

    /// An input entry for this submission that exists only off the active path (it then counts as
    /// absent, but an operator wants to know it is there).
    pub fn find_input_off_path(&self, kind: SubmissionKind, submission_id: &str) -> Option<&Entry> {
        // The path flag first: it is beside the others, a message is one pointer further (a
        // whale's 100,000 path entries were each followed for nothing).
        self.entries.iter().enumerate().find_map(|(i, e)| {
            let hit = || match kind {
                SubmissionKind::Dispatch => e.dispatch_id().as_deref() == Some(submission_id),
                SubmissionKind::Direct => {
                    e.direct_submission_id().as_deref() == Some(submission_id)
                }
            };
            (!self.on_path[i] && hit()).then_some(e)
        })
    }

    /// `following` for the classifier: the active path after the input, or `None` when the input
    /// entry is not on the active path.
    pub fn following(&self, kind: SubmissionKind, submission_id: &str) -> Option<Vec<&Entry>> {
        let input = self.find_input(kind, submission_id)?;
        Some(self.active_path_since(&input.id))
    }

    /// Entries off the active path, grouped under the active-path entry they branch from (the
    /// deepest active ancestor), in append order. Entries whose ancestry never reaches the active path
    /// are grouped under `None`.
    pub fn abandoned_branches(&self) -> Vec<(Option<usize>, Vec<usize>)> {
        let by_id = IdIndex::new(&self.entries);
        // The anchor of each off-path entry, memoised: a long abandoned branch would otherwise be
        // walked once per entry on it (quadratic in its length).
        const UNKNOWN: usize = usize::MAX;
        const NONE: usize = usize::MAX - 1;
        let n = self.entries.len();
        let mut anchor_of = vec![UNKNOWN; n];
        let mut groups: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
        let mut group_of: HashMap<Option<usize>, usize> = HashMap::new();
        let mut chain: Vec<usize> = Vec::new();
        for i in 0..n {
            if self.on_path[i] {
                continue;
            }
            if anchor_of[i] == UNKNOWN {
                // Walk up to the first active ancestor or a known anchor (cycles stop the walk,
                // as before: every entry of the chain then has no anchor).
                chain.clear();
                let mut on_chain = HashSet::new();
                let mut cur = i;
                let found = loop {
                    chain.push(cur);
                    on_chain.insert(cur);
                    let Some(j) = self.entries[cur]
                        .parent_id
                        .as_deref()
                        .and_then(|p| by_id.get(p))
                    else {
                        break NONE;
                    };
                    if on_chain.contains(&j) {
                        break NONE;
                    }
                    if self.on_path[j] {
                        break j;
                    }
                    if anchor_of[j] != UNKNOWN {
                        break anchor_of[j];
                    }
                    cur = j;
                };
                for &k in &chain {
                    anchor_of[k] = found;
                }
            }
            let anchor = (anchor_of[i] != NONE).then_some(anchor_of[i]);
            match group_of.get(&anchor) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    group_of.insert(anchor, groups.len());
                    groups.push((anchor, vec![i]));
                }
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pos: i64, id: &str, parent: Option<&str>, extra: &str) -> Entry {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let raw = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"signal","type":"x","content":""}}{extra}}}"#
        );
        Entry::parse(pos, id, &raw)
    }

    /// A walked path's history (no id hashed) is the general walk's, whatever the path holds:
    /// linked whole, a link broken in the middle, a leaf that is not the last entry, an empty id,
    /// an input whose parent is elsewhere (it is a root all the same).
    #[test]
    fn a_walked_paths_history_is_the_general_walks() {
        let chain = |ids: &[(&str, Option<&str>)]| -> std::sync::Arc<[Entry]> {
            ids.iter()
                .enumerate()
                .map(|(i, (id, parent))| entry(i as i64, id, *parent, ""))
                .collect()
        };
        let cases: Vec<(std::sync::Arc<[Entry]>, Option<String>)> = vec![
            (
                chain(&[("a", Some("gone")), ("b", Some("a")), ("c", Some("b"))]),
                Some("c".into()),
            ),
            (
                chain(&[("a", None), ("b", Some("x")), ("c", Some("b"))]),
                Some("c".into()),
            ),
            (
                chain(&[("a", None), ("b", Some("a")), ("c", Some("b"))]),
                Some("b".into()),
            ),
            (chain(&[("a", None), ("b", Some("a"))]), None),
            (chain(&[("a", None), ("", Some("a"))]), Some(String::new())),
            (chain(&[("", None), ("b", Some(""))]), Some("b".into())),
            (chain(&[("a", None)]), Some("a".into())),
            (chain(&[]), Some("a".into())),
        ];
        for (i, (all, leaf)) in cases.into_iter().enumerate() {
            let walked = EntrySlice::path_from(all.clone(), 0);
            let general = walked.replaced_by(all);
            assert!(walked.ids_unique() && !general.ids_unique());
            let fast = History::new(walked, leaf.clone());
            let slow = History::new(general, leaf);
            assert_eq!(fast.active_indexes(), slow.active_indexes(), "case {i}");
            assert_eq!(fast.damage, slow.damage, "case {i}");
            assert_eq!(fast.on_path, slow.on_path, "case {i}");
        }
    }

    /// A later entry with the same id wins, as in the runtime's id map: the path goes through
    /// it, and the earlier one is off the path.
    #[test]
    fn a_later_duplicate_id_wins() {
        let entries = vec![
            entry(0, "a", None, ""),
            entry(1, "b", Some("a"), ""),
            entry(2, "b", Some("a"), ""),
            entry(3, "c", Some("b"), ""),
        ];
        let index = IdIndex::new(&entries);
        assert_eq!(
            ["a", "b", "c", "d"].map(|id| index.get(id)),
            [Some(0), Some(2), Some(3), None]
        );
        let h = History::new(entries, Some("c".into()));
        let positions: Vec<i64> = h.active_path().iter().map(|e| e.position).collect();
        assert_eq!(positions, [0, 2, 3]);
        assert_eq!(h.abandoned_branches(), vec![(Some(0), vec![1])]);
    }

    /// The entry just before a child is its parent only when no id repeats: here it holds the
    /// parent's id, but a later entry of that id wins.
    #[test]
    fn the_entry_before_a_child_is_not_its_parent_when_a_later_one_has_the_id() {
        let entries = vec![
            entry(0, "r", None, ""),
            entry(1, "a", Some("r"), ""),
            entry(2, "b", Some("a"), ""),
            entry(3, "a", None, ""),
        ];
        let h = History::new(entries.clone(), Some("b".into()));
        let positions: Vec<i64> = h.active_path().iter().map(|e| e.position).collect();
        assert_eq!(positions, [3, 2]);
        // Without the repeat, the entry before is the parent.
        let h = History::new(entries[..3].to_vec(), Some("b".into()));
        let positions: Vec<i64> = h.active_path().iter().map(|e| e.position).collect();
        assert_eq!(positions, [0, 1, 2]);
    }

    #[test]
    fn active_path_follows_parents_from_leaf() {
        let h = History::new(
            vec![
                entry(0, "a", None, ""),
                entry(1, "b", Some("a"), ""),
                entry(2, "c", Some("b"), ""),
                entry(3, "d", Some("b"), ""),
            ],
            Some("d".into()),
        );
        let ids: Vec<&str> = h.active_path().iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "d"]);
        assert!(!h.is_on_active_path(2));
        assert_eq!(h.abandoned_branches(), vec![(Some(1), vec![2])]);
        let since: Vec<&str> = h
            .active_path_since("a")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(since, ["b", "d"]);
        assert!(h.active_path_since("c").is_empty(), "off-path id gives []");
    }

    #[test]
    fn finds_input_only_on_active_path() {
        let marker = r#","dispatch":{"dispatchId":"sub-1"}"#;
        let h = History::new(
            vec![
                entry(0, "a", None, ""),
                entry(1, "b", Some("a"), marker),
                entry(2, "c", Some("a"), ""),
            ],
            Some("c".into()),
        );
        assert!(h.find_input(SubmissionKind::Dispatch, "sub-1").is_none());
        assert!(h.following(SubmissionKind::Dispatch, "sub-1").is_none());
        assert_eq!(
            h.find_input_off_path(SubmissionKind::Dispatch, "sub-1")
                .unwrap()
                .id,
            "b"
        );
        let h2 = History::new(h.entries.clone(), Some("b".into()));
        assert_eq!(
            h2.following(SubmissionKind::Dispatch, "sub-1")
                .unwrap()
                .len(),
            0
        );
    }

    #[test]
    fn cycles_and_dangling_parents_are_reported_not_looped() {
        let h = History::new(
            vec![entry(0, "a", Some("b"), ""), entry(1, "b", Some("a"), "")],
            Some("b".into()),
        );
        assert_eq!(h.active_path().len(), 2);
        assert!(matches!(h.damage[0], PathDamage::Cycle { .. }));
        let d = History::new(vec![entry(0, "a", Some("zz"), "")], Some("a".into()));
        assert_eq!(d.active_path().len(), 1);
        assert!(matches!(d.damage[0], PathDamage::DanglingParent { .. }));
        let m = History::new(vec![entry(0, "a", None, "")], Some("nope".into()));
        assert!(m.active_path().is_empty());
        assert_eq!(m.damage, vec![PathDamage::MissingLeaf("nope".into())]);
    }
}
