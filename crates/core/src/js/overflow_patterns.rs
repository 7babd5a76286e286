//! The model library's (`@earendil-works/pi-ai`) context-overflow error patterns, as the
//! releases the runtimes pin have them: `OVERFLOW_PATTERNS` and `NON_OVERFLOW_PATTERNS`
//! (`dist/utils/overflow.js`), in their order (the first match is the one named). Both
//! classifiers test an error text against them: beta.7's (spec §4.4) and flue 2.x's.

use std::sync::OnceLock;

use super::regexp::JsRegex;

/// Which release's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiAiPatterns {
    /// The pi-ai beta.7 pins.
    Beta7,
    /// pi-ai 0.83.0 (flue 2.x): beta.7's list plus the DS4 server's and DashScope's patterns.
    V0_83,
}

/// Every overflow pattern in 0.83.0's order, with whether beta.7's release lacks it.
const OVERFLOW: [(&str, bool); 25] = [
    (r"prompt is too long", false),
    (r"request_too_large", false),
    (r"input is too long for requested model", false),
    (r"exceeds the context window", false),
    (
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        false,
    ),
    (r"input token count.*exceeds the maximum", false),
    (r"maximum prompt length is \d+", false),
    (r"reduce the length of the messages", false),
    (r"maximum context length is \d+ tokens", false),
    (
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        false,
    ),
    (
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        false,
    ),
    (r"exceeds the limit of \d+", false),
    (r"exceeds the available context size", false),
    (r"greater than the context length", false),
    (r"context window exceeds limit", false),
    (r"exceeded model token limit", false),
    (
        r"too large for model with \d+ maximum context length",
        false,
    ),
    (
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        true,
    ),
    (r"model_context_window_exceeded", false),
    (r"prompt too long; exceeded (?:max )?context length", false),
    (r"range of input length should be", true),
    (r"context[_ ]length[_ ]exceeded", false),
    (r"too many tokens", false),
    (r"token limit exceeded", false),
    (r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", false),
];

/// The same in both releases.
const NON_OVERFLOW: [&str; 3] = [
    r"^(Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

type Lists = (Vec<JsRegex>, Vec<JsRegex>);

fn lists(which: PiAiPatterns) -> &'static Lists {
    static BETA7: OnceLock<Lists> = OnceLock::new();
    static V0_83: OnceLock<Lists> = OnceLock::new();
    let cell = match which {
        PiAiPatterns::Beta7 => &BETA7,
        PiAiPatterns::V0_83 => &V0_83,
    };
    cell.get_or_init(|| {
        (
            OVERFLOW
                .iter()
                .filter(|(_, later)| which == PiAiPatterns::V0_83 || !later)
                .map(|(p, _)| JsRegex::new(p))
                .collect(),
            NON_OVERFLOW.iter().map(|p| JsRegex::new(p)).collect(),
        )
    })
}

/// Case 1 of pi-ai's `isContextOverflow`: the overflow pattern (JS source) an error text
/// matches, unless it matches a non-overflow pattern.
pub fn overflow_error_pattern(which: PiAiPatterns, text: &str) -> Option<&'static str> {
    let (overflow, non_overflow) = lists(which);
    if non_overflow.iter().any(|p| p.test(text)) {
        return None;
    }
    overflow.iter().find(|p| p.test(text)).map(|p| p.source())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_release_knows_two_more_and_keeps_the_order() {
        let (beta7, _) = lists(PiAiPatterns::Beta7);
        let (later, _) = lists(PiAiPatterns::V0_83);
        assert_eq!((beta7.len(), later.len()), (23, 25));
        let ds4 = "prompt has 9,000 tokens, but the configured context size is 8,192 tokens";
        assert_eq!(overflow_error_pattern(PiAiPatterns::Beta7, ds4), None);
        assert_eq!(
            overflow_error_pattern(PiAiPatterns::V0_83, ds4),
            Some(OVERFLOW[17].0)
        );
        // Case-insensitive, the first match named, a non-overflow text never one.
        assert_eq!(
            overflow_error_pattern(PiAiPatterns::Beta7, "Prompt is too long: too many tokens"),
            Some("prompt is too long")
        );
        assert_eq!(
            overflow_error_pattern(PiAiPatterns::V0_83, "rate limit: too many tokens"),
            None
        );
    }
}
