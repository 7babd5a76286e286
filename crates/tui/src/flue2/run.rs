//! The run loop on a flue 2.x journal: the reader opened (and refused in one line) before the
//! screen is taken over, the worker on its own thread, the input thread and the terminal guard
//! the beta.7 loop uses.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyEventKind};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::path::PathBuf;
use turnscope_engine::flue2::Flue2Options;

use turnscope_store::{
    is_flue2_export, DbTarget, Flue2SqliteReader, JournalFormat, SqliteStore, StoreError,
};

use super::worker::{self, Flue2Request, Flue2Response, Flue2Worker};
use super::{Flue2App, Flue2Config};
use crate::{log, Guard, TuiError, TuiOptions};

enum Event {
    Term(TermEvent),
    Db(Flue2Response),
}

/// Where a flue 2.x journal is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flue2Source {
    /// An SQLite file 2.x wrote (`format_version` 1, the one 2.x format read).
    Sqlite(PathBuf),
    /// A `turnscope.flue2.export/1` file, opened in memory.
    Export(PathBuf),
}

impl Flue2Source {
    /// `db` as a 2.x journal, or `None` for every other format (opened as beta.7, or refused).
    pub fn of(db: &DbTarget) -> Option<Flue2Source> {
        match db {
            DbTarget::Sqlite(path) => matches!(
                SqliteStore::detect_format(path),
                Ok(JournalFormat::Flue2 { format_version }) if format_version == "1"
            )
            .then(|| Flue2Source::Sqlite(path.clone())),
            DbTarget::Export(path) if is_flue2_export(path) => {
                Some(Flue2Source::Export(path.clone()))
            }
            _ => None,
        }
    }

    pub fn open(&self) -> Result<Flue2SqliteReader, StoreError> {
        match self {
            Flue2Source::Sqlite(path) => Flue2SqliteReader::open(path),
            Flue2Source::Export(path) => Flue2SqliteReader::open_export(path),
        }
    }
}

/// Run the 2.x screens on `source` with the classifier of `options`.
pub fn run(o: &TuiOptions, source: Flue2Source, options: Flue2Options) -> Result<(), TuiError> {
    let reader = source.open().map_err(TuiError::Store)?;
    if !std::io::stdout().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    log::line(&format!(
        "start (flue 2.x, classifier {}): {}",
        options.release,
        o.db.display()
    ));
    let worker = Flue2Worker::new(reader, options.clone());
    let mut display_name = o.display_name.clone().unwrap_or_else(|| o.db.display());
    if matches!(source, Flue2Source::Export(_)) {
        // Its rows are in memory: nothing written, nothing the runtime does seen.
        display_name.push_str(" (an export, read-only)");
    }
    let cfg = Flue2Config {
        display_name,
        options,
        format_version: worker.format_version(),
        refresh: o.refresh.max(Duration::from_millis(100)),
        now_override: o.now_override,
        show_pinned_clock: o.now_override.is_some(),
        theme: crate::Theme::with_palette(o.palette),
        keys: o.keys.clone(),
        // An export's rows are in memory: never written.
        write: !o.read_only && matches!(source, Flue2Source::Sqlite(_)),
        operator: o.operator.clone(),
        write_refusal: match source {
            Flue2Source::Export(_) => {
                Some("an export is read-only: open the live database to act".into())
            }
            _ => o.write_refusal.clone(),
        },
        export_dir: o
            .export_dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| std::path::PathBuf::from(".")),
    };
    let (tx, rx) = channel::<Event>();
    let (req_tx, worker_thread) = worker::spawn(worker, tx.clone(), Event::Db);
    let guard = Guard::enter()?;
    let stop = Arc::new(AtomicBool::new(false));
    let input_thread = crate::spawn_input(tx, Event::Term, stop.clone());
    let result = event_loop(cfg, &rx, &req_tx);
    stop.store(true, Ordering::SeqCst);
    let _ = req_tx.send(Flue2Request::Stop);
    drop(guard);
    let _ = input_thread.join();
    drop(worker_thread);
    log::line("quit");
    result
}

fn carry_out(app: &mut Flue2App, req_tx: &Sender<Flue2Request>) {
    for req in app.take_requests() {
        let _ = req_tx.send(req);
    }
    for text in app.take_copies() {
        let mut out = std::io::stdout();
        let _ = out.write_all(crate::text::osc52(&text).as_bytes());
        let _ = out.flush();
    }
}

fn event_loop(
    cfg: Flue2Config,
    rx: &std::sync::mpsc::Receiver<Event>,
    req_tx: &Sender<Flue2Request>,
) -> Result<(), TuiError> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    let now = cfg.now_override;
    let mut app = Flue2App::new(cfg, now.unwrap_or_else(crate::wall_ms));
    loop {
        app.tick(Instant::now(), crate::wall_ms());
        carry_out(&mut app, req_tx);
        if app.quit_requested() {
            return Ok(());
        }
        terminal.draw(|f| app.draw(f))?;
        let first = match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        for ev in first.into_iter().chain(rx.try_iter()) {
            match ev {
                Event::Term(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => app.on_key(k),
                Event::Term(TermEvent::Resize(..)) => terminal.autoresize()?,
                Event::Term(_) => {}
                Event::Db(resp) => {
                    if let Flue2Response::List(Err(e)) = &resp {
                        log::line(&format!("refresh failed: {}", e.line()));
                    }
                    app.on_response(resp);
                }
            }
            carry_out(&mut app, req_tx);
            if app.quit_requested() {
                return Ok(());
            }
        }
    }
}
