//! `core::js_json_parse` against the runtime's own engine: thousands of damaged JSON texts (the
//! payload shapes the runtime writes, cut, spliced and mistyped at random, seeded) go through
//! Node 22's `JSON.parse` once, and every message (or success) must be turnscope's exactly. This
//! is the text the runtime's row parser stores when it auto-fails a row whose payload is not JSON.

use serde_json::Value;
use turnscope_core::js::parse_error::parse_error_message;

use crate::runtime_kit::runtime;
use crate::support::Rng;

const CASES: usize = 4000;

/// Texts shaped like the runtime's payloads (spec §1.6), plus the corners of the grammar.
const SOURCES: &[&str] = &[
    r#"{"kind":"dispatch","agent":"support","id":"support-7","dispatchId":"d1","input":{"message":"Hi \"there\"\nline 2 — ünïcødé 中文 𝄞","n":-12.5e-3,"ok":true,"none":null,"list":[1,2,[],{}]},"acceptedAt":1767604800000}"#,
    r#"{"kind":"direct","agent":"writer","id":"docs-bot","payload":{"message":"Draft \u00e9\t\\u2028 reply","images":[]},"acceptedAt":1767604800123}"#,
    "[\r\n  {\"a\": 0, \"b\": -0.5, \"c\": 1E+2},\r\n  \"\\ud83d\\ude00\",\n  false\n]",
    "{ \"nested\" : { \"deep\" : [ [ [ null ] ] ] } , \"x\" : 10 }",
];

/// Characters a damaged text gains: structure, number parts, letters of the literals, escapes,
/// whitespace of every kind, a control character, Latin-1, the BMP and an astral character.
const ALPHABET: &[char] = &[
    '{', '}', '[', ']', ':', ',', '"', '\\', ' ', '-', '+', '.', '0', '1', '9', 'e', 'E', 't', 'f',
    'n', 'u', 'l', 'r', 's', 'a', 'x', '\t', '\n', '\r', '\u{1}', 'é', '中', '𝄞', '/',
];

fn damage(rng: &mut Rng, source: &str) -> String {
    let mut chars: Vec<char> = source.chars().collect();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(chars.len() as u64 + 1) as usize;
        match rng.below(6) {
            0 if at < chars.len() => {
                chars.remove(at);
            }
            1 => chars.insert(at, ALPHABET[rng.below(ALPHABET.len() as u64) as usize]),
            2 if at < chars.len() => {
                chars[at] = ALPHABET[rng.below(ALPHABET.len() as u64) as usize]
            }
            3 => chars.truncate(at),
            // What the runtime differential does to a payload: its first character gone.
            4 if !chars.is_empty() => {
                chars.remove(0);
            }
            _ => {
                let from = rng.below(chars.len() as u64 + 1) as usize;
                let to = (from + rng.below(12) as usize).min(chars.len());
                let copy: Vec<char> = chars[from..to].to_vec();
                chars.splice(at..at, copy);
            }
        }
    }
    chars.into_iter().collect()
}

#[cfg_attr(
    turnscope_no_runtime,
    ignore = "needs the real runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime/README.md)"
)]
#[test]
fn messages_equal_node_22s_json_parse() {
    let rt = runtime("js_json_parse::messages_equal_node_22s_json_parse");
    let mut rng = Rng(0x6a73_6f6e_7061_7273);
    let mut texts: Vec<String> = SOURCES.iter().map(|s| s.to_string()).collect();
    while texts.len() < CASES {
        let source = SOURCES[rng.below(SOURCES.len() as u64) as usize];
        texts.push(damage(&mut rng, source));
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("texts.json");
    std::fs::write(&input, serde_json::to_string(&texts).unwrap()).unwrap();
    let script = "const texts = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));\
        process.stdout.write(JSON.stringify(texts.map((t) => { try { JSON.parse(t); return null; } \
        catch (e) { return e.message.toWellFormed(); } })));";
    let node: Vec<Value> = serde_json::from_value(rt.eval(script, &[input.as_os_str()])).unwrap();
    assert_eq!(node.len(), texts.len());

    let mut failures = Vec::new();
    let mut rejected = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for (text, want) in texts.iter().zip(&node) {
        let want = want.as_str().map(str::to_string);
        rejected += usize::from(want.is_some());
        if let Some(w) = &want {
            kinds.insert(
                w.split([',', '\''])
                    .next()
                    .unwrap_or_default()
                    .split(" in JSON")
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        let got = parse_error_message(text);
        if got != want {
            failures.push(format!(
                "JSON.parse({text:?})\n  node:      {want:?}\n  turnscope: {got:?}"
            ));
        }
    }
    // The damage must reach the grammar's error paths, not only leave valid JSON behind.
    assert!(
        rejected > CASES * 3 / 4,
        "only {rejected} of {CASES} texts were invalid"
    );
    assert!(
        kinds.len() >= 14,
        "only {} kinds of message reached: {kinds:?}",
        kinds.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} messages differ from Node's; the first:\n{}",
        failures.len(),
        texts.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
