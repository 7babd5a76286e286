//! The `SyntaxError` message of JavaScript's `JSON.parse`, worded as the runtime's engine words it
//! (V8 12.4, Node 22). The runtime's row parser stores that message as the `error` of a row whose
//! payload is not JSON when it auto-settles the row (spec fact 8), so turnscope writes the same.
//!
//! This follows V8's JSON parser step by step: which token it expects where, where its cursor
//! stands when it gives up (positions count UTF-16 code units, as JavaScript strings do), and
//! the line and column it adds. A differential test checks it against Node on generated text.

/// The characters of context V8 quotes on each side of an unexpected token.
const CONTEXT: usize = 10;
/// Sources shorter than this are quoted whole.
const QUOTE_WHOLE_BELOW: usize = CONTEXT * 2 + 1;

/// V8's token classes for one character (`one_char_json_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    String,
    Number,
    True,
    False,
    Null,
    Whitespace,
    Colon,
    Comma,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Illegal,
    Eos,
}

fn token_of(c: u16) -> Token {
    match c {
        0x22 => Token::String,
        0x2d | 0x30..=0x39 => Token::Number,
        0x74 => Token::True,
        0x66 => Token::False,
        0x6e => Token::Null,
        0x20 | 0x09 | 0x0a | 0x0d => Token::Whitespace,
        0x3a => Token::Colon,
        0x2c => Token::Comma,
        0x5b => Token::LBrack,
        0x5d => Token::RBrack,
        0x7b => Token::LBrace,
        0x7d => Token::RBrace,
        _ => Token::Illegal,
    }
}

/// The messages V8 gives in place of its generic one at a given step.
#[derive(Debug, Clone, Copy)]
enum Expected {
    PropNameOrRBrace,
    ColonAfterPropertyName,
    DoubleQuotedPropertyName,
    CommaOrRBrace,
    CommaOrRBrack,
    NonWhitespaceAfterJson,
    UnterminatedString,
    BadControlCharacter,
    BadEscapedCharacter,
    BadUnicodeEscape,
    NoNumberAfterMinusSign,
    UnterminatedFractionalNumber,
    ExponentPartMissingNumber,
}

impl Expected {
    fn text(self) -> &'static str {
        match self {
            Expected::PropNameOrRBrace => "Expected property name or '}' in JSON",
            Expected::ColonAfterPropertyName => "Expected ':' after property name in JSON",
            Expected::DoubleQuotedPropertyName => "Expected double-quoted property name in JSON",
            Expected::CommaOrRBrace => "Expected ',' or '}' after property value in JSON",
            Expected::CommaOrRBrack => "Expected ',' or ']' after array element in JSON",
            Expected::NonWhitespaceAfterJson => "Unexpected non-whitespace character after JSON",
            Expected::UnterminatedString => "Unterminated string in JSON",
            Expected::BadControlCharacter => "Bad control character in string literal in JSON",
            Expected::BadEscapedCharacter => "Bad escaped character in JSON",
            Expected::BadUnicodeEscape => "Bad Unicode escape in JSON",
            Expected::NoNumberAfterMinusSign => "No number after minus sign in JSON",
            Expected::UnterminatedFractionalNumber => "Unterminated fractional number in JSON",
            Expected::ExponentPartMissingNumber => "Exponent part is missing a number in JSON",
        }
    }
}

/// Where the parser stopped and with which message; the text is worded at the end.
struct Failure {
    pos: usize,
    token: Token,
    expected: Option<Expected>,
}

type Step<T> = Result<T, Failure>;

enum Container {
    Object,
    Array,
}

struct Parser<'a> {
    src: &'a [u16],
    cursor: usize,
}

impl Parser<'_> {
    fn at(&self, i: usize) -> Option<u16> {
        self.src.get(i).copied()
    }

    fn peek(&self) -> Token {
        self.at(self.cursor).map_or(Token::Eos, token_of)
    }

    fn skip_whitespace(&mut self) {
        while self.peek() == Token::Whitespace {
            self.cursor += 1;
        }
    }

    fn fail<T>(&self, token: Token, expected: Option<Expected>) -> Step<T> {
        Err(Failure {
            pos: self.cursor,
            token,
            expected,
        })
    }

    /// V8's `ReportUnexpectedCharacter`: the character's own token class.
    fn fail_at_char<T>(&self) -> Step<T> {
        let token = match self.at(self.cursor) {
            None => Token::Eos,
            Some(c) if c <= 0xff => token_of(c),
            Some(_) => Token::Illegal,
        };
        self.fail(token, None)
    }

    /// `Check`: skip whitespace and consume `t` when it is next.
    fn check(&mut self, t: Token) -> bool {
        self.skip_whitespace();
        if self.peek() == t {
            self.cursor += 1;
            true
        } else {
            false
        }
    }

    /// `ExpectNext`: skip whitespace and consume `t`, else fail with `expected`.
    fn expect_next(&mut self, t: Token, expected: Expected) -> Step<()> {
        if self.check(t) {
            Ok(())
        } else {
            self.fail(self.peek(), Some(expected))
        }
    }

    fn parse(&mut self) -> Step<()> {
        let mut stack: Vec<Container> = Vec::new();
        loop {
            // Produce a value.
            loop {
                self.skip_whitespace();
                match self.peek() {
                    Token::String => {
                        self.cursor += 1;
                        self.scan_string()?;
                    }
                    Token::Number => self.scan_number()?,
                    Token::LBrace => {
                        self.cursor += 1;
                        if self.check(Token::RBrace) {
                            break;
                        }
                        stack.push(Container::Object);
                        self.scan_property_key(Expected::PropNameOrRBrace)?;
                        continue;
                    }
                    Token::LBrack => {
                        self.cursor += 1;
                        if self.check(Token::RBrack) {
                            break;
                        }
                        stack.push(Container::Array);
                        continue;
                    }
                    Token::True => self.scan_literal(b"true")?,
                    Token::False => self.scan_literal(b"false")?,
                    Token::Null => self.scan_literal(b"null")?,
                    other => return self.fail(other, None),
                }
                break;
            }
            // Consume it.
            loop {
                match stack.last() {
                    None => {
                        if self.check(Token::Eos) {
                            return Ok(());
                        }
                        return self.fail(self.peek(), Some(Expected::NonWhitespaceAfterJson));
                    }
                    Some(Container::Object) => {
                        if self.check(Token::Comma) {
                            self.scan_property_key(Expected::DoubleQuotedPropertyName)?;
                            break;
                        }
                        self.expect_next(Token::RBrace, Expected::CommaOrRBrace)?;
                    }
                    Some(Container::Array) => {
                        if self.check(Token::Comma) {
                            break;
                        }
                        self.expect_next(Token::RBrack, Expected::CommaOrRBrack)?;
                    }
                }
                stack.pop();
            }
        }
    }

    /// A property name and its colon.
    fn scan_property_key(&mut self, expected: Expected) -> Step<()> {
        self.expect_next(Token::String, expected)?;
        self.scan_string()?;
        self.expect_next(Token::Colon, Expected::ColonAfterPropertyName)
    }

    /// The rest of a string, the cursor just past its opening quote.
    fn scan_string(&mut self) -> Step<()> {
        loop {
            let Some(c) = self.at(self.cursor) else {
                return self.fail(Token::Illegal, Some(Expected::UnterminatedString));
            };
            match c {
                0x22 => {
                    self.cursor += 1;
                    return Ok(());
                }
                0x5c => {
                    self.cursor += 1;
                    match self.at(self.cursor) {
                        None => return self.fail(Token::Eos, None),
                        Some(e) if e > 0xff => return self.fail(Token::Illegal, None),
                        Some(0x22 | 0x5c | 0x2f | 0x62 | 0x66 | 0x6e | 0x72 | 0x74) => {}
                        Some(0x75) => {
                            for _ in 0..4 {
                                self.cursor += 1;
                                if !self.at(self.cursor).is_some_and(is_hex) {
                                    return self
                                        .fail(Token::Illegal, Some(Expected::BadUnicodeEscape));
                                }
                            }
                        }
                        Some(_) => {
                            return self.fail(Token::Illegal, Some(Expected::BadEscapedCharacter))
                        }
                    }
                    self.cursor += 1;
                }
                c if c < 0x20 => {
                    return self.fail(Token::Illegal, Some(Expected::BadControlCharacter));
                }
                _ => self.cursor += 1,
            }
        }
    }

    fn scan_number(&mut self) -> Step<()> {
        if self.at(self.cursor) == Some(b'-' as u16) {
            self.cursor += 1;
        }
        if self.at(self.cursor) == Some(b'0' as u16) {
            self.cursor += 1;
            if self.at(self.cursor).is_some_and(is_digit) {
                return self.fail(Token::Number, None);
            }
        } else {
            let start = self.cursor;
            self.skip_digits();
            if self.cursor == start {
                return self.fail(Token::Illegal, Some(Expected::NoNumberAfterMinusSign));
            }
        }
        if self.at(self.cursor) == Some(b'.' as u16) {
            self.cursor += 1;
            if !self.at(self.cursor).is_some_and(is_digit) {
                return self.fail(Token::Illegal, Some(Expected::UnterminatedFractionalNumber));
            }
            self.skip_digits();
        }
        if matches!(self.at(self.cursor), Some(0x65 | 0x45)) {
            self.cursor += 1;
            if matches!(self.at(self.cursor), Some(0x2b | 0x2d)) {
                self.cursor += 1;
            }
            if !self.at(self.cursor).is_some_and(is_digit) {
                return self.fail(Token::Illegal, Some(Expected::ExponentPartMissingNumber));
            }
            self.skip_digits();
        }
        Ok(())
    }

    fn skip_digits(&mut self) {
        while self.at(self.cursor).is_some_and(is_digit) {
            self.cursor += 1;
        }
    }

    /// `true`, `false` or `null`, its first letter already seen.
    fn scan_literal(&mut self, word: &[u8]) -> Step<()> {
        for &w in word {
            match self.at(self.cursor) {
                Some(c) if c == w as u16 => self.cursor += 1,
                _ => return self.fail_at_char(),
            }
        }
        Ok(())
    }
}

fn is_digit(c: u16) -> bool {
    (0x30..=0x39).contains(&c)
}

fn is_hex(c: u16) -> bool {
    is_digit(c) || (0x41..=0x46).contains(&c) || (0x61..=0x66).contains(&c)
}

/// The message `JSON.parse(text)` throws, or `None` where it parses.
pub fn parse_error_message(text: &str) -> Option<String> {
    let src: Vec<u16> = text.encode_utf16().collect();
    let mut parser = Parser {
        src: &src,
        cursor: 0,
    };
    let failure = parser.parse().err()?;
    Some(word(&src, &failure))
}

fn word(src: &[u16], f: &Failure) -> String {
    let located = |what: &str| {
        let (line, column) = line_and_column(src, f.pos);
        format!("{what} at position {} (line {line} column {column})", f.pos)
    };
    if let Some(expected) = f.expected {
        return located(expected.text());
    }
    match f.token {
        Token::Eos => "Unexpected end of JSON input".to_string(),
        Token::Number => located("Unexpected number in JSON"),
        Token::String => located("Unexpected string in JSON"),
        _ => {
            let whole = String::from_utf16_lossy(src);
            if ["[object Object]", "undefined", "Infinity", "NaN"].contains(&whole.as_str()) {
                return format!("\"{whole}\" is not valid JSON");
            }
            let token = String::from_utf16_lossy(&src[f.pos..f.pos + 1]);
            let len = src.len();
            let quote = |from: usize, to: usize| String::from_utf16_lossy(&src[from..to.min(len)]);
            let context = if len < QUOTE_WHOLE_BELOW {
                format!("\"{whole}\"")
            } else if f.pos < CONTEXT {
                format!("\"{}\"...", quote(0, f.pos + CONTEXT))
            } else if f.pos < len - CONTEXT {
                format!("...\"{}\"...", quote(f.pos - CONTEXT, f.pos + CONTEXT))
            } else {
                format!("...\"{}\"", quote(f.pos - CONTEXT, len))
            };
            format!("Unexpected token '{token}', {context} is not valid JSON")
        }
    }
}

/// V8's `CalculateFileLocation`: lines end at `\n`, `\r` or `\r\n`; both count from 1.
fn line_and_column(src: &[u16], pos: usize) -> (usize, usize) {
    let (mut line, mut line_start, mut i) = (1, 0, 0);
    while i < pos {
        if src[i] == 0x0d && i + 1 < pos && src[i + 1] == 0x0a {
            i += 1;
        }
        if src[i] == 0x0d || src[i] == 0x0a {
            line += 1;
            line_start = i + 1;
        }
        i += 1;
    }
    (line, 1 + i - line_start)
}

#[cfg(test)]
mod tests {
    use super::parse_error_message as msg;

    /// Each pair was read from Node 22's `JSON.parse(text)` (`e.message`).
    #[test]
    fn node_22_messages() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", Some("Unexpected end of JSON input")),
            ("{", Some("Expected property name or '}' in JSON at position 1 (line 1 column 2)")),
            ("{\"a\"", Some("Expected ':' after property name in JSON at position 4 (line 1 column 5)")),
            ("{\"a\":", Some("Unexpected end of JSON input")),
            ("{\"a\":1", Some("Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)")),
            ("{\"a\":1,", Some("Expected double-quoted property name in JSON at position 7 (line 1 column 8)")),
            ("{\"a\":1,\"b\" 2}", Some("Expected ':' after property name in JSON at position 11 (line 1 column 12)")),
            ("[1 2]", Some("Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)")),
            ("[1,]", Some("Unexpected token ']', \"[1,]\" is not valid JSON")),
            ("tru", Some("Unexpected end of JSON input")),
            ("tru1", Some("Unexpected number in JSON at position 3 (line 1 column 4)")),
            ("tru\"", Some("Unexpected string in JSON at position 3 (line 1 column 4)")),
            ("nulL", Some("Unexpected token 'L', \"nulL\" is not valid JSON")),
            ("true x", Some("Unexpected non-whitespace character after JSON at position 5 (line 1 column 6)")),
            ("\"abc", Some("Unterminated string in JSON at position 4 (line 1 column 5)")),
            ("\"a\\qb\"", Some("Bad escaped character in JSON at position 3 (line 1 column 4)")),
            ("\"a\\", Some("Unexpected end of JSON input")),
            ("\"\\u12\"", Some("Bad Unicode escape in JSON at position 5 (line 1 column 6)")),
            ("\"\\u\"", Some("Bad Unicode escape in JSON at position 3 (line 1 column 4)")),
            ("\"\\中\"", Some("Unexpected token '中', \"\"\\中\"\" is not valid JSON")),
            ("\"\\é\"", Some("Bad escaped character in JSON at position 2 (line 1 column 3)")),
            ("\"a\tb\"", Some("Bad control character in string literal in JSON at position 2 (line 1 column 3)")),
            ("-a", Some("No number after minus sign in JSON at position 1 (line 1 column 2)")),
            ("-01", Some("Unexpected number in JSON at position 2 (line 1 column 3)")),
            ("1.e5", Some("Unterminated fractional number in JSON at position 2 (line 1 column 3)")),
            ("1e+", Some("Exponent part is missing a number in JSON at position 3 (line 1 column 4)")),
            ("NaN", Some("\"NaN\" is not valid JSON")),
            ("[object Object]", Some("\"[object Object]\" is not valid JSON")),
            ("abcdefghijklmnopqrstuvwxyz", Some("Unexpected token 'a', \"abcdefghij\"... is not valid JSON")),
            ("{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": x}", Some("Unexpected token 'x', ...\"aaaaaaa\": x}\" is not valid JSON")),
            ("𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞x𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞𝄞", Some("Unexpected token '\u{fffd}', \"𝄞𝄞𝄞𝄞𝄞\"... is not valid JSON")),
            ("\"kind\":\"dispatch\"", Some("Unexpected non-whitespace character after JSON at position 6 (line 1 column 7)")),
            ("{\n\"a\"\n:\n1\n,\n}", Some("Expected double-quoted property name in JSON at position 12 (line 6 column 1)")),
            ("1\r\n2", Some("Unexpected non-whitespace character after JSON at position 3 (line 2 column 1)")),
            ("-0", None),
            ("\"\\ud800\"", None),
            (" {\"a\":[1,{\"b\":null}],\"c\":-1.5e-3} ", None),
        ];
        for (text, want) in cases {
            assert_eq!(msg(text).as_deref(), *want, "JSON.parse({text:?})");
        }
    }

    #[test]
    fn deep_nesting_is_not_an_error() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(msg(&text), None);
    }
}
