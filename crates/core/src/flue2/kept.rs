//! What the fold keeps of each record (`recordsById`): the envelope and typed body, the JSON tree
//! only where it is read again, and a digest to tell a repeated id's record from a different one.

use serde_json::Value;

pub(crate) use super::digest::digest;
use super::records::Record;

/// A folded record as `recordsById` keeps it. Like the runtime's reducer, which keeps most records
/// only as a digest stub (`indexConversationRecord`, DSP:640-659), most records are kept as their
/// [`digest`] only (a repeated id's record is compared with it: equal trees, equal digests;
/// unequal trees collide with probability about 2^-64, [`super::digest`]). The record itself is
/// kept only where it is read again ([`Kept::keeps_record`]): a tool outcome until its commit
/// (the commit checks it), a repair marker's outcome (the recovery paths read its owner, tool
/// name and error flag) and a settlement, with its JSON (the reconciler compares it with the
/// row's settlement record); every other record's JSON tree is dropped.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub(crate) record: Option<Box<Record>>,
    pub(crate) digest: u128,
}

/// The prefix of a repair marker's tool outcome id (the runtime's `record_tool_repair_outcome_`).
pub(crate) const REPAIR_OUTCOME: &str = "record_tool_repair_outcome_";

impl Kept {
    /// `record` kept with `digest`, its tree's (taken from the tree, or while the record was
    /// read from its text: [`super::records_text`]).
    pub(crate) fn digested(mut record: Record, digest: u128) -> Kept {
        if !Kept::keeps_record(&record) {
            return Kept {
                record: None,
                digest,
            };
        }
        if record.envelope.record_type != "submission_settled" {
            record.raw = Value::Null;
        }
        Kept {
            record: Some(Box::new(record)),
            digest,
        }
    }

    /// [`Kept::digested`] with the id it is kept by: taken from a record not kept (a copy of
    /// every record's id was an allocation per record), copied from one kept.
    pub(crate) fn keyed(mut record: Record, digest: u128) -> (String, Kept) {
        if Kept::keeps_record(&record) {
            (record.envelope.id.clone(), Kept::digested(record, digest))
        } else {
            let id = std::mem::take(&mut record.envelope.id);
            (
                id,
                Kept {
                    record: None,
                    digest,
                },
            )
        }
    }

    /// Whether a record is read again after its fold (by the fold or the recovery paths).
    pub(crate) fn keeps_record(record: &Record) -> bool {
        matches!(
            record.envelope.record_type.as_str(),
            "tool_outcome" | "submission_settled"
        )
    }

    /// Once its outcome is committed, a tool outcome is read again only as a repair marker.
    pub(crate) fn committed(&mut self) {
        if self
            .record
            .as_ref()
            .is_some_and(|r| !r.envelope.id.starts_with(REPAIR_OUTCOME))
        {
            self.record = None;
        }
    }
}
