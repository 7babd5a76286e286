//! The sessions view (`s`): every session with its instance, entry count, last update and its
//! submissions by status, most recently updated first; ⏎ opens the session's tree. `/` (and `f`
//! from anywhere) filters by what the database holds: the key or instance of the rows read, the
//! ids the worker finds (`SessionFinder::find_sessions`), and text in any session's entries,
//! searched by the worker in the background and streamed in (esc stops it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::{nav_delta, step, Ask};
use crate::keymap::Action;
use crate::messages::{status_label, HealthMark, Target};
use crate::text::{ago, clean, pad};
use crate::view_state::{DrawCtx, Hit, InputMode, Layout, Pane};
use crate::widgets::{render_selectable, scroll_into_view, table_header};
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::time::ms_from_iso;
use turnscope_store::{thousands, MatchKind, SessionMatch, SessionSummary, TextSearched};

/// A session's health on the screen: the `updatedAt` it was asked at, and the answer (`None`
/// while it is on its way).
pub type HealthSlot = (Option<String>, Option<Result<HealthMark, String>>);

/// How a HEALTH cell is drawn.
enum HealthTone {
    Dim,
    Warn,
}

#[derive(Debug, Clone, Default)]
pub struct SessionsScreen {
    pub rows: Vec<SessionSummary>,
    pub query: String,
    pub view: Vec<usize>,
    pub selected: usize,
    pub selected_id: Option<String>,
    /// The search of `query` in the database: ids and text.
    pub find: Find,
    /// Each session's health as the worker judged it, with the `updatedAt` it was asked at
    /// (`None` while the answer is on its way): asked again when the session changes.
    pub health: HashMap<String, HealthSlot>,
}

/// What the database said about the current query, and where its text search is.
#[derive(Debug, Clone, Default)]
pub struct Find {
    /// Which search this is (answers to an older one are dropped).
    pub generation: u64,
    /// Set to stop the text search under way (esc, a new query).
    pub cancel: Option<Arc<AtomicBool>>,
    /// The ids the worker found: still reading them.
    pub ids_pending: bool,
    /// Per session key, what matched it (the first, by kind).
    pub hits: HashMap<String, (MatchKind, String)>,
    /// The text search: `None` before its first step (or without one).
    pub searched: Option<TextSearched>,
    /// The text search is under way.
    pub searching: bool,
    /// Why the search stopped early (an error), if it did.
    pub error: Option<String>,
}

impl Find {
    /// The one line the screen shows about the search, while it runs or once it stopped short.
    pub fn progress_line(&self) -> Option<String> {
        let s = self.searched.as_ref();
        if let Some(e) = &self.error {
            return Some(format!("search failed: {e}"));
        }
        if self.searching || self.ids_pending {
            return Some(match s {
                Some(s) => format!(
                    "searching… {} of {} sessions (esc stops)",
                    thousands(s.sessions),
                    thousands(s.sessions_total)
                ),
                None => "searching…".into(),
            });
        }
        match s {
            Some(s) if s.cancelled && s.sessions_total == 0 => Some("search stopped".into()),
            Some(s) if s.cancelled => Some(format!(
                "search stopped: {} of {} sessions searched",
                thousands(s.sessions),
                thousands(s.sessions_total)
            )),
            Some(s) if s.finished => Some(format!("searched {}", s.describe())),
            _ => None,
        }
    }
}

impl SessionsScreen {
    /// The sessions among the view's rows `rows` whose health is not known for their current
    /// `updatedAt` and not asked yet; each is marked asked.
    pub fn take_health_requests(&mut self, rows: std::ops::Range<usize>) -> Vec<String> {
        let mut out = Vec::new();
        for &i in self
            .view
            .get(rows.start.min(self.view.len())..rows.end.min(self.view.len()))
            .unwrap_or(&[])
        {
            let s = &self.rows[i];
            let known = self
                .health
                .get(&s.id)
                .is_some_and(|(at, _)| *at == s.updated_at);
            if !known {
                self.health
                    .insert(s.id.clone(), (s.updated_at.clone(), None));
                out.push(s.id.clone());
            }
        }
        out
    }

    /// The worker's answers to [`take_health_requests`](Self::take_health_requests).
    pub fn on_health(&mut self, answers: Vec<(String, Result<Option<HealthMark>, String>)>) {
        for (key, result) in answers {
            if let Some((_, slot)) = self.health.get_mut(&key) {
                *slot = match result {
                    Ok(Some(m)) => Some(Ok(m)),
                    Ok(None) => Some(Err("gone".into())),
                    Err(e) => Some(Err(e)),
                };
            }
        }
    }

    /// The HEALTH cell of session `s`: `…` while asked, `ok`, or the findings and the first kind.
    fn health_cell(&self, s: &SessionSummary) -> (String, HealthTone) {
        match self.health.get(&s.id) {
            Some((at, _)) if *at != s.updated_at => (String::new(), HealthTone::Dim),
            None => (String::new(), HealthTone::Dim),
            Some((_, None)) => ("…".into(), HealthTone::Dim),
            Some((_, Some(Ok(m)))) if m.findings == 0 => ("ok".into(), HealthTone::Dim),
            Some((_, Some(Ok(m)))) => (
                format!("‼ {} {}", m.findings, m.worst.unwrap_or("")),
                HealthTone::Warn,
            ),
            Some((_, Some(Err(e)))) => (format!("? {e}"), HealthTone::Dim),
        }
    }

    /// What `R` repairs on this screen: the settled submission whose unresolved batch ends the
    /// selected session's active path (health's finding), or why there is none.
    pub fn repair_target(&self) -> Result<Vec<String>, String> {
        let s = self.selected_session().ok_or("select a session first")?;
        match self.health.get(&s.id) {
            Some((at, Some(Ok(m)))) if *at == s.updated_at => match &m.repair {
                Some(Ok(id)) => Ok(vec![id.clone()]),
                Some(Err(why)) => Err(format!("nothing to repair in place: {why}")),
                None if m.findings == 0 => Err("the session is healthy: nothing to repair".into()),
                None => Err(format!(
                    "nothing to repair: {} has no unresolved tool calls (⏎ opens the session)",
                    m.worst.unwrap_or("the finding")
                )),
            },
            Some((_, Some(Err(e)))) => Err(format!("the session's health is unknown: {e}")),
            _ => Err("the session's health is still being read: try again in a moment".into()),
        }
    }

    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.view.get(self.selected).map(|&i| &self.rows[i])
    }

    /// What ⏎ opens and `e` exports: the selected session.
    pub fn target(&self) -> Option<Target> {
        self.selected_session()
            .map(|s| Target::Session(s.id.clone()))
    }

    pub fn rebuild(&mut self) {
        let q = self.query.trim().to_lowercase();
        let mut view: Vec<usize> = (0..self.rows.len())
            .filter(|&i| q.is_empty() || self.matched(&self.rows[i], &q).is_some())
            .collect();
        // Most recently updated first (ISO strings sort chronologically).
        let rows = &self.rows;
        view.sort_by(|&a, &b| {
            rows[b]
                .updated_at
                .cmp(&rows[a].updated_at)
                .then(rows[a].id.cmp(&rows[b].id))
        });
        self.view = view;
        let keep = self.selected_id.clone();
        self.selected = keep
            .and_then(|id| self.view.iter().position(|&i| self.rows[i].id == id))
            .unwrap_or_else(|| self.selected.min(self.view.len().saturating_sub(1)));
        self.selected_id = self.selected_session().map(|s| s.id.clone());
    }

    /// What of session `s` the query `q` (lowercased) matches: its instance or key as read, or
    /// what the database search found.
    fn matched(&self, s: &SessionSummary, q: &str) -> Option<(MatchKind, String)> {
        if let Some(i) = s
            .instance_id
            .as_deref()
            .filter(|i| i.to_lowercase().contains(q))
        {
            return Some((MatchKind::Instance, i.to_string()));
        }
        if let Some(hit) = self.find.hits.get(&s.id) {
            return Some(hit.clone());
        }
        s.id.to_lowercase()
            .contains(q)
            .then(|| (MatchKind::Key, s.id.clone()))
    }

    /// A new query: the search of the last one stops, the next begins (its generation).
    pub fn restart_find(&mut self) -> Option<(String, u64, Arc<AtomicBool>)> {
        self.stop_search();
        self.find.generation += 1;
        let generation = self.find.generation;
        self.find = Find {
            generation,
            ..Find::default()
        };
        let q = self.query.trim().to_string();
        if q.is_empty() {
            return None;
        }
        let cancel = Arc::new(AtomicBool::new(false));
        self.find.cancel = Some(cancel.clone());
        self.find.ids_pending = true;
        Some((q, generation, cancel))
    }

    /// Stop the text search under way (what it found stays); `true` when one was.
    pub fn stop_search(&mut self) -> bool {
        let was = self.find.searching || self.find.ids_pending;
        if let Some(c) = self.find.cancel.take() {
            c.store(true, Ordering::Relaxed);
        }
        if was {
            self.find.searching = false;
            self.find.ids_pending = false;
            let s = self.find.searched.get_or_insert_with(TextSearched::default);
            s.cancelled = true;
        }
        was
    }

    fn add_hit(&mut self, m: SessionMatch) {
        let value = m.value;
        let e = self
            .find
            .hits
            .entry(m.session)
            .or_insert((m.kind, value.clone()));
        if m.kind < e.0 {
            *e = (m.kind, value);
        }
    }

    /// The ids the worker found for search `generation`.
    pub fn on_ids(&mut self, generation: u64, result: Result<Vec<SessionMatch>, String>) {
        if generation != self.find.generation || !self.find.ids_pending {
            return;
        }
        self.find.ids_pending = false;
        match result {
            Ok(found) => {
                for m in found {
                    self.add_hit(m);
                }
                self.find.searching =
                    self.query.trim().chars().count() >= crate::worker::FIND_TEXT_FROM;
            }
            Err(e) => self.find.error = Some(e),
        }
        self.rebuild();
    }

    /// A step of the text search `generation`.
    pub fn on_text(
        &mut self,
        generation: u64,
        matches: Vec<SessionMatch>,
        searched: TextSearched,
        error: Option<String>,
    ) {
        if generation != self.find.generation || !self.find.searching {
            return;
        }
        for m in matches {
            self.add_hit(m);
        }
        if let Some(e) = error {
            self.find.error = Some(e);
            self.find.searching = false;
        } else {
            self.find.searching = !searched.finished && !searched.cancelled;
            self.find.searched = Some(searched);
        }
        self.rebuild();
    }

    pub fn move_cursor(&mut self, delta: isize) {
        self.selected = step(self.selected, self.view.len(), delta);
        self.selected_id = self.selected_session().map(|s| s.id.clone());
    }

    /// The sessions list's own actions: the cursor, ⏎, `/` and esc clearing the query.
    pub fn handle(&mut self, a: Action, page: usize) -> Vec<Ask> {
        if let Some(delta) = nav_delta(a, page) {
            self.move_cursor(delta);
            return Vec::new();
        }
        match a {
            Action::Enter => self.target().map(Ask::Open).into_iter().collect(),
            Action::StartFilter => vec![Ask::Input(InputMode::Filter)],
            // Esc stops a search first (what it found stays), then clears the query.
            Action::Back if self.stop_search() => {
                self.rebuild();
                Vec::new()
            }
            Action::Back if !self.query.is_empty() => {
                self.query.clear();
                self.restart_find();
                self.rebuild();
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The `/` text: the sessions shown are those it matches. What the worker is to search the
    /// database for, when there is a query.
    pub fn set_query(&mut self, q: String) -> Option<(String, u64, Arc<AtomicBool>)> {
        self.query = q;
        let find = self.restart_find();
        self.rebuild();
        find
    }

    /// A click on row `row` of the viewport; `true` when it landed on a session.
    pub fn click_row(&mut self, row: usize, offset: usize) -> bool {
        let i = offset + row;
        if i >= self.view.len() {
            return false;
        }
        self.selected = i;
        self.selected_id = self.selected_session().map(|s| s.id.clone());
        true
    }
}

/// A text match's snippet from a few characters before the match, so the column shows it.
fn near_match(snippet: &str, q: &str) -> String {
    let Some(at) = turnscope_core::journal::search::Needle::new(q)
        .and_then(|n| n.find(snippet.as_bytes()))
        .filter(|&at| snippet.is_char_boundary(at))
    else {
        return snippet.to_string();
    };
    let start = snippet[..at]
        .char_indices()
        .rev()
        .nth(11)
        .map_or(0, |(i, _)| i);
    if start == 0 {
        snippet.to_string()
    } else {
        format!("…{}", &snippet[start..])
    }
}

/// The session's submissions by status, as the header counts them: failed rows are settled
/// rows, shown inside the settled count (`3 settled (1 failed)`), not as a status of their own.
fn by_status(s: &SessionSummary) -> String {
    if s.submissions_by_status.is_empty() {
        return "-".into();
    }
    let failed: i64 = s
        .submissions_by_status
        .iter()
        .filter(|(st, _)| st == "failed")
        .map(|(_, n)| n)
        .sum();
    let mut parts = Vec::new();
    let mut settled_seen = false;
    for (st, n) in s
        .submissions_by_status
        .iter()
        .filter(|(st, _)| st != "failed")
    {
        let status = SubmissionStatus::parse(st);
        if status == SubmissionStatus::Settled {
            settled_seen = true;
            let inside = if failed > 0 {
                format!(" ({failed} failed)")
            } else {
                String::new()
            };
            parts.push(format!("{} {}{inside}", n + failed, status_label(&status)));
        } else {
            parts.push(format!("{n} {}", status_label(&status)));
        }
    }
    if !settled_seen && failed > 0 {
        let settled = status_label(&SubmissionStatus::Settled);
        parts.push(format!("{failed} {settled} ({failed} failed)"));
    }
    parts.join(", ")
}

impl SessionsScreen {
    pub fn draw(&self, f: &mut Frame, cx: &DrawCtx, view: &mut Layout, area: Rect) {
        let t = cx.theme;
        let progress = self.find.progress_line();
        let mut area = area;
        if let Some(line) = &progress {
            // The search's line under the table: how far it got, or that it stopped short.
            if area.height >= 3 {
                area.height -= 1;
                f.render_widget(
                    Paragraph::new(Span::styled(format!(" {}", clean(line)), t.dim())),
                    Rect {
                        y: area.y + area.height,
                        height: 1,
                        ..area
                    },
                );
            }
        }
        let w = area.width as usize;
        let q = self.query.trim().to_lowercase();
        // With a query: what matched each session, in place of its submissions.
        let (fourth, fourth_w) = if q.is_empty() {
            ("SUBMISSIONS", 30)
        } else {
            ("MATCHED", 48)
        };
        // instance, entries, updated, submissions (or matched), key (widest last, dropped first)
        let inst_w = 18.min(w / 4);
        let health_w = 22;
        let cols: Vec<(&str, usize)> = vec![
            ("INSTANCE", inst_w),
            ("ENTRIES", 7),
            ("UPDATED", 12),
            ("HEALTH", health_w),
            (
                fourth,
                fourth_w.min(w.saturating_sub(inst_w + 7 + 12 + health_w + 6)),
            ),
        ];
        let used: usize = cols.iter().map(|(_, c)| c + 1).sum::<usize>() + 1;
        let key_w = w.saturating_sub(used);
        let mut titles = cols.clone();
        if key_w >= 12 {
            titles.push(("SESSION KEY", key_w));
        }
        let (header, widths, rows_area) = table_header(&titles, area, &t);
        view.sessions = Some(Hit {
            area,
            rows: rows_area,
        });
        let h = rows_area.height as usize;
        scroll_into_view(&mut view.sessions_offset, self.selected, h);
        let rows = self.view.iter().map(|&idx| {
            let s = &self.rows[idx];
            let updated = s
                .updated_at
                .as_deref()
                .and_then(ms_from_iso)
                .map_or("-".into(), |ms| ago(cx.now_ms, ms));
            let running = s
                .submissions_by_status
                .iter()
                .any(|(st, _)| SubmissionStatus::parse(st) == SubmissionStatus::Running);
            let fourth = if q.is_empty() {
                (by_status(s), if running { t.warn() } else { Style::new() })
            } else {
                let what = self
                    .matched(s, &q)
                    .map(|(kind, value)| match kind {
                        MatchKind::Text => format!("text: {}", near_match(&value, &q)),
                        _ => format!("{}: {value}", kind.label()),
                    })
                    .unwrap_or_default();
                (what, Style::new())
            };
            let texts = [
                (
                    clean(s.instance_id.as_deref().unwrap_or("(not an agent session)")),
                    Style::new(),
                ),
                (s.entry_count.to_string(), t.dim()),
                (updated, t.dim()),
                match self.health_cell(s) {
                    (text, HealthTone::Warn) => (text, t.warn()),
                    (text, HealthTone::Dim) => (text, t.dim()),
                },
                fourth,
            ];
            let mut cells: Vec<Cell> = texts
                .into_iter()
                .zip(&cols)
                .map(|((text, style), (_, cw))| {
                    Cell::from(Span::styled(pad(&clean(&text), *cw), style))
                })
                .collect();
            if key_w >= 12 {
                cells.push(Cell::from(Span::styled(pad(&clean(&s.id), key_w), t.dim())));
            }
            Row::new(cells)
        });
        render_selectable(
            f,
            area,
            Table::new(rows, widths).header(header),
            &t,
            cx.focus == Pane::Sessions,
            view.sessions_offset,
            (!self.view.is_empty()).then_some(self.selected),
        );
        if self.view.is_empty() {
            let searching = self.find.searching || self.find.ids_pending;
            let short = self.query.trim().chars().count() < crate::worker::FIND_TEXT_FROM;
            let msg = if !cx.loaded || !cx.sessions_loaded {
                "reading the sessions…".to_string()
            } else if self.rows.is_empty() {
                "the database has no sessions".to_string()
            } else if searching {
                // Never "no match" before the search has finished: the line below counts.
                "searching the sessions…".to_string()
            } else if self.find.searched.as_ref().is_some_and(|s| s.cancelled) {
                "no session matched before the search was stopped (esc clears)".to_string()
            } else if short {
                format!(
                    "no session key or instance matches (text is searched from {} characters; esc clears)",
                    crate::worker::FIND_TEXT_FROM
                )
            } else {
                "no session matches the filter: key, instance, ids or text (esc clears)".to_string()
            };
            f.render_widget(
                Paragraph::new(Span::styled(format!(" {msg}"), t.dim())),
                Rect {
                    height: 1,
                    ..rows_area
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(by: &[(&str, i64)]) -> SessionSummary {
        SessionSummary {
            id: "k".into(),
            instance_id: None,
            entry_count: 0,
            created_at: None,
            updated_at: None,
            leaf_id: None,
            data_problems: vec![],
            submissions_by_status: by.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        }
    }

    /// As the header counts them: failed inside settled, never beside it.
    #[test]
    fn failed_rows_are_counted_inside_settled() {
        assert_eq!(by_status(&summary(&[])), "-");
        assert_eq!(
            by_status(&summary(&[("running", 1), ("settled", 3), ("failed", 2)])),
            "1 running, 5 settled (2 failed)"
        );
        assert_eq!(by_status(&summary(&[("settled", 3)])), "3 settled");
        assert_eq!(
            by_status(&summary(&[("queued", 1), ("failed", 2)])),
            "1 pending, 2 settled (2 failed)"
        );
    }
}
