//! `sessions` on a flue 2.x journal: find the agent instances (one conversation stream each)
//! from what a customer gives an engineer. An id is looked up where 2.x keeps it: a stream's
//! path or instance id (`flue_conversation_streams`), a submission id (or a unique prefix of 4+
//! characters), attempt or owner id (`flue_agent_submissions`, whose session key names the
//! stream), else a conversation id or a record id inside the streams' records. `--text` searches
//! every record of every stream for the text, ignoring case, stream by stream.
//!
//! A match names the stream and, inside it, the record (`id`, `type`) and the batch (`seq`) it
//! was found in: records are matched one by one, as stored (a batch's JSON array split with
//! `RawValue`, never re-serialised, so what matched is the runtime's own text).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;
use turnscope_core::journal::search::Needle;
use turnscope_store::{thousands, Flue2SqliteReader, Flue2Stream, StoreError};

/// What matched a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MatchKind {
    /// The stream's path (`agents/<agent>/<instance>`).
    Stream,
    /// Its instance id.
    Instance,
    /// A submission of the instance (its id, or a unique prefix).
    Submission,
    /// The attempt id of one of its submissions.
    Attempt,
    /// The owner (worker) id of one of its submissions.
    Owner,
    /// `conversationId` of one of its records.
    Conversation,
    /// The id of one of its records.
    Record,
    /// Text in one of its records.
    Text,
}

impl MatchKind {
    /// How the front ends name it.
    pub fn label(self) -> &'static str {
        match self {
            MatchKind::Stream => "stream path",
            MatchKind::Instance => "instance",
            MatchKind::Submission => "submission id",
            MatchKind::Attempt => "attempt id",
            MatchKind::Owner => "owner id",
            MatchKind::Conversation => "conversation id",
            MatchKind::Record => "record id",
            MatchKind::Text => "text",
        }
    }
}

/// One stream that matched, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flue2Match {
    /// `agents/<agent>/<instance>`.
    pub stream: String,
    pub kind: MatchKind,
    /// The id that matched, or for text a short piece around it (raw database text).
    pub value: String,
    /// The record it was found in: its id, its type and the batch's `seq`.
    pub record: Option<RecordAt>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordAt {
    pub id: String,
    pub kind: String,
    pub seq: i64,
}

impl Flue2Match {
    /// The match as `turnscope.flue2.sessions/1` lists it (the CLI's `--json` and the TUI's
    /// sessions screen).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "stream": self.stream,
            "matched": self.kind,
            "value": self.value,
            "record": self.record.as_ref().map(|r| serde_json::json!({"id": r.id, "type": r.kind, "seq": r.seq})),
        })
    }
}

/// The instance id of a stream (`identity_json`'s `instanceId`, else the path's last part).
pub fn instance_of(s: &Flue2Stream) -> String {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Identity {
        instance_id: String,
    }
    s.identity_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<Identity>(j).ok())
        .map(|i| i.instance_id)
        .unwrap_or_else(|| s.path.rsplit('/').next().unwrap_or("").to_string())
}

/// Ids shorter than this are not looked up by prefix (as on beta.7).
const MIN_PREFIX: usize = 4;

/// The streams `query` names by an id, each once (the first way it matched), in the order the
/// lookups run: stream path, instance, submission, attempt, owner, then conversation and record
/// ids inside the records (only where none of the row ids matched exactly: see
/// [`find_streams_scanned`]).
pub fn find_streams(
    reader: &Flue2SqliteReader,
    query: &str,
) -> Result<Vec<Flue2Match>, StoreError> {
    find_streams_scanned(reader, query).map(|(m, _)| m)
}

/// What [`find_streams_scanned`] read of the records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdScan {
    /// The query named a stream, an instance, a submission, an attempt or an owner exactly, so
    /// the records were not read.
    pub skipped: bool,
    /// Batches read looking for a conversation or record id.
    pub batches: usize,
}

/// [`find_streams`], saying what it read. The conversation and record ids live only inside the
/// records, so looking one up reads every batch of every stream; where the query already is a
/// row's id exactly (a stream path, an instance, a whole submission id, an attempt or an owner
/// id: each a different shape from the runtime's `conv_`/`rec_` ids) that read is skipped, as
/// beta.7's `sessions` never reads the entries' text for an id (it looks ids up by index). A
/// submission id prefix is not exact: the records are still read.
pub fn find_streams_scanned(
    reader: &Flue2SqliteReader,
    query: &str,
) -> Result<(Vec<Flue2Match>, IdScan), StoreError> {
    let mut out: Vec<Flue2Match> = Vec::new();
    let mut scan = IdScan::default();
    let mut add = |stream: String, kind: MatchKind, value: &str, record: Option<RecordAt>| {
        if !out.iter().any(|m| m.stream == stream) {
            out.push(Flue2Match {
                stream,
                kind,
                value: value.to_string(),
                record,
            });
        }
    };
    let streams = reader.streams()?;
    for s in &streams {
        if s.path == query {
            add(s.path.clone(), MatchKind::Stream, &s.path, None);
        }
    }
    for s in &streams {
        let instance = instance_of(s);
        if instance == query {
            add(s.path.clone(), MatchKind::Instance, &instance, None);
        }
    }
    let rows = reader.submissions()?;
    let by_submission: Vec<_> = rows
        .iter()
        .filter(|r| {
            r.submission_id == query
                || (query.len() >= MIN_PREFIX && r.submission_id.starts_with(query))
        })
        .collect();
    for (kind, hits) in [
        (MatchKind::Submission, by_submission),
        (
            MatchKind::Attempt,
            rows.iter()
                .filter(|r| r.attempt_id.as_deref() == Some(query))
                .collect(),
        ),
        (
            MatchKind::Owner,
            rows.iter()
                .filter(|r| r.owner_id.as_deref() == Some(query))
                .collect(),
        ),
    ] {
        for r in hits {
            if let Some(k) = r.session() {
                let value = match kind {
                    MatchKind::Submission => r.submission_id.as_str(),
                    _ => query,
                };
                add(k.stream_path(), kind, value, None);
            }
        }
    }
    // Whether a row id matched whole (a submission prefix is not), as the lookups above add.
    scan.skipped = streams
        .iter()
        .any(|s| s.path == query || instance_of(s) == query)
        || rows.iter().any(|r| {
            r.session().is_some()
                && (r.submission_id == query
                    || r.attempt_id.as_deref() == Some(query)
                    || r.owner_id.as_deref() == Some(query))
        });
    if query.len() >= MIN_PREFIX && !scan.skipped {
        // An id inside the records: the conversation's, or a record's own.
        let conversation = format!("\"conversationId\":{}", json_string(query));
        let record = format!("\"id\":{}", json_string(query));
        for s in &streams {
            for b in reader.stream_batches(&s.path)? {
                scan.batches += 1;
                let (has_conv, has_record) =
                    (b.data.contains(&conversation), b.data.contains(&record));
                if !has_conv && !has_record {
                    continue;
                }
                for raw in records(&b.data) {
                    let text = raw.get();
                    let head = head_of(text);
                    if has_record && head.id == query {
                        add(
                            s.path.clone(),
                            MatchKind::Record,
                            query,
                            Some(head.at(b.seq)),
                        );
                    } else if has_conv && text.contains(&conversation) {
                        add(
                            s.path.clone(),
                            MatchKind::Conversation,
                            query,
                            Some(head.at(b.seq)),
                        );
                    }
                }
            }
        }
    }
    Ok((out, scan))
}

/// How far a text search got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flue2Searched {
    pub streams_total: usize,
    /// Streams searched to their end, batches and bytes read.
    pub streams: usize,
    pub batches: usize,
    pub bytes: u64,
    pub matches: usize,
    pub finished: bool,
    pub cancelled: bool,
}

impl Flue2Searched {
    /// "12 streams, 340 batches".
    pub fn describe(&self) -> String {
        format!(
            "{} stream{}, {} batch{}",
            thousands(self.streams),
            if self.streams == 1 { "" } else { "s" },
            thousands(self.batches),
            if self.batches == 1 { "" } else { "es" },
        )
    }
}

/// Search every record of every stream for `needle`; `found` gets each stream's first matching
/// record (and returns `false` to stop), `progress` the state after each stream. `cancel` stops
/// it between two streams.
pub fn search_text(
    reader: &Flue2SqliteReader,
    needle: &Needle,
    found: &mut dyn FnMut(Flue2Match) -> bool,
    progress: &mut dyn FnMut(&Flue2Searched),
    cancel: &AtomicBool,
) -> Result<Flue2Searched, StoreError> {
    let streams = reader.streams()?;
    let mut s = Flue2Searched {
        streams_total: streams.len(),
        ..Flue2Searched::default()
    };
    'streams: for stream in &streams {
        if cancel.load(Ordering::Relaxed) {
            s.cancelled = true;
            return Ok(s);
        }
        for b in reader.stream_batches(&stream.path)? {
            s.batches += 1;
            s.bytes += b.data.len() as u64;
            if !needle.matches(b.data.as_bytes()) {
                continue;
            }
            let hit = records(&b.data)
                .into_iter()
                .find(|r| needle.matches(r.get().as_bytes()));
            if let Some(raw) = hit {
                let text = raw.get();
                s.matches += 1;
                let m = Flue2Match {
                    stream: stream.path.clone(),
                    kind: MatchKind::Text,
                    value: needle.snippet(text.as_bytes(), 40).unwrap_or_default(),
                    record: Some(head_of(text).at(b.seq)),
                };
                s.streams += 1;
                if !found(m) {
                    progress(&s);
                    return Ok(s);
                }
                progress(&s);
                continue 'streams;
            }
        }
        s.streams += 1;
        progress(&s);
    }
    s.finished = true;
    Ok(s)
}

/// A batch's records as stored, one raw JSON text each (none for a batch that does not parse:
/// the fold says why, `show` prints it).
fn records(data: &str) -> Vec<&RawValue> {
    serde_json::from_str::<Vec<&RawValue>>(data).unwrap_or_default()
}

/// A record's id and type.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Head {
    id: String,
    #[serde(rename = "type")]
    kind: String,
}

impl Head {
    fn at(self, seq: i64) -> RecordAt {
        RecordAt {
            id: self.id,
            kind: self.kind,
            seq,
        }
    }
}

fn head_of(record: &str) -> Head {
    serde_json::from_str(record).unwrap_or_default()
}

/// `text` as a JSON string literal, as the runtime's `JSON.stringify` writes an id.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}
