//! Finding sessions from what a customer gives an engineer: a session key or a part of it, an
//! instance, a submission id or a prefix of one, a conversation id or another id the session's
//! rows hold ([`SessionFinder::find_sessions`]), or text anywhere in the stored history of every
//! session ([`SessionFinder::search_text`], streamed, cancellable, resumable).
//!
//! Backend-neutral: each backend only says how it reads the rows by id ([`IdRows`]) and reads a
//! session's entries through its [`SessionRows`]; the matching is here, once.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use turnscope_core::journal::search::Needle;
use turnscope_core::journal::submission_rows::instance_id_of;

use crate::error::StoreError;
use crate::session_rows::SessionRows;

/// What matched a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MatchKind {
    /// The instance (the first part of an agent session key).
    Instance,
    /// The session key (`flue_sessions.id`).
    Key,
    /// A submission of the session (`flue_agent_submissions.submission_id`, also the dispatch id).
    Submission,
    /// `conversationId` of the session's data.
    Conversation,
    /// `affinityKey` of the session's data.
    Affinity,
    /// A child session of the session's data (its key, task id or invocation id).
    ChildSession,
    /// The attempt id of one of its submissions or turn journals.
    Attempt,
    /// The turn or operation id of one of its turn journals.
    Turn,
    /// The id of one of its entries.
    Entry,
    /// Text in an entry's stored data.
    Text,
}

impl MatchKind {
    /// How the front ends name it.
    pub fn label(self) -> &'static str {
        match self {
            MatchKind::Instance => "instance",
            MatchKind::Key => "session key",
            MatchKind::Submission => "submission id",
            MatchKind::Conversation => "conversation id",
            MatchKind::Affinity => "affinity key",
            MatchKind::ChildSession => "child session",
            MatchKind::Attempt => "attempt id",
            MatchKind::Turn => "turn id",
            MatchKind::Entry => "entry id",
            MatchKind::Text => "text",
        }
    }
}

/// One session found, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMatch {
    /// The session key.
    pub session: String,
    pub kind: MatchKind,
    /// The id, key or instance that matched, or for text a short piece around the match (raw
    /// database text: a front end makes it terminal-safe).
    pub value: String,
    /// The entry it was found in (`entry_id`, position): entry ids and text.
    pub entry: Option<(String, i64)>,
}

/// How far a text search across sessions got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextSearched {
    /// Sessions and entries in the database when the search started.
    pub sessions_total: usize,
    pub entries_total: usize,
    /// Sessions searched to their end, and the entries and bytes of stored data read.
    pub sessions: usize,
    pub entries: usize,
    pub bytes: u64,
    /// Sessions that matched.
    pub matches: usize,
    /// The last session searched to its end (sessions are searched in key order); a search
    /// handed this state goes on after it.
    pub last: Option<String>,
    /// Every session was searched.
    pub finished: bool,
    /// The cancel flag stopped it (between two rows).
    pub cancelled: bool,
}

impl TextSearched {
    /// "20,000 sessions, 996,642 entries": what was searched.
    pub fn describe(&self) -> String {
        format!(
            "{} session{}, {} entr{}",
            thousands(self.sessions),
            if self.sessions == 1 { "" } else { "s" },
            thousands(self.entries),
            if self.entries == 1 { "y" } else { "ies" }
        )
    }
}

/// `n` with a comma every three digits (core's, for counts held as `usize`).
pub fn thousands(n: usize) -> String {
    turnscope_core::text::thousands(n as u64)
}

/// Receives a text search's matches and progress as they come.
pub trait TextSink {
    /// A session matched (once per session, at its first matching entry). `false` stops the
    /// search after this session (a limit reached).
    fn found(&mut self, m: SessionMatch) -> bool;
    /// Called after each session searched. `false` pauses the search after it (it goes on from
    /// the state it returns).
    fn progress(&mut self, _searched: &TextSearched) -> bool {
        true
    }
}

/// Characters of context either side of a text match in its snippet.
pub const SNIPPET_AROUND: usize = 40;

/// Finding sessions. Every backend has it.
pub trait SessionFinder {
    /// The sessions `query` names, by what the database holds: the key (a part of it, ignoring
    /// case), the instance, and, for a query of 4 characters or more without white space, a
    /// submission id or a prefix of one, an id of the session's data (conversation, affinity
    /// key, child session), an attempt id (a prefix, for a query of hex digits and dashes), a
    /// turn or operation id (a prefix starting `turn_` or `op_`), an entry id (exact, hex digits).
    /// Sorted by session key, then by what matched; each (session, kind, value) once.
    fn find_sessions(&self, query: &str) -> Result<Vec<SessionMatch>, StoreError>;

    /// Search every session's entries (their stored JSON, ignoring case) for `needle`, in
    /// session key order, a row at a time (no session is held whole), going on from `from`
    /// (`TextSearched::default()` to start). Each matching session goes to `sink` once, with a
    /// piece of the first entry that matched; `cancel` is read between rows.
    fn search_text(
        &self,
        needle: &Needle,
        from: TextSearched,
        sink: &mut dyn TextSink,
        cancel: &AtomicBool,
    ) -> Result<TextSearched, StoreError>;
}

/// What a backend reads for [`SessionFinder`]. Queries bound by the ids (index lookups where the
/// runtime has an index); `f` must not read the store.
pub(crate) trait IdRows {
    /// Every session row: `f(key, data)`.
    fn each_session(&self, f: &mut dyn FnMut(&str, &str)) -> Result<(), StoreError>;
    /// `(submission id, session key)` of the submissions whose id starts with `prefix`.
    fn submissions_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError>;
    /// `(id, session key)` of submissions and turn journals whose attempt id starts with
    /// `prefix`.
    fn attempts_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError>;
    /// `(id, session key)` of turn journals whose turn or operation id starts with `prefix`.
    fn turns_from(&self, prefix: &str) -> Result<Vec<(String, String)>, StoreError>;
    /// `(session key, position)` of the entries whose id is `id`.
    fn entries_named(&self, id: &str) -> Result<Vec<(String, i64)>, StoreError>;
    /// The session keys after `after` (all without it), in order.
    fn session_keys(&self, after: Option<&str>) -> Result<Vec<String>, StoreError>;
    /// How many sessions and entries the database holds.
    fn totals(&self) -> Result<(usize, usize), StoreError>;
}

/// Whether `query` may be an id: long enough not to name half the database, no white space.
fn id_shaped(query: &str) -> bool {
    query.chars().count() >= 4 && !query.chars().any(char::is_whitespace)
}

/// What of session `key` (its data `data`) `q` (lowercased) names: the instance or key, and
/// the ids of its data when `ids`.
fn session_hits(key: &str, data: &str, q: &str, ids: bool, out: &mut Vec<SessionMatch>) {
    let hit = |kind, value: &str| SessionMatch {
        session: key.to_string(),
        kind,
        value: value.to_string(),
        entry: None,
    };
    if key.to_lowercase().contains(q) {
        match instance_id_of(key) {
            Some(i) if i.to_lowercase().contains(q) => out.push(hit(MatchKind::Instance, &i)),
            _ => out.push(hit(MatchKind::Key, key)),
        }
    }
    if !ids || !data.to_lowercase().contains(q) {
        return;
    }
    let Ok(v) = turnscope_core::js::lone_surrogates::from_str::<serde_json::Value>(data) else {
        return;
    };
    let names = |s: &str| s.to_lowercase().contains(q);
    for (field, kind) in [
        ("conversationId", MatchKind::Conversation),
        ("affinityKey", MatchKind::Affinity),
    ] {
        if let Some(s) = v.get(field).and_then(|x| x.as_str()).filter(|s| names(s)) {
            out.push(hit(kind, s));
        }
    }
    for child in v
        .get("childSessions")
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
    {
        for field in ["session", "taskId", "invocationId"] {
            if let Some(s) = child
                .get(field)
                .and_then(|x| x.as_str())
                .filter(|s| names(s))
            {
                out.push(hit(MatchKind::ChildSession, s));
            }
        }
    }
}

impl<T: IdRows + SessionRows> SessionFinder for T {
    fn find_sessions(&self, query: &str) -> Result<Vec<SessionMatch>, StoreError> {
        let query = query.trim();
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let q = query.to_lowercase();
        let ids = id_shaped(query);
        let mut out = Vec::new();
        self.each_session(&mut |key, data| session_hits(key, data, &q, ids, &mut out))?;
        if ids {
            let by = |out: &mut Vec<SessionMatch>, kind, rows: Vec<(String, String)>| {
                out.extend(rows.into_iter().map(|(id, session)| SessionMatch {
                    session,
                    kind,
                    value: id,
                    entry: None,
                }))
            };
            // Ids are stored as the runtime made them (UUIDs and entry ids in lower case, ULIDs
            // upper case after a lower-case prefix): the query as given, and lowered. Each form
            // is a few index lookups and, for attempt and turn ids, a scan of the submission
            // and journal rows (no index there): not more forms than these.
            let mut forms = vec![query.to_string()];
            if query.to_lowercase() != query {
                forms.push(query.to_lowercase());
            }
            // Attempt ids are UUIDs and turn and operation ids start `turn_` and `op_`: neither
            // column has an index, so they are scanned only for a query of their shape.
            let uuid_like = query.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
            let lower = query.to_lowercase();
            let turn_like = lower.starts_with("turn_") || lower.starts_with("op_");
            for f in &forms {
                by(&mut out, MatchKind::Submission, self.submissions_from(f)?);
                if uuid_like {
                    by(&mut out, MatchKind::Attempt, self.attempts_from(f)?);
                }
                if turn_like {
                    by(&mut out, MatchKind::Turn, self.turns_from(f)?);
                }
                // The runtime's entry ids are 8 hex digits; scanning the entries' key index for
                // anything else would cost a read of it for nothing.
                let entries = if uuid_like {
                    self.entries_named(f)?
                } else {
                    Vec::new()
                };
                for (session, position) in entries {
                    out.push(SessionMatch {
                        session,
                        kind: MatchKind::Entry,
                        value: f.clone(),
                        entry: Some((f.clone(), position)),
                    });
                }
            }
        }
        out.sort_by(|a, b| {
            (&a.session, a.kind, &a.value, &a.entry).cmp(&(&b.session, b.kind, &b.value, &b.entry))
        });
        let mut seen = HashSet::new();
        out.retain(|m| seen.insert((m.session.clone(), m.kind, m.value.clone())));
        Ok(out)
    }

    fn search_text(
        &self,
        needle: &Needle,
        from: TextSearched,
        sink: &mut dyn TextSink,
        cancel: &AtomicBool,
    ) -> Result<TextSearched, StoreError> {
        let mut s = from;
        if s.finished {
            return Ok(s);
        }
        s.cancelled = false;
        if s.last.is_none() && s.sessions == 0 {
            (s.sessions_total, s.entries_total) = self.totals()?;
        }
        // Only the keys are held (the database's count of them), never a session's rows.
        let keys = self.session_keys(s.last.as_deref())?;
        for key in keys {
            let mut hit: Option<SessionMatch> = None;
            let (mut entries, mut bytes) = (0usize, 0u64);
            let completed = self.for_each_entry_while(&key, &mut |id, position, data, _| {
                if cancel.load(Ordering::Relaxed) {
                    return false;
                }
                entries += 1;
                bytes += data.len() as u64;
                match needle.snippet(data, SNIPPET_AROUND) {
                    Some(snippet) => {
                        hit = Some(SessionMatch {
                            session: key.clone(),
                            kind: MatchKind::Text,
                            value: snippet,
                            entry: Some((String::from_utf8_lossy(id).into_owned(), position)),
                        });
                        // One match names the session: the rest of it is not read.
                        false
                    }
                    None => true,
                }
            })?;
            s.entries += entries;
            s.bytes += bytes;
            if !completed && hit.is_none() {
                // Cancelled inside this session: it counts as not searched, and the search
                // goes on from the one before.
                s.cancelled = true;
                return Ok(s);
            }
            s.sessions += 1;
            s.last = Some(key);
            let mut go_on = true;
            if let Some(m) = hit {
                s.matches += 1;
                go_on = sink.found(m);
            }
            if cancel.load(Ordering::Relaxed) {
                s.cancelled = true;
                return Ok(s);
            }
            if !sink.progress(&s) || !go_on {
                return Ok(s);
            }
        }
        s.finished = true;
        // Sessions added while the search ran are searched too: the count says so.
        s.sessions_total = s.sessions_total.max(s.sessions);
        s.entries_total = s.entries_total.max(s.entries);
        sink.progress(&s);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_with_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(20_000), "20,000");
        assert_eq!(thousands(996_642), "996,642");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let s = TextSearched {
            sessions: 20_000,
            entries: 996_642,
            ..Default::default()
        };
        assert_eq!(s.describe(), "20,000 sessions, 996,642 entries");
    }

    #[test]
    fn a_session_is_named_by_its_instance_key_and_data_ids() {
        let key = r#"agent-session:["support-2","default","default"]"#;
        let data = r#"{"version":8,"conversationId":"conv_01M90NT6BJE9ABCDEFGHJKMNPQ","affinityKey":"aff_01M90NT6BJE9ZZZZZZZZZZZZZZ","childSessions":[{"type":"task","session":"task:default:4f8e2c1a","taskId":"4f8e2c1a"}]}"#;
        let hits = |q: &str| {
            let mut out = Vec::new();
            session_hits(key, data, &q.to_lowercase(), id_shaped(q), &mut out);
            out.into_iter()
                .map(|m| (m.kind, m.value))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            hits("SUPPORT"),
            [(MatchKind::Instance, "support-2".to_string())]
        );
        assert_eq!(hits("default\""), [(MatchKind::Key, key.to_string())]);
        assert_eq!(
            hits("conv_01m90nt6bje9"),
            [(
                MatchKind::Conversation,
                "conv_01M90NT6BJE9ABCDEFGHJKMNPQ".to_string()
            )]
        );
        assert_eq!(
            hits("01M90NT6BJE9"),
            [
                (
                    MatchKind::Conversation,
                    "conv_01M90NT6BJE9ABCDEFGHJKMNPQ".to_string()
                ),
                (
                    MatchKind::Affinity,
                    "aff_01M90NT6BJE9ZZZZZZZZZZZZZZ".to_string()
                )
            ]
        );
        assert_eq!(
            hits("4f8e2c1a"),
            [
                (MatchKind::ChildSession, "task:default:4f8e2c1a".to_string()),
                (MatchKind::ChildSession, "4f8e2c1a".to_string())
            ]
        );
        // Too short to be an id: only the key is looked at.
        assert_eq!(hits("aff"), []);
        assert_eq!(hits("nothing here"), []);
    }
}
