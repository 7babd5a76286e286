//! Step memos on flue 2.x: a `durable: true` tool's `step.do(name, fn)` settles each completed
//! step as a `tool_step_settled` record (`createToolStep`, CSS:3348 of 2.1.0: `toolCallId`,
//! `toolName`, `stepName`, `value`, under the id `record_tool_step_<b64 call>_<b64 step>`,
//! `toolStepRecordId`, DSP:30), and a re-execution of the same call after a crash replays the
//! value instead of running the step again. So a call's memos say which of its side effects
//! already happened. `show` puts each under the tool call it belongs to.
//!
//! The fold keeps no record's fields but the envelope (`turnscope-core`'s `kept.rs`: memory), so
//! the memos are read here from the stream as stored: only the batches whose text holds
//! `"tool_step_settled"` are parsed, record by record.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use turnscope_store::{Flue2SqliteReader, StoreError};

/// One `tool_step_settled` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepMemo {
    pub record_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub step_name: String,
    pub submission_id: Option<String>,
    pub attempt_id: Option<String>,
    /// The batch it was appended in.
    pub seq: i64,
    /// The size of its `value`'s JSON text (the value itself can be large: not shown).
    pub value_bytes: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemoRecord<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    tool_call_id: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    step_name: String,
    #[serde(default)]
    submission_id: Option<String>,
    #[serde(default)]
    attempt_id: Option<String>,
    #[serde(borrow, default)]
    value: Option<&'a RawValue>,
}

/// The step memos of the stream at `path`, in the order they were appended (a repeated id once:
/// the runtime appends an id again only byte-identical).
pub fn step_memos(reader: &Flue2SqliteReader, path: &str) -> Result<Vec<StepMemo>, StoreError> {
    let mut out: Vec<StepMemo> = Vec::new();
    reader.each_stream_batch(path, |b| {
        memos_in_batch(b.seq, &b.data, &mut out);
        Ok(())
    })?;
    Ok(out)
}

/// A step memo's record type.
pub const MEMO_TYPE: &str = "tool_step_settled";

/// The step memos of one batch (`seq`, `data`) added to `out`, each record id once: only a batch
/// whose text names the type is parsed.
pub fn memos_in_batch(seq: i64, data: &str, out: &mut Vec<StepMemo>) {
    // Every batch of every stream is looked at: memchr's vectorised search, not `str::contains`
    // (1.9 % of a whale's `show`, `callgrind`).
    static TYPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"tool_step_settled\""));
    if TYPE.find(data.as_bytes()).is_none() {
        return;
    }
    // A batch that does not parse: the fold says why (`show` prints it).
    let records: Vec<&RawValue> = serde_json::from_str(data).unwrap_or_default();
    for raw in records {
        let Ok(r) = serde_json::from_str::<MemoRecord>(raw.get()) else {
            continue;
        };
        if r.kind != MEMO_TYPE || out.iter().any(|m| m.record_id == r.id) {
            continue;
        }
        out.push(StepMemo {
            record_id: r.id,
            tool_call_id: r.tool_call_id,
            tool_name: r.tool_name,
            step_name: r.step_name,
            submission_id: r.submission_id,
            attempt_id: r.attempt_id,
            seq,
            value_bytes: r.value.map_or(0, |v| v.get().len()),
        });
    }
}

impl StepMemo {
    pub fn json(&self) -> Value {
        json!({
            "recordId": self.record_id,
            "stepName": self.step_name,
            "toolName": self.tool_name,
            "submissionId": self.submission_id,
            "attemptId": self.attempt_id,
            "seq": self.seq,
            "valueBytes": self.value_bytes,
        })
    }
}

/// The memos of one call, in order.
pub fn memos_of<'m>(memos: &'m [StepMemo], tool_call_id: &str) -> Vec<&'m StepMemo> {
    memos
        .iter()
        .filter(|m| m.tool_call_id == tool_call_id)
        .collect()
}
