//! The history tree: a pure model of a session's active path for display.
//!
//! Top-level rows are the active path in order. An assistant that requested tools is a node whose
//! children are its tool calls, each paired with its result (✓ ok, ✗ error, ⧗ missing); the paired
//! result entries do not appear again. Entries off the active path (abandoned branches, e.g. the
//! partial results a repair left behind) are folded under the active entry they branch from.
//! Entries before the submission's input are collapsed into one line. The trailing partial batch
//! (spec §4.3) is flagged on its owner, its recorded results and each missing call.
//!
//! Nothing here draws: [`Tree::visible`] flattens the open nodes into rows once per change, and the
//! view lays out only the rows inside the viewport.

// foldhash, not SipHash: the builder asks these per entry of a whale (120,000).
use foldhash::{HashMap, HashSet};

use turnscope_core::journal::entry::{Entry, Role, ToolCall};
use turnscope_core::journal::entry_slice::EntrySlice;
use turnscope_core::journal::history::History;
use turnscope_core::journal::search::Needle;
use turnscope_core::recovery::classify::TrailingPartialBatch;

bitflags::bitflags! {
    /// Row flags, combined as bits.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Flags: u8 {
        /// Part of the trailing partial batch (owner, recorded result or missing call).
        const PARTIAL = 1;
        /// Not on the active path (shown dimmed).
        const OFF_PATH = 2;
        /// One of the entries that made the classifier's rule match.
        const MATCHED = 4;
        /// The journal's checkpoint leaf.
        const CHECKPOINT = 8;
        /// The submission's input entry (or, for a session, any submission's input).
        const INPUT = 16;
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    Ok,
    Error,
    Missing,
}

impl CallStatus {
    pub fn mark(self) -> &'static str {
        match self {
            CallStatus::Ok => "✓",
            CallStatus::Error => "✗",
            CallStatus::Missing => "⧗",
        }
    }
}

/// What a node shows. Indexes are `u32` (a session holds far fewer than 4 billion entries) and a
/// call keeps no copy of its name or id (read them with [`Tree::call`]): a whale's tree has
/// 130,000 nodes, each kept for as long as the submission is open.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// The first row: the submission (verdict) or the session (summary).
    Header,
    /// `count` active-path entries before the input, folded into one line.
    PreInput { count: u32 },
    /// A session entry (index into `History::entries`).
    Entry { entry: u32 },
    /// Tool call `call` of the assistant entry `owner`, with its result entry if one was recorded.
    Call {
        owner: u32,
        call: u32,
        result: Option<u32>,
        status: CallStatus,
    },
    /// `count` entries off the active path that branch from `anchor` (None: never reach the path).
    Abandoned { anchor: Option<u32>, count: u32 },
    /// A line of text (damage, "no session"): its index in the tree's notes ([`Tree::note`]),
    /// not the text itself, which would make every node 8 bytes larger.
    Note(u32),
}

/// "No node" in the sibling links.
const NONE: u32 = u32::MAX;

/// Stable identity of a node across rebuilds (refresh), for expansion state and selection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeKey {
    Header,
    PreInput,
    Entry(String),
    Call(String, usize),
    Abandoned(Option<String>),
    Note(usize),
}

/// One row of the tree. Children are linked (first child, next sibling) instead of held in a
/// `Vec` per node, so a node is 40 bytes and owns no allocation.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    parent: u32,
    first_child: u32,
    last_child: u32,
    next_sibling: u32,
    pub depth: u16,
    pub flags: Flags,
}

impl Node {
    pub fn has(&self, f: Flags) -> bool {
        self.flags.intersects(f)
    }

    pub fn parent(&self) -> Option<usize> {
        link(self.parent)
    }

    pub fn has_children(&self) -> bool {
        self.first_child != NONE
    }
}

fn link(i: u32) -> Option<usize> {
    (i != NONE).then_some(i as usize)
}

fn idx(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 4 billion entries and nodes")
}

/// What to build the tree from.
#[derive(Debug, Default)]
pub struct TreeInput<'a> {
    pub history: Option<&'a History>,
    /// The submission's input entry: active entries before it are folded into one line.
    pub input_entry_id: Option<&'a str>,
    pub partial: Option<&'a TrailingPartialBatch>,
    /// Entry ids of the classifier's explanation.
    pub matched: &'a [String],
    pub checkpoint: Option<&'a str>,
    /// Extra input entries to mark (every submission's input in the sessions view).
    pub inputs: &'a [String],
    /// Lines to show under the header (damage, missing session).
    pub notes: Vec<String>,
}

/// Default openness of a kind of node (before any toggle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExpandMode {
    /// Assistants open (tool calls visible); the pre-input line and abandoned branches folded.
    #[default]
    Default,
    AllOpen,
    AllClosed,
}

/// Which nodes are open: a mode plus per-node overrides keyed by stable identity.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    pub mode: ExpandMode,
    pub overrides: HashMap<NodeKey, bool>,
}

#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub roots: Vec<usize>,
    /// Entry index → the node that shows it (`NONE`: none).
    by_entry: Vec<u32>,
    /// The history's entries (shared, not copied), for keys and call names.
    entries: EntrySlice,
    /// The texts of the `Note` nodes.
    notes: Vec<Box<str>>,
}

struct Builder<'a> {
    h: &'a History,
    nodes: Vec<Node>,
    by_entry: Vec<u32>,
    /// Abandoned groups by anchor entry index.
    branches: HashMap<Option<usize>, Vec<usize>>,
    partial: Option<&'a TrailingPartialBatch>,
    matched: HashSet<&'a str>,
    checkpoint: Option<&'a str>,
    inputs: HashSet<&'a str>,
    /// Results already shown under a call, by entry index (each entry is in one run only).
    consumed: Vec<bool>,
}

impl<'a> Builder<'a> {
    fn push(&mut self, kind: NodeKind, parent: Option<usize>, flags: Flags) -> usize {
        let depth = parent.map_or(0, |p| self.nodes[p].depth + 1);
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind,
            parent: parent.map_or(NONE, idx),
            first_child: NONE,
            last_child: NONE,
            next_sibling: NONE,
            depth,
            flags,
        });
        if let Some(p) = parent {
            match link(self.nodes[p].last_child) {
                Some(last) => self.nodes[last].next_sibling = idx(id),
                None => self.nodes[p].first_child = idx(id),
            }
            self.nodes[p].last_child = idx(id);
        }
        id
    }

    fn entry_flags(&self, i: usize) -> Flags {
        let e = &self.h.entries[i];
        let mut f = Flags::empty();
        if !self.h.is_on_active_path(i) {
            f |= Flags::OFF_PATH;
        }
        if self.matched.contains(e.id.as_str()) {
            f |= Flags::MATCHED;
        }
        if self.checkpoint == Some(e.id.as_str()) {
            f |= Flags::CHECKPOINT;
        }
        if self.inputs.contains(e.id.as_str()) {
            f |= Flags::INPUT;
        }
        if let Some(b) = self.partial {
            if b.entry_id == e.id || b.result_entry_ids.iter().any(|r| *r == e.id) {
                f |= Flags::PARTIAL;
            }
        }
        f
    }

    fn entry_node(&mut self, i: usize, parent: Option<usize>) -> usize {
        let flags = self.entry_flags(i);
        let n = self.push(NodeKind::Entry { entry: idx(i) }, parent, flags);
        self.by_entry[i] = idx(n);
        n
    }

    /// Lay out a run of active-path entries (indexes into `entries`) under `parent`.
    fn path_run(&mut self, run: &[usize], parent: Option<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        for (k, &i) in run.iter().enumerate() {
            if self.consumed[i] {
                continue;
            }
            let node = self.entry_node(i, parent);
            out.push(node);
            let e = &self.h.entries[i];
            if let Some(m) = e.message_with_role(&Role::Assistant) {
                let calls = m.tool_calls();
                if !calls.is_empty() {
                    // Results recorded after this assistant, up to the next assistant or user
                    // message; each call takes the first unclaimed result with its id.
                    let mut candidates: Vec<usize> = Vec::new();
                    for &j in &run[k + 1..] {
                        let Some(mm) = self.h.entries[j].message() else {
                            continue;
                        };
                        match mm.role {
                            Role::ToolResult => candidates.push(j),
                            Role::Assistant | Role::User => break,
                            _ => {}
                        }
                    }
                    let owner_partial = self.partial.filter(|b| b.entry_id == e.id);
                    for (ci, call) in calls.iter().enumerate() {
                        let result = candidates.iter().copied().find(|&j| {
                            !self.consumed[j]
                                && self.h.entries[j].message().and_then(|r| r.tool_call_id())
                                    == call.id
                        });
                        if let Some(j) = result {
                            self.consumed[j] = true;
                        }
                        let status = match result {
                            None => CallStatus::Missing,
                            Some(j)
                                if self.h.entries[j].message().is_some_and(|r| r.is_error()) =>
                            {
                                CallStatus::Error
                            }
                            Some(_) => CallStatus::Ok,
                        };
                        let mut flags =
                            result.map_or(Flags::empty(), |j| self.entry_flags(j)) & !Flags::INPUT;
                        if owner_partial.is_some() {
                            flags |= Flags::PARTIAL;
                        }
                        let c = self.push(
                            NodeKind::Call {
                                owner: idx(i),
                                call: idx(ci),
                                result: result.map(idx),
                                status,
                            },
                            Some(node),
                            flags,
                        );
                        if let Some(j) = result {
                            self.by_entry[j] = idx(c);
                        }
                    }
                }
            }
            self.attach_branches(i, node);
        }
        out
    }

    fn attach_branches(&mut self, anchor: usize, node: usize) {
        if let Some(members) = self.branches.remove(&Some(anchor)) {
            let g = self.push(
                NodeKind::Abandoned {
                    anchor: Some(idx(anchor)),
                    count: idx(members.len()),
                },
                Some(node),
                Flags::OFF_PATH,
            );
            for m in members {
                self.entry_node(m, Some(g));
            }
        }
    }
}

impl Tree {
    pub fn build(input: &TreeInput<'_>) -> Tree {
        let empty = History::default();
        let h = input.history.unwrap_or(&empty);
        // Grouped first: the grouping's own id index and maps (9.5 MB on the 240,000-entry
        // whale) are freed before the nodes are allocated, instead of adding to the heap's peak.
        let branches = h.abandoned_branches().into_iter().collect();
        let mut b = Builder {
            h,
            // Nearly every entry is one node (a paired result is its call's node); calls without
            // a result and group rows add a few. Sized up front: doubling a vector of 130,000
            // nodes would leave it at twice that.
            nodes: Vec::with_capacity(h.entries.len() + h.entries.len() / 8 + 16),
            by_entry: vec![NONE; h.entries.len()],
            consumed: vec![false; h.entries.len()],
            branches,
            partial: input.partial,
            matched: input.matched.iter().map(String::as_str).collect(),
            checkpoint: input.checkpoint,
            inputs: input
                .inputs
                .iter()
                .map(String::as_str)
                .chain(input.input_entry_id)
                .collect(),
        };
        let mut roots = vec![b.push(NodeKind::Header, None, Flags::empty())];
        for i in 0..input.notes.len() {
            roots.push(b.push(NodeKind::Note(idx(i)), None, Flags::empty()));
        }
        let path = h.active_indexes();
        let split = input
            .input_entry_id
            .and_then(|id| path.iter().position(|&i| h.entries[i].id == id))
            .unwrap_or(0);
        if split > 0 {
            let g = b.push(
                NodeKind::PreInput { count: idx(split) },
                None,
                Flags::empty(),
            );
            roots.push(g);
            b.path_run(&path[..split], Some(g));
        }
        roots.extend(b.path_run(&path[split..], None));
        if let Some(members) = b.branches.remove(&None) {
            let g = b.push(
                NodeKind::Abandoned {
                    anchor: None,
                    count: idx(members.len()),
                },
                None,
                Flags::OFF_PATH,
            );
            roots.push(g);
            for m in members {
                b.entry_node(m, Some(g));
            }
        }
        // Anchors inside a folded pre-input run were attached there; anything left over (an anchor
        // that is an off-path entry itself cannot happen) is dropped silently.
        let mut nodes = b.nodes;
        nodes.shrink_to_fit();
        Tree {
            nodes,
            roots,
            by_entry: b.by_entry,
            entries: h.entries.clone(),
            notes: input.notes.iter().map(|n| n.as_str().into()).collect(),
        }
    }

    /// The text of a `Note` node.
    pub fn note(&self, note: u32) -> &str {
        &self.notes[note as usize]
    }

    fn entry_id(&self, entry: u32) -> String {
        self.entries[entry as usize].id.to_string()
    }

    /// The tool call a `Call` node shows (name and id; arguments only for a full entry).
    pub fn call(&self, node: usize) -> Option<ToolCall> {
        let NodeKind::Call { owner, call, .. } = self.nodes[node].kind else {
            return None;
        };
        let m = self.entries.get(owner as usize)?.message()?;
        m.tool_calls().into_iter().nth(call as usize)
    }

    /// `node`'s children, in order.
    pub fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        let mut next = link(self.nodes[node].first_child);
        std::iter::from_fn(move || {
            let n = next?;
            next = link(self.nodes[n].next_sibling);
            Some(n)
        })
    }

    /// Nodes depth first from the roots, descending into a node only when `open(node)`.
    /// Walks the sibling links with no stack.
    pub fn preorder<'t>(
        &'t self,
        open: impl Fn(usize) -> bool + 't,
    ) -> impl Iterator<Item = usize> + 't {
        let mut root = 0;
        let mut next = self.roots.first().copied();
        std::iter::from_fn(move || {
            let n = next?;
            let node = &self.nodes[n];
            next = if node.has_children() && open(n) {
                link(node.first_child)
            } else {
                // The next sibling of `n` or of its nearest ancestor; else the next root.
                let mut cur = n;
                loop {
                    let c = &self.nodes[cur];
                    if let Some(s) = link(c.next_sibling) {
                        break Some(s);
                    }
                    match c.parent() {
                        Some(p) => cur = p,
                        None => {
                            root += 1;
                            break self.roots.get(root).copied();
                        }
                    }
                }
            };
            Some(n)
        })
    }

    pub fn key(&self, node: usize) -> NodeKey {
        match &self.nodes[node].kind {
            NodeKind::Header => NodeKey::Header,
            NodeKind::PreInput { .. } => NodeKey::PreInput,
            NodeKind::Entry { entry } => NodeKey::Entry(self.entry_id(*entry)),
            NodeKind::Call { owner, call, .. } => {
                NodeKey::Call(self.entry_id(*owner), *call as usize)
            }
            NodeKind::Abandoned { anchor, .. } => {
                NodeKey::Abandoned(anchor.map(|a| self.entry_id(a)))
            }
            NodeKind::Note(_) => NodeKey::Note(node),
        }
    }

    pub fn find_key(&self, key: &NodeKey) -> Option<usize> {
        match key {
            NodeKey::Entry(id) => self.node_of_entry_id(id),
            NodeKey::Header => Some(self.roots[0]),
            _ => (0..self.nodes.len()).find(|&n| &self.key(n) == key),
        }
    }

    /// The node that shows entry `entry` (an entry row, or the tool call its result is paired with).
    pub fn node_of_entry(&self, entry: usize) -> Option<usize> {
        self.by_entry.get(entry).copied().and_then(link)
    }

    pub fn node_of_entry_id(&self, id: &str) -> Option<usize> {
        // Later duplicates win, as in the runtime's id map.
        let i = self.entries.iter().rposition(|e| e.id == id)?;
        self.node_of_entry(i)
    }

    /// The entry a node shows (for a call: its result entry, if any).
    pub fn entry_of(&self, node: usize) -> Option<usize> {
        match self.nodes[node].kind {
            NodeKind::Entry { entry } => Some(entry as usize),
            NodeKind::Call { result, .. } => result.map(|r| r as usize),
            _ => None,
        }
    }

    pub fn is_open(&self, node: usize, exp: &Expansion) -> bool {
        let n = &self.nodes[node];
        if !n.has_children() {
            return false;
        }
        if !exp.overrides.is_empty() {
            if let Some(&o) = exp.overrides.get(&self.key(node)) {
                return o;
            }
        }
        match exp.mode {
            ExpandMode::AllOpen => true,
            ExpandMode::AllClosed => false,
            ExpandMode::Default => {
                matches!(n.kind, NodeKind::Entry { .. }) && !n.has(Flags::OFF_PATH)
            }
        }
    }

    /// The open rows, depth first. O(number of visible rows).
    pub fn visible(&self, exp: &Expansion) -> Vec<usize> {
        self.preorder(|n| self.is_open(n, exp)).collect()
    }

    /// Open every ancestor of `node` so it becomes visible.
    pub fn reveal(&self, node: usize, exp: &mut Expansion) {
        let mut cur = self.nodes[node].parent();
        while let Some(p) = cur {
            if !self.is_open(p, exp) {
                exp.overrides.insert(self.key(p), true);
            }
            cur = self.nodes[p].parent();
        }
    }

    /// Nodes whose entry (or call) contains `needle` (case-insensitive), in tree order. A
    /// compact entry matches on what it holds (id, kind, tool names and ids, its text when
    /// read) or when `text_hits` (the store's search of the stored JSON) has its position.
    pub fn search(
        &self,
        h: Option<&History>,
        needle: &str,
        text_hits: Option<&HashSet<i64>>,
    ) -> Vec<usize> {
        let Some(needle) = Needle::new(needle) else {
            return Vec::new();
        };
        let entry_matches = |e: &Entry| entry_matches(e, &needle, text_hits);
        self.preorder(|_| true)
            .filter(|&n| match self.nodes[n].kind {
                NodeKind::Call { result, .. } => {
                    self.call(n).is_some_and(|c| {
                        needle.matches(c.name.as_bytes()) || needle.matches(c.id_text().as_bytes())
                    }) || result
                        .and_then(|r| h.map(|h| entry_matches(&h.entries[r as usize])))
                        .unwrap_or(false)
                }
                NodeKind::Entry { entry } => {
                    h.is_some_and(|h| entry_matches(&h.entries[entry as usize]))
                }
                _ => false,
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

fn entry_matches(e: &Entry, needle: &Needle, text_hits: Option<&HashSet<i64>>) -> bool {
    if !e.compact {
        return needle.matches(e.raw.as_bytes());
    }
    // A compact entry has no stored JSON in memory: what it keeps (id, kind, tool names and
    // ids, its text when read), and the store's search of its stored JSON.
    if text_hits.is_some_and(|t| t.contains(&e.position)) {
        return true;
    }
    let mut hay = format!("{} {}", e.id, e.kind_label());
    if let Some(m) = e.message() {
        for c in m.tool_calls() {
            hay.push_str(&format!(" {} {}", c.name, c.id_text()));
        }
        hay.push_str(&format!(" {}", m.tool_name().unwrap_or("")));
        if let Some(t) = m.text_if_read() {
            hay.push_str(&format!(" {t}"));
        }
    }
    needle.matches(hay.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_core::recovery::classify::find_trailing_partial_tool_batch;

    fn msg(pos: i64, id: &str, parent: Option<&str>, message: &str, extra: &str) -> Entry {
        let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
        let raw = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-05T09:12:44.131Z","message":{message}{extra}}}"#
        );
        Entry::parse(pos, id, &raw)
    }

    /// A whale's tree holds a node per entry for as long as it is open (316,876 at 240,000
    /// entries after the input): every byte here is 317 kB.
    #[test]
    fn a_node_is_forty_bytes() {
        assert!(
            std::mem::size_of::<Node>() <= 40,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn notes_are_rows_under_the_header_in_their_order() {
        let t = Tree::build(&TreeInput {
            notes: vec!["damaged row 7".into(), "no session".into()],
            ..TreeInput::default()
        });
        let notes: Vec<&str> = t
            .roots
            .iter()
            .filter_map(|&r| match t.nodes[r].kind {
                NodeKind::Note(i) => Some(t.note(i)),
                _ => None,
            })
            .collect();
        assert_eq!(notes, ["damaged row 7", "no session"]);
        assert_eq!(t.nodes[t.roots[0]].kind, NodeKind::Header);
    }

    fn input(pos: i64, id: &str, parent: Option<&str>) -> Entry {
        msg(
            pos,
            id,
            parent,
            r#"{"role":"signal","type":"dispatch_input","content":"{}"}"#,
            r#","dispatch":{"dispatchId":"sub-1"}"#,
        )
    }

    fn assistant(pos: i64, id: &str, parent: &str, stop: &str, calls: &[&str]) -> Entry {
        let blocks: Vec<String> = calls
            .iter()
            .map(|c| {
                format!(r#"{{"type":"toolCall","id":"{c}","name":"tool_{c}","arguments":{{}}}}"#)
            })
            .collect();
        msg(
            pos,
            id,
            Some(parent),
            &format!(
                r#"{{"role":"assistant","content":[{}],"stopReason":"{stop}","usage":{{"input":1,"output":2}}}}"#,
                blocks.join(",")
            ),
            "",
        )
    }

    fn result(pos: i64, id: &str, parent: &str, call: &str, err: bool) -> Entry {
        msg(
            pos,
            id,
            Some(parent),
            &format!(
                r#"{{"role":"toolResult","toolCallId":"{call}","toolName":"tool_{call}","content":[],"isError":{err}}}"#
            ),
            "",
        )
    }

    fn labels(t: &Tree, h: &History, exp: &Expansion) -> Vec<String> {
        t.visible(exp)
            .into_iter()
            .map(|n| {
                let node = &t.nodes[n];
                let pad = "  ".repeat(node.depth as usize);
                let mark = if node.has(Flags::PARTIAL) { " !" } else { "" };
                let dim = if node.has(Flags::OFF_PATH) { " ~" } else { "" };
                let text = match &node.kind {
                    NodeKind::Header => "header".to_string(),
                    NodeKind::PreInput { count } => format!("{count} before input"),
                    NodeKind::Entry { entry } => h.entries[*entry as usize].id.to_string(),
                    NodeKind::Call { status, .. } => {
                        format!("{} {}", status.mark(), t.call(n).unwrap().id_text())
                    }
                    NodeKind::Abandoned { count, .. } => format!("{count} abandoned"),
                    NodeKind::Note(i) => t.note(*i).to_string(),
                };
                format!("{pad}{text}{mark}{dim}")
            })
            .collect()
    }

    /// A whale's tree has 130,000 nodes, kept while it is open.
    #[test]
    fn a_node_stays_within_48_bytes() {
        assert!(
            std::mem::size_of::<Node>() <= 48,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn pairs_calls_flags_partial_batch_and_folds() {
        let entries = vec![
            msg(0, "u0", None, r#"{"role":"user","content":"hi"}"#, ""),
            input(1, "in", Some("u0")),
            assistant(2, "a1", "in", "toolUse", &["c1", "c2", "c3"]),
            result(3, "r1", "a1", "c1", false),
            result(4, "r2", "r1", "c2", true),
        ];
        let h = History::new(entries, Some("r2".into()));
        let following = h
            .following(
                turnscope_core::journal::history::SubmissionKind::Dispatch,
                "sub-1",
            )
            .unwrap();
        let batch = find_trailing_partial_tool_batch(&following).unwrap();
        let t = Tree::build(&TreeInput {
            history: Some(&h),
            input_entry_id: Some("in"),
            partial: Some(&batch),
            ..TreeInput::default()
        });
        let exp = Expansion::default();
        assert_eq!(
            labels(&t, &h, &exp),
            [
                "header",
                "1 before input",
                "in",
                "a1 !",
                "  ✓ c1 !",
                "  ✗ c2 !",
                "  ⧗ c3 !"
            ]
        );
        let open = Expansion {
            mode: ExpandMode::AllOpen,
            ..Default::default()
        };
        assert_eq!(labels(&t, &h, &open)[2], "  u0");
        // The result entries resolve to their call rows.
        assert_eq!(
            t.node_of_entry_id("r2"),
            t.find_key(&NodeKey::Call("a1".into(), 1))
        );
    }

    #[test]
    fn abandoned_branch_folds_under_its_anchor_and_reveal_opens_it() {
        let entries = vec![
            input(0, "in", None),
            assistant(1, "a1", "in", "toolUse", &["c1", "c2"]),
            result(2, "old1", "a1", "c1", false),
            // repair: leaf moved back to a1, complete batch appended
            result(3, "n1", "a1", "c1", false),
            result(4, "n2", "n1", "c2", true),
        ];
        let h = History::new(entries, Some("n2".into()));
        let t = Tree::build(&TreeInput {
            history: Some(&h),
            input_entry_id: Some("in"),
            ..TreeInput::default()
        });
        let mut exp = Expansion::default();
        assert_eq!(
            labels(&t, &h, &exp),
            ["header", "in", "a1", "  ✓ c1", "  ✗ c2", "  1 abandoned ~"]
        );
        let old = t.node_of_entry_id("old1").unwrap();
        assert!(!t.visible(&exp).contains(&old));
        t.reveal(old, &mut exp);
        assert!(t.visible(&exp).contains(&old));
        assert!(t.nodes[old].has(Flags::OFF_PATH));
        let closed = Expansion {
            mode: ExpandMode::AllClosed,
            ..Default::default()
        };
        assert_eq!(labels(&t, &h, &closed), ["header", "in", "a1"]);
    }

    #[test]
    fn search_finds_entries_and_calls() {
        let entries = vec![
            input(0, "in", None),
            assistant(1, "a1", "in", "toolUse", &["zebra"]),
        ];
        let h = History::new(entries, Some("a1".into()));
        let t = Tree::build(&TreeInput {
            history: Some(&h),
            input_entry_id: Some("in"),
            ..TreeInput::default()
        });
        let hits = t.search(Some(&h), "ZEBRA", None);
        assert_eq!(hits.len(), 2, "the assistant's JSON and the call row");
    }
}
