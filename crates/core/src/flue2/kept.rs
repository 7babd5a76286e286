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
/// digests; unequal trees collide with probability about 2^-64.
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

/// A digest of a JSON tree (64 hashed bits and a length) that is equal where the trees are `==` (objects
/// compare as maps, whatever their key order: keys are taken sorted; numbers by their text, as
/// `serde_json::Number` compares). The tree is written once into an unambiguous byte form
/// (tagged, length-prefixed) and the bytes hashed in bulk: per-field hashing was a fifth of a
/// whale's `show`.
pub(crate) fn digest(v: &Value) -> u128 {
    use std::hash::Hasher;
    fn put_len(n: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn put_str(s: &str, out: &mut Vec<u8>) {
        put_len(s.len(), out);
        out.extend_from_slice(s.as_bytes());
    }
    fn put(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Null => out.push(0),
            Value::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
            Value::Number(n) => {
                out.push(2);
                // A number's text has no 0xFF byte: that ends it.
                let _ = std::io::Write::write_fmt(out, format_args!("{n}"));
                out.push(0xFF);
            }
            Value::String(s) => {
                out.push(3);
                put_str(s, out);
            }
            Value::Array(a) => {
                out.push(4);
                put_len(a.len(), out);
                for x in a {
                    put(x, out);
                }
            }
            Value::Object(o) => {
                out.push(5);
                put_len(o.len(), out);
                let mut fields: Vec<(&String, &Value)> = o.iter().collect();
                fields.sort_unstable_by(|x, y| x.0.cmp(y.0));
                for (k, x) in fields {
                    put_str(k, out);
                    put(x, out);
                }
            }
        }
    }
    let mut bytes = Vec::with_capacity(1024);
    put(v, &mut bytes);
    // One SipHash-1-3 pass (DefaultHasher::new is deterministic) beside the byte form's length:
    // a second pass for 128 hashed bits cost a tenth of a whale's `show`. Unequal trees of the
    // same length collide with probability about 2^-64; the runtime's own stubs keep a 64-bit
    // FNV-1a of the record's text.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&bytes);
    (u128::from(h.finish()) << 64) | bytes.len() as u128
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
