//! Row images: the exact row before and after each change an applied action made, recorded in
//! its audit row (`turnscope_audit.changes`), and `undo`, which puts the before-images back only
//! where every row still holds what turnscope wrote. The logic is backend-neutral; each backend
//! reads and writes whole rows through [`RowAccess`] inside its own write transaction.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::StoreError;
use turnscope_core::journal::records::EventStore;
use turnscope_core::recovery::changes::RowChange;

/// One row a change touched: its table, its primary key, and the whole row before and after
/// (`None`: absent, i.e. inserted or deleted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowImage {
    pub table: String,
    pub key: Map<String, Value>,
    pub before: Option<Map<String, Value>>,
    pub after: Option<Map<String, Value>>,
}

/// The primary key columns of the tables turnscope writes.
pub fn primary_key(table: &str) -> &'static [&'static str] {
    match table {
        "flue_session_entries" => &["session_id", "entry_id"],
        "flue_sessions" => &["id"],
        "flue_agent_stream_chunks" => &["stream_key", "segment_index"],
        "flue_event_streams" => &["path"],
        "flue_event_stream_entries" => &["path", "seq"],
        "flue_event_stream_keys" => &["path", "key"],
        // The journal and the submission are one row per submission.
        _ => &["submission_id"],
    }
}

/// The tables and keys (for stream chunks, the key prefix) of the rows a change touches.
pub fn touched(change: &RowChange) -> Vec<(&'static str, Map<String, Value>)> {
    let key = |pairs: &[(&str, Value)]| -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    let s = |v: &str| Value::String(v.to_string());
    match change {
        RowChange::InsertSession { session_id, .. } => {
            vec![("flue_sessions", key(&[("id", s(session_id))]))]
        }
        RowChange::InsertEntry {
            session_id,
            entry_id,
            ..
        } => vec![(
            "flue_session_entries",
            key(&[("session_id", s(session_id)), ("entry_id", s(entry_id))]),
        )],
        RowChange::UpdateSessionData { session_id, .. } => {
            vec![("flue_sessions", key(&[("id", s(session_id))]))]
        }
        RowChange::UpdateJournal { submission_id, .. } => vec![(
            "flue_agent_turn_journals",
            key(&[("submission_id", s(submission_id))]),
        )],
        RowChange::UpdateSubmission { submission_id, .. }
        | RowChange::AutoFailSubmission { submission_id, .. }
        | RowChange::UpdateTerminalizing { submission_id, .. } => vec![(
            "flue_agent_submissions",
            key(&[("submission_id", s(submission_id))]),
        )],
        RowChange::DeleteStreamChunks { stream_key, .. } => vec![(
            "flue_agent_stream_chunks",
            key(&[("stream_key", s(stream_key))]),
        )],
        RowChange::CreateEventStream { path } => {
            vec![("flue_event_streams", key(&[("path", s(path))]))]
        }
        RowChange::AppendEvent {
            path,
            key: event_key,
            seq,
            store,
            ..
        } => {
            // The stream's head moves and the event row appears (for the built-in store both
            // through the keys table's trigger).
            let mut v = vec![
                ("flue_event_streams", key(&[("path", s(path))])),
                (
                    "flue_event_stream_entries",
                    key(&[("path", s(path)), ("seq", Value::from(*seq))]),
                ),
            ];
            if *store == EventStore::KeysTable {
                v.push((
                    "flue_event_stream_keys",
                    key(&[("path", s(path)), ("key", s(event_key))]),
                ));
            }
            v
        }
    }
}

/// The tables of the event stream: a row turnscope inserted there is an event published.
pub const EVENT_TABLES: [&str; 2] = ["flue_event_stream_entries", "flue_event_stream_keys"];

/// The primary key of a whole row of `table`.
pub fn key_of(table: &str, row: &Map<String, Value>) -> Map<String, Value> {
    primary_key(table)
        .iter()
        .map(|c| (c.to_string(), row.get(*c).cloned().unwrap_or(Value::Null)))
        .collect()
}

/// Whole-row reads and writes inside a backend's write transaction.
pub trait RowAccess {
    /// Every row of `table` matching `key` (all of its columns, or a key prefix).
    fn rows(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
    ) -> Result<Vec<Map<String, Value>>, StoreError>;
    /// Make the row of `table` at `key` be `to` (`None`: delete it); `now` is what it holds.
    fn put(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
        now: Option<&Map<String, Value>>,
        to: Option<&Map<String, Value>>,
    ) -> Result<(), StoreError>;
}

/// The images of the rows `change` is about to touch (their `after` filled in by
/// [`after_images`] once it ran).
pub fn before_images(
    access: &mut dyn RowAccess,
    change: &RowChange,
) -> Result<Vec<RowImage>, StoreError> {
    let mut images = Vec::new();
    for (table, key) in touched(change) {
        let rows = access.rows(table, &key)?;
        // A whole primary key with no row yet: the change inserts it (its image has no before).
        let whole_key = primary_key(table).iter().all(|c| key.contains_key(*c));
        if whole_key {
            images.push(RowImage {
                table: table.into(),
                key,
                before: rows.into_iter().next(),
                after: None,
            });
            continue;
        }
        images.extend(rows.into_iter().map(|r| RowImage {
            table: table.into(),
            key: key_of(table, &r),
            before: Some(r),
            after: None,
        }));
    }
    Ok(images)
}

/// Fill in each image's row as it is now.
pub fn after_images(access: &mut dyn RowAccess, images: &mut [RowImage]) -> Result<(), StoreError> {
    for img in images {
        img.after = access.rows(&img.table, &img.key)?.into_iter().next();
    }
    Ok(())
}

fn literal(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(Value::String(s)) if s.chars().count() > 60 => {
            format!("'{}…'", s.chars().take(57).collect::<String>())
        }
        Some(Value::String(s)) => format!("'{s}'"),
        Some(other) => other.to_string(),
    }
}

/// `column: now → restored` for a preview. A long value is not shown as two cut-off prefixes
/// (two JSON documents that differ only in `leafId` would look the same): for two JSON objects,
/// the fields that differ; for other long text, the part around the first difference.
fn column_change(c: &str, now: Option<&Value>, to: &Value) -> String {
    let (Some(Value::String(a)), Value::String(b)) = (now, to) else {
        return format!("{c}: {} → {}", literal(now), literal(Some(to)));
    };
    if a.chars().count() <= 60 && b.chars().count() <= 60 {
        return format!("{c}: {} → {}", literal(now), literal(Some(to)));
    }
    if let (Ok(Value::Object(x)), Ok(Value::Object(y))) = (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) {
        let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
        let fields: Vec<String> = keys
            .filter(|k| x.get(*k) != y.get(*k))
            .map(|k| {
                let field = |v: Option<&Value>| match v {
                    Some(Value::String(_)) | None => literal(v),
                    Some(other) => other.to_string().chars().take(60).collect(),
                };
                format!("{k} {} → {}", field(x.get(k)), field(y.get(k)))
            })
            .collect();
        if !fields.is_empty() {
            return format!("{c} (JSON, the fields that differ): {}", fields.join(", "));
        }
    }
    // The first differing character, with a little context on each side.
    let (ac, bc): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let at = ac.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    let from = at.saturating_sub(20);
    let part = |cs: &[char]| {
        let end = (at + 40).min(cs.len());
        format!(
            "{}'{}'{}",
            if from > 0 { "…" } else { "" },
            cs[from.min(cs.len())..end].iter().collect::<String>(),
            if end < cs.len() { "…" } else { "" }
        )
    };
    format!(
        "{c} (differs from character {}): {} → {}",
        at + 1,
        part(&ac),
        part(&bc)
    )
}

fn describe_key(img: &RowImage) -> String {
    let parts: Vec<String> = img
        .key
        .iter()
        .map(|(k, v)| format!("{k}={}", literal(Some(v))))
        .collect();
    format!("{} ({})", img.table, parts.join(", "))
}

/// How `now` differs from what turnscope wrote (`wrote`), in the operator's words.
fn differences(img: &RowImage, now: Option<&Map<String, Value>>) -> Option<String> {
    match (img.after.as_ref(), now) {
        (None, None) => None,
        (None, Some(_)) => Some(format!(
            "{}: written again after turnscope removed it",
            describe_key(img)
        )),
        (Some(_), None) => Some(format!("{}: the row is gone", describe_key(img))),
        (Some(wrote), Some(now)) if wrote == now => None,
        (Some(wrote), Some(now)) => {
            let cols: Vec<String> = wrote
                .keys()
                .chain(now.keys().filter(|k| !wrote.contains_key(*k)))
                .filter(|c| wrote.get(*c) != now.get(*c))
                .map(|c| {
                    format!(
                        "{c} is now {} (turnscope wrote {})",
                        literal(now.get(c)),
                        literal(wrote.get(c))
                    )
                })
                .collect();
            Some(format!("{}: {}", describe_key(img), cols.join(", ")))
        }
    }
}

/// Undo `images` (in the order they were applied): refuse with what changed unless every row
/// still holds what turnscope wrote; otherwise put every before-image back, last change first,
/// and return the undo's own images (so an undo is recorded like any write).
pub fn undo(
    access: &mut dyn RowAccess,
    images: &[RowImage],
) -> Result<Result<Vec<RowImage>, Vec<String>>, StoreError> {
    // A row changed twice is checked against its last write.
    let mut last: Vec<&RowImage> = Vec::new();
    for img in images.iter().rev() {
        if !last
            .iter()
            .any(|l| l.table == img.table && l.key == img.key)
        {
            last.push(img);
        }
    }
    let mut changed = Vec::new();
    for img in &last {
        let now = access.rows(&img.table, &img.key)?.into_iter().next();
        if let Some(d) = differences(img, now.as_ref()) {
            changed.push(d);
        }
    }
    if !changed.is_empty() {
        return Ok(Err(changed));
    }
    let mut done = Vec::with_capacity(images.len());
    for img in images.iter().rev() {
        access.put(
            &img.table,
            &img.key,
            img.after.as_ref(),
            img.before.as_ref(),
        )?;
        done.push(RowImage {
            table: img.table.clone(),
            key: img.key.clone(),
            before: img.after.clone(),
            after: img.before.clone(),
        });
    }
    Ok(Ok(done))
}

/// The columns to set when a row goes from `now` to `to` (both whole rows).
pub fn changed_columns<'a>(
    now: &Map<String, Value>,
    to: &'a Map<String, Value>,
) -> Vec<(&'a str, &'a Value)> {
    to.iter()
        .filter(|(c, v)| now.get(*c) != Some(*v))
        .map(|(c, v)| (c.as_str(), v))
        .collect()
}

/// One line per restored row for a preview: `table (key): column now → restored, …`.
pub fn preview(done: &[RowImage]) -> Vec<String> {
    done.iter()
        .map(|img| match (&img.before, &img.after) {
            (Some(_), None) => format!("delete {}", describe_key(img)),
            (None, Some(_)) => format!("insert {} again", describe_key(img)),
            (Some(now), Some(to)) => {
                let cols: Vec<String> = changed_columns(now, to)
                    .into_iter()
                    .map(|(c, v)| column_change(c, now.get(c), v))
                    .collect();
                format!("update {}: {}", describe_key(img), cols.join(", "))
            }
            (None, None) => format!("nothing for {}", describe_key(img)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A table in memory.
    #[derive(Default)]
    struct Rows(Vec<(String, Map<String, Value>)>);

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    impl RowAccess for Rows {
        fn rows(
            &mut self,
            table: &str,
            key: &Map<String, Value>,
        ) -> Result<Vec<Map<String, Value>>, StoreError> {
            Ok(self
                .0
                .iter()
                .filter(|(t, r)| t == table && key.iter().all(|(k, v)| r.get(k) == Some(v)))
                .map(|(_, r)| r.clone())
                .collect())
        }
        fn put(
            &mut self,
            table: &str,
            key: &Map<String, Value>,
            _now: Option<&Map<String, Value>>,
            to: Option<&Map<String, Value>>,
        ) -> Result<(), StoreError> {
            self.0
                .retain(|(t, r)| !(t == table && key.iter().all(|(k, v)| r.get(k) == Some(v))));
            if let Some(to) = to {
                self.0.push((table.into(), to.clone()));
            }
            Ok(())
        }
    }

    #[test]
    fn a_long_changed_value_shows_what_differs_not_two_prefixes() {
        let data = |leaf: &str| {
            format!(
                r#"{{"version":8,"conversationId":"conv_01KD4CNAHH1C2WEJMJFP3H66PB","affinityKey":"aff_01KD4CNAHJJ2TQ4P74B8FDBPS3","leafId":"{leaf}","childSessions":[]}}"#
            )
        };
        let now = obj(json!({"id": "s", "data": data("f43c661c")}));
        let to = obj(json!({"id": "s", "data": data("5a272afe")}));
        let img = RowImage {
            table: "flue_sessions".into(),
            key: obj(json!({"id": "s"})),
            before: Some(now),
            after: Some(to),
        };
        assert_eq!(
            preview(&[img]),
            ["update flue_sessions (id='s'): data (JSON, the fields that differ): leafId 'f43c661c' → '5a272afe'"]
        );
        let long = |end: &str| format!("{}{end}", "x".repeat(80));
        assert_eq!(
            column_change("t", Some(&json!(long("ab"))), &json!(long("ac"))),
            "t (differs from character 82): …'xxxxxxxxxxxxxxxxxxxab' → …'xxxxxxxxxxxxxxxxxxxac'"
        );
    }

    fn requeue_images() -> (Rows, Vec<RowImage>) {
        let before = obj(json!({"submission_id": "s1", "status": "running", "attempt_id": "a1"}));
        let after = obj(json!({"submission_id": "s1", "status": "queued", "attempt_id": null}));
        let rows = Rows(vec![("flue_agent_submissions".into(), after.clone())]);
        let img = RowImage {
            table: "flue_agent_submissions".into(),
            key: obj(json!({"submission_id": "s1"})),
            before: Some(before),
            after: Some(after),
        };
        (rows, vec![img])
    }

    #[test]
    fn undo_restores_the_before_image_while_the_row_holds_what_turnscope_wrote() {
        let (mut rows, images) = requeue_images();
        let done = undo(&mut rows, &images).unwrap().unwrap();
        assert_eq!(rows.0[0].1["status"], "running");
        assert_eq!(rows.0[0].1["attempt_id"], "a1");
        assert_eq!(
            preview(&done),
            ["update flue_agent_submissions (submission_id='s1'): status: 'queued' → 'running', attempt_id: null → 'a1'"]
        );
    }

    #[test]
    fn undo_refuses_and_names_each_change_since() {
        let (mut rows, images) = requeue_images();
        // The runtime claimed it.
        rows.0[0].1.insert("status".into(), json!("running"));
        rows.0[0].1.insert("attempt_id".into(), json!("a2"));
        let changed = undo(&mut rows, &images).unwrap().unwrap_err();
        assert_eq!(
            changed,
            ["flue_agent_submissions (submission_id='s1'): status is now 'running' (turnscope wrote 'queued'), attempt_id is now 'a2' (turnscope wrote null)"]
        );
        assert_eq!(rows.0[0].1["attempt_id"], "a2", "nothing restored");
    }

    #[test]
    fn an_inserted_row_is_deleted_and_a_deleted_row_comes_back() {
        let entry = obj(json!({"session_id": "k", "entry_id": "e1", "position": 3, "data": "{}"}));
        let chunk = obj(json!({"stream_key": "st", "segment_index": 0, "body": "x"}));
        let mut rows = Rows(vec![("flue_session_entries".into(), entry.clone())]);
        let images = vec![
            RowImage {
                table: "flue_session_entries".into(),
                key: obj(json!({"session_id": "k", "entry_id": "e1"})),
                before: None,
                after: Some(entry),
            },
            RowImage {
                table: "flue_agent_stream_chunks".into(),
                key: obj(json!({"stream_key": "st", "segment_index": 0})),
                before: Some(chunk.clone()),
                after: None,
            },
        ];
        undo(&mut rows, &images).unwrap().unwrap();
        assert_eq!(rows.0, vec![("flue_agent_stream_chunks".into(), chunk)]);
    }
}
