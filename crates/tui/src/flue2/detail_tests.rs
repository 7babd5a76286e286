//! Tests of `detail.rs`.

use super::*;

/// A show document with `n` entries, long texts and a trailing batch to wrap and mark.
fn doc(n: usize) -> CompactShow {
    let following: Vec<Value> = (0..n)
        .map(|n| match n % 3 {
            0 => serde_json::json!({"id": format!("entry_u{n}"), "role": "user",
                "text": "a long user message that wraps on a narrow screen ".repeat(3)}),
            1 => serde_json::json!({"id": format!("entry_a{n}"), "role": "assistant",
                "stopReason": "toolUse", "text": "thinking about it",
                "toolCalls": [{"id": format!("tc{n}"), "name": "fetch",
                    "outcome": {"state": "none"}}]}),
            _ => serde_json::json!({"id": format!("entry_r{n}"), "role": "toolResult",
                "toolCallId": format!("tc{}", n - 1), "toolName": "fetch", "isError": false}),
        })
        .collect();
    CompactShow::from_value(serde_json::json!({
        "label": "tool_use_unresolved",
        "submission": {"id": "sub_a", "status": "running", "leaseExpiresAt": 5},
        "plan": {"step": 6, "name": "replace", "reason": "why", "writes": []},
        "inputEntryId": "entry_in", "inputEntryFound": true,
        "trailingBatch": {"assistantEntryId": "entry_a37", "resultEntryIds": [],
            "toolCalls": [{"id": "tc37", "name": "fetch", "outcome": {"state": "none"}}]},
        "following": following,
    }))
}

#[test]
fn a_window_is_the_rows_of_the_whole_detail_wrapped() {
    a_window_is_the_rows_of_the_whole_detail_wrapped_with(40);
}

/// As above, the entries' rows counted on every core.
#[test]
fn a_window_of_a_long_conversation_is_the_rows_of_the_whole_detail_wrapped() {
    a_window_is_the_rows_of_the_whole_detail_wrapped_with(COUNTED_IN_PARALLEL + 977);
}

fn a_window_is_the_rows_of_the_whole_detail_wrapped_with(n: usize) {
    let (d, t) = (doc(n), Theme::default());
    let mut kept = EntryRows::default();
    for width in [30, 80, 200] {
        let all = wrapped(&lines(&d, t, 10), width, t);
        assert!(all.len() > 60, "{} rows at {width}", all.len());
        // Each scroll drawn afresh, and then by one screen keeping the entries' rows
        // counted at the last width (the screen's way), the width changing in between.
        for scroll in [0, 1, 17, 40, 41, all.len() - 5, all.len(), all.len() + 3] {
            let want: Vec<_> = all.iter().skip(scroll).take(12).cloned().collect();
            let (rows, total) = window(&d, t, 10, width, scroll, 12, &mut EntryRows::default());
            assert_eq!(total, all.len(), "width {width}");
            assert_eq!(rows, want, "width {width}, scroll {scroll}");
            let (rows, total) = window(&d, t, 10, width, scroll, 12, &mut kept);
            assert_eq!(total, all.len(), "width {width}, counted");
            assert_eq!(rows, want, "width {width}, scroll {scroll}, counted");
        }
        assert_eq!(kept.width, width);
        assert_eq!(kept.ends.len(), n);
        // Every line holding the text is found, at its row holding it (its first where
        // the text runs over a row's end).
        let hits = find(&d, t, 10, width, "FETCH TC1");
        let text = |r: &Line| -> String { r.spans.iter().map(|s| s.content.as_ref()).collect() };
        let mut want = Vec::new();
        let mut row = 0;
        for l in lines(&d, t, 10) {
            let line: String = l.line.spans.iter().map(|s| s.content.as_ref()).collect();
            let rows = wrapped(std::slice::from_ref(&l), width, t);
            if line.contains("fetch tc1") {
                let at = rows.iter().position(|r| text(r).contains("fetch tc1"));
                want.push(row + at.unwrap_or(0));
            }
            row += rows.len();
        }
        assert_eq!(hits, want, "width {width}");
        assert!(hits.len() >= 2, "tc1, tc10, tc13…: {hits:?}");
        // In the short document no hit runs over a row's end: each row holds the text.
        for h in hits.iter().filter(|_| n <= 40) {
            assert!(text(&all[*h]).contains("fetch"), "row {h} at {width}");
        }
    }
}
