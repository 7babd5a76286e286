//! The flue 2.x screens without a terminal or threads (the `test-harness` feature): a
//! `TestBackend`, the worker answering in line, keys given as text as for beta.7's harness.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use turnscope_engine::flue2::Flue2Options;
use turnscope_store::{DbTarget, Flue2SqliteReader, StoreError};

use super::run::Flue2Source;
use super::worker::Flue2Response;
use super::{Flue2App, Flue2Config, Flue2Worker};
use crate::harness::{parse_keys, screen_text, HarnessOptions};

pub struct Flue2Harness {
    pub app: Flue2App,
    worker: Flue2Worker,
    pub terminal: Terminal<TestBackend>,
    /// Texts sent to the clipboard (OSC 52) so far.
    pub copied: Vec<String>,
    clock: Instant,
    /// What the worker's own threads (the text search) sent, answered at the next settle.
    side: std::sync::Arc<std::sync::Mutex<Vec<Flue2Response>>>,
    /// Whether those messages wait (a test looking at a search still running).
    pub hold_side: bool,
    /// Requests the app made that wait for the next settle ([`Flue2Harness::open_first_frame`]).
    held: Vec<super::worker::Flue2Request>,
}

impl Flue2Harness {
    /// Open the 2.x SQLite journal (or 2.x export) at `db` with the classifier of `options`,
    /// read it and draw once. `o` as for beta.7 (its width, height, clock, name, theme and keys
    /// are used).
    pub fn open(
        db: &Path,
        options: Flue2Options,
        o: HarnessOptions,
    ) -> Result<Flue2Harness, StoreError> {
        let mut h = Flue2Harness::unread(db, options, o)?;
        h.settle();
        h.render();
        Ok(h)
    }

    /// [`Flue2Harness::open`] as far as the first frame a running TUI draws: only the rows are
    /// read ([`super::worker::Flue2Request::Rows`]); the list (the view's streams folded) waits
    /// for the next [`Flue2Harness::settle`].
    pub fn open_first_frame(
        db: &Path,
        options: Flue2Options,
        o: HarnessOptions,
    ) -> Result<Flue2Harness, StoreError> {
        use super::worker::Flue2Request;
        let mut h = Flue2Harness::unread(db, options, o)?;
        for r in h.app.take_requests() {
            if matches!(r, Flue2Request::Rows { .. }) {
                if let Some(resp) = h.worker.handle(r) {
                    h.app.on_response(resp);
                }
            } else {
                h.held.push(r);
            }
        }
        h.render();
        Ok(h)
    }

    /// The app and its worker, the first read asked for, nothing answered.
    fn unread(
        db: &Path,
        options: Flue2Options,
        o: HarnessOptions,
    ) -> Result<Flue2Harness, StoreError> {
        let reader = match Flue2Source::of(&DbTarget::from_path(db)?) {
            Some(source) => source.open()?,
            None => Flue2SqliteReader::open(db)?,
        };
        let mut worker = Flue2Worker::new(reader, options.clone());
        let side = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sent = side.clone();
        worker.set_notify(std::sync::Arc::new(move |r| {
            sent.lock()
                .expect("the harness's side channel")
                .push(Flue2Response::Screen(r));
        }));
        let cfg = Flue2Config {
            display_name: o.display_name,
            options,
            format_version: worker.format_version(),
            // Read again only when a test asks.
            refresh: Duration::from_secs(24 * 3600),
            now_override: Some(o.now_ms),
            show_pinned_clock: false,
            theme: o.theme,
            keys: o.keys,
            write: !o.read_only && !turnscope_store::is_flue2_export(db),
            operator: o.operator,
            write_refusal: if turnscope_store::is_flue2_export(db) {
                Some("an export is read-only: open the live database to act".into())
            } else {
                o.write_refusal
            },
            export_dir: o.export_dir,
        };
        let mut h = Flue2Harness {
            app: Flue2App::new(cfg, o.now_ms),
            worker,
            terminal: Terminal::new(TestBackend::new(o.width, o.height)).expect("test backend"),
            copied: Vec::new(),
            clock: Instant::now(),
            side,
            hold_side: false,
            held: Vec::new(),
        };
        h.app.tick(h.clock, o.now_ms);
        Ok(h)
    }

    /// Answer every pending request in line; a text search started is waited for and its
    /// messages answered in the order it sent them.
    pub fn settle(&mut self) {
        for _ in 0..32 {
            let mut reqs = std::mem::take(&mut self.held);
            reqs.extend(self.app.take_requests());
            self.copied.extend(self.app.take_copies());
            let quiet = reqs.is_empty();
            for r in reqs {
                if let Some(resp) = self.worker.handle(r) {
                    self.app.on_response(resp);
                }
            }
            let sent = if self.hold_side {
                Vec::new()
            } else {
                self.worker.wait_search();
                std::mem::take(&mut *self.side.lock().expect("the harness's side channel"))
            };
            if quiet && sent.is_empty() {
                return;
            }
            for resp in sent {
                self.app.on_response(resp);
            }
        }
    }

    /// Hand the app one message as the worker's threads would (a test's own progress message).
    pub fn answer(&mut self, resp: Flue2Response) {
        self.app.on_response(resp);
        self.settle();
    }

    /// Press keys (`"jj<Enter>"`, as beta.7's harness), each answered before the next.
    pub fn press(&mut self, keys: &str) {
        for ev in parse_keys(keys) {
            self.app.on_key(ev);
            self.settle();
        }
    }

    /// Press keys with the reads they ask for held until the next [`Flue2Harness::settle`]: what
    /// a running TUI draws before its worker answers.
    pub fn press_unanswered(&mut self, keys: &str) {
        for ev in parse_keys(keys) {
            self.app.on_key(ev);
            self.held.extend(self.app.take_requests());
        }
    }

    /// Move the pinned clock to `now_ms` and read again (the refresh a running TUI makes as its
    /// clock moves), answered in line.
    pub fn advance_to(&mut self, now_ms: i64) {
        self.app.cfg.now_override = Some(now_ms);
        self.app.now_ms = now_ms;
        self.app.request_refresh();
        self.settle();
        self.render();
    }

    pub fn resize(&mut self, w: u16, h: u16) {
        self.terminal.backend_mut().resize(w, h);
        let _ = self.terminal.resize(ratatui::layout::Rect::new(0, 0, w, h));
    }

    /// Draw and return the screen as text.
    pub fn render(&mut self) -> String {
        self.terminal.draw(|f| self.app.draw(f)).expect("draw");
        self.screen()
    }

    pub fn screen(&self) -> String {
        screen_text(self.terminal.backend().buffer())
    }

    /// The last drawn frame.
    pub fn buffer(&self) -> &Buffer {
        self.terminal.backend().buffer()
    }
}
