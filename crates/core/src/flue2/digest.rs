//! A record's digest: equal where the runtime's reducer finds two records the same, that is where
//! `JSON.stringify` of each, parsed by JavaScript, writes the same text (`applyConversationRecord`,
//! `dist/dispatch-Dohpn4Ea.mjs:325`, compares that text, or a 64-bit FNV-1a of it for the records
//! it keeps as stubs). So keys count in JavaScript's property order (array-index keys, `"0"` to
//! `"4294967294"` without leading zeros, first in numeric order, then the others as written), and
//! numbers by their double (`1`, `1.0` and `1e0` are one number, `-0` is `0`, integers past 2^53
//! round). Computed either from a tree ([`digest`]; `serde_json` keeps key order, and a repeated
//! key's last value at its first place, as `JSON.parse` does) or while the record's text is read,
//! without building a tree ([`DigestSeed`]): both give the same digest for the same text.
//!
//! Each node hashes its tag and contents; an array and an object their children's digests in
//! order. The high 64 bits are that hash, the low 64 a size (nodes and string bytes). Unequal
//! texts collide with probability about 2^-64, as the runtime's own stubs do.

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
fn hasher() -> foldhash::quality::FoldHasher<'static> {
    foldhash::quality::FixedState::with_seed(0x7475_726e_7363_6f70).build_hasher()
}

const NULL: u8 = 0;
const BOOL: u8 = 1;
const NUMBER: u8 = 4;
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

/// A JavaScript number: every JSON number is its double (`JSON.stringify` writes one text per
/// double; `-0` as `0`).
fn pos_int(n: u64) -> NodeDigest {
    float(n as f64)
}
fn neg_int(n: i64) -> NodeDigest {
    float(n as f64)
}
fn float(f: f64) -> NodeDigest {
    leaf(NUMBER, &(f + 0.0).to_bits().to_le_bytes())
}

/// The array index a key is to JavaScript (`"0"` to `"4294967294"`, no leading zero): such
/// properties come first, in numeric order, whatever order they were written in.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|n| *n <= 4_294_967_294)
        .map(|n| n as u32)
}

/// An object's fields as they come, hashed in JavaScript's property order: the named keys in
/// order as they come, the array-index keys (rare) held and put first by number at the end.
struct Fields {
    named: foldhash::quality::FoldHasher<'static>,
    indexed: Vec<(u32, u64)>,
    size: u64,
    len: usize,
}

impl Fields {
    fn new() -> Fields {
        Fields {
            named: hasher(),
            indexed: Vec::new(),
            size: 0,
            len: 0,
        }
    }

    fn add(&mut self, key: &str, value: NodeDigest) {
        let f = field(key, value);
        self.size += f.size;
        self.len += 1;
        match array_index(key) {
            Some(i) => self.indexed.push((i, f.hash)),
            None => self.named.write_u64(f.hash),
        }
    }

    fn close(mut self) -> NodeDigest {
        self.indexed.sort_unstable_by_key(|(i, _)| *i);
        let mut first = hasher();
        for (_, h) in &self.indexed {
            first.write_u64(*h);
        }
        let mut h = hasher();
        h.write_u8(OBJECT);
        h.write_usize(self.len);
        h.write_u64(first.finish());
        h.write_u64(self.named.finish());
        NodeDigest {
            hash: h.finish(),
            size: 1 + self.size,
        }
    }
}

/// An object's field: its key's and value's digests, hashed together.
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
            let mut fields = Fields::new();
            for (k, x) in o {
                fields.add(k, node(x));
            }
            fields.close()
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
        let mut fields = Fields::new();
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(k) = map.next_key_seed(KeySeed)? {
            if keys.contains(&k) {
                return Err(serde::de::Error::custom(DUPLICATE_KEY));
            }
            fields.add(&k, map.next_value_seed(DigestSeed)?);
            keys.push(k);
        }
        Ok(fields.close())
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

/// An object's digest field by field, in the order they are read: what
/// [`DigestVisitor::visit_map`] does, for a reader that takes some fields apart.
pub(crate) struct ObjectDigest {
    fields: Fields,
}

impl ObjectDigest {
    pub(crate) fn new() -> ObjectDigest {
        ObjectDigest {
            fields: Fields::new(),
        }
    }
    pub(crate) fn add(&mut self, key: &str, value: NodeDigest) {
        self.fields.add(key, value);
    }
    pub(crate) fn add_value(&mut self, key: &str, value: &Value) {
        self.add(key, node(value));
    }
    pub(crate) fn finish(self) -> u128 {
        self.fields.close().to_u128()
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

    /// `JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b))`, as node answers it.
    const SAME_TO_JS: [(&str, &str, bool); 12] = [
        (r#"{"a":1,"b":2}"#, r#"{"b":2,"a":1}"#, false),
        (r#"{"a":1}"#, r#"{"a":1.0}"#, true),
        (r#"{"g":1e2}"#, r#"{"g":100}"#, true),
        (r#"{"f":-0.0}"#, r#"{"f":0}"#, true),
        (r#"{"1":"x","a":2}"#, r#"{"a":2,"1":"x"}"#, true),
        (r#"{"10":1,"9":2,"b":3}"#, r#"{"b":3,"9":2,"10":1}"#, true),
        (r#"{"01":1,"a":2}"#, r#"{"a":2,"01":1}"#, false),
        (
            r#"{"4294967295":1,"a":2}"#,
            r#"{"a":2,"4294967295":1}"#,
            false,
        ),
        (r#"{"a":[1,2]}"#, r#"{"a":[2,1]}"#, false),
        (
            r#"{"n":9007199254740993}"#,
            r#"{"n":9007199254740992}"#,
            true,
        ),
        (r#"{"e":"\u00e9"}"#, r#"{"e":"é"}"#, true),
        (r#"{"a":{"x":1,"y":2}}"#, r#"{"a":{"y":2,"x":1}}"#, false),
    ];

    #[test]
    fn the_digest_is_equal_exactly_where_javascript_writes_the_same_text() {
        for (a, b, same) in SAME_TO_JS {
            assert_eq!(digest(&tree(a)) == digest(&tree(b)), same, "{a} {b}");
            assert_eq!(
                streamed(a).unwrap() == streamed(b).unwrap(),
                same,
                "{a} {b}"
            );
        }
        // Every text is its own digest and no other's among these.
        for (i, a) in TEXTS.iter().enumerate() {
            for (j, b) in TEXTS.iter().enumerate() {
                assert_eq!(digest(&tree(a)) == digest(&tree(b)), i == j, "{a} {b}");
            }
        }
    }

    #[test]
    fn read_from_the_text_it_is_the_trees_digest() {
        for t in TEXTS {
            assert_eq!(streamed(t), Ok(digest(&tree(t))), "{t}");
        }
        let spaced = "{ \"b\" : [ true , null , \"x\" ] ,\n \"a\" : 1 }";
        assert_eq!(streamed(spaced), Ok(digest(&tree(TEXTS[1]))));
    }

    #[test]
    fn a_repeated_key_is_refused_not_digested() {
        let e = streamed(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(e.contains(DUPLICATE_KEY), "{e}");
        // Its tree keeps the last value, and that is what the caller digests instead.
        assert_eq!(tree(r#"{"a":1,"a":2}"#), tree(r#"{"a":2}"#));
    }
}
