//! The 2.x sessions, incidents and audit screens: each draws what the worker read with the CLI's
//! own computation (`screens_worker.rs`), with beta.7's keys where they apply (`s`/`f`, `I`,
//! `a`; ⏎, `/`, esc, and in write mode `u`/`U` on the audit trail). Nothing is computed here
//! but the layout and a text filter over the cells.
//!
//! * **Sessions**: every agent instance (one stream each), or those a query names, as
//!   `turnscope sessions QUERY --text QUERY` finds them (ids first, then from 3 characters the
//!   text of their records); ⏎ opens the instance's submissions in the list.
//! * **Incidents**: `incidents --json`'s groups (the expired leases per worker, the steps that
//!   fire next); ⏎ opens the worker's stuck submissions in the list. In write mode the WORKER
//!   cell says how many of the worker's submissions are marked (`marks.rs`: space marks them).
//! * **Audit**: `audit --json`'s records, newest first, with the record that undid each; ⏎ opens
//!   the submission; `u` undoes the record, `U` its bulk apply (write mode, previewed).

use std::collections::HashMap;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;
use serde_json::Value;

use super::list::View;
use super::screens_messages::{HealthCell, ScreenRequest, TextState};
use crate::keymap::{Action, Ctx};
use crate::text::{clean, fit};
use crate::theme::Theme;
use crate::widgets::{render_selectable, scroll_into_view, table_header};
use crate::worker_error::WorkerError;

/// A table's cursor.
#[derive(Debug, Default, Clone)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
    pub page: usize,
}

impl Cursor {
    fn act(&mut self, a: Action, n: usize) -> bool {
        let last = n.saturating_sub(1);
        let page = self.page.max(1);
        self.selected = match a {
            Action::Down => (self.selected + 1).min(last),
            Action::Up => self.selected.saturating_sub(1),
            Action::PageDown => (self.selected + page).min(last),
            Action::PageUp => self.selected.saturating_sub(page),
            Action::Top => 0,
            Action::Bottom => last,
            _ => return false,
        };
        true
    }
}

/// Where the sessions screen's text search is: instances searched of how many.
#[derive(Debug, Clone, PartialEq)]
pub struct TextSearch {
    pub searched: usize,
    pub total: usize,
    pub state: TextState,
}

impl Default for TextSearch {
    fn default() -> TextSearch {
        TextSearch {
            searched: 0,
            total: 0,
            state: TextState::Running,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Screen {
    Sessions {
        query: String,
        typing: bool,
        /// The query the rows answer.
        asked: Option<String>,
        rows: Option<Result<Vec<Value>, WorkerError>>,
        cursor: Cursor,
        /// Each instance's health by stream path: `None` while asked.
        health: HashMap<String, Option<Result<HealthCell, String>>>,
        /// The text search of `asked`, where one runs or ran (its matches join `rows`).
        text: Option<TextSearch>,
    },
    Incidents {
        doc: Option<Result<Value, WorkerError>>,
        cursor: Cursor,
    },
    Audit {
        records: Option<Result<Vec<Value>, WorkerError>>,
        filter: String,
        typing: bool,
        cursor: Cursor,
    },
}

/// What a key on a screen asks the app for.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    Nothing,
    Close,
    Ask(ScreenRequest),
    /// The list, narrowed to these submissions, in this view.
    Narrow {
        label: String,
        ids: Vec<String>,
        view: View,
    },
    /// A submission's detail.
    Open(String),
    /// Undo an audit id or a batch id (write mode).
    Undo(String),
    Status(String),
    Copy(String),
}

impl Screen {
    pub fn sessions(typing: bool) -> Screen {
        Screen::Sessions {
            query: String::new(),
            typing,
            asked: None,
            rows: None,
            cursor: Cursor::default(),
            health: HashMap::new(),
            text: None,
        }
    }

    /// A text search's message (`ScreenResponse::SessionsText`): its matches joined to the rows
    /// of the query it answers, its progress kept; a message of another query is dropped.
    pub fn on_text(
        &mut self,
        query: &str,
        found: Vec<Value>,
        searched: usize,
        total: usize,
        state: TextState,
    ) {
        let Screen::Sessions {
            asked,
            rows,
            text: Some(t),
            ..
        } = self
        else {
            return;
        };
        if asked.as_deref().unwrap_or_default() != query {
            return;
        }
        if let Some(Ok(rows)) = rows {
            rows.extend(found);
        }
        t.searched = searched;
        t.total = total;
        // Stopped here already (esc): the thread's last word is the count it reached.
        if t.state == TextState::Running || state != TextState::Done {
            t.state = state;
        }
    }

    /// The stream paths of the sessions rows in view (the cursor's page, at least the first
    /// [`HEALTH_WINDOW`] rows from its offset) whose health was not asked yet, now marked asked.
    pub fn take_health_asks(&mut self) -> Vec<String> {
        let Screen::Sessions {
            rows: Some(Ok(rows)),
            cursor,
            health,
            ..
        } = self
        else {
            return Vec::new();
        };
        let window = cursor.page.max(HEALTH_WINDOW);
        let start = cursor.offset.min(cursor.selected);
        let mut asks = Vec::new();
        for r in rows.iter().skip(start).take(window) {
            if let Some(s) = r["stream"].as_str() {
                if !health.contains_key(s) {
                    health.insert(s.to_string(), None);
                    asks.push(s.to_string());
                }
            }
        }
        asks
    }

    /// Each sessions row's stream and HEALTH cell.
    pub fn health_cells(&self) -> Vec<(String, String)> {
        let Screen::Sessions { health, .. } = self else {
            return Vec::new();
        };
        self.rows()
            .iter()
            .filter_map(|r| r["stream"].as_str())
            .map(|s| (s.to_string(), health_cell(health.get(s))))
            .collect()
    }

    /// The worker's answers to [`Screen::take_health_asks`].
    pub fn on_health(&mut self, answers: Vec<(String, Result<HealthCell, WorkerError>)>) {
        if let Screen::Sessions { health, .. } = self {
            for (s, r) in answers {
                health.insert(s, Some(r.map_err(|e| e.line())));
            }
        }
    }

    pub fn incidents() -> Screen {
        Screen::Incidents {
            doc: None,
            cursor: Cursor::default(),
        }
    }

    pub fn audit() -> Screen {
        Screen::Audit {
            records: None,
            filter: String::new(),
            typing: false,
            cursor: Cursor::default(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Screen::Sessions { .. } => "Sessions",
            Screen::Incidents { .. } => "Incidents",
            Screen::Audit { .. } => "Audit trail",
        }
    }

    pub fn ctx(&self) -> Ctx {
        match self {
            Screen::Sessions { .. } => Ctx::Sessions,
            Screen::Incidents { .. } => Ctx::Incidents,
            Screen::Audit { .. } => Ctx::Audit,
        }
    }

    /// The read that fills the screen (again), at `now_ms`.
    pub fn read(&self, now_ms: i64) -> ScreenRequest {
        match self {
            Screen::Sessions { asked, .. } => ScreenRequest::Sessions {
                query: asked.clone().unwrap_or_default(),
            },
            Screen::Incidents { .. } => ScreenRequest::Incidents { now_ms },
            Screen::Audit { .. } => ScreenRequest::Audit,
        }
    }

    pub fn typing(&self) -> bool {
        matches!(
            self,
            Screen::Sessions { typing: true, .. } | Screen::Audit { typing: true, .. }
        )
    }

    /// The rows the screen shows, as the CLI's `--json` holds them: the sessions' matches (or
    /// instances), the incidents' groups, the audit records the filter keeps.
    pub fn rows(&self) -> Vec<Value> {
        match self {
            Screen::Sessions {
                rows: Some(Ok(r)), ..
            } => r.clone(),
            Screen::Incidents {
                doc: Some(Ok(d)), ..
            } => d["groups"].as_array().cloned().unwrap_or_default(),
            Screen::Audit {
                records: Some(Ok(r)),
                filter,
                ..
            } => {
                let q = filter.to_lowercase();
                r.iter()
                    .filter(|a| {
                        q.is_empty()
                            || audit_cells(a, r)
                                .iter()
                                .any(|c| c.to_lowercase().contains(&q))
                    })
                    .cloned()
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn cursor(&mut self) -> &mut Cursor {
        match self {
            Screen::Sessions { cursor, .. }
            | Screen::Incidents { cursor, .. }
            | Screen::Audit { cursor, .. } => cursor,
        }
    }

    /// The selected row.
    pub fn selected(&self) -> Option<Value> {
        let n = match self {
            Screen::Sessions { cursor, .. }
            | Screen::Incidents { cursor, .. }
            | Screen::Audit { cursor, .. } => cursor.selected,
        };
        self.rows().get(n).cloned()
    }

    /// A key while a query or filter is typed.
    pub fn type_key(&mut self, code: crossterm::event::KeyCode) -> Out {
        use crossterm::event::KeyCode;
        let (text, typing) = match self {
            Screen::Sessions { query, typing, .. } => (query, typing),
            Screen::Audit { filter, typing, .. } => (filter, typing),
            Screen::Incidents { .. } => return Out::Nothing,
        };
        match code {
            KeyCode::Enter => {
                *typing = false;
                if let Screen::Sessions {
                    query,
                    asked,
                    rows,
                    cursor,
                    text,
                    ..
                } = self
                {
                    *asked = Some(query.trim().to_string());
                    *rows = None;
                    *cursor = Cursor::default();
                    *text = None;
                    return Out::Ask(ScreenRequest::Sessions {
                        query: query.trim().to_string(),
                    });
                }
            }
            KeyCode::Esc => {
                *typing = false;
                text.clear();
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) => text.push(c),
            _ => {}
        }
        self.cursor().selected = 0;
        Out::Nothing
    }

    /// An action of the keymap on this screen (the app handles the global ones).
    pub fn act(&mut self, a: Action) -> Out {
        let n = self.rows().len();
        if self.cursor().act(a, n) {
            return Out::Nothing;
        }
        match a {
            Action::StartFilter => match self {
                Screen::Sessions { typing, .. } | Screen::Audit { typing, .. } => {
                    *typing = true;
                    Out::Nothing
                }
                Screen::Incidents { .. } => Out::Nothing,
            },
            Action::Back => match self {
                // esc stops a text search first (what it found stays).
                Screen::Sessions {
                    text:
                        Some(
                            t @ TextSearch {
                                state: TextState::Running,
                                ..
                            },
                        ),
                    ..
                } => {
                    t.state = TextState::Stopped;
                    Out::Ask(ScreenRequest::StopSearch)
                }
                Screen::Sessions {
                    query,
                    asked,
                    rows,
                    cursor,
                    text,
                    ..
                } if asked.as_deref().is_some_and(|q| !q.is_empty()) => {
                    query.clear();
                    *asked = None;
                    *rows = None;
                    *cursor = Cursor::default();
                    *text = None;
                    Out::Ask(ScreenRequest::Sessions {
                        query: String::new(),
                    })
                }
                Screen::Audit { filter, cursor, .. } if !filter.is_empty() => {
                    filter.clear();
                    *cursor = Cursor::default();
                    Out::Nothing
                }
                _ => Out::Close,
            },
            Action::Enter => self.enter(),
            Action::Copy => match self.selected() {
                Some(v) => {
                    let id = match self {
                        Screen::Sessions { .. } => v["stream"].clone(),
                        Screen::Incidents { .. } => v["ownerId"].clone(),
                        Screen::Audit { .. } => v["submission_id"].clone(),
                    };
                    id.as_str()
                        .map_or(Out::Nothing, |s| Out::Copy(s.to_string()))
                }
                None => Out::Nothing,
            },
            Action::Undo { batch } => self.undo(batch),
            _ => Out::Nothing,
        }
    }

    fn enter(&self) -> Out {
        let Some(v) = self.selected() else {
            return Out::Nothing;
        };
        match self {
            Screen::Sessions { .. } => match v["stream"].as_str() {
                Some(s) => Out::Ask(ScreenRequest::InstanceRows {
                    stream: s.to_string(),
                }),
                None => Out::Nothing,
            },
            Screen::Incidents { .. } => Out::Narrow {
                label: group_who(&v),
                ids: v["submissions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect(),
                view: View::Expired,
            },
            Screen::Audit { .. } => match v["submission_id"].as_str() {
                Some(id) if !id.is_empty() => Out::Open(id.to_string()),
                _ => Out::Status("this record names no submission".into()),
            },
        }
    }

    /// `u`/`U`: where the trail already shows the undo would be refused, say so and ask nothing.
    fn undo(&self, batch: bool) -> Out {
        let Screen::Audit {
            records: Some(Ok(all)),
            ..
        } = self
        else {
            return Out::Nothing;
        };
        let Some(v) = self.selected() else {
            return Out::Nothing;
        };
        let id = v["id"].as_i64().unwrap_or(0);
        if batch {
            return match v["batch"].as_str() {
                Some(b) => Out::Undo(b.to_string()),
                None => Out::Status(format!(
                    "audit #{id} is not part of a bulk apply: u undoes it alone"
                )),
            };
        }
        if let Some(by) = undone_by(id, all) {
            return Out::Status(format!(
                "audit #{id} was undone already (by audit #{by}): nothing to undo"
            ));
        }
        if v["changes"].is_null() {
            return Out::Status(format!(
                "audit #{id} was written without row images: it cannot be undone"
            ));
        }
        Out::Undo(id.to_string())
    }

    // ----- drawing ---------------------------------------------------------------------------

    /// The nav line's part after the screen's name.
    pub fn nav(&self) -> Option<String> {
        match self {
            Screen::Sessions {
                query,
                typing,
                asked,
                ..
            } => {
                if *typing {
                    Some(format!("/{}▏", clean(query)))
                } else {
                    asked
                        .as_deref()
                        .filter(|q| !q.is_empty())
                        .map(|q| format!("/{}", clean(q)))
                }
            }
            Screen::Audit { filter, typing, .. } if *typing || !filter.is_empty() => Some(format!(
                "/{}{}",
                clean(filter),
                if *typing { "▏" } else { "" }
            )),
            _ => None,
        }
    }

    /// The status line's text.
    pub fn status(&self) -> String {
        let n = self.rows().len();
        match self {
            Screen::Sessions {
                asked, rows, text, ..
            } => match (asked.as_deref(), rows) {
                (_, None) => " reading…".into(),
                (Some(q), Some(Ok(_))) if !q.is_empty() => match text {
                    Some(TextSearch {
                        searched,
                        total,
                        state: TextState::Running,
                    }) => format!(
                        " {n} match(es) for {:?} · searching text: {searched} of {total} instances · esc stops",
                        clean(q)
                    ),
                    Some(TextSearch {
                        searched,
                        total,
                        state: TextState::Stopped,
                    }) => format!(
                        " {n} match(es) for {:?} · text search stopped after {searched} of {total} instances · ⏎ the instance's submissions",
                        clean(q)
                    ),
                    Some(TextSearch {
                        state: TextState::Failed(e),
                        ..
                    }) => format!(" {n} match(es) for {:?} · the text search failed: {e}", clean(q)),
                    _ => format!(
                        " {n} match(es) for {:?} (ids; text from 3 characters) · ⏎ the instance's submissions",
                        clean(q)
                    ),
                },
                (_, Some(Ok(_))) => format!(" {n} agent instance(s) · / finds one by id or text · ⏎ its submissions"),
                (_, Some(Err(e))) => format!(" {}", e.line()),
            },
            Screen::Incidents { doc, .. } => match doc {
                Some(Ok(d)) => format!(
                    " {} stuck submission(s), {n} worker(s) · ⏎ the worker's submissions in the list",
                    d["stuck"]
                ),
                Some(Err(e)) => format!(" {}", e.line()),
                None => " reading…".into(),
            },
            Screen::Audit { records, .. } => match records {
                Some(Ok(r)) if r.is_empty() => " no turnscope action was ever applied to this database".into(),
                Some(Ok(r)) => format!(" {n} of {} audit record(s), newest first · ⏎ the submission", r.len()),
                Some(Err(e)) => format!(" {}", e.line()),
                None => " reading…".into(),
            },
        }
    }

    /// `marks`: the list's, in write mode (the incidents' WORKER cell says how many of each
    /// worker's submissions are marked).
    pub fn draw(
        &mut self,
        f: &mut Frame,
        t: &Theme,
        now_ms: i64,
        area: Rect,
        marks: Option<&std::collections::HashSet<String>>,
    ) {
        let rows = self.rows();
        match self {
            Screen::Sessions { cursor, health, .. } => {
                let cells: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| {
                        let mut c = session_cells(r);
                        c.insert(
                            1,
                            health_cell(r["stream"].as_str().and_then(|s| health.get(s))),
                        );
                        c
                    })
                    .collect();
                let titles = if rows.first().is_some_and(|r| r.get("matched").is_some()) {
                    vec!["STREAM", "HEALTH", "MATCHED", "VALUE"]
                } else {
                    vec!["STREAM", "HEALTH", "INSTANCE"]
                };
                draw_table(f, t, area, &titles, &cells, cursor, &[]);
            }
            Screen::Incidents { doc, cursor } => {
                let cells: Vec<Vec<String>> = rows
                    .iter()
                    .map(|g| {
                        vec![
                            match marks {
                                Some(m) => format!("{}{}", mark_of(g, m), group_who(g)),
                                None => group_who(g),
                            },
                            g["count"].to_string(),
                            super::cost::sum_text(&g["cost"]),
                            clean(g["summary"].as_str().unwrap_or("")),
                        ]
                    })
                    .collect();
                let strip = if area.height >= 14 { 8 } else { 0 };
                let [top, below] =
                    Layout::vertical([Constraint::Fill(1), Constraint::Length(strip)]).areas(area);
                draw_table(
                    f,
                    t,
                    top,
                    &["WORKER", "STUCK", "COST", "WHAT HAPPENED"],
                    &cells,
                    cursor,
                    &[],
                );
                if let Some(g) = rows.get(cursor.selected) {
                    let mut lines = vec![Line::styled(
                        format!(
                            "{} · {}",
                            group_who(g),
                            clean(g["ownerId"].as_str().unwrap_or("-"))
                        ),
                        t.title(),
                    )];
                    for p in g["plans"].as_array().into_iter().flatten() {
                        lines.push(Line::raw(format!(
                            "  {} × {}",
                            p["count"],
                            clean(p["label"].as_str().unwrap_or(""))
                        )));
                    }
                    let subs: Vec<String> = g["submissions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s.as_str().map(clean))
                        .collect();
                    // As `turnscope incidents` words it: the worker's, then every stuck one's.
                    let all = doc.as_ref().and_then(|d| d.as_ref().ok());
                    lines.push(Line::raw(format!(
                        "  cost {} since the inputs ({} tokens) · all {} stuck: {}",
                        super::cost::sum_text(&g["cost"]),
                        g["cost"]["totalTokens"].as_u64().unwrap_or(0),
                        all.map_or(Value::Null, |d| d["stuck"].clone()),
                        all.map_or_else(|| "-".into(), |d| super::cost::sum_text(&d["cost"])),
                    )));
                    lines.push(Line::raw(format!("  {}", subs.join(" "))));
                    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), below);
                } else if matches!(doc, Some(Ok(_))) {
                    f.render_widget(
                        Paragraph::new(Span::styled(
                            " no submission has an expired lease: no worker left anything stuck",
                            t.dim(),
                        )),
                        below,
                    );
                }
            }
            Screen::Audit {
                records, cursor, ..
            } => {
                let all = match records {
                    Some(Ok(r)) => r.clone(),
                    _ => Vec::new(),
                };
                let cells: Vec<Vec<String>> = rows.iter().map(|a| audit_cells(a, &all)).collect();
                let _ = now_ms;
                draw_table(
                    f,
                    t,
                    area,
                    &[
                        "ID",
                        "AT",
                        "OPERATOR",
                        "ACTION",
                        "SUBMISSION",
                        "REASON",
                        "BATCH",
                        "UNDONE",
                        "SUMMARY",
                    ],
                    &cells,
                    cursor,
                    &[(7, t.warn())],
                );
            }
        }
    }
}

/// `worker 9f2c1a0b`, or `no owner recorded`, as the incidents' headline names a group.
pub(super) fn group_who(g: &Value) -> String {
    match g["ownerId"].as_str() {
        Some(o) => format!(
            "worker {}",
            clean(&turnscope_core::journal::submission_rows::short_id(o))
        ),
        None => "no owner recorded".into(),
    }
}

/// `●` every submission of the group marked, `◐` some, a space none (beta.7's glyphs).
fn mark_of(g: &Value, marks: &std::collections::HashSet<String>) -> &'static str {
    let ids: Vec<&str> = g["submissions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match ids.iter().filter(|s| marks.contains(**s)).count() {
        0 => " ",
        n if n == ids.len() => "●",
        _ => "◐",
    }
}

/// How many rows from the cursor's offset the HEALTH column asks for before the first draw
/// says how many fit.
pub const HEALTH_WINDOW: usize = 40;

/// The HEALTH cell: `…` while asked, `ok`, the findings and the first one's kind, or `?`.
fn health_cell(h: Option<&Option<Result<HealthCell, String>>>) -> String {
    match h {
        None | Some(None) => "…".into(),
        Some(Some(Ok(c))) => match &c.first {
            None => "ok".into(),
            Some(kind) => format!("{} {}", c.findings, kind),
        },
        Some(Some(Err(_))) => "?".into(),
    }
}

fn session_cells(v: &Value) -> Vec<String> {
    let s = |k: &str| clean(v[k].as_str().unwrap_or(""));
    match v.get("matched") {
        Some(m) => {
            let kind = m.as_str().unwrap_or("");
            let value = match v["record"].as_object() {
                Some(r) => format!(
                    "record {} ({}) in batch {}: {}",
                    clean(r.get("id").and_then(Value::as_str).unwrap_or("")),
                    clean(r.get("type").and_then(Value::as_str).unwrap_or("")),
                    r.get("seq").and_then(Value::as_i64).unwrap_or(0),
                    s("value")
                ),
                None => s("value"),
            };
            vec![s("stream"), clean(kind), value]
        }
        None => vec![s("stream"), s("instance")],
    }
}

/// The audit record that undid `id`, where the trail holds one.
fn undone_by(id: i64, all: &[Value]) -> Option<i64> {
    all.iter()
        .find(|r| r["undoes"].as_i64() == Some(id))
        .and_then(|r| r["id"].as_i64())
}

/// An audit record's cells, as `turnscope audit` prints them, and `↶ #N` once #N undid it.
fn audit_cells(a: &Value, all: &[Value]) -> Vec<String> {
    let s = |k: &str| clean(a[k].as_str().unwrap_or(""));
    let id = a["id"].as_i64().unwrap_or(0);
    vec![
        id.to_string(),
        turnscope_core::journal::time::iso_from_ms(a["at"].as_i64().unwrap_or(0)),
        s("operator"),
        s("action"),
        s("submission_id"),
        s("reason"),
        s("batch"),
        undone_by(id, all).map_or_else(String::new, |by| format!("↶ #{by}")),
        s("summary"),
    ]
}

/// A table of text cells, each column as wide as its widest cell; the last column takes what
/// is left. `styles`: a style per column index.
fn draw_table(
    f: &mut Frame,
    t: &Theme,
    area: Rect,
    titles: &[&str],
    cells: &[Vec<String>],
    cursor: &mut Cursor,
    styles: &[(usize, Style)],
) {
    let mut widths: Vec<usize> = titles.iter().map(|h| h.chars().count()).collect();
    for row in cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count()).min(48);
        }
    }
    let room = area.width.saturating_sub(2 + titles.len() as u16) as usize;
    let before: usize = widths[..widths.len() - 1].iter().sum();
    if let Some(last) = widths.last_mut() {
        *last = room.saturating_sub(before).max(4);
    }
    let named: Vec<(&str, usize)> = titles.iter().copied().zip(widths.iter().copied()).collect();
    let (header, constraints, rows_area) = table_header(&named, area, t);
    cursor.selected = cursor.selected.min(cells.len().saturating_sub(1));
    cursor.page = rows_area.height as usize;
    scroll_into_view(&mut cursor.offset, cursor.selected, cursor.page);
    let body: Vec<Row> = cells
        .iter()
        .map(|r| {
            Row::new(r.iter().enumerate().map(|(i, c)| {
                let style = styles
                    .iter()
                    .find(|(col, _)| *col == i)
                    .map_or(Style::new(), |(_, s)| *s);
                Cell::from(Span::styled(fit(c, widths[i]), style))
            }))
        })
        .collect();
    render_selectable(
        f,
        area,
        Table::new(body, constraints).header(header),
        t,
        true,
        cursor.offset,
        (!cells.is_empty()).then_some(cursor.selected),
    );
}
