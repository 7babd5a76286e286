//! "Did you mean": the known value an operator most likely meant when a flag's value names none,
//! for the values clap does not check itself (verdicts, statuses).

/// The value of `known` that `given` most likely meant: the one it is the last part of
/// (`tool_results_partial` for `resume/tool_results_partial`), else the nearest by edit distance
/// within a third of its length (at least 2). Case and surrounding spaces are ignored.
pub fn did_you_mean<'a>(given: &str, known: &'a [String]) -> Option<&'a str> {
    let g = given.trim().to_lowercase();
    if g.is_empty() {
        return None;
    }
    if let Some(k) = known
        .iter()
        .find(|k| k.rsplit_once('/').is_some_and(|(_, last)| last == g))
    {
        return Some(k);
    }
    let limit = (g.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (strsim::levenshtein(&g, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    fn known() -> Vec<String> {
        [
            "tool_use_unresolved",
            "resume",
            "resume/tool_results_partial",
            "resume/input_only",
            "completed",
            "running",
            "settled",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn the_last_part_then_the_nearest_then_nothing() {
        let k = known();
        assert_eq!(
            did_you_mean("tool_results_partial", &k),
            Some("resume/tool_results_partial")
        );
        assert_eq!(did_you_mean(" Input_Only ", &k), Some("resume/input_only"));
        assert_eq!(
            did_you_mean("tool_use_unresolve", &k),
            Some("tool_use_unresolved")
        );
        assert_eq!(did_you_mean("runing", &k), Some("running"));
        assert_eq!(did_you_mean("setled", &k), Some("settled"));
        assert_eq!(did_you_mean("banana", &k), None);
        assert_eq!(did_you_mean("", &k), None);
    }
}
