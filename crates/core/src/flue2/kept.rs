//! What the fold keeps of each record (`recordsById`): the envelope and typed body, the JSON tree
//! only where it is read again, and a digest to tell a repeated id's record from a different one.

use serde_json::Value;

use super::records::Record;

/// A folded record as `recordsById` keeps it. Like the runtime's reducer, which keeps most records
/// only as a digest stub (`indexConversationRecord`, DSP:640-659), the JSON tree (`raw`, most of a
/// record's memory: tool output, usage, content) is dropped after the fold, except for
/// `submission_settled`, whose JSON the reconciler compares with the row's settlement record. The
/// envelope and typed body stay (the recovery paths read a repair marker's owner, tool name and
/// error flag). A repeated id is then compared by [`digest`] of the tree: equal trees, equal
/// digests; unequal trees collide with probability 2^-128.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub(crate) record: Record,
    pub(crate) digest: u128,
}

impl Kept {
    pub(crate) fn new(mut record: Record) -> Kept {
        let digest = digest(&record.raw);
        if record.envelope.record_type != "submission_settled" {
            record.raw = Value::Null;
        }
        Kept { record, digest }
    }
}

/// A 128-bit digest of a JSON tree that is equal exactly where the trees are `==` (objects
/// compare as maps, whatever their key order: keys are hashed sorted; numbers by their text, as
/// `serde_json::Number` compares).
pub(crate) fn digest(v: &Value) -> u128 {
    use std::hash::{Hash, Hasher};
    fn feed(v: &Value, h: &mut impl Hasher) {
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Number(n) => (2u8, n.to_string()).hash(h),
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(a) => {
                (4u8, a.len()).hash(h);
                for x in a {
                    feed(x, h);
                }
            }
            Value::Object(o) => {
                (5u8, o.len()).hash(h);
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort_unstable();
                for k in keys {
                    k.hash(h);
                    feed(&o[k], h);
                }
            }
        }
    }
    // Two SipHash-1-3 digests under different fixed keys (DefaultHasher::new is deterministic).
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    0xA5u8.hash(&mut b);
    feed(v, &mut a);
    feed(v, &mut b);
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_equal_exactly_where_the_trees_are() {
        let v = |t: &str| -> Value { serde_json::from_str(t).unwrap() };
        let pairs = [
            (
                r#"{"a":1,"b":[true,null,"x"]}"#,
                r#"{"b":[true,null,"x"],"a":1}"#,
            ),
            (r#"{"a":{"x":1,"y":2}}"#, r#"{"a":{"y":2,"x":1}}"#),
        ];
        for (a, b) in pairs {
            assert_eq!(v(a), v(b));
            assert_eq!(digest(&v(a)), digest(&v(b)), "{a} {b}");
        }
        let unequal = [
            (r#"{"a":1}"#, r#"{"a":1.0}"#),
            (r#"{"a":1}"#, r#"{"a":"1"}"#),
            (r#"{"a":[1,2]}"#, r#"{"a":[2,1]}"#),
            (r#"{"a":[[1],2]}"#, r#"{"a":[1,[2]]}"#),
            (r#"{"ab":1}"#, r#"{"a":1,"b":null}"#),
        ];
        for (a, b) in unequal {
            assert_ne!(v(a), v(b));
            assert_ne!(digest(&v(a)), digest(&v(b)), "{a} {b}");
        }
    }
}
