//! `turnscope sessions [QUERY] [--text TEXT]`: find sessions from what a customer gives an
//! engineer (`store::SessionFinder`). Id matches are printed first, then each session the text
//! search finds, as it finds it.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::AtomicBool;

use serde_json::{json, Value};

use super::args::SessionsArgs;
use super::common::exit;
use super::progress::Bar;
use super::CliError;
use turnscope_core::journal::search::Needle;
use turnscope_core::journal::submission_rows::instance_id_of;
use turnscope_core::text::sanitize;
use turnscope_store::{thousands, Backend, SessionMatch, TextSearched, TextSink};

pub fn run(store: &dyn Backend, args: &SessionsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let query = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let text = args.text.as_deref().filter(|t| !t.is_empty());
    if query.is_none() && text.is_none() {
        return Err(CliError::new(
            "sessions needs a QUERY, --text TEXT, or both",
            "turnscope sessions conv_01M90NT6BJE9   (an id or key); turnscope sessions --text 'SK 803'   (text in any session)",
            exit::USAGE,
        ));
    }
    let limit = args.limit.map_or(usize::MAX, |n| n as usize);
    let mut shown = Shown::new(args.json, None, out, limit);
    if let Some(q) = query {
        for m in store.find_sessions(q)? {
            if !shown.show(m) {
                break;
            }
        }
    }
    let mut searched = None;
    if let (Some(t), false) = (text, shown.truncated) {
        let needle = Needle::new(t).expect("not empty");
        let cancel = AtomicBool::new(false);
        let mut sink = Sink {
            shown: &mut shown,
            bar: None,
            json: args.json,
        };
        let s = store.search_text(&needle, TextSearched::default(), &mut sink, &cancel);
        if let Some(b) = &mut sink.bar {
            b.clear();
        }
        searched = Some(s?);
    }
    if let Some(e) = shown.error.take() {
        return Err(e.into());
    }
    let what = describe(query, text);
    let searched_text = searched.as_ref().map(|s| {
        if s.finished {
            format!("searched {}", s.describe())
        } else {
            format!(
                "searched {} of {} sessions",
                thousands(s.sessions),
                thousands(s.sessions_total)
            )
        }
    });
    if args.json {
        let doc = json!({
            "schema": "turnscope.sessions/1",
            "format": turnscope_engine::report::JOURNAL_FORMAT,
            "database": store.location(),
            "query": query,
            "text": text,
            "limit": args.limit,
            "sessions": shown.sessions.len(),
            "truncated": shown.truncated,
            "matches": shown.matches,
            "searched": searched.as_ref().map(|s| json!({
                "sessions": s.sessions,
                "sessionsTotal": s.sessions_total,
                "entries": s.entries,
                "entriesTotal": s.entries_total,
                "bytes": s.bytes,
                "finished": s.finished,
            })),
        });
        if shown.sessions.is_empty() {
            return Err(not_found(&what, searched_text.as_deref()));
        }
        super::output::print_json(shown.out, &doc)?;
        return Ok(());
    }
    if shown.sessions.is_empty() {
        return Err(not_found(&what, searched_text.as_deref()));
    }
    let tail = summary(
        ("session", "sessions"),
        shown.sessions.len(),
        &what,
        searched_text.as_deref(),
        shown.truncated.then_some(limit),
    );
    writeln!(shown.out, "{}", sanitize(&tail))?;
    Ok(())
}

/// The last line: `3 sessions match "SK 803" (searched …); stopped at --limit 10, more may match`
/// (`noun` singular and plural: the 2.x command's are instances).
pub(super) fn summary(
    noun: (&str, &str),
    n: usize,
    what: &str,
    searched: Option<&str>,
    stopped_at: Option<usize>,
) -> String {
    let mut tail = format!(
        "{} {} match{} {what}",
        thousands(n),
        if n == 1 { noun.0 } else { noun.1 },
        if n == 1 { "es" } else { "" }
    );
    if let Some(s) = searched {
        tail.push_str(&format!(" ({s})"));
    }
    if let Some(limit) = stopped_at {
        tail.push_str(&format!(
            "; stopped at --limit {}, more may match",
            thousands(limit)
        ));
    }
    tail
}

/// "conv_01… or text "SK 803"", as the summary and the error name the search.
pub(super) fn describe(query: Option<&str>, text: Option<&str>) -> String {
    match (query, text) {
        (Some(q), Some(t)) => format!("{q:?} or text {t:?}"),
        (Some(q), None) => format!("{q:?}"),
        (None, Some(t)) => format!("text {t:?}"),
        (None, None) => String::new(),
    }
}

fn not_found(what: &str, searched: Option<&str>) -> CliError {
    let searched = searched.map(|s| format!(" ({s})")).unwrap_or_default();
    CliError::new(
        format!("no session matches {what}{searched}"),
        "a key, instance or id matches only what the database holds (ids from 4 characters); try --text TEXT to search every session's history",
        exit::NOT_FOUND,
    )
}

/// The matches so far: printed as they come (text) or kept for the document (JSON), at most
/// `limit` distinct sessions (2.x's `sessions`: instances).
pub(super) struct Shown<'a> {
    json: bool,
    /// A line printed before the first match (nothing on stdout when none is found).
    header: Option<String>,
    pub out: &'a mut dyn Write,
    limit: usize,
    pub sessions: HashSet<String>,
    pub matches: Vec<Value>,
    pub truncated: bool,
    /// A failed write to stdout, ending the search.
    pub error: Option<std::io::Error>,
}

impl<'a> Shown<'a> {
    pub fn new(
        json: bool,
        header: Option<String>,
        out: &'a mut dyn Write,
        limit: usize,
    ) -> Shown<'a> {
        Shown {
            json,
            header,
            out,
            limit,
            sessions: HashSet::new(),
            matches: Vec::new(),
            truncated: false,
            error: None,
        }
    }

    /// Show a match of the session `key`: its document (JSON) or its line (text); `false` when
    /// no more may be shown (the limit, or stdout is gone).
    pub fn show_match(
        &mut self,
        key: &str,
        doc: impl FnOnce() -> Value,
        text: impl FnOnce() -> String,
    ) -> bool {
        if !self.sessions.contains(key) {
            if self.sessions.len() >= self.limit {
                self.truncated = true;
                return false;
            }
            self.sessions.insert(key.to_string());
        }
        if self.json {
            self.matches.push(doc());
        } else if let Err(e) = self
            .header
            .take()
            .map_or(Ok(()), |h| writeln!(self.out, "{h}"))
            .and_then(|()| writeln!(self.out, "{}", text()))
        {
            self.error = Some(e);
            return false;
        }
        true
    }

    fn show(&mut self, m: SessionMatch) -> bool {
        let key = m.session.clone();
        self.show_match(&key, || match_json(&m), || line(&m))
    }
}

/// `conversation id  <key>  <value>`, each part terminal-safe.
fn line(m: &SessionMatch) -> String {
    let value = match (&m.entry, m.kind) {
        (Some((id, position)), turnscope_store::MatchKind::Text) => {
            format!(
                "entry {} at {position}: {}",
                sanitize(id),
                sanitize(&m.value)
            )
        }
        _ => sanitize(&m.value),
    };
    format!("{:<15}  {}  {value}", m.kind.label(), sanitize(&m.session))
}

fn match_json(m: &SessionMatch) -> Value {
    json!({
        "session": m.session,
        "instance": instance_id_of(&m.session),
        "matched": m.kind,
        "value": m.value,
        "entry": m.entry.as_ref().map(|(id, position)| json!({"id": id, "position": position})),
    })
}

/// The text search's matches into `shown`, its progress into a bar on stderr.
struct Sink<'a, 'b> {
    shown: &'a mut Shown<'b>,
    bar: Option<Bar>,
    json: bool,
}

impl TextSink for Sink<'_, '_> {
    fn found(&mut self, m: SessionMatch) -> bool {
        match &self.bar {
            Some(b) => b.suspend(|| self.shown.show(m)),
            None => self.shown.show(m),
        }
    }

    fn progress(&mut self, s: &TextSearched) -> bool {
        let json = self.json;
        self.bar
            .get_or_insert_with(|| Bar::new(json, "searching sessions", s.sessions_total as u64))
            .set(s.sessions as u64);
        true
    }
}
