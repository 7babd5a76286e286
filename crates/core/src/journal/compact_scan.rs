//! The compact parser's common case as a byte scanner: one pass over an entry's stored JSON that
//! checks its syntax as `serde_json` does and reads the kept keys (`compact_de`'s `Top`, `Msg`
//! and content blocks) without serde's visitors, so the bodies it skips (tool arguments, result
//! text, `details`) cost a scan for the next quote, backslash or control byte, eight bytes at a
//! time, and the text it keeps is cut straight from the input when it holds no escape.
//!
//! `None` means "not taken here", never "malformed": the caller then runs the serde visitors, which
//! decide. The scanner declines whatever it does not read exactly as they do: anything `serde_json`
//! would reject, an escaped key at a level whose keys it reads, nesting deeper than `MAX_DEPTH`
//! (`serde_json` stops at 128), and a kept non-string value that `serde_json` does not parse from
//! its own text. Kept strings with escapes, numbers and nested values are read by `serde_json`
//! from their text, so their values are `serde_json`'s own.

use compact_str::CompactString;
use serde_json::Value;

use crate::journal::compact_de::{
    parse_usage, summary_preview, Block, BlockFold, Content, Msg, StrValue, Top,
};
use crate::journal::scan_string::string_body;
use crate::journal::text_preview::{preview, raw_preview, raw_preview_reads};

/// Deepest nesting the scanner reads (the entry object is 1); deeper rows go to serde.
const MAX_DEPTH: usize = 100;

/// Read one entry object from its stored bytes, or `None` to leave it to the serde visitors
/// (`compact_de::parse_top`). A row it takes is valid UTF-8: every byte outside a string must be
/// ASCII JSON syntax, and `string_body` checks each character inside one, so the caller needs no
/// separate pass over the row (it cost the list walk 6 % of its time).
#[cfg(test)]
pub(super) fn scan_top(bytes: &[u8]) -> Option<Top> {
    scan_top_previews(bytes, true)
}

/// `scan_top`, building text previews only when `keep_previews` (`Previews::Keep`): the rows it
/// takes and declines are the same either way (`raw_preview_reads`).
pub(super) fn scan_top_previews(bytes: &[u8], keep_previews: bool) -> Option<Top> {
    let mut s = Scan {
        b: bytes,
        i: 0,
        keep_previews,
    };
    s.ws();
    if s.peek()? != b'{' {
        return None;
    }
    let mut t = Top::default();
    s.object(1, |s, key, depth| {
        match key? {
            "message" => t.message = Some(s.message(depth)?),
            "summary" => t.summary = Some(summary_preview(s.kept(depth)?)),
            "type" => t.type_name = Some(s.kept(depth)?),
            "id" => t.id = s.kept_str(depth)?,
            "parentId" => t.parent_id = s.kept_str(depth)?,
            "timestamp" => t.timestamp = s.kept_str(depth)?,
            "dispatch" => t.dispatch = Some(s.kept(depth)?),
            "directSubmissionId" => t.direct_submission_id = Some(s.kept(depth)?),
            "submissionTerminal" => t.submission_terminal = Some(s.kept(depth)?),
            "firstKeptEntryId" => t.first_kept_entry_id = Some(s.kept(depth)?),
            "tokensBefore" => t.tokens_before = Some(s.kept(depth)?),
            _ => s.skip(depth)?,
        }
        Some(())
    })?;
    s.ws();
    (s.i == s.b.len()).then_some(t)
}

/// A cursor over an entry's bytes (and a 2.x batch's: `flue2::records_text` reads its records'
/// fields with it).
pub(crate) struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Text previews are built (`Previews::Keep`); otherwise only checked as building them would.
    keep_previews: bool,
}

impl<'a> Scan<'a> {
    /// A cursor at the start of `bytes`, previews not built.
    pub(crate) fn new(bytes: &'a [u8]) -> Scan<'a> {
        Scan {
            b: bytes,
            i: 0,
            keep_previews: false,
        }
    }

    /// Whether the cursor is past the last byte.
    pub(crate) fn at_end(&self) -> bool {
        self.i == self.b.len()
    }

    /// The text of `b[start..end]`, a range the scan has read: a whole string's contents or
    /// whole values.
    fn text(&self, start: usize, end: usize) -> &'a str {
        let bytes = &self.b[start..end];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: the scan reads a value only after checking it, and a checked range holds ASCII
        // JSON syntax outside strings (any other byte there makes the scan decline) and, inside
        // them, only whole UTF-8 characters `string_body` checked and ASCII escapes;
        // quotes and ASCII bytes never fall inside a multi-byte character, so the range's ends
        // are character boundaries.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// JSON whitespace, as `serde_json` skips it.
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }

    /// The object at the cursor; `member` reads or skips each value, given its key (`None` when
    /// the key holds an escape) and this object's depth.
    pub(crate) fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Option<&'a str>, usize) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH || !self.eat(b'{') {
            return None;
        }
        self.ws();
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let (key, escaped) = self.string()?;
            self.ws();
            if !self.eat(b':') {
                return None;
            }
            self.ws();
            member(self, (!escaped).then_some(key), depth)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The array at the cursor; `item` reads or skips each element, given this array's depth.
    pub(crate) fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH || !self.eat(b'[') {
            return None;
        }
        self.ws();
        if self.eat(b']') {
            return Some(());
        }
        loop {
            item(self, depth)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The string at the cursor, checked as `serde_json` checks a string it skips (known escapes,
    /// four hex digits after `\u`, no control byte) and as UTF-8: its text between the quotes,
    /// and whether that holds an escape.
    // Inlined on purpose: left to the compiler, an unrelated change elsewhere in the crate once
    // moved it out of line (perf: 2.3 % of `list --expired` on the 2 GB 2.x journal in
    // `Scan::string` itself), for 1.03x the wall time.
    #[inline]
    fn string(&mut self) -> Option<(&'a str, bool)> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        let (end, escaped) = string_body(self.b, start)?;
        self.i = end + 1;
        Some((self.text(start, end), escaped))
    }

    /// Skip the value at the cursor (held at `depth`), checking it as `serde_json` does.
    pub(crate) fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1, |s, _, d| s.skip(d)),
            b'[' => self.array(depth + 1, |s, d| s.skip(d)),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let hit = self.b[self.i..].starts_with(word.as_bytes());
        self.i += if hit { word.len() } else { 0 };
        hit.then_some(())
    }

    /// A number's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`); what follows it is
    /// checked by the enclosing object or array.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.') {
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    /// The text of the value at the cursor (held at `depth`), checked.
    pub(crate) fn raw(&mut self, depth: usize) -> Option<&'a str> {
        let start = self.i;
        self.skip(depth)?;
        Some(self.text(start, self.i))
    }

    /// A kept value as `serde_json` reads it: a string without escapes is taken as it stands, the
    /// literals are known, anything else is parsed from its text by `serde_json`.
    pub(crate) fn kept(&mut self, depth: usize) -> Option<Value> {
        if self.peek()? == b'"' {
            let start = self.i;
            let (s, escaped) = self.string()?;
            return if escaped {
                serde_json::from_str(self.text(start, self.i)).ok()
            } else {
                Some(Value::String(s.to_owned()))
            };
        }
        match self.raw(depth)? {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            raw => serde_json::from_str(raw).ok(),
        }
    }

    /// A kept value read only for its string (`compact_de::StrValue`): `Some(None)` when it is not
    /// a string. A string without escapes goes from the input straight into the `CompactString`.
    fn kept_str(&mut self, depth: usize) -> Option<Option<CompactString>> {
        if self.peek()? != b'"' {
            return self.kept(depth).map(|_| None);
        }
        let start = self.i;
        let (s, escaped) = self.string()?;
        if escaped {
            serde_json::from_str::<StrValue>(self.text(start, self.i))
                .ok()
                .map(|v| v.0)
        } else {
            Some(Some(s.into()))
        }
    }

    /// `message`: an object (anything else is left to serde, which rejects it).
    fn message(&mut self, depth: usize) -> Option<Msg> {
        let mut m = Msg::default();
        self.object(depth + 1, |s, key, d| {
            match key? {
                "content" => m.content = Some(s.content(d)?),
                "usage" => m.usage = Some(parse_usage(s.raw(d)?).ok()?),
                "role" => m.role = Some(s.kept(d)?),
                "type" => m.signal_type = Some(s.kept(d)?),
                "stopReason" => m.stop_reason = Some(s.kept(d)?),
                "errorMessage" => m.error_message = Some(s.kept(d)?),
                "model" => m.model = Some(s.kept(d)?),
                "toolCallId" => m.tool_call_id = Some(s.kept(d)?),
                "toolName" => m.tool_name = s.kept_str(d)?,
                "isError" => m.is_error = Some(s.kept(d)?),
                "attributes" => m.attributes = Some(s.kept(d)?),
                _ => s.skip(d)?,
            }
            Some(())
        })?;
        Some(m)
    }

    /// `content`: a string (its preview) or an array of block objects.
    fn content(&mut self, depth: usize) -> Option<Content> {
        match self.peek()? {
            b'"' => {
                let start = self.i;
                let (s, escaped) = self.string()?;
                if !self.keep_previews {
                    // Only a `\u` escape can still fail the parse below.
                    if escaped && s.contains("\\u") {
                        serde_json::from_str::<String>(self.text(start, self.i)).ok()?;
                    }
                    return Some(Content::Text(String::new()));
                }
                let text = if escaped {
                    preview(&serde_json::from_str::<String>(self.text(start, self.i)).ok()?)
                } else {
                    preview(s)
                };
                Some(Content::Text(text))
            }
            b'[' => {
                let mut blocks = BlockFold::default();
                self.array(depth + 1, |s, d| {
                    blocks.push(s.block(d)?);
                    Some(())
                })?;
                Some(blocks.finish())
            }
            _ => None,
        }
    }

    /// One content block: `type`, `id`, `name` and a text block's preview.
    fn block(&mut self, depth: usize) -> Option<Block> {
        let mut b = Block::default();
        self.object(depth + 1, |s, key, d| {
            match key? {
                "type" => b.block_type = Some(s.kept(d)?),
                "id" => b.id = Some(s.kept(d)?),
                "name" => b.name = Some(s.kept(d)?),
                "data" => b.marker = super::compact_de::raw_is_marker(s.raw(d)?),
                "text" if !s.keep_previews => {
                    let start = s.i;
                    let raw = match s.peek()? {
                        b'"' => match s.string()? {
                            (_, false) => None,
                            (_, true) => Some(s.text(start, s.i)),
                        },
                        _ => Some(s.raw(d)?),
                    };
                    if raw.is_some_and(|raw| !raw_preview_reads(raw)) {
                        return None;
                    }
                }
                "text" => {
                    let start = s.i;
                    b.text = Some(match s.peek()? {
                        b'"' => match s.string()? {
                            (text, false) => Value::String(preview(text)),
                            (_, true) => raw_preview(s.text(start, s.i)).ok()?,
                        },
                        _ => raw_preview(s.raw(d)?).ok()?,
                    });
                }
                _ => s.skip(d)?,
            }
            Some(())
        })?;
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as the runtime writes them are taken by the scanner, not left to serde.
    #[test]
    fn the_runtimes_rows_are_scanned() {
        for raw in [
            r#"{"type":"message","id":"e1","parentId":"e0","timestamp":"2026-01-05T09:12:45.870Z","message":{"role":"assistant","content":[{"type":"text","text":"Checking\nboth."},{"type":"toolCall","id":"toolu_01","name":"get_weather","arguments":{"city":"Oslo","n":[1,2.5e-3,-0,true,null]}}],"usage":{"input":1204,"output":88,"cost":{"total":0.001644}},"stopReason":"toolUse","timestamp":1767604364140}}"#,
            r#"{"type":"message","id":"e2","parentId":"e1","message":{"role":"toolResult","toolCallId":"toolu_01","toolName":"get_weather","content":[{"type":"text","text":"sunny \u001b[1m\ud83d\ude00"}],"isError":false}}"#,
            " {\"type\":\"compaction\",\"summary\":\"s\",\"tokensBefore\":12} \n",
        ] {
            assert!(scan_top(raw.as_bytes()).is_some(), "{raw}");
        }
    }

    /// What serde rejects, or what the scanner does not read as serde does, is declined.
    #[test]
    fn declines_what_it_does_not_read_exactly() {
        let deep = format!(
            "{{\"x\":{}1{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        for raw in [
            r#"{"a":1,}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12g4"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":tru}"#,
            r#"{"a":1} x"#,
            r#"{"a" 1}"#,
            r#"{"message":"text"}"#,
            r#"{"message":{"content":7}}"#,
            r#"{"message":{"content":[1]}}"#,
            r#"{"\u0074ype":"message"}"#,
            r#"{"id":"\ud800"}"#,
            deep.as_str(),
            "[1]",
        ] {
            assert!(scan_top(raw.as_bytes()).is_none(), "{raw}");
        }
        // An escaped key is fine where keys are not read.
        assert!(scan_top(br#"{"details":{"\u0074":1}}"#).is_some());
    }

    /// A scan that drops previews takes and declines exactly the rows a scan building them does:
    /// a lone surrogate escape fails a preview only inside the part the preview reads, in a
    /// text block, and anywhere in a string content.
    #[test]
    fn dropping_previews_takes_the_same_rows() {
        let long = "x".repeat(2000);
        let rows = [
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"a\ud800b"}]}}"#.to_string(),
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"a\ud83d\ude00b\n"}]}}"#.to_string(),
            format!(r#"{{"type":"message","message":{{"role":"toolResult","content":[{{"type":"text","text":"{long}\ud800"}}]}}}}"#),
            r#"{"type":"message","message":{"role":"user","content":"a\ud800"}}"#.to_string(),
            format!(r#"{{"type":"message","message":{{"role":"user","content":"{long}\ud800"}}}}"#),
            r#"{"type":"message","message":{"role":"user","content":"a\nb"}}"#.to_string(),
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":1e999}]}}"#.to_string(),
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":[1,{"a":2}]}]}}"#.to_string(),
        ];
        let mut declined = 0;
        for row in &rows {
            let keep = scan_top(row.as_bytes()).is_some();
            declined += usize::from(!keep);
            assert_eq!(
                scan_top_previews(row.as_bytes(), false).is_some(),
                keep,
                "{row}"
            );
        }
        // The cases include rows the preview declines (the lone surrogates it reads, the number
        // out of range), not only rows both take.
        assert!(declined >= 3, "{declined} declined");
    }

    /// A row that is not UTF-8 is declined (the caller then finds it lossy), wherever the bad
    /// byte is: in a skipped body, a kept text, a key, or outside any string.
    #[test]
    fn declines_rows_that_are_not_utf8() {
        let row = r#"{"type":"message","id":"é1","message":{"role":"toolResult","content":[{"type":"text","text":"ok €"}],"details":{"out":"x😀y"}}}"#;
        assert!(scan_top(row.as_bytes()).is_some());
        for bad in [
            &[0xffu8][..],
            &[0xc3],
            &[0xed, 0xa0, 0x80],
            &[0xe2, 0x82],
            &[0xf4, 0x90, 0x80, 0x80],
            &[0xc0, 0xaf],
        ] {
            for at in 0..=row.len() {
                if !row.is_char_boundary(at) {
                    continue;
                }
                let mut damaged = row.as_bytes()[..at].to_vec();
                damaged.extend_from_slice(bad);
                damaged.extend_from_slice(&row.as_bytes()[at..]);
                assert!(std::str::from_utf8(&damaged).is_err());
                assert!(scan_top(&damaged).is_none(), "{bad:x?} at {at}");
            }
        }
        // Cut inside a character.
        let cut = row.find('€').unwrap() + 1;
        assert!(scan_top(&[&row.as_bytes()[..cut], b"\"}]}}"].concat()).is_none());
    }
}
