//! Write actions in the TUI (`--write` mode only): what the worker plans and applies, and the
//! text of the popups that preview and report them.
//!
//! The flow: a key asks the worker to *plan* (it re-reads each submission at the current time
//! and calls the same planners as the CLI), the app shows one confirm popup with the exact row
//! changes (No selected), and on Yes the worker *applies* each plan in its own fenced transaction,
//! re-reads the submission and reports before → now. Nothing here draws or blocks the UI thread.

use crate::popup_line::{PopupLine, Tone};
use crate::worker_error::WorkerError;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::recovery::reconciler::Disposition;
use turnscope_engine::actions::{ActionKind, ActionPlan, Refusal};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::Applied;

use Tone::{Heading, Next, Normal, Refused, Warning};

/// A submission's state in the operator's words (before or after an action).
#[derive(Debug, Clone, PartialEq)]
pub struct StateSummary {
    pub verdict: String,
    /// `rule 9`, or the disposition (`failed`, `live`, …) when no rule applies.
    pub rule: String,
    /// The plan's one-line reason.
    pub reason: String,
    pub status: SubmissionStatus,
    pub instance: String,
    pub entries: Option<usize>,
    pub leaf: Option<String>,
    /// Journal `(phase, revision)`.
    pub journal: Option<(String, i64)>,
    /// The runtime's plan: `rule N → result: reason`, then its ordered writes.
    pub plan_head: String,
    pub writes: Vec<String>,
    /// Whether the runtime's reconciler still has a rule to apply.
    pub has_rule: bool,
}

impl StateSummary {
    pub fn of(r: &SubmissionReport) -> StateSummary {
        let row = r.row();
        let rule = r.plan.rule_label();
        let plan_head = match (r.plan.rule, r.plan.result) {
            (Some(n), Some(res)) => format!("rule {n} → {res}: {}", r.plan.reason),
            _ => format!("{}: {}", r.plan.disposition.label(), r.plan.reason),
        };
        StateSummary {
            verdict: r.verdict(),
            rule,
            reason: r.plan.reason.clone(),
            status: row.status.clone(),
            instance: row.instance_id().unwrap_or_default(),
            entries: r.bundle.session.as_ref().map(|s| s.entries.len()),
            leaf: r.bundle.session.as_ref().and_then(|s| s.leaf_id.clone()),
            journal: r
                .bundle
                .journal
                .as_ref()
                .map(|j| (j.phase.to_string(), j.revision)),
            plan_head,
            writes: r.plan.writes.iter().map(|w| w.describe()).collect(),
            has_rule: r.plan.rule.is_some() && r.plan.disposition == Disposition::Reconcile,
        }
    }

    /// `terminal_error · rule 9`
    pub fn short(&self) -> String {
        format!("{} · {}", self.verdict, self.rule)
    }
}

/// One submission of a planned action: the plan, or why not.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanItem {
    pub submission_id: String,
    /// The state the plan was made from (`None` when the submission could not be read).
    pub before: Option<StateSummary>,
    pub result: Result<ActionPlan, Refusal>,
}

/// What the worker planned for one key press.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub kind: ActionKind,
    pub reason: Option<String>,
    pub items: Vec<PlanItem>,
    /// When a runtime is live (a live lease in the database): the warning lines shown first.
    pub live_runtime: Vec<String>,
    /// Marked submissions of the plan the list does not show (another filter, the `/` query):
    /// the preview names them (set by the app, which knows what the list shows).
    pub hidden: Vec<String>,
}

impl Planned {
    pub fn applicable(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.result.as_ref().is_ok_and(|p| !p.is_noop()))
            .count()
    }
}

/// What happened to one submission when the plans were applied.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeResult {
    Applied {
        applied: Applied,
        /// The submission re-read after the commit.
        after: Option<Box<StateSummary>>,
    },
    /// The state changed since the preview: nothing written.
    Fenced(Vec<String>),
    /// Refused when planned (carried through so the summary lists it).
    Refused(Refusal),
    /// The plan had nothing to write.
    Noop(String),
    Error(WorkerError),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub submission_id: String,
    pub before: Option<StateSummary>,
    pub result: OutcomeResult,
}

/// What changed between two reads of a submission, in the operator's words.
pub fn what_changed(before: &StateSummary, after: &StateSummary) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (before.entries, after.entries) {
        if b != a {
            out.push(format!(
                "session: {a} → {}, leaf {} → {}",
                turnscope_core::text::plural(b as u64, "entry", "entries"),
                before.leaf.as_deref().unwrap_or("-"),
                after.leaf.as_deref().unwrap_or("-")
            ));
        }
    }
    if before.journal != after.journal {
        let j = |j: &Option<(String, i64)>| {
            j.as_ref()
                .map_or("none".to_string(), |(p, r)| format!("{p} (revision {r})"))
        };
        out.push(format!(
            "journal: {} → {}",
            j(&before.journal),
            j(&after.journal)
        ));
    }
    if before.status != after.status {
        out.push(format!("status: {} → {}", before.status, after.status));
    }
    if before.verdict != after.verdict || before.rule != after.rule {
        out.push(format!("verdict: {} → {}", before.short(), after.short()));
    }
    if out.is_empty() {
        out.push("no visible change".into());
    }
    out
}

pub use turnscope_core::journal::submission_rows::short_id;

/// `Repair`, `Fail`, … for titles.
pub fn title_word(kind: ActionKind) -> &'static str {
    match kind {
        ActionKind::Repair => "Repair",
        ActionKind::Requeue => "Requeue",
        ActionKind::Fail => "Fail",
        ActionKind::Step => "Step",
        ActionKind::Reconcile => "Reconcile",
        ActionKind::Extend => "Extend",
    }
}

/// A next pass that fails the submission anyway, said first: the warning and the way out.
fn fails_anyway_lines(plan: &ActionPlan, indent: &str) -> Vec<PopupLine> {
    let mut v = Vec::new();
    if let Some(w) = plan.prediction.warning() {
        v.push(line(Warning, format!("{indent}warning: {w}")));
        if let Some(way) = &plan.prediction.way_out {
            v.push(line(Warning, format!("{indent}way out: {way}")));
        }
    }
    v
}

fn who(item: &PlanItem) -> String {
    match &item.before {
        Some(b) if !b.instance.is_empty() => {
            format!("{} ({})", short_id(&item.submission_id), b.instance)
        }
        _ => short_id(&item.submission_id),
    }
}

/// The runtime's plan with the next write marked (`▶`).
pub fn runtime_plan_lines(b: &StateSummary) -> Vec<PopupLine> {
    let mut v = vec![line(Heading, format!("runtime plan: {}", b.plan_head))];
    for (i, w) in b.writes.iter().enumerate() {
        let (tone, mark) = if i == 0 { (Next, "▶") } else { (Normal, " ") };
        v.push(line(tone, format!("  {mark} {}. {w}", i + 1)));
    }
    v
}

fn preview_lines(plan: &ActionPlan, indent: &str) -> Vec<PopupLine> {
    plan.changes
        .iter()
        .flat_map(|c| c.preview_parts())
        .map(|(part, l)| line(part.into(), format!("{indent}{l}")))
        .collect()
}

fn line(tone: Tone, text: impl Into<String>) -> PopupLine {
    PopupLine::new(tone, text)
}

fn plain(text: impl Into<String>) -> PopupLine {
    PopupLine::new(Normal, text)
}

fn nothing_written() -> PopupLine {
    line(Warning, "nothing written.")
}

/// The confirm popup for one planned submission: (title, lines).
pub fn confirm_single(
    kind: ActionKind,
    item: &PlanItem,
    plan: &ActionPlan,
) -> (String, Vec<PopupLine>) {
    let title = format!("{} {}?", title_word(kind), who(item));
    let mut lines = fails_anyway_lines(plan, "");
    if !lines.is_empty() {
        lines.push(PopupLine::blank());
    }
    if kind == ActionKind::Step {
        if let Some(b) = &item.before {
            lines.extend(runtime_plan_lines(b));
            lines.push(PopupLine::blank());
        }
    }
    lines.push(plain(format!("{}: {}", kind.as_str(), plan.summary)));
    if let Some(b) = &item.before {
        lines.push(plain(format!("now: {} · {}", b.short(), b.reason)));
    }
    if let Some(r) = &plan.reason {
        lines.push(plain(format!("reason: {r}")));
    }
    lines.push(PopupLine::blank());
    lines.push(line(
        Heading,
        format!(
            "writes, in one fenced transaction ({} row change{}):",
            plan.changes.len(),
            if plan.changes.len() == 1 { "" } else { "s" }
        ),
    ));
    lines.extend(preview_lines(plan, "  "));
    lines.push(PopupLine::blank());
    lines.push(line(
        Heading,
        format!("prediction: {}", plan.prediction.line()),
    ));
    (title, lines)
}

/// The popup of a single refusal or no-op: (title, lines).
pub fn refused_single(kind: ActionKind, item: &PlanItem) -> (String, Vec<PopupLine>) {
    match &item.result {
        Err(r) => (
            format!("{} refused: {}", title_word(kind), who(item)),
            vec![
                line(Refused, format!("refused: {}", r.reason)),
                line(Warning, format!("instead: {}", r.instead)),
                PopupLine::blank(),
                nothing_written(),
            ],
        ),
        Ok(plan) => (
            format!("{}: nothing to write for {}", title_word(kind), who(item)),
            vec![
                plain(plan.summary.clone()),
                line(Heading, format!("prediction: {}", plan.prediction.line())),
                PopupLine::blank(),
                nothing_written(),
            ],
        ),
    }
}

/// The preview of a bulk action: every submission, planned or refused.
pub fn confirm_bulk(p: &Planned) -> (String, Vec<PopupLine>) {
    let n = p.items.len();
    let ok = p.applicable();
    let title = format!("{} {n} marked submissions?", title_word(p.kind));
    let hidden = if p.hidden.is_empty() {
        String::new()
    } else {
        format!(" · {} hidden by the filter", p.hidden.len())
    };
    let mut lines = vec![plain(format!(
        "{ok} planned · {} refused or nothing to do{hidden} · each applies in its own fenced transaction",
        n - ok
    ))];
    if let Some(r) = &p.reason {
        lines.push(plain(format!("reason: {r}")));
    }
    for item in &p.items {
        lines.push(PopupLine::blank());
        let mut state = item.before.as_ref().map_or(String::new(), |b| b.short());
        if p.hidden.contains(&item.submission_id) {
            state.push_str(" · hidden by the filter");
        }
        match &item.result {
            Ok(plan) if !plan.is_noop() => {
                lines.push(line(Tone::Applied, format!("✓ {} · {state}", who(item))));
                lines.extend(fails_anyway_lines(plan, "  "));
                lines.push(plain(format!("  {}", plan.summary)));
                lines.extend(preview_lines(plan, "  "));
                lines.push(line(
                    Heading,
                    format!("  prediction: {}", plan.prediction.line()),
                ));
            }
            Ok(plan) => {
                lines.push(plain(format!(
                    "– {} · {state} · nothing to write",
                    who(item)
                )));
                lines.push(plain(format!("  {}", plan.summary)));
            }
            Err(r) => {
                lines.push(line(
                    Refused,
                    format!("✗ {} · {state} · refused", who(item)),
                ));
                lines.push(plain(format!("  {}", r.reason)));
                lines.push(line(Warning, format!("  instead: {}", r.instead)));
            }
        }
    }
    (title, lines)
}

fn applied_line(a: &Applied) -> String {
    format!(
        "applied: {} written · write lock held {:.2} ms · audit #{}",
        turnscope_core::text::plural(a.rows_written as u64, "row", "rows"),
        a.lock_held.as_secs_f64() * 1000.0,
        a.audit_id
    )
}

fn audit_note() -> PopupLine {
    plain("recorded in the audit trail (a shows it)")
}

/// The result popup of a single submission: (title, lines, offers the next step).
pub fn result_single(kind: ActionKind, o: &Outcome) -> (String, Vec<PopupLine>, bool) {
    let id = short_id(&o.submission_id);
    match &o.result {
        OutcomeResult::Applied { applied, after } => {
            let mut lines = vec![line(Tone::Applied, applied_line(applied))];
            let mut next = false;
            if let (Some(b), Some(a)) = (&o.before, after) {
                lines.push(line(
                    Heading,
                    format!("before → now: {} → {}", b.short(), a.short()),
                ));
                lines.push(plain(format!("now: {}", a.reason)));
                if kind == ActionKind::Step {
                    lines.push(PopupLine::blank());
                    lines.push(line(Heading, "what changed:"));
                    lines.extend(
                        what_changed(b, a)
                            .into_iter()
                            .map(|l| plain(format!("  {l}"))),
                    );
                    lines.push(PopupLine::blank());
                    match a.writes.first() {
                        Some(w) if a.has_rule && a.status == SubmissionStatus::Running => {
                            lines.push(line(Next, format!("next write: {w}")));
                            lines.push(plain(
                                "⏎/A plans the next step (previewed, No selected) · esc stops here",
                            ));
                            next = true;
                        }
                        _ => lines.push(plain(
                            "no writes left: the runtime's reconciler has nothing more to do here",
                        )),
                    }
                }
            }
            lines.push(PopupLine::blank());
            lines.push(audit_note());
            (format!("{} applied: {id}", title_word(kind)), lines, next)
        }
        OutcomeResult::Fenced(diffs) => {
            let mut lines = vec![line(
                Refused,
                "refused, nothing written: the submission changed since the preview:",
            )];
            lines.extend(diffs.iter().map(|d| plain(format!("  {d}"))));
            lines.push(PopupLine::blank());
            lines.push(plain("the view is refreshed; look again before acting"));
            (
                format!("{}: {id} changed since the preview", title_word(kind)),
                lines,
                false,
            )
        }
        OutcomeResult::Refused(r) => (
            format!("{} refused: {id}", title_word(kind)),
            vec![
                line(Refused, format!("refused: {}", r.reason)),
                line(Warning, format!("instead: {}", r.instead)),
                nothing_written(),
            ],
            false,
        ),
        OutcomeResult::Noop(s) => (
            format!("{}: nothing to write for {id}", title_word(kind)),
            vec![plain(s.clone()), nothing_written()],
            false,
        ),
        OutcomeResult::Error(e) => (
            format!("{} failed: {id}", title_word(kind)),
            vec![line(Refused, format!("✗ {}", e.line())), nothing_written()],
            false,
        ),
    }
}

/// Counts of a bulk apply: (applied, refused, changed since the preview, errors).
pub fn counts(outcomes: &[Outcome]) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for o in outcomes {
        match o.result {
            OutcomeResult::Applied { .. } => c.0 += 1,
            OutcomeResult::Refused(_) | OutcomeResult::Noop(_) => c.1 += 1,
            OutcomeResult::Fenced(_) => c.2 += 1,
            OutcomeResult::Error(_) => c.3 += 1,
        }
    }
    c
}

/// The summary popup of a bulk apply.
pub fn result_bulk(kind: ActionKind, outcomes: &[Outcome]) -> (String, Vec<PopupLine>) {
    let (applied, refused, fenced, errors) = counts(outcomes);
    let title = format!(
        "{}: {applied} applied · {refused} refused",
        title_word(kind)
    );
    let mut lines = vec![plain(format!(
        "{applied} applied · {refused} refused · {fenced} changed since the preview · {errors} failed"
    ))];
    for o in outcomes {
        let id = short_id(&o.submission_id);
        lines.push(PopupLine::blank());
        match &o.result {
            OutcomeResult::Applied { applied, after } => {
                lines.push(line(
                    Tone::Applied,
                    format!("✓ {id} {}", applied_line(applied)),
                ));
                if let (Some(b), Some(a)) = (&o.before, after) {
                    lines.push(line(
                        Heading,
                        format!("  before → now: {} → {}", b.short(), a.short()),
                    ));
                }
            }
            OutcomeResult::Refused(r) => {
                lines.push(line(Refused, format!("✗ {id} refused: {}", r.reason)));
                lines.push(line(Warning, format!("  instead: {}", r.instead)));
            }
            OutcomeResult::Noop(s) => lines.push(plain(format!("– {id} nothing to write: {s}"))),
            OutcomeResult::Fenced(d) => lines.push(line(
                Refused,
                format!(
                    "✗ {id} changed since the preview, nothing written: {}",
                    d.join("; ")
                ),
            )),
            OutcomeResult::Error(e) => {
                lines.push(line(Refused, format!("✗ {id} failed: {}", e.line())))
            }
        }
    }
    lines.push(PopupLine::blank());
    lines.push(audit_note());
    (title, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(verdict: &str, rule: &str, entries: usize) -> StateSummary {
        StateSummary {
            verdict: verdict.into(),
            rule: rule.into(),
            reason: "r".into(),
            status: SubmissionStatus::Running,
            instance: "i".into(),
            entries: Some(entries),
            leaf: Some(format!("leaf{entries}")),
            journal: Some(("before_provider".into(), 3)),
            plan_head: "rule 9 → failed: r".into(),
            writes: vec!["a".into(), "b".into()],
            has_rule: true,
        }
    }

    #[test]
    fn what_changed_names_entries_journal_and_verdict() {
        let a = state("terminal_error", "rule 9", 4);
        let mut b = state("terminal_error", "rule 9", 5);
        b.journal = Some(("before_provider".into(), 4));
        let c = what_changed(&a, &b);
        assert_eq!(
            c,
            [
                "session: 4 → 5 entries, leaf leaf4 → leaf5",
                "journal: before_provider (revision 3) → before_provider (revision 4)"
            ]
        );
        b.status = SubmissionStatus::Settled;
        b.verdict = "failed".into();
        b.rule = "failed".into();
        let c = what_changed(&a, &b);
        assert!(c.contains(&"status: running → settled".to_string()));
        assert!(c.contains(&"verdict: terminal_error · rule 9 → failed · failed".to_string()));
        assert_eq!(what_changed(&a, &a), ["no visible change"]);
    }

    #[test]
    fn a_refusal_carries_its_tone_not_its_wording() {
        let item = PlanItem {
            submission_id: "abcdefgh-1".into(),
            before: None,
            result: Err(Refusal {
                reason: "the lease is live".into(),
                instead: "wait for it to expire".into(),
            }),
        };
        let (title, lines) = refused_single(ActionKind::Repair, &item);
        assert_eq!(title, "Repair refused: abcdefgh");
        let tones: Vec<Tone> = lines.iter().map(|l| l.tone).collect();
        assert_eq!(tones, [Refused, Warning, Normal, Warning]);
        let t = crate::theme::Theme::default();
        assert_ne!(Refused.style(t), Normal.style(t));
    }

    #[test]
    fn runtime_plan_marks_the_next_write() {
        let lines = runtime_plan_lines(&state("x", "rule 9", 1));
        assert_eq!(
            crate::popups::text_of(&lines),
            ["runtime plan: rule 9 → failed: r", "  ▶ 1. a", "    2. b"]
        );
        let tones: Vec<Tone> = lines.iter().map(|l| l.tone).collect();
        assert_eq!(tones, [Heading, Next, Normal]);
    }
}
