//! Building entry rows and session data exactly as the runtime writes them.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::report::SubmissionReport;
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::changes::RowChange;

/// New entry ids: 8 lowercase hex characters, retried on collision (the runtime's
/// `crypto.randomUUID().slice(0, 8)`), then a full UUID after 100 collisions.
pub struct EntryIds {
    taken: HashSet<String>,
    source: Box<dyn FnMut() -> u64>,
}

impl EntryIds {
    /// Ids that avoid every existing id of the session. Randomness from the std hasher's keys.
    pub fn for_report(r: &SubmissionReport) -> EntryIds {
        let state = std::collections::hash_map::RandomState::new();
        let mut counter = 0u64;
        EntryIds::with_source(
            r,
            Box::new(move || {
                counter += 1;
                let mut h = state.build_hasher();
                h.write_u64(counter);
                h.write_u128(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos()),
                );
                h.finish()
            }),
        )
    }

    /// With a given source of random numbers (tests use a fixed sequence).
    pub fn with_source(r: &SubmissionReport, source: Box<dyn FnMut() -> u64>) -> EntryIds {
        let taken = r
            .bundle
            .session
            .iter()
            .flat_map(|s| s.entries.iter().map(|e| e.id.to_string()))
            .collect();
        EntryIds { taken, source }
    }

    /// A number from the same source (for the ULIDs of a session the runtime would create).
    pub fn next_random(&mut self) -> u64 {
        (self.source)()
    }

    pub fn next_id(&mut self) -> String {
        for _ in 0..100 {
            let id = format!("{:08x}", (self.source)() as u32);
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
        let (a, b) = ((self.source)(), (self.source)());
        let id = format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a as u32,
            (a >> 32) as u16,
            (a >> 48) & 0xfff,
            (b as u16 & 0x3fff) | 0x8000,
            b >> 16 & 0xffff_ffff_ffff
        );
        self.taken.insert(id.clone());
        id
    }
}

/// Appends message entries after a given leaf, tracking positions and parents.
pub struct Appender<'a> {
    session_id: String,
    next_position: i64,
    pub leaf: Option<String>,
    ids: &'a mut EntryIds,
    now_ms: i64,
    pub changes: Vec<RowChange>,
}

impl<'a> Appender<'a> {
    /// Start appending after `leaf` (the runtime's `setLeaf` + append).
    pub fn new(
        r: &SubmissionReport,
        leaf: Option<String>,
        ids: &'a mut EntryIds,
        now_ms: i64,
    ) -> Appender<'a> {
        let session = r.bundle.session.as_ref();
        let next_position = session
            .and_then(|s| s.entries.iter().map(|e| e.position).max())
            .map_or(0, |p| p + 1);
        Appender {
            session_id: r.row().session_key.clone(),
            next_position,
            leaf,
            ids,
            now_ms,
            changes: Vec::new(),
        }
    }

    /// Append `{"type":"message","id","parentId","timestamp","message":<message>[,extra…]}`.
    /// `message_json` is inserted verbatim (compact JSON text); `extra` are `(key, compact JSON)`.
    pub fn append(&mut self, message_json: &str, extra: &[(&str, String)]) -> String {
        let id = self.ids.next_id();
        let parent = match &self.leaf {
            Some(p) => Value::String(p.clone()).to_string(),
            None => "null".into(),
        };
        let mut data = format!(
            r#"{{"type":"message","id":{},"parentId":{parent},"timestamp":{},"message":{message_json}"#,
            Value::String(id.clone()),
            Value::String(iso_from_ms(self.now_ms))
        );
        for (k, v) in extra {
            data.push_str(&format!(",{}:{v}", Value::String(k.to_string())));
        }
        data.push('}');
        self.changes.push(RowChange::InsertEntry {
            session_id: self.session_id.clone(),
            entry_id: id.clone(),
            position: self.next_position,
            data,
        });
        self.next_position += 1;
        self.leaf = Some(id.clone());
        id
    }

    /// Finish: the session data with the new `leafId` and `updatedAt`, after the inserted rows.
    pub fn finish(mut self, r: &SubmissionReport) -> Result<Vec<RowChange>, String> {
        if self.changes.is_empty() {
            return Ok(self.changes);
        }
        let session = r
            .bundle
            .session
            .as_ref()
            .ok_or("the session row does not exist")?;
        let leaf = self.leaf.clone().unwrap_or_default();
        let new = session_data_with(&session.data, &leaf, &iso_from_ms(self.now_ms))?;
        self.changes.push(RowChange::UpdateSessionData {
            session_id: session.id.clone(),
            old: session.data.clone(),
            new,
        });
        Ok(self.changes)
    }
}

/// The raw `message` JSON of a stored entry, byte for byte (for verbatim copies).
pub fn raw_message(entry_raw: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Shape<'a> {
        #[serde(borrow)]
        message: &'a RawValue,
    }
    serde_json::from_str::<Shape>(entry_raw)
        .ok()
        .map(|s| s.message.get().to_string())
}

/// Rewrite `leafId` and `updatedAt` of `flue_sessions.data`, keeping every other byte, key order
/// and value as stored.
pub fn session_data_with(data: &str, leaf_id: &str, updated_at: &str) -> Result<String, String> {
    let pairs =
        top_level_pairs(data).map_err(|e| format!("session data is not a JSON object: {e}"))?;
    let mut out = String::from("{");
    let mut seen = (false, false);
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        match k.as_str() {
            "leafId" => {
                seen.0 = true;
                out.push_str(&Value::String(leaf_id.into()).to_string());
            }
            "updatedAt" => {
                seen.1 = true;
                out.push_str(&Value::String(updated_at.into()).to_string());
            }
            _ => out.push_str(v.get()),
        }
    }
    out.push('}');
    if !(seen.0 && seen.1) {
        return Err("session data has no leafId or updatedAt".into());
    }
    Ok(out)
}

fn top_level_pairs(data: &str) -> Result<Vec<(String, Box<RawValue>)>, serde_json::Error> {
    struct Pairs;
    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut v = Vec::new();
            while let Some((k, val)) = map.next_entry::<String, Box<RawValue>>()? {
                v.push((k, val));
            }
            Ok(v)
        }
    }
    let mut de = serde_json::Deserializer::from_str(data);
    let pairs = (&mut de).deserialize_map(Pairs)?;
    de.end()?;
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_data_keeps_everything_else_verbatim() {
        let data = r#"{"version":8,"conversationId":"conv_01","affinityKey":"aff_01","leafId":"c41d7e02","childSessions":[],"metadata":{"x":1e+21,"y":0.0000123},"createdAt":"2026-01-05T09:12:44.120Z","updatedAt":"2026-01-05T09:20:09.955Z"}"#;
        let new = session_data_with(data, "9b1e44c0", "2026-01-05T09:30:00.000Z").unwrap();
        assert_eq!(
            new,
            r#"{"version":8,"conversationId":"conv_01","affinityKey":"aff_01","leafId":"9b1e44c0","childSessions":[],"metadata":{"x":1e+21,"y":0.0000123},"createdAt":"2026-01-05T09:12:44.120Z","updatedAt":"2026-01-05T09:30:00.000Z"}"#
        );
        assert!(session_data_with("[1]", "a", "b").is_err());
        assert!(session_data_with(r#"{"leafId":null}"#, "a", "b").is_err());
    }

    #[test]
    fn raw_message_is_byte_exact() {
        let raw = r#"{"type":"message","id":"a","message":{"role":"toolResult","x":1.50,"t":"é\u00e9"},"z":1}"#;
        assert_eq!(
            raw_message(raw).unwrap(),
            r#"{"role":"toolResult","x":1.50,"t":"é\u00e9"}"#
        );
    }
}
