//! `list --rule`: which reconciler rule (0–9 of the spec's §5.2) fires next for a row, as the
//! planner computes it; `none` for rows no rule applies to (live, pending, settled…). A leading
//! `!` negates it, as `--verdict`'s does.

use std::fmt;

/// The rules a filter selects (`2,3`), or every other row (`!9`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFilter {
    /// `None` is "no rule fires".
    rules: Vec<Option<u8>>,
    negated: bool,
}

/// The highest rule of the reconciler's table.
const LAST_RULE: u8 = 9;

impl RuleFilter {
    /// `N`, `N,M,…`, `none`, each with an optional leading `!` on the whole.
    pub fn parse(text: &str) -> Result<RuleFilter, String> {
        RuleFilter::parse_up_to(text, LAST_RULE)
    }

    /// [`RuleFilter::parse`] for a table whose last rule is `last` (flue 2.x's reconciler has
    /// steps 0 to 7).
    pub fn parse_up_to(text: &str, last: u8) -> Result<RuleFilter, String> {
        let trimmed = text.trim();
        let (negated, body) = match trimmed.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let mut rules = Vec::new();
        for part in body.split(',').map(str::trim) {
            let rule = match part.to_lowercase().as_str() {
                "none" | "-" => None,
                n => match n.strip_prefix("rule").unwrap_or(n).trim().parse::<u8>() {
                    Ok(r) if r <= last => Some(r),
                    _ => {
                        return Err(format!(
                            "unknown rule {part:?}: a rule is 0 to {last}, or none"
                        ))
                    }
                },
            };
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
        Ok(RuleFilter { rules, negated })
    }

    /// Whether a row whose plan fires `rule` is selected.
    pub fn matches(&self, rule: Option<u8>) -> bool {
        self.rules.contains(&rule) != self.negated
    }

    /// How an empty result names it: `at rule 2 or 3`, `not at rule 9`.
    pub fn describe(&self) -> String {
        let at = if self.negated { "not at" } else { "at" };
        format!("{at} {self}")
    }
}

impl fmt::Display for RuleFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .rules
            .iter()
            .map(|r| r.map_or("no rule".to_string(), |n| n.to_string()))
            .collect();
        match names.as_slice() {
            [one] if one == "no rule" => write!(f, "no rule"),
            [one] => write!(f, "rule {one}"),
            _ => write!(f, "rule {}", names.join(" or ")),
        }
    }
}

/// The values `--rule` takes, for completions and hints.
pub fn rule_names() -> Vec<String> {
    rule_names_up_to(LAST_RULE)
}

/// The values `--rule` takes for a table whose last rule is `last`.
pub fn rule_names_up_to(last: u8) -> Vec<String> {
    (0..=last)
        .map(|n| n.to_string())
        .chain(["none".to_string()])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_none_and_negation() {
        let f = RuleFilter::parse("2, 3").unwrap();
        assert!(f.matches(Some(2)) && f.matches(Some(3)));
        assert!(!f.matches(Some(9)) && !f.matches(None));
        assert_eq!(f.describe(), "at rule 2 or 3");
        let not9 = RuleFilter::parse("!9").unwrap();
        assert!(!not9.matches(Some(9)));
        assert!(not9.matches(Some(2)) && not9.matches(None));
        assert_eq!(not9.describe(), "not at rule 9");
        let none = RuleFilter::parse("none").unwrap();
        assert!(none.matches(None) && !none.matches(Some(0)));
        assert_eq!(none.describe(), "at no rule");
        assert_eq!(RuleFilter::parse("rule 4").unwrap().describe(), "at rule 4");
    }

    #[test]
    fn refuses_what_is_no_rule() {
        for bad in ["10", "x", "", "!", "2,", "-1"] {
            let e = RuleFilter::parse(bad).unwrap_err();
            assert!(e.contains("a rule is 0 to 9"), "{bad}: {e}");
        }
    }
}
