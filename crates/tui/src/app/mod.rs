//! The router: the root screen, the focused pane, the popup slot, the status line and the clocks.
//! A key becomes an [`Action`] (the keymap, `keys.rs`) and [`App::dispatch`] hands it to the open
//! popup (`popups/`, the slot in `popup_slot.rs`), else keeps it when it is global (quit, help,
//! refresh, switching roots and panes, copy and export in `copy_export.rs`, the write keys in
//! `writes.rs`), else hands it to the screen it concerns (`screens/`, each with its `handle`) and
//! carries out the [`Ask`]s it answers. No drawing and no I/O here: the app asks for database work
//! and clipboard writes by pushing [`Effect`]s, which the run loop (or a test) carries out; the
//! worker's answers come back through `responses.rs`. The mouse is in `mouse.rs`; roots, panes
//! and stepping between submissions in `navigate.rs`.
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::keymap::{self, Action, Ctx};
use super::messages::{ListItem, Opened, Snapshot, Target};
use super::popups::{
    Confirm, Env, ExportPath, Help, Note, Palette, PaletteEntry, PaletteScope, Popup, PopupView,
    Reply,
};
use super::screens::audit::AuditScreen;
use super::screens::incidents::{IncidentRows, IncidentScreen};
use super::screens::inspect::{Inspect, InspectCx, NO_PLAN};
use super::screens::list::{ListRows, ListScreen, WriteAsk};
use super::screens::sessions::SessionsScreen;
use super::screens::{nav_delta, Ask, ScreenCx};
use super::theme::Theme;
use super::worker::{Request, Response};
use super::worker_error::WorkerError;
use crate::write::popup_text::{self, Outcome, PlanItem, Planned};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_engine::actions::ActionKind;
use turnscope_store::RowFilter;
use turnscope_store::{AuditRecord, SessionSummary};

mod chrome;
mod copy_export;
pub(super) mod draw;
mod keys;
mod lazy_reads;
mod list_paging;
mod mouse;
mod navigate;
mod popup_slot;
mod query;
mod responses;
mod writes;

use super::view_state::DrawCtx;
pub use super::view_state::{InputMode, Layout, Level, Pane, Root, Status};

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
    /// The journal's format as the header names it (`flue 1.0.0-beta.7`).
    pub format: String,
    /// Shown in the header instead of the full path when set (tests, demo).
    pub display_name: String,
    /// Without `--write`: the write actions are absent (no keys, no hints).
    pub read_only: bool,
    /// The database is an export file (`--db EXPORT.json`): read-only whatever the flags say.
    pub is_export: bool,
    /// `user@host`, recorded in the audit trail with every applied action.
    pub operator: String,
    /// Why write mode cannot be switched on (`w`): no operator to record. `None`: it can.
    pub write_refusal: Option<String>,
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
    banner_base: Option<super::messages::BannerBase>,
    popup: Option<Popup>,
    input: Option<InputMode>,
    /// The input was opened on a query already set: the first character typed replaces it (a
    /// new search), an editing key keeps it (Backspace edits it).
    input_fresh: bool,
    effects: Vec<Effect>,
    last_refresh: Option<Instant>,
    refresh_pending: bool,
    refresh_took: Option<Duration>,
    flashes: HashMap<String, Instant>,
    /// What the runtime did after this session's writes, by submission.
    runtime_acted: HashMap<String, crate::messages::RuntimeActed>,
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
            input_fresh: false,
            effects: Vec::new(),
            last_refresh: None,
            refresh_pending: false,
            refresh_took: None,
            flashes: HashMap::new(),
            runtime_acted: HashMap::new(),
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
            id_lookup: crate::list_query::parse(&self.list.query)
                .ok()
                .and_then(|q| q.id_lookup()),
        }));
        if self.root == Root::Audit {
            self.effects.push(Effect::Request(Request::Audit));
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
        } else if !self.global(a) {
            let asks = self.route_to_screen(a);
            self.carry_out(asks);
        }
        self.prioritize_visible();
    }

    /// The actions that are no screen's: quitting, the popups, refreshing, switching roots and
    /// panes, copying, exporting, the write keys; `false` for a screen's action.
    fn global(&mut self, a: Action) -> bool {
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
            // Esc closes the popup, the banner, the opened view; else it is the screen's.
            Action::Back if self.popup.is_some() => self.popup = None,
            Action::Back if self.banner.is_some() => self.banner = None,
            Action::Back if !self.stack.is_empty() => self.close_inspect(),
            Action::NextPane | Action::PrevPane => self.cycle_pane(),
            Action::ToggleSessions => self.toggle_root(),
            Action::FindSession => self.find_session(),
            Action::ToggleAudit => self.toggle_audit(),
            Action::ToggleWriteMode => self.toggle_write_mode(),
            Action::ToggleIncidents => self.toggle_incidents(),
            Action::Copy => self.copy(),
            Action::Export => self.export(),
            Action::NextRequest => self.next_request(),
            Action::PrevSubmission => self.step_submission(-1),
            Action::NextSubmission => self.step_submission(1),
            // The popup's own actions: nothing to do without one.
            Action::Confirm | Action::Yes | Action::SwitchButton | Action::Cancel => {}
            // A popup that scrolls takes the cursor keys even when it did not answer them.
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
                if self.popup_scrolls() =>
            {
                if let Some(delta) = nav_delta(a, self.page()) {
                    self.move_by(delta);
                }
            }
            // Write actions: their bindings exist only in write mode; in read-only mode a write
            // key (or the palette, the mouse) gets here only to say so.
            Action::Act(kind) if self.write_mode() => self.act(kind),
            Action::Act(_)
            | Action::ToggleMark
            | Action::Undo { .. }
            | Action::MarkAll
            | Action::MarkRange
            | Action::ClearMarks
                if !self.write_mode() =>
            {
                if self.cfg.is_export {
                    self.info("an export is read-only: open the live database (--write --db PATH) to act on submissions")
                } else {
                    self.info(&keymap::read_only_refusal(a))
                }
            }
            _ => return false,
        }
        true
    }

    /// Hand a screen's action to the screen it concerns: the list's keys (filters, sorting,
    /// marks) to the list wherever they come from, `u`/`U` to the audit trail, the rest to the
    /// opened view if there is one, else to the focused root screen.
    fn route_to_screen(&mut self, a: Action) -> Vec<Ask> {
        let page = self.page();
        let on_list = self.focus == Pane::List && self.stack.is_empty();
        let cx = ScreenCx {
            items: &self.items,
            now_ms: self.now_ms,
            page,
            write_mode: self.write_mode(),
        };
        match a {
            Action::Filter(_)
            | Action::SortNext
            | Action::SortReverse
            | Action::MarkAll
            | Action::MarkRange
            | Action::ClearMarks => return self.list.handle(a, &cx, on_list),
            Action::StartFilter if self.focus == Pane::Sessions => {
                return self.sessions.handle(a, page)
            }
            Action::StartFilter if self.focus == Pane::Audit => return self.audit.handle(a, page),
            Action::StartFilter => return self.list.handle(a, &cx, on_list),
            Action::ToggleMark if self.focus == Pane::Incidents => {
                return self
                    .incidents
                    .handle(a, page, &mut self.list, cx.write_mode)
            }
            Action::ToggleMark => return self.list.handle(a, &cx, on_list),
            Action::Undo { .. } if self.root == Root::Audit => return self.audit.handle(a, page),
            Action::Undo { .. } => return Vec::new(),
            _ => {}
        }
        if let Some(ins) = self.stack.last_mut() {
            return ins.handle(
                a,
                InspectCx {
                    page,
                    focus: self.focus,
                    detail_lines: self.layout.detail_lines,
                    detail_shown: &mut self.layout.detail_max_scroll,
                    read_only: self.cfg.read_only,
                },
            );
        }
        match (a, self.focus) {
            (Action::PlanWrites, _) => vec![Ask::Info(NO_PLAN.into())],
            (_, Pane::List) => self.list.handle(a, &cx, on_list),
            (_, Pane::Sessions) => self.sessions.handle(a, page),
            (_, Pane::Audit) => self.audit.handle(a, page),
            (_, Pane::Incidents) => self
                .incidents
                .handle(a, page, &mut self.list, cx.write_mode),
            (_, Pane::Tree | Pane::Detail) => Vec::new(),
        }
    }

    /// Carry out what a screen asked for, in order.
    fn carry_out(&mut self, asks: Vec<Ask>) {
        for ask in asks {
            match ask {
                Ask::Info(m) => self.info(&m),
                Ask::Error(m) => self.error(&m),
                Ask::Open(t) => self.open(t),
                Ask::Reread => {
                    self.layout.list_offset = 0;
                    self.rebuild_list();
                    // Only the filter's rows are loaded: read the new filter's.
                    self.request_refresh();
                }
                Ask::Rebuild => self.rebuild_list(),
                Ask::ShowList => {
                    self.layout.list_offset = 0;
                    self.root = Root::Submissions;
                    self.focus = Pane::List;
                    self.rebuild_list();
                    self.sync_list_selection();
                }
                Ask::Input(mode) => {
                    self.input = Some(mode);
                    self.input_fresh = !self.query(mode).is_empty();
                }
                Ask::FocusTree => self.focus = Pane::Tree,
                Ask::Leave if self.focus == Pane::Audit => self.toggle_audit(),
                Ask::Leave if self.focus == Pane::Incidents => self.toggle_incidents(),
                Ask::Leave => {}
                Ask::Show(p) => self.show(p),
            }
        }
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
