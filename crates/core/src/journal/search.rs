//! What the tree search matches in an entry's stored JSON: the operator's text anywhere in it,
//! ignoring case. Defined once for both readers: the TUI over an entry it holds whole, and the
//! store over every row of a session whose entries the TUI holds compact.

/// A search's text, lowercased once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    lower: String,
}

impl Needle {
    /// `None` for an empty text (it matches nothing).
    pub fn new(text: &str) -> Option<Needle> {
        (!text.is_empty()).then(|| Needle {
            lower: text.to_lowercase(),
        })
    }

    pub fn lower(&self) -> &str {
        &self.lower
    }

    /// Whether `hay` (stored JSON, not necessarily UTF-8) contains the text, ignoring case.
    pub fn matches(&self, hay: &[u8]) -> bool {
        let n = self.lower.as_bytes();
        if self.lower.is_ascii() {
            // The first byte in either case is found with SIMD; only there is the rest compared.
            // A whale session is hundreds of MB of JSON, and most bytes start no match.
            let (a, b) = (n[0].to_ascii_lowercase(), n[0].to_ascii_uppercase());
            return memchr::memchr2_iter(a, b, hay)
                .any(|i| hay.len() - i >= n.len() && hay[i..i + n.len()].eq_ignore_ascii_case(n));
        }
        String::from_utf8_lossy(hay)
            .to_lowercase()
            .contains(&self.lower)
    }
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
    fn bytes_that_are_not_utf8_are_searched_lossily() {
        let n = Needle::new("ok").unwrap();
        assert!(n.matches(b"\xff\xfeok"));
        let n = Needle::new("é").unwrap();
        assert!(n.matches(b"\xff\xc3\xa9"));
    }

    #[test]
    fn an_empty_text_is_no_search() {
        assert_eq!(Needle::new(""), None);
    }
}
