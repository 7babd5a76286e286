//! One sentence per verdict: what each classification kind, resume mode and outcome means. Shown
//! in the verdict panel and the list preview. Pure: one table, tested for completeness.

use turnscope_core::recovery::classify::ResumeMode;

/// (verdict as shown, one sentence).
pub static TOOLTIPS: &[(&str, &str)] = &[
    // Classification kinds (running rows whose lease expired).
    ("absent", "the input entry is not on the active path: the reconciler requeues it if the input was never applied (rule 7), else fails it (rule 8 or 9)"),
    ("advanced_past_input", "a user message follows this submission's input, so the session moved on: the runtime fails it rather than replay it (rule 9)"),
    ("completed", "a final answer (stop or length) follows the input: the runtime settles it as completed without a model call (rule 1), even past its budget or deadline"),
    ("tool_use_unresolved", "the model asked for tools and no tool result follows the input: if the journal recorded the request the runtime writes interrupted results and resumes (rule 6), else it fails it (rule 9)"),
    ("terminal_error", "the last answer is a non-retryable model error: the runtime fails the submission (rule 9)"),
    ("resume", "the turn stopped in a state the runtime can continue from: see the mode"),
    // Resume modes.
    ("resume/input_only", "no answer follows the input yet: a fresh attempt starts the turn if the provider was never reached (rule 5), else the runtime fails it (rule 9)"),
    ("resume/overflow", "the last answer overflowed the context window: resumed with compaction only if the provider was never reached (rule 5), else failed (rule 9)"),
    ("resume/transient_retry", "the last answer is a retryable error (rate limit, overload, network): a fresh attempt retries after a backoff (rule 5)"),
    ("resume/stream_continuation", "an aborted answer with a stream_continued signal after the input: a fresh attempt continues the recovered stream (rule 5)"),
    ("resume/tool_results", "the model asked for tools and the trailing batch has every result: a fresh attempt continues with them, no tool runs again"),
    ("resume/tool_results_partial", "the trailing tool batch is missing results (‼): synthetic \"interrupted\" results complete it (repair, rule 6 or at resume) and a fresh attempt continues, no tool runs again"),
    ("resume/aborted_partial", "the last answer was aborted with no incomplete tool batch before it: a fresh attempt continues (rule 4 if the stream chunks rebuild, else rule 5)"),
    // Outcomes (rows the reconciler does not classify).
    ("pending", "queued: waiting for a worker to pick it up"),
    ("publishing", "terminalizing: the result is decided and is being published"),
    ("live", "a worker holds an unexpired lease: it is being worked on, not stuck"),
    ("no-lease", "running with lease 0: a Node runtime never reconciles it"),
    ("failed", "settled with an error (dispatch) or a failed terminal event (direct prompt)"),
    ("damaged", "the session cannot be loaded (entry JSON that does not parse, bad session data, a parentId cycle): no plan"),
    ("malformed", "the row breaks the runtime's row invariants: the runtime fails it automatically"),
];

/// The sentence for a verdict as shown (`tool_use_unresolved`, `resume/tool_results`, `pending`,
/// …). A trailing marker or qualifier (`resume/tool_results_partial ‼`) is ignored.
pub fn tooltip(verdict: &str) -> Option<&'static str> {
    let v = verdict.split_whitespace().next().unwrap_or("");
    TOOLTIPS
        .iter()
        .find(|(k, _)| *k == v)
        .map(|(_, t)| *t)
        // A settled `completed` outcome reads like the classification.
        .or_else(|| (v == "settled").then_some("settled successfully"))
}

/// The sentence for a resume mode.
pub fn mode_tooltip(mode: ResumeMode) -> &'static str {
    tooltip(&format!("resume/{}", mode.as_str())).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_mode_and_outcome_has_one_sentence() {
        let kinds = [
            "absent",
            "advanced_past_input",
            "completed",
            "tool_use_unresolved",
            "terminal_error",
            "resume",
        ];
        for k in kinds {
            assert!(tooltip(k).is_some(), "{k}");
        }
        for m in ResumeMode::ALL {
            let t = mode_tooltip(m);
            assert!(!t.is_empty(), "{m:?}");
        }
        for o in [
            "pending",
            "publishing",
            "live",
            "no-lease",
            "failed",
            "damaged",
            "malformed",
        ] {
            assert!(tooltip(o).is_some(), "{o}");
        }
        for (k, t) in TOOLTIPS {
            assert!(!t.contains(". "), "{k}: one sentence");
            assert!(!t.ends_with('.'), "{k}");
        }
        assert_eq!(
            tooltip("resume/tool_results_partial ‼"),
            tooltip("resume/tool_results_partial")
        );
        assert_eq!(tooltip("what"), None);
    }
}
