//! The TUI on a flue 2.x journal (SQLite): one component owning its state, its keys and its
//! drawing (the gitui model), beside the beta.7 app rather than inside it, since a 2.x journal's
//! rows, conversations and actions are not beta.7's. Its screens: the submissions list
//! (`list.rs`: expired leases first, as beta.7's list, with the classification and the
//! reconciler's next step), a submission's detail (`detail.rs`: the classification, the plan and
//! the conversation after the input with the trailing uncommitted batch highlighted), and the
//! sessions, incidents and audit screens (`screens.rs`, `screens_app.rs`). Each draws the
//! engine's document (`list --json`, `show --json`, `sessions`, `incidents`, `audit`), read by
//! the worker (`worker.rs`, `screens_worker.rs`) off the UI thread, so they say exactly what the
//! CLI says.
//!
//! Keys are the keymap's (and the configuration file's overrides) where they apply: j/k and the
//! paging keys, ⏎, esc, the view keys 1–6, `/`, `y`, `r`, `?`, `q`, `s`/`f`, `I`, `a`; with
//! `--write` X/Q/E/F (`write.rs`), the marks they act on (space, `u`: `marks.rs`, `bulk.rs`)
//! and the audit trail's u/U (`undo.rs`). A beta.7 key that does
//! nothing here says so.

mod acted;
mod ask;
mod bulk;
mod cost;
mod detail;
mod detail_search;
mod draw;
mod export;
#[cfg(feature = "test-harness")]
pub mod harness;
mod help;
pub mod list;
mod list_sort;
mod marks;
pub mod next_request;
mod opened;
mod palette;
mod popup;
pub mod run;
mod screens;
mod screens_app;
pub mod screens_messages;
pub mod screens_search;
pub mod screens_worker;
mod undo;
pub mod worker;
pub mod write;
mod write_mode;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Constraint, Layout as RLayout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use turnscope_engine::flue2::Flue2Options;
use turnscope_engine::flue2_show::CompactShow;
use turnscope_store::RowFilter;

use crate::keymap::{self, Action, Ctx, Overrides, KEYMAP};
use crate::text::{clean, fit, width};
use crate::theme::Theme;
use crate::widgets::line;
use crate::worker_error::WorkerError;
pub use detail::PARTIAL_MARK;
use help::{HelpKey, HelpView};
use list::{ListState, View};
pub use worker::{Flue2Request, Flue2Response, Flue2Worker};

/// What shapes the 2.x app.
#[derive(Debug, Clone)]
pub struct Flue2Config {
    pub display_name: String,
    /// The classifier asked for (`--flue-version`, else the configuration file, else 2.1.0).
    pub options: Flue2Options,
    /// `flue_meta.format_version` as stored.
    pub format_version: String,
    pub refresh: Duration,
    pub now_override: Option<i64>,
    /// Say in the header that the clock is pinned (`TURNSCOPE_NOW_MS`).
    pub show_pinned_clock: bool,
    pub theme: Theme,
    pub keys: Overrides,
    /// `--write` on an SQLite journal: the write keys exist (`write.rs`).
    pub write: bool,
    /// `user@host`, recorded in the audit trail.
    pub operator: String,
    /// Why write mode cannot be switched on (`w`), where it cannot: an export, no operator to
    /// record.
    pub write_refusal: Option<String>,
    /// Where `e` proposes to write an export (the configuration's `export_dir`, else the
    /// working directory).
    pub export_dir: std::path::PathBuf,
}

/// The format as the header names it.
pub fn format_label(format_version: &str) -> String {
    format!("flue 2.x (format_version {format_version})")
}

/// The classifier rules applied, as the header names them (the CLI's `header_line` says the
/// same at length).
pub fn rules_label(o: &Flue2Options) -> String {
    format!(
        "classifier: flue {} (variant {})",
        o.release,
        o.variant_name()
    )
}

/// One submission opened.
struct Detail {
    id: String,
    doc: Option<CompactShow>,
    error: Option<WorkerError>,
    scroll: usize,
    /// Rows the last draw fitted.
    page: usize,
    /// Rows the detail took, wrapped, at the last draw.
    rows: usize,
    /// The document's entries' rows at the last draw's width (dropped with the document).
    entry_rows: detail::EntryRows,
    /// The width of the last draw.
    width: usize,
    /// `/` in the detail (its keys: `detail_search.rs`).
    search: Option<detail::DetailSearch>,
}

pub struct Flue2App {
    cfg: Flue2Config,
    now_ms: i64,
    list: ListState,
    loaded: bool,
    /// Rows of the view wait for its list (`…` in their cells): the first rows read, or a view
    /// just chosen.
    classifying: bool,
    /// The last list read's error; cleared by the next good one.
    error: Option<WorkerError>,
    detail: Option<Detail>,
    /// The help, when open: it takes every key (`help_key`).
    help: Option<HelpView>,
    /// `/` is being typed.
    searching: bool,
    status: Option<String>,
    requests: Vec<Flue2Request>,
    copies: Vec<String>,
    last_refresh: Option<Instant>,
    quit: bool,
    /// A write under way (its popup), where one is.
    write: Option<write::Flow>,
    /// The NEXT cell of each row written here: `⋯ PREDICTED` until the runtime acts on the row,
    /// then `✓` or `✗` and the prediction (`acted.rs`).
    written: std::collections::HashMap<String, String>,
    /// The sessions, incidents or audit screen, over the list (`screens.rs`).
    screen: Option<screens::Screen>,
    /// An undo under way from the audit screen (its popup).
    undo: Option<undo::UndoFlow>,
    /// The next-request pane (`M`), where open.
    next_request: Option<next_request::Pane>,
    /// `e`'s path popup, where open (beta.7's, `popups/export_path.rs`).
    export: Option<crate::popups::ExportPath>,
    /// `:`, where open (its keys and drawing: `palette.rs`).
    palette: Option<crate::popups::Palette>,
}

/// The actions this app answers, and what its help says of each.
const HANDLED: &[(Action, &str)] = &[
    (Action::Down, "down (a row, or a line of the detail)"),
    (Action::Up, "up"),
    (Action::PageDown, "page down"),
    (Action::PageUp, "page up"),
    (Action::Top, "first row"),
    (Action::Bottom, "last row"),
    (
        Action::Enter,
        "open the submission: classification, plan, conversation after its input",
    ),
    (
        Action::Filter(RowFilter::Expired),
        "view: expired leases (what the reconciler picks up)",
    ),
    (Action::Filter(RowFilter::All), "view: all submissions"),
    (Action::Filter(RowFilter::Queued), "view: queued"),
    (Action::Filter(RowFilter::Running), "view: running"),
    (
        Action::Filter(RowFilter::Terminalizing),
        "view: terminalizing",
    ),
    (Action::Filter(RowFilter::Settled), "view: settled"),
    (
        Action::SortNext,
        "sort by the next column (as list --sort: a row without a value last)",
    ),
    (Action::SortReverse, "reverse the sort order"),
    (
        Action::StartFilter,
        "search: rows whose cells contain the text",
    ),
    (
        Action::NextRequest,
        "the next request: what the model is sent next, and the hazards",
    ),
    (
        Action::Search,
        "in a submission's detail: find a text in its lines (an id, a tool, a phrase)",
    ),
    (Action::SearchNext, "in the detail: the next line found"),
    (Action::SearchPrev, "in the detail: the previous line found"),
    (Action::Copy, "copy the selected id (OSC 52)"),
    (
        Action::ToggleWriteMode,
        "switch between read-only and write mode, in place (write mode asks first)",
    ),
    (
        Action::Export,
        "export the opened or selected submission's agent instance as JSON (as turnscope export)",
    ),
    (
        Action::Refresh,
        "read the journal again (also every --refresh)",
    ),
    (Action::Back, "back: close the detail, clear the search"),
    (
        Action::Palette,
        "the keys, filtered as you type; ⏎ runs the chosen one",
    ),
    (Action::Help, "help: every key and what it does"),
    (Action::Quit, "quit"),
];

/// The views the filter keys pick on a 2.x journal (its statuses; beta.7's `failed` has none).
fn view_of(f: RowFilter) -> Option<View> {
    Some(match f {
        RowFilter::Expired => View::Expired,
        RowFilter::All => View::All,
        RowFilter::Queued => View::Status("queued"),
        RowFilter::Running => View::Status("running"),
        RowFilter::Terminalizing => View::Status("terminalizing"),
        RowFilter::Settled => View::Status("settled"),
        RowFilter::Failed => return None,
    })
}

impl Flue2App {
    pub fn new(cfg: Flue2Config, now_ms: i64) -> Flue2App {
        let list = ListState {
            marking: cfg.write,
            ..ListState::default()
        };
        Flue2App {
            cfg,
            now_ms,
            list,
            loaded: false,
            classifying: false,
            error: None,
            detail: None,
            help: None,
            searching: false,
            status: None,
            requests: Vec::new(),
            copies: Vec::new(),
            last_refresh: None,
            quit: false,
            write: None,
            written: std::collections::HashMap::new(),
            screen: None,
            undo: None,
            next_request: None,
            export: None,
            palette: None,
        }
    }

    // ----- the run loop's and the harness's side --------------------------------------------

    /// Advance the clock; asks for a read when one is due.
    pub fn tick(&mut self, ui_now: Instant, wall_ms: i64) {
        self.now_ms = self.cfg.now_override.unwrap_or(wall_ms);
        let due = self
            .last_refresh
            .is_none_or(|t| ui_now.duration_since(t) >= self.cfg.refresh);
        if due {
            self.last_refresh = Some(ui_now);
            self.request_refresh();
        }
    }

    /// Read the list again, and the opened submission. Before the first list is in, its rows
    /// are asked for first, to be drawn while the view's streams fold.
    pub fn request_refresh(&mut self) {
        if !self.loaded {
            self.requests.push(Flue2Request::Rows {
                now_ms: self.now_ms,
            });
        }
        self.requests.push(Flue2Request::List {
            now_ms: self.now_ms,
            view: self.list.view,
        });
        if let Some(d) = &self.detail {
            self.requests.push(Flue2Request::Show {
                id: d.id.clone(),
                now_ms: self.now_ms,
            });
        }
        self.refresh_screen();
    }

    pub fn take_requests(&mut self) -> Vec<Flue2Request> {
        std::mem::take(&mut self.requests)
    }

    /// Texts for the clipboard since the last call.
    pub fn take_copies(&mut self) -> Vec<String> {
        std::mem::take(&mut self.copies)
    }

    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    pub fn on_response(&mut self, resp: Flue2Response) {
        match resp {
            Flue2Response::List(Ok(answer)) => {
                self.loaded = true;
                self.classifying = false;
                self.error = None;
                for a in &answer.runtime_acted {
                    let (Some(id), Some(mark), Some(predicted)) = (
                        a["submissionId"].as_str(),
                        a["mark"].as_str(),
                        a["predicted"].as_str(),
                    ) else {
                        continue;
                    };
                    self.written
                        .insert(id.to_string(), format!("{mark} {predicted}"));
                    self.status = a["line"].as_str().map(String::from);
                }
                let mut rows = answer.rows;
                for r in &mut rows {
                    if let Some(cell) = self.written.get(&r.id) {
                        r.next = cell.clone();
                    }
                }
                self.list.set_rows(rows, self.now_ms);
                let gone = self.list.drop_gone_marks();
                if !gone.is_empty() {
                    self.status = Some(format!(
                        "{} mark(s) dropped: no longer in the journal ({})",
                        gone.len(),
                        clean(&gone.join(", "))
                    ));
                }
            }
            Flue2Response::PlannedBulk { ask, what, result } => {
                self.on_planned_bulk(ask, what, result)
            }
            Flue2Response::AppliedBulk { ask, result } => self.on_applied_bulk(ask, result),
            Flue2Response::List(Err(e)) => {
                self.error = Some(e);
                self.classifying = false;
            }
            // Only until the first list is in: after it, a row's cells are its list's.
            Flue2Response::Rows(Ok(rows)) if !self.loaded => {
                self.list.set_rows(rows, self.now_ms);
                self.classifying = self.list.mark_unclassified() > 0;
            }
            Flue2Response::Rows(_) => {}
            Flue2Response::Planned { ask, result } => {
                self.write = match result {
                    Ok(Ok((plan, now))) => Some(write::Flow::Confirm {
                        lines: write::confirm_lines(&plan, now),
                        plan,
                        reason: match ask {
                            write::Ask::Fail(r) => Some(r),
                            _ => None,
                        },
                        yes: false,
                    }),
                    Ok(Err(refusal)) => {
                        self.status = Some(format!(
                            "{} refused, nothing written: {} — {}",
                            ask.name(),
                            refusal.reason,
                            refusal.instead
                        ));
                        None
                    }
                    Err(e) => {
                        self.status = Some(format!("{}: {}", ask.name(), e.line()));
                        None
                    }
                };
            }
            Flue2Response::Applied { plan, result } => {
                let title = {
                    let mut t = plan.action.to_string();
                    if let Some(c) = t.get_mut(0..1) {
                        c.make_ascii_uppercase();
                    }
                    t
                };
                if result.is_ok() && acted::awaited(&plan).is_some() {
                    let predicted = acted::predicted(&plan).step.column();
                    self.written
                        .insert(plan.fence.submission_id.clone(), format!("⋯ {predicted}"));
                }
                self.write = Some(match result {
                    Ok(a) => write::Flow::Done {
                        title: format!("{title} applied"),
                        lines: vec![
                            format!(
                                "applied: {} row written · audit #{} · write lock held {:.1} ms",
                                a.rows_written,
                                a.audit_id,
                                a.lock_held.as_secs_f64() * 1000.0
                            ),
                            format!(
                                "the runtime's next pass: {}: {}",
                                plan.next.step.column(),
                                plan.next.why
                            ),
                            format!(
                                "undo while the runtime has not acted: turnscope --write undo {}",
                                a.audit_id
                            ),
                        ],
                    },
                    Err(why) => write::Flow::Done {
                        title: format!("{title} not applied"),
                        lines: vec![why],
                    },
                });
                self.request_refresh();
            }
            Flue2Response::Screen(r) => self.on_screen_response(r),
            Flue2Response::Exported(r) => self.on_exported(r),
            Flue2Response::WriteMode(r) => self.on_write_mode(r),
            Flue2Response::NextRequest(result) => match result {
                Ok((title, lines)) if self.next_request.is_some() => {
                    self.next_request = Some(next_request::Pane::Shown {
                        title,
                        lines,
                        scroll: 0,
                        page: 0,
                    })
                }
                Ok(_) => {}
                Err(e) => {
                    self.next_request = None;
                    self.status = Some(format!("next request: {}", e.line()));
                }
            },
            Flue2Response::Show { id, result } => {
                if let Some(d) = self.detail.as_mut().filter(|d| d.id == id) {
                    match result {
                        Ok(doc) => {
                            d.doc = Some(doc);
                            d.entry_rows = detail::EntryRows::default();
                            d.error = None;
                            self.refind_in_detail();
                        }
                        Err(e) => d.error = Some(e),
                    }
                }
            }
        }
    }

    // ----- what tests ask -------------------------------------------------------------------

    /// The ids the list shows, in order.
    pub fn shown_ids(&self) -> Vec<String> {
        self.list
            .shown(self.now_ms)
            .iter()
            .map(|r| r.id.clone())
            .collect()
    }

    /// The selected row's index among the rows the list shows.
    pub fn selected_index(&self) -> usize {
        self.list.selected
    }

    /// The rows the list shows.
    pub fn shown_rows(&self) -> Vec<list::ListRow> {
        self.list.shown(self.now_ms).into_iter().cloned().collect()
    }

    pub fn view_name(&self) -> &'static str {
        self.list.view.name()
    }

    /// The opened submission's id.
    pub fn opened(&self) -> Option<&str> {
        self.detail.as_ref().map(|d| d.id.as_str())
    }

    /// The opened submission's `show --json` document, once read (`to_value` for the tree).
    pub fn opened_doc(&self) -> Option<&CompactShow> {
        self.detail.as_ref().and_then(|d| d.doc.as_ref())
    }

    /// The detail's lines as text, each with whether it is highlighted as the trailing batch.
    pub fn detail_text(&self) -> Vec<(String, bool)> {
        let Some(doc) = self.opened_doc() else {
            return Vec::new();
        };
        detail::lines(doc, self.cfg.theme, self.now_ms)
            .into_iter()
            .map(|l| {
                let text: String = l.line.spans.iter().map(|s| s.content.as_ref()).collect();
                (text, l.partial)
            })
            .collect()
    }

    pub fn status_text(&self) -> Option<String> {
        self.error
            .as_ref()
            .map(WorkerError::line)
            .or_else(|| self.status.clone())
    }

    /// The marked submissions, in list order.
    pub fn marked(&self) -> Vec<String> {
        self.list.marked_in_order()
    }

    pub fn help_open(&self) -> bool {
        self.help.is_some()
    }

    // ----- keys ----------------------------------------------------------------------------

    fn contexts(&self) -> &'static [Ctx] {
        if self.detail.is_some() {
            &[Ctx::Nav, Ctx::Global]
        } else {
            &[Ctx::List, Ctx::Nav, Ctx::Global]
        }
    }

    pub fn on_key(&mut self, ev: KeyEvent) {
        if ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if let Some(view) = self.help.as_mut() {
            let action = keymap::lookup_with(&[Ctx::Nav, Ctx::Global], &ev, false, &self.cfg.keys);
            match view.on_action(action) {
                HelpKey::Stay => {}
                HelpKey::Close => self.help = None,
                HelpKey::Quit => {
                    self.help = None;
                    self.quit = true;
                }
            }
            return;
        }
        if self.export.is_some() {
            return self.export_key(ev);
        }
        if self.palette.is_some() {
            return self.palette_key(ev);
        }
        if let Some(flow) = self.write.as_mut() {
            match flow.on_key(ev) {
                write::Step::Stay => {}
                write::Step::Close => {
                    if matches!(
                        flow,
                        write::Flow::Confirm { .. }
                            | write::Flow::Reason { .. }
                            | write::Flow::BulkConfirm(_)
                    ) {
                        self.status = Some("declined: nothing written".into());
                    }
                    if matches!(flow, write::Flow::EnableWrites { .. }) {
                        self.status = Some("still read-only".into());
                    }
                    self.write = None;
                }
                write::Step::Plan { targets, ask } => {
                    let w = self.plan(targets, ask);
                    self.write = Some(w);
                }
                write::Step::Apply { plan, reason } => {
                    self.write = Some(write::Flow::Waiting(format!("applying {}…", plan.action)));
                    self.requests.push(Flue2Request::Apply {
                        plan,
                        operator: self.cfg.operator.clone(),
                        reason,
                    });
                }
                step @ (write::Step::ApplyBulk { .. } | write::Step::Undo(_)) => {
                    self.bulk_step(step)
                }
                write::Step::EnableWrites => self.request_write_mode(),
            }
            return;
        }
        if let Some(p) = self.next_request.as_mut() {
            if !p.on_key(ev) {
                self.next_request = None;
            }
            return;
        }
        if self.searching {
            self.search_key(ev);
            return;
        }
        if self.detail.is_some() && self.detail_search_key(&ev) {
            return;
        }
        if self.screen_key(ev) {
            return;
        }
        if let (true, KeyCode::Char(c), false, true) = (
            self.cfg.write,
            ev.code,
            ev.modifiers.contains(KeyModifiers::CONTROL),
            self.screen.is_none() || self.detail.is_some(),
        ) {
            if let Some(ask) = write::ask_of(c) {
                self.start_write(ask);
                return;
            }
        }
        // The marks exist only in write mode (the keymap's write bindings).
        if self.cfg.write && self.detail.is_none() && self.screen.is_none() {
            match keymap::lookup_with(&[Ctx::List], &ev, true, &self.cfg.keys) {
                Some(Action::ToggleMark) => return self.toggle_row_mark(),
                Some(Action::MarkAll) => return self.mark_all_shown(),
                Some(Action::MarkRange) => return self.mark_range(),
                Some(Action::ClearMarks) => return self.clear_marks(),
                _ => {}
            }
        }
        let action = keymap::lookup_with(self.contexts(), &ev, false, &self.cfg.keys);
        // `M` is an inspect key: of those, the 2.x screens answer the next request only.
        if action.is_none()
            && keymap::lookup_with(&[Ctx::Inspect], &ev, false, &self.cfg.keys)
                == Some(Action::NextRequest)
        {
            self.open_next_request();
            return;
        }
        self.status = None;
        match action {
            Some(a) if HANDLED.iter().any(|(h, _)| *h == a) => self.act(a),
            // The screens open over the list (`screen_key`), not over a detail.
            Some(
                a @ (Action::ToggleSessions
                | Action::FindSession
                | Action::ToggleIncidents
                | Action::ToggleAudit),
            ) if self.detail.is_some() => {
                self.status = Some(format!(
                    "{} opens from the list: esc closes this submission first",
                    keymap::action_name(a).replace('_', " ")
                ))
            }
            Some(a) => {
                self.status = Some(format!(
                    "{} does not read flue 2.x journals yet: this journal has the submissions list, their detail, sessions, incidents and the audit trail",
                    keymap::action_name(a).replace('_', " ")
                ))
            }
            None => {}
        }
    }

    fn search_key(&mut self, ev: KeyEvent) {
        let keep = self.list.selected_id(self.now_ms);
        match ev.code {
            KeyCode::Enter => self.searching = false,
            KeyCode::Esc => {
                self.searching = false;
                self.list.query.clear();
            }
            KeyCode::Backspace => {
                self.list.query.pop();
            }
            KeyCode::Char(c) if !ev.modifiers.contains(KeyModifiers::CONTROL) => {
                self.list.query.push(c)
            }
            _ => {}
        }
        self.list.select_id(keep.as_deref(), self.now_ms);
    }

    fn act(&mut self, a: Action) {
        let now = self.now_ms;
        if let Some(d) = self.detail.as_mut() {
            // The rows as last drawn bound the scroll.
            let last = d.rows.saturating_sub(d.page.max(1));
            let page = d.page.max(1);
            match a {
                Action::Down => d.scroll = (d.scroll + 1).min(last),
                Action::Up => d.scroll = d.scroll.saturating_sub(1),
                Action::PageDown => d.scroll = (d.scroll + page).min(last),
                Action::PageUp => d.scroll = d.scroll.saturating_sub(page),
                Action::Top => d.scroll = 0,
                Action::Bottom => d.scroll = last,
                Action::Back => self.detail = None,
                Action::Copy => self.copies.push(d.id.clone()),
                _ => {}
            }
        } else {
            let page = self.list.page.max(1) as isize;
            match a {
                Action::Down => self.list.move_by(1, now),
                Action::Up => self.list.move_by(-1, now),
                Action::PageDown => self.list.move_by(page, now),
                Action::PageUp => self.list.move_by(-page, now),
                Action::Top => self.list.move_by(isize::MIN / 2, now),
                Action::Bottom => self.list.move_by(isize::MAX / 2, now),
                Action::Enter => self.open_selected(),
                Action::Filter(f) => match view_of(f) {
                    Some(v) => {
                        let keep = self.list.selected_id(now);
                        let changed = self.list.view != v;
                        self.list.view = v;
                        self.list.select_id(keep.as_deref(), now);
                        // Only the view's rows are classified: read the new one's, its rows
                        // not classified yet marked as being read until it is in.
                        if changed {
                            self.classifying = self.list.mark_unclassified() > 0;
                            self.requests.push(Flue2Request::List {
                                now_ms: self.now_ms,
                                view: v,
                            });
                        }
                    }
                    None => {
                        self.status = Some(
                            "a flue 2.x row has no failed status: 6 shows the settled rows, each with its settlement outcome in its detail".into(),
                        )
                    }
                },
                Action::SortNext | Action::SortReverse => {
                    self.status = Some(self.list.sort_by(a == Action::SortNext, now));
                }
                Action::StartFilter => self.searching = true,
                Action::Back => {
                    let keep = self.list.selected_id(now);
                    if self.list.query.is_empty() {
                        self.list.narrow = None;
                    }
                    self.list.query.clear();
                    self.list.select_id(keep.as_deref(), now);
                }
                Action::Copy => {
                    if let Some(id) = self.list.selected_id(now) {
                        self.copies.push(id);
                    }
                }
                _ => {}
            }
        }
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.help = Some(HelpView::default()),
            Action::Refresh => self.request_refresh(),
            Action::Palette => self.open_palette(),
            Action::Export => self.start_export(),
            Action::ToggleWriteMode => self.toggle_write_mode(),
            Action::Copy if !self.copies.is_empty() => {
                self.status = self.copies.last().map(|id| format!("copied {id}"))
            }
            _ => {}
        }
    }

    /// `M`: the next request of the opened submission, else the selected row.
    fn open_next_request(&mut self) {
        let id = match &self.detail {
            Some(d) => Some(d.id.clone()),
            None => self.list.selected_id(self.now_ms),
        };
        let Some(id) = id else {
            self.status = Some("select a submission first".into());
            return;
        };
        self.next_request = Some(next_request::Pane::Reading(format!(
            "reading the next request of {}…",
            clean(&id)
        )));
        self.requests.push(Flue2Request::NextRequest {
            id,
            now_ms: self.now_ms,
        });
    }

    /// The next-request pane's text, where open (for tests).
    pub fn next_request_text(&self) -> Option<Vec<String>> {
        self.next_request.as_ref().map(next_request::Pane::text)
    }

    /// The write under way's title and text, for tests.
    pub fn write_popup(&self) -> Option<(String, Vec<String>)> {
        self.write.as_ref().map(|w| (w.title(), w.body()))
    }

    fn open_selected(&mut self) {
        if let Some(id) = self.list.selected_id(self.now_ms) {
            self.open_id(id);
        }
    }

    fn open_id(&mut self, id: String) {
        self.requests.push(Flue2Request::Show {
            id: id.clone(),
            now_ms: self.now_ms,
        });
        self.detail = Some(Detail {
            id,
            doc: None,
            error: None,
            scroll: 0,
            page: 0,
            rows: 0,
            entry_rows: detail::EntryRows::default(),
            width: 0,
            search: None,
        });
    }

    /// The key that does `a` here (the configuration file's, else the keymap's label).
    fn key_label(&self, a: Action) -> String {
        if let Some(k) = self.cfg.keys.key_for(a) {
            return keymap::key_label(&k);
        }
        KEYMAP
            .iter()
            .find(|b| b.action == a && !b.write)
            .map_or_else(|| "?".into(), |b| b.label.to_string())
    }

    /// The key of a write-mode binding of the list (space, `u`): the configuration file's, else
    /// the keymap's label.
    fn write_key_label(&self, a: Action) -> String {
        if let Some(k) = self.cfg.keys.key_for(a) {
            return keymap::key_label(&k);
        }
        KEYMAP
            .iter()
            .find(|b| b.action == a && b.ctx == Ctx::List)
            .map_or_else(|| "?".into(), |b| b.label.to_string())
    }
}
