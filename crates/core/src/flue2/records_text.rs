//! A batch's records read from its text without a JSON tree per record: the batch is read in one
//! pass, each record's fields as they come, the fields a record's type reads
//! ([`Record::from_value`]) kept as small JSON values, every other field (a tool's output, most
//! of a tool-heavy stream's bytes) only digested. The digest is the one of the record's whole
//! tree ([`super::digest`]), so a repeated id's record is still compared with the first as a
//! whole.
//!
//! The same records and the same errors as [`parse_batch`]: a batch this reader does not take
//! apart itself (not JSON, not an array of objects, a repeated key, a field it needs after one
//! it skipped) is read by [`parse_batch`], whose answer it then is.
//!
//! Without digests (the folds' read), beta.7's entry scanner (`journal::compact_scan`) reads the
//! fields first and skips the rest at SIMD speed (`scan_fields`); what it declines, serde's
//! visitors read. Paired on the 2 GB journal (alternating whole-process runs): `health --all`
//! 0.92x the wall time and CPU (5 runs), `list --expired` 0.93x (6), the whale's `show` 0.94x (6).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::digest::{digest, DigestSeed, KeySeed, ObjectDigest};
use super::records::{parse_batch, FieldMap, JsonText, Record, RecordError};
use crate::journal::compact_scan::Scan;

/// A record read from its text, with the digest of its whole tree. Its `raw` holds only what the
/// fold reads: the fields [`RAW_READ`] names for its type, `null` for the others (a record the
/// tree reader read, a settlement's batch among them, keeps its whole tree).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRecord {
    pub record: Record,
    pub digest: u128,
}

impl ReadRecord {
    /// The digest of a record read without one ([`read_batch_undigested`]). No record's digest
    /// is 0: its low 64 bits count the record's nodes, at least the record's own.
    pub const UNDIGESTED: u128 = 0;
}

/// The fields [`Record::from_value`] and the fold read, of any record type: [`READ_FIELDS`], and
/// [`read_field`] giving each its slot (a `match`: every key of every record is looked up, and a
/// record's read fields are then found by slot, not by comparing keys).
macro_rules! read_fields {
    ($($name:ident = $f:literal),* $(,)?) => {
        /// The read fields, each at its slot.
        #[repr(u8)]
        enum Slot { $($name),* }
        const READ_FIELDS: &[&str] = &[$($f),*];
        fn read_field(k: &str) -> Option<usize> {
            match k {
                $($f => Some(Slot::$name as usize),)*
                _ => None,
            }
        }
    };
}

read_fields!(
    V = "v",
    ModelInfo = "modelInfo",
    Id = "id",
    Type = "type",
    ConversationId = "conversationId",
    Harness = "harness",
    Session = "session",
    Timestamp = "timestamp",
    SubmissionId = "submissionId",
    AttemptId = "attemptId",
    TurnId = "turnId",
    Kind = "kind",
    ParentConversationId = "parentConversationId",
    TaskId = "taskId",
    ActionInvocationId = "actionInvocationId",
    Agent = "agent",
    MessageId = "messageId",
    ParentId = "parentId",
    Content = "content",
    SignalType = "signalType",
    BlockId = "blockId",
    BlockIndex = "blockIndex",
    Sequence = "sequence",
    Delta = "delta",
    DeltaCount = "deltaCount",
    ToolCallId = "toolCallId",
    Name = "name",
    StopReason = "stopReason",
    Error = "error",
    Usage = "usage",
    ResponseMetadata = "responseMetadata",
    AssistantMessageId = "assistantMessageId",
    ToolName = "toolName",
    IsError = "isError",
    Terminate = "terminate",
    OutcomeIds = "outcomeIds",
    EntryId = "entryId",
    FirstKeptEntryId = "firstKeptEntryId",
    SourceLeafId = "sourceLeafId",
    StepName = "stepName",
    Outcome = "outcome",
);

// A record's slots seen are one bit each of a `u64`.
const _: () = assert!(READ_FIELDS.len() <= 64);

/// Record types whose whole JSON is read again after the fold (the reconciler compares a
/// settlement with the row's settlement record): a batch holding one is read as trees
/// ([`parse_batch`]; a submission settles once, so such batches are few).
const WHOLE: [&str; 1] = ["submission_settled"];

/// Record types whose `raw` the fold reads while it applies them, with the fields it reads
/// there (child identity fields, the model and `responseMetadata`, a step memo's names): those
/// are kept as `raw`; every other record's `raw` is `null`. Only those: a copy of every read
/// field into a map per assistant message was a few per cent of a stream's read (`perf`).
const RAW_READ: [(&str, &[&str]); 3] = [
    ("conversation_created", &super::records::CHILD_IDENTITY),
    (
        "assistant_message_started",
        &["modelInfo", "responseMetadata"],
    ),
    ("tool_step_settled", &["toolCallId", "stepName"]),
];

/// The fields of [`RAW_READ`] that [`Record::typed`] reads too (into the body): copied into
/// `raw`, where the others are moved.
const BODY_READS_TOO: [&str; 1] = ["parentConversationId"];

/// The fields of `raw` the fold reads of a record of type `t` ([`RAW_READ`]).
fn raw_read(t: &str) -> Option<&'static [&'static str]> {
    RAW_READ.iter().find(|(r, _)| *r == t).map(|(_, f)| *f)
}

/// A batch's `data`, as [`parse_batch`] reads it, each record with its digest: one pass over
/// the text; a batch it does not take apart (not an array of objects, a repeated key, `content`
/// before `type`, a settlement, not JSON) is read by [`parse_batch`] instead, whose answer it
/// then is.
pub fn read_batch(data: &str) -> Result<Vec<ReadRecord>, RecordError> {
    read_batch_as::<true>(data)
}

/// [`read_batch`] without the digests, each record's [`ReadRecord::UNDIGESTED`] (those of a
/// batch read by [`parse_batch`] keep theirs): a fold needs a digest only where a record id
/// repeats ([`crate::flue2::InstanceState::apply_read`] says when), which the runtime avoids,
/// and taking one is a fifth of the read (a whale's 165 MB: 208 → 162 ms).
pub fn read_batch_undigested(data: &str) -> Result<Vec<ReadRecord>, RecordError> {
    read_batch_as::<false>(data)
}

fn read_batch_as<const DIGESTS: bool>(data: &str) -> Result<Vec<ReadRecord>, RecordError> {
    // Without digests, most batches are taken by the scanner; the rest go to serde's visitors.
    if !DIGESTS {
        if let Some(items) = scan_fields(data) {
            return records_of(items.into_iter().map(|f| (f, ReadRecord::UNDIGESTED)));
        }
    }
    let Ok(items) = serde_json::from_str::<Vec<Fields<DIGESTS>>>(data) else {
        return tree_records(data);
    };
    records_of(items.into_iter().map(|f| (f.fields, f.digest)))
}

/// The records of a batch's read fields, each with its digest.
fn records_of(
    items: impl ExactSizeIterator<Item = (ReadFields, u128)>,
) -> Result<Vec<ReadRecord>, RecordError> {
    let mut out = Vec::with_capacity(items.len());
    for (mut fields, digest) in items {
        // The few fields the fold reads of `raw` go into it first: moved, but for one the body
        // reads too ([`BODY_READS_TOO`]), copied. Every other read field is then taken by the
        // body, not copied. (A `modelInfo` copied was a few per cent of `health --all`.)
        let raw = match fields
            .get("type")
            .and_then(Value::as_str)
            .and_then(raw_read)
        {
            Some(keys) => Value::Object(
                keys.iter()
                    .filter_map(|k| {
                        let v = if BODY_READS_TOO.contains(k) {
                            fields.get(k)?.clone()
                        } else {
                            fields.take(k)?
                        };
                        Some((k.to_string(), v))
                    })
                    .collect(),
            ),
            None => Value::Null,
        };
        let (envelope, body) = Record::typed(&mut fields)?;
        out.push(ReadRecord {
            record: Record {
                envelope,
                body,
                raw,
            },
            digest,
        });
    }
    Ok(out)
}

/// The read fields of every record of a batch as [`FieldsVisitor`] reads them, without serde's
/// visitors: one pass of the entry scanner (`journal::compact_scan`), which skips every other
/// value (a tool's output and arguments, most of a stream's bytes) at SIMD speed and takes a
/// string without escapes straight from the text. `None`: not taken here, and then the visitors
/// decide, errors included: an escaped key, a repeated key, a settlement ([`WHOLE`]), `content`
/// before `type`, nesting past the scanner's depth, anything `serde_json` would reject.
fn scan_fields(data: &str) -> Option<Vec<ReadFields>> {
    let mut s = Scan::new(data.as_bytes());
    s.ws();
    if s.peek()? != b'[' {
        return None;
    }
    let mut out = Vec::new();
    s.array(1, |s, depth| {
        let mut keys = RecordKeys::new();
        s.object(depth + 1, |s, key, depth| {
            let k = key?;
            match keys.slot(k).ok()? {
                Some(i) if i == Slot::Usage as usize => {
                    keys.read_usage(JsonText::read(s.raw(depth)?)?);
                }
                Some(i) => keys.read(i, s.kept(depth)?).ok()?,
                None => {
                    s.skip(depth)?;
                    keys.skipped(Cow::Borrowed(k));
                }
            }
            Some(())
        })?;
        out.push(keys.finish().ok()?);
        Some(())
    })?;
    s.ws();
    s.at_end().then_some(out)
}

/// [`parse_batch`], each record's digest taken from its tree.
fn tree_records(data: &str) -> Result<Vec<ReadRecord>, RecordError> {
    Ok(parse_batch(data)?
        .into_iter()
        .map(|record| ReadRecord {
            digest: digest(&record.raw),
            record,
        })
        .collect())
}

/// A record's read fields in the order read, each by its slot ([`read_field`]: a record has a
/// dozen, so a scan of their slot numbers finds one), and the slots seen (one bit each). A field
/// is taken, not copied, when the record reads it ([`records_of`] copies what `raw` keeps first).
struct ReadFields {
    fields: Vec<(u8, Value)>,
    seen: u64,
    /// `usage`, where the scanner read it: its text ([`JsonText`]).
    usage: Option<JsonText>,
}

impl ReadFields {
    fn slot(&self, key: &str) -> Option<usize> {
        let i = read_field(key)?;
        self.fields.iter().position(|(s, _)| usize::from(*s) == i)
    }
}

impl FieldMap for ReadFields {
    fn get(&self, key: &str) -> Option<&Value> {
        self.slot(key).map(|i| &self.fields[i].1)
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        let i = self.slot(key)?;
        Some(std::mem::take(&mut self.fields[i].1))
    }
    fn take_json(&mut self, key: &str) -> Option<JsonText> {
        if key == "usage" && self.usage.is_some() {
            return self.usage.take();
        }
        self.take(key).map(JsonText::from)
    }
}

/// One record's keys as either reader meets them ([`FieldsVisitor`], [`scan_fields`]): which are
/// read and which skipped, and what makes a record one neither takes apart. One set of rules, so
/// the two readers cannot read a record differently.
struct RecordKeys<'k> {
    fields: ReadFields,
    /// The keys only skipped (a few: the runtime's `operationId`, a tool's arguments and
    /// output), to find a repeated one.
    skipped: Vec<Cow<'k, str>>,
    /// Whether the record is a user message (once its type is read): its `content` is kept.
    user_message: bool,
}

/// Why a record is not taken apart here (the tree reader, [`parse_batch`], then decides).
enum NotTaken {
    RepeatedKey,
    /// Kept whole, in its own key order ([`WHOLE`]).
    Whole,
    /// A user message's `content` before its `type`.
    ContentBeforeType,
}

impl NotTaken {
    fn reason(&self) -> &'static str {
        match self {
            NotTaken::RepeatedKey => super::digest::DUPLICATE_KEY,
            NotTaken::Whole => "a whole record",
            NotTaken::ContentBeforeType => "content before type",
        }
    }
}

impl<'k> RecordKeys<'k> {
    fn new() -> RecordKeys<'k> {
        RecordKeys {
            fields: ReadFields {
                fields: Vec::with_capacity(16),
                seen: 0,
                usage: None,
            },
            skipped: Vec::new(),
            user_message: false,
        }
    }

    /// The slot key `k`'s value is read into, or `None`: its value is skipped.
    fn slot(&self, k: &str) -> Result<Option<usize>, NotTaken> {
        let slot = read_field(k);
        if slot.is_some_and(|i| self.fields.seen & (1 << i) != 0)
            || self.skipped.iter().any(|s| s == k)
        {
            return Err(NotTaken::RepeatedKey);
        }
        // `content` is a user message's text but a tool outcome's output: kept only where the
        // record's type (already read: the runtime writes it first) is not a tool's.
        Ok(slot.filter(|_| k != "content" || self.user_message))
    }

    /// The value of slot `i`.
    fn read(&mut self, i: usize, v: Value) -> Result<(), NotTaken> {
        if i == Slot::Type as usize {
            self.user_message = v.as_str() == Some("user_message");
            if WHOLE.contains(&v.as_str().unwrap_or_default()) {
                return Err(NotTaken::Whole);
            }
        }
        self.fields.seen |= 1 << i;
        self.fields.fields.push((i as u8, v));
        Ok(())
    }

    /// `usage`, read as its text (the scanner's read; the visitors read it as any other).
    fn read_usage(&mut self, usage: JsonText) {
        self.fields.seen |= 1 << Slot::Usage as usize;
        self.fields.usage = Some(usage);
    }

    /// Key `k`, its value skipped.
    fn skipped(&mut self, k: Cow<'k, str>) {
        self.skipped.push(k);
    }

    fn finish(self) -> Result<ReadFields, NotTaken> {
        if self.user_message && self.skipped.iter().any(|k| k == "content") {
            return Err(NotTaken::ContentBeforeType);
        }
        Ok(self.fields)
    }
}

/// A record's read fields and the digest of all of it (with `DIGESTS`; else
/// [`ReadRecord::UNDIGESTED`]).
struct Fields<const DIGESTS: bool> {
    fields: ReadFields,
    digest: u128,
}

impl<'de, const DIGESTS: bool> Deserialize<'de> for Fields<DIGESTS> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fields<DIGESTS>, D::Error> {
        d.deserialize_map(FieldsVisitor::<DIGESTS>)
    }
}

struct FieldsVisitor<const DIGESTS: bool>;

impl<'de, const DIGESTS: bool> Visitor<'de> for FieldsVisitor<DIGESTS> {
    type Value = Fields<DIGESTS>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<DIGESTS>, A::Error> {
        let mut keys = RecordKeys::new();
        let mut object = ObjectDigest::new();
        let not_taken = |n: NotTaken| serde::de::Error::custom(n.reason());
        while let Some(k) = map.next_key_seed(KeySeed)? {
            match keys.slot(&k).map_err(not_taken)? {
                Some(i) => {
                    let v: Value = map.next_value()?;
                    if DIGESTS {
                        object.add_value(&k, &v);
                    }
                    keys.read(i, v).map_err(not_taken)?;
                }
                None => {
                    if DIGESTS {
                        object.add(&k, map.next_value_seed(DigestSeed)?);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    keys.skipped(k);
                }
            }
        }
        let fields = keys.finish().map_err(not_taken)?;
        Ok(Fields {
            fields,
            digest: if DIGESTS {
                object.finish()
            } else {
                ReadRecord::UNDIGESTED
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(fields: &str) -> String {
        format!(
            r#"{{"v":1,"conversationId":"c1","harness":"default","session":"default","timestamp":"2026-01-01T00:00:00.000Z",{fields}}}"#
        )
    }

    /// What [`read_batch`] reads is what [`parse_batch`] reads, but for `raw`, which keeps the
    /// fields the fold reads where it reads them.
    fn same_as_the_tree_reader(batch: &str) {
        let tree = parse_batch(batch);
        let read = read_batch(batch);
        match (tree, read) {
            (Ok(tree), Ok(read)) => {
                assert_eq!(tree.len(), read.len());
                let undigested = read_batch_undigested(batch).unwrap();
                for ((t, r), u) in tree.iter().zip(&read).zip(&undigested) {
                    assert_ne!(r.digest, ReadRecord::UNDIGESTED);
                    assert!(u.digest == r.digest || u.digest == ReadRecord::UNDIGESTED);
                    assert_eq!(digest(&t.raw), r.digest, "{batch}");
                    // Both reads, each against the tree's record. Not against each other: a
                    // repeated key inside a skipped value sends only the digested read to the
                    // tree reader (a digest reads every key), and its `raw` is then the whole.
                    for x in [&r.record, &u.record] {
                        assert_eq!(t.envelope, x.envelope, "{batch}");
                        assert_eq!(t.body, x.body, "{batch}");
                        if WHOLE.contains(&t.envelope.record_type.as_str()) {
                            assert_eq!(t.raw, x.raw, "{batch}");
                        } else if x.raw == t.raw {
                            // Read by the tree reader (a batch the readers do not take apart).
                        } else if let Some(keys) = raw_read(&t.envelope.record_type) {
                            for k in keys {
                                assert_eq!(t.raw.get(k), x.raw.get(k), "{k} of {batch}");
                            }
                            let kept = x.raw.as_object().unwrap();
                            assert!(kept.keys().all(|k| keys.contains(&k.as_str())), "{batch}");
                        } else {
                            assert_eq!(x.raw, Value::Null, "{batch}");
                        }
                    }
                }
            }
            (Err(t), Err(r)) => {
                assert_eq!(t, r, "{batch}");
                assert_eq!(read_batch_undigested(batch).unwrap_err(), r, "{batch}");
            }
            (t, r) => panic!("{batch}: {t:?} / {r:?}"),
        }
    }

    #[test]
    fn the_read_fields_are_matched_and_no_others() {
        for (i, k) in READ_FIELDS.iter().enumerate() {
            assert_eq!(read_field(k), Some(i), "{k}");
        }
        for k in [
            "",
            "Content",
            "value",
            "contentx",
            "modelinfo",
            "ids",
            "output",
        ] {
            assert_eq!(read_field(k), None, "{k}");
        }
    }

    #[test]
    fn records_read_from_text_are_the_trees_records() {
        let batches = [
            format!(
                "[{},{}]",
                rec(r#""id":"r0","type":"conversation_created","kind":"root""#),
                rec(
                    r#""id":"r1","type":"user_message","messageId":"entry_a","parentId":null,"content":[{"type":"text","text":"hi \"there\""},{"type":"image","attachment":{"id":"att1"}}],"submissionId":"s1""#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r2","type":"tool_outcome","assistantMessageId":"entry_m","toolCallId":"t1","toolName":"bash","isError":false,"content":[{"type":"text","text":"out\nput"}],"details":{"b":1,"a":[1.5,-2]}"#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r3","type":"submission_settled","submissionId":"s1","attemptId":"a1","outcome":"completed""#
                )
            ),
            // `content` before `type`, a repeated key, a missing field, a record not an object.
            r#"[{"content":[{"type":"text","text":"x"}],"v":1,"id":"r4","type":"user_message","conversationId":"c","harness":"h","session":"s","timestamp":"t","messageId":"entry_b","parentId":"entry_a"}]"#.to_string(),
            format!("[{}]", rec(r#""id":"r5","type":"signal","id":"r6","messageId":"entry_c","parentId":null,"signalType":"x""#)),
            format!("[{}]", rec(r#""id":"r7","type":"signal","messageId":"entry_c","parentId":null"#)),
            r#"[{"v":1},3]"#.to_string(),
            r#"{"not":"an array"}"#.to_string(),
            r#"[{"v":1,"#.to_string(),
        ];
        for b in &batches {
            same_as_the_tree_reader(b);
        }
    }

    /// Batches of every shape the scanner meets, each read as the tree reader reads it: by the
    /// scanner where it takes the batch (the first group), by the visitors where it declines (the
    /// second), errors included.
    #[test]
    fn the_scanner_takes_the_common_batches_and_reads_them_as_the_visitors() {
        let taken = [
            "[]".to_string(),
            format!(
                " [ {} ,\n\t{} ] \n",
                rec(r#""id":"r0","type":"conversation_created","kind":"root""#),
                rec(
                    r#""id" : "r1", "type":"user_message","messageId":"entry_\u0041","parentId":null,"content":[{"type":"text","text":"h\u00e9 \"q\" \ud83d\ude00 \n"}],"submissionId":"s1""#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r2","type":"assistant_tool_call","messageId":"entry_m","blockId":"b0","blockIndex":1e0,"toolCallId":"t1","name":"bash","arguments":{"cmd":"ls \"x\"","deep":[[[{"a":[true,false,null,-0.5e-3]}]]]}"#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r3","type":"assistant_message_completed","messageId":"entry_m","stopReason":"toolUse","usage":{"input":12,"output":3.5,"cost":{"total":0.000005}},"error":null"#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r4","type":"tool_outcome","assistantMessageId":"entry_m","toolCallId":"t1","toolName":"bash","isError":false,"terminate":true,"content":[{"type":"text","text":"ünïcödé\t\u0000"}],"details":{}"#
                )
            ),
            format!(
                "[{}]",
                rec(
                    r#""id":"r5","type":"signal","messageId":"entry_c","parentId":"entry_b","signalType":"x""#
                )
            ),
            // The records whose `raw` the fold reads: fields moved into it, or copied where the
            // body reads them too (a task's parent conversation).
            format!(
                "[{},{},{}]",
                rec(
                    r#""id":"r7","type":"conversation_created","kind":"task","parentConversationId":"c0","taskId":"t9""#
                ),
                rec(
                    r#""id":"r8","type":"assistant_message_started","messageId":"entry_n","parentId":"entry_m","modelInfo":{"api":"x","model":"m"},"responseMetadata":null"#
                ),
                rec(
                    r#""id":"r9","type":"tool_step_settled","toolCallId":"t1","stepName":"s","outcome":{}"#
                )
            ),
            // A key repeated inside a skipped value: taken (the digested read is the tree's).
            format!(
                "[{}]",
                rec(
                    r#""id":"r6","type":"assistant_tool_call","messageId":"entry_m","blockId":"b0","blockIndex":0,"toolCallId":"t1","name":"bash","content":{"e":[],"a":{},"e":{}}"#
                )
            ),
        ];
        for b in &taken {
            assert!(scan_fields(b).is_some(), "declined: {b}");
            same_as_the_tree_reader(b);
        }
        let declined = [
            // A settlement, `content` before `type`, a repeated key (read or skipped), an escaped
            // key, not an array, an element not an object, trailing text, a bad escape in a
            // skipped string, a number serde refuses, unclosed.
            format!("[{}]", rec(r#""id":"r6","type":"submission_settled","submissionId":"s1","attemptId":"a1","outcome":"completed""#)),
            r#"[{"content":[{"type":"text","text":"x"}],"v":1,"id":"r7","type":"user_message","conversationId":"c","harness":"h","session":"s","timestamp":"t","messageId":"entry_b","parentId":"entry_a"}]"#.to_string(),
            format!("[{}]", rec(r#""id":"r8","type":"signal","id":"r9","messageId":"entry_c","parentId":null,"signalType":"x""#)),
            format!("[{}]", rec(r#""id":"r8","type":"signal","x":1,"x":2,"messageId":"entry_c","parentId":null,"signalType":"x""#)),
            format!("[{}]", rec(r#""id":"r8","\u0074ype":"signal","messageId":"entry_c","parentId":null,"signalType":"x""#)),
            r#"{"not":"an array"}"#.to_string(),
            r#"[{"v":1},3]"#.to_string(),
            format!("[{}] x", rec(r#""id":"r8","type":"signal","messageId":"entry_c","parentId":null,"signalType":"x""#)),
            format!("[{}]", rec(r#""id":"r8","type":"signal","details":"\q","messageId":"entry_c","parentId":null,"signalType":"x""#)),
            format!("[{}]", rec(r#""id":"r8","type":"signal","details":01,"messageId":"entry_c","parentId":null,"signalType":"x""#)),
            r#"[{"v":1,"#.to_string(),
        ];
        for b in &declined {
            assert!(scan_fields(b).is_none(), "taken: {b}");
            same_as_the_tree_reader(b);
        }
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// A JSON value's text: strings with escapes and non-ASCII characters, numbers, literals,
        /// nested arrays and objects.
        fn value() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                "[a-z_]{0,8}".prop_map(|s| format!("\"{s}\"")),
                prop::sample::select(vec![
                    r#""\n\"x\"\\""#,
                    r#""\u00e9\ud83d\ude00""#,
                    // Half of a pair alone: read as U+FFFD (`js::lone_surrogates`).
                    r#""cut \ud83d""#,
                    r#""é ✓""#,
                    r#""entry_m""#,
                    r#""\q""#,
                    "1",
                    "-0.5e-3",
                    "01",
                    "true",
                    "null",
                    "[]",
                    "{}",
                ])
                .prop_map(str::to_string),
            ];
            leaf.prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4)
                        .prop_map(|v| format!("[{}]", v.join(","))),
                    prop::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|v| {
                        let m: Vec<String> =
                            v.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                        format!("{{{}}}", m.join(","))
                    }),
                ]
            })
        }

        /// A record: an envelope and a type, the fields the types read (valid or not), and keys
        /// read and not, in any order, some repeated.
        fn record() -> impl Strategy<Value = String> {
            let ty = prop::sample::select(vec![
                "user_message",
                "tool_outcome",
                "assistant_tool_call",
                "signal",
                "assistant_message_started",
                "submission_settled",
                "assistant_message_completed",
                "conversation_created",
                "tool_step_settled",
            ]);
            let text = prop::sample::select(vec![
                r#""entry_m""#,
                r#""entry_\u0041""#,
                "null",
                r#""é ✓ \n""#,
                r#""\ude00 cut""#,
                "3",
            ]);
            let content = prop_oneof![
                text.clone()
                    .prop_map(|t| format!(r#"[{{"type":"text","text":{t}}}]"#)),
                value(),
            ];
            let extra = prop::sample::select(vec![
                "usage",
                "details",
                "arguments",
                "output",
                "modelInfo",
                "error",
                "\\u0074ype",
                "messageId",
                "blockIndex",
                "responseMetadata",
                "parentConversationId",
                "taskId",
                "kind",
                "stepName",
            ]);
            (
                ty,
                text.clone(),
                content,
                prop::collection::vec((extra, value()), 0..4),
                " ?",
            )
                .prop_flat_map(|(ty, parent, content, extras, ws)| {
                    let mut fields = vec![
                        format!(r#""type":"{ty}""#),
                        format!(r#""parentId":{parent}"#),
                        format!(r#""content":{content}"#),
                        r#""messageId":"entry_m","toolCallId":"t1","name":"bash","toolName":"bash""#
                            .to_string(),
                        r#""assistantMessageId":"entry_m","blockId":"b0","blockIndex":0"#
                            .to_string(),
                        r#""stopReason":"stop","signalType":"x","isError":false"#.to_string(),
                    ];
                    fields.extend(extras.into_iter().map(|(k, v)| format!("\"{k}\":{v}")));
                    (Just(fields).prop_shuffle(), Just(ws))
                })
                .prop_map(|(fields, ws)| {
                    format!(
                        r#"{{"v":1,"id":"r1","conversationId":"c1","harness":"default","session":"default","timestamp":"t",{}}}"#,
                        fields.join(&format!(",{ws}"))
                    )
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]
            /// Whatever the scanner takes it reads as the visitors do; what it declines, the
            /// visitors read (errors the same).
            #[test]
            fn the_scanner_reads_any_batch_as_the_visitors(
                records in prop::collection::vec(record(), 0..4),
                ws in "[ \n]?",
            ) {
                same_as_the_tree_reader(&format!("{ws}[{ws}{}{ws}]{ws}", records.join(",")));
            }
        }
    }

    /// A text is read as a [`JsonText`] exactly where it reads as a [`Value`], and its value is
    /// that one: what [`JsonText::value`] relies on.
    #[test]
    fn a_json_text_is_read_where_a_value_is() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for text in [
            "0",
            "-1.5e-3",
            "1e400",
            "-1e400",
            "18446744073709551616",
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\udc00x""#,
            r#""\q""#,
            "\"\u{1}\"",
            r#"{"a":1,"a":2}"#,
            r#"{"input":12,"cost":{"total":0.5}}"#,
            r#"{1:2}"#,
            "[1,]",
            "nul",
            &deep(127),
            &deep(128),
            &deep(129),
        ] {
            let value = serde_json::from_str::<Value>(text).ok();
            let read = JsonText::read(text);
            assert_eq!(read.as_ref().map(JsonText::value), value.as_ref(), "{text}");
        }
        let usage = r#"{"input":12,"output":3.5,"cost":{"total":0.000005}}"#;
        let parsed: Value = serde_json::from_str(usage).unwrap();
        assert_eq!(JsonText::read(usage), Some(JsonText::from(parsed)));
        assert_ne!(JsonText::read("1"), JsonText::read("2"));
    }

    /// A usage the scanner takes is kept as its text; one `serde_json` refuses sends the batch
    /// to the visitors, which refuse it as the tree reader does.
    #[test]
    fn a_usage_is_kept_as_its_text_once_checked() {
        let batch = |usage: &str| {
            format!(
                "[{}]",
                rec(&format!(
                    r#""id":"r3","type":"assistant_message_completed","messageId":"entry_m","stopReason":"stop","usage":{usage}"#
                ))
            )
        };
        let fields = scan_fields(&batch(r#"{"input":1e2}"#)).unwrap();
        assert!(fields[0]
            .usage
            .as_ref()
            .is_some_and(|u| &*u.text == r#"{"input":1e2}"#));
        for bad in [r#"{"input":1e400}"#, r#""\ud800""#] {
            assert!(scan_fields(&batch(bad)).is_none(), "{bad}");
            same_as_the_tree_reader(&batch(bad));
        }
        same_as_the_tree_reader(&batch("null"));
    }

    #[test]
    fn a_tools_output_is_digested_not_kept() {
        let b = format!(
            "[{}]",
            rec(
                r#""id":"r2","type":"tool_outcome","assistantMessageId":"entry_m","toolCallId":"t1","toolName":"bash","isError":true,"content":[{"type":"text","text":"a long output"}]"#
            )
        );
        let read = read_batch(&b).unwrap();
        assert!(read[0].record.raw.get("content").is_none());
        let other = b.replace("a long output", "another output");
        assert_ne!(read[0].digest, read_batch(&other).unwrap()[0].digest);
    }
}
