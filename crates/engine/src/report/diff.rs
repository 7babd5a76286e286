//! `turnscope diff A B`: two states of one submission (an export taken before a repair and the
//! live database after, two exports, two submissions), each read whole and judged by the same
//! classifier and planner, and what differs: entries by id, the session's leaf, the
//! submission row's and turn journal's columns, the verdict and the plan.

use serde_json::{json, Value};

use super::{plan_json, SubmissionReport};
use turnscope_core::journal::entry::{Entry, EntryBody, Role};
use turnscope_core::text::sanitize;

/// The schema of `diff --json`.
pub const DIFF_SCHEMA: &str = "turnscope.diff/1";

/// One side: where it was read, and the submission inspected there (the full read).
pub struct Side {
    /// The export file, or the database's location.
    pub source: String,
    pub report: SubmissionReport,
}

/// How an entry differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    Changed,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }
    /// The sign `diff` prints before the entry.
    pub fn sign(self) -> char {
        match self {
            Change::Added => '+',
            Change::Removed => '-',
            Change::Changed => '~',
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryChange {
    pub change: Change,
    pub id: String,
    /// The entry's position on its side (B's, A's for a removed one).
    pub position: i64,
    /// Kind and a short terminal-safe text: B's (A's for a removed one).
    pub preview: String,
    /// A's preview, for a changed entry whose preview changed.
    pub was: Option<String>,
}

/// A column (of the submission row or the turn journal) that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub table: &'static str,
    pub column: &'static str,
    pub a: Value,
    pub b: Value,
}

pub struct SubmissionDiff {
    pub entries: Vec<EntryChange>,
    pub leaf: Option<(Option<String>, Option<String>)>,
    pub fields: Vec<FieldChange>,
    /// Whether A and B are rows of different submissions.
    pub other_submission: bool,
}

impl SubmissionDiff {
    /// Nothing differs in the rows (so the verdict and plan, computed from them at the same
    /// instant, are the same too).
    pub fn is_equal(&self) -> bool {
        self.entries.is_empty()
            && self.leaf.is_none()
            && self.fields.is_empty()
            && !self.other_submission
    }
}

/// What differs between `a` and `b`.
pub fn diff(a: &Side, b: &Side) -> SubmissionDiff {
    let sa = a.report.bundle.session.as_ref();
    let sb = b.report.bundle.session.as_ref();
    let ea: &[Entry] = sa.map_or(&[][..], |s| &s.entries[..]);
    let eb: &[Entry] = sb.map_or(&[][..], |s| &s.entries[..]);
    let (ma, mb) = (by_id(ea), by_id(eb));
    let mut entries = Vec::new();
    for e in eb {
        match ma.get(e.id.as_str()) {
            None => entries.push(EntryChange {
                change: Change::Added,
                id: e.id.to_string(),
                position: e.position,
                preview: preview(e),
                was: None,
            }),
            Some(old) if old.raw != e.raw || old.position != e.position => {
                let (p, w) = (preview(e), preview(old));
                entries.push(EntryChange {
                    change: Change::Changed,
                    id: e.id.to_string(),
                    position: e.position,
                    was: (w != p).then_some(w),
                    preview: p,
                })
            }
            Some(_) => {}
        }
    }
    for e in ea {
        if !mb.contains_key(e.id.as_str()) {
            entries.push(EntryChange {
                change: Change::Removed,
                id: e.id.to_string(),
                position: e.position,
                preview: preview(e),
                was: None,
            });
        }
    }
    // History order: by position (a removed entry at its old place).
    entries.sort_by_key(|c| (c.position, c.change != Change::Removed));
    let (la, lb) = (
        sa.and_then(|s| s.leaf_id.clone()),
        sb.and_then(|s| s.leaf_id.clone()),
    );
    let leaf = (la != lb).then_some((la, lb));
    let ra = row_columns(&a.report);
    let rb = row_columns(&b.report);
    let fields = ra
        .into_iter()
        .zip(rb)
        .filter(|(x, y)| x.2 != y.2)
        .map(|((table, column, a), (_, _, b))| FieldChange {
            table,
            column,
            a,
            b,
        })
        .collect();
    SubmissionDiff {
        entries,
        leaf,
        fields,
        other_submission: a.report.row().submission_id != b.report.row().submission_id,
    }
}

fn by_id(es: &[Entry]) -> std::collections::HashMap<&str, &Entry> {
    es.iter().map(|e| (e.id.as_str(), e)).collect()
}

/// Every column of the submission row and of its turn journal, in table order (the same list
/// on both sides, so they zip).
fn row_columns(r: &SubmissionReport) -> Vec<(&'static str, &'static str, Value)> {
    let s = r.row();
    let sub = "flue_agent_submissions";
    let mut v: Vec<(&'static str, &'static str, Value)> = vec![
        (sub, "sequence", json!(s.sequence)),
        (sub, "submission_id", json!(s.submission_id)),
        (sub, "session_key", json!(s.session_key)),
        (sub, "kind", json!(s.kind)),
        (sub, "payload", json!(s.payload)),
        (sub, "status", json!(s.status.as_str())),
        (sub, "accepted_at", json!(s.accepted_at)),
        (sub, "attempt_id", json!(s.attempt_id)),
        (sub, "input_applied_at", json!(s.input_applied_at)),
        (sub, "recovery_requested_at", json!(s.recovery_requested_at)),
        (sub, "started_at", json!(s.started_at)),
        (sub, "settled_at", json!(s.settled_at)),
        (sub, "error", json!(s.error)),
        (sub, "attempt_count", json!(s.attempt_count)),
        (sub, "max_retry", json!(s.max_retry)),
        (sub, "timeout_at", json!(s.timeout_at)),
        (sub, "owner_id", json!(s.owner_id)),
        (sub, "lease_expires_at", json!(s.lease_expires_at)),
        (sub, "terminal_event_key", json!(s.terminal_key)),
        (sub, "terminal_event_json", json!(s.terminal_event)),
        (sub, "terminal_event_offset", json!(s.terminal_offset)),
    ];
    let j = r.bundle.journal.as_ref();
    let tj = "flue_agent_turn_journals";
    let col = |f: &dyn Fn(&turnscope_core::journal::submission_rows::JournalRow) -> Value| {
        j.map_or(Value::Null, f)
    };
    v.extend([
        (tj, "(row)", json!(j.is_some())),
        (tj, "attempt_id", col(&|j| json!(j.attempt_id))),
        (tj, "operation_id", col(&|j| json!(j.operation_id))),
        (tj, "turn_id", col(&|j| json!(j.turn_id))),
        (tj, "phase", col(&|j| json!(j.phase.as_str()))),
        (tj, "revision", col(&|j| json!(j.revision))),
        (tj, "created_at", col(&|j| json!(j.created_at))),
        (tj, "updated_at", col(&|j| json!(j.updated_at))),
        (
            tj,
            "checkpoint_leaf_id",
            col(&|j| json!(j.checkpoint_leaf_id)),
        ),
        (
            tj,
            "tool_request_json",
            col(&|j| json!(j.tool_request_json)),
        ),
        (tj, "stream_key", col(&|j| json!(j.stream_key))),
        (
            tj,
            "stream_consumed_at",
            col(&|j| json!(j.stream_consumed_at)),
        ),
        (tj, "committed", col(&|j| json!(j.committed))),
        (
            tj,
            "committed_leaf_id",
            col(&|j| json!(j.committed_leaf_id)),
        ),
    ]);
    v
}

/// An entry in one line: its kind and a short terminal-safe text (tool names for calls and
/// results, the start of a message's text).
pub fn preview(e: &Entry) -> String {
    let kind = e.kind_label();
    let detail = match &e.body {
        EntryBody::Message(m) => match m.role {
            Role::Assistant => {
                let calls = m.tool_calls();
                if calls.is_empty() {
                    format!("{} {}", m.stop_reason().unwrap_or("-"), cut(&m.text(), 48))
                } else {
                    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                    format!("{} {}", m.stop_reason().unwrap_or("-"), names.join(", "))
                }
            }
            Role::ToolResult => format!(
                "{}{}",
                m.tool_name().unwrap_or("?"),
                if m.is_error() { " (error)" } else { "" }
            ),
            _ => cut(&m.text(), 60),
        },
        _ => String::new(),
    };
    let d = sanitize(detail.trim());
    if d.is_empty() {
        kind
    } else {
        format!("{kind}: {d}")
    }
}

fn cut(s: &str, n: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= n {
        one_line
    } else {
        let mut t: String = one_line.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn side_json(s: &Side) -> Value {
    json!({
        "source": s.source,
        "submissionId": s.report.row().submission_id,
        "status": s.report.row().status.as_str(),
        "leafId": s.report.bundle.session.as_ref().and_then(|x| x.leaf_id.clone()),
        "entries": s.report.bundle.session.as_ref().map_or(0, |x| x.entries.len()),
        "verdict": s.report.verdict(),
        "classification": super::classification_json(s.report.classification()),
        "plan": plan_json(&s.report.plan),
    })
}

/// The `turnscope.diff/1` document.
pub fn to_json(a: &Side, b: &Side, d: &SubmissionDiff) -> Value {
    json!({
        "schema": DIFF_SCHEMA,
        "format": super::JOURNAL_FORMAT,
        "equal": d.is_equal(),
        "a": side_json(a),
        "b": side_json(b),
        "entries": d.entries.iter().map(|c| json!({
            "change": c.change.as_str(),
            "id": c.id,
            "position": c.position,
            "preview": c.preview,
            "was": c.was,
        })).collect::<Vec<_>>(),
        "leaf": d.leaf.as_ref().map(|(a, b)| json!({"a": a, "b": b})),
        "rows": d.fields.iter().map(|f| json!({
            "table": f.table, "column": f.column, "a": f.a, "b": f.b,
        })).collect::<Vec<_>>(),
        "verdictChanged": a.report.verdict() != b.report.verdict(),
    })
}

/// The human form, terminal-safe.
pub fn to_text(a: &Side, b: &Side, d: &SubmissionDiff) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let id = |s: &Side| sanitize(&s.report.row().submission_id);
    let _ = writeln!(o, "a: {} in {}", id(a), sanitize(&a.source));
    let _ = writeln!(o, "b: {} in {}", id(b), sanitize(&b.source));
    if d.is_equal() {
        let _ = writeln!(
            o,
            "no difference: the same rows (verdict {})",
            sanitize(&a.report.verdict())
        );
        return o;
    }
    if d.other_submission {
        let _ = writeln!(o, "note: a and b are different submissions");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "entries ({}):", d.entries.len());
    if d.entries.is_empty() {
        let _ = writeln!(o, "  none changed");
    }
    for c in &d.entries {
        let _ = writeln!(
            o,
            "  {} {} #{} {}",
            c.change.sign(),
            sanitize(&c.id),
            c.position,
            c.preview
        );
        if let Some(w) = &c.was {
            let _ = writeln!(o, "      was {w}");
        }
    }
    if let Some((la, lb)) = &d.leaf {
        let show = |l: &Option<String>| l.as_deref().map_or("none".to_string(), sanitize);
        let _ = writeln!(o, "session leaf: {} → {}", show(la), show(lb));
    }
    if !d.fields.is_empty() {
        let _ = writeln!(o, "rows:");
        for f in &d.fields {
            let short = |v: &Value| {
                let t = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                sanitize(&cut(&t, 60))
            };
            let _ = writeln!(
                o,
                "  {}.{}: {} → {}",
                if f.table == "flue_agent_submissions" {
                    "submission"
                } else {
                    "journal"
                },
                f.column,
                short(&f.a),
                short(&f.b)
            );
        }
    }
    let _ = writeln!(o);
    for (name, s) in [("a", a), ("b", b)] {
        let p = &s.report.plan;
        let _ = writeln!(
            o,
            "{name}: verdict {}; plan: {}: {}",
            sanitize(&s.report.verdict()),
            p.rule_label(),
            sanitize(&p.reason),
        );
    }
    o
}
