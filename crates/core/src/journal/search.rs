//! What the tree search matches in an entry's stored JSON: the operator's text anywhere in it,
//! ignoring case. Defined once for both readers: the TUI over an entry it holds whole, and the
//! store over every row of a session whose entries the TUI holds compact.

/// A search's text, lowercased once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    lower: String,
    /// For a text that is not all ASCII, its longest ASCII run (lowercase): a hay without it,
    /// ignoring ASCII case, holds no match, and is not decoded and lowercased whole to find so.
    ascii_run: Option<Vec<u8>>,
}

/// The only characters whose lowercase is or holds ASCII besides ASCII itself: KELVIN SIGN
/// (`k`) and LATIN CAPITAL LETTER I WITH DOT ABOVE (`i̇`). A hay holding one is searched
/// without the ASCII run's shortcut.
const LOWERS_TO_ASCII: [&str; 2] = ["\u{212A}", "\u{130}"];

/// ASCII bytes from the most to the least common in the runtime's stored JSON (keys, quotes,
/// English text, numbers); a byte not listed is rarer than any listed.
const COMMON: &[u8] = b" \"e:,taoinsrlhdc0u1236459{}78mpfgwy_b.v-kxjqz";

/// How rare `b` is in stored JSON, ignoring case (higher is rarer).
fn rarity(b: u8) -> usize {
    let b = b.to_ascii_lowercase();
    COMMON.iter().position(|&c| c == b).unwrap_or(COMMON.len())
}

/// Whether `hay` contains `n` (lowercase ASCII), ignoring ASCII case, and where first.
fn find_ascii(hay: &[u8], n: &[u8]) -> Option<usize> {
    // The needle's rarest byte, in either case, is found with SIMD; only there is the whole
    // compared. A whale session is hundreds of MB of JSON, and a common byte (a space, a
    // quote, an `e`) would stop the scan every few bytes.
    let at = (0..n.len()).rev().max_by_key(|&i| rarity(n[i]))?;
    let (a, b) = (n[at].to_ascii_lowercase(), n[at].to_ascii_uppercase());
    memchr::memchr2_iter(a, b, hay)
        .filter_map(|j| j.checked_sub(at))
        .find(|&i| hay.len() - i >= n.len() && hay[i..i + n.len()].eq_ignore_ascii_case(n))
}

impl Needle {
    /// `None` for an empty text (it matches nothing).
    pub fn new(text: &str) -> Option<Needle> {
        if text.is_empty() {
            return None;
        }
        let lower = text.to_lowercase();
        let ascii_run = (!lower.is_ascii())
            .then(|| {
                lower
                    .split(|c: char| !c.is_ascii())
                    .max_by_key(|run| run.len())
                    .filter(|run| !run.is_empty())
                    .map(|run| run.as_bytes().to_vec())
            })
            .flatten();
        Some(Needle { lower, ascii_run })
    }

    pub fn lower(&self) -> &str {
        &self.lower
    }

    /// Whether `hay` (stored JSON, not necessarily UTF-8) contains the text, ignoring case.
    pub fn matches(&self, hay: &[u8]) -> bool {
        self.find(hay).is_some()
    }

    /// Where in `hay` the text first starts, ignoring case: a byte offset into `hay` for an
    /// ASCII text, into `hay` decoded lossily and lowercased otherwise (what [`Needle::snippet`]
    /// cuts from).
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if self.lower.is_ascii() {
            return find_ascii(hay, self.lower.as_bytes());
        }
        if let Some(run) = &self.ascii_run {
            let odd = || {
                LOWERS_TO_ASCII
                    .iter()
                    .any(|c| memchr::memmem::find(hay, c.as_bytes()).is_some())
            };
            if find_ascii(hay, run).is_none() && !odd() {
                return None;
            }
        }
        String::from_utf8_lossy(hay)
            .to_lowercase()
            .find(&self.lower)
    }

    /// A short piece of `hay` around the first match: up to `around` characters either side,
    /// cut at character boundaries, `…` where it was cut, JSON's escaped line breaks and tabs
    /// and any run of white space shown as one space. Raw text: a front end makes it
    /// terminal-safe. `None` when the text is not in `hay`.
    pub fn snippet(&self, hay: &[u8], around: usize) -> Option<String> {
        let at = self.find(hay)?;
        let owned;
        let text: &str = if self.lower.is_ascii() {
            owned = String::from_utf8_lossy(hay).into_owned();
            // Lossy decoding keeps every ASCII byte where it was only while nothing before the
            // match was replaced; where something was, cut from the decoded text by a new search.
            match owned.get(at..at + self.lower.len()) {
                Some(m) if m.eq_ignore_ascii_case(&self.lower) => &owned,
                _ => {
                    let at = owned.to_ascii_lowercase().find(&self.lower)?;
                    return Some(cut(&owned, at, self.lower.len(), around));
                }
            }
        } else {
            owned = String::from_utf8_lossy(hay).to_lowercase();
            &owned
        };
        Some(cut(text, at, self.lower.len(), around))
    }
}

/// `around` characters of `text` either side of the `len` bytes at `at`, tidied for one line.
fn cut(text: &str, at: usize, len: usize, around: usize) -> String {
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(around.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let end_match = (at + len).min(text.len());
    let end = text[end_match..]
        .char_indices()
        .nth(around)
        .map_or(text.len(), |(i, _)| end_match + i);
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    let piece = text[start..end]
        .replace("\\n", " ")
        .replace("\\r", " ")
        .replace("\\t", " ");
    let mut last_space = false;
    for c in piece.chars() {
        if c.is_whitespace() {
            if !last_space {
                s.push(' ');
            }
            last_space = true;
        } else {
            s.push(c);
            last_space = false;
        }
    }
    if end < text.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_text_matches_in_any_case_anywhere() {
        let n = Needle::new("DiSk Full").unwrap();
        assert!(n.matches(br#"{"text":"error: disk full on /var"}"#));
        assert!(n.matches(b"DISK FULL"));
        assert!(!n.matches(b"disk ful"));
        assert!(!n.matches(b"disk  full"));
        // A candidate first byte at the very end is not read past the slice.
        assert!(!n.matches(b"xxd"));
    }

    #[test]
    fn non_ascii_text_matches_case_insensitively() {
        let n = Needle::new("ÉCHEC").unwrap();
        assert!(n.matches("{\"text\":\"l'échec du déploiement\"}".as_bytes()));
        assert!(!n.matches(b"echec"));
    }

    #[test]
    fn the_first_match_is_found_whichever_byte_the_scan_looks_for() {
        // `z` is the rarest byte of the text: found where it is also before the text's start,
        // at the very start, and at the end of the hay.
        let n = Needle::new("Zebra quartz").unwrap();
        assert_eq!(n.find(b"z zebra quartz, zebra quartz"), Some(2));
        assert_eq!(n.find(b"ZEBRA QUARTZ"), Some(0));
        assert_eq!(n.find(b"zebra quart"), None);
        assert_eq!(n.find(b"ebra quartz"), None);
        let n = Needle::new("a").unwrap();
        assert_eq!(n.find(b"xxA"), Some(2));
        assert!(rarity(b'z') > rarity(b'e') && rarity(b'%') > rarity(b'z'));
    }

    #[test]
    fn a_text_that_is_not_ascii_is_found_as_lowercasing_finds_it() {
        let n = Needle::new("Malmö").unwrap();
        assert!(n.matches("office MALMÖ".as_bytes()));
        assert!(n.matches("malmö".as_bytes()));
        assert!(!n.matches(b"malmo"));
        assert!(!n.matches("mal mö".as_bytes()));
        // Characters that lowercase to ASCII are not missed by the ASCII shortcut.
        let n = Needle::new("kö").unwrap();
        assert!(n.matches("\u{212A}Ö".as_bytes()));
        let n = Needle::new("i̇ö").unwrap();
        assert!(n.matches("\u{130}Ö".as_bytes()));
        // No ASCII at all: no shortcut, still found.
        let n = Needle::new("ÖÄ").unwrap();
        assert!(n.matches("xöäx".as_bytes()));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_searched_lossily() {
        let n = Needle::new("ok").unwrap();
        assert!(n.matches(b"\xff\xfeok"));
        let n = Needle::new("é").unwrap();
        assert!(n.matches(b"\xff\xc3\xa9"));
    }

    #[test]
    fn a_snippet_is_the_text_around_the_first_match_on_one_line() {
        let n = Needle::new("sk 803").unwrap();
        let hay = br#"{"text":"order placed\nticket SK 803 refunded to the customer"}"#;
        assert_eq!(n.find(hay), Some(30));
        assert_eq!(
            n.snippet(hay, 10).as_deref(),
            Some("…d ticket SK 803 refunded …")
        );
        assert_eq!(n.snippet(b"SK 803", 8).as_deref(), Some("SK 803"));
        assert_eq!(n.snippet(b"nothing", 8), None);
        // Bytes that are not UTF-8 before the match do not shift the cut.
        assert_eq!(
            n.snippet(b"\xff\xfe sk 803 x", 3).as_deref(),
            Some("\u{fffd}\u{fffd} sk 803 x")
        );
    }

    #[test]
    fn an_empty_text_is_no_search() {
        assert_eq!(Needle::new(""), None);
    }
}
