//! Cost and attempts in the 2.x screens: the list's COST cell and the detail's lines, drawn from
//! the `cost` and `attempts` the worker adds to each document (`turnscope-engine`'s
//! `flue2_cost`, what `turnscope list --json` and `show --json` print).

use serde_json::Value;

use crate::text::clean;

/// The COST cell of a `cost` value, as `turnscope list` writes it: `$0.0123`, a `+` where some
/// usage lacked a figure, `-` without a conversation.
pub fn cost_cell(cost: &Value) -> String {
    sum_text(&cost["total"])
}

/// A usage sum's cost (`{cost, incomplete, …}`: a `cost` object's `total`, an incident group's
/// `cost`) as `turnscope` writes it: `$0.0123`, a `+` where some usage lacked a figure, `-`
/// without one.
pub fn sum_text(t: &Value) -> String {
    match t["cost"].as_f64() {
        None => "-".into(),
        Some(c) => format!(
            "${c:.4}{}",
            if t["incomplete"].as_u64().unwrap_or(0) > 0 {
                "+"
            } else {
                ""
            }
        ),
    }
}

/// The detail's `cost` and `attempts` lines (key, value), as `turnscope show` words them.
pub fn detail_lines(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let c = &doc["cost"];
    if !c.is_null() {
        let t = &c["total"];
        let n = |v: &Value| v.as_u64().unwrap_or(0);
        out.push((
            "cost".into(),
            format!(
                "{} since the input: {} assistant(s), {} tokens ({} in, {} out); aborted partials {}, abandoned {}{}",
                cost_cell(c),
                n(&t["assistants"]),
                n(&t["totalTokens"]),
                n(&t["input"]),
                n(&t["output"]),
                cost_cell(&serde_json::json!({ "total": c["aborted"] })),
                cost_cell(&serde_json::json!({ "total": c["abandoned"] })),
                match n(&c["inProgress"]) {
                    0 => String::new(),
                    k => format!("; {k} message(s) in progress (no usage yet)"),
                }
            ),
        ));
    }
    let a = &doc["attempts"];
    if let Some(traced) = a["traced"].as_array() {
        out.push((
            "attempts seen".into(),
            format!(
                "{} of the row's {} wrote records",
                traced.len(),
                a["attemptCount"]
            ),
        ));
        for t in traced {
            let completed: Vec<&str> = t["completed"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            out.push((
                String::new(),
                clean(&format!(
                    "{}  {} provider call(s), completed [{}], {} tool call(s), {} outcome(s), {} commit(s), {} left in progress, {} tokens{}",
                    t["attemptId"].as_str().unwrap_or("?"),
                    t["providerStarted"],
                    completed.join(", "),
                    t["toolCalls"],
                    t["outcomes"],
                    t["commits"],
                    t["unfinished"],
                    t["usage"]["totalTokens"],
                    if t["current"] == true {
                        format!(
                            "; current: worker {}",
                            t["worker"].as_str().unwrap_or("-")
                        )
                    } else {
                        String::new()
                    }
                )),
            ));
        }
    }
    out
}
