//! An opened submission or session: the active-path tree (`tree_pane.rs`) and the detail pane
//! (`detail_pane.rs`). The state of both, the tree's keys (fold, jumps, search, stepping
//! between a session's inputs) and what changed between two loads.

pub mod detail_pane;
mod fetched;
mod lazy;
pub mod tree_pane;

pub use fetched::{Fetched, TextHits, PREVIEWS_KEPT};

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{nav_delta, Ask};
use crate::keymap::Action;
use crate::messages::{BannerBase, Opened, OpenedSession, OpenedSubmission, Target};
use crate::popups::{Popup, PopupLine};
use crate::tree::{self, ExpandMode, Expansion, NodeKind, Tree, TreeInput};
use crate::view_state::{InputMode, Pane};
use crate::worker_error::WorkerError;
use turnscope_core::journal::entry::Entry;
use turnscope_core::journal::history::History;
use turnscope_core::recovery::reconciler::RuleResult;

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub query: String,
    pub hits: Vec<usize>,
    pub current: Option<usize>,
    /// The worker's read of which entries' stored JSON holds a text (the tree's entries are
    /// compact: only their ids, kinds and tool names are in memory).
    pub text: Option<TextHits>,
    /// A text to ask the worker to search for (taken by the app after each key).
    want_text: Option<String>,
    /// The text asked for and not yet answered (the status line says it is being searched).
    pub asked_text: Option<String>,
    /// The address of the entries the text search was asked of: a refresh that read the
    /// session again asks again; one that found it unchanged (the same entries) does not.
    text_of: Option<usize>,
}

/// An opened submission or session: its tree and detail state.
#[derive(Debug, Clone)]
pub struct Inspect {
    pub target: Target,
    pub data: Option<Opened>,
    pub error: Option<WorkerError>,
    pub tree: Tree,
    pub exp: Expansion,
    /// Visible node ids (recomputed when the tree or the expansion changes).
    pub visible: Vec<usize>,
    pub sel: usize,
    pub detail_scroll: usize,
    pub raw: bool,
    pub search: Search,
    pub matched_cursor: usize,
    /// Bumped whenever data or selection changes (detail cache key).
    pub generation: u64,
    /// Full entries fetched for the detail pane, by entry id (the tree's entries are compact).
    pub bodies: Fetched<Entry>,
    /// Text previews fetched for the tree's rows on screen, by entry id: `(position, text)`.
    /// The tree's entries are read without them (23 MB on a 240,000-entry whale).
    pub previews: Fetched<(i64, Option<Box<str>>)>,
    /// When this view was asked for (the loading line shows how long it has been).
    pub requested_at: std::time::Instant,
}

/// Full bodies an inspect view keeps (the detail pane shows one or two at a time).
pub const BODIES_KEPT: usize = 64;

impl Inspect {
    pub fn new(target: Target) -> Inspect {
        Inspect {
            target,
            data: None,
            error: None,
            tree: Tree::default(),
            exp: Expansion::default(),
            visible: Vec::new(),
            sel: 0,
            detail_scroll: 0,
            raw: false,
            search: Search::default(),
            matched_cursor: 0,
            generation: 0,
            bodies: Fetched::new(BODIES_KEPT),
            previews: Fetched::new(PREVIEWS_KEPT),
            requested_at: std::time::Instant::now(),
        }
    }

    /// The worker's read of what is open arrived (`first`: the first read, which starts the
    /// cursor at the top; a refresh keeps it where it is).
    pub fn on_read(&mut self, result: Result<Opened, WorkerError>) {
        match result {
            Ok(data) => {
                let first = self.data.is_none();
                self.data = Some(data);
                self.error = None;
                self.rebuild();
                if first {
                    self.sel = 0;
                    // A stuck submission opens where the decision is: on the trailing partial
                    // batch's assistant (its calls and results below it), not on the input.
                    if let Some(owner) = self.partial_batch_owner() {
                        self.select_entry_id(&owner);
                    }
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// A refresh's re-read of what is open: the new data, the cursor kept where it is; the data
    /// it replaces is handed back (the "changed under you" banner compares the two).
    pub fn refreshed(&mut self, data: Opened) -> Option<Opened> {
        let old = self.data.replace(data);
        self.error = None;
        self.rebuild();
        old
    }

    /// An entry's full body arrived for `session` (kept when it is this view's session).
    pub fn on_body(&mut self, session: &str, entry_id: &str, full: Option<&Entry>) {
        if self.session_key().as_deref() != Some(session) {
            return;
        }
        if let Some(full) = full {
            self.bodies.keep(entry_id.to_string(), full.clone());
            // A fresh generation from the shared counter: `+= 1` could collide with the next
            // `touch` and leave the detail pane drawing its stale cache.
            self.touch();
        }
    }

    /// `e` with its full body when it has been fetched (else `e`, compact or full as loaded).
    pub fn body<'a>(&'a self, e: &'a Entry) -> &'a Entry {
        match self.bodies.get(&e.id) {
            Some(full) if e.compact && full.position == e.position => full,
            _ => e,
        }
    }

    /// A refresh's re-read of the opened view: what changed under the operator in the opened
    /// submission (unless this app wrote it, `own`), counted from the banner's base (`up`) while a
    /// banner about it is up.
    pub fn on_refresh(
        &mut self,
        result: Result<Opened, WorkerError>,
        up: Option<&BannerBase>,
        own: &HashSet<String>,
    ) -> Option<(String, BannerBase)> {
        let data = match result {
            Ok(data) => data,
            Err(e) => {
                self.error = Some(e);
                return None;
            }
        };
        let old = self.refreshed(data);
        let base = match (up, &old) {
            (Some(BannerBase::Opened(base)), Some(Opened::Submission(a)))
                if base.report.row().submission_id == a.report.row().submission_id =>
            {
                Some(&**base)
            }
            (_, Some(Opened::Submission(a))) => Some(a),
            _ => None,
        };
        match (base, self.submission()) {
            (Some(a), Some(b)) if !own.contains(&b.report.row().submission_id) => {
                describe_change(a, b).map(|c| (c, BannerBase::Opened(Box::new(a.clone()))))
            }
            _ => None,
        }
    }

    /// The session key of what is open.
    pub fn session_key(&self) -> Option<String> {
        match &self.data {
            Some(Opened::Submission(s)) => s.report.bundle.session.as_ref().map(|x| x.id.clone()),
            Some(Opened::Session(s)) => s.record.as_ref().map(|x| x.id.clone()),
            None => None,
        }
    }

    /// The bodies to ask the worker for now, as `(session, entry id)`: those the detail pane is
    /// about to show, each asked once.
    pub fn take_body_requests(&mut self) -> Vec<(String, String)> {
        let Some(session) = self.session_key() else {
            return Vec::new();
        };
        let ids = self.bodies_to_fetch();
        for id in &ids {
            self.bodies.ask(id.clone());
        }
        ids.into_iter().map(|id| (session.clone(), id)).collect()
    }

    /// Compact entries the detail pane shows for the selected node, whose body is not yet asked.
    pub fn bodies_to_fetch(&self) -> Vec<String> {
        let (Some(h), Some(node)) = (self.history(), self.selected_node()) else {
            return Vec::new();
        };
        let shown: Vec<usize> = match &self.tree.nodes[node].kind {
            NodeKind::Entry { entry } => vec![*entry as usize],
            NodeKind::Call { owner, result, .. } => std::iter::once(*owner)
                .chain(*result)
                .map(|i| i as usize)
                .collect(),
            _ => Vec::new(),
        };
        shown
            .into_iter()
            .filter_map(|i| h.entries.get(i))
            .filter(|e| e.compact && !self.bodies.was_asked(&e.id))
            .map(|e| e.id.to_string())
            .collect()
    }

    /// Mark the detail pane stale (a process-wide counter, so two inspects never share a key).
    pub fn touch(&mut self) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.generation = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn submission(&self) -> Option<&OpenedSubmission> {
        match &self.data {
            Some(Opened::Submission(s)) => Some(s),
            _ => None,
        }
    }

    /// The opened submission's recovery plan as a popup's title and lines: the rule, why, and
    /// the writes the runtime's reconciler would make, in order. `None` unless one is open.
    pub fn recovery_plan(&self, read_only: bool) -> Option<(String, Vec<String>)> {
        let p = &self.submission()?.plan;
        let title = match p.rule {
            Some(r) => format!(
                "Recovery plan: rule {r} → {}",
                p.result.map_or("?", RuleResult::as_str)
            ),
            None => format!("Recovery plan: {}", p.disposition.label()),
        };
        let mut lines = vec![p.reason.clone(), String::new()];
        if p.writes.is_empty() {
            lines.push("No writes: the runtime would leave this row as it is.".into());
        } else {
            lines.push("The runtime's reconciler would write, in order:".into());
            lines.extend(
                p.writes
                    .iter()
                    .enumerate()
                    .map(|(i, w)| format!("  {}. {}", i + 1, w.describe())),
            );
        }
        lines.push(String::new());
        lines.push(if read_only {
            "READ-ONLY: nothing will be written.".into()
        } else {
            "S applies these writes one at a time, each previewed and confirmed.".into()
        });
        Some((title, lines))
    }

    pub fn session(&self) -> Option<&Arc<OpenedSession>> {
        match &self.data {
            Some(Opened::Session(s)) => Some(s),
            _ => None,
        }
    }

    pub fn history(&self) -> Option<&History> {
        match &self.data {
            Some(Opened::Submission(s)) => s.report.history.as_ref(),
            Some(Opened::Session(s)) => s.history.as_ref(),
            None => None,
        }
    }

    pub fn selected_node(&self) -> Option<usize> {
        self.visible.get(self.sel).copied()
    }

    pub fn rebuild(&mut self) {
        // Previews a failed read did not bring are asked again of this read.
        self.previews.forget_unanswered();
        let keep = self.selected_node().map(|n| self.tree.key(n));
        let tree = match &self.data {
            Some(Opened::Submission(s)) => {
                let r = &s.report;
                let c = r.classification();
                let notes = submission_notes(s);
                Tree::build(&TreeInput {
                    history: r.history.as_ref(),
                    input_entry_id: r.inspection.input_entry_id.as_deref(),
                    partial: c.trailing_partial_batch.as_ref(),
                    matched: &c.explanation.entry_ids,
                    checkpoint: r
                        .bundle
                        .journal
                        .as_ref()
                        .and_then(|j| j.checkpoint_leaf_id.as_deref()),
                    inputs: &[],
                    notes,
                })
            }
            Some(Opened::Session(s)) => {
                let inputs: Vec<String> = s
                    .submissions
                    .iter()
                    .filter_map(|(_, e)| e.clone())
                    .collect();
                let mut notes: Vec<String> = Vec::new();
                if let Some(rec) = &s.record {
                    notes.extend(
                        rec.data_problems
                            .iter()
                            .chain(&rec.not_utf8)
                            .map(|p| format!("damaged: {p}")),
                    );
                } else {
                    notes.push("no flue_sessions row for this key".into());
                }
                if let Some(h) = &s.history {
                    notes.extend(h.damage.iter().map(|d| format!("damaged: {d}")));
                }
                Tree::build(&TreeInput {
                    history: s.history.as_ref(),
                    inputs: &inputs,
                    notes,
                    ..TreeInput::default()
                })
            }
            None => Tree::default(),
        };
        self.tree = tree;
        self.visible = self.tree.visible(&self.exp);
        if let Some(k) = keep {
            if let Some(n) = self.tree.find_key(&k) {
                self.tree.reveal(n, &mut self.exp);
                self.visible = self.tree.visible(&self.exp);
                if let Some(pos) = self.visible.iter().position(|&v| v == n) {
                    self.sel = pos;
                }
            }
        }
        self.sel = self.sel.min(self.visible.len().saturating_sub(1));
        if !self.search.query.is_empty() {
            // What the worker searched may be the read before: then it is asked again.
            if self.search.text_of != self.entries_address() {
                self.ask_text_search();
            }
            self.recompute_hits();
        }
        self.touch();
    }

    pub fn relayout(&mut self) {
        let keep = self.selected_node();
        self.visible = self.tree.visible(&self.exp);
        if let Some(n) = keep {
            if let Some(pos) = self.visible.iter().position(|&v| v == n) {
                self.sel = pos;
            } else {
                // The selected row was folded away: select its nearest visible ancestor.
                let mut cur = self.tree.nodes[n].parent();
                while let Some(p) = cur {
                    if let Some(pos) = self.visible.iter().position(|&v| v == p) {
                        self.sel = pos;
                        break;
                    }
                    cur = self.tree.nodes[p].parent();
                }
            }
        }
        self.sel = self.sel.min(self.visible.len().saturating_sub(1));
        self.touch();
    }

    /// Select `node`, opening its ancestors.
    pub fn select_node(&mut self, node: usize) {
        self.tree.reveal(node, &mut self.exp);
        self.visible = self.tree.visible(&self.exp);
        if let Some(pos) = self.visible.iter().position(|&v| v == node) {
            self.sel = pos;
        }
        self.detail_scroll = 0;
        self.touch();
    }

    /// The entry id of the assistant owning the opened submission's trailing partial batch.
    fn partial_batch_owner(&self) -> Option<String> {
        match &self.data {
            Some(Opened::Submission(s)) => s
                .report
                .inspection
                .classification
                .trailing_partial_batch
                .as_ref()
                .map(|b| b.entry_id.clone()),
            _ => None,
        }
    }

    pub fn select_entry_id(&mut self, id: &str) -> bool {
        match self.tree.node_of_entry_id(id) {
            Some(n) => {
                self.select_node(n);
                true
            }
            None => false,
        }
    }
}

fn submission_notes(s: &OpenedSubmission) -> Vec<String> {
    let r = &s.report;
    let mut notes = Vec::new();
    match &r.bundle.session {
        None => notes.push(format!("no session row for {}", r.row().session_key)),
        Some(sess) => notes.extend(
            sess.data_problems
                .iter()
                .chain(&sess.not_utf8)
                .map(|p| format!("damaged: {p}")),
        ),
    }
    if let Some(h) = &r.history {
        notes.extend(h.damage.iter().map(|d| format!("damaged: {d}")));
    }
    if r.inspection.input_entry_id.is_none() {
        match &r.inspection.input_off_path_id {
            Some(id) => notes.push(format!(
                "the input entry {id} is only on an abandoned branch (counts as absent)"
            )),
            None if r.bundle.session.is_some() => {
                notes.push("the input entry is not in the session".into())
            }
            None => {}
        }
    }
    notes
}

/// What a screen says in the status line after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Info(String),
    Error(String),
}

impl From<Said> for Ask {
    fn from(said: Said) -> Ask {
        match said {
            Said::Info(m) => Ask::Info(m),
            Said::Error(m) => Ask::Error(m),
        }
    }
}

/// `p` with nothing opened (or a session opened).
pub const NO_PLAN: &str = "open a submission to see its recovery plan";

/// What the opened view handles an action with besides its own state.
pub struct InspectCx<'a> {
    /// Rows in a page of the focused pane.
    pub page: usize,
    /// The tree or the detail pane.
    pub focus: Pane,
    /// The detail pane's wrapped lines at the last draw.
    pub detail_lines: usize,
    /// The last page's start the last draw showed, taken by the first scroll after it.
    pub detail_shown: &'a mut Option<usize>,
    pub read_only: bool,
}

fn info(text: impl Into<String>) -> Option<Said> {
    Some(Said::Info(text.into()))
}

impl Inspect {
    /// The tree's actions (fold, jumps, search steps, raw bytes): what it says, and whether the
    /// tree takes the keyboard; `None` for an action that is not the opened view's.
    pub fn on_action(&mut self, a: Action) -> Option<(Option<Said>, bool)> {
        let quiet = (None, false);
        Some(match a {
            Action::Collapse => {
                self.collapse();
                quiet
            }
            Action::ExpandAll | Action::CollapseAll => {
                self.expand_all(a == Action::ExpandAll);
                quiet
            }
            Action::ShowVerdict => {
                self.show_verdict();
                quiet
            }
            Action::ToggleRaw => {
                self.toggle_raw();
                quiet
            }
            Action::JumpCheckpoint => self.jump_checkpoint(),
            Action::JumpInput => (self.jump_input(), false),
            Action::JumpMatched => self.jump_matched(),
            Action::SearchNext => (self.search_step(true, false), false),
            Action::SearchPrev => (self.search_step(false, false), false),
            _ => return None,
        })
    }

    /// Every action of the opened view (the router sends it all but the global ones): its
    /// tree's own actions, the cursor of the focused pane, ⏎ and l (open the input's submission
    /// or fold), `/`, the recovery plan; what the router carries out after it.
    pub fn handle(&mut self, a: Action, cx: InspectCx<'_>) -> Vec<Ask> {
        if let Some((said, focus_tree)) = self.on_action(a) {
            let mut asks: Vec<Ask> = said.map(Ask::from).into_iter().collect();
            if focus_tree {
                asks.insert(0, Ask::FocusTree);
            }
            return asks;
        }
        if let Some(delta) = nav_delta(a, cx.page) {
            if cx.focus == Pane::Detail {
                // The first key after a draw starts from what it showed (see `scroll_detail`).
                let shown = cx.detail_shown.take();
                self.scroll_detail(delta, cx.detail_lines, shown);
            } else {
                self.move_cursor(delta);
            }
            return Vec::new();
        }
        match a {
            Action::Enter if cx.focus == Pane::Detail => Vec::new(),
            Action::Enter | Action::Expand => match self.input_submission_at_cursor() {
                Some(sub) => vec![Ask::Open(Target::Submission(sub))],
                None => {
                    self.toggle_fold();
                    Vec::new()
                }
            },
            Action::Search => vec![Ask::FocusTree, Ask::Input(InputMode::Search)],
            Action::PlanWrites => match self.recovery_plan(cx.read_only) {
                Some((title, lines)) => vec![Ask::Show(Popup::info(
                    title,
                    lines.into_iter().map(PopupLine::from).collect(),
                ))],
                None => vec![Ask::Info(NO_PLAN.into())],
            },
            _ => Vec::new(),
        }
    }

    /// ⏎ / l on a tree row: fold or unfold it.
    pub fn toggle_fold(&mut self) {
        if let Some(n) = self.selected_node() {
            if self.tree.nodes[n].has_children() {
                let open = self.tree.is_open(n, &self.exp);
                self.exp.overrides.insert(self.tree.key(n), !open);
                self.relayout();
            }
        }
    }

    /// h / ←: fold the row, or go to its parent.
    pub fn collapse(&mut self) {
        if let Some(n) = self.selected_node() {
            if self.tree.is_open(n, &self.exp) {
                self.exp.overrides.insert(self.tree.key(n), false);
                self.relayout();
            } else if let Some(p) = self.tree.nodes[n].parent() {
                self.select_node(p);
            }
        }
    }

    /// Z / z: everything open or everything folded.
    pub fn expand_all(&mut self, open: bool) {
        self.exp.overrides.clear();
        self.exp.mode = if open {
            ExpandMode::AllOpen
        } else {
            ExpandMode::AllClosed
        };
        self.relayout();
    }

    /// v: the verdict (the tree's first row).
    pub fn show_verdict(&mut self) {
        self.select_node(self.tree.roots.first().copied().unwrap_or(0));
    }

    /// b: the stored bytes instead of the rendering.
    pub fn toggle_raw(&mut self) {
        self.raw = !self.raw;
        self.detail_scroll = 0;
        self.touch();
    }

    /// Move the tree's cursor.
    pub fn move_cursor(&mut self, delta: isize) {
        self.sel = super::step(self.sel, self.visible.len(), delta);
        self.detail_scroll = 0;
        self.touch();
    }

    /// Scroll the detail pane, bounded by its wrapped lines. The first key after a draw starts
    /// from what the draw showed (`shown_max`: the last page's start at most); keys between two
    /// draws add up.
    pub fn scroll_detail(&mut self, delta: isize, lines: usize, shown_max: Option<usize>) {
        let cur = self.detail_scroll.min(shown_max.unwrap_or(usize::MAX));
        let max = lines.saturating_sub(1);
        self.detail_scroll = (cur as isize).saturating_add(delta).clamp(0, max as isize) as usize;
    }

    /// A click on tree row `row` of the viewport; `true` when it landed on a row.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.visible.len() {
            return false;
        }
        self.sel = i;
        self.detail_scroll = 0;
        self.touch();
        true
    }

    /// The submission whose input is the selected session-tree row, if any.
    pub fn input_submission_at_cursor(&self) -> Option<String> {
        let sess = self.session()?;
        let entry = self.tree.entry_of(self.selected_node()?)?;
        let id = &self.history()?.entries[entry].id;
        sess.submissions
            .iter()
            .find(|(_, e)| e.as_deref() == Some(id.as_str()))
            .map(|(it, _)| it.row.submission_id.clone())
    }

    /// The id `y` copies here: the selected entry's (or call's, or the opened target's).
    pub fn selected_id(&self) -> Option<String> {
        let node = self.selected_node()?;
        match &self.tree.nodes[node].kind {
            NodeKind::Header => Some(self.target.id().to_string()),
            NodeKind::Call { result, .. } => result
                .and_then(|r| self.history().map(|h| h.entries[r as usize].id.to_string()))
                .or_else(|| self.tree.call(node).map(|c| c.id_text())),
            NodeKind::Entry { entry } => self
                .history()
                .map(|h| h.entries[*entry as usize].id.to_string()),
            _ => None,
        }
    }

    /// c: the journal's checkpoint leaf. `true` when the tree should take the keyboard.
    pub fn jump_checkpoint(&mut self) -> (Option<Said>, bool) {
        let Some(s) = self.submission() else {
            return (
                info("open a submission to jump to its checkpoint leaf"),
                false,
            );
        };
        let leaf = s
            .report
            .bundle
            .journal
            .as_ref()
            .and_then(|j| j.checkpoint_leaf_id.clone());
        match leaf {
            None => (
                info("no checkpoint leaf: the submission has no journal or the journal has none"),
                false,
            ),
            Some(id) if self.select_entry_id(&id) => (info(format!("checkpoint leaf {id}")), true),
            Some(id) => (
                Some(Said::Error(format!(
                    "the checkpoint leaf {id} names no entry of the session"
                ))),
                false,
            ),
        }
    }

    /// i: the submission's input entry (also when only on an abandoned branch).
    pub fn jump_input(&mut self) -> Option<Said> {
        let s = self.submission()?;
        let id = s
            .report
            .inspection
            .input_entry_id
            .clone()
            .or_else(|| s.report.inspection.input_off_path_id.clone());
        match id {
            Some(id) if self.select_entry_id(&id) => info(format!("input entry {id}")),
            _ => info("the input entry is not in the session"),
        }
    }

    /// m: the next entry that made the rule match. `true` when the tree should take the keyboard.
    pub fn jump_matched(&mut self) -> (Option<Said>, bool) {
        let Some(s) = self.submission() else {
            return (None, false);
        };
        let ids = s.report.classification().explanation.entry_ids.clone();
        if ids.is_empty() {
            return (info("the matching rule names no entry"), false);
        }
        let k = self.matched_cursor % ids.len();
        self.matched_cursor = k + 1;
        let id = ids[k].clone();
        if self.select_entry_id(&id) {
            let n = ids.len();
            return (info(format!("matched entry {} of {n}: {id}", k + 1)), true);
        }
        (None, false)
    }

    /// The tree search's text changed: recompute the hits.
    pub fn set_search(&mut self, q: String) {
        self.search.query = q;
        self.search.current = None;
        self.ask_text_search();
        self.recompute_hits();
    }

    /// n / N (or the search text growing): the next or previous hit, or the first at or after
    /// the cursor.
    pub fn search_step(&mut self, forward: bool, from_cursor: bool) -> Option<Said> {
        if self.search.hits.is_empty() {
            return info(if self.search.query.is_empty() {
                "no search: press / to search the entries".to_string()
            } else if self.text_search_pending() {
                // The stored text is still being read: no "no match" before it has been.
                format!("searching the stored text for {:?}…", self.search.query)
            } else {
                format!("no entry matches {:?}", self.search.query)
            });
        }
        let n = self.search.hits.len();
        let next = match (self.search.current, from_cursor) {
            (Some(c), false) => {
                if forward {
                    (c + 1) % n
                } else {
                    (c + n - 1) % n
                }
            }
            _ => {
                // First hit at or after the selected row in tree order.
                let order: HashMap<usize, usize> = self
                    .tree
                    .preorder(|_| true)
                    .enumerate()
                    .map(|(i, x)| (x, i))
                    .collect();
                let cur = self
                    .selected_node()
                    .and_then(|s| order.get(&s).copied())
                    .unwrap_or(0);
                self.search
                    .hits
                    .iter()
                    .position(|h| order.get(h).copied().unwrap_or(0) >= cur)
                    .unwrap_or(0)
            }
        };
        self.search.current = Some(next);
        let node = self.search.hits[next];
        self.select_node(node);
        let q = self.search.query.clone();
        info(format!("match {} of {n} for {q:?}", next + 1))
    }

    /// [ / ] in an opened session: the previous or next submission input on its active path.
    /// `true` when the cursor moved.
    pub fn step_input(&mut self, delta: isize) -> (Option<Said>, bool) {
        let inputs: Vec<usize> = self
            .tree
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.has(tree::Flags::INPUT) && matches!(n.kind, NodeKind::Entry { .. }))
            .map(|(i, _)| i)
            .collect();
        if inputs.is_empty() {
            return (
                info("no submission input on this session's active path"),
                false,
            );
        }
        let cur = self.selected_node().unwrap_or(0);
        let pick = if delta > 0 {
            inputs.iter().find(|&&n| n > cur).or(inputs.first())
        } else {
            inputs.iter().rev().find(|&&n| n < cur).or(inputs.last())
        };
        match pick {
            Some(&n) => {
                self.select_node(n);
                (None, true)
            }
            None => (None, false),
        }
    }
}

/// What changed in the opened submission between two loads, in the operator's words.
pub fn describe_change(old: &OpenedSubmission, new: &OpenedSubmission) -> Option<String> {
    let (a, b) = (old.report.row(), new.report.row());
    let mut parts = Vec::new();
    if a.attempt_id != b.attempt_id || a.attempt_count != b.attempt_count {
        parts.push(format!("new attempt ({}/{})", b.attempt_count, b.max_retry));
    }
    let count = |s: &OpenedSubmission| {
        s.report
            .bundle
            .session
            .as_ref()
            .map_or(0, |s| s.entries.len())
    };
    let (ca, cb) = (count(old), count(new));
    if cb > ca {
        parts.push(format!(
            "{} new entr{}",
            cb - ca,
            if cb - ca == 1 { "y" } else { "ies" }
        ));
    } else if cb < ca {
        parts.push(format!(
            "{} removed",
            turnscope_core::text::plural((ca - cb) as u64, "entry", "entries")
        ));
    }
    if a.status != b.status {
        parts.push(format!("now {} ({})", b.status, new.verdict()));
    } else if old.verdict() != new.verdict() {
        parts.push(format!("verdict now {}", new.verdict()));
    }
    let j = |s: &OpenedSubmission| {
        s.report
            .bundle
            .journal
            .as_ref()
            .map(|j| (j.phase.clone(), j.revision))
    };
    if parts.is_empty() && j(old) != j(new) {
        parts.push(format!(
            "journal now {}",
            j(new).map_or("gone".to_string(), |(p, r)| format!("{p} (revision {r})"))
        ));
    }
    (!parts.is_empty()).then(|| {
        let short = turnscope_core::journal::submission_rows::short_id(&b.submission_id);
        format!(
            "{short} changed under you: {} · esc dismisses",
            parts.join(", ")
        )
    })
}
