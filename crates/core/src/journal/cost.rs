//! What a submission's turns cost since its input: the `usage` the runtime stores on every
//! assistant entry (aborted partials and failed turns included), summed over the input's subtree.
//!
//! The subtree is every entry descending from the input entry, not only the active path: the
//! entries of abandoned branches (a repair's `setLeaf` leaves the old partial results behind) were
//! paid for too. Three disjoint parts:
//!
//! * `active`: assistants on the active path after the input, aborted partials excepted;
//! * `abandoned`: assistants off the active path, aborted partials excepted;
//! * `aborted`: assistants whose `stopReason` is `aborted` (an interrupted stream), wherever.
//!
//! A read that holds only the active path (the listing's walk) cannot see abandoned branches: then
//! `abandoned` is `None` and `aborted` covers the path only. Pure: the history is a parameter.

use serde::Serialize;

use crate::journal::entry::{Entry, EntryBody, Role, USAGE_COST, USAGE_KEYS};
use crate::journal::history::{History, IdIndex};

/// Sums of the stored `usage` of some assistant entries.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageSum {
    /// Assistant entries counted.
    pub assistants: u32,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// `usage.totalTokens` as stored (not recomputed from the four above).
    pub total_tokens: u64,
    /// `usage.cost.total` summed in append order.
    pub cost: f64,
    /// Assistants whose `usage` is not an object or lacks one of the six figures (or holds one
    /// that is not a whole number of tokens): what they lack is not in the sums.
    pub incomplete: u32,
}

impl UsageSum {
    /// Add one assistant's usage: `[input, output, cacheRead, cacheWrite, totalTokens, cost]`
    /// (NaN where missing), or `None` when `usage` is not an object.
    pub fn add(&mut self, usage: Option<[f64; 6]>) {
        self.assistants += 1;
        let Some(u) = usage else {
            self.incomplete += 1;
            return;
        };
        let mut complete = true;
        let slots = [
            &mut self.input,
            &mut self.output,
            &mut self.cache_read,
            &mut self.cache_write,
            &mut self.total_tokens,
        ];
        for (slot, v) in slots.into_iter().zip(u) {
            // A token count is a whole number; anything else (NaN, negative, fractional) is
            // left out and the entry marked incomplete.
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9.0e15 {
                *slot += v as u64;
            } else {
                complete = false;
            }
        }
        let cost = u[USAGE_COST];
        if cost.is_finite() {
            self.cost += cost;
        } else {
            complete = false;
        }
        if !complete {
            self.incomplete += 1;
        }
    }

    /// The sum of two sums.
    pub fn plus(&self, other: &UsageSum) -> UsageSum {
        UsageSum {
            assistants: self.assistants + other.assistants,
            input: self.input + other.input,
            output: self.output + other.output,
            cache_read: self.cache_read + other.cache_read,
            cache_write: self.cache_write + other.cache_write,
            total_tokens: self.total_tokens + other.total_tokens,
            cost: self.cost + other.cost,
            incomplete: self.incomplete + other.incomplete,
        }
    }
}

/// The usage of one assistant message in `UsageSum::add`'s form; `None` for any other entry.
pub fn assistant_usage(e: &Entry) -> Option<Option<[f64; 6]>> {
    let m = e.message_with_role(&Role::Assistant)?;
    if !m.has_usage() {
        return Some(None);
    }
    let mut u = [f64::NAN; 6];
    for (i, k) in USAGE_KEYS.iter().enumerate() {
        u[i] = m.usage(k);
    }
    u[USAGE_COST] = m.cost_total();
    Some(Some(u))
}

fn is_aborted(e: &Entry) -> bool {
    e.message()
        .is_some_and(|m| m.stop_reason() == Some("aborted"))
}

/// What the runs since a submission's input cost, as the read holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostSinceInput {
    /// `subtree` (every entry descending from the input was read) or `active_path` (only the
    /// active path after the input: abandoned branches unknown).
    pub scope: CostScope,
    pub active: UsageSum,
    /// `None` when the read held only the active path.
    pub abandoned: Option<UsageSum>,
    pub aborted: UsageSum,
    /// Entries of the subtree off the active path, and the branches they hang from (distinct
    /// active-path entries an abandoned entry's parent is); `None` as `abandoned`.
    pub abandoned_entries: Option<u32>,
    pub abandoned_branches: Option<u32>,
    /// Compaction entries in the subtree: their `usage` is not read, so not in the sums.
    pub compactions: u32,
    /// The aborted partials on the active path (a part of `aborted`).
    #[serde(skip)]
    pub aborted_on_path: UsageSum,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostScope {
    #[default]
    Subtree,
    ActivePath,
}

impl CostSinceInput {
    /// Every part the read holds summed: with `ActivePath` scope a lower bound.
    pub fn total(&self) -> UsageSum {
        let known = self.active.plus(&self.aborted);
        match &self.abandoned {
            Some(a) => known.plus(a),
            None => known,
        }
    }

    /// The active path's part with its aborted partials: what the listing's walk reads, the
    /// same whatever the read.
    pub fn on_active_path(&self) -> UsageSum {
        self.active.plus(&self.aborted_on_path)
    }
}

/// The cost since the input entry at `input` (an index into `history.entries` on the active
/// path). `whole` says the history holds every entry of the session (a full or compact read);
/// otherwise it holds only the active path and the abandoned part is unknown.
///
/// One pass over the entries after the input. A child is appended after its parent (its
/// `parentId` is the leaf when it is appended), so an entry belongs to the subtree when its parent
/// is the input or an entry of the subtree before it. An entry whose parent comes later in append
/// order (only a hand-made or damaged session) is not counted.
pub fn cost_since_input(history: &History, input: usize, whole: bool) -> CostSinceInput {
    let entries = &history.entries[..];
    let mut out = CostSinceInput {
        scope: if whole {
            CostScope::Subtree
        } else {
            CostScope::ActivePath
        },
        ..CostSinceInput::default()
    };
    let mut abandoned = UsageSum::default();
    let mut abandoned_entries = 0u32;
    // Which path entries an abandoned branch hangs from, by position after the input: a whale
    // has thousands of branches, and a list searched per abandoned entry was quadratic.
    let mut branch_root = vec![false; entries.len().saturating_sub(input)];
    let mut branch_roots = 0u32;
    // Ids of the subtree seen so far, for entries off the path (the path itself is known by
    // index). Most of a whale's subtree is its path: only off-path parents are hashed.
    let mut in_subtree = vec![false; entries.len().saturating_sub(input)];
    // Built only when some entry after the input is off the active path.
    let off_path = whole && (input + 1..entries.len()).any(|k| !history.is_on_active_path(k));
    let index = off_path.then(|| IdIndex::new(&entries[input..]));
    let parent_of = |e: &Entry, rel: usize| -> Option<usize> {
        let j = index.as_ref()?.get_parent(e.parent_id.as_deref()?, rel)?;
        (j < rel).then_some(j)
    };
    for (k, e) in entries.iter().enumerate().skip(input) {
        let rel = k - input;
        let on_path = history.is_on_active_path(k);
        let member = if rel == 0 {
            true
        } else if on_path && whole {
            // The active path after the input is in the subtree by definition.
            history.is_on_active_path(input)
        } else if !whole {
            on_path
        } else {
            parent_of(e, rel).is_some_and(|j| in_subtree[j])
        };
        in_subtree[rel] = member;
        if !member || rel == 0 {
            continue;
        }
        if matches!(e.body, EntryBody::Compaction(_)) {
            out.compactions += 1;
        }
        if !on_path {
            abandoned_entries += 1;
            if let Some(j) = parent_of(e, rel) {
                if history.is_on_active_path(j + input) && !branch_root[j] {
                    branch_root[j] = true;
                    branch_roots += 1;
                }
            }
        }
        let Some(usage) = assistant_usage(e) else {
            continue;
        };
        if is_aborted(e) {
            out.aborted.add(usage);
            if on_path {
                out.aborted_on_path.add(usage);
            }
        } else if on_path {
            out.active.add(usage);
        } else {
            abandoned.add(usage);
        }
    }
    if whole {
        out.abandoned = Some(abandoned);
        out.abandoned_entries = Some(abandoned_entries);
        out.abandoned_branches = Some(branch_roots);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::entry::Entry;
    use serde_json::{json, Value};

    /// An entry of `parent` at the next position.
    fn entry(pos: i64, id: &str, parent: Option<&str>, message: Value) -> Entry {
        let data = json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-01-05T09:12:45.870Z", "message": message});
        Entry::parse(pos, id, &data.to_string())
    }

    fn input() -> Value {
        json!({"role": "signal", "type": "dispatch_input", "content": "go", "timestamp": 1})
    }

    /// An assistant with usage `(input, output, cacheRead, cacheWrite)`, `totalTokens` their sum,
    /// and `cost`.
    fn asst(stop: &str, t: [u64; 4], cost: f64) -> Value {
        json!({"role": "assistant", "content": [], "stopReason": stop,
            "usage": {"input": t[0], "output": t[1], "cacheRead": t[2], "cacheWrite": t[3],
                "totalTokens": t.iter().sum::<u64>(),
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}},
            "timestamp": 2})
    }

    fn result(call: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": call, "toolName": "t",
            "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 3})
    }

    /// Entries `(id, parent, message)` in append order, the input being `in`; the leaf `leaf`.
    fn history(rows: &[(&str, Option<&str>, Value)], leaf: &str) -> History {
        let mut entries = vec![
            entry(
                0,
                "root",
                None,
                json!({"role": "user", "content": "hi", "timestamp": 0}),
            ),
            entry(1, "in", Some("root"), input()),
        ];
        for (k, (id, parent, m)) in rows.iter().enumerate() {
            entries.push(entry(k as i64 + 2, id, *parent, m.clone()));
        }
        // The input's dispatch marker is not needed here: its index is given.
        History::new(entries, Some(leaf.into()))
    }

    fn sum(assistants: u32, t: [u64; 5], cost: f64) -> UsageSum {
        UsageSum {
            assistants,
            input: t[0],
            output: t[1],
            cache_read: t[2],
            cache_write: t[3],
            total_tokens: t[4],
            cost,
            incomplete: 0,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn each_part_sums_its_own_assistants() {
        // (name, rows, leaf, active, abandoned, aborted, abandoned entries, branches)
        type Case<'a> = (
            &'a str,
            Vec<(&'a str, Option<&'a str>, Value)>,
            &'a str,
            UsageSum,
            UsageSum,
            UsageSum,
            u32,
            u32,
        );
        let cases: Vec<Case> = vec![
            (
                "one turn on the path",
                vec![("a1", Some("in"), asst("stop", [100, 20, 5, 1], 0.25))],
                "a1",
                sum(1, [100, 20, 5, 1, 126], 0.25),
                UsageSum::default(),
                UsageSum::default(),
                0,
                0,
            ),
            (
                "a repair abandons two partial results",
                vec![
                    ("a1", Some("in"), asst("toolUse", [100, 10, 0, 0], 0.5)),
                    ("r1", Some("a1"), result("c1")),
                    ("r2", Some("r1"), result("c2")),
                    ("x1", Some("a1"), result("c1")),
                    ("x2", Some("x1"), result("c2")),
                    ("x3", Some("x2"), result("c3")),
                    ("a2", Some("x3"), asst("stop", [200, 30, 100, 0], 0.75)),
                ],
                "a2",
                sum(2, [300, 40, 100, 0, 440], 1.25),
                UsageSum::default(),
                UsageSum::default(),
                2,
                1,
            ),
            (
                "an abandoned assistant and an aborted partial",
                vec![
                    ("b1", Some("in"), asst("stop", [50, 5, 0, 0], 0.125)),
                    ("a1", Some("in"), asst("aborted", [70, 7, 0, 0], 0.0625)),
                    (
                        "s1",
                        Some("a1"),
                        json!({"role": "signal", "type": "stream_interrupted", "content": "x", "timestamp": 4}),
                    ),
                    ("a2", Some("s1"), asst("stop", [80, 8, 0, 0], 0.5)),
                ],
                "a2",
                sum(1, [80, 8, 0, 0, 88], 0.5),
                sum(1, [50, 5, 0, 0, 55], 0.125),
                sum(1, [70, 7, 0, 0, 77], 0.0625),
                1,
                1,
            ),
            (
                "an aborted partial on an abandoned branch counts as aborted",
                vec![
                    ("b1", Some("in"), asst("aborted", [9, 1, 0, 0], 0.5)),
                    ("a1", Some("in"), asst("stop", [10, 1, 0, 0], 0.25)),
                ],
                "a1",
                sum(1, [10, 1, 0, 0, 11], 0.25),
                UsageSum::default(),
                sum(1, [9, 1, 0, 0, 10], 0.5),
                1,
                1,
            ),
        ];
        for (name, rows, leaf, active, abandoned, aborted, entries, branches) in cases {
            let h = history(&rows, leaf);
            let c = cost_since_input(&h, 1, true);
            assert_eq!(c.scope, CostScope::Subtree, "{name}");
            for (part, got, want) in [
                ("active", &c.active, &active),
                ("abandoned", c.abandoned.as_ref().unwrap(), &abandoned),
                ("aborted", &c.aborted, &aborted),
            ] {
                assert!(close(got.cost, want.cost), "{name} {part}: {got:?}");
                let mut g = got.clone();
                g.cost = want.cost;
                assert_eq!(&g, want, "{name} {part}");
            }
            assert_eq!(c.abandoned_entries, Some(entries), "{name}");
            assert_eq!(c.abandoned_branches, Some(branches), "{name}");
            let t = c.total();
            assert!(
                close(t.cost, active.cost + abandoned.cost + aborted.cost),
                "{name}"
            );
        }
    }

    #[test]
    fn entries_before_the_input_and_outside_its_subtree_are_not_counted() {
        // `root` → `old` (an earlier turn) and a branch from `old` that never reaches the input.
        let entries = vec![
            entry(
                0,
                "root",
                None,
                json!({"role": "user", "content": "hi", "timestamp": 0}),
            ),
            entry(1, "old", Some("root"), asst("stop", [1000, 1, 0, 0], 9.0)),
            entry(2, "in", Some("old"), input()),
            entry(3, "side", Some("old"), asst("stop", [500, 1, 0, 0], 4.0)),
            entry(4, "a1", Some("in"), asst("stop", [10, 1, 0, 0], 0.5)),
        ];
        let h = History::new(entries, Some("a1".into()));
        let c = cost_since_input(&h, 2, true);
        assert_eq!(c.active.input, 10);
        assert_eq!(c.abandoned.as_ref().unwrap().assistants, 0);
        assert_eq!(c.abandoned_entries, Some(0));
        assert!(close(c.total().cost, 0.5));
    }

    #[test]
    fn a_path_only_read_says_the_abandoned_part_is_unknown() {
        let h = history(
            &[
                ("b1", Some("in"), asst("stop", [50, 5, 0, 0], 0.125)),
                ("a1", Some("in"), asst("aborted", [70, 7, 0, 0], 0.0625)),
                ("a2", Some("a1"), asst("stop", [80, 8, 0, 0], 0.5)),
            ],
            "a2",
        );
        let whole = cost_since_input(&h, 1, true);
        let path = cost_since_input(&h, 1, false);
        assert_eq!(path.scope, CostScope::ActivePath);
        assert_eq!(path.abandoned, None);
        assert_eq!(path.abandoned_entries, None);
        assert_eq!(path.abandoned_branches, None);
        // The active path's figure is the same whatever the read.
        assert_eq!(path.on_active_path(), whole.on_active_path());
        assert!(close(path.on_active_path().cost, 0.5625));
        assert!(close(whole.total().cost, 0.6875));
    }

    #[test]
    fn missing_or_odd_usage_is_left_out_and_counted_incomplete() {
        let no_usage =
            json!({"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 2});
        let partial = json!({"role": "assistant", "content": [], "stopReason": "stop",
            "usage": {"input": 5, "output": 1.5, "cost": {"total": "x"}}, "timestamp": 2});
        let h = history(
            &[
                ("a1", Some("in"), no_usage),
                ("a2", Some("a1"), partial),
                ("a3", Some("a2"), asst("stop", [1, 1, 1, 1], 0.5)),
            ],
            "a3",
        );
        let c = cost_since_input(&h, 1, true);
        assert_eq!(c.active.assistants, 3);
        assert_eq!(c.active.incomplete, 2);
        assert_eq!(c.active.input, 6);
        assert_eq!(c.active.output, 1);
        assert!(close(c.active.cost, 0.5));
    }

    #[test]
    fn compact_and_full_reads_sum_the_same() {
        let rows = [
            ("a1", Some("in"), asst("toolUse", [100, 10, 7, 3], 0.5)),
            ("r1", Some("a1"), result("c1")),
            ("a2", Some("r1"), asst("stop", [200, 30, 100, 9], 0.75)),
        ];
        let full = history(&rows, "a2");
        let compact: Vec<Entry> = full
            .entries
            .iter()
            .map(|e| crate::journal::compact::parse_compact(e.position, &e.id, e.raw.as_bytes()))
            .collect();
        assert!(compact.iter().all(|e| e.compact));
        let compact = History::new(compact, Some("a2".into()));
        assert_eq!(
            cost_since_input(&full, 1, true),
            cost_since_input(&compact, 1, true)
        );
        assert_eq!(cost_since_input(&compact, 1, true).active.cache_write, 12);
    }
}
