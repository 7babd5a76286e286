//! The runtime's error-text rules are JavaScript regular expressions with the `i` flag and without the
//! `u` flag. Rust's `regex` crate is Unicode-aware, and the two disagree on a few inputs:
//!
//! * JS `/i` without `u` folds ASCII letters only: `ſ` (U+017F) never matches `s` and the Kelvin sign
//!   never matches `k`. We lower-case the haystack with ASCII rules and match case-sensitively.
//! * JS `\d` is `[0-9]`; JS `\s` is a fixed set that includes U+FEFF but not U+0085.
//! * JS `.` excludes `\n`, `\r`, U+2028 and U+2029, and matches one UTF-16 code unit, so `.?` can
//!   never consume an astral character (two code units).
//!
//! `JsRegex::new` translates a JS source pattern into an equivalent Rust pattern under these rules.

use regex::Regex;

const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const JS_DOT: &str = r"[^\n\r\x{2028}\x{2029}]";
/// `.` when it can match at most once: an astral character is two code units in JS.
const JS_DOT_SINGLE: &str = r"[^\n\r\x{2028}\x{2029}\x{10000}-\x{10FFFF}]";

/// A case-insensitive JavaScript regex (`/…/i`) evaluated with JavaScript's semantics.
#[derive(Debug, Clone)]
pub struct JsRegex {
    source: &'static str,
    compiled: Regex,
}

impl JsRegex {
    /// Translate `source` (a JS pattern written with ASCII letters only).
    pub fn new(source: &'static str) -> JsRegex {
        let translated = translate(&source.to_ascii_lowercase());
        let compiled = Regex::new(&translated)
            .unwrap_or_else(|e| panic!("built-in pattern {source:?} failed to translate: {e}"));
        JsRegex { source, compiled }
    }

    /// `regex.test(text)` in JavaScript.
    pub fn test(&self, text: &str) -> bool {
        self.compiled.is_match(&text.to_ascii_lowercase())
    }

    /// The JavaScript source, for explanations.
    pub fn source(&self) -> &'static str {
        self.source
    }
}

fn translate(js: &str) -> String {
    let chars: Vec<char> = js.chars().collect();
    let mut out = String::with_capacity(js.len() * 2);
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                match (next, in_class) {
                    ('d', true) => out.push_str("0-9"),
                    ('d', false) => out.push_str("[0-9]"),
                    ('s', true) => out.push_str(JS_SPACE),
                    ('s', false) => {
                        out.push('[');
                        out.push_str(JS_SPACE);
                        out.push(']');
                    }
                    _ => {
                        out.push('\\');
                        out.push(next);
                    }
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '.' if !in_class => {
                let single = chars.get(i + 1) == Some(&'?');
                out.push_str(if single { JS_DOT_SINGLE } else { JS_DOT });
                i += 1;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_ascii_only() {
        let r = JsRegex::new("socket hang up");
        assert!(r.test("SOCKET Hang Up"));
        assert!(
            !r.test("\u{17F}ocket hang up"),
            "long s must not fold to s in JS"
        );
        let k = JsRegex::new("token limit exceeded");
        assert!(
            !k.test("to\u{212A}en limit exceeded"),
            "Kelvin sign must not fold to k"
        );
    }

    #[test]
    fn digits_are_ascii() {
        let r = JsRegex::new(r"maximum prompt length is \d+");
        assert!(r.test("maximum prompt length is 42"));
        assert!(!r.test("maximum prompt length is \u{0664}\u{0662}"));
    }

    #[test]
    fn js_space_set() {
        let r = JsRegex::new(r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)");
        assert!(r.test("400\u{FEFF}(no body)"));
        assert!(!r.test("400\u{85}(no body)"), "U+0085 is not JS whitespace");
        assert!(r.test("413 status code (no body)"));
        assert!(!r.test(" 413 (no body)"), "^ anchors at the start");
    }

    #[test]
    fn dot_excludes_line_terminators_and_astral_for_optional() {
        let r = JsRegex::new("rate.?limit");
        assert!(r.test("rate-limit"));
        assert!(r.test("ratelimit"));
        assert!(!r.test("rate\rlimit"));
        assert!(!r.test("rate\u{2028}limit"));
        assert!(
            !r.test("rate\u{1F600}limit"),
            "an astral char is two JS code units"
        );
        assert!(r.test("rate\u{e9}limit"));
        let star = JsRegex::new("input token count.*exceeds the maximum");
        assert!(star.test("input token count \u{1F600} exceeds the maximum"));
        assert!(!star.test("input token count\n exceeds the maximum"));
    }

    #[test]
    fn class_with_digit_escape() {
        let r = JsRegex::new(r"exceeds the limit of [\d,]+");
        assert!(r.test("Exceeds the limit of 1,000"));
        assert!(!r.test("exceeds the limit of x"));
    }
}
