//! `list --verdict` and the TUI's `verdict:` filter: the values there are (taken from the
//! classifier's and the planner's own enums, so a new state is a new value) and which rows a
//! value selects.

use strum::IntoEnumIterator;

use turnscope_core::recovery::classify::StateKind;
use turnscope_core::recovery::reconciler::DispositionKind;

/// A checked verdict filter, or its negation (`!stuck`: every row but the stuck ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictFilter {
    value: String,
    negated: bool,
}

/// A value that names no verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVerdict {
    pub given: String,
}

impl std::fmt::Display for UnknownVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown verdict {:?}", self.given)
    }
}

impl VerdictFilter {
    /// Check `text` against [`VerdictFilter::names`] (case and surrounding spaces ignored); a
    /// leading `!` negates it.
    pub fn parse(text: &str) -> Result<VerdictFilter, UnknownVerdict> {
        VerdictFilter::parse_among(text, &VerdictFilter::names())
    }

    /// [`VerdictFilter::parse`] against another format's values (flue 2.x's
    /// `flue2_select::verdict_names`).
    pub fn parse_among(text: &str, names: &[String]) -> Result<VerdictFilter, UnknownVerdict> {
        let trimmed = text.trim();
        let (negated, body) = match trimmed.strip_prefix('!') {
            Some(rest) => (true, rest.trim()),
            None => (false, trimmed),
        };
        let value = body.to_lowercase();
        if names.contains(&value) {
            Ok(VerdictFilter { value, negated })
        } else {
            Err(UnknownVerdict {
                given: text.to_string(),
            })
        }
    }

    /// Every value, in order: the classifications (with `resume` for every resume mode before
    /// the modes), then the dispositions (`stuck`, `live`, `no-lease`, `pending`, …).
    pub fn names() -> Vec<String> {
        let mut out = Vec::new();
        for kind in StateKind::iter() {
            if kind == StateKind::Resume {
                out.push(kind.as_str().to_string());
            }
            out.extend(kind.labels());
        }
        for d in DispositionKind::iter() {
            let label = d.label().to_string();
            if !out.contains(&label) {
                out.push(label);
            }
        }
        out
    }

    /// [`VerdictFilter::names`] as one line for a hint.
    pub fn names_line() -> String {
        VerdictFilter::names().join(", ")
    }

    /// The verdict named, without the negation.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    pub fn negated(&self) -> bool {
        self.negated
    }

    /// This filter the other way round (`--not-verdict`).
    pub fn negate(self) -> VerdictFilter {
        VerdictFilter {
            negated: !self.negated,
            ..self
        }
    }

    /// How an empty result names this filter: `with verdict stuck`, `without verdict stuck`.
    pub fn describe(&self) -> String {
        let with = if self.negated { "without" } else { "with" };
        format!("{with} verdict {}", self.value)
    }

    /// Whether a row with this verdict label (`report::verdict_label`) and disposition (`None`
    /// while it is still being computed) is selected. A disposition's name selects its rows
    /// (`live` the rows a worker holds, whatever their session says); `resume` every resume mode;
    /// any other value the rows whose verdict is exactly it.
    /// Negated, it selects the rows the value does not, once their verdict is known (a row
    /// still being computed matches neither way).
    pub fn matches(&self, verdict: &str, disposition: Option<DispositionKind>) -> bool {
        self.matches_words(verdict, disposition.map(DispositionKind::label))
    }

    /// [`VerdictFilter::matches`] with the disposition as its word (flue 2.x's are not
    /// beta.7's `DispositionKind`).
    pub fn matches_words(&self, verdict: &str, disposition: Option<&str>) -> bool {
        if self.negated {
            return disposition.is_some() && !self.matches_value(verdict, disposition);
        }
        self.matches_value(verdict, disposition)
    }

    fn matches_value(&self, verdict: &str, disposition: Option<&str>) -> bool {
        let v = self.value.as_str();
        if verdict == v {
            return true;
        }
        if v == StateKind::Resume.as_str() {
            return verdict
                .strip_prefix(v)
                .is_some_and(|mode| mode.starts_with('/'));
        }
        disposition.is_some_and(|d| d == v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_enums() {
        let names = VerdictFilter::names();
        for expected in [
            "absent",
            "tool_use_unresolved",
            "resume",
            "resume/tool_results_partial",
            "resume/aborted_partial",
            "stuck",
            "live",
            "no-lease",
            "pending",
            "failed",
            "damaged",
            "malformed",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
        }
        // Each value once (`completed` is a classification and an outcome).
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        assert!(
            names.iter().position(|n| n == "resume")
                < names.iter().position(|n| n == "resume/input_only")
        );
    }

    #[test]
    fn parse_checks_and_normalises() {
        assert_eq!(VerdictFilter::parse(" Live ").unwrap().as_str(), "live");
        let e = VerdictFilter::parse("resume/tool_result").unwrap_err();
        assert_eq!(e.to_string(), "unknown verdict \"resume/tool_result\"");
    }

    #[test]
    fn what_each_value_selects() {
        let f = |v: &str| VerdictFilter::parse(v).unwrap();
        let live = Some(DispositionKind::Live);
        let stuck = Some(DispositionKind::Reconcile);
        // A live row's verdict is its classification; `live` selects it anyway.
        assert!(f("live").matches("resume/tool_results", live));
        assert!(!f("live").matches("resume/tool_results", stuck));
        assert!(f("stuck").matches("resume/tool_results", stuck));
        assert!(f("resume").matches("resume/tool_results", stuck));
        assert!(!f("resume").matches("absent", stuck));
        assert!(f("resume/tool_results").matches("resume/tool_results", live));
        assert!(!f("resume/tool_results").matches("resume/tool_results_partial", stuck));
        assert!(f("completed").matches("completed", Some(DispositionKind::Completed)));
        assert!(f("completed").matches("completed", stuck));
        // Still computing: only an exact verdict could match, and there is none yet.
        assert!(!f("live").matches("…", None));
    }

    #[test]
    fn a_leading_bang_negates() {
        let f = |v: &str| VerdictFilter::parse(v).unwrap();
        let live = Some(DispositionKind::Live);
        let stuck = Some(DispositionKind::Reconcile);
        assert!(f("!live").matches("resume/tool_results", stuck));
        assert!(!f("!live").matches("resume/tool_results", live));
        assert!(!f(" ! resume").matches("resume/tool_results", stuck));
        assert!(f("!resume").matches("absent", stuck));
        // Not yet computed: not selected either way.
        assert!(!f("!live").matches("…", None));
        assert_eq!(f("!Live").describe(), "without verdict live");
        assert_eq!(f("live").negate(), f("!live"));
        assert_eq!(f("!live").negate().describe(), "with verdict live");
        assert!(VerdictFilter::parse("!").is_err());
    }
}
