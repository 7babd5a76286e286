//! The list's `/` filter: words, every one of which a row must match. A plain word matches the
//! id, instance, verdict, error, session key or plan reason (case-insensitive substring);
//! `field:value` matches one field (`verdict:live`, `rule:6`, `kind:direct`, …); a leading `-`
//! or `!` negates a term (`-verdict:resume`, `!kind:direct`); `"…"` keeps spaces in one term.
//! Pure: parsed once per keystroke, matched against plain [`Subject`]s.

use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::recovery::reconciler::DispositionKind;
use turnscope_engine::report::verdict_filter::VerdictFilter;

/// One field a term can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Verdict,
    Rule,
    Kind,
    Status,
    Instance,
    Id,
    Owner,
    Journal,
    Error,
}

impl Field {
    pub const ALL: [Field; 9] = [
        Field::Verdict,
        Field::Rule,
        Field::Kind,
        Field::Status,
        Field::Instance,
        Field::Id,
        Field::Owner,
        Field::Journal,
        Field::Error,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Verdict => "verdict",
            Field::Rule => "rule",
            Field::Kind => "kind",
            Field::Status => "status",
            Field::Instance => "instance",
            Field::Id => "id",
            Field::Owner => "owner",
            Field::Journal => "journal",
            Field::Error => "error",
        }
    }

    /// The name or an alias (`phase`: the CLI calls the journal column PHASE).
    fn parse(name: &str) -> Option<Field> {
        if name == "phase" {
            return Some(Field::Journal);
        }
        Field::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every field name, for a hint.
    pub fn names_line() -> String {
        Field::ALL.map(Field::name).join(", ")
    }
}

/// What one term tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// A lowercase substring of any searched text.
    Text(String),
    Verdict(VerdictFilter),
    /// `None`: no rule fires (`rule:none` or `rule:-`).
    Rule(Option<u8>),
    Kind(String),
    /// The runtime's status (`pending` is read as `queued`, as the TUI shows it).
    Status(String),
    /// Lowercase substring.
    Instance(String),
    /// Lowercase prefix.
    Id(String),
    /// Lowercase prefix of the lease owner.
    Owner(String),
    /// Lowercase substring of the journal phase.
    Journal(String),
    /// Lowercase substring of the stored error.
    Error(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub negated: bool,
    pub test: Test,
}

/// A parsed filter: every term must hold. Empty: every row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    pub terms: Vec<Term>,
}

/// What a row shows, for matching (borrowed from the list item).
#[derive(Debug, Clone, Copy, Default)]
pub struct Subject<'a> {
    pub id: &'a str,
    pub instance: &'a str,
    pub verdict: &'a str,
    /// `None` while the plan is being computed or could not be.
    pub disposition: Option<DispositionKind>,
    pub rule: Option<u8>,
    pub kind: &'a str,
    pub status: &'a str,
    pub owner: &'a str,
    pub journal: &'a str,
    pub error: &'a str,
    pub session_key: &'a str,
    pub reason: &'a str,
}

/// Split on spaces, keeping `"…"` together (the quotes removed).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Parse the text typed after `/`. An error is one short line for the list's empty state.
pub fn parse(text: &str) -> Result<ListQuery, String> {
    let mut terms = Vec::new();
    for word in words(text) {
        let (negated, body) = match word.strip_prefix(['-', '!']) {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, word.as_str()),
        };
        let test = match body.split_once(':') {
            // A field is a plain word before the colon; anything else (a session key such as
            // `agent-session:[…]`, a URL) is text to search for.
            Some((name, value))
                if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic()) =>
            {
                let field = Field::parse(&name.to_lowercase()).ok_or_else(|| {
                    format!("unknown field {name:?}: use {}", Field::names_line())
                })?;
                field_test(field, value)?
            }
            _ => Test::Text(body.to_lowercase()),
        };
        terms.push(Term { negated, test });
    }
    Ok(ListQuery { terms })
}

fn field_test(field: Field, value: &str) -> Result<Test, String> {
    let v = value.trim().to_lowercase();
    if v.is_empty() {
        return Err(format!("{}: needs a value", field.name()));
    }
    Ok(match field {
        Field::Verdict => Test::Verdict(
            VerdictFilter::parse(&v).map_err(|e| format!("{e} · ? lists the verdicts"))?,
        ),
        Field::Rule => match v.as_str() {
            "none" | "-" => Test::Rule(None),
            n => match n.parse::<u8>() {
                Ok(r) if r <= 9 => Test::Rule(Some(r)),
                _ => return Err(format!("rule:{value}: a rule is 0 to 9, or none")),
            },
        },
        Field::Kind => match v.as_str() {
            "dispatch" | "direct" => Test::Kind(v),
            _ => return Err(format!("kind:{value}: use dispatch or direct")),
        },
        Field::Status => {
            let status = if v == "pending" {
                "queued".to_string()
            } else {
                v
            };
            if !SubmissionStatus::KNOWN.iter().any(|s| s.as_str() == status) {
                let names: Vec<&str> = SubmissionStatus::KNOWN.iter().map(|s| s.as_str()).collect();
                return Err(format!(
                    "status:{value}: use {} (or pending)",
                    names.join(", ")
                ));
            }
            Test::Status(status)
        }
        Field::Instance => Test::Instance(v),
        Field::Id => Test::Id(v),
        Field::Owner => Test::Owner(v),
        Field::Journal => Test::Journal(v),
        Field::Error => Test::Error(v),
    })
}

impl ListQuery {
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn matches(&self, s: &Subject<'_>) -> bool {
        self.terms.iter().all(|t| t.test.holds(s) != t.negated)
    }
}

impl ListQuery {
    /// The id prefix this query names, to look up in the whole journal when only a page of the
    /// filter is loaded: an `id:` term, or a lone word that can only be an id prefix (4 or more
    /// hex digits and dashes). Negated terms look nothing up.
    pub fn id_lookup(&self) -> Option<String> {
        let looks_like_id = |w: &str| {
            w.len() >= 4
                && w.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
                && w.chars().any(|c| c.is_ascii_hexdigit())
        };
        let mut found = None;
        for term in self.terms.iter().filter(|t| !t.negated) {
            match &term.test {
                Test::Id(p) => found = Some(p.clone()),
                Test::Text(w) if self.terms.len() == 1 && looks_like_id(w) => {
                    found = Some(w.clone())
                }
                _ => {}
            }
        }
        found
    }
}

impl Test {
    fn holds(&self, s: &Subject<'_>) -> bool {
        let has = |text: &str, needle: &str| text.to_lowercase().contains(needle);
        match self {
            Test::Text(q) => [
                s.id,
                s.instance,
                s.verdict,
                s.error,
                s.session_key,
                s.reason,
            ]
            .iter()
            .any(|f| has(f, q)),
            Test::Verdict(v) => v.matches(s.verdict, s.disposition),
            Test::Rule(r) => s.rule == *r,
            Test::Kind(k) => s.kind == k,
            Test::Status(st) => s.status == st,
            Test::Instance(q) => has(s.instance, q),
            Test::Id(p) => s.id.to_lowercase().starts_with(p.as_str()),
            Test::Owner(p) => s.owner.to_lowercase().starts_with(p.as_str()),
            Test::Journal(q) => has(s.journal, q),
            Test::Error(q) => has(s.error, q),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuck_partial() -> Subject<'static> {
        Subject {
            id: "EC647423-080a",
            instance: "p1",
            verdict: "resume/tool_results_partial",
            disposition: Some(DispositionKind::Reconcile),
            rule: Some(6),
            kind: "dispatch",
            status: "running",
            owner: "9f2c77",
            journal: "provider_started",
            error: "",
            session_key: "agent-session:[\"p1\"]",
            reason: "repair the tool batch",
        }
    }

    fn live_direct() -> Subject<'static> {
        Subject {
            id: "aa11",
            instance: "web-7",
            verdict: "resume/tool_results",
            disposition: Some(DispositionKind::Live),
            rule: None,
            kind: "direct",
            status: "running",
            owner: "0b1d",
            journal: "before_provider",
            error: "Rate limit",
            session_key: "agent-session:[\"web-7\"]",
            reason: "a worker holds the lease",
        }
    }

    fn hits(q: &str) -> (bool, bool) {
        let q = parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        (q.matches(&stuck_partial()), q.matches(&live_direct()))
    }

    #[test]
    fn id_lookups_come_from_id_terms_and_lone_id_words() {
        let id = |q: &str| parse(q).unwrap().id_lookup();
        assert_eq!(id("id:B8712FEE"), Some("b8712fee".into()));
        assert_eq!(id("b8712fee"), Some("b8712fee".into()));
        assert_eq!(id("86bad5c1-2d"), Some("86bad5c1-2d".into()));
        assert_eq!(id("verdict:stuck id:b87"), Some("b87".into()));
        // Words that are not ids, short ones, negated ones, and words beside other terms.
        assert_eq!(id("rate"), None);
        assert_eq!(id("abc"), None);
        assert_eq!(id("----"), None);
        assert_eq!(id("!id:b8712fee"), None);
        assert_eq!(id("b8712fee kind:direct"), None);
    }

    #[test]
    fn plain_words_search_every_text_column() {
        assert_eq!(hits(""), (true, true));
        assert_eq!(hits("ec64"), (true, false));
        assert_eq!(hits("RATE"), (false, true));
        assert_eq!(hits("resume"), (true, true));
        assert_eq!(hits("resume web"), (false, true));
        // A session key is searched as text, not read as a field.
        assert_eq!(hits("agent-session:["), (true, true));
    }

    #[test]
    fn fields_match_one_column() {
        assert_eq!(hits("verdict:resume"), (true, true));
        assert_eq!(hits("verdict:live"), (false, true));
        assert_eq!(hits("verdict:stuck"), (true, false));
        assert_eq!(hits("verdict:resume/tool_results"), (false, true));
        assert_eq!(hits("rule:6"), (true, false));
        assert_eq!(hits("rule:none"), (false, true));
        assert_eq!(hits("kind:direct"), (false, true));
        assert_eq!(hits("KIND:Dispatch"), (true, false));
        assert_eq!(hits("status:running"), (true, true));
        assert_eq!(hits("status:pending"), (false, false));
        assert_eq!(hits("instance:WEB"), (false, true));
        assert_eq!(hits("id:ec6474"), (true, false));
        assert_eq!(hits("id:647"), (false, false));
        assert_eq!(hits("owner:9f2c"), (true, false));
        assert_eq!(hits("phase:started"), (true, false));
        assert_eq!(hits("journal:before"), (false, true));
        assert_eq!(hits("error:\"rate limit\""), (false, true));
    }

    #[test]
    fn negation_and_conjunction() {
        assert_eq!(hits("-verdict:live"), (true, false));
        assert_eq!(hits("!kind:direct"), (true, false));
        assert_eq!(hits("verdict:resume -rule:6"), (false, true));
        assert_eq!(hits("-ec64"), (false, true));
        // A lone `-` is text, not an empty negation.
        assert_eq!(parse("-").unwrap().terms[0].test, Test::Text("-".into()));
    }

    #[test]
    fn bad_terms_say_what_is_wrong_in_one_line() {
        for (q, needle) in [
            ("verdcit:live", "unknown field \"verdcit\""),
            ("verdict:lve", "unknown verdict \"lve\""),
            ("rule:12", "a rule is 0 to 9"),
            ("kind:batch", "use dispatch or direct"),
            ("status:done", "use queued, running, terminalizing, settled"),
            ("rule:", "rule: needs a value"),
        ] {
            let e = parse(q).unwrap_err();
            assert!(e.contains(needle), "{q}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn words_keep_quoted_spaces() {
        assert_eq!(words(" a  \"b c\" d"), ["a", "b c", "d"]);
        assert_eq!(words("error:\"x y\""), ["error:x y"]);
        assert_eq!(words("\"\""), [""]);
    }
}
