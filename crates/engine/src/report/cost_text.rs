//! The attempts and the cost since the input as lines of text: `show` prints them, the TUI's
//! detail pane draws them, `list` prints the cost cell. One wording for all three.

use turnscope_core::journal::cost::{CostScope, CostSinceInput, UsageSum};
use turnscope_core::journal::time::{human_duration, iso_from_ms};
use turnscope_core::recovery::attempts::{AttemptTimeline, AttemptTrace, Reached};
use turnscope_core::text::{plural, thousands};

/// A cost in the stored currency unit (`usage.cost.total`): `$0.0123` below one, `$12.34` from
/// one up (as the TUI shows an entry's usage).
pub fn money(cost: f64) -> String {
    // `-0.0` (the sum of no figures: `Iterator::sum` of f64 starts there) is written as 0.
    let cost = cost + 0.0;
    if cost.is_nan() {
        "$?".into()
    } else if cost >= 1.0 {
        format!("${cost:.2}")
    } else {
        format!("${cost:.4}")
    }
}

/// Several submissions' costs since their inputs (`list`'s COST: active paths) summed, and how
/// many have no figure (no input on the path, or the verdict still computing): the incident
/// strip's and the marked rows' total. `$0.0420 since the inputs (active paths), 1 without a
/// figure`.
pub fn costs_sum_text(costs: impl IntoIterator<Item = Option<f64>>) -> String {
    let (mut total, mut without) = (0.0, 0usize);
    for c in costs {
        match c {
            Some(c) => total += c,
            None => without += 1,
        }
    }
    let mut s = format!("{} since the inputs (active paths)", money(total));
    if without > 0 {
        s.push_str(&format!(", {without} without a figure"));
    }
    s
}

/// `$0.0123  in 1,200  out 340  cache read 9,000 write 0  (3 assistants)`.
pub fn usage_text(u: &UsageSum) -> String {
    let mut s = format!(
        "{}  in {}  out {}  cache read {} write {}  ({})",
        money(u.cost),
        thousands(u.input),
        thousands(u.output),
        thousands(u.cache_read),
        thousands(u.cache_write),
        plural(u.assistants, "assistant", "assistants"),
    );
    if u.incomplete > 0 {
        s.push_str(&format!(", {} without full usage", u.incomplete));
    }
    s
}

/// The lines of the cost since the input: the total first, then each part.
pub fn cost_lines(c: &CostSinceInput) -> Vec<String> {
    // A part without assistants is `none`: a line of zeros says nothing.
    let part = |u: &UsageSum| {
        if u.assistants == 0 {
            "none".to_string()
        } else {
            usage_text(u)
        }
    };
    let mut lines = vec![format!("total      {}", usage_text(&c.total()))];
    lines.push(format!("active     {}", part(&c.active)));
    match (&c.abandoned, c.abandoned_branches) {
        (Some(a), Some(b)) if a.assistants > 0 => lines.push(format!(
            "abandoned  {}  on {}",
            usage_text(a),
            plural(b, "branch", "branches")
        )),
        (Some(_), _) => lines.push("abandoned  none".into()),
        _ => lines.push("abandoned  not read (only the active path was read)".into()),
    }
    lines.push(format!("aborted    {}", part(&c.aborted)));
    if c.compactions > 0 {
        lines.push(format!(
            "note       {} after the input: their usage is not counted",
            plural(c.compactions, "compaction", "compactions")
        ));
    }
    if c.scope == CostScope::ActivePath {
        lines.push("note       a lower bound: abandoned branches are counted only by show".into());
    }
    lines
}

/// How far an attempt got, in words: `provider started (turn_1), tools requested: 1 of 3 results`.
pub fn reached_text(r: &Reached) -> String {
    match r {
        Reached::HoldsJournal { phase } => format!("holds the journal ({phase})"),
        Reached::ProviderStarted { turn_id } => format!("provider started ({turn_id})"),
        Reached::ToolsRequested { calls, results, .. } => {
            format!("tools requested: {results} of {calls} results")
        }
        Reached::Committed { .. } => "committed".into(),
        Reached::StreamInterrupted { partial, .. } => match partial {
            Some(p) => format!("stream interrupted, aborted partial {p}"),
            None => "stream interrupted".into(),
        },
        Reached::StreamContinued { .. } => "stream continued by a later attempt".into(),
    }
}

/// One line for an attempt: `#2 2627d151…  current  worker 61c28b3c…  started <iso>  lease
/// expired 4m ago  — provider started (turn_1), tools requested: 1 of 3 results`.
pub fn attempt_line(t: &AttemptTrace, now_ms: i64) -> String {
    let (who, steps) = attempt_parts(t, now_ms);
    format!("{who} — {steps}")
}

/// `attempt_line` in its two halves: which attempt, and how far it got (the TUI's narrow pane
/// draws them on two lines).
pub fn attempt_parts(t: &AttemptTrace, now_ms: i64) -> (String, String) {
    let short = |s: &str| {
        if s.chars().count() > 8 {
            format!("{}…", s.chars().take(8).collect::<String>())
        } else {
            s.to_string()
        }
    };
    let mut s = format!(
        "{} {}",
        t.number.map_or("#?".into(), |n| format!("#{n}")),
        short(&t.attempt_id)
    );
    if t.current {
        s.push_str("  current");
        s.push_str(&format!(
            "  worker {}",
            t.owner_id.as_deref().map_or("-".into(), short)
        ));
        if let Some(at) = t.started_at {
            s.push_str(&format!("  started {}", iso_from_ms(at)));
        }
        match t.lease_expires_at {
            None | Some(0) => s.push_str("  no lease"),
            Some(at) if at < now_ms => s.push_str(&format!(
                "  lease expired {} ago",
                human_duration(now_ms - at)
            )),
            Some(at) => s.push_str(&format!("  lease live {}", human_duration(at - now_ms))),
        }
    }
    let steps: Vec<String> = t.reached.iter().map(reached_text).collect();
    let steps = if steps.is_empty() {
        // Only the row's current attempt can have no step: its claim is all there is.
        "claimed, nothing further recorded".to_string()
    } else {
        steps.join(", ")
    };
    (s, steps)
}

/// The head line of the attempts: `2 of 10 made, 1 traced, 1 untraced (no id left anywhere)`.
pub fn attempts_head(a: &AttemptTimeline) -> String {
    let mut s = format!(
        "{} of {} made, {} traced",
        a.attempt_count,
        a.max_retry,
        a.traced.len()
    );
    if a.untraced > 0 {
        s.push_str(&format!(", {} untraced (no id left anywhere)", a.untraced));
    }
    s
}

/// The head and one line per traced attempt, earlier first.
pub fn attempt_lines(a: &AttemptTimeline, now_ms: i64) -> Vec<String> {
    let mut lines = vec![attempts_head(a)];
    lines.extend(a.traced.iter().map(|t| attempt_line(t, now_ms)));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(assistants: u32, cost: f64) -> UsageSum {
        UsageSum {
            assistants,
            input: 1200,
            output: 340,
            cache_read: 9000,
            cache_write: 0,
            total_tokens: 10540,
            cost,
            incomplete: 0,
        }
    }

    #[test]
    fn no_figure_summed_is_written_as_zero() {
        let none: [f64; 0] = [];
        assert_eq!(money(none.iter().sum()), "$0.0000");
        assert_eq!(money(0.25), "$0.2500");
        assert_eq!(money(12.5), "$12.50");
    }

    #[test]
    fn a_path_only_cost_says_it_is_a_lower_bound() {
        let c = CostSinceInput {
            scope: CostScope::ActivePath,
            active: sum(2, 0.5),
            aborted: sum(1, 0.25),
            ..CostSinceInput::default()
        };
        assert_eq!(money(c.total().cost), "$0.7500");
        assert_eq!(money(12.345), "$12.35");
        let lines = cost_lines(&c);
        assert!(
            lines[0].starts_with("total      $0.7500  in 2,400"),
            "{lines:?}"
        );
        assert!(lines[2].contains("not read"), "{lines:?}");
        assert!(lines.last().unwrap().contains("lower bound"), "{lines:?}");
    }

    #[test]
    fn an_attempt_line_names_its_steps() {
        let t = AttemptTrace {
            attempt_id: "2627d151-0ada-4407".into(),
            current: true,
            number: Some(2),
            started_at: Some(0),
            owner_id: Some("61c28b3c-bcb8".into()),
            lease_expires_at: Some(1_000),
            reached: vec![
                Reached::ProviderStarted {
                    turn_id: "turn_1".into(),
                },
                Reached::ToolsRequested {
                    assistant: None,
                    calls: 3,
                    results: 1,
                },
            ],
        };
        assert_eq!(
            attempt_line(&t, 61_000),
            "#2 2627d151…  current  worker 61c28b3c…  started 1970-01-01T00:00:00.000Z  \
             lease expired 1m00s ago — provider started (turn_1), tools requested: 1 of 3 results"
        );
    }
}
