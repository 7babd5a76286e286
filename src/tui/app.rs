//! The application state and every state transition. No drawing and no I/O here: the app asks
//! for database work and clipboard writes by pushing [`Effect`]s, which the run loop (or a test)
//! carries out.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::act::{self, Outcome, PlanItem, Planned};
use super::data::{ListItem, Opened, OpenedSession, OpenedSubmission, Snapshot, Target};
use super::keymap::{self, Action, Ctx, StatusFilter};
use super::theme::Theme;
use super::tree::{self, ExpandMode, Expansion, NodeKind, Tree, TreeInput};
use super::worker::Response;
use crate::actions::ActionKind;
use crate::core::entry::Entry;
use crate::core::history::History;
use crate::store::{AuditRecord, SessionSummary};

/// Something the app wants done outside itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Request(RequestKind),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
}

/// A database request, without the clock (the run loop adds `now`).
#[derive(Debug, Clone, PartialEq)]
pub enum RequestKind {
    Refresh {
        open: Option<Target>,
        /// The list filter: only its rows are read.
        filter: StatusFilter,
        /// The sessions view is open: read the sessions too.
        sessions: bool,
        /// Rows on screen: their verdicts are computed first.
        visible: Vec<String>,
        /// The selected row, read even when it left the filter (to say what happened to it).
        selected: Option<String>,
    },
    /// Compute the verdicts of these rows next.
    Prioritize(Vec<String>),
    /// Every submission of this session, for stepping between them.
    Siblings(String),
    Open(Target),
    Export(Target),
    /// Plan an action on these submissions (write mode).
    Plan {
        kind: ActionKind,
        ids: Vec<String>,
        reason: Option<String>,
    },
    /// Apply the previewed plans (write mode), recording `operator` in the audit trail.
    Apply {
        kind: ActionKind,
        items: Vec<PlanItem>,
        operator: String,
    },
    /// Read the audit trail.
    Audit,
    /// Fetch one entry's stored text (the tree holds compact entries).
    EntryBody {
        session: String,
        entry_id: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    List,
    Sessions,
    Tree,
    Detail,
    Audit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Submissions,
    Sessions,
    /// The audit trail (`a`).
    Audit,
}

/// List columns, in display order; also the sort keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Seq,
    Id,
    Kind,
    Instance,
    Status,
    Attempts,
    Lease,
    Phase,
    Verdict,
    Rule,
    Error,
}

impl Column {
    pub const ALL: [Column; 11] = [
        Column::Seq,
        Column::Id,
        Column::Kind,
        Column::Instance,
        Column::Status,
        Column::Attempts,
        Column::Lease,
        Column::Phase,
        Column::Verdict,
        Column::Rule,
        Column::Error,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Column::Seq => "SEQ",
            Column::Id => "ID",
            Column::Kind => "KIND",
            Column::Instance => "INSTANCE",
            Column::Status => "STATUS",
            Column::Attempts => "TRIES",
            Column::Lease => "LEASE",
            Column::Phase => "JOURNAL",
            Column::Verdict => "VERDICT",
            Column::Rule => "RULE",
            Column::Error => "LAST ERROR",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub level: Level,
}

/// What a popup's Yes does.
#[derive(Debug, Clone, PartialEq)]
pub enum PopupAction {
    /// Nothing: an informational popup (⏎ or y closes it).
    Close,
    /// Apply these previewed plans, each in its own fenced transaction. Needs an explicit Yes:
    /// the No button is selected when the popup opens.
    Apply {
        kind: ActionKind,
        items: Vec<PlanItem>,
    },
    /// Step mode, after a step: plan the next write of the runtime's plan for this submission.
    NextStep { submission_id: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    Help {
        scroll: usize,
    },
    Confirm {
        title: String,
        lines: Vec<String>,
        /// What the Yes button says ("apply", "ok", "next step").
        confirm_label: String,
        action: PopupAction,
        scroll: usize,
        /// The selected button: Yes when true. Starts false (No) for writes.
        yes: bool,
    },
    /// The command palette (`:`): every action with its key, filtered as you type.
    Palette {
        query: String,
        selected: usize,
    },
    /// A one-line text input: the reason of a `fail` (required).
    Reason {
        kind: ActionKind,
        ids: Vec<String>,
        text: String,
        error: Option<String>,
    },
}

impl Popup {
    /// An informational popup with one button.
    pub fn info(title: impl Into<String>, lines: Vec<String>) -> Popup {
        Popup::Confirm {
            title: title.into(),
            lines,
            confirm_label: "ok".into(),
            action: PopupAction::Close,
            scroll: 0,
            yes: true,
        }
    }

    /// Whether the popup asks before writing (two buttons, No selected first).
    pub fn is_write_confirm(&self) -> bool {
        matches!(
            self,
            Popup::Confirm {
                action: PopupAction::Apply { .. },
                ..
            }
        )
    }
}

/// The audit trail view.
#[derive(Debug, Clone, Default)]
pub struct AuditState {
    pub rows: Vec<AuditRecord>,
    pub loaded: bool,
    pub error: Option<String>,
    pub selected: usize,
    pub offset: usize,
}

/// Text being typed into the list filter or the tree search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    Filter,
    Search,
}

#[derive(Debug, Clone, Default)]
pub struct ListState {
    pub filter: StatusFilter,
    pub sort: Option<Column>,
    pub desc: bool,
    pub query: String,
    /// Indexes into `App::items`, filtered and sorted.
    pub view: Vec<usize>,
    pub selected: usize,
    pub offset: usize,
    pub selected_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SessionsState {
    pub rows: Vec<SessionSummary>,
    pub query: String,
    pub view: Vec<usize>,
    pub selected: usize,
    pub offset: usize,
    pub selected_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub query: String,
    pub hits: Vec<usize>,
    pub current: Option<usize>,
}

/// An opened submission or session: its tree and detail state.
#[derive(Debug, Clone)]
pub struct Inspect {
    pub target: Target,
    pub data: Option<Opened>,
    pub error: Option<String>,
    pub tree: Tree,
    pub exp: Expansion,
    /// Visible node ids (recomputed when the tree or the expansion changes).
    pub visible: Vec<usize>,
    pub sel: usize,
    pub offset: usize,
    pub detail_scroll: usize,
    pub raw: bool,
    pub search: Search,
    pub matched_cursor: usize,
    /// Bumped whenever data or selection changes (detail cache key).
    pub generation: u64,
    /// Full entries fetched for the detail pane, by entry id (the tree's entries are compact).
    pub bodies: HashMap<String, Entry>,
    /// Entry ids whose body was asked for (so each is asked once).
    pub bodies_requested: HashSet<String>,
    /// When this view was asked for (the loading line shows how long it has been).
    pub requested_at: std::time::Instant,
}

impl Inspect {
    fn new(target: Target) -> Inspect {
        Inspect {
            target,
            data: None,
            error: None,
            tree: Tree::default(),
            exp: Expansion::default(),
            visible: Vec::new(),
            sel: 0,
            offset: 0,
            detail_scroll: 0,
            raw: false,
            search: Search::default(),
            matched_cursor: 0,
            generation: 0,
            bodies: HashMap::new(),
            bodies_requested: HashSet::new(),
            requested_at: std::time::Instant::now(),
        }
    }

    /// `e` with its full body when it has been fetched (else `e`, compact or full as loaded).
    pub fn body<'a>(&'a self, e: &'a Entry) -> &'a Entry {
        match self.bodies.get(&e.id) {
            Some(full) if e.compact && full.position == e.position => full,
            _ => e,
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

    /// Compact entries the detail pane shows for the selected node, whose body is not yet asked.
    fn bodies_to_fetch(&self) -> Vec<String> {
        let (Some(h), Some(node)) = (self.history(), self.selected_node()) else {
            return Vec::new();
        };
        let shown: Vec<usize> = match &self.tree.nodes[node].kind {
            NodeKind::Entry { entry } => vec![*entry],
            NodeKind::Call { owner, result, .. } => {
                std::iter::once(*owner).chain(*result).collect()
            }
            _ => Vec::new(),
        };
        shown
            .into_iter()
            .filter_map(|i| h.entries.get(i))
            .filter(|e| e.compact && !self.bodies_requested.contains(&e.id))
            .map(|e| e.id.clone())
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

    fn rebuild(&mut self) {
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
                    notes.extend(rec.data_problems.iter().map(|p| format!("damaged: {p}")));
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
            self.search.hits = self.tree.search(self.history(), &self.search.query);
        }
        self.touch();
    }

    fn relayout(&mut self) {
        let keep = self.selected_node();
        self.visible = self.tree.visible(&self.exp);
        if let Some(n) = keep {
            if let Some(pos) = self.visible.iter().position(|&v| v == n) {
                self.sel = pos;
            } else {
                // The selected row was folded away: select its nearest visible ancestor.
                let mut cur = self.tree.nodes[n].parent;
                while let Some(p) = cur {
                    if let Some(pos) = self.visible.iter().position(|&v| v == p) {
                        self.sel = pos;
                        break;
                    }
                    cur = self.tree.nodes[p].parent;
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

    fn select_entry_id(&mut self, id: &str) -> bool {
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
        Some(sess) => notes.extend(sess.data_problems.iter().map(|p| format!("damaged: {p}"))),
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

/// Screen rectangles from the last draw, for the mouse and for paging.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hit {
    /// The pane's whole area.
    pub area: Rect,
    /// Where its first row is drawn and how many rows fit.
    pub rows: Rect,
}

#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub list: Option<Hit>,
    pub sessions: Option<Hit>,
    pub audit: Option<Hit>,
    pub tree: Option<Hit>,
    pub detail: Option<Hit>,
    /// Total wrapped lines in the detail pane (for scroll bounds).
    pub detail_lines: usize,
}

/// One row of the command palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaletteEntry {
    /// The action's name (as in the configuration file's `[keys]`).
    pub name: String,
    /// Its key as shown (the configuration file's override, if any).
    pub key: String,
    pub help: &'static str,
    pub action: Action,
    /// Whether it applies in the current pane.
    pub available: bool,
}

/// Options that shape the app (a subset of `TuiOptions`).
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Shown in the header instead of the full path when set (tests, demo).
    pub display_name: String,
    /// Without `--write`: the write actions are absent (no keys, no hints).
    pub read_only: bool,
    /// `user@host`, recorded in the audit trail with every applied action.
    pub operator: String,
    pub refresh: Duration,
    pub export_dir: PathBuf,
    pub now_override: Option<i64>,
    pub theme: Theme,
    /// Key overrides from the configuration file.
    pub keys: keymap::Overrides,
}

pub struct App {
    pub cfg: AppConfig,
    pub now_ms: i64,
    pub ui_now: Instant,
    pub root: Root,
    pub focus: Pane,
    pub list: ListState,
    pub sessions: SessionsState,
    pub stack: Vec<Inspect>,
    pub items: Vec<ListItem>,
    pub counts: Vec<(String, i64)>,
    pub loaded: bool,
    pub status: Option<Status>,
    /// The last database error; cleared by the next good refresh.
    pub db_error: Option<String>,
    pub banner: Option<String>,
    pub popup: Option<Popup>,
    pub input: Option<InputMode>,
    pub effects: Vec<Effect>,
    pub last_refresh: Option<Instant>,
    pub refresh_pending: bool,
    pub refresh_took: Option<Duration>,
    pub flashes: HashMap<String, Instant>,
    pub quit: bool,
    pub layout: Layout,
    /// The detail pane's wrapped lines (built once per selection and width).
    pub detail_cache: Option<super::views::DetailCache>,
    /// Submissions marked for a bulk action (write mode).
    pub marks: HashSet<String>,
    /// Submissions this app just wrote to: their next change is ours, not "under you".
    pub own_writes: HashSet<String>,
    pub audit: AuditState,
    /// Where `a` (or esc) returns to from the audit trail.
    pub audit_return: Root,
    /// A plan or an apply is with the worker.
    pub busy: Option<String>,
    last_click: Option<(Instant, u16, u16)>,
    /// Server-side list state: counts, the page, background verdicts (see `list_state.rs`).
    pub scale: super::list_state::ScaleState,
}

pub const FLASH: Duration = Duration::from_millis(1200);

impl App {
    pub fn new(cfg: AppConfig, now_ms: i64) -> App {
        App {
            cfg,
            now_ms,
            ui_now: Instant::now(),
            root: Root::Submissions,
            focus: Pane::List,
            list: ListState::default(),
            sessions: SessionsState::default(),
            stack: Vec::new(),
            items: Vec::new(),
            counts: Vec::new(),
            loaded: false,
            status: None,
            db_error: None,
            banner: None,
            popup: None,
            input: None,
            effects: Vec::new(),
            last_refresh: None,
            refresh_pending: false,
            refresh_took: None,
            flashes: HashMap::new(),
            quit: false,
            layout: Layout::default(),
            detail_cache: None,
            marks: HashSet::new(),
            own_writes: HashSet::new(),
            audit: AuditState::default(),
            audit_return: Root::Submissions,
            busy: None,
            last_click: None,
            scale: Default::default(),
        }
    }

    // ----- queries used by the views -------------------------------------------------------

    pub fn inspect(&self) -> Option<&Inspect> {
        self.stack.last()
    }

    fn inspect_mut(&mut self) -> Option<&mut Inspect> {
        self.stack.last_mut()
    }

    pub fn selected_item(&self) -> Option<&ListItem> {
        self.list
            .view
            .get(self.list.selected)
            .map(|&i| &self.items[i])
    }

    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.sessions
            .view
            .get(self.sessions.selected)
            .map(|&i| &self.sessions.rows[i])
    }

    /// Rows of filter `f` in the database (the counts come from SQL, not from the loaded rows).
    pub fn count(&self, f: StatusFilter) -> usize {
        self.count_known(f).unwrap_or(0)
    }

    pub fn is_flashing(&self, id: &str) -> bool {
        self.flashes
            .get(id)
            .is_some_and(|&until| self.ui_now < until)
    }

    /// The contexts keys are looked up in, innermost first.
    pub fn contexts(&self) -> Vec<Ctx> {
        if self.popup.is_some() {
            return vec![Ctx::Popup];
        }
        match self.focus {
            Pane::List => vec![Ctx::List, Ctx::Nav, Ctx::Global],
            Pane::Sessions => vec![Ctx::Sessions, Ctx::Nav, Ctx::Global],
            Pane::Tree => vec![Ctx::Tree, Ctx::Inspect, Ctx::Nav, Ctx::Global],
            Pane::Detail => vec![Ctx::Detail, Ctx::Inspect, Ctx::Nav, Ctx::Global],
            Pane::Audit => vec![Ctx::Audit, Ctx::Nav, Ctx::Global],
        }
    }

    /// `--write` mode: the write actions exist.
    pub fn write_mode(&self) -> bool {
        !self.cfg.read_only
    }

    pub fn selected_audit(&self) -> Option<&AuditRecord> {
        self.audit.rows.get(self.audit.selected)
    }

    fn matches_filter(&self, it: &ListItem, f: StatusFilter) -> bool {
        use crate::core::status::SubmissionStatus as S;
        let s = it.row.typed_status();
        match f {
            StatusFilter::Expired => it.row.lease_expired(self.now_ms),
            StatusFilter::All => true,
            StatusFilter::Queued => s == S::Queued,
            StatusFilter::Running => s == S::Running,
            StatusFilter::Terminalizing => s == S::Terminalizing,
            StatusFilter::Settled => s == S::Settled,
            StatusFilter::Failed => it.failed(),
        }
    }

    fn matches_query(it: &ListItem, q: &str) -> bool {
        if q.is_empty() {
            return true;
        }
        let q = q.to_lowercase();
        [
            it.row.submission_id.as_str(),
            it.instance.as_str(),
            it.verdict.as_str(),
            it.row.error.as_deref().unwrap_or(""),
            it.row.session_key.as_str(),
            it.reason.as_str(),
        ]
        .iter()
        .any(|f| f.to_lowercase().contains(&q))
    }

    // ----- list and sessions views ----------------------------------------------------------

    pub fn rebuild_list(&mut self) {
        let f = self.list.filter;
        let q = self.list.query.clone();
        let mut view: Vec<usize> = (0..self.items.len())
            .filter(|&i| {
                self.matches_filter(&self.items[i], f) && Self::matches_query(&self.items[i], &q)
            })
            .collect();
        if let Some(col) = self.list.sort {
            let items = &self.items;
            view.sort_by(|&a, &b| {
                let (x, y) = (&items[a], &items[b]);
                let o = match col {
                    Column::Seq => x.row.sequence.cmp(&y.row.sequence),
                    Column::Id => x.row.submission_id.cmp(&y.row.submission_id),
                    Column::Kind => x.row.kind.cmp(&y.row.kind),
                    Column::Instance => x.instance.cmp(&y.instance),
                    Column::Status => x.row.status.cmp(&y.row.status),
                    Column::Attempts => x.row.attempt_count.cmp(&y.row.attempt_count),
                    Column::Lease => x.row.lease_expires_at.cmp(&y.row.lease_expires_at),
                    Column::Phase => x.journal.cmp(&y.journal),
                    Column::Verdict => x.verdict.cmp(&y.verdict),
                    Column::Rule => x.rule.cmp(&y.rule),
                    Column::Error => x.row.error.cmp(&y.row.error),
                };
                o.then(x.row.sequence.cmp(&y.row.sequence))
            });
        }
        if self.list.desc {
            view.reverse();
        }
        self.list.view = view;
        let keep = self.list.selected_id.clone();
        self.list.selected = keep
            .and_then(|id| {
                self.list
                    .view
                    .iter()
                    .position(|&i| self.items[i].row.submission_id == id)
            })
            .unwrap_or_else(|| {
                self.list
                    .selected
                    .min(self.list.view.len().saturating_sub(1))
            });
        self.sync_list_selection();
    }

    fn sync_list_selection(&mut self) {
        self.list.selected_id = self.selected_item().map(|i| i.row.submission_id.clone());
    }

    pub fn rebuild_sessions(&mut self) {
        let q = self.sessions.query.to_lowercase();
        let mut view: Vec<usize> = (0..self.sessions.rows.len())
            .filter(|&i| {
                let s = &self.sessions.rows[i];
                q.is_empty()
                    || s.id.to_lowercase().contains(&q)
                    || s.instance_id
                        .as_deref()
                        .unwrap_or("")
                        .to_lowercase()
                        .contains(&q)
            })
            .collect();
        // Most recently updated first (ISO strings sort chronologically).
        let rows = &self.sessions.rows;
        view.sort_by(|&a, &b| {
            rows[b]
                .updated_at
                .cmp(&rows[a].updated_at)
                .then(rows[a].id.cmp(&rows[b].id))
        });
        self.sessions.view = view;
        let keep = self.sessions.selected_id.clone();
        self.sessions.selected = keep
            .and_then(|id| {
                self.sessions
                    .view
                    .iter()
                    .position(|&i| self.sessions.rows[i].id == id)
            })
            .unwrap_or_else(|| {
                self.sessions
                    .selected
                    .min(self.sessions.view.len().saturating_sub(1))
            });
        self.sessions.selected_id = self.selected_session().map(|s| s.id.clone());
    }

    // ----- events -------------------------------------------------------------------------

    /// Advance the clocks; asks for a refresh when one is due.
    pub fn tick(&mut self, ui_now: Instant, wall_ms: i64) {
        self.ui_now = ui_now;
        self.now_ms = self.cfg.now_override.unwrap_or(wall_ms);
        let due = match self.last_refresh {
            None => true,
            Some(t) => ui_now.duration_since(t) >= self.cfg.refresh,
        };
        if due && !self.refresh_pending {
            self.request_refresh();
        }
        self.flashes.retain(|_, until| ui_now < *until);
    }

    pub fn request_refresh(&mut self) {
        self.refresh_pending = true;
        let open = self.inspect().map(|i| i.target.clone());
        let visible = self.visible_ids();
        self.effects.push(Effect::Request(RequestKind::Refresh {
            open,
            filter: self.list.filter,
            sessions: self.root == Root::Sessions,
            visible,
            selected: self.list.selected_id.clone(),
        }));
        if self.root == Root::Audit {
            self.effects.push(Effect::Request(RequestKind::Audit));
        }
    }

    pub fn on_key(&mut self, ev: KeyEvent) {
        self.on_key_inner(ev);
        self.request_bodies();
    }

    /// Ask the worker for the full bodies the detail pane is about to show.
    fn request_bodies(&mut self) {
        let Some(ins) = self.stack.last_mut() else {
            return;
        };
        let Some(session) = ins.session_key() else {
            return;
        };
        for entry_id in ins.bodies_to_fetch() {
            ins.bodies_requested.insert(entry_id.clone());
            self.effects.push(Effect::Request(RequestKind::EntryBody {
                session: session.clone(),
                entry_id,
            }));
        }
    }

    fn on_key_inner(&mut self, ev: KeyEvent) {
        if let Some(mode) = self.input {
            self.on_input_key(mode, ev);
            return;
        }
        // Ctrl-C quits from anywhere, popups included.
        if ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if matches!(self.popup, Some(Popup::Reason { .. })) {
            self.on_reason_key(ev);
            return;
        }
        if matches!(self.popup, Some(Popup::Palette { .. })) {
            self.on_palette_key(ev);
            return;
        }
        if let Some(a) =
            keymap::lookup_with(&self.contexts(), &ev, self.write_mode(), &self.cfg.keys)
        {
            self.apply(a);
        }
    }

    /// The command palette's rows for this query: every action of this mode (write actions only
    /// in write mode), with its key (overrides applied), filtered by name, key or description.
    pub fn palette_entries(&self, query: &str) -> Vec<PaletteEntry> {
        let q = query.trim().to_lowercase();
        let here = self.contexts_without_popup();
        let mut out: Vec<PaletteEntry> = Vec::new();
        for b in keymap::KEYMAP.iter().filter(|b| {
            b.ctx != Ctx::Popup && b.active(self.write_mode()) && b.action != Action::Palette
        }) {
            if out.iter().any(|e| e.action == b.action) {
                continue;
            }
            let name = keymap::action_name(b.action);
            let key = match self.cfg.keys.key_for(b.action) {
                Some(k) => keymap::key_label(&k),
                None => b.label.to_string(),
            };
            let hay = format!("{name} {key} {}", b.help).to_lowercase();
            if !q.is_empty() && !q.split_whitespace().all(|w| hay.contains(w)) {
                continue;
            }
            out.push(PaletteEntry {
                name,
                key,
                help: b.help,
                action: b.action,
                available: keymap::KEYMAP.iter().any(|x| {
                    x.action == b.action && here.contains(&x.ctx) && x.active(self.write_mode())
                }),
            });
        }
        // What works here first; within, the help's order (everywhere, moving, then the panes).
        let rank = |a: Action| {
            let ctx = keymap::KEYMAP
                .iter()
                .find(|b| b.action == a && b.ctx != Ctx::Popup)
                .map(|b| b.ctx);
            [
                Ctx::Global,
                Ctx::Nav,
                Ctx::List,
                Ctx::Sessions,
                Ctx::Inspect,
                Ctx::Tree,
                Ctx::Detail,
                Ctx::Audit,
            ]
            .iter()
            .position(|c| Some(*c) == ctx)
            .unwrap_or(9)
        };
        out.sort_by_key(|e| (!e.available, rank(e.action)));
        out
    }

    fn contexts_without_popup(&self) -> Vec<Ctx> {
        match self.focus {
            Pane::List => vec![Ctx::List, Ctx::Nav, Ctx::Global],
            Pane::Sessions => vec![Ctx::Sessions, Ctx::Nav, Ctx::Global],
            Pane::Tree => vec![Ctx::Tree, Ctx::Inspect, Ctx::Nav, Ctx::Global],
            Pane::Detail => vec![Ctx::Detail, Ctx::Inspect, Ctx::Nav, Ctx::Global],
            Pane::Audit => vec![Ctx::Audit, Ctx::Nav, Ctx::Global],
        }
    }

    /// Keys of the command palette: type to filter, ↑/↓ to choose, ⏎ runs, esc closes.
    fn on_palette_key(&mut self, ev: KeyEvent) {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let Some(Popup::Palette { query, selected }) = &mut self.popup else {
            return;
        };
        match ev.code {
            KeyCode::Esc => self.popup = None,
            KeyCode::Up => *selected = selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Tab => *selected += 1,
            KeyCode::Char('n') if ctrl => *selected += 1,
            KeyCode::Backspace => {
                query.pop();
                *selected = 0;
            }
            KeyCode::Char('u') if ctrl => {
                query.clear();
                *selected = 0;
            }
            KeyCode::Enter => {
                let q = query.clone();
                let sel = *selected;
                let entries = self.palette_entries(&q);
                self.popup = None;
                match entries.get(sel.min(entries.len().saturating_sub(1))) {
                    Some(e) if e.available => self.apply(e.action),
                    Some(e) => self.info(&format!(
                        "{} is not available here ({}): open a submission or switch panes first",
                        e.name, e.help
                    )),
                    None => self.info("no action matches"),
                }
                return;
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if query.chars().count() < 60 {
                    query.push(c);
                }
                *selected = 0;
            }
            _ => {}
        }
        // Keep the selection on a row.
        if let Some(Popup::Palette { query, selected }) = &self.popup {
            let n = self.palette_entries(&query.clone()).len();
            let sel = (*selected).min(n.saturating_sub(1));
            if let Some(Popup::Palette { selected, .. }) = &mut self.popup {
                *selected = sel;
            }
        }
    }

    /// Typing the reason of a `fail`: a one-line text input.
    fn on_reason_key(&mut self, ev: KeyEvent) {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let Some(Popup::Reason {
            kind,
            ids,
            text,
            error,
        }) = &mut self.popup
        else {
            return;
        };
        match ev.code {
            KeyCode::Esc => {
                self.popup = None;
                self.info("cancelled: nothing written");
            }
            KeyCode::Enter => {
                let reason = text.trim().to_string();
                if reason.is_empty() {
                    *error = Some("a reason is required to fail a submission".into());
                    return;
                }
                let (kind, ids) = (*kind, ids.clone());
                self.popup = None;
                self.request_plan(kind, ids, Some(reason));
            }
            KeyCode::Backspace => {
                text.pop();
                *error = None;
            }
            KeyCode::Char('u') if ctrl => text.clear(),
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if text.chars().count() < 500 {
                    text.push(c);
                }
                *error = None;
            }
            _ => {}
        }
    }

    fn on_input_key(&mut self, mode: InputMode, ev: KeyEvent) {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Char('c') if ctrl => self.quit = true,
            KeyCode::Esc => {
                self.input = None;
                self.set_query(mode, String::new());
            }
            KeyCode::Enter => {
                self.input = None;
                if mode == InputMode::Search {
                    self.search_step(true, true);
                }
            }
            KeyCode::Backspace => {
                let mut q = self.query(mode);
                q.pop();
                self.set_query(mode, q);
            }
            KeyCode::Char('u') if ctrl => self.set_query(mode, String::new()),
            KeyCode::Char(c) if !ctrl => {
                let mut q = self.query(mode);
                q.push(c);
                self.set_query(mode, q);
            }
            _ => {}
        }
    }

    fn query(&self, mode: InputMode) -> String {
        match mode {
            InputMode::Filter if self.focus == Pane::Sessions => self.sessions.query.clone(),
            InputMode::Filter => self.list.query.clone(),
            InputMode::Search => self
                .inspect()
                .map(|i| i.search.query.clone())
                .unwrap_or_default(),
        }
    }

    fn set_query(&mut self, mode: InputMode, q: String) {
        match mode {
            InputMode::Filter if self.focus == Pane::Sessions => {
                self.sessions.query = q;
                self.rebuild_sessions();
            }
            InputMode::Filter => {
                self.list.query = q;
                self.rebuild_list();
            }
            InputMode::Search => {
                if let Some(ins) = self.inspect_mut() {
                    ins.search.hits = ins.tree.search(ins.history(), &q);
                    ins.search.query = q;
                    ins.search.current = None;
                }
                // Incremental: jump to the first hit at or after the cursor as the text grows.
                self.search_step(true, true);
            }
        }
    }

    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.popup = Some(Popup::Help { scroll: 0 }),
            Action::Palette => {
                self.popup = Some(Popup::Palette {
                    query: String::new(),
                    selected: 0,
                })
            }
            Action::Refresh => {
                self.request_refresh();
                self.info("refreshing…");
            }
            Action::Back => self.back(),
            Action::NextPane | Action::PrevPane => self.cycle_pane(),
            Action::ToggleSessions => self.toggle_root(),
            Action::Copy => self.copy(),
            Action::Export => self.export(),
            Action::PlanWrites => self.plan_writes(),
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page() as isize)),
            Action::PageDown => self.move_by(self.page() as isize),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Enter => self.enter(),
            Action::Filter(f) => {
                self.list.filter = f;
                self.list.selected = 0;
                self.list.offset = 0;
                self.rebuild_list();
                // Only the filter's rows are loaded: read the new filter's.
                self.request_refresh();
            }
            Action::StartFilter => self.input = Some(InputMode::Filter),
            Action::SortNext => {
                let next = match self.list.sort {
                    None => Column::ALL[0],
                    Some(c) => {
                        let i = Column::ALL.iter().position(|x| *x == c).unwrap_or(0);
                        Column::ALL[(i + 1) % Column::ALL.len()]
                    }
                };
                self.list.sort = Some(next);
                self.rebuild_list();
                self.info(&format!("sorted by {}", next.title().to_lowercase()));
            }
            Action::SortReverse => {
                self.list.desc = !self.list.desc;
                self.rebuild_list();
            }
            Action::Expand => self.expand(),
            Action::Collapse => self.collapse(),
            Action::ExpandAll | Action::CollapseAll => {
                if let Some(ins) = self.inspect_mut() {
                    ins.exp.overrides.clear();
                    ins.exp.mode = if a == Action::ExpandAll {
                        ExpandMode::AllOpen
                    } else {
                        ExpandMode::AllClosed
                    };
                    ins.relayout();
                }
            }
            Action::JumpCheckpoint => self.jump_checkpoint(),
            Action::JumpInput => self.jump_input(),
            Action::JumpMatched => self.jump_matched(),
            Action::ShowVerdict => {
                if let Some(ins) = self.inspect_mut() {
                    ins.select_node(ins.tree.roots.first().copied().unwrap_or(0));
                }
            }
            Action::Search => {
                if self.inspect().is_some() {
                    self.focus = Pane::Tree;
                    self.input = Some(InputMode::Search);
                }
            }
            Action::SearchNext => self.search_step(true, false),
            Action::SearchPrev => self.search_step(false, false),
            Action::PrevSubmission => self.step_submission(-1),
            Action::NextSubmission => self.step_submission(1),
            Action::ToggleRaw => {
                if let Some(ins) = self.inspect_mut() {
                    ins.raw = !ins.raw;
                    ins.detail_scroll = 0;
                    ins.touch();
                }
            }
            Action::Confirm => self.confirm(false),
            Action::Yes => self.confirm(true),
            Action::SwitchButton => {
                if let Some(Popup::Confirm { yes, action, .. }) = &mut self.popup {
                    if *action != PopupAction::Close {
                        *yes = !*yes;
                    }
                }
            }
            Action::Cancel => {
                if let Some(p) = self.popup.take() {
                    if p.is_write_confirm() {
                        self.info("cancelled: nothing written");
                    }
                }
            }
            Action::ToggleAudit => self.toggle_audit(),
            // Write actions: their bindings exist only in write mode; this guard keeps a stray
            // call (mouse, tests) from doing anything in read-only mode.
            Action::Act(kind) if self.write_mode() => self.act(kind),
            Action::ToggleMark if self.write_mode() => self.toggle_mark(),
            Action::Act(_) | Action::ToggleMark => {}
        }
        self.prioritize_visible();
    }

    fn info(&mut self, text: &str) {
        self.status = Some(Status {
            text: text.to_string(),
            level: Level::Info,
        });
    }

    fn error(&mut self, text: &str) {
        self.status = Some(Status {
            text: text.to_string(),
            level: Level::Error,
        });
    }

    fn page(&self) -> usize {
        let hit = match self.focus {
            Pane::List => self.layout.list,
            Pane::Sessions => self.layout.sessions,
            Pane::Tree => self.layout.tree,
            Pane::Detail => self.layout.detail,
            Pane::Audit => self.layout.audit,
        };
        hit.map_or(10, |h| h.rows.height.max(2) as usize - 1)
    }

    fn back(&mut self) {
        if self.popup.take().is_some() {
            return;
        }
        if self.banner.take().is_some() {
            return;
        }
        if self.stack.pop().is_some() {
            self.focus = match (self.stack.is_empty(), self.root) {
                (false, _) => Pane::Tree,
                (true, root) => root_pane(root),
            };
            return;
        }
        match self.focus {
            Pane::Audit => self.toggle_audit(),
            Pane::List if !self.list.query.is_empty() => {
                self.list.query.clear();
                self.rebuild_list();
            }
            Pane::List if !self.marks.is_empty() => {
                let n = self.marks.len();
                self.marks.clear();
                self.info(&format!(
                    "unmarked {n} row{}",
                    if n == 1 { "" } else { "s" }
                ));
            }
            Pane::Sessions if !self.sessions.query.is_empty() => {
                self.sessions.query.clear();
                self.rebuild_sessions();
            }
            _ => {}
        }
    }

    fn cycle_pane(&mut self) {
        if self.inspect().is_some() {
            self.focus = if self.focus == Pane::Tree {
                Pane::Detail
            } else {
                Pane::Tree
            };
        }
    }

    fn toggle_root(&mut self) {
        self.stack.clear();
        self.banner = None;
        self.root = match self.root {
            Root::Submissions | Root::Audit => Root::Sessions,
            Root::Sessions => Root::Submissions,
        };
        self.focus = root_pane(self.root);
        if self.root == Root::Sessions {
            // Sessions are read when their view opens, not before.
            self.request_refresh();
        }
    }

    /// `a`: the audit trail, or back to where it was opened from.
    fn toggle_audit(&mut self) {
        self.stack.clear();
        self.banner = None;
        if self.root == Root::Audit {
            self.root = self.audit_return;
        } else {
            self.audit_return = self.root;
            self.root = Root::Audit;
            self.effects.push(Effect::Request(RequestKind::Audit));
        }
        self.focus = root_pane(self.root);
    }

    fn move_by(&mut self, delta: isize) {
        let step = |cur: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (cur as isize)
                .saturating_add(delta)
                .clamp(0, len as isize - 1) as usize
        };
        if let Some(Popup::Help { scroll } | Popup::Confirm { scroll, .. }) = &mut self.popup {
            *scroll = (*scroll as isize).saturating_add(delta).clamp(0, 500) as usize;
            return;
        }
        if let Some(Popup::Palette { query, .. }) = &self.popup {
            // The wheel moves the palette's selection, not the list under it.
            let n = self.palette_entries(&query.clone()).len();
            if let Some(Popup::Palette { selected, .. }) = &mut self.popup {
                *selected = step(*selected, n);
            }
            return;
        }
        match self.focus {
            Pane::List => {
                self.list.selected = step(self.list.selected, self.list.view.len());
                self.sync_list_selection();
            }
            Pane::Sessions => {
                self.sessions.selected = step(self.sessions.selected, self.sessions.view.len());
                self.sessions.selected_id = self.selected_session().map(|s| s.id.clone());
            }
            Pane::Audit => {
                self.audit.selected = step(self.audit.selected, self.audit.rows.len());
            }
            Pane::Tree => {
                if let Some(ins) = self.inspect_mut() {
                    ins.sel = step(ins.sel, ins.visible.len());
                    ins.detail_scroll = 0;
                    ins.touch();
                }
            }
            Pane::Detail => {
                let max = self.layout.detail_lines.saturating_sub(1);
                if let Some(ins) = self.inspect_mut() {
                    ins.detail_scroll = (ins.detail_scroll as isize)
                        .saturating_add(delta)
                        .clamp(0, max as isize) as usize;
                }
            }
        }
    }

    fn open(&mut self, target: Target) {
        self.stack.push(Inspect::new(target.clone()));
        self.focus = Pane::Tree;
        self.banner = None;
        self.effects
            .push(Effect::Request(RequestKind::Open(target)));
    }

    fn enter(&mut self) {
        match self.focus {
            Pane::List => match self.selected_item() {
                Some(it) => {
                    let id = it.row.submission_id.clone();
                    self.open(Target::Submission(id));
                }
                None => self.info("nothing selected: try another filter (1-7)"),
            },
            Pane::Sessions => {
                if let Some(s) = self.selected_session() {
                    let key = s.id.clone();
                    self.open(Target::Session(key));
                }
            }
            Pane::Audit => {
                if let Some(a) = self.selected_audit() {
                    let id = a.submission_id.clone();
                    self.open(Target::Submission(id));
                }
            }
            Pane::Tree => self.expand(),
            Pane::Detail => {}
        }
    }

    /// The submission whose input is the selected session-tree row, if any.
    fn input_submission_at_cursor(&self) -> Option<String> {
        let ins = self.inspect()?;
        let sess = ins.session()?;
        let node = ins.selected_node()?;
        let entry = ins.tree.entry_of(node)?;
        let id = &ins.history()?.entries[entry].id;
        sess.submissions
            .iter()
            .find(|(_, e)| e.as_deref() == Some(id.as_str()))
            .map(|(it, _)| it.row.submission_id.clone())
    }

    fn expand(&mut self) {
        if let Some(sub) = self.input_submission_at_cursor() {
            self.open(Target::Submission(sub));
            return;
        }
        if let Some(ins) = self.inspect_mut() {
            if let Some(n) = ins.selected_node() {
                if !ins.tree.nodes[n].children.is_empty() {
                    let open = ins.tree.is_open(n, &ins.exp);
                    ins.exp.overrides.insert(ins.tree.key(n), !open);
                    ins.relayout();
                }
            }
        }
    }

    fn collapse(&mut self) {
        if let Some(ins) = self.inspect_mut() {
            if let Some(n) = ins.selected_node() {
                if ins.tree.is_open(n, &ins.exp) {
                    ins.exp.overrides.insert(ins.tree.key(n), false);
                    ins.relayout();
                } else if let Some(p) = ins.tree.nodes[n].parent {
                    ins.select_node(p);
                }
            }
        }
    }

    fn jump_checkpoint(&mut self) {
        let Some(ins) = self.inspect_mut() else {
            return;
        };
        let Some(s) = ins.submission() else {
            self.info("open a submission to jump to its checkpoint leaf");
            return;
        };
        let leaf = s
            .report
            .bundle
            .journal
            .as_ref()
            .and_then(|j| j.checkpoint_leaf_id.clone());
        match leaf {
            None => self
                .info("no checkpoint leaf: the submission has no journal or the journal has none"),
            Some(id) => {
                if ins.select_entry_id(&id) {
                    self.focus = Pane::Tree;
                    self.info(&format!("checkpoint leaf {id}"));
                } else {
                    self.error(&format!(
                        "the checkpoint leaf {id} names no entry of the session"
                    ));
                }
            }
        }
    }

    fn jump_input(&mut self) {
        let Some(ins) = self.inspect_mut() else {
            return;
        };
        let Some(s) = ins.submission() else { return };
        let id = s
            .report
            .inspection
            .input_entry_id
            .clone()
            .or_else(|| s.report.inspection.input_off_path_id.clone());
        match id {
            Some(id) if ins.select_entry_id(&id) => self.info(&format!("input entry {id}")),
            _ => self.info("the input entry is not in the session"),
        }
    }

    fn jump_matched(&mut self) {
        let Some(ins) = self.inspect_mut() else {
            return;
        };
        let Some(s) = ins.submission() else { return };
        let ids = s.report.classification().explanation.entry_ids.clone();
        if ids.is_empty() {
            self.info("the matching rule names no entry");
            return;
        }
        let k = ins.matched_cursor % ids.len();
        ins.matched_cursor = k + 1;
        let id = ids[k].clone();
        if ins.select_entry_id(&id) {
            self.focus = Pane::Tree;
            self.info(&format!("matched entry {} of {}: {id}", k + 1, ids.len()));
        }
    }

    fn search_step(&mut self, forward: bool, from_cursor: bool) {
        let Some(ins) = self.inspect_mut() else {
            return;
        };
        if ins.search.hits.is_empty() {
            let msg = if ins.search.query.is_empty() {
                "no search: press / to search the entries".to_string()
            } else {
                format!("no entry matches {:?}", ins.search.query)
            };
            self.info(&msg);
            return;
        }
        let n = ins.search.hits.len();
        let next = match (ins.search.current, from_cursor) {
            (Some(c), false) => {
                if forward {
                    (c + 1) % n
                } else {
                    (c + n - 1) % n
                }
            }
            _ => {
                // First hit at or after the selected row in tree order.
                let order: HashMap<usize, usize> = {
                    let mut all = Vec::new();
                    let mut stack: Vec<usize> = ins.tree.roots.iter().rev().copied().collect();
                    while let Some(x) = stack.pop() {
                        all.push(x);
                        stack.extend(ins.tree.nodes[x].children.iter().rev());
                    }
                    all.into_iter().enumerate().map(|(i, x)| (x, i)).collect()
                };
                let cur = ins
                    .selected_node()
                    .and_then(|s| order.get(&s).copied())
                    .unwrap_or(0);
                ins.search
                    .hits
                    .iter()
                    .position(|h| order.get(h).copied().unwrap_or(0) >= cur)
                    .unwrap_or(0)
            }
        };
        ins.search.current = Some(next);
        let node = ins.search.hits[next];
        ins.select_node(node);
        let q = ins.search.query.clone();
        self.info(&format!("match {} of {n} for {q:?}", next + 1));
    }

    fn step_submission(&mut self, delta: isize) {
        let Some(ins) = self.inspect() else { return };
        match &ins.data {
            Some(Opened::Submission(s)) => {
                let key = s.report.row().session_key.clone();
                let id = s.report.row().submission_id.clone();
                let subs = self.session_submissions(&key);
                let Some(pos) = subs.iter().position(|(_, i)| *i == id) else {
                    return;
                };
                let next = pos as isize + delta;
                if next < 0 || next >= subs.len() as isize {
                    self.info(&format!(
                        "no {} submission in this session ({} in all)",
                        if delta < 0 { "earlier" } else { "later" },
                        subs.len()
                    ));
                    return;
                }
                let target = Target::Submission(subs[next as usize].1.clone());
                let n = subs.len();
                if let Some(top) = self.stack.last_mut() {
                    *top = Inspect::new(target.clone());
                }
                self.banner = None;
                self.effects
                    .push(Effect::Request(RequestKind::Open(target)));
                self.info(&format!("submission {} of {n} in this session", next + 1));
            }
            Some(Opened::Session(_)) => {
                let ins = self.inspect_mut().expect("checked");
                let inputs: Vec<usize> = ins
                    .tree
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| {
                        n.has(tree::Flags::INPUT) && matches!(n.kind, NodeKind::Entry { .. })
                    })
                    .map(|(i, _)| i)
                    .collect();
                if inputs.is_empty() {
                    self.info("no submission input on this session's active path");
                    return;
                }
                let cur = ins.selected_node().unwrap_or(0);
                let pick = if delta > 0 {
                    inputs.iter().find(|&&n| n > cur).or(inputs.first())
                } else {
                    inputs.iter().rev().find(|&&n| n < cur).or(inputs.last())
                };
                if let Some(&n) = pick {
                    ins.select_node(n);
                    self.focus = Pane::Tree;
                }
            }
            None => {}
        }
    }

    /// The id `y` copies: the selected row's id, or the selected entry's.
    pub fn selected_id(&self) -> Option<String> {
        match self.focus {
            Pane::List => self.selected_item().map(|i| i.row.submission_id.clone()),
            Pane::Sessions => self.selected_session().map(|s| s.id.clone()),
            Pane::Audit => self.selected_audit().map(|a| a.submission_id.clone()),
            Pane::Tree | Pane::Detail => {
                let ins = self.inspect()?;
                let node = ins.selected_node()?;
                match &ins.tree.nodes[node].kind {
                    NodeKind::Header => Some(ins.target.id().to_string()),
                    NodeKind::Call {
                        call_id, result, ..
                    } => Some(
                        result
                            .and_then(|r| ins.history().map(|h| h.entries[r].id.clone()))
                            .unwrap_or_else(|| call_id.clone()),
                    ),
                    NodeKind::Entry { entry } => {
                        ins.history().map(|h| h.entries[*entry].id.clone())
                    }
                    _ => None,
                }
            }
        }
    }

    fn copy(&mut self) {
        match self.selected_id() {
            Some(id) => {
                // What is pasted must not act either (a newline or ESC pasted into a shell): the
                // clipboard gets the id as shown, with hostile characters as visible escapes.
                let id = super::text::clean(&id);
                self.effects.push(Effect::Copy(id.clone()));
                self.info(&format!("copied {id} to the clipboard (OSC 52)"));
            }
            None => self.info("nothing to copy here"),
        }
    }

    fn export_target(&self) -> Option<Target> {
        if let Some(ins) = self.inspect() {
            return Some(ins.target.clone());
        }
        match self.focus {
            Pane::Sessions => self
                .selected_session()
                .map(|s| Target::Session(s.id.clone())),
            Pane::Audit => self
                .selected_audit()
                .map(|a| Target::Submission(a.submission_id.clone())),
            _ => self
                .selected_item()
                .map(|i| Target::Submission(i.row.submission_id.clone())),
        }
    }

    fn export(&mut self) {
        match self.export_target() {
            Some(t) => {
                self.effects.push(Effect::Request(RequestKind::Export(t)));
                self.info("exporting…");
            }
            None => self.info("nothing selected to export"),
        }
    }

    fn plan_writes(&mut self) {
        let Some(s) = self.inspect().and_then(|i| i.submission()) else {
            self.info("open a submission to see its recovery plan");
            return;
        };
        let p = &s.plan;
        let title = match p.rule {
            Some(r) => format!("Recovery plan: rule {r} → {}", p.result.unwrap_or("?")),
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
        if self.cfg.read_only {
            lines.push("READ-ONLY: nothing will be written.".into());
        } else {
            lines
                .push("S applies these writes one at a time, each previewed and confirmed.".into());
        }
        self.popup = Some(Popup::info(title, lines));
    }

    /// Press a popup button: `yes` is the `y` key; otherwise the selected button (⏎).
    fn confirm(&mut self, yes_key: bool) {
        match self.popup.take() {
            Some(Popup::Confirm {
                action,
                yes,
                title,
                lines,
                confirm_label,
                scroll,
            }) => {
                let go = yes_key || yes;
                match action {
                    PopupAction::Close => {}
                    PopupAction::NextStep { .. } if !go => {
                        self.info(
                            "stopped stepping: the rest is left to the runtime (S steps again)",
                        );
                    }
                    _ if !go => {
                        // ⏎ on No: nothing happens, and the popup stays.
                        self.popup = Some(Popup::Confirm {
                            title,
                            lines,
                            confirm_label,
                            action,
                            scroll,
                            yes,
                        });
                        self.info("No is selected: nothing written · y applies · Tab selects Yes · esc cancels");
                    }
                    PopupAction::Apply { kind, items } => self.request_apply(kind, items),
                    PopupAction::NextStep { submission_id } => {
                        self.request_plan(ActionKind::Step, vec![submission_id], None)
                    }
                }
            }
            Some(Popup::Help { .. })
            | Some(Popup::Reason { .. })
            | Some(Popup::Palette { .. })
            | None => {}
        }
    }

    // ----- write actions (write mode only) -------------------------------------------------

    /// The submissions an action applies to: the marked rows (from the list), else the selected
    /// row, else the opened submission.
    fn action_targets(&self) -> Result<Vec<String>, &'static str> {
        if let Some(ins) = self.inspect() {
            return match ins.submission() {
                Some(s) => Ok(vec![s.report.row().submission_id.clone()]),
                None => Err("open a submission (⏎ on its input) to act on it"),
            };
        }
        if self.focus == Pane::List {
            if !self.marks.is_empty() {
                // In list order (sequence), whatever the current filter shows.
                let mut marked: Vec<&ListItem> = self
                    .items
                    .iter()
                    .filter(|i| self.marks.contains(&i.row.submission_id))
                    .collect();
                marked.sort_by_key(|i| i.row.sequence);
                let mut ids: Vec<String> = marked
                    .into_iter()
                    .map(|i| i.row.submission_id.clone())
                    .collect();
                // Marked under another filter (only the current filter's rows are loaded).
                let mut other: Vec<String> = self
                    .marks
                    .iter()
                    .filter(|m| !ids.contains(m))
                    .cloned()
                    .collect();
                other.sort();
                ids.extend(other);
                return Ok(ids);
            }
            return match self.selected_item() {
                Some(it) => Ok(vec![it.row.submission_id.clone()]),
                None => Err("nothing selected"),
            };
        }
        Err("select a submission first")
    }

    fn act(&mut self, kind: ActionKind) {
        if let Some(b) = &self.busy {
            let msg = format!("one action at a time: still {b}");
            self.info(&msg);
            return;
        }
        let ids = match self.action_targets() {
            Ok(ids) => ids,
            Err(e) => {
                self.info(e);
                return;
            }
        };
        if kind == ActionKind::Fail {
            self.popup = Some(Popup::Reason {
                kind,
                ids,
                text: String::new(),
                error: None,
            });
            return;
        }
        self.request_plan(kind, ids, None);
    }

    fn request_plan(&mut self, kind: ActionKind, ids: Vec<String>, reason: Option<String>) {
        let what = if ids.len() == 1 {
            act::short_id(&ids[0])
        } else {
            format!("{} marked submissions", ids.len())
        };
        self.busy = Some(format!("planning {} of {what}…", kind.as_str()));
        self.info(&format!("reading {what} and planning {}…", kind.as_str()));
        self.effects
            .push(Effect::Request(RequestKind::Plan { kind, ids, reason }));
    }

    fn request_apply(&mut self, kind: ActionKind, items: Vec<PlanItem>) {
        let n = items
            .iter()
            .filter(|i| i.result.as_ref().is_ok_and(|p| !p.is_noop()))
            .count();
        self.busy = Some(format!("applying {}…", kind.as_str()));
        self.popup = Some(Popup::info(
            format!("{}: applying…", act::title_word(kind)),
            vec![format!(
                "writing {n} submission{}, each in its own fenced transaction…",
                if n == 1 { "" } else { "s" }
            )],
        ));
        self.effects.push(Effect::Request(RequestKind::Apply {
            kind,
            items,
            operator: self.cfg.operator.clone(),
        }));
    }

    fn toggle_mark(&mut self) {
        if self.focus != Pane::List || self.inspect().is_some() {
            return;
        }
        let Some(id) = self.selected_item().map(|i| i.row.submission_id.clone()) else {
            return;
        };
        if !self.marks.remove(&id) {
            self.marks.insert(id);
        }
        self.move_by(1);
        let n = self.marks.len();
        self.info(&format!(
            "{n} marked · R/Q/F/S act on every marked row · esc unmarks all"
        ));
    }

    fn on_planned(&mut self, p: Planned) {
        self.busy = None;
        let kind = p.kind;
        if p.items.len() == 1 {
            let item = p.items.into_iter().next().expect("one item");
            match &item.result {
                Ok(plan) if !plan.is_noop() => {
                    let plan = plan.clone();
                    let (title, lines) = act::confirm_single(kind, &item, &plan);
                    self.status = None;
                    self.popup = Some(Popup::Confirm {
                        title,
                        lines,
                        confirm_label: format!("Yes, {}", kind.as_str()),
                        action: PopupAction::Apply {
                            kind,
                            items: vec![item],
                        },
                        scroll: 0,
                        yes: false,
                    });
                }
                _ => {
                    let (title, lines) = act::refused_single(kind, &item);
                    match &item.result {
                        Err(r) => {
                            self.error(&format!("refused: {} · instead: {}", r.reason, r.instead))
                        }
                        Ok(_) => self.info("nothing to write"),
                    }
                    self.popup = Some(Popup::info(title, lines));
                }
            }
            return;
        }
        let (title, lines) = act::confirm_bulk(&p);
        if p.applicable() == 0 {
            self.error(
                "nothing to apply: every marked submission was refused or has nothing to write",
            );
            self.popup = Some(Popup::info(title, lines));
            return;
        }
        self.status = None;
        self.popup = Some(Popup::Confirm {
            title,
            lines,
            confirm_label: format!("Yes, {} {}", kind.as_str(), p.applicable()),
            action: PopupAction::Apply {
                kind,
                items: p.items,
            },
            scroll: 0,
            yes: false,
        });
    }

    fn on_applied(&mut self, kind: ActionKind, outcomes: Vec<Outcome>) {
        self.busy = None;
        for o in &outcomes {
            if matches!(o.result, act::OutcomeResult::Applied { .. }) {
                self.own_writes.insert(o.submission_id.clone());
            }
        }
        if outcomes.len() == 1 {
            let o = &outcomes[0];
            let (title, lines, next) = act::result_single(kind, o);
            match &o.result {
                act::OutcomeResult::Applied { applied, .. } => self.info(&format!(
                    "{} {}: {} row(s) written, lock held {:.2} ms, audit #{}",
                    kind.as_str(),
                    act::short_id(&o.submission_id),
                    applied.rows_written,
                    applied.lock_held.as_secs_f64() * 1000.0,
                    applied.audit_id
                )),
                act::OutcomeResult::Fenced(d) => self.error(&format!(
                    "nothing written: {} changed since the preview ({})",
                    act::short_id(&o.submission_id),
                    d.join("; ")
                )),
                _ => self.error(&lines.join(" ")),
            }
            self.popup = Some(if next {
                Popup::Confirm {
                    title,
                    lines,
                    confirm_label: "next step".into(),
                    action: PopupAction::NextStep {
                        submission_id: o.submission_id.clone(),
                    },
                    scroll: 0,
                    yes: true,
                }
            } else {
                Popup::info(title, lines)
            });
        } else {
            let (applied, refused, fenced, errors) = act::counts(&outcomes);
            self.info(&format!(
                "{}: {applied} applied · {refused} refused · {fenced} changed since the preview · {errors} failed",
                kind.as_str()
            ));
            let (title, lines) = act::result_bulk(kind, &outcomes);
            self.popup = Some(Popup::info(title, lines));
        }
        // The marked rows an action went through are done with.
        for o in &outcomes {
            self.marks.remove(&o.submission_id);
        }
        // Fresh data everywhere: the list, the opened submission, the audit trail.
        self.request_refresh();
        if self.root != Root::Audit {
            self.effects.push(Effect::Request(RequestKind::Audit));
        }
    }

    // ----- mouse --------------------------------------------------------------------------

    pub fn on_mouse(&mut self, ev: MouseEvent) {
        self.on_mouse_inner(ev);
        self.request_bodies();
    }

    fn on_mouse_inner(&mut self, ev: MouseEvent) {
        let (x, y) = (ev.column, ev.row);
        let inside = |h: &Option<Hit>| h.is_some_and(|h| h.area.contains((x, y).into()));
        let pane = if inside(&self.layout.detail) {
            Some(Pane::Detail)
        } else if inside(&self.layout.tree) {
            Some(Pane::Tree)
        } else if inside(&self.layout.list) {
            Some(Pane::List)
        } else if inside(&self.layout.sessions) {
            Some(Pane::Sessions)
        } else if inside(&self.layout.audit) {
            Some(Pane::Audit)
        } else {
            None
        };
        if self.popup.is_some() {
            match ev.kind {
                MouseEventKind::ScrollDown => self.move_by(3),
                MouseEventKind::ScrollUp => self.move_by(-3),
                _ => {}
            }
            return;
        }
        let Some(pane) = pane else { return };
        match ev.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let saved = self.focus;
                self.focus = pane;
                self.move_by(if ev.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                });
                self.focus = saved;
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                let hit = match pane {
                    Pane::List => self.layout.list,
                    Pane::Sessions => self.layout.sessions,
                    Pane::Tree => self.layout.tree,
                    Pane::Detail => self.layout.detail,
                    Pane::Audit => self.layout.audit,
                };
                let Some(hit) = hit else { return };
                if !hit.rows.contains((x, y).into()) {
                    return;
                }
                let row = (y - hit.rows.y) as usize;
                let double = self.last_click.is_some_and(|(t, cx, cy)| {
                    cx == x && cy == y && self.ui_now.duration_since(t) < Duration::from_millis(400)
                });
                self.last_click = Some((self.ui_now, x, y));
                match pane {
                    Pane::List => {
                        let i = self.list.offset + row;
                        if i < self.list.view.len() {
                            self.list.selected = i;
                            self.sync_list_selection();
                            if double {
                                self.enter();
                            }
                        }
                    }
                    Pane::Sessions => {
                        let i = self.sessions.offset + row;
                        if i < self.sessions.view.len() {
                            self.sessions.selected = i;
                            self.sessions.selected_id =
                                self.selected_session().map(|s| s.id.clone());
                            if double {
                                self.enter();
                            }
                        }
                    }
                    Pane::Tree => {
                        if let Some(ins) = self.inspect_mut() {
                            let i = ins.offset + row;
                            if i < ins.visible.len() {
                                ins.sel = i;
                                ins.detail_scroll = 0;
                                ins.touch();
                                if double {
                                    self.expand();
                                }
                            }
                        }
                    }
                    Pane::Audit => {
                        let i = self.audit.offset + row;
                        if i < self.audit.rows.len() {
                            self.audit.selected = i;
                            if double {
                                self.enter();
                            }
                        }
                    }
                    Pane::Detail => {}
                }
            }
            _ => {}
        }
    }

    // ----- worker responses ---------------------------------------------------------------

    pub fn on_response(&mut self, resp: Response) {
        self.on_response_inner(resp);
        // A newly opened tree selects a row whose body may be needed.
        self.request_bodies();
    }

    fn on_response_inner(&mut self, resp: Response) {
        match resp {
            Response::Snapshot(Ok(snap)) => self.on_snapshot(*snap),
            Response::Verdicts(batch) => self.on_verdicts(batch),
            Response::Siblings { key, ids } => self.scale.siblings = Some((key, ids)),
            Response::Snapshot(Err(e)) => {
                // Also how a worker panic arrives: never leave an action waiting forever.
                self.busy = None;
                self.refresh_pending = false;
                self.last_refresh = Some(self.ui_now);
                self.db_error = Some(e);
            }
            Response::Opened { target, result } => {
                let ui_now = self.ui_now;
                let _ = ui_now;
                if let (Target::Submission(_), Ok(Opened::Submission(s))) = (&target, &result) {
                    self.want_siblings(&s.report.row().session_key.clone());
                }
                if let Some(ins) = self.stack.iter_mut().rev().find(|i| i.target == target) {
                    match result {
                        Ok(data) => {
                            let first = ins.data.is_none();
                            ins.data = Some(data);
                            ins.error = None;
                            ins.rebuild();
                            if first {
                                ins.sel = 0;
                            }
                        }
                        Err(e) => ins.error = Some(e),
                    }
                }
            }
            Response::EntryBody {
                session,
                entry_id,
                result,
            } => {
                for ins in self.stack.iter_mut() {
                    if ins.session_key().as_deref() != Some(session.as_str()) {
                        continue;
                    }
                    if let Ok(Some(full)) = &result {
                        ins.bodies.insert(entry_id.clone(), (**full).clone());
                        ins.generation += 1;
                    }
                }
            }
            Response::Exported(Ok(path)) => self.info(&format!("exported to {}", path.display())),
            Response::Exported(Err(e)) => self.error(&format!("export failed: {e}")),
            Response::Planned(p) => self.on_planned(p),
            Response::Applied { kind, outcomes } => self.on_applied(kind, outcomes),
            Response::Audit(Ok(rows)) => {
                self.audit.rows = rows;
                self.audit.loaded = true;
                self.audit.error = None;
                self.audit.selected = self
                    .audit
                    .selected
                    .min(self.audit.rows.len().saturating_sub(1));
            }
            Response::Audit(Err(e)) => self.audit.error = Some(e),
        }
    }

    fn on_snapshot(&mut self, snap: Snapshot) {
        self.refresh_pending = false;
        self.last_refresh = Some(self.ui_now);
        self.refresh_took = Some(snap.took);
        self.db_error = None;
        if self.cfg.now_override.is_none() {
            self.now_ms = snap.now_ms;
        }
        let selected_before = self.selected_item().cloned();
        let watched = snap.watched.clone();
        let same_filter = self.scale.filter == Some(snap.filter);
        let mut snap = snap;
        if self.loaded && same_filter {
            let until = self.ui_now + FLASH;
            self.scale
                .merge_pending(&self.items, &mut snap.items, &self.own_writes);
            let old: HashMap<&str, String> = self
                .items
                .iter()
                .map(|i| (i.row.submission_id.as_str(), i.signature()))
                .collect();
            for it in snap.items.iter().filter(|i| !i.pending) {
                if old.get(it.row.submission_id.as_str()) != Some(&it.signature()) {
                    self.flashes.insert(it.row.submission_id.clone(), until);
                }
            }
        } else {
            self.scale.pending_base.clear();
        }
        self.scale.on_snapshot(&snap);
        self.items = snap.items;
        // A marked row that no longer exists cannot be acted on: forget it (rows of another
        // filter are not loaded, so only a refresh of the same filter tells).
        let items = &self.items;
        if same_filter {
            self.marks
                .retain(|id| items.iter().any(|i| &i.row.submission_id == id));
        }
        if let Some(c) = snap.counts {
            self.counts = c;
            self.scale.counts_known = true;
        }
        if let Some(sessions) = snap.sessions {
            self.sessions.rows = sessions;
            self.scale.sessions_loaded = true;
        }
        let first = !self.loaded;
        self.loaded = true;
        self.rebuild_list();
        self.rebuild_sessions();
        if self
            .status
            .as_ref()
            .is_some_and(|s| s.text == "refreshing…")
        {
            let ms = self.refresh_took.map_or(0, |d| d.as_millis());
            self.info(&format!("refreshed in {ms} ms"));
        }
        // Our own writes are not "changed under you": forget them after this refresh.
        let own = std::mem::take(&mut self.own_writes);
        self.scale.own_recent = own.clone();
        // The selected row changed under the operator (the opened submission is checked below).
        if self.stack.is_empty() {
            if let Some(old) = selected_before
                .as_ref()
                .filter(|o| !own.contains(&o.row.submission_id))
            {
                let id = &old.row.submission_id;
                let still = self
                    .selected_item()
                    .is_some_and(|n| &n.row.submission_id == id);
                let new = self
                    .items
                    .iter()
                    .find(|i| &i.row.submission_id == id)
                    .or(watched.as_ref().filter(|w| &w.row.submission_id == id))
                    .filter(|i| !i.pending);
                if let Some(new) = new {
                    if let Some(mut c) = describe_item_change(old, new) {
                        if !still {
                            c = c.replace(
                                " · esc dismisses",
                                " · it left this filter · esc dismisses",
                            );
                        }
                        self.banner = Some(c);
                    }
                }
            }
        }
        if first {
            // Said once the counts are in (they follow the first snapshot).
            self.scale.greet = true;
            self.greet();
        }
        if let Some((target, result)) = snap.open {
            let Some(ins) = self.stack.last_mut() else {
                return;
            };
            if ins.target != target {
                return;
            }
            match result {
                Ok(data) => {
                    let change = match (&ins.data, &data) {
                        (Some(Opened::Submission(a)), Opened::Submission(b))
                            if !own.contains(&b.report.row().submission_id) =>
                        {
                            describe_change(a, b)
                        }
                        _ => None,
                    };
                    ins.data = Some(data);
                    ins.error = None;
                    ins.rebuild();
                    if let Some(c) = change {
                        self.banner = Some(c);
                    }
                }
                Err(e) => ins.error = Some(e),
            }
        }
    }
}

/// The pane that has focus in a root view.
fn root_pane(root: Root) -> Pane {
    match root {
        Root::Submissions => Pane::List,
        Root::Sessions => Pane::Sessions,
        Root::Audit => Pane::Audit,
    }
}

/// What changed in a list row between two refreshes, in the operator's words.
pub(super) fn describe_item_change(old: &ListItem, new: &ListItem) -> Option<String> {
    let (a, b) = (&old.row, &new.row);
    let mut parts = Vec::new();
    if a.attempt_id != b.attempt_id || a.attempt_count != b.attempt_count {
        parts.push(format!("new attempt ({}/{})", b.attempt_count, b.max_retry));
    }
    if let (Some(x), Some(y)) = (old.entry_count, new.entry_count) {
        if y > x {
            parts.push(format!(
                "{} new entr{}",
                y - x,
                if y - x == 1 { "y" } else { "ies" }
            ));
        }
    }
    if a.status != b.status {
        parts.push(format!("now {} ({})", b.status, new.verdict));
    } else if old.verdict != new.verdict {
        parts.push(format!("verdict now {}", new.verdict));
    }
    (!parts.is_empty()).then(|| {
        let short = crate::core::rows::short_id(&b.submission_id);
        format!(
            "{short} changed under you: {} · esc dismisses",
            parts.join(", ")
        )
    })
}

/// What changed in the opened submission between two loads, in the operator's words.
fn describe_change(old: &OpenedSubmission, new: &OpenedSubmission) -> Option<String> {
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
        parts.push(format!("{} entries removed", ca - cb));
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
        let short = crate::core::rows::short_id(&b.submission_id);
        format!(
            "{short} changed under you: {} · esc dismisses",
            parts.join(", ")
        )
    })
}

/// Keys that are plain text while typing in a filter or search (for the footer).
pub fn input_hints() -> Vec<(&'static str, &'static str)> {
    vec![("⏎", "keep"), ("esc", "clear"), ("^u", "erase")]
}
