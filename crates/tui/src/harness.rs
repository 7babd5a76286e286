//! Driving the app without a terminal or threads: a `TestBackend`, the worker called in line, and
//! keys given as text (`"jj<Enter>"`). Used by the integration tests and the scale bench, behind
//! the `test-harness` feature (they enable it); not part of the library otherwise. Tests ask
//! the app through the query facade below, never through its fields, so the app's structure
//! can change without touching them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::app::{App, AppConfig, Effect, Pane, Root};
use super::draw;
use super::keymap::Action;
use super::messages::ListItem;
use super::popups::{Popup, PopupAction};
use super::theme::Theme;
use super::tree::NodeKind;
use super::worker::{Request, Worker};
use super::worker_error::WorkerError;
use turnscope_core::journal::entry::Entry;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::AuditRecord;
use turnscope_store::RowFilter;
use turnscope_store::{DbTarget, StoreError};

/// Journals written for the tests and the bench (the demo's schema, the runtime's DDL).
pub use turnscope_demo::synthetic::{
    write_empty_journal, write_synthetic_journal, SYNTH_SUBMISSION,
};

pub struct Harness {
    app: App,
    pub worker: Worker,
    pub terminal: Terminal<TestBackend>,
    /// Texts sent to the clipboard (OSC 52) so far.
    pub copied: Vec<String>,
    /// A fixed UI clock, so refresh ages and flashes are deterministic.
    pub clock: Instant,
    /// Whether `settle` also finishes the worker's background verdicts (default). Off, they
    /// wait for `background_step`, so a test (or the bench) sees the placeholders.
    pub auto_background: bool,
}

#[derive(Debug, Clone)]
pub struct HarnessOptions {
    pub width: u16,
    pub height: u16,
    pub now_ms: i64,
    pub display_name: String,
    pub export_dir: PathBuf,
    pub theme: Theme,
    pub context_window: Option<u64>,
    /// `false` is `--write` mode.
    pub read_only: bool,
    pub operator: String,
    /// Why `w` cannot switch to write mode (no operator), as the binary says it.
    pub write_refusal: Option<String>,
    /// Key overrides, as from the configuration file.
    pub keys: super::keymap::Overrides,
    /// `settle` finishes background verdicts too (see [`Harness::auto_background`]).
    pub auto_background: bool,
    /// `true`: run as the binary does under `TURNSCOPE_NOW_MS`: `now_ms` only pins what the
    /// screens show (the header says so) and every plan and apply is checked at the real clock.
    /// `false` (the default): plans and applies are checked at `now_ms` too, so previews of
    /// the fixed-time demo are reproducible snapshots.
    pub real_safety_clock: bool,
}

impl HarnessOptions {
    pub fn new(now_ms: i64) -> HarnessOptions {
        HarnessOptions {
            width: 80,
            height: 24,
            now_ms,
            display_name: "journal.db".into(),
            export_dir: std::env::temp_dir(),
            theme: Theme::default(),
            context_window: None,
            read_only: true,
            operator: "tester@host".into(),
            write_refusal: None,
            keys: Default::default(),
            auto_background: true,
            real_safety_clock: false,
        }
    }
}

impl Harness {
    /// Open `db`, run the first refresh and draw once.
    pub fn open(db: &Path, o: HarnessOptions) -> Result<Harness, StoreError> {
        Harness::open_target(&DbTarget::from_path(db)?, o)
    }

    /// Open an SQLite file or a PostgreSQL database.
    pub fn open_target(db: &DbTarget, o: HarnessOptions) -> Result<Harness, StoreError> {
        let store = turnscope_store::open(db)?;
        // An export is read-only whatever the options say (as `turnscope_tui::run` opens it).
        let read_only = o.read_only || db.is_export();
        let cfg = AppConfig {
            // The open refused every other format.
            format: turnscope_store::JournalFormat::Beta7 {
                schema_version: store.schema().schema_version.clone(),
            }
            .writer()
            .to_string(),
            display_name: o.display_name,
            read_only,
            is_export: db.is_export(),
            operator: o.operator,
            write_refusal: o.write_refusal,
            // Refresh only when a test asks for it.
            refresh: Duration::from_secs(24 * 3600),
            export_dir: o.export_dir,
            now_override: Some(o.now_ms),
            // Every snapshot pins the clock; the header stays as operators see it, unless the
            // test runs the app as the binary runs with a pinned clock.
            show_pinned_clock: o.real_safety_clock,
            theme: o.theme,
            keys: o.keys,
        };
        let terminal = Terminal::new(TestBackend::new(o.width, o.height)).expect("test backend");
        let mut h = Harness {
            app: App::new(cfg, o.now_ms),
            worker: {
                // Reproducible entry ids, so previews can be snapshots.
                let w = Worker::new(store, db.clone(), o.context_window).with_id_seed(7);
                let w = if o.real_safety_clock {
                    w
                } else {
                    w.with_safety_clock(o.now_ms)
                };
                if read_only {
                    w
                } else {
                    w.allow_writes()
                }
            },
            terminal,
            copied: Vec::new(),
            clock: Instant::now(),
            auto_background: o.auto_background,
        };
        h.app.tick(h.clock, o.now_ms);
        h.settle();
        Ok(h)
    }

    /// Carry out every pending effect (worker requests in line) until none is left, then (with
    /// `auto_background`) the worker's background verdicts.
    pub fn settle(&mut self) {
        loop {
            self.settle_requests();
            if !self.auto_background || !self.background_step() {
                return;
            }
        }
    }

    /// One step of the worker's background work (a batch of verdicts) given to the app; `false`
    /// when there was none.
    pub fn background_step(&mut self) -> bool {
        match self.worker.background() {
            Some(resp) => {
                self.app.on_response(resp);
                true
            }
            None => false,
        }
    }

    /// Background work is waiting in the worker.
    pub fn background_pending(&self) -> bool {
        self.worker.busy()
    }

    /// Carry out every pending effect (worker requests in line), not the background work.
    pub fn settle_requests(&mut self) {
        for _ in 0..32 {
            let effects = self.app.take_effects();
            if effects.is_empty() {
                return;
            }
            for e in effects {
                match e {
                    Effect::Request(req) => {
                        if let Some(resp) = self.worker.handle(req) {
                            self.app.on_response(resp);
                        }
                    }
                    Effect::Copy(t) => self.copied.push(t),
                }
            }
        }
    }

    /// Ask for a refresh (as the timer would) without carrying it out.
    pub fn request_refresh(&mut self) {
        self.app.request_refresh();
    }

    /// Ask for a refresh now (as the timer would) and carry it out.
    pub fn refresh(&mut self) {
        self.app.request_refresh();
        self.settle();
    }

    /// Move the UI clock forward (flashes expire, refresh becomes due).
    pub fn advance(&mut self, d: Duration) {
        self.clock += d;
        let now = self.app.now_ms();
        self.app.tick(self.clock, now);
        self.settle();
    }

    /// Press keys: plain characters, or `<Enter>`, `<Esc>`, `<Tab>`, `<S-Tab>`, `<Up>`, `<Down>`,
    /// `<Left>`, `<Right>`, `<PgUp>`, `<PgDn>`, `<Home>`, `<End>`, `<Space>`, `<BS>`, `<C-x>`.
    pub fn press(&mut self, keys: &str) {
        for ev in parse_keys(keys) {
            self.app.on_key(ev);
            self.settle();
        }
    }

    /// Press keys without carrying out what they ask of the worker (what the operator sees
    /// before the answers arrive); `settle` carries it out.
    pub fn press_unanswered(&mut self, keys: &str) {
        for ev in parse_keys(keys) {
            self.app.on_key(ev);
        }
    }

    pub fn click(&mut self, x: u16, y: u16) {
        self.mouse(MouseEventKind::Down(MouseButton::Left), x, y);
    }

    pub fn mouse(&mut self, kind: MouseEventKind, x: u16, y: u16) {
        self.app.on_mouse(MouseEvent {
            kind,
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        });
        self.settle();
    }

    pub fn resize(&mut self, w: u16, h: u16) {
        self.terminal.backend_mut().resize(w, h);
        let _ = self.terminal.resize(ratatui::layout::Rect::new(0, 0, w, h));
    }

    /// Draw and return the screen as text, one line per row.
    pub fn render(&mut self) -> String {
        self.draw_frame();
        self.screen()
    }

    /// Draw one frame (what a timing measures: no text is made of it).
    pub fn draw_frame(&mut self) {
        self.terminal
            .draw(|f| draw(f, &mut self.app))
            .expect("draw");
        // Drawing asks for the previews of the rows it drew (and the health of the sessions
        // rows it drew). The event loop sends them at once and draws again when they arrive;
        // here the worker answers in line, so the frame the test reads is that second one.
        // Nothing else pending is carried out.
        let asked = self.app.take_effects_where(|e| {
            matches!(
                e,
                Effect::Request(Request::Previews { .. } | Request::SessionHealth(_))
            )
        });
        if asked.is_empty() {
            return;
        }
        for e in asked {
            if let Effect::Request(req) = e {
                if let Some(resp) = self.worker.handle(req) {
                    self.app.on_response(resp);
                }
            }
        }
        self.terminal
            .draw(|f| draw(f, &mut self.app))
            .expect("draw");
    }

    /// Draw one frame without answering the previews it asks for (what the operator sees for
    /// the frame before they arrive).
    pub fn draw_frame_unanswered(&mut self) -> String {
        self.terminal
            .draw(|f| draw(f, &mut self.app))
            .expect("draw");
        self.screen()
    }

    /// The last drawn screen as text.
    pub fn screen(&self) -> String {
        screen_text(self.terminal.backend().buffer())
    }

    /// The detail pane's text for the current selection (unwrapped).
    pub fn detail_text(&self) -> String {
        super::screens::inspect::detail_pane::detail_text(&self.app.draw_ctx(), self.app.inspect())
    }

    // ----- the query facade: what a test may ask, without knowing how the app is built ------

    /// The root view (submissions, sessions, audit trail, incidents).
    pub fn root(&self) -> Root {
        self.app.root()
    }

    /// The pane that has the keyboard.
    pub fn focus(&self) -> Pane {
        self.app.focus()
    }

    /// The open popup, as the operator sees it.
    pub fn popup(&self) -> Option<PopupView> {
        let p = self.app.popup()?;
        let mut v = PopupView {
            kind: PopupKind::Help,
            title: String::new(),
            body: String::new(),
            yes_selected: false,
            selected: 0,
            input: String::new(),
            error: None,
        };
        match p {
            Popup::Help(_) => {}
            Popup::Confirm(c) => {
                v.kind = match c.action {
                    PopupAction::Close => PopupKind::Info,
                    PopupAction::Apply { .. } | PopupAction::Undo { .. } => PopupKind::WriteConfirm,
                    PopupAction::NextStep { .. } => PopupKind::NextStep,
                    PopupAction::EnableWrites => PopupKind::EnableWrites,
                };
                v.title = c.title.clone();
                v.body = super::popups::text_of(&c.lines).join("\n");
                v.yes_selected = c.yes;
            }
            Popup::Palette(pal) => {
                v.kind = PopupKind::Palette;
                v.input = pal.query.clone();
                v.selected = pal.selected;
            }
            Popup::Reason(r) => {
                v.kind = PopupKind::Reason;
                v.input = r.text.clone();
                v.error = r.error.clone();
            }
            Popup::ExportPath(e) => {
                v.kind = PopupKind::ExportPath;
                v.input = e.text.clone();
                v.error = e.error.clone();
                v.yes_selected = e.redact;
            }
        }
        Some(v)
    }

    /// The kind of the open popup, if any.
    pub fn popup_kind(&self) -> Option<PopupKind> {
        self.popup().map(|p| p.kind)
    }

    /// The id `y` would copy: the selected row's, or the selected entry's.
    pub fn selected_id(&self) -> Option<String> {
        self.app.selected_id()
    }

    /// The selected row of the submissions list.
    pub fn selected_row(&self) -> Option<&ListItem> {
        self.app.selected_item()
    }

    /// The list's rows as shown (filtered, searched and sorted).
    pub fn rows(&self) -> Vec<&ListItem> {
        self.app.shown_items()
    }

    /// Every loaded row of the current filter, in the worker's order.
    pub fn loaded_rows(&self) -> &[ListItem] {
        self.app.items()
    }

    /// The list's cursor (a position in [`Harness::rows`]).
    pub fn list_cursor(&self) -> usize {
        self.app.list().selected
    }

    /// The text typed into the list filter (`/`).
    pub fn list_query(&self) -> &str {
        &self.app.list().query
    }

    /// Where the list's rows were drawn last.
    pub fn list_rows_area(&self) -> Option<ratatui::layout::Rect> {
        self.app.layout().list.map(|h| h.rows)
    }

    /// Rows marked for a bulk action.
    pub fn marked(&self) -> usize {
        self.app.list().marks.len()
    }

    /// Marked rows the list does not show (another filter, the `/` query, a worker's narrowing).
    pub fn hidden_marks(&self) -> Vec<String> {
        self.app.hidden_marks()
    }

    /// The incidents screen's groups (stuck submissions per worker), as last built.
    pub fn incident_groups(&self) -> &[turnscope_core::recovery::incidents::IncidentGroup] {
        &self.app.incidents().groups
    }

    /// The selected group of the incidents screen.
    pub fn selected_incident(&self) -> Option<&turnscope_core::recovery::incidents::IncidentGroup> {
        self.app.incidents().selected_group()
    }

    /// Rows of filter `f` in the database (0 until counted).
    pub fn count(&self, f: RowFilter) -> usize {
        self.app.count(f)
    }

    /// Rows of filter `f` in the database, `None` until counted.
    pub fn count_known(&self, f: RowFilter) -> Option<usize> {
        self.app.count_known(f)
    }

    /// Whether the row flashes (changed by the last refresh).
    pub fn is_flashing(&self, id: &str) -> bool {
        self.app.is_flashing(id)
    }

    /// The status line's text.
    pub fn status_text(&self) -> Option<String> {
        self.app.status_text()
    }

    /// The "changed under you" banner.
    pub fn banner(&self) -> Option<String> {
        self.app.banner().map(str::to_string)
    }

    /// The last database error (shown in the status line).
    pub fn db_error(&self) -> Option<String> {
        self.app.db_error().map(WorkerError::line)
    }

    /// Sessions read for the sessions view.
    pub fn sessions_loaded(&self) -> usize {
        self.app.sessions().rows.len()
    }

    /// The audit trail as last read.
    pub fn audit_records(&self) -> &[AuditRecord] {
        &self.app.audit().rows
    }

    /// Clear the status line, so the next message is the next key's own.
    pub fn clear_status(&mut self) {
        self.app.clear_status();
    }

    /// The app asked to quit.
    pub fn quit_requested(&self) -> bool {
        self.app.quit_requested()
    }

    /// No effect is waiting to be carried out.
    pub fn idle(&self) -> bool {
        self.app.idle()
    }

    /// Run an action as if its key were pressed (also one whose key is absent).
    pub fn dispatch(&mut self, a: Action) {
        self.app.dispatch(a);
        self.settle();
    }

    /// The id of the opened submission or session (the innermost one).
    pub fn opened_id(&self) -> Option<String> {
        self.app.inspect().map(|i| i.target.id().to_string())
    }

    /// How many views are stacked (a submission opened from a session is two).
    pub fn open_depth(&self) -> usize {
        self.app.stack().len()
    }

    /// The opened view's data has arrived (without error).
    pub fn opened_loaded(&self) -> Result<bool, String> {
        match self.app.inspect() {
            None => Ok(false),
            Some(i) => match &i.error {
                Some(e) => Err(e.line()),
                None => Ok(i.data.is_some()),
            },
        }
    }

    /// The opened view is a session (not a submission).
    pub fn opened_is_session(&self) -> bool {
        self.app.inspect().is_some_and(|i| i.session().is_some())
    }

    /// The opened submission's report.
    pub fn opened_report(&self) -> Option<&SubmissionReport> {
        self.app.inspect()?.submission().map(|s| &*s.report)
    }

    /// The tree's visible rows: each node's kind and whether it has children.
    pub fn tree_rows(&self) -> Vec<(NodeKind, bool)> {
        let Some(ins) = self.app.inspect() else {
            return Vec::new();
        };
        ins.visible
            .iter()
            .map(|&n| {
                let node = &ins.tree.nodes[n];
                (node.kind.clone(), node.has_children())
            })
            .collect()
    }

    /// How many rows of the tree are visible (without copying them, as `tree_rows` does).
    pub fn tree_row_count(&self) -> usize {
        self.app.inspect().map_or(0, |i| i.visible.len())
    }

    /// Every node of the tree, folded or not.
    pub fn tree_nodes(&self) -> usize {
        self.app.inspect().map_or(0, |i| i.tree.nodes.len())
    }

    /// Top-level nodes of the tree.
    pub fn tree_roots(&self) -> usize {
        self.app.inspect().map_or(0, |i| i.tree.roots.len())
    }

    /// The tree's cursor (a position in [`Harness::tree_rows`]).
    pub fn tree_cursor(&self) -> usize {
        self.app.inspect().map_or(0, |i| i.sel)
    }

    /// The tree's first drawn row.
    pub fn tree_offset(&self) -> usize {
        self.app.layout().tree_offset()
    }

    /// The entry of the selected tree row as the tree holds it (compact), and its full body when
    /// the detail pane fetched it.
    pub fn selected_entry(&self) -> Option<(Entry, Option<Entry>)> {
        let ins = self.app.inspect()?;
        let i = ins.tree.entry_of(ins.selected_node()?)?;
        let e = ins.history()?.entries.get(i)?.clone();
        let full = ins.bodies.get(e.id.as_str()).cloned();
        Some((e, full))
    }

    /// How many row previews the opened view holds (fetched for the rows drawn: its entries
    /// are read without them).
    pub fn previews_held(&self) -> usize {
        self.app.inspect().map_or(0, |i| i.previews.len())
    }

    /// The tree search: its text and how many rows match.
    pub fn search(&self) -> (String, usize) {
        self.app.inspect().map_or((String::new(), 0), |i| {
            (i.search.query.clone(), i.search.hits.len())
        })
    }

    /// Make the opened view look as if its read started `ago` and has not answered yet (the
    /// loading line's timings without a slow database).
    pub fn pretend_open_pending(&mut self, ago: Duration) {
        if let Some(ins) = self.app.inspect_top_mut() {
            ins.data = None;
            ins.requested_at = Instant::now() - ago;
        }
    }
}

/// Which popup is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PopupKind {
    Help,
    /// One button: information (a plan, a refusal, a result).
    Info,
    /// Yes/No before a write (No selected when it opens).
    WriteConfirm,
    /// Step mode's "next step" after a step.
    NextStep,
    /// `w`'s question before write mode.
    EnableWrites,
    /// The command palette.
    Palette,
    /// The reason asked before every action (required for `fail`).
    Reason,
    /// `e`'s path input (`yes_selected`: the redact toggle is on).
    ExportPath,
}

/// A popup as the operator sees it.
#[derive(Debug, Clone)]
pub struct PopupView {
    pub kind: PopupKind,
    pub title: String,
    /// The lines, joined with newlines.
    pub body: String,
    /// The Yes button is selected.
    pub yes_selected: bool,
    /// The palette's selected row.
    pub selected: usize,
    /// Text typed into the palette or the reason.
    pub input: String,
    /// The reason popup's complaint.
    pub error: Option<String>,
}

/// A drawn buffer as text, one line per row (wide characters once).
pub fn screen_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = crate::text::width(sym).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub fn parse_keys(keys: &str) -> Vec<KeyEvent> {
    let mut out = Vec::new();
    let mut chars = keys.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<' && chars.peek().is_some_and(|n| n.is_ascii_alphabetic()) {
            let mut name = String::new();
            for n in chars.by_ref() {
                if n == '>' {
                    break;
                }
                name.push(n);
            }
            let (code, mods) = match name.as_str() {
                "Enter" => (KeyCode::Enter, KeyModifiers::NONE),
                "Esc" => (KeyCode::Esc, KeyModifiers::NONE),
                "Tab" => (KeyCode::Tab, KeyModifiers::NONE),
                "S-Tab" => (KeyCode::BackTab, KeyModifiers::SHIFT),
                "Up" => (KeyCode::Up, KeyModifiers::NONE),
                "Down" => (KeyCode::Down, KeyModifiers::NONE),
                "Left" => (KeyCode::Left, KeyModifiers::NONE),
                "Right" => (KeyCode::Right, KeyModifiers::NONE),
                "PgUp" => (KeyCode::PageUp, KeyModifiers::NONE),
                "PgDn" => (KeyCode::PageDown, KeyModifiers::NONE),
                "Home" => (KeyCode::Home, KeyModifiers::NONE),
                "End" => (KeyCode::End, KeyModifiers::NONE),
                "Space" => (KeyCode::Char(' '), KeyModifiers::NONE),
                "BS" => (KeyCode::Backspace, KeyModifiers::NONE),
                other => match other.strip_prefix("C-").and_then(|r| r.chars().next()) {
                    Some(ch) => (KeyCode::Char(ch), KeyModifiers::CONTROL),
                    None => panic!("unknown key <{other}>"),
                },
            };
            out.push(KeyEvent::new(code, mods));
        } else {
            let mods = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            out.push(KeyEvent::new(KeyCode::Char(c), mods));
        }
    }
    out
}
