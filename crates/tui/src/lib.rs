//! The full-screen terminal UI (ratatui + crossterm): the stuck-submission list, the active-path
//! tree with the trailing partial batch highlighted, the verdict and recovery plan, sessions, live
//! refresh, the audit trail. Read-only by default; with `--write` the operator can repair,
//! requeue, fail and step submissions, each previewed, confirmed (No selected) and fenced.
//!
//! Threads: the UI thread draws and handles keys; an input thread reads terminal events; a worker
//! thread owns its own read-only database connection. All three meet on one channel, so database
//! I/O never blocks drawing.
//!
//! Where behaviour lives: `app/` is the router (root, focus, popup slot, status line; keys become
//! [`Action`]s and go to the open popup or the focused screen) with its own render (`app/draw.rs`,
//! the chrome in `app/chrome.rs`) and the query facade the run loop and the test harness use
//! (`app/query.rs`). Each screen in `screens/` (list, sessions, audit, incidents, inspect) owns
//! its state, handles its actions (`handle(action, cx)`, answering the router with
//! `screens::Ask`s: open this, re-read, say that, a popup) and draws from `&self` plus the view
//! state; each popup in
//! `popups/` owns its keys and its drawing. `worker.rs` holds the one request/response pair
//! between the UI and the database.
//!
//! The terminal is restored on quit, on error, on panic (a hook) and on Ctrl-C (a key in raw
//! mode). Nothing is printed while the terminal is in raw mode; logs go to `--log`/`TURNSCOPE_LOG`.

mod app;
pub mod config;
pub mod flue2;
#[cfg(feature = "test-harness")]
pub mod harness;
mod keymap;
pub mod list_query;
mod list_state;
mod listing;
mod log;
mod messages;
mod popup_line;
mod popups;
mod screens;
mod text;
mod theme;
pub mod tooltip;
mod tree;
mod verdicts;
mod view_state;
mod widgets;
mod worker;
mod worker_error;
mod worker_undo;
mod write;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent, KeyEventKind,
};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

pub use app::draw::draw;
pub use app::{App, AppConfig, Effect, Pane, Root};
pub use keymap::{
    action_name, help_groups, key_label, key_tables_markdown, parse_key, Action, FilterLabel,
    Overrides, KEYMAP,
};
pub use messages::{ItemDisposition, ListItem, Target};
pub use popups::{Popup, PopupAction};
pub use theme::{no_color_env, Palette, Theme};
pub use tree::{ExpandMode, NodeKind, Tree};
pub use worker::{Request, Response, Worker};
pub use write::popup_text::{Outcome, OutcomeResult, PlanItem, Planned, StateSummary};

use turnscope_store::{DbTarget, JournalFormat, StoreError};

/// How to run the TUI.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// An SQLite file or a PostgreSQL database.
    pub db: DbTarget,
    /// Poll interval for live refresh (default 2 s).
    pub refresh: Duration,
    /// `--context-window` for silent-overflow detection.
    pub context_window: Option<u64>,
    /// Pin "now" (ms since the epoch), for tests.
    pub now_override: Option<i64>,
    /// True unless `--write`: a READ-ONLY badge, and the write actions are absent.
    pub read_only: bool,
    /// `user@host` recorded in the audit trail (`--operator`, else `$USER@hostname`).
    pub operator: String,
    /// Why write mode cannot be switched on in place (`w`): no operator to record. `None`: it
    /// can (the worker still checks that the database takes writes).
    pub write_refusal: Option<String>,
    /// Shown in the header instead of the path (e.g. "demo database").
    pub display_name: Option<String>,
    /// Where `e` writes exports (default: the current directory).
    pub export_dir: Option<PathBuf>,
    /// Append log lines here (default: `TURNSCOPE_LOG`, else no log).
    pub log_file: Option<PathBuf>,
    /// The colour palette (`NO_COLOR` still wins).
    pub palette: Palette,
    /// Key overrides from the configuration file.
    pub keys: Overrides,
    /// The flue 2.x release whose classifier judges a 2.x journal (`--flue-version`, else the
    /// configuration file's `flue_version`); `None`: 2.1.0's. Unused on a beta.7 journal.
    pub flue_version: Option<String>,
}

impl TuiOptions {
    /// For an SQLite path (or a `postgres://` URL given as a path).
    pub fn new(db: impl Into<PathBuf>) -> TuiOptions {
        let path: PathBuf = db.into();
        TuiOptions::for_target(DbTarget::from_path(&path).unwrap_or(DbTarget::Sqlite(path)))
    }

    pub fn for_target(db: DbTarget) -> TuiOptions {
        TuiOptions {
            db,
            refresh: Duration::from_secs(2),
            context_window: None,
            now_override: None,
            read_only: true,
            operator: String::from("unknown@localhost"),
            write_refusal: None,
            display_name: None,
            export_dir: None,
            log_file: None,
            palette: Palette::Dark,
            keys: Overrides::default(),
            flue_version: None,
        }
    }

    /// The classifier a 2.x journal is judged with, or why `flue_version` names none.
    pub fn flue2_options(&self) -> Result<turnscope_engine::flue2::Flue2Options, String> {
        let latest = turnscope_core::flue2::Flue2Variant::LATEST.releases();
        let release = self
            .flue_version
            .as_deref()
            .unwrap_or(latest[latest.len() - 1]);
        turnscope_engine::flue2::Flue2Options::for_release(
            release,
            self.context_window.unwrap_or(0),
        )
        .ok_or_else(|| {
            format!("unknown flue version {release:?}: turnscope has no classifier for it")
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The database could not be opened (checked before the screen is taken over).
    #[error("{0}")]
    Store(#[source] StoreError),
    /// `flue_version` names no 2.x release turnscope has a classifier for.
    #[error("{0}")]
    FlueVersion(String),
    /// stdout is not a terminal.
    #[error("the interactive view needs a terminal, and stdout is not one")]
    NotATerminal,
    /// Terminal I/O failed.
    #[error("terminal error: {0}")]
    Io(#[from] std::io::Error),
}

impl TuiError {
    /// What the operator can do next.
    pub fn hint(&self) -> String {
        match self {
            TuiError::Store(e) => e.hint(),
            TuiError::FlueVersion(_) => format!(
                "use one of: {}",
                turnscope_core::flue2::Flue2Variant::ALL
                    .iter()
                    .flat_map(|v| v.releases().iter().copied())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TuiError::NotATerminal => {
                "use `turnscope list` or `turnscope show` for plain output".into()
            }
            TuiError::Io(_) => "the terminal went away; rerun turnscope".into(),
        }
    }
}

/// Events the UI thread waits on.
enum Event {
    Term(TermEvent),
    Worker(Response),
}

// ----- terminal setup and restore --------------------------------------------------------------

/// Set while the terminal is in raw mode / the alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The UI thread (only its panics restore the terminal; others are reported after restore).
static UI_THREAD: Mutex<Option<std::thread::ThreadId>> = Mutex::new(None);
/// Panic messages from other threads while the screen was ours, printed after restore.
static DEFERRED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Give the terminal back: leave raw mode and the alternate screen, show the cursor, stop mouse
/// capture. Safe to call any number of times and from any thread (the binary's panic report calls
/// it first); only the first call after entering does anything.
pub fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = std::io::stdout();
        let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
        let _ = disable_raw_mode();
        let _ = out.flush();
    }
}

fn install_panic_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_ui = UI_THREAD.lock().ok().and_then(|g| *g) == Some(std::thread::current().id());
            if ACTIVE.load(Ordering::SeqCst) && !on_ui {
                // Printing now would scribble over the screen: keep it for after restore.
                let msg = format!("{info}");
                log::line(&format!(
                    "panic on {:?}: {msg}",
                    std::thread::current().name()
                ));
                if let Ok(mut d) = DEFERRED.lock() {
                    d.push(msg);
                }
                return;
            }
            restore_terminal();
            previous(info);
        }));
    });
}

/// Restores the terminal when dropped (normal return, `?` errors, unwinding).
pub(crate) struct Guard;

impl Guard {
    pub(crate) fn enter() -> std::io::Result<Guard> {
        install_panic_hook();
        *UI_THREAD.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = std::io::stdout();
        execute!(out, EnterAlternateScreen, EnableMouseCapture, cursor::Hide)?;
        Ok(Guard)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore_terminal();
        if let Ok(mut d) = DEFERRED.lock() {
            for m in d.drain(..) {
                eprintln!("turnscope: a background thread panicked: {m}");
            }
        }
    }
}

// ----- the loop --------------------------------------------------------------------------------

pub(crate) fn wall_ms() -> i64 {
    turnscope_store::clock::now_ms()
}

/// Run the TUI until the operator quits.
pub fn run(options: TuiOptions) -> Result<(), TuiError> {
    turnscope_store::memory::configure_allocator(turnscope_store::memory::Process::Tui);
    // A flue 2.x journal has screens of its own (`flue2/`); every other format opens as beta.7
    // (or is refused by the open, naming its writer).
    if let Some(source) = flue2::run::Flue2Source::of(&options.db) {
        let flue2 = options.flue2_options().map_err(TuiError::FlueVersion)?;
        return flue2::run::run(&options, source, flue2);
    }
    let store = turnscope_store::open(&options.db).map_err(TuiError::Store)?;
    if !std::io::stdout().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    log::init(
        options
            .log_file
            .clone()
            .or_else(|| std::env::var_os("TURNSCOPE_LOG").map(PathBuf::from)),
    );
    log::line(&format!("start: {}", options.db.display()));
    let export_dir = options
        .export_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut display_name = options
        .display_name
        .clone()
        .unwrap_or_else(|| options.db.display());
    if store.schema().immutable {
        // Read without the -shm (the runtime is down, the directory not writable): the header
        // says, for the whole run, that a runtime starting now is not seen.
        display_name.push_str(" (immutable: a runtime that starts now is not seen)");
    }
    // An export (`--db EXPORT.json`) is read-only whatever the flags say: its rows are in memory.
    let read_only = options.read_only || options.db.is_export();
    if options.db.is_export() {
        display_name.push_str(" (an export, read-only)");
    }
    let format = JournalFormat::Beta7 {
        schema_version: store.schema().schema_version.clone(),
    }
    .writer()
    .to_string();
    let cfg = AppConfig {
        format,
        display_name,
        read_only,
        is_export: options.db.is_export(),
        operator: options.operator.clone(),
        write_refusal: options.write_refusal.clone(),
        refresh: options.refresh.max(Duration::from_millis(100)),
        export_dir: export_dir.clone(),
        now_override: options.now_override,
        show_pinned_clock: options.now_override.is_some(),
        theme: Theme::with_palette(options.palette),
        keys: options.keys.clone(),
    };
    let (tx, rx) = channel::<Event>();
    let mut worker = Worker::new(store, options.db.clone(), options.context_window);
    if !read_only {
        worker = worker.allow_writes();
    }
    let (req_tx, worker_thread) = worker::spawn(worker, tx.clone(), Event::Worker);
    let guard = Guard::enter()?;
    let stop = Arc::new(AtomicBool::new(false));
    let input_thread = spawn_input(tx, Event::Term, stop.clone());
    if std::env::var_os("TURNSCOPE_TEST_PANIC").is_some() {
        // For the end-to-end test of the panic report: a bug with the screen taken over.
        panic!(
            "TURNSCOPE_TEST_PANIC is set: a deliberate panic in raw mode on the alternate screen"
        );
    }
    let result = event_loop(cfg, options.now_override, &rx, &req_tx);
    stop.store(true, Ordering::SeqCst);
    let _ = req_tx.send(Request::Stop);
    drop(guard);
    let _ = input_thread.join();
    drop(worker_thread); // finishes its current request on its own; never blocks quitting
    log::line("quit");
    result
}

pub(crate) fn spawn_input<E: Send + 'static>(
    tx: Sender<E>,
    wrap: fn(TermEvent) -> E,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("turnscope-input".into())
        .spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match event::poll(Duration::from_millis(50)) {
                    Ok(true) => match event::read() {
                        Ok(ev) => {
                            if tx.send(wrap(ev)).is_err() {
                                return;
                            }
                        }
                        Err(e) => {
                            log::line(&format!("input error: {e}"));
                            return;
                        }
                    },
                    Ok(false) => {}
                    Err(e) => {
                        log::line(&format!("input error: {e}"));
                        return;
                    }
                }
            }
        })
        .expect("spawning the input thread")
}

/// Send the app's requests to the worker and its copies to the terminal.
fn carry_out(app: &mut App, req_tx: &Sender<Request>) {
    for eff in app.take_effects() {
        match eff {
            Effect::Request(req) => {
                let _ = req_tx.send(req);
            }
            Effect::Copy(text) => {
                // OSC 52 goes to the terminal itself (the local one, also over SSH).
                let mut out = std::io::stdout();
                let _ = out.write_all(text::osc52(&text).as_bytes());
                let _ = out.flush();
            }
        }
    }
}

fn event_loop(
    cfg: AppConfig,
    now_override: Option<i64>,
    rx: &std::sync::mpsc::Receiver<Event>,
    req_tx: &Sender<Request>,
) -> Result<(), TuiError> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    let mut app = App::new(cfg, now_override.unwrap_or_else(wall_ms));
    loop {
        app.tick(Instant::now(), wall_ms());
        carry_out(&mut app, req_tx);
        if app.quit_requested() {
            return Ok(());
        }
        let t0 = Instant::now();
        terminal.draw(|f| draw(f, &mut app))?;
        log::frame(t0.elapsed());
        // Drawing asks for the previews of the rows it drew: sent now, not after the next key.
        carry_out(&mut app, req_tx);
        // Wait for input or a worker answer; wake up regularly for the clock and the refresh.
        let first = match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        for ev in first.into_iter().chain(rx.try_iter()) {
            match ev {
                Event::Term(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => app.on_key(k),
                Event::Term(TermEvent::Mouse(m)) => app.on_mouse(m),
                Event::Term(TermEvent::Resize(..)) => {
                    terminal.autoresize()?;
                }
                Event::Term(_) => {}
                Event::Worker(resp) => {
                    if let Response::Snapshot(Err(e)) = &resp {
                        log::line(&format!("refresh failed: {}", e.line()));
                    }
                    if let Response::Snapshot(Ok(s)) = &resp {
                        log::line(&format!(
                            "refresh: {} submissions in {:?}",
                            s.items.len(),
                            s.took
                        ));
                    }
                    app.on_response(resp);
                }
            }
            if app.quit_requested() {
                return Ok(());
            }
        }
    }
}
