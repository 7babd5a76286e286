//! Previews: the few characters of text a compact entry keeps. Shared by the compact parser
//! (`compact_de`) and its reference (`compact_oracle`), so neither needs the other's module.

use serde_json::Value;

/// Characters of text kept for a compact entry's preview (rows show at most 60 after cleaning).
pub const PREVIEW_CHARS: usize = 96;

/// A JSON value's preview from its raw text: a string cut to `PREVIEW_CHARS` after unescaping
/// only a prefix (tool results can be megabytes), any other value as stored.
pub(crate) fn raw_preview(raw: &str) -> Result<Value, serde_json::Error> {
    if !raw.starts_with('"') {
        return serde_json::from_str(raw);
    }
    // Up to 12 bytes per character (a surrogate pair of escapes): this prefix holds the preview.
    let limit = PREVIEW_CHARS * 12 + 2;
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

pub(crate) fn preview(s: &str) -> String {
    match s.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s.to_string(),
    }
}
