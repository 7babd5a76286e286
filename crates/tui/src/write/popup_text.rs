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
use turnscope_core::recovery::reconciler::{Disposition, PlannedWrite};
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
    /// How many writes of the plan the next `step` takes (marked `▶`); 0 when it has nothing
    /// to write (the attempt replacement is the runtime's).
    pub step_takes: usize,
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
            step_takes: match r.plan.writes.first() {
                Some(PlannedWrite::ReplaceAttempt) | None => 0,
                Some(_) => turnscope_engine::actions::next_step_len(r),
            },
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
    /// The batch id of a bulk apply's audit rows (undone together with `U`).
    pub batch: Option<String>,
    /// Its write appended a direct prompt's terminal event (an undo is refused).
    pub published: bool,
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

/// The runtime's plan with the writes the next step takes marked (`▶`).
pub fn runtime_plan_lines(b: &StateSummary) -> Vec<PopupLine> {
    let mut v = vec![line(Heading, format!("runtime plan: {}", b.plan_head))];
    for (i, w) in b.writes.iter().enumerate() {
        let (tone, mark) = if i < b.step_takes {
            (Next, "▶")
        } else {
            (Normal, " ")
        };
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

/// The side-effect ledger of `items`: each call a write answers `interrupted`, who issued it,
/// and what trace says it was reached.
pub fn side_effect_lines(items: &[PlanItem]) -> Vec<PopupLine> {
    let mut v = Vec::new();
    for (item, plan) in items
        .iter()
        .filter_map(|i| Some((i, i.result.as_ref().ok()?)))
        .filter(|(_, p)| !p.side_effects.is_empty())
    {
        if items.len() > 1 {
            v.push(line(Heading, who(item)));
        }
        for c in &plan.side_effects {
            let args = c.arguments.as_deref().unwrap_or("(arguments not read)");
            v.push(line(Warning, format!("  {} {} {args}", c.tool, c.call_id)));
            v.push(plain(format!(
                "    issued by attempt {} ({}), worker {}, in entry {}",
                c.attempt_id.as_deref().unwrap_or("-"),
                c.attempt_source,
                c.worker.as_deref().unwrap_or("unknown"),
                c.requested_by.as_deref().unwrap_or("-")
            )));
            v.push(plain(format!("    trace: {}", c.trace)));
        }
    }
    v
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

/// The warnings of a write, in the order they weigh: the next pass fails it anyway (with the
/// way out), a live runtime beside it, and the writes that cannot be undone.
fn warning_lines<'a>(
    plans: impl IntoIterator<Item = &'a Result<ActionPlan, Refusal>> + Clone,
    fails_anyway: Vec<PopupLine>,
    live: &[String],
) -> Vec<PopupLine> {
    let mut v = fails_anyway;
    v.extend(live.iter().map(|l| line(Warning, l.clone())));
    let calls: usize = plans
        .clone()
        .into_iter()
        .filter_map(|p| p.as_ref().ok())
        .map(|p| p.side_effects.len())
        .sum();
    if calls > 0 {
        v.push(line(
            Warning,
            format!(
                "side effects: {} answered `interrupted` may already have run; a second confirmation asks you to acknowledge {}",
                turnscope_core::text::plural(calls as u64, "tool call", "tool calls"),
                if calls == 1 { "it" } else { "them" }
            ),
        ));
    }
    if let Some(w) = turnscope_engine::actions::bulk::cannot_undo(plans) {
        v.push(line(Warning, format!("warning: {w}")));
    }
    v
}

/// The confirm popup for one planned submission: (title, lines). Decision first: what it does,
/// where the submission stands, what the runtime's next pass then does (computed), the
/// warnings, and only then the rows.
pub fn confirm_single(
    kind: ActionKind,
    item: &PlanItem,
    plan: &ActionPlan,
    live: &[String],
) -> (String, Vec<PopupLine>) {
    let title = format!("{} {}?", title_word(kind), who(item));
    let mut lines = vec![plain(format!("{}: {}", kind.as_str(), plan.summary))];
    if let Some(b) = &item.before {
        lines.push(plain(format!("now: {} · {}", b.short(), b.reason)));
    }
    lines.push(line(
        Heading,
        format!("prediction: {}", plan.prediction.line()),
    ));
    let warnings = warning_lines([&item.result], fails_anyway_lines(plan, ""), live);
    if !warnings.is_empty() {
        lines.push(PopupLine::blank());
        lines.extend(warnings);
    }
    lines.extend(side_effect_lines(std::slice::from_ref(item)));
    if let Some(r) = &plan.reason {
        lines.push(plain(format!("reason: {r}")));
    }
    lines.push(PopupLine::blank());
    if kind == ActionKind::Step {
        if let Some(b) = &item.before {
            lines.extend(runtime_plan_lines(b));
            lines.push(PopupLine::blank());
        }
    }
    lines.push(line(
        Heading,
        format!(
            "writes, in one fenced transaction ({} row change{}):",
            plan.changes.len(),
            if plan.changes.len() == 1 { "" } else { "s" }
        ),
    ));
    lines.extend(preview_lines(plan, "  "));
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

/// The preview of a bulk action, grouped as the CLI groups it (the engine's grouping): the
/// counts, the warnings, then each group (what the runtime's next pass does, nothing to write,
/// each refusal with what to do instead) with its members; with `rows`, each submission's
/// summary, rows and prediction under it too (`d` switches).
pub fn confirm_bulk(p: &Planned, live: &[String], rows: bool) -> (String, Vec<PopupLine>) {
    use turnscope_engine::actions::bulk::{self, GroupKey, Section};
    let n = p.items.len();
    let title = format!("{} {n} marked submissions?", title_word(p.kind));
    let (writes, nothing, refused) = bulk::counts(p.items.iter().map(|i| &i.result));
    let hidden = if p.hidden.is_empty() {
        String::new()
    } else {
        format!(" · {} hidden by the filter", p.hidden.len())
    };
    // The decision in the first line: where the writes leave the submissions (the computed
    // predictions, by outcome), then the rest.
    let mut outcomes: Vec<(String, usize)> = Vec::new();
    for plan in p.items.iter().filter_map(|i| i.result.as_ref().ok()) {
        if plan.is_noop() {
            continue;
        }
        let pr = &plan.prediction;
        let word = match pr.rule {
            Some(rule) => format!("rule {rule} → {}", pr.outcome),
            None => pr.verdict.clone(),
        };
        match outcomes.iter_mut().find(|(w, _)| *w == word) {
            Some((_, n)) => *n += 1,
            None => outcomes.push((word, 1)),
        }
    }
    outcomes.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let then = if outcomes.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = outcomes.iter().map(|(w, n)| format!("{n} {w}")).collect();
        format!(" (then {})", parts.join(", "))
    };
    let mut lines = vec![plain(format!(
        "{n} marked: {writes} will write{then} · {nothing} nothing to write · {refused} refused{hidden} · each applies in its own fenced transaction"
    ))];
    if let Some(r) = &p.reason {
        lines.push(plain(format!("reason: {r}")));
    }
    let warnings = warning_lines(p.items.iter().map(|i| &i.result), Vec::new(), live);
    if !warnings.is_empty() {
        lines.push(PopupLine::blank());
        lines.extend(warnings);
    }
    let keys: Vec<GroupKey> = p
        .items
        .iter()
        .map(|i| GroupKey::of_plan(&i.result))
        .collect();
    let groups = bulk::group(&keys);
    let mut section = None;
    for g in &groups {
        if section != Some(g.section) {
            section = Some(g.section);
            lines.push(PopupLine::blank());
            let count = match g.section {
                Section::Write => writes,
                Section::Nothing => nothing,
                Section::Refused => refused,
            };
            let tone = match g.section {
                Section::Write => Tone::Applied,
                Section::Nothing => Normal,
                Section::Refused => Refused,
            };
            lines.push(line(tone, format!("{}: {count}", g.section.title())));
        }
        lines.push(line(
            Heading,
            format!("  {} · {}", g.members.len(), g.heading),
        ));
        if let Some(instead) = &g.instead {
            let word = if g.section == Section::Write {
                "way out"
            } else {
                "instead"
            };
            lines.push(line(Warning, format!("    {word}: {instead}")));
        }
        for &i in &g.members {
            let item = &p.items[i];
            let mut state = item.before.as_ref().map_or(String::new(), |b| b.short());
            if p.hidden.contains(&item.submission_id) {
                state.push_str(" · hidden by the filter");
            }
            let mark = match g.section {
                Section::Write => "✓",
                Section::Nothing => "–",
                Section::Refused => "✗",
            };
            lines.push(plain(format!("    {mark} {} · {state}", who(item))));
            match &item.result {
                Err(r) if g.instead.is_none() => {
                    lines.push(line(Warning, format!("      instead: {}", r.instead)));
                }
                Ok(plan) if rows => {
                    lines.push(plain(format!("      {}", plan.summary)));
                    lines.extend(preview_lines(plan, "      "));
                    if !plan.is_noop() {
                        lines.push(line(
                            Heading,
                            format!("      prediction: {}", plan.prediction.line()),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    lines.push(PopupLine::blank());
    lines.push(plain(if rows {
        "d hides each submission's rows"
    } else {
        "d shows each submission's rows (what each writes, and its prediction)"
    }));
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
                        Some(_)
                            if a.has_rule
                                && a.status == SubmissionStatus::Running
                                && a.step_takes > 0 =>
                        {
                            let taken = a.writes[..a.step_takes.min(a.writes.len())].join("; then ");
                            lines.push(line(
                                Next,
                                format!(
                                    "next step: {}: {taken}",
                                    turnscope_engine::actions::step_words(
                                        a.step_takes,
                                        a.writes.len()
                                    )
                                ),
                            ));
                            lines.push(plain(
                                "⏎/A plans the next step (previewed, No selected) · esc stops here",
                            ));
                            next = true;
                        }
                        Some(w) if a.has_rule && a.status == SubmissionStatus::Running => {
                            lines.push(plain(format!(
                                "nothing left for turnscope to write: the runtime's next pass makes the next write itself ({w})"
                            )))
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

/// Counts of a bulk apply, by what happened to each submission.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub applied: usize,
    /// Nothing to write: never counted as refused.
    pub nothing: usize,
    pub refused: usize,
    /// Changed since the preview: nothing written.
    pub changed: usize,
    pub failed: usize,
}

impl Counts {
    pub fn of(outcomes: &[Outcome]) -> Counts {
        let mut c = Counts::default();
        for o in outcomes {
            match o.result {
                OutcomeResult::Applied { .. } => c.applied += 1,
                OutcomeResult::Noop(_) => c.nothing += 1,
                OutcomeResult::Refused(_) => c.refused += 1,
                OutcomeResult::Fenced(_) => c.changed += 1,
                OutcomeResult::Error(_) => c.failed += 1,
            }
        }
        c
    }

    /// `6 applied · 4 nothing to write`, each other count only where it is not 0.
    pub fn line(&self) -> String {
        let mut parts = vec![format!("{} applied", self.applied)];
        for (n, word) in [
            (self.nothing, "nothing to write"),
            (self.refused, "refused"),
            (self.changed, "changed since the preview"),
            (self.failed, "failed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        parts.join(" · ")
    }
}

/// What undoes an apply's writes, offered in its result: the batch (`U`) or the one record
/// (`u`), unless a write published a terminal event (then nothing is offered, and it says why).
pub fn undo_offer(outcomes: &[Outcome]) -> (Option<turnscope_store::UndoTarget>, Vec<PopupLine>) {
    use turnscope_store::UndoTarget;
    let applied: Vec<(&Outcome, i64)> = outcomes
        .iter()
        .filter_map(|o| match &o.result {
            OutcomeResult::Applied { applied, .. } => Some((o, applied.audit_id)),
            _ => None,
        })
        .collect();
    if applied.is_empty() {
        return (None, Vec::new());
    }
    let published: Vec<String> = applied
        .iter()
        .filter(|(o, _)| o.published)
        .map(|(o, _)| short_id(&o.submission_id))
        .collect();
    if !published.is_empty() {
        return (
            None,
            vec![line(
                Warning,
                format!(
                    "undo: not possible: {} appended a terminal event to an event stream (subscribers may have seen it)",
                    published.join(", ")
                ),
            )],
        );
    }
    let target = match (&applied[0].0.batch, applied.len()) {
        (Some(b), _) => UndoTarget::Batch(b.clone()),
        (None, 1) => UndoTarget::Audit(applied[0].1),
        _ => return (None, Vec::new()),
    };
    let text = format!(
        "u undoes {target} (previewed, asks why) while the runtime has not acted on it yet"
    );
    (Some(target), vec![line(Next, text)])
}

/// The summary popup of a bulk apply.
pub fn result_bulk(kind: ActionKind, outcomes: &[Outcome]) -> (String, Vec<PopupLine>) {
    let c = Counts::of(outcomes);
    let title = format!("{}: {}", title_word(kind), c.line());
    let mut lines = vec![plain(c.line())];
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
            step_takes: 1,
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
