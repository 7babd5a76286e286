//! A record's digest: equal where two records are equal JSON trees (`serde_json::Value` `==`:
//! objects compare as maps whatever their key order, numbers as `serde_json::Number` compares
//! them), computed either from a tree ([`digest`]) or while the record's text is read, without
//! building a tree ([`DigestSeed`]). Both give the same digest for the same tree: the fold keeps
//! only the digest of most records, and a repeated id's record is compared with it.
//!
//! The digest is structural: each node hashes its tag and contents; an array its children's
//! digests in order; an object the wrapping sum of each field's hash (key and value digest), so
//! the order of the keys does not count and nothing has to be sorted or held. The high 64 bits
//! are that hash, the low 64 a size (nodes and string bytes), equal for equal trees. Unequal
//! trees collide with probability about 2^-64 (the runtime's own stubs keep a 64-bit FNV-1a of
//! a record's text).

use std::borrow::Cow;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// One node's hash and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeDigest {
    hash: u64,
    size: u64,
}

impl NodeDigest {
    pub(crate) fn to_u128(self) -> u128 {
        (u128::from(self.hash) << 64) | u128::from(self.size)
    }
}

/// A fixed seed: digests are compared within one process, but they must not vary with it.
fn hasher() -> impl Hasher {
    foldhash::quality::FixedState::with_seed(0x7475_726e_7363_6f70).build_hasher()
}

const NULL: u8 = 0;
const BOOL: u8 = 1;
const POS_INT: u8 = 2;
const NEG_INT: u8 = 3;
const FLOAT: u8 = 4;
const STRING: u8 = 5;
const ARRAY: u8 = 6;
const OBJECT: u8 = 7;

fn leaf(tag: u8, bytes: &[u8]) -> NodeDigest {
    let mut h = hasher();
    h.write_u8(tag);
    h.write_usize(bytes.len());
    h.write(bytes);
    NodeDigest {
        hash: h.finish(),
        size: 1 + bytes.len() as u64,
    }
}

fn string(s: &str) -> NodeDigest {
    leaf(STRING, s.as_bytes())
}

/// `serde_json::Number` equality: a non-negative integer is `PosInt` however it was read, a
/// negative one `NegInt`, anything else a float compared as `f64` (so `-0.0` equals `0.0`).
fn pos_int(n: u64) -> NodeDigest {
    leaf(POS_INT, &n.to_le_bytes())
}
fn neg_int(n: i64) -> NodeDigest {
    if n >= 0 {
        return pos_int(n as u64);
    }
    leaf(NEG_INT, &n.to_le_bytes())
}
fn float(f: f64) -> NodeDigest {
    leaf(FLOAT, &(f + 0.0).to_bits().to_le_bytes())
}

/// An object's field: its key's and value's digests, hashed together (summed by the object).
fn field(key: &str, value: NodeDigest) -> NodeDigest {
    let mut h = hasher();
    h.write_usize(key.len());
    h.write(key.as_bytes());
    h.write_u64(value.hash);
    NodeDigest {
        hash: h.finish(),
        size: 1 + key.len() as u64 + value.size,
    }
}

fn close(tag: u8, len: usize, sum: NodeDigest) -> NodeDigest {
    let mut h = hasher();
    h.write_u8(tag);
    h.write_usize(len);
    h.write_u64(sum.hash);
    NodeDigest {
        hash: h.finish(),
        size: 1 + sum.size,
    }
}

/// The digest of a JSON tree.
pub(crate) fn digest(v: &Value) -> u128 {
    node(v).to_u128()
}

fn node(v: &Value) -> NodeDigest {
    match v {
        Value::Null => leaf(NULL, &[]),
        Value::Bool(b) => leaf(BOOL, &[u8::from(*b)]),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => pos_int(u),
            (None, Some(i), _) => neg_int(i),
            (_, _, f) => float(f.unwrap_or(f64::NAN)),
        },
        Value::String(s) => string(s),
        Value::Array(a) => {
            let mut h = hasher();
            let mut size = 0u64;
            for x in a {
                let d = node(x);
                h.write_u64(d.hash);
                size += d.size;
            }
            close(
                ARRAY,
                a.len(),
                NodeDigest {
                    hash: h.finish(),
                    size,
                },
            )
        }
        Value::Object(o) => {
            let mut sum = NodeDigest { hash: 0, size: 0 };
            for (k, x) in o {
                let f = field(k, node(x));
                sum.hash = sum.hash.wrapping_add(f.hash);
                sum.size += f.size;
            }
            close(OBJECT, o.len(), sum)
        }
    }
}

/// Reads one JSON value and gives its [`NodeDigest`] without building it. An object with a
/// repeated key (its tree keeps the last value) is refused with [`DUPLICATE_KEY`]: the caller
/// digests that record's tree instead.
pub(crate) struct DigestSeed;

/// The error message of an object with a repeated key.
pub(crate) const DUPLICATE_KEY: &str = "turnscope: a repeated key";

impl<'de> DeserializeSeed<'de> for DigestSeed {
    type Value = NodeDigest;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<NodeDigest, D::Error> {
        d.deserialize_any(DigestVisitor)
    }
}

struct DigestVisitor;

impl<'de> Visitor<'de> for DigestVisitor {
    type Value = NodeDigest;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<NodeDigest, E> {
        Ok(leaf(NULL, &[]))
    }
    fn visit_none<E>(self) -> Result<NodeDigest, E> {
        Ok(leaf(NULL, &[]))
    }
    fn visit_bool<E>(self, b: bool) -> Result<NodeDigest, E> {
        Ok(leaf(BOOL, &[u8::from(b)]))
    }
    fn visit_u64<E>(self, n: u64) -> Result<NodeDigest, E> {
        Ok(pos_int(n))
    }
    fn visit_i64<E>(self, n: i64) -> Result<NodeDigest, E> {
        Ok(neg_int(n))
    }
    fn visit_f64<E>(self, f: f64) -> Result<NodeDigest, E> {
        Ok(float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<NodeDigest, E> {
        Ok(string(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeDigest, A::Error> {
        let mut h = hasher();
        let mut size = 0u64;
        let mut len = 0usize;
        while let Some(d) = seq.next_element_seed(DigestSeed)? {
            h.write_u64(d.hash);
            size += d.size;
            len += 1;
        }
        Ok(close(
            ARRAY,
            len,
            NodeDigest {
                hash: h.finish(),
                size,
            },
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeDigest, A::Error> {
        let mut sum = NodeDigest { hash: 0, size: 0 };
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(k) = map.next_key_seed(KeySeed)? {
            if keys.contains(&k) {
                return Err(serde::de::Error::custom(DUPLICATE_KEY));
            }
            let f = field(&k, map.next_value_seed(DigestSeed)?);
            sum.hash = sum.hash.wrapping_add(f.hash);
            sum.size += f.size;
            keys.push(k);
        }
        Ok(close(OBJECT, keys.len(), sum))
    }
}

/// An object key, borrowed from the text where it has no escapes.
pub(crate) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}

/// The field hash of key `k` and a value of digest `d`, and an object closed over a sum of
/// fields: what [`DigestVisitor::visit_map`] does, for a reader that takes some fields apart.
pub(crate) struct ObjectDigest {
    sum: NodeDigest,
    len: usize,
}

impl ObjectDigest {
    pub(crate) fn new() -> ObjectDigest {
        ObjectDigest {
            sum: NodeDigest { hash: 0, size: 0 },
            len: 0,
        }
    }
    pub(crate) fn add(&mut self, key: &str, value: NodeDigest) {
        let f = field(key, value);
        self.sum.hash = self.sum.hash.wrapping_add(f.hash);
        self.sum.size += f.size;
        self.len += 1;
    }
    pub(crate) fn add_value(&mut self, key: &str, value: &Value) {
        self.add(key, node(value));
    }
    pub(crate) fn finish(self) -> u128 {
        close(OBJECT, self.len, self.sum).to_u128()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(t: &str) -> Value {
        serde_json::from_str(t).unwrap()
    }

    fn streamed(t: &str) -> Result<u128, String> {
        let mut de = serde_json::Deserializer::from_str(t);
        DigestSeed
            .deserialize(&mut de)
            .map(NodeDigest::to_u128)
            .map_err(|e| e.to_string())
    }

    const TEXTS: [&str; 12] = [
        r#"{"a":1,"b":[true,null,"x"]}"#,
        r#"{"b":[true,null,"x"],"a":1}"#,
        r#"{"a":{"x":1,"y":2}}"#,
        r#"{"a":{"y":2,"x":1}}"#,
        r#"{"a":1.0}"#,
        r#"{"a":"1"}"#,
        r#"{"a":[1,2]}"#,
        r#"{"a":[2,1]}"#,
        r#"{"a":[[1],2]}"#,
        r#"{"a":[1,[2]]}"#,
        r#"{"ab":1,"e":"\u00e9\n","n":-3,"f":-0.0,"g":1e2}"#,
        r#"{"a":1,"b":null,"e":"é\n","n":-3,"f":0.0,"g":100.0}"#,
    ];

    #[test]
    fn the_digest_is_equal_exactly_where_the_trees_are() {
        for a in TEXTS {
            for b in TEXTS {
                assert_eq!(
                    tree(a) == tree(b),
                    digest(&tree(a)) == digest(&tree(b)),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn read_from_the_text_it_is_the_trees_digest() {
        for t in TEXTS {
            assert_eq!(streamed(t), Ok(digest(&tree(t))), "{t}");
        }
        let spaced = "{ \"b\" : [ true , null , \"x\" ] ,\n \"a\" : 1 }";
        assert_eq!(streamed(spaced), Ok(digest(&tree(TEXTS[0]))));
    }

    #[test]
    fn a_repeated_key_is_refused_not_digested() {
        let e = streamed(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(e.contains(DUPLICATE_KEY), "{e}");
        // Its tree keeps the last value, and that is what the caller digests instead.
        assert_eq!(tree(r#"{"a":1,"a":2}"#), tree(r#"{"a":2}"#));
    }
}
