//! Bulk text and hot-path JSON for the scale database (`scale.rs`).
//!
//! Bodies come from three fixed corpora (shell/log output, source code, markdown prose) built once
//! from a fixed seed; a tool result of N bytes is a slice of one of them. Entries are built by
//! string formatting with the runtime's key order (the same order as `shapes.rs`, which the tests
//! compare against byte for byte); strings are escaped by serde_json's own string escaper.

use std::borrow::Cow;

use turnscope_demo::build::{Demo, Session};
use turnscope_demo::ids::{iso, Rng};
use turnscope_demo::shapes::{self, Model, Tokens};

/// Size of each corpus in bytes (a result larger than this is stitched from several slices).
const CORPUS_BYTES: usize = 384 * 1024;

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "account", "active", "adapter", "agent", "alert", "api", "archive", "async", "audit", "backup",
    "balance", "batch", "billing", "branch", "bucket", "buffer", "build", "cache", "callback",
    "canary", "channel", "checkout", "chunk", "client", "cluster", "commit", "config", "consumer",
    "context", "contract", "coupon", "cursor", "customer", "dashboard", "deploy", "digest",
    "dispatch", "document", "draft", "endpoint", "error", "event", "export", "feature", "fetch",
    "filter", "flag", "gateway", "handler", "header", "health", "import", "incident", "index",
    "input", "invoice", "journal", "kafka", "label", "latency", "lease", "ledger", "limit",
    "listener", "lookup", "manifest", "merge", "message", "metric", "migration", "mirror",
    "module", "monitor", "network", "node", "notice", "offset", "order", "output", "owner",
    "package", "page", "parser", "partition", "payload", "payment", "pipeline", "plan", "policy",
    "pool", "postgres", "pricing", "queue", "quota", "record", "refund", "region", "release",
    "replica", "report", "request", "resource", "response", "retry", "review", "rollback", "route",
    "runner", "schema", "scope", "search", "secret", "segment", "server", "service", "session",
    "shard", "signal", "snapshot", "socket", "source", "stage", "status", "storage", "stream",
    "summary", "table", "task", "template", "tenant", "ticket", "timeout", "token", "topic",
    "trace", "tracker", "update", "upload", "user", "vendor", "version", "webhook", "window",
    "worker", "workflow", "zone",
];
#[rustfmt::skip]
const NAMES: &[&str] = &[
    "Ingrid", "Jonas", "Priya", "Kari", "Mona", "Eli", "Søren", "Zoë", "Åsa", "José", "Lena",
    "Tromsø", "Bodø", "Malmö", "Zürich", "København",
];
const LEVELS: &[&str] = &["INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR"];
#[rustfmt::skip]
const TYPES: &[&str] = &[
    "Result<Report>", "Vec<String>", "Option<u64>", "HashMap<String, Value>", "Promise<void>",
    "boolean", "string[]",
];

/// Which corpus a body is cut from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Log,
    Code,
    Prose,
}

/// The three corpora, built once per generation run.
pub(crate) struct Corpus {
    log: String,
    code: String,
    prose: String,
}

fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[(r.next_u64() % xs.len() as u64) as usize]
}

/// A sentence of `lo..=hi` words, capitalized, with the odd number and name.
pub(crate) fn sentence(r: &mut Rng, lo: i64, hi: i64) -> String {
    let n = r.range(lo, hi);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        match r.next_u64() % 23 {
            0 => s.push_str(pick(r, NAMES)),
            1 => s.push_str(&r.range(2, 99_999).to_string()),
            2 => s.push_str(&format!("{}°C", r.range(-20, 35))),
            _ => s.push_str(pick(r, WORDS)),
        }
    }
    let mut c = s.chars();
    let first = c.next().map(|f| f.to_uppercase().collect::<String>());
    let mut out = first.unwrap_or_default();
    out.push_str(c.as_str());
    out.push(if r.next_u64() % 7 == 0 { '?' } else { '.' });
    out
}

impl Corpus {
    pub(crate) fn new() -> Corpus {
        let mut r = Rng::new(0x636f_7270_7573_0001);
        let mut log = String::with_capacity(CORPUS_BYTES + 512);
        let mut t = 1_767_225_600_000i64;
        while log.len() < CORPUS_BYTES {
            t += r.range(1, 4_000);
            let line = format!(
                "{} {} [{}-{}] {} {}={} took={}ms\n",
                iso(t),
                pick(&mut r, LEVELS),
                pick(&mut r, WORDS),
                r.range(0, 9),
                sentence(&mut r, 3, 12),
                pick(&mut r, WORDS),
                r.hex(8),
                r.range(1, 2_500)
            );
            log.push_str(&line);
        }
        let mut code = String::with_capacity(CORPUS_BYTES + 512);
        let mut depth = 0usize;
        while code.len() < CORPUS_BYTES {
            let indent = "    ".repeat(depth);
            let (a, b, c) = (
                pick(&mut r, WORDS),
                pick(&mut r, WORDS),
                pick(&mut r, WORDS),
            );
            let line = match r.next_u64() % 9 {
                0 if depth < 3 => {
                    depth += 1;
                    format!(
                        "{indent}fn {a}_{b}(&self, {c}: &str) -> {} {{\n",
                        pick(&mut r, TYPES)
                    )
                }
                1 if depth > 0 => {
                    depth -= 1;
                    format!("{}}}\n", "    ".repeat(depth))
                }
                2 => format!("{indent}// {}\n", sentence(&mut r, 4, 14)),
                3 => {
                    format!("{indent}let {a} = self.{b}.get(\"{c}\").ok_or(\"missing {c}\\n\")?;\n")
                }
                4 => format!("{indent}import {{ {a}, {b} }} from \"./{c}\";\n"),
                5 => format!(
                    "{indent}if {a}.len() > {} {{ return Err(Error::{b}(\"{c}\")); }}\n",
                    r.range(1, 512)
                ),
                6 => format!(
                    "{indent}const {}_{} = '{}\\t{}';\n",
                    a.to_uppercase(),
                    b.to_uppercase(),
                    c,
                    r.hex(6)
                ),
                _ => format!("{indent}{a}.{b}({c}, {})?;\n", r.range(0, 9_999)),
            };
            code.push_str(&line);
        }
        let mut prose = String::with_capacity(CORPUS_BYTES + 512);
        while prose.len() < CORPUS_BYTES {
            match r.next_u64() % 6 {
                0 => prose.push_str(&format!("\n## {}\n\n", sentence(&mut r, 2, 6))),
                1 => {
                    for _ in 0..r.range(2, 5) {
                        prose.push_str(&format!("- {}\n", sentence(&mut r, 4, 12)));
                    }
                }
                _ => {
                    for _ in 0..r.range(2, 6) {
                        prose.push_str(&sentence(&mut r, 6, 22));
                        prose.push(' ');
                    }
                    prose.push('\n');
                }
            }
        }
        Corpus { log, code, prose }
    }

    fn of(&self, f: Flavor) -> &str {
        match f {
            Flavor::Log => &self.log,
            Flavor::Code => &self.code,
            Flavor::Prose => &self.prose,
        }
    }

    /// About `len` bytes of `f` from a random offset (cut at character boundaries); borrowed
    /// unless it is stitched from several slices.
    pub(crate) fn text(&self, r: &mut Rng, f: Flavor, len: usize) -> Cow<'_, str> {
        let src = self.of(f);
        let mut slice = |want: usize| {
            let mut start = (r.next_u64() % (src.len() - want) as u64) as usize;
            while !src.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = start + want;
            while !src.is_char_boundary(end) {
                end += 1;
            }
            &src[start..end]
        };
        let half = src.len() / 2;
        if len <= half {
            return Cow::Borrowed(slice(len));
        }
        let mut out = String::with_capacity(len + 8);
        while out.len() < len {
            out.push_str(slice((len - out.len()).min(half)));
        }
        Cow::Owned(out)
    }
}

/// Size of a tool output in bytes: 200 B to 20 KB, skewed towards small, with one in `huge_every`
/// between 200 KB and 1 MB.
pub(crate) fn output_size(r: &mut Rng, huge_every: u64) -> usize {
    if r.next_u64() % huge_every == 0 {
        return r.range(200_000, 1_000_000) as usize;
    }
    let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (200.0 * 100f64.powf(u.powf(1.6))) as usize
}

/// How big tool outputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizes {
    /// [`output_size`]: 200 B to 20 KB skewed towards small (median about 900 B), and one output
    /// in `huge_every` of 200 KB to 1 MB.
    Session { huge_every: u64 },
    /// [`runtime_output_size`]: 200 B to 20 KB, median about 370 B, mean about 1.9 KB (the
    /// runtime's own sessions: most results are short, a few are whole files or logs).
    Runtime,
}

impl Sizes {
    /// The size of the next plain-text output.
    pub(crate) fn draw(self, r: &mut Rng) -> usize {
        match self {
            Sizes::Session { huge_every } => output_size(r, huge_every),
            Sizes::Runtime => runtime_output_size(r),
        }
    }
}

/// Size of a tool output of the runtime profile: `200 * 100^(u^2.9)` bytes for a uniform `u`,
/// so 200 B to 20 KB with median about 370 B and mean about 1.9 KB.
pub(crate) fn runtime_output_size(r: &mut Rng) -> usize {
    let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((200.0 * 100f64.powf(u.powf(2.9))) as usize).min(20_000)
}

/// `io::Write` into a `String` (serde_json writes whole UTF-8 pieces: runs of the input
/// between escapes, and ASCII escapes).
struct Into<'a>(&'a mut String);

impl std::io::Write for Into<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let s = std::str::from_utf8(buf)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.0.push_str(s);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Append `s` as a JSON string literal (serde_json's escaping, as `serde_json::to_string`).
pub(crate) fn esc(out: &mut String, s: &str) {
    serde_json::to_writer(Into(out), s).expect("a string serializes");
}

pub(crate) fn text_block(out: &mut String, t: &str) {
    out.push_str("{\"type\":\"text\",\"text\":");
    esc(out, t);
    out.push('}');
}

pub(crate) fn thinking_block(out: &mut String, t: &str, signature: &str) {
    out.push_str("{\"type\":\"thinking\",\"thinking\":");
    esc(out, t);
    out.push_str(",\"thinkingSignature\":");
    esc(out, signature);
    out.push('}');
}

/// `{"type":"toolCall","id":…,"name":…,"arguments":…}`; `args` is compact JSON.
pub(crate) fn tool_call_block(id: &str, name: &str, args: &str) -> String {
    let mut out = String::with_capacity(args.len() + 96);
    out.push_str("{\"type\":\"toolCall\",\"id\":");
    esc(&mut out, id);
    out.push_str(",\"name\":");
    esc(&mut out, name);
    out.push_str(",\"arguments\":");
    out.push_str(args);
    out.push('}');
    out
}

/// An assistant message (key order of `shapes::assistant`); `content` is the inner JSON of the
/// content array.
#[allow(clippy::too_many_arguments)]
pub(crate) fn assistant(
    model: &Model,
    content: &str,
    tk: Tokens,
    stop: &str,
    ts: i64,
    response_id: Option<&str>,
    error: Option<&str>,
) -> String {
    let mut out = String::with_capacity(content.len() + 400);
    out.push_str("{\"role\":\"assistant\",\"content\":[");
    out.push_str(content);
    out.push_str("],\"api\":");
    esc(&mut out, model.api);
    out.push_str(",\"provider\":");
    esc(&mut out, model.provider);
    out.push_str(",\"model\":");
    esc(&mut out, model.id);
    out.push_str(",\"usage\":");
    out.push_str(&shapes::usage(model, tk).to_string());
    out.push_str(",\"stopReason\":");
    esc(&mut out, stop);
    out.push_str(&format!(",\"timestamp\":{ts}"));
    if let Some(r) = response_id {
        out.push_str(",\"responseId\":");
        esc(&mut out, r);
    }
    if let Some(e) = error {
        out.push_str(",\"errorMessage\":");
        esc(&mut out, e);
    }
    out.push('}');
    out
}

/// A tool result message (pi-agent-core key order); `details` is compact JSON or absent.
pub(crate) fn tool_result(
    call_id: &str,
    name: &str,
    body: &str,
    details: Option<&str>,
    is_error: bool,
    ts: i64,
) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / 16 + 200);
    out.push_str("{\"role\":\"toolResult\",\"toolCallId\":");
    esc(&mut out, call_id);
    out.push_str(",\"toolName\":");
    esc(&mut out, name);
    out.push_str(",\"content\":[");
    text_block(&mut out, body);
    out.push(']');
    if let Some(d) = details {
        out.push_str(",\"details\":");
        out.push_str(d);
    }
    out.push_str(if is_error {
        ",\"isError\":true"
    } else {
        ",\"isError\":false"
    });
    out.push_str(&format!(",\"timestamp\":{ts}}}"));
    out
}

/// Append a message entry (`shapes::message_entry` layout) at the session clock; `extras` is
/// `,"key":value…` or empty. The session must already have its first entry (which creates the
/// session ids), appended through `Session::append`.
pub(crate) fn push_message(d: &mut Demo, s: &mut Session, message: &str, extras: &str) -> String {
    assert!(
        !s.entries.is_empty(),
        "the first entry goes through Session::append"
    );
    let id = d.entry_id();
    let mut e = String::with_capacity(message.len() + extras.len() + 110);
    e.push_str("{\"type\":\"message\",\"id\":\"");
    e.push_str(&id);
    e.push_str("\",\"parentId\":");
    match &s.leaf {
        Some(p) => {
            e.push('"');
            e.push_str(p);
            e.push('"');
        }
        None => e.push_str("null"),
    }
    e.push_str(",\"timestamp\":\"");
    e.push_str(&iso(s.t));
    e.push_str("\",\"message\":");
    e.push_str(message);
    e.push_str(extras);
    e.push('}');
    s.ctx += e.len() as i64 / 4;
    s.entries.push((id.clone(), e));
    s.leaf = Some(id.clone());
    s.updated = s.t;
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builders_match_the_shapes_module_byte_for_byte() {
        let model = shapes::HAIKU;
        let tk = Tokens::new(1204, 88, 64, 0);
        let call = tool_call_block(
            "toolu_01X",
            "get_weather",
            "{\"city\":\"Tromsø \\\"N\\\"\"}",
        );
        let mut content = String::new();
        thinking_block(&mut content, "Need \"both\".\n", "EqSig");
        content.push(',');
        text_block(&mut content, "Checking ✓");
        content.push(',');
        content.push_str(&call);
        let fast = assistant(
            &model,
            &content,
            tk,
            "toolUse",
            17,
            Some("msg_1"),
            Some("x\ty"),
        );
        let slow = shapes::assistant(
            &model,
            vec![
                shapes::thinking("Need \"both\".\n", "EqSig"),
                shapes::text("Checking ✓"),
                shapes::tool_call("toolu_01X", "get_weather", json!({"city": "Tromsø \"N\""})),
            ],
            shapes::usage(&model, tk),
            "toolUse",
            17,
            Some("msg_1"),
            Some("x\ty"),
        );
        assert_eq!(fast, slow.to_string());
        let body = "line 1\n\"quoted\" \\ back\u{1}slash";
        for (details, dv) in [
            (
                Some("{\"command\":\"ls\",\"exitCode\":0}"),
                Some(json!({"command": "ls", "exitCode": 0})),
            ),
            (None, None),
        ] {
            let fast = tool_result("c1", "bash", body, details, details.is_none(), 99);
            let slow = shapes::tool_result("c1", "bash", body, dv, details.is_none(), 99);
            assert_eq!(fast, slow.to_string());
        }
    }

    #[test]
    fn escaping_is_serde_jsons() {
        for t in [
            "",
            "plain",
            "q\"b\\n\n\t\u{1}\u{1f}é°—✓😀",
            "\u{7f}\u{2028}",
        ] {
            let mut out = String::from("x");
            esc(&mut out, t);
            assert_eq!(out, format!("x{}", serde_json::to_string(t).unwrap()));
        }
    }

    #[test]
    fn corpus_slices_have_the_asked_size() {
        let c = Corpus::new();
        let mut r = Rng::new(3);
        for f in [Flavor::Log, Flavor::Code, Flavor::Prose] {
            for len in [200, 5_000, 600_000] {
                let t = c.text(&mut r, f, len);
                assert!(
                    t.len() >= len && t.len() < len + 8,
                    "{f:?} {len} {}",
                    t.len()
                );
            }
        }
        let sizes: Vec<usize> = (0..10_000)
            .map(|_| output_size(&mut r, 1_000_000))
            .collect();
        assert!(sizes.iter().all(|s| (200..=20_000).contains(s)));
        let mut sizes: Vec<usize> = (0..20_000).map(|_| runtime_output_size(&mut r)).collect();
        assert!(sizes.iter().all(|s| (200..=20_000).contains(s)));
        sizes.sort_unstable();
        let (median, mean) = (
            sizes[sizes.len() / 2],
            sizes.iter().sum::<usize>() / sizes.len(),
        );
        assert!((300..=450).contains(&median), "median {median}");
        assert!((1_500..=2_400).contains(&mean), "mean {mean}");
    }
}
