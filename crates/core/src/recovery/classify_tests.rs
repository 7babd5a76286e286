//! The runtime's own classifier test table (spec §9.1, `test/submission-state.test.ts`), row by row,
//! plus partial-batch detector cases. Every case uses `contextWindow = 100000`.

use serde_json::{json, Value};

use crate::journal::entry::Entry;
use crate::recovery::classify::*;

pub(crate) struct Seq {
    entries: Vec<Entry>,
}

impl Seq {
    pub(crate) fn new() -> Seq {
        Seq { entries: vec![] }
    }

    fn push(mut self, entry: Value) -> Seq {
        let n = self.entries.len();
        let id = format!("e{n:07}");
        let parent = if n == 0 {
            Value::String("input00".into())
        } else {
            Value::String(format!("e{:07}", n - 1))
        };
        let mut obj = serde_json::Map::new();
        obj.insert("type".into(), entry["type"].clone());
        obj.insert("id".into(), id.clone().into());
        obj.insert("parentId".into(), parent);
        obj.insert("timestamp".into(), "2026-01-01T00:00:00.000Z".into());
        for (k, v) in entry.as_object().unwrap() {
            if k != "type" {
                obj.insert(k.clone(), v.clone());
            }
        }
        let raw = Value::Object(obj).to_string();
        self.entries.push(Entry::parse(n as i64 + 1, &id, &raw));
        self
    }

    pub(crate) fn msg(self, message: Value) -> Seq {
        self.push(json!({"type":"message","message":message}))
    }

    pub(crate) fn assistant(self, stop: &str, extra: Value) -> Seq {
        let mut m = json!({"role":"assistant","content":[{"type":"text","text":"partial output"}],
            "usage":{"input":100,"output":20,"cacheRead":0},"stopReason":stop});
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        self.msg(m)
    }

    pub(crate) fn tool_use(self, calls: &[(&str, &str)]) -> Seq {
        let content: Vec<Value> = calls
            .iter()
            .map(|(id, name)| json!({"type":"toolCall","id":id,"name":name,"arguments":{}}))
            .collect();
        self.assistant("toolUse", json!({"content": content}))
    }

    pub(crate) fn result(self, id: &str, name: &str) -> Seq {
        self.msg(json!({"role":"toolResult","toolCallId":id,"toolName":name,"content":[{"type":"text","text":"ok"}],"isError":false}))
    }

    pub(crate) fn signal(self, ty: &str) -> Seq {
        self.msg(json!({"role":"signal","type":ty,"content":""}))
    }

    pub(crate) fn user(self) -> Seq {
        self.msg(json!({"role":"user","content":"hello"}))
    }

    pub(crate) fn compaction(self) -> Seq {
        self.push(
            json!({"type":"compaction","summary":"s","firstKeptEntryId":"x","tokensBefore":1}),
        )
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub(crate) fn refs(&self) -> Vec<&Entry> {
        self.entries.iter().collect()
    }

    pub(crate) fn classify(&self) -> Classification {
        classify_submission_state(Some(&self.refs()), 100_000)
    }
}

fn resume(mode: &str, n: u32) -> Value {
    json!({"kind":"resume","mode":mode,"consecutiveRetryableErrors":n})
}

#[test]
fn table_9_1() {
    let err = |text: &str| json!({"errorMessage": text, "content": []});
    let cases: Vec<(u32, Option<Seq>, Value)> = vec![
        (46, None, json!({"kind":"absent"})),
        (
            52,
            Some(Seq::new().assistant("stop", json!({})).user()),
            json!({"kind":"advanced_past_input"}),
        ),
        (64, Some(Seq::new()), resume("input_only", 0)),
        (
            74,
            Some(Seq::new().assistant("stop", json!({}))),
            json!({"kind":"completed","overflow":false}),
        ),
        (
            82,
            Some(Seq::new().assistant(
                "length",
                json!({"usage":{"input":100,"output":50,"cacheRead":0}}),
            )),
            json!({"kind":"completed","overflow":false}),
        ),
        (
            95,
            Some(Seq::new().assistant(
                "stop",
                json!({"usage":{"input":150000,"output":10,"cacheRead":0}}),
            )),
            json!({"kind":"completed","overflow":true}),
        ),
        (
            111,
            Some(
                Seq::new()
                    .tool_use(&[("tc1", "lookup"), ("tc2", "search")])
                    .result("tc1", "lookup")
                    .result("tc2", "search"),
            ),
            resume("tool_results", 0),
        ),
        (
            144,
            Some(
                Seq::new()
                    .tool_use(&[("tc1", "a"), ("tc2", "b"), ("tc3", "c")])
                    .result("tc1", "a"),
            ),
            resume("tool_results_partial", 0),
        ),
        (
            175,
            Some(
                Seq::new()
                    .tool_use(&[("tc1", "a"), ("tc2", "b")])
                    .result("tc1", "a")
                    .assistant("aborted", json!({})),
            ),
            resume("tool_results_partial", 0),
        ),
        (
            205,
            Some(
                Seq::new()
                    .tool_use(&[("tc1", "a")])
                    .result("tc1", "a")
                    .assistant("aborted", json!({})),
            ),
            resume("aborted_partial", 0),
        ),
        (
            230,
            Some(
                Seq::new()
                    .tool_use(&[("tc1", "a"), ("tc2", "b")])
                    .result("tc1", "a")
                    .assistant("aborted", json!({}))
                    .signal("stream_continued"),
            ),
            resume("stream_continuation", 0),
        ),
        (
            264,
            Some(Seq::new().assistant("toolUse", json!({}))),
            json!({"kind":"tool_use_unresolved"}),
        ),
        (
            274,
            Some(
                Seq::new()
                    .assistant("aborted", json!({}))
                    .signal("stream_continued"),
            ),
            resume("stream_continuation", 0),
        ),
        (
            291,
            Some(Seq::new().assistant("aborted", json!({}))),
            resume("aborted_partial", 0),
        ),
        (
            304,
            Some(Seq::new().assistant("error", err("Overloaded"))),
            resume("transient_retry", 1),
        ),
        (
            319,
            Some(
                Seq::new()
                    .assistant("error", err("429 Too Many Requests"))
                    .assistant("error", err("Overloaded")),
            ),
            resume("transient_retry", 2),
        ),
        (
            331,
            Some(Seq::new().assistant(
                "error",
                err("prompt is too long: 200000 tokens > 100000 maximum"),
            )),
            resume("overflow", 0),
        ),
        (
            350,
            Some(Seq::new().assistant("error", err("invalid x-api-key"))),
            json!({"kind":"terminal_error","reason":"invalid x-api-key"}),
        ),
    ];
    for (line, seq, expected) in cases {
        let refs = seq.as_ref().map(Seq::refs);
        let got = classify_submission_state(refs.as_deref(), 100_000);
        assert_eq!(
            got.state.to_runtime_json(),
            expected,
            "submission-state.test.ts:{line}"
        );
    }
}

#[test]
fn coarse_inspection_mapping() {
    let c = |s: &Seq| s.classify().state.inspection();
    assert_eq!(
        classify_submission_state(None, 0).state.inspection(),
        Inspection::Absent
    );
    assert_eq!(c(&Seq::new()), Inspection::Uncertain);
    assert_eq!(
        c(&Seq::new().assistant("stop", json!({}))),
        Inspection::Completed
    );
    assert_eq!(
        c(&Seq::new().assistant("aborted", json!({}))),
        Inspection::Continuable
    );
    assert_eq!(
        c(&Seq::new().assistant("error", json!({"errorMessage":"503"}))),
        Inspection::Continuable
    );
    assert_eq!(
        c(&Seq::new().assistant("error", json!({"errorMessage":"too many tokens"}))),
        Inspection::Uncertain
    );
    assert_eq!(
        c(&Seq::new().assistant("toolUse", json!({}))),
        Inspection::Uncertain
    );
    assert_eq!(
        c(&Seq::new().assistant("error", json!({"errorMessage":"bad key"}))),
        Inspection::Uncertain
    );
    assert_eq!(c(&Seq::new().user()), Inspection::Uncertain);
}

#[test]
fn explanation_points_at_the_entries() {
    let s = Seq::new()
        .tool_use(&[("tc1", "a"), ("tc2", "b"), ("tc3", "c")])
        .result("tc1", "a");
    let c = s.classify();
    assert_eq!(c.explanation.step, 9);
    assert_eq!(
        c.explanation.entry_ids,
        vec![s.entries()[0].id.clone(), s.entries()[1].id.clone()]
    );
    let b = c.trailing_partial_batch.unwrap();
    assert_eq!(b.entry_id, s.entries()[0].id);
    let missing: Vec<&str> = b.missing_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(missing, ["tc2", "tc3"]);
    let u = Seq::new().assistant("stop", json!({})).user().classify();
    assert_eq!(u.explanation.step, 2);
    assert_eq!(u.explanation.entry_ids.len(), 1);
}

#[test]
fn partial_batch_detector_edges() {
    let find = |s: &Seq| find_trailing_partial_tool_batch(&s.refs());
    // A signal between the assistant and its results breaks the shape.
    assert!(find(
        &Seq::new()
            .tool_use(&[("a", "x"), ("b", "y")])
            .signal("other")
            .result("a", "x")
    )
    .is_none());
    // A compaction at the tail breaks it too.
    assert!(find(
        &Seq::new()
            .tool_use(&[("a", "x"), ("b", "y")])
            .result("a", "x")
            .compaction()
    )
    .is_none());
    // Any stream_continued anywhere vetoes.
    assert!(find(
        &Seq::new()
            .signal("stream_continued")
            .tool_use(&[("a", "x"), ("b", "y")])
            .result("a", "x")
    )
    .is_none());
    // Results out of order still count by membership.
    let s = Seq::new()
        .tool_use(&[("a", "x"), ("b", "y"), ("c", "z")])
        .result("c", "z")
        .result("a", "x");
    let b = find(&s).unwrap();
    assert_eq!(
        b.tool_calls
            .iter()
            .map(|c| c.has_result)
            .collect::<Vec<_>>(),
        [true, false, true]
    );
    // Results for other ids do not complete the batch.
    assert!(find(&Seq::new().tool_use(&[("a", "x")]).result("zz", "x")).is_some());
    // No tool calls in the toolUse assistant → nothing.
    assert!(find(&Seq::new().assistant("toolUse", json!({})).result("a", "x")).is_none());
    // Two aborted assistants: only one is skipped.
    assert!(find(
        &Seq::new()
            .tool_use(&[("a", "x"), ("b", "y")])
            .result("a", "x")
            .assistant("aborted", json!({}))
            .assistant("aborted", json!({}))
    )
    .is_none());
}

#[test]
fn retry_counter_walks_back_over_non_assistants() {
    let e = |t: &str| json!({"errorMessage": t});
    let s = Seq::new()
        .assistant("error", e("invalid key"))
        .assistant("error", e("503"))
        .signal("x")
        .compaction()
        .assistant("error", e("socket hang up"));
    assert_eq!(count_consecutive_retryable_model_errors(&s.refs()), 2);
    let u = Seq::new()
        .assistant("error", e("503"))
        .user()
        .assistant("error", e("503"));
    assert_eq!(count_consecutive_retryable_model_errors(&u.refs()), 1);
}

#[test]
fn overflow_rules() {
    let m = |stop: &str, extra: Value| {
        let s = Seq::new().assistant(stop, extra);
        s.entries()[0].message().unwrap().clone()
    };
    // Non-overflow exclusions win over overflow patterns.
    assert!(!is_context_overflow(
        &m(
            "error",
            json!({"errorMessage":"rate limit: too many tokens"})
        ),
        0
    ));
    assert!(!is_context_overflow(
        &m(
            "error",
            json!({"errorMessage":"Throttling error: too many tokens"})
        ),
        0
    ));
    assert!(is_context_overflow(
        &m(
            "error",
            json!({"errorMessage":"x Throttling error: too many tokens"})
        ),
        0
    ));
    assert!(is_context_overflow(
        &m("error", json!({"errorMessage":"413 status code (no body)"})),
        0
    ));
    // Silent overflow needs a window and a stop answer; boundary is strict.
    let u = |i: u64, c: u64, o: u64| json!({"usage":{"input":i,"output":o,"cacheRead":c}});
    assert!(!is_context_overflow(
        &m("stop", u(150_000, 50_000, 1)),
        200_000
    ));
    assert!(is_context_overflow(
        &m("stop", u(150_000, 50_001, 1)),
        200_000
    ));
    assert!(!is_context_overflow(&m("stop", u(900_000, 0, 1)), 0));
    // Length truncation: output 0 and ≥ 99% of the window.
    assert!(is_context_overflow(&m("length", u(198_000, 0, 0)), 200_000));
    assert!(!is_context_overflow(
        &m("length", u(197_999, 0, 0)),
        200_000
    ));
    assert!(!is_context_overflow(
        &m("length", u(199_000, 0, 1)),
        200_000
    ));
    // Missing usage: JS arithmetic gives NaN, never an overflow.
    let no_usage = Entry::parse(
        0,
        "x",
        r#"{"type":"message","id":"x","message":{"role":"assistant","stopReason":"stop","content":[]}}"#,
    );
    assert!(!is_context_overflow(no_usage.message().unwrap(), 200_000));
}

#[test]
fn terminal_error_reason_falls_back_to_stop_reason() {
    let s = Seq::new().msg(json!({"role":"assistant","content":[],"stopReason":"error"}));
    assert_eq!(
        s.classify().state.to_runtime_json(),
        json!({"kind":"terminal_error","reason":"error"})
    );
    let e = Seq::new().assistant("error", json!({"errorMessage":""}));
    assert_eq!(
        e.classify().state.to_runtime_json(),
        json!({"kind":"terminal_error","reason":""})
    );
}

#[test]
fn malformed_and_unknown_entries_are_skipped_like_the_runtime() {
    let mut s = Seq::new().tool_use(&[("a", "x")]);
    s.entries.push(Entry::parse(9, "bad", "{oops"));
    s.entries
        .push(Entry::parse(10, "unk", r#"{"type":"label","id":"unk"}"#));
    // The tail is not a toolResult run, so no partial batch; no toolResult at all → unresolved.
    assert_eq!(s.classify().state.kind(), "tool_use_unresolved");
}
