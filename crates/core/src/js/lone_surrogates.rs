//! JSON text with a lone surrogate's escape, read as `JSON.parse` reads it.
//!
//! `JSON.stringify` writes a UTF-16 code unit of a surrogate pair that has lost its other half as
//! an escape (`"\ud83d"`): a string sliced between the halves of an emoji (a tool output cut to
//! so many code units, a streamed partial cut by a crash) is stored so. `JSON.parse` reads it back
//! as that code unit, so the runtime loads the row; `serde_json` refuses the text, as a Rust string
//! cannot hold a lone surrogate. Read as is, such a row would be called damaged where the runtime
//! sees nothing wrong. [`from_str`] reads it with each lone surrogate as U+FFFD, the replacement
//! character, which is also how the text is shown. Only text that `serde_json` refused is
//! rewritten, so every other row is read exactly as before and at the same cost.
//!
//! What may differ from the runtime: two strings that differ only in their lone surrogates read
//! as equal, and as equal to one with U+FFFD in their place.

use serde::de::DeserializeOwned;

/// `text` parsed as `JSON.parse` would accept it: as `serde_json` reads it, or, where that fails
/// and the text has lone surrogate escapes, with each of them read as U+FFFD. The error is the
/// first parse's when the rewritten text fails too.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(e) => match replace_lone_surrogates(text) {
            Some(fixed) => serde_json::from_str(&fixed).map_err(|_| e),
            None => Err(e),
        },
    }
}

/// Whether `text` has the escape of a lone surrogate ([`replace_lone_surrogates`] would change it):
/// what a write checks before it carries text back that turnscope reads as U+FFFD.
pub fn has_lone_surrogates(text: &str) -> bool {
    lone_escapes(text).next().is_some()
}

/// `text` with every `\uXXXX` escape of a lone surrogate (a high half not followed by the escape
/// of a low half, or a low half not preceded by a high one) replaced by `\ufffd`, or `None` when it
/// has none. Escapes are read in order from each backslash, as a JSON string's are, so `\\ud83d`
/// (an escaped backslash, then text) is left alone.
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let mut out: Option<String> = None;
    // Bytes of `text` before `copied` are in `out` already.
    let mut copied = 0;
    for at in lone_escapes(text) {
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[copied..at]);
        o.push_str("\\ufffd");
        copied = at + 6;
    }
    let mut o = out?;
    o.push_str(&text[copied..]);
    Some(o)
}

/// Where each lone surrogate's escape begins in `text` (the offset of its backslash).
fn lone_escapes(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(k) = b.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
            let at = i + k;
            let Some(unit) = escaped_unit(b, at) else {
                // Any other escape is two bytes (`\"`, `\\`, `\n`, ...), or the text is not JSON.
                i = at + 2;
                continue;
            };
            i = at + 6;
            if (0xd800..0xdc00).contains(&unit)
                && escaped_unit(b, at + 6).is_some_and(|low| (0xdc00..0xe000).contains(&low))
            {
                i = at + 12;
            } else if (0xd800..0xe000).contains(&unit) {
                return Some(at);
            }
        }
        None
    })
}

/// The code unit of the `\uXXXX` escape at `at`, if there is one there.
fn escaped_unit(b: &[u8], at: usize) -> Option<u32> {
    let e = b.get(at..at + 6)?;
    if e[0] != b'\\' || e[1] != b'u' {
        return None;
    }
    e[2..]
        .iter()
        .try_fold(0, |unit, &d| Some(unit << 4 | char::from(d).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn lone_halves_become_the_replacement_character_and_pairs_stay() {
        let cases = [
            (r#""a\ud83d b""#, Some(r#""a\ufffd b""#)),
            (r#""\ude00""#, Some(r#""\ufffd""#)),
            (r#""\ud83d\ud83d\ude00""#, Some(r#""\ufffd\ud83d\ude00""#)),
            (r#""end\uD83D""#, Some(r#""end\ufffd""#)),
            (r#""\ud83d\n""#, Some(r#""\ufffd\n""#)),
            (r#""\ud83d\ude00""#, None),
            (r#""\\ud83d""#, None),
            (r#""\\\ud83d""#, Some(r#""\\\ufffd""#)),
            (r#""é \u00e9 \"\ud83d\"""#, Some(r#""é \u00e9 \"\ufffd\"""#)),
            (r#"{"a":1}"#, None),
            ("\"trailing \\", None),
        ];
        for (text, want) in cases {
            assert_eq!(replace_lone_surrogates(text).as_deref(), want, "{text}");
            assert_eq!(has_lone_surrogates(text), want.is_some(), "{text}");
        }
    }

    #[test]
    fn text_serde_json_refuses_for_a_lone_surrogate_reads_as_json_parse_does() {
        let text = r#"{"text":"cut \ud83d","n":[1,"\ud83d\ude00"]}"#;
        assert!(serde_json::from_str::<Value>(text).is_err());
        let v: Value = from_str(text).unwrap();
        assert_eq!(v["text"], "cut \u{fffd}");
        assert_eq!(v["n"][1], "\u{1f600}");
        // Text that is not JSON for another reason keeps its first error.
        let bad = r#"{"text":"\ud83d",}"#;
        let e = from_str::<Value>(bad).unwrap_err();
        assert!(
            e.to_string().contains("surrogate") || e.to_string().contains("escape"),
            "{e}"
        );
        assert!(from_str::<Value>("[1,").is_err());
    }
}
