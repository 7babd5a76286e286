//! The router: the root screen, the focused pane, the popup slot, the status line and the clocks.
//! A key becomes an [`Action`] (the keymap) and [`App::dispatch`] hands it to the open popup
//! (`popups/`), else to the focused screen (`screens/`), and carries out what they answer. No
//! drawing and no I/O here: the app asks for database work and clipboard writes by pushing
//! [`Effect`]s, which the run loop (or a test) carries out; the worker's answers come back
//! through `responses.rs`. The write flow is in `writes.rs`, the mouse in `mouse.rs`, moving
//! around (paging, back, panes, the cursor, search) in `navigate.rs`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::act::{self, Outcome, PlanItem, Planned};
use super::data::{ListItem, Opened, Snapshot, Target};
use super::keymap::{self, Action, Ctx};
use super::popups::{
    Confirm, Env, Help, Note, Palette, PaletteEntry, PaletteScope, Popup, PopupLine, PopupView,
    Reply,
};
use super::screens::audit::AuditScreen;
use super::screens::incidents::IncidentScreen;
use super::screens::inspect::{describe_change, Inspect, Said};
use super::screens::list::{describe_item_change, ListRows, ListScreen, WriteAsk};
use super::screens::sessions::SessionsScreen;
use super::theme::Theme;
use super::worker::{Request, Response};
use super::worker_error::WorkerError;
use crate::actions::ActionKind;
use crate::core::status::SubmissionStatus;
use crate::store::RowFilter;
use crate::store::{AuditRecord, SessionSummary};

mod chrome;
pub(super) mod draw;
mod incidents;
mod mouse;
mod navigate;
mod query;
mod responses;
mod scale;
mod writes;

use super::view_state::DrawCtx;
pub use super::view_state::{Hit, InputMode, Layout, Level, Pane, Root, Status};

/// Something the app wants done outside itself.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Database work for the worker thread (the one request type it answers).
    Request(Request),
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
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
    /// Say in the header that the clock is pinned (`TURNSCOPE_NOW_MS`): times shown are relative
    /// to it; every write is checked at the real clock.
    pub show_pinned_clock: bool,
    pub theme: Theme,
    /// Key overrides from the configuration file.
    pub keys: keymap::Overrides,
}

pub struct App {
    cfg: AppConfig,
    now_ms: i64,
    ui_now: Instant,
    root: Root,
    focus: Pane,
    list: ListScreen,
    sessions: SessionsScreen,
    stack: Vec<Inspect>,
    items: Vec<ListItem>,
    counts: Vec<(SubmissionStatus, i64)>,
    loaded: bool,
    status: Option<Status>,
    /// The last database error; cleared by the next good refresh.
    db_error: Option<WorkerError>,
    banner: Option<String>,
    /// What the banner's change is counted from (only meaningful while `banner` is up).
    banner_base: Option<super::data::BannerBase>,
    popup: Option<Popup>,
    input: Option<InputMode>,
    effects: Vec<Effect>,
    last_refresh: Option<Instant>,
    refresh_pending: bool,
    refresh_took: Option<Duration>,
    flashes: HashMap<String, Instant>,
    quit: bool,
    layout: Layout,
    /// Submissions this app just wrote to: their next change is ours, not "under you".
    own_writes: HashSet<String>,
    audit: AuditScreen,
    /// Where `a` (or esc) returns to from the audit trail.
    audit_return: Root,
    /// The stuck submissions per worker (`I`), built from the expired rows.
    incidents: IncidentScreen,
    /// Where `I` (or esc) returns to from the incidents screen.
    incidents_return: Root,
    /// A plan or an apply is with the worker.
    busy: Option<String>,
    last_click: Option<(Instant, u16, u16)>,
    /// Server-side list state: counts, the page, background verdicts (see `list_state.rs`).
    scale: super::list_state::ScaleState,
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
            list: ListScreen::default(),
            sessions: SessionsScreen::default(),
            stack: Vec::new(),
            items: Vec::new(),
            counts: Vec::new(),
            loaded: false,
            status: None,
            db_error: None,
            banner: None,
            banner_base: None,
            popup: None,
            input: None,
            effects: Vec::new(),
            last_refresh: None,
            refresh_pending: false,
            refresh_took: None,
            flashes: HashMap::new(),
            quit: false,
            layout: Layout::default(),
            own_writes: HashSet::new(),
            audit: AuditScreen::default(),
            audit_return: Root::Submissions,
            incidents: IncidentScreen::default(),
            incidents_return: Root::Submissions,
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
        self.list.selected_item(&self.items)
    }

    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.sessions.selected_session()
    }

    /// Rows of filter `f` in the database (the counts come from SQL, not from the loaded rows).
    pub fn count(&self, f: RowFilter) -> usize {
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
        contexts_of(self.focus)
    }

    /// `--write` mode: the write actions exist.
    pub fn write_mode(&self) -> bool {
        !self.cfg.read_only
    }

    /// What the screens draw with besides their own state.
    pub fn draw_ctx(&self) -> DrawCtx {
        DrawCtx {
            theme: self.cfg.theme,
            now_ms: self.now_ms,
            focus: self.focus,
            write_mode: self.write_mode(),
            loaded: self.loaded,
            sessions_loaded: self.scale.sessions_loaded,
        }
    }

    /// What the list screen draws from the app's loaded rows.
    pub fn list_rows(&self) -> ListRows<'_> {
        ListRows {
            items: &self.items,
            flashes: &self.flashes,
            ui_now: self.ui_now,
            total: self.count(RowFilter::All),
        }
    }

    pub fn selected_audit(&self) -> Option<&AuditRecord> {
        self.audit.selected_record()
    }

    // ----- list and sessions views ----------------------------------------------------------

    pub fn rebuild_list(&mut self) {
        self.list.rebuild(&self.items, self.now_ms);
        self.incidents.rebuild(&self.items, self.now_ms);
    }

    fn sync_list_selection(&mut self) {
        self.list.remember_selection(&self.items);
    }

    pub fn rebuild_sessions(&mut self) {
        self.sessions.rebuild();
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
        self.effects.push(Effect::Request(Request::Refresh {
            now_ms: self.now_ms,
            open,
            filter: self.list.filter,
            sessions: self.root == Root::Sessions,
            visible,
            selected: self.list.selected_id.clone(),
        }));
        if self.root == Root::Audit {
            self.effects.push(Effect::Request(Request::Audit));
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
            self.effects.push(Effect::Request(Request::EntryBody {
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
        // A bulk's count is typed into its confirm dialog before any key is looked up.
        if let Some(Popup::Confirm(c)) = &mut self.popup {
            if c.on_count_key(ev.code) {
                return;
            }
        }
        if matches!(self.popup, Some(Popup::Reason(_) | Popup::Palette(_))) {
            // They read text: every key is theirs.
            if let Some(reply) = self.with_popup(|p, env, view| p.on_key(&ev, env, view)) {
                self.on_popup_reply(reply);
            }
            return;
        }
        let ctxs = self.contexts();
        if let Some(a) = keymap::lookup_with(&ctxs, &ev, self.write_mode(), &self.cfg.keys) {
            self.dispatch(a);
            return;
        }
        // A write key in read-only mode: dispatch says why nothing happens.
        if let Some(a) = keymap::lookup_with(&ctxs, &ev, true, &self.cfg.keys)
            .filter(|a| !self.write_mode() && keymap::is_write(*a))
        {
            self.dispatch(a);
            return;
        }
        if self.popup.is_none() {
            if let Some((key, help, pane)) =
                keymap::bound_elsewhere(&ctxs, &ev, self.write_mode(), &self.cfg.keys)
            {
                self.info(&format!("{key} ({help}) works in: {pane}"));
            }
        }
    }

    /// Which screen the status line's message belongs to: the root view and the opened
    /// submission or session (a message from one screen is stale on another).
    fn screen_key(&self) -> (Root, usize, Option<String>) {
        (
            self.root,
            self.stack.len(),
            self.inspect().map(|i| i.target.id().to_string()),
        )
    }

    /// Open `p` in the popup slot (its scroll bounds are its own, from its first draw).
    fn show(&mut self, p: Popup) {
        self.popup = Some(p);
        self.layout.popup = PopupView::default();
    }

    /// Carry out what the open popup asked for.
    fn on_popup_reply(&mut self, reply: Reply) {
        match reply {
            Reply::Stay => {}
            Reply::StayWith(msg) => self.info(&msg),
            Reply::Close => self.popup = None,
            Reply::CloseWith(msg) => {
                self.popup = None;
                self.info(&msg);
            }
            Reply::Run(a) => {
                self.popup = None;
                self.dispatch(a);
            }
            Reply::Apply { kind, items } => {
                self.popup = None;
                self.request_apply(kind, items);
            }
            Reply::PlanUndo { target, reason } => {
                self.popup = None;
                self.request_undo(target, reason, false);
            }
            Reply::Undo { target, reason } => {
                self.popup = None;
                self.request_undo(target, reason, true);
            }
            Reply::Plan { kind, ids, reason } => {
                self.popup = None;
                self.request_plan(kind, ids, reason);
            }
        }
    }

    /// Call `f` with the open popup and what it needs from the app (the pane under it, the
    /// theme, the keys); `None` without a popup.
    fn with_popup<R>(
        &mut self,
        f: impl FnOnce(&mut Popup, &Env, &mut PopupView) -> R,
    ) -> Option<R> {
        let here = contexts_of(self.focus);
        let page = self.page();
        let env = Env {
            theme: self.cfg.theme,
            write_mode: !self.cfg.read_only,
            keys: &self.cfg.keys,
            here,
            page,
        };
        let p = self.popup.as_mut()?;
        Some(f(p, &env, &mut self.layout.popup))
    }

    /// Draw the open popup over the screen.
    pub fn draw_popup(&self, f: &mut ratatui::Frame, area: Rect, view: &mut PopupView) {
        let env = Env {
            theme: self.cfg.theme,
            write_mode: !self.cfg.read_only,
            keys: &self.cfg.keys,
            here: contexts_of(self.focus),
            page: 0,
        };
        if let Some(p) = &self.popup {
            p.render(f, area, &env, view);
        }
    }

    /// The command palette's rows for this query (what `:` lists in the current pane).
    pub fn palette_entries(&self, query: &str) -> Vec<PaletteEntry> {
        let here = contexts_of(self.focus);
        PaletteScope {
            here: &here,
            write_mode: self.write_mode(),
            keys: &self.cfg.keys,
        }
        .entries(query)
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
                    ins.set_search(q);
                }
                // Incremental: jump to the first hit at or after the cursor as the text grows.
                self.search_step(true, true);
            }
        }
    }

    /// The router: an action goes to the open popup, else to the focused screen or the app.
    pub fn dispatch(&mut self, a: Action) {
        let screen = self.screen_key();
        let status = self.status.clone();
        self.dispatch_inner(a);
        // Moving to another screen drops the last one's message, unless this action just said
        // something (`open … failed`, `sorted by …`).
        if self.screen_key() != screen && self.status == status {
            self.status = None;
        }
    }

    fn dispatch_inner(&mut self, a: Action) {
        // The popup owns the keyboard while open.
        if let Some(reply) = self.with_popup(|p, env, view| p.on_action(a, env, view)) {
            self.on_popup_reply(reply);
            self.prioritize_visible();
            return;
        }
        // The opened submission or session handles its tree's actions itself.
        if let Some(ins) = self.stack.last_mut() {
            if let Some((said, focus_tree)) = ins.on_action(a) {
                self.hear(said, focus_tree);
                self.prioritize_visible();
                return;
            }
        }
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.show(Popup::Help(Help::default())),
            Action::Palette => self.show(Popup::Palette(Palette::default())),
            Action::Refresh => {
                self.request_refresh();
                self.status = Some(Status {
                    text: "refreshing…".into(),
                    level: Level::Refreshing,
                });
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
                self.layout.list_offset = 0;
                self.rebuild_list();
                // Only the filter's rows are loaded: read the new filter's.
                self.request_refresh();
            }
            Action::StartFilter => self.input = Some(InputMode::Filter),
            Action::SortNext | Action::SortReverse => {
                if let Some(msg) = self.list.on_sort(a, &self.items, self.now_ms) {
                    self.info(&msg);
                }
            }
            Action::Expand => self.expand(),
            Action::Search => {
                if self.inspect().is_some() {
                    self.focus = Pane::Tree;
                    self.input = Some(InputMode::Search);
                }
            }
            Action::PrevSubmission => self.step_submission(-1),
            Action::NextSubmission => self.step_submission(1),
            // The opened view's own actions, without one.
            Action::Collapse
            | Action::ExpandAll
            | Action::CollapseAll
            | Action::JumpCheckpoint
            | Action::JumpInput
            | Action::JumpMatched
            | Action::ShowVerdict
            | Action::SearchNext
            | Action::SearchPrev
            | Action::ToggleRaw => {}
            // The popup's own actions: nothing to do without one.
            Action::Confirm | Action::Yes | Action::SwitchButton | Action::Cancel => {}
            Action::ToggleAudit => self.toggle_audit(),
            Action::ToggleIncidents => self.toggle_incidents(),
            // Write actions: their bindings exist only in write mode; in read-only mode a write
            // key (or the palette, the mouse) gets here only to say so.
            Action::Act(kind) if self.write_mode() => self.act(kind),
            Action::Undo { batch } if self.write_mode() && self.root == Root::Audit => {
                self.ask_undo(batch)
            }
            Action::Undo { .. } if self.write_mode() => {}
            Action::ToggleMark if self.write_mode() && self.focus == Pane::Incidents => {
                self.mark_incident()
            }
            Action::ToggleMark if self.write_mode() => self.toggle_mark(),
            Action::MarkAll | Action::MarkRange | Action::ClearMarks if self.write_mode() => {
                self.bulk_mark(a)
            }
            Action::Act(_)
            | Action::ToggleMark
            | Action::Undo { .. }
            | Action::MarkAll
            | Action::MarkRange
            | Action::ClearMarks => self.info(&keymap::read_only_refusal(a)),
        }
        self.prioritize_visible();
    }

    /// No message on the status line.
    pub fn clear_status(&mut self) {
        self.status = None;
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

    /// The id `y` copies: the selected row's id, or the selected entry's.
    pub fn selected_id(&self) -> Option<String> {
        match self.focus {
            Pane::List => self.selected_item().map(|i| i.row.submission_id.clone()),
            Pane::Sessions => self.selected_session().map(|s| s.id.clone()),
            Pane::Audit => self.selected_audit().map(|a| a.submission_id.clone()),
            // The worker's full id: what `--owner` takes.
            Pane::Incidents => self.incidents.selected_group()?.owner_id.clone(),
            Pane::Tree | Pane::Detail => self.inspect()?.selected_id(),
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
            Pane::Sessions => self.sessions.target(),
            Pane::Audit => self.audit.target(),
            Pane::Incidents => None,
            _ => self.list.target(&self.items),
        }
    }

    fn export(&mut self) {
        match self.export_target() {
            Some(t) => {
                self.effects.push(Effect::Request(Request::Export {
                    target: t,
                    dir: self.cfg.export_dir.clone(),
                    now_ms: self.now_ms,
                }));
                self.info("exporting…");
            }
            None => self.info("nothing selected to export"),
        }
    }

    fn plan_writes(&mut self) {
        match self
            .inspect()
            .and_then(|i| i.recovery_plan(self.cfg.read_only))
        {
            Some((title, lines)) => self.show(Popup::info(
                title,
                lines.into_iter().map(PopupLine::from).collect(),
            )),
            None => self.info("open a submission to see its recovery plan"),
        }
    }
}

/// The contexts keys are looked up in for a focused pane, innermost first.
fn contexts_of(focus: Pane) -> Vec<Ctx> {
    match focus {
        Pane::List => vec![Ctx::List, Ctx::Nav, Ctx::Global],
        Pane::Sessions => vec![Ctx::Sessions, Ctx::Nav, Ctx::Global],
        Pane::Tree => vec![Ctx::Tree, Ctx::Inspect, Ctx::Nav, Ctx::Global],
        Pane::Detail => vec![Ctx::Detail, Ctx::Inspect, Ctx::Nav, Ctx::Global],
        Pane::Audit => vec![Ctx::Audit, Ctx::Nav, Ctx::Global],
        Pane::Incidents => vec![Ctx::Incidents, Ctx::Nav, Ctx::Global],
    }
}

/// The pane that has focus in a root view.
fn root_pane(root: Root) -> Pane {
    match root {
        Root::Submissions => Pane::List,
        Root::Sessions => Pane::Sessions,
        Root::Audit => Pane::Audit,
        Root::Incidents => Pane::Incidents,
    }
}
