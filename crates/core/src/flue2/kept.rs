//! What the fold keeps of each record (`recordsById`): the envelope and typed body, the JSON tree
//! only where it is read again, and a digest to tell a repeated id's record from a different one.

use serde_json::Value;

pub(crate) use super::digest::digest;
use super::records::Record;

/// A folded record as `recordsById` keeps it. Like the runtime's reducer, which keeps most records
/// only as a digest stub (`indexConversationRecord`, DSP:640-659), the JSON tree (`raw`, most of a
/// record's memory: tool output, usage, content) is dropped after the fold, except for
/// `submission_settled`, whose JSON the reconciler compares with the row's settlement record. The
/// envelope and typed body stay (the recovery paths read a repair marker's owner, tool name and
/// error flag). A repeated id is then compared by [`digest`] of the tree: equal trees, equal
/// digests; unequal trees collide with probability about 2^-64 ([`super::digest`]).
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub(crate) record: Record,
    pub(crate) digest: u128,
}

impl Kept {
    /// `record` kept with `digest`, its tree's (taken from the tree, or while the record was
    /// read from its text: [`super::records_text`]).
    pub(crate) fn digested(mut record: Record, digest: u128) -> Kept {
        if record.envelope.record_type != "submission_settled" {
            record.raw = Value::Null;
        }
        Kept { record, digest }
    }
}
