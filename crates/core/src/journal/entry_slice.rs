//! A run of entries in append order, shared: the tail of one allocation from a given index on.
//!
//! The submissions of one session see the same active path, each from its own input on, so a
//! listing can give each of them a view into one walk instead of a copy of it. A session of
//! 2,500 submissions over 120,000 entries was walked (or copied) once per submission.

use std::ops::Deref;
use std::sync::Arc;

use crate::journal::entry::Entry;

#[derive(Clone, Default)]
pub struct EntrySlice {
    all: Arc<[Entry]>,
    start: usize,
    /// The first entry is where a walk stopped on purpose (the submission's input): the active
    /// path treats it as a root, whatever its `parentId` names.
    first_is_root: bool,
    /// Walked: no two entries share an id (each was found by its `entry_id`, the key of its
    /// row, and its `data.id` checked equal to it).
    ids_unique: bool,
}

impl EntrySlice {
    /// `all[start..]`, the first entry treated as a root (a path walked back to its input).
    /// `start` past the end is an empty slice.
    pub fn path_from(all: Arc<[Entry]>, start: usize) -> EntrySlice {
        let start = start.min(all.len());
        EntrySlice {
            all,
            start,
            first_is_root: true,
            ids_unique: true,
        }
    }

    /// `all` whole, in place of these entries, as the same kind of view (a prediction's copy of a
    /// walked path is still walked to its input).
    pub fn replaced_by(&self, all: Arc<[Entry]>) -> EntrySlice {
        // Entries were inserted: their ids are not known to be unique.
        EntrySlice {
            all,
            start: 0,
            first_is_root: self.first_is_root,
            ids_unique: false,
        }
    }

    /// Whether the active path stops at the first entry on purpose.
    pub fn first_is_root(&self) -> bool {
        self.first_is_root
    }

    /// Whether no two entries share an id (a walked path).
    pub fn ids_unique(&self) -> bool {
        self.ids_unique
    }

    /// The entries to change in place, when nothing else holds them (tests and the builders of a
    /// fresh read).
    pub fn get_mut(&mut self) -> Option<&mut [Entry]> {
        let start = self.start;
        Arc::get_mut(&mut self.all).map(|all| &mut all[start..])
    }

    /// Whether both views are of the same allocation (shared, not copied).
    pub fn shares_with(&self, other: &EntrySlice) -> bool {
        Arc::ptr_eq(&self.all, &other.all)
    }
}

impl Deref for EntrySlice {
    type Target = [Entry];

    fn deref(&self) -> &[Entry] {
        &self.all[self.start..]
    }
}

impl From<Arc<[Entry]>> for EntrySlice {
    fn from(all: Arc<[Entry]>) -> EntrySlice {
        EntrySlice {
            all,
            start: 0,
            first_is_root: false,
            ids_unique: false,
        }
    }
}

impl From<Vec<Entry>> for EntrySlice {
    fn from(entries: Vec<Entry>) -> EntrySlice {
        EntrySlice::from(Arc::<[Entry]>::from(entries))
    }
}

impl std::fmt::Debug for EntrySlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: i64) -> Arc<[Entry]> {
        (0..n)
            .map(|p| {
                let raw = format!(r#"{{"type":"message","id":"e{p}","parentId":null,"message":{{"role":"user","content":"x"}}}}"#);
                Entry::parse(p, &format!("e{p}"), &raw)
            })
            .collect()
    }

    #[test]
    fn a_path_from_an_index_is_the_tail_of_the_same_allocation() {
        let all = entries(5);
        let whole = EntrySlice::path_from(all.clone(), 0);
        let tail = EntrySlice::path_from(all.clone(), 3);
        assert_eq!(tail.len(), 2);
        assert_eq!(tail[0].id, "e3");
        assert!(tail.shares_with(&whole));
        assert!(tail.first_is_root());
        assert!(EntrySlice::path_from(all.clone(), 9).is_empty());
        let plain = EntrySlice::from(all);
        assert_eq!(plain.len(), 5);
        assert!(!plain.first_is_root());
    }

    #[test]
    fn entries_change_in_place_only_when_not_shared() {
        let mut a = EntrySlice::from(entries(3).to_vec());
        assert!(a.get_mut().is_some());
        let b = a.clone();
        assert!(a.get_mut().is_none());
        drop(b);
        a.get_mut().expect("no longer shared")[0].position = 7;
        assert_eq!(a[0].position, 7);
    }
}
