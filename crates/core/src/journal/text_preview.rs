//! Previews: the few characters of text a compact entry keeps. Shared by the compact parser
//! (`compact_de`) and its reference (`compact_oracle`), so neither needs the other's module.

use serde_json::Value;

/// Characters of text kept for a compact entry's preview (rows show at most 60 after cleaning).
pub const PREVIEW_CHARS: usize = 96;

/// Bytes of a JSON string's raw text that hold its preview: up to 12 bytes per character (a
/// surrogate pair of escapes), and the quotes.
const PREVIEW_SCAN_BYTES: usize = PREVIEW_CHARS * 12 + 2;

/// A JSON value's preview from its raw text: a string cut to `PREVIEW_CHARS` after unescaping
/// only a prefix (tool results can be megabytes), any other value as stored.
pub(crate) fn raw_preview(raw: &str) -> Result<Value, serde_json::Error> {
    if !raw.starts_with('"') {
        return serde_json::from_str(raw);
    }
    let limit = PREVIEW_SCAN_BYTES;
    // `raw` is a string the parser has already checked (no control characters, no unknown
    // escapes), so only a `\u` escape can still fail to parse (a lone surrogate). Without one in
    // the part read below, the preview is the first PREVIEW_CHARS characters, found by counting
    // them: a few hundred bytes parsed instead of up to `limit` (tool results are mostly short,
    // and were parsed whole).
    if !escapes_u_in_head(raw) {
        return Ok(Value::String(head_preview(raw)));
    }
    if raw.len() > limit {
        let bytes = raw.as_bytes();
        let mut cut = 1;
        let mut i = 1;
        while i < limit {
            if bytes[i] == b'\\' {
                i += if bytes.get(i + 1) == Some(&b'u') {
                    6
                } else {
                    2
                };
            } else {
                i += 1;
            }
            if i <= limit && raw.is_char_boundary(i) {
                cut = i;
            }
        }
        let head = format!("{}\"", &raw[..cut]);
        // A cut between the halves of a surrogate pair does not parse: then read it all.
        if let Ok(s) = serde_json::from_str::<String>(&head) {
            return Ok(Value::String(preview(&s)));
        }
    }
    let s: String = serde_json::from_str(raw)?;
    Ok(Value::String(preview(&s)))
}

/// Whether the part of the checked JSON string `raw` that `raw_preview` reads holds a `\u`
/// escape (the only thing there that can still fail to parse).
fn escapes_u_in_head(raw: &str) -> bool {
    // The span ends on a character boundary at or before the limit, as `raw_preview`'s cut does.
    let mut end = raw.len().min(PREVIEW_SCAN_BYTES);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    raw[..end].contains("\\u")
}

/// Whether `raw_preview(raw)` succeeds, without building the preview where that can be known
/// without it: what a read that drops previews still checks, so that it takes and declines the
/// same rows as one keeping them.
pub(crate) fn raw_preview_reads(raw: &str) -> bool {
    if raw.starts_with('"') && !escapes_u_in_head(raw) {
        return true;
    }
    raw_preview(raw).is_ok()
}

/// The first `PREVIEW_CHARS` characters of the checked JSON string `raw`, which has no `\u`
/// escape before them: each character or two-byte escape counts one.
fn head_preview(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let (mut i, mut chars, mut escaped) = (1, 0, false);
    while chars < PREVIEW_CHARS && i < bytes.len() {
        match bytes[i] {
            b'"' => break,
            b'\\' => {
                escaped = true;
                i += 2;
            }
            b if b < 0x80 => i += 1,
            b if b >= 0xF0 => i += 4,
            b if b >= 0xE0 => i += 3,
            _ => i += 2,
        }
        chars += 1;
    }
    let head = &raw[1..i.min(raw.len())];
    if !escaped {
        return head.to_string();
    }
    // The escapes are all two-byte ones, checked already: each stands for one character. Read
    // here rather than by a JSON parse of the head (a copy, a format and a parse per entry).
    let mut out = String::with_capacity(head.len());
    let mut rest = head;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = rest.as_bytes().get(at + 1).copied();
        out.push(match escape {
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            // `"`, `\\` and `/` stand for themselves.
            Some(c) => char::from(c),
            None => break,
        });
        rest = &rest[(at + 2).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn preview(s: &str) -> String {
    match s.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counted cut gives what unescaping the whole string and cutting it gives.
    #[test]
    fn counted_preview_equals_the_cut_of_the_whole_string() {
        let long = "ab\"c\\d\nе€😀 ".repeat(60);
        let samples = [
            String::new(),
            "short".into(),
            "x".repeat(PREVIEW_CHARS),
            "x".repeat(PREVIEW_CHARS + 1),
            "é".repeat(5000),
            long.clone(),
            format!("{}\"{}", "y".repeat(PREVIEW_CHARS - 1), long),
            "tab\there\u{1}".into(),
            format!("{}😀", "z".repeat(PREVIEW_CHARS - 1)),
        ];
        for s in samples {
            let raw = serde_json::to_string(&s).unwrap();
            assert_eq!(
                raw_preview(&raw).unwrap(),
                Value::String(preview(&s)),
                "{raw:.80}"
            );
        }
        // Escaped by hand: two-byte escapes and a surrogate pair.
        let raw = r#""\b\f\n\r\t\"\\\/ x""#;
        assert_eq!(
            raw_preview(raw).unwrap(),
            Value::String("\u{8}\u{c}\n\r\t\"\\/ x".into())
        );
        let raw = r#""a\/b\\c\"d\ud83d\ude00e""#;
        assert_eq!(
            raw_preview(raw).unwrap(),
            Value::String("a/b\\c\"d😀e".into())
        );
    }
}
