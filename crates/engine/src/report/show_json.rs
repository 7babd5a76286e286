//! `show --json`'s entry summaries (`EntrySummary`, serialised straight from an entry) and the
//! writing of its `following`: a whale submission's 100,000 summaries are formatted in chunks on
//! two threads and written in order, never held whole.
//!
//! Why: formatting them was a fifth of a whale's `show --json` (80 of 450 ms on the runtime-shaped
//! whale), on one thread while the other core was idle.

use std::io::{self, Write};

use serde_json::Value;

use crate::pretty_array::write_nested_array;
use turnscope_core::journal::entry::{Entry, Role};

/// Summaries per chunk (about 170 KB of a whale's): the helper runs at most 32 chunks ahead.
const CHUNK: usize = 512;
/// From this many chunks on, a second thread formats too (a thread costs more than a few).
const TWO_THREADS_FROM: usize = 4;

/// Write `following` as the pretty-printed array that `serde_json::to_writer_pretty` writes for
/// it as the value of a key of the top-level object (`"following": [` … `]`, two levels deep),
/// byte for byte.
pub(super) fn write_following(entries: &[&Entry], w: &mut dyn Write) -> io::Result<()> {
    write_nested_array(entries, w, CHUNK, TWO_THREADS_FROM, |e| EntrySummary(e))
}

/// One entry of the active path, summarised for `show --json`.
pub fn entry_summary_json(e: &Entry) -> Value {
    serde_json::to_value(EntrySummary(e)).unwrap_or(Value::Null)
}

/// An entry's `show --json` summary, serialised straight from the entry: the streamed document
/// writes a whale's 100,000 summaries without building a JSON map for each.
pub struct EntrySummary<'a>(pub &'a Entry);

impl serde::Serialize for EntrySummary<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let e = self.0;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("id", e.id.as_str())?;
        o.serialize_entry("parentId", &e.parent_id.as_deref())?;
        o.serialize_entry("position", &e.position)?;
        o.serialize_entry("timestamp", &e.timestamp.as_deref())?;
        o.serialize_entry("kind", &e.kind_label())?;
        if let Some(m) = e.message() {
            match m.role {
                Role::Assistant => {
                    o.serialize_entry("stopReason", &m.stop_reason())?;
                    if let Some(err) = m.truthy_error_message() {
                        o.serialize_entry("errorMessage", &err)?;
                    }
                    let calls = m.tool_calls();
                    if !calls.is_empty() {
                        o.serialize_entry("toolCalls", &ToolCallSummaries(&calls))?;
                    }
                }
                Role::ToolResult => {
                    o.serialize_entry(
                        "toolCallId",
                        &turnscope_core::journal::entry::js_key_text(&m.tool_call_id()),
                    )?;
                    o.serialize_entry("toolName", &m.tool_name())?;
                    o.serialize_entry("isError", &m.is_error())?;
                }
                _ => {}
            }
        }
        o.end()
    }
}

/// An assistant's tool calls as `{"id", "name"}` objects.
struct ToolCallSummaries<'a>(&'a [turnscope_core::journal::entry::ToolCall]);

impl serde::Serialize for ToolCallSummaries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        struct Call<'a>(&'a turnscope_core::journal::entry::ToolCall);
        impl serde::Serialize for Call<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut o = s.serialize_map(Some(2))?;
                o.serialize_entry("id", &self.0.id_text())?;
                o.serialize_entry("name", &self.0.name)?;
                o.end()
            }
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            seq.serialize_element(&Call(c))?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn entries(n: usize) -> Vec<Entry> {
        (0..n)
            .map(|i| {
                let raw = match i % 4 {
                    0 => format!(
                        r#"{{"type":"message","id":"a{i}","parentId":"p{i}","timestamp":"2026-12-03T10:00:00.000Z","message":{{"role":"assistant","stopReason":"toolUse","content":[{{"type":"toolCall","id":"c{i}","name":"run \"it\"","arguments":{{}}}}]}}}}"#
                    ),
                    1 => format!(
                        r#"{{"type":"message","id":"t{i}","parentId":"a{i}","message":{{"role":"toolResult","toolCallId":"c{i}","toolName":"run","isError":false,"content":[{{"type":"text","text":"ok é"}}]}}}}"#
                    ),
                    2 => format!(
                        r#"{{"type":"message","id":"u{i}","parentId":null,"message":{{"role":"user","content":"hi"}}}}"#
                    ),
                    _ => format!(r#"{{"type":"custom","id":"x{i}","parentId":"t{i}"}}"#),
                };
                Entry::parse(i as i64, &format!("e{i}"), &raw)
            })
            .collect()
    }

    /// The array as the whole document's pretty printer writes it, inside `{"following": …}`.
    fn whole(entries: &[&Entry]) -> String {
        let values: Vec<_> = entries.iter().map(|e| entry_summary_json(e)).collect();
        serde_json::to_string_pretty(&serde_json::json!({ "following": values })).unwrap()
    }

    fn streamed(entries: &[&Entry], chunk: usize, two_threads_from: usize) -> String {
        let mut out = b"{\n  \"following\": ".to_vec();
        write_nested_array(entries, &mut out, chunk, two_threads_from, |e| {
            EntrySummary(e)
        })
        .unwrap();
        out.extend_from_slice(b"\n}");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn chunks_on_either_thread_write_the_whole_documents_bytes() {
        let all = entries(203);
        for n in [0, 1, 2, 7, 64, 203] {
            let refs: Vec<&Entry> = all[..n].iter().collect();
            let expected = whole(&refs);
            for chunk in [1, 3, 64, 1000] {
                // One thread, and two from the first chunk on.
                for from in [usize::MAX, 1] {
                    assert_eq!(
                        streamed(&refs, chunk, from),
                        expected,
                        "{n} entries, chunk {chunk}"
                    );
                }
            }
        }
    }

    struct Failing(usize);

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
            }
            self.0 -= 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_ends_the_array_with_its_error() {
        let all = entries(500);
        let refs: Vec<&Entry> = all.iter().collect();
        for after in [0, 1, 5] {
            let err = write_nested_array(&refs, &mut Failing(after), 4, 1, |e| EntrySummary(e))
                .unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::BrokenPipe,
                "after {after} writes"
            );
        }
    }
}
