//! A 2.x submission's detail, drawn from the engine's `show --json` document
//! (`turnscope.flue2.show/1`): the classification with the step of the decision order that
//! decided, the plan (the reconciler's step, why, its writes, the row after it and the resume
//! that follows), the row, then the conversation after the input as the runtime folded it:
//! assistant messages with each tool call paired with its outcome (committed, or recorded but
//! not committed), tool results, signals, user messages (another submission's marked), the
//! in-progress messages and the trailing uncommitted batch, its rows highlighted as beta.7's
//! trailing partial batch (`‼` in the partial style). Every line is read from the document; the
//! document is the CLI's, so this screen and `turnscope show` cannot disagree.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use serde_json::Value;
use turnscope_engine::flue2_show::{CompactEntries, CompactShow};

use crate::text::clean;
use crate::theme::Theme;

/// One drawn line and whether it belongs to the trailing uncommitted batch.
pub struct DetailLine {
    pub line: Line<'static>,
    pub partial: bool,
}

/// The gutter of a line of the trailing batch (beta.7's tree marks its partial batch so).
pub const PARTIAL_MARK: &str = "‼";

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => clean(s),
        Value::Null => "-".into(),
        other => clean(&other.to_string()),
    }
}

/// `text` cut to `n` characters (the CLI's `show` cuts at 60).
fn cut(text: &str, n: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= n {
        return one_line;
    }
    let mut t: String = one_line.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

struct Builder {
    t: Theme,
    now_ms: i64,
    out: Vec<DetailLine>,
    /// Where only a window of the wrapped rows is kept ([`window`]).
    window: Option<Window>,
    /// Where the rows of the lines holding a text are looked for ([`find`]).
    find: Option<Find>,
}

/// The rows at `width` where a line holding `needle` (lowercase) begins.
struct Find {
    width: usize,
    needle: String,
    rows: usize,
    hits: Vec<usize>,
}

/// The wrapped rows `from..to` at `width`, and how many rows there are in all.
struct Window {
    width: usize,
    from: usize,
    to: usize,
    rows: usize,
    kept: Vec<Line<'static>>,
    entry_rows: EntryRows,
}

/// `/` in the detail (`detail_search.rs` answers its keys): its text, whether it is being typed,
/// and where it was found.
#[derive(Debug, Default)]
pub struct DetailSearch {
    pub query: String,
    pub typing: bool,
    /// The rows ([`find`]'s) of the lines holding the text, at the last draw's width.
    pub hits: Vec<usize>,
    /// The hit gone to last.
    pub at: usize,
}

impl DetailSearch {
    /// Where the search stands, for the status line.
    pub fn found(&self) -> String {
        format!(
            "“{}”: line {} of {} holding it (n next, N previous)",
            clean(&self.query),
            self.at + 1,
            self.hits.len()
        )
    }
}

/// How many wrapped rows each entry of a document's conversation takes at one width, counted
/// by the first frame that walks them all: later frames build only the entries in view (a
/// whale's 100,000 entries walked for every key were 47 ms a frame). Belongs to one document:
/// the screen drops it with the document.
#[derive(Debug, Default)]
pub struct EntryRows {
    width: usize,
    /// The rows from the first entry to the end of each.
    ends: Vec<usize>,
}

impl Builder {
    fn push(&mut self, partial: bool, spans: Vec<Span<'static>>) {
        let gutter = if partial {
            Span::styled(PARTIAL_MARK, self.t.partial())
        } else {
            Span::raw(" ")
        };
        let mut v = vec![gutter, Span::raw(" ")];
        v.extend(spans);
        self.emit(DetailLine {
            line: Line::from(v),
            partial,
        });
    }

    /// Keep `l`, or where a window is asked, only its wrapped rows inside it: a line outside the
    /// window is only counted (a whale's detail is hundreds of thousands of lines, and every
    /// frame goes through all of them).
    fn emit(&mut self, l: DetailLine) {
        if let Some(f) = self.find.as_mut() {
            let text: String = l.line.spans.iter().map(|s| s.content.as_ref()).collect();
            let n = if text.to_lowercase().contains(&f.needle) {
                // The row of the wrapped line that holds the text (its first where the text
                // runs over a row's end).
                let mut rows = Vec::new();
                let n = wrap_line(&l, f.width, self.t, Some(&mut rows));
                let at = rows.iter().position(|r| {
                    let row: String = r.spans.iter().map(|s| s.content.as_ref()).collect();
                    row.to_lowercase().contains(&f.needle)
                });
                f.hits.push(f.rows + at.unwrap_or(0));
                n
            } else {
                wrap_line(&l, f.width, self.t, None)
            };
            f.rows += n;
            return;
        }
        let Some(w) = self.window.as_mut() else {
            self.out.push(l);
            return;
        };
        let n = wrap_line(&l, w.width, self.t, None);
        if w.rows < w.to && w.rows + n > w.from {
            let mut rows = Vec::with_capacity(n);
            wrap_line(&l, w.width, self.t, Some(&mut rows));
            for (i, r) in rows.into_iter().enumerate() {
                if (w.from..w.to).contains(&(w.rows + i)) {
                    w.kept.push(r);
                }
            }
        }
        w.rows += n;
    }

    fn kv(&mut self, k: &str, v: String) {
        self.push(
            false,
            vec![Span::styled(format!("{k:<16}"), self.t.dim()), Span::raw(v)],
        );
    }

    /// A key and its value in the error style (`error`, `damaged`).
    fn kv_error(&mut self, k: &str, v: String) {
        let line = vec![
            Span::styled(format!("{k:<16}"), self.t.dim()),
            Span::styled(v, self.t.error()),
        ];
        self.push(false, line);
    }

    /// What is not UTF-8 in the row (`notUtf8Columns`) or its stream (`streamNotUtf8Batches`).
    fn not_utf8(&mut self, what: &Value, prefix: &str) {
        if let Some(items) = what.as_array().filter(|a| !a.is_empty()) {
            let items: Vec<String> = items.iter().map(s).collect();
            let v = format!(
                "{prefix}{} not valid UTF-8 (read with replacement characters, as the runtime reads it)",
                items.join(", ")
            );
            self.kv_error("damaged", v);
        }
    }

    fn plain(&mut self, text: String, style: Style) {
        self.push(false, vec![Span::styled(text, style)]);
    }

    fn blank(&mut self) {
        self.emit(DetailLine {
            line: Line::raw(""),
            partial: false,
        });
    }
}

/// The lines of the detail screen for `doc` (`show --json` of one submission), times relative
/// to `now_ms` (the document's clock).
pub fn lines(doc: &CompactShow, t: Theme, now_ms: i64) -> Vec<DetailLine> {
    let mut b = Builder {
        t,
        now_ms,
        out: Vec::new(),
        window: None,
        find: None,
    };
    build(&mut b, doc);
    b.out
}

/// The rows `scroll..scroll + page` of [`lines`] wrapped at `width` ([`wrapped`]), and how many
/// wrapped rows there are in all, without holding the others: a whale's detail is hundreds of
/// thousands of lines, which held whole for each frame were 80 MB. `entry_rows` is the
/// document's count of its entries' rows: filled by the first call at a width, it lets the
/// next ones build only the entries in view.
pub fn window(
    doc: &CompactShow,
    t: Theme,
    now_ms: i64,
    width: usize,
    scroll: usize,
    page: usize,
    entry_rows: &mut EntryRows,
) -> (Vec<Line<'static>>, usize) {
    let mut b = Builder {
        t,
        now_ms,
        out: Vec::new(),
        window: Some(Window {
            width,
            from: scroll,
            to: scroll.saturating_add(page),
            rows: 0,
            kept: Vec::new(),
            entry_rows: std::mem::take(entry_rows),
        }),
        find: None,
    };
    build(&mut b, doc);
    let w = b.window.expect("set above");
    *entry_rows = w.entry_rows;
    (w.kept, w.rows)
}

/// The rows of the detail at `width` (as [`window`] counts them) of the lines holding `needle`,
/// matched in the line's text as drawn, case aside: the row of each that holds it (its first
/// where the text runs over a row's end). What `/` in the detail finds.
pub fn find(doc: &CompactShow, t: Theme, now_ms: i64, width: usize, needle: &str) -> Vec<usize> {
    let mut b = Builder {
        t,
        now_ms,
        out: Vec::new(),
        window: None,
        find: Some(Find {
            width,
            needle: needle.to_lowercase(),
            rows: 0,
            hits: Vec::new(),
        }),
    };
    build(&mut b, doc);
    b.find.map(|f| f.hits).unwrap_or_default()
}

/// The conversation's entries: all of them, or in a window whose [`EntryRows`] are counted at
/// its width, only those in view (the others' rows added up).
fn entries(
    b: &mut Builder,
    following: &CompactEntries,
    batch_owner: Option<&str>,
    batch_results: &[&str],
) {
    if b.find.is_some() && following.len() >= COUNTED_IN_PARALLEL {
        find_in_entries(b, following, batch_owner, batch_results);
        return;
    }
    let Some(w) = b.window.as_mut() else {
        for i in 0..following.len() {
            entry(b, &following.get(i), batch_owner, batch_results);
        }
        return;
    };
    let base = w.rows;
    if w.entry_rows.width != w.width || w.entry_rows.ends.len() != following.len() {
        w.entry_rows = EntryRows {
            width: w.width,
            ends: entry_ends(b.t, w.width, following, batch_owner, batch_results),
        };
    }
    let ends = std::mem::take(&mut w.entry_rows.ends);
    let (from, to) = (w.from, w.to);
    // The first entry that ends below the window's top.
    let first = ends.partition_point(|e| base + e <= from);
    w.rows = base + first.checked_sub(1).map_or(0, |i| ends[i]);
    for i in first..following.len() {
        if b.window.as_ref().is_some_and(|w| w.rows >= to) {
            break;
        }
        entry(b, &following.get(i), batch_owner, batch_results);
    }
    let w = b.window.as_mut().expect("a window");
    w.rows = base + ends.last().copied().unwrap_or(0);
    w.entry_rows.ends = ends;
}

/// [`find`] in a long conversation's entries, on every core: each entry's rows and hits (from
/// its first row) found on its own, then added up in order. Each entry is parsed from its text
/// first ([`CompactEntries`]): one after the other, a whale's 170,000 took most of a second.
fn find_in_entries(
    b: &mut Builder,
    following: &CompactEntries,
    batch_owner: Option<&str>,
    batch_results: &[&str],
) {
    use rayon::prelude::*;
    let Some(f) = b.find.as_ref() else {
        return;
    };
    let (t, now_ms, width, needle) = (b.t, b.now_ms, f.width, f.needle.as_str());
    let finder = || Builder {
        t,
        now_ms,
        out: Vec::new(),
        window: None,
        find: Some(Find {
            width,
            needle: needle.to_string(),
            rows: 0,
            hits: Vec::new(),
        }),
    };
    let found: Vec<(usize, Vec<usize>)> = (0..following.len())
        .into_par_iter()
        .with_min_len(512)
        .map_init(finder, |fb, i| {
            entry(fb, &following.get(i), batch_owner, batch_results);
            let f = fb.find.as_mut().expect("a finder");
            (std::mem::take(&mut f.rows), std::mem::take(&mut f.hits))
        })
        .collect();
    let f = b.find.as_mut().expect("checked above");
    for (rows, hits) in found {
        f.hits.extend(hits.into_iter().map(|h| f.rows + h));
        f.rows += rows;
    }
}

/// From how many entries [`entry_ends`] counts on every core (below, the pool costs more than
/// it gives).
const COUNTED_IN_PARALLEL: usize = 1024;

/// [`EntryRows::ends`] of `following` at `width`: each entry's rows counted (built and wrapped,
/// nothing kept), then added up. On every core for a long conversation: an entry's rows depend
/// on it alone, and a whale's 100,000 entries counted on one thread were 46 ms of its open.
fn entry_ends(
    t: Theme,
    width: usize,
    following: &CompactEntries,
    batch_owner: Option<&str>,
    batch_results: &[&str],
) -> Vec<usize> {
    use rayon::prelude::*;
    let counter = || Builder {
        t,
        now_ms: 0,
        out: Vec::new(),
        window: Some(Window {
            width,
            from: 0,
            to: 0,
            rows: 0,
            kept: Vec::new(),
            entry_rows: EntryRows::default(),
        }),
        find: None,
    };
    let rows_of = |b: &mut Builder, i: usize| {
        let before = b.window.as_ref().map_or(0, |w| w.rows);
        entry(b, &following.get(i), batch_owner, batch_results);
        b.window.as_ref().map_or(0, |w| w.rows) - before
    };
    let counts: Vec<usize> = if following.len() < COUNTED_IN_PARALLEL {
        let mut b = counter();
        (0..following.len()).map(|i| rows_of(&mut b, i)).collect()
    } else {
        (0..following.len())
            .into_par_iter()
            .with_min_len(512)
            .map_init(counter, rows_of)
            .collect()
    };
    counts
        .into_iter()
        .scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        })
        .collect()
}

fn build(b: &mut Builder, shown: &CompactShow) {
    let (t, doc) = (b.t, &shown.doc);
    let row = &doc["submission"];
    let label = s(&doc["label"]);
    b.push(
        false,
        vec![
            Span::styled(format!("submission {} ", s(&row["id"])), t.title()),
            Span::styled(
                label.clone(),
                if doc["trailingBatch"].is_null() {
                    t.key()
                } else {
                    t.partial()
                },
            ),
        ],
    );
    verdict(b, doc);
    plan(b, &doc["plan"]);
    b.blank();
    row_fields(b, doc);
    b.blank();
    conversation(b, doc, &shown.following);
}

fn verdict(b: &mut Builder, doc: &Value) {
    if let Some(e) = doc["error"].as_str() {
        b.kv("error", clean(e));
        return;
    }
    let x = &doc["explanation"];
    b.kv(
        "classification",
        format!(
            "step {} of the decision order: {}",
            s(&x["step"]),
            s(&x["rule"])
        ),
    );
    let ids: Vec<String> = x["entryIds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(s)
        .collect();
    if !ids.is_empty() {
        b.kv("entries", ids.join(", "));
    }
    b.kv(
        "context window",
        match doc["contextWindow"].as_u64() {
            Some(0) | None => "0 (no silent-overflow check; --context-window N sets it)".into(),
            Some(n) => n.to_string(),
        },
    );
}

fn plan(b: &mut Builder, p: &Value) {
    let step = match p["step"].as_u64() {
        Some(n) => format!("step {n} ({}) of the reconciler", s(&p["name"])),
        None => format!("no reconciler step ({})", s(&p["name"])),
    };
    b.kv("next", format!("{step}: {}", s(&p["reason"])));
    for (n, w) in p["writes"].as_array().into_iter().flatten().enumerate() {
        b.plain(
            format!("  {}. {}", n + 1, s(&w["description"])),
            Style::new(),
        );
    }
    let a = &p["rowAfter"];
    if !a.is_null() {
        let outcome = a["settlementOutcome"].as_str().map_or(String::new(), |o| {
            format!(", settlement outcome {}", clean(o))
        });
        let attempt = match a["attemptId"].as_str() {
            Some("same") => "kept",
            Some("new") => "new",
            Some("cleared") => "cleared",
            _ => "?",
        };
        b.kv(
            "row after",
            format!(
                "status {}, attempts {}, attempt id {attempt}, error {}{outcome}",
                s(&a["status"]),
                s(&a["attemptCount"]),
                a["error"]
                    .as_str()
                    .map_or("none".into(), |e| format!("{:?}", clean(e))),
            ),
        );
    }
    let r = &p["resume"];
    if !r.is_null() {
        b.kv(
            "resume",
            format!(
                "what the {} will do",
                if r["after"] == "replacement" {
                    "replacement attempt"
                } else {
                    "next claim"
                }
            ),
        );
        for (n, a) in r["actions"].as_array().into_iter().flatten().enumerate() {
            b.plain(
                format!("  {}. {}", n + 1, s(&a["description"])),
                Style::new(),
            );
        }
        b.plain(
            format!(
                "  then: {} (classified {} after its repairs)",
                s(&r["end"]["description"]),
                s(&r["classification"])
            ),
            Style::new(),
        );
    }
}

fn row_fields(b: &mut Builder, doc: &Value) {
    let r = &doc["submission"];
    b.kv("sequence", s(&r["sequence"]));
    b.kv(
        "kind",
        format!("{} (agent {})", s(&r["kind"]), s(&r["instance"]["agent"])),
    );
    b.kv("instance", s(&r["instance"]["instanceId"]));
    b.kv("status", s(&r["status"]));
    b.kv(
        "attempts",
        format!(
            "{}/{}  attempt {}",
            s(&r["attempts"]),
            s(&r["maxAttempts"]),
            s(&r["attemptId"])
        ),
    );
    let lease = r["leaseExpiresAt"].as_i64().unwrap_or(0);
    b.kv(
        "lease",
        format!(
            "{}{}  owner {}",
            super::list::lease_text(lease, r["leaseExpired"] == true, b.now_ms),
            if lease > 0 {
                format!(" ({})", turnscope_core::journal::time::iso_from_ms(lease))
            } else {
                String::new()
            },
            s(&r["owner"])
        ),
    );
    let time = |k: &str| match r[k].as_i64() {
        Some(ms) if ms > 0 => turnscope_core::journal::time::iso_from_ms(ms),
        _ => "no".into(),
    };
    b.kv("input applied", time("inputAppliedAt"));
    if r["timeoutAt"].as_i64().is_some_and(|t| t > 0) {
        b.kv("timeout at", time("timeoutAt"));
    }
    if !r["abortRequestedAt"].is_null() {
        b.kv("abort requested", time("abortRequestedAt"));
    }
    if !r["joinedInto"].is_null() {
        b.kv("joined into", s(&r["joinedInto"]));
    }
    let joined: Vec<String> = doc["joinedDeliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(s)
        .collect();
    if !joined.is_empty() {
        b.kv("joined here", joined.join(", "));
    }
    if !r["settledAt"].is_null() {
        b.kv("settled at", time("settledAt"));
    }
    if !r["settlementOutcome"].is_null() {
        b.kv(
            "settlement",
            format!("outcome {}", s(&r["settlementOutcome"])),
        );
    }
    if r["status"] == "running" && r["attemptsExhausted"] == true {
        b.kv(
            "note",
            "every attempt of its budget is spent (attempt_count >= max_attempts)".into(),
        );
    }
    if r["status"] == "running" && r["deadlinePassed"] == true {
        b.kv("note", "its deadline (timeout_at) has passed".into());
    }
    b.not_utf8(&r["notUtf8Columns"], "");
    if !r["error"].is_null() {
        b.kv_error("error", s(&r["error"]));
    }
    b.kv(
        "stream",
        format!(
            "{}  {} batch(es)",
            s(&doc["streamPath"]),
            s(&doc["streamBatches"])
        ),
    );
    b.not_utf8(&doc["streamNotUtf8Batches"], "batch(es) ");
    for (k, v) in super::cost::detail_lines(doc) {
        b.kv(&k, v);
    }
}

/// A call's outcome as the document has it.
fn outcome_text(o: &Value) -> String {
    let err = if o["isError"] == true { " (error)" } else { "" };
    match o["state"].as_str() {
        Some("committed") => format!("committed {}{err}", s(&o["resultEntryId"])),
        Some("recorded_uncommitted") => {
            format!(
                "recorded, not committed (record {}){err}",
                s(&o["recordId"])
            )
        }
        _ => "no outcome".into(),
    }
}

/// One entry of the conversation after the input: its lines depend on it and on the trailing
/// batch only (never on the clock), so [`EntryRows`] can count them once per width.
fn entry(b: &mut Builder, e: &Value, batch_owner: Option<&str>, batch_results: &[&str]) {
    let t = b.t;
    let id = s(&e["id"]);
    let own = e["id"].as_str();
    match e["role"].as_str().unwrap_or("") {
        "user" => {
            let other = if e["otherSubmission"] == true {
                format!("  (submission {})", s(&e["submissionId"]))
            } else {
                String::new()
            };
            b.push(
                false,
                vec![
                    Span::styled("user       ", t.key()),
                    Span::styled(format!("{id}{other}  "), t.dim()),
                    Span::raw(cut(&s(&e["text"]), 60)),
                ],
            );
        }
        "signal" => b.push(
            false,
            vec![
                Span::styled("signal     ", t.key()),
                Span::styled(format!("{id}  "), t.dim()),
                Span::raw(s(&e["signalType"])),
            ],
        ),
        "assistant" => {
            let partial = own.is_some() && own == batch_owner;
            let err = e["errorMessage"]
                .as_str()
                .map_or(String::new(), |m| format!(": {}", cut(&clean(m), 60)));
            b.push(
                partial,
                vec![
                    Span::styled("assistant  ", t.key()),
                    Span::styled(format!("{id}  "), t.dim()),
                    Span::styled(
                        format!("{}{err}", s(&e["stopReason"])),
                        if err.is_empty() {
                            Style::new()
                        } else {
                            t.error()
                        },
                    ),
                    Span::raw(format!("  {}", cut(&s(&e["text"]), 60))),
                    Span::styled(
                        if partial {
                            "  [trailing uncommitted batch]"
                        } else {
                            ""
                        },
                        t.partial(),
                    ),
                ],
            );
            for c in e["toolCalls"].as_array().into_iter().flatten() {
                let o = &c["outcome"];
                let style = match (o["state"].as_str(), o["isError"] == true) {
                    (Some("committed"), false) => t.ok(),
                    (Some(_), true) => t.error(),
                    (Some("recorded_uncommitted"), _) => t.warn(),
                    _ => t.partial(),
                };
                b.push(
                    partial,
                    vec![
                        Span::styled("  call     ", t.dim()),
                        Span::raw(format!("{} {}", s(&c["name"]), s(&c["id"]))),
                        Span::styled(format!("  → {}", outcome_text(o)), style),
                    ],
                );
                // Its step memos (a durable tool's completed steps, replayed on a re-run).
                for m in c["steps"].as_array().into_iter().flatten() {
                    b.push(
                        partial,
                        vec![
                            Span::styled("    step   ", t.dim()),
                            Span::raw(s(&m["stepName"])),
                            Span::styled(
                                format!(
                                    "  memo {} in batch {} (replayed on a re-run)",
                                    s(&m["recordId"]),
                                    m["seq"]
                                ),
                                t.dim(),
                            ),
                        ],
                    );
                }
            }
        }
        "toolResult" => {
            let partial = own.is_some_and(|id| batch_results.contains(&id));
            b.push(
                partial,
                vec![
                    Span::styled("result     ", t.key()),
                    Span::styled(format!("{id}  "), t.dim()),
                    Span::raw(format!("{} {}", s(&e["toolName"]), s(&e["toolCallId"]))),
                    Span::styled(
                        format!(
                            "{}{}",
                            if e["isError"] == true { "  error" } else { "" },
                            if e["terminate"] == true {
                                "  terminate"
                            } else {
                                ""
                            }
                        ),
                        t.error(),
                    ),
                ],
            );
        }
        "compaction" => b.push(
            false,
            vec![
                Span::styled("compaction ", t.key()),
                Span::styled(format!("{id}  "), t.dim()),
                Span::raw(format!("first kept {}", s(&e["firstKeptEntryId"]))),
            ],
        ),
        other => b.plain(format!("{} {id}", clean(other)), t.dim()),
    }
}

fn conversation(b: &mut Builder, doc: &Value, following: &CompactEntries) {
    let t = b.t;
    let input = s(&doc["inputEntryId"]);
    if doc["inputEntryFound"] != true {
        b.plain(
            format!("conversation: the input entry {input} is not in this session's conversation"),
            t.warn(),
        );
    }
    let batch = &doc["trailingBatch"];
    let batch_owner = batch["assistantEntryId"].as_str();
    let batch_results: Vec<&str> = batch["resultEntryIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if doc["inputEntryFound"] == true {
        b.plain(
            format!(
                "conversation after the input {input} ({} committed entr{})",
                following.len(),
                if following.len() == 1 { "y" } else { "ies" }
            ),
            t.title(),
        );
    }
    entries(b, following, batch_owner, &batch_results);
    for m in doc["inProgress"].as_array().into_iter().flatten() {
        let text: String = m["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|bl| bl["text"].as_str())
            .collect();
        let calls: Vec<String> = m["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|bl| bl["type"] == "tool_call")
            .map(|bl| format!("{} {}", s(&bl["name"]), s(&bl["toolCallId"])))
            .collect();
        b.push(
            false,
            vec![
                Span::styled("in progress ", t.warn()),
                Span::styled(
                    format!(
                        "message {}{}  submission {}  {} block(s)  ",
                        s(&m["messageId"]),
                        if m["atLeaf"] == true {
                            " at the leaf"
                        } else {
                            ""
                        },
                        s(&m["submissionId"]),
                        m["blocks"].as_array().map_or(0, Vec::len)
                    ),
                    t.dim(),
                ),
                Span::raw(cut(&clean(&text), 60)),
                Span::styled(
                    if calls.is_empty() {
                        String::new()
                    } else {
                        format!("  calls {}", calls.join(", "))
                    },
                    t.dim(),
                ),
            ],
        );
        b.plain(
            "            not an entry: the classifier does not see it".into(),
            t.dim(),
        );
    }
    for o in doc["uncommittedToolOutcomes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        b.push(
            false,
            vec![
                Span::styled("recorded, not committed: ", t.warn()),
                Span::raw(format!(
                    "outcome of {} (record {}){}",
                    s(&o["toolCallId"]),
                    s(&o["recordId"]),
                    if o["isError"] == true { " error" } else { "" }
                )),
            ],
        );
    }
    if let Some(owner) = batch_owner {
        let calls: Vec<String> = batch["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} ({})", s(&c["id"]), s(&c["outcome"]["state"])))
            .collect();
        b.push(
            true,
            vec![Span::styled(
                format!(
                    "TRAILING UNCOMMITTED BATCH: assistant {}{}: {}",
                    clean(owner),
                    if batch["atLeaf"] == true {
                        " at the leaf"
                    } else {
                        ""
                    },
                    calls.join(", ")
                ),
                t.partial(),
            )],
        );
    }
}

/// `lines` cut to rows of `width` cells, styles kept; a row continuing a highlighted line keeps
/// its gutter mark, so the whole batch stays marked however narrow the screen.
#[cfg(test)]
fn wrapped(lines: &[DetailLine], width: usize, t: Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for l in lines {
        wrap_line(l, width, t, Some(&mut out));
    }
    out
}

/// How many rows [`wrapped`] cuts `l` into, the rows pushed to `out` where one is given: one
/// walk for both, so a count cannot disagree with the rows it counts.
fn wrap_line(
    l: &DetailLine,
    width: usize,
    t: Theme,
    mut out: Option<&mut Vec<Line<'static>>>,
) -> usize {
    let width = width.max(8);
    let mut rows = 0;
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in &l.line.spans {
        let mut rest: &str = span.content.as_ref();
        while !rest.is_empty() {
            let room = width - used;
            // The longest prefix of `rest` that fits in `room` cells.
            let mut cut = 0;
            let mut w = 0;
            for (i, c) in rest.char_indices() {
                let cw = crate::text::char_width(c);
                if w + cw > room {
                    break;
                }
                w += cw;
                cut = i + c.len_utf8();
            }
            if cut == 0 && used == 2 {
                // Not even one character fits on a fresh row: give up on this span.
                break;
            }
            if cut > 0 {
                if out.is_some() {
                    row.push(Span::styled(rest[..cut].to_string(), span.style));
                }
                used += w;
                rest = &rest[cut..];
            }
            if !rest.is_empty() {
                rows += 1;
                if let Some(out) = out.as_deref_mut() {
                    out.push(Line::from(std::mem::take(&mut row)));
                    let gutter = if l.partial {
                        Span::styled(PARTIAL_MARK, t.partial())
                    } else {
                        Span::raw(" ")
                    };
                    row = vec![gutter, Span::raw(" ")];
                }
                used = 2;
            }
        }
    }
    if let Some(out) = out {
        out.push(Line::from(row));
    }
    rows + 1
}

/// Draw the wrapped `rows` from `scroll` into `area`.
pub fn draw(f: &mut Frame, rows: &[Line<'static>], scroll: usize, area: Rect) {
    let shown: Vec<Line<'static>> = rows
        .iter()
        .skip(scroll)
        .take(area.height as usize)
        .cloned()
        .collect();
    f.render_widget(Paragraph::new(shown), area);
}

#[cfg(test)]
#[path = "detail_tests.rs"]
mod tests;
