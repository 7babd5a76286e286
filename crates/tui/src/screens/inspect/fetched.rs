//! What an inspect view fetched from the worker by entry id (full bodies for the detail pane,
//! text previews for the tree's rows): each asked once while it is kept, at most a fixed number
//! kept, the oldest dropped first. Scrolling a whale's tree end to end shows every entry in
//! turn; keeping each would hold the whole session parsed, which is what reading the tree
//! compact avoids (a dropped one is asked again if it is shown again).

use std::collections::{HashMap, HashSet, VecDeque};

/// Previews an inspect view keeps: a screen shows a few dozen rows, paging back and forth
/// finds them kept.
pub const PREVIEWS_KEPT: usize = 4096;

/// The worker's answer to a text search: the positions of the entries whose stored JSON holds
/// `needle`.
#[derive(Debug, Clone)]
pub struct TextHits {
    pub needle: String,
    pub positions: foldhash::HashSet<i64>,
}

#[derive(Debug, Clone)]
pub struct Fetched<V> {
    kept: HashMap<String, V>,
    /// `kept`'s ids, oldest first.
    order: VecDeque<String>,
    /// Ids asked for and not dropped since (answered or not).
    asked: HashSet<String>,
    cap: usize,
}

impl<V> Fetched<V> {
    pub fn new(cap: usize) -> Fetched<V> {
        Fetched {
            kept: HashMap::new(),
            order: VecDeque::new(),
            asked: HashSet::new(),
            cap,
        }
    }

    pub fn get(&self, id: &str) -> Option<&V> {
        self.kept.get(id)
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn was_asked(&self, id: &str) -> bool {
        self.asked.contains(id)
    }

    pub fn ask(&mut self, id: String) {
        self.asked.insert(id);
    }

    /// Keep what arrived for `id`, dropping the oldest past the cap.
    pub fn keep(&mut self, id: String, v: V) {
        if self.kept.insert(id.clone(), v).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.kept.remove(&old);
                self.asked.remove(&old);
            }
        }
    }

    /// Forget what was asked and never arrived (an error answered it), so it is asked again.
    pub fn forget_unanswered(&mut self) {
        let kept = &self.kept;
        self.asked.retain(|id| kept.contains_key(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_lets_dropped_ones_be_asked_again() {
        let mut f = Fetched::new(4);
        for i in 0..10 {
            let id = format!("e{i}");
            f.ask(id.clone());
            f.keep(id, i);
        }
        assert_eq!(f.len(), 4);
        assert!(f.get("e5").is_none() && !f.was_asked("e5"));
        assert_eq!(f.get("e9"), Some(&9));
        assert!(f.was_asked("e9"));
        // The same id again does not count twice.
        f.keep("e9".into(), 99);
        assert_eq!(f.len(), 4);
        assert_eq!(f.get("e6"), Some(&6));
        assert_eq!(f.get("e9"), Some(&99));
    }

    #[test]
    fn what_never_arrived_is_asked_again_after_forgetting() {
        let mut f = Fetched::new(4);
        f.ask("a".into());
        f.ask("b".into());
        f.keep("a".into(), 1);
        f.forget_unanswered();
        assert!(f.was_asked("a"));
        assert!(!f.was_asked("b"));
    }
}
