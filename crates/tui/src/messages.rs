//! What the worker hands to the UI: list rows with their verdicts, sessions, and opened
//! submissions or sessions. Plain data, built off the UI thread.

use std::sync::Arc;
use std::time::Duration;

use turnscope_core::journal::history::History;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::{JournalRow, SubmissionRow};
use turnscope_core::recovery::reconciler::{
    plan_recovery, DispositionKind, RecoveryPlan, RuleResult, SessionInspection,
};
use turnscope_engine::report::{verdict_label, SubmissionReport};
use turnscope_store::{SessionRecord, SessionSummary};

/// What can be opened (drilled into).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Submission(String),
    Session(String),
}

impl Target {
    pub fn id(&self) -> &str {
        match self {
            Target::Submission(s) | Target::Session(s) => s,
        }
    }
}

/// A status as the TUI shows it: `queued` reads as pending (as its filter does).
pub fn status_label(s: &SubmissionStatus) -> &str {
    match s {
        SubmissionStatus::Queued => "pending",
        other => other.as_str(),
    }
}

/// A list row's disposition: the plan's, or where the TUI is in computing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemDisposition {
    Planned(DispositionKind),
    /// A placeholder: the verdict and plan follow in the background.
    Computing,
    /// The submission could not be read.
    Error,
}

impl ItemDisposition {
    /// `stuck`, `live`, `pending`, `completed`, `failed`, … (`computing`, `error`).
    pub fn label(self) -> &'static str {
        match self {
            ItemDisposition::Planned(k) => k.label(),
            ItemDisposition::Computing => "computing",
            ItemDisposition::Error => "error",
        }
    }
}

impl std::fmt::Display for ItemDisposition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// One row of the submissions list, with everything its columns and the preview show.
#[derive(Debug, Clone, PartialEq)]
pub struct ListItem {
    pub row: SubmissionRow,
    pub instance: String,
    /// Journal phase and revision, if the submission has a journal.
    pub journal: Option<(String, i64)>,
    /// `SubmissionReport::verdict`: the classification for running rows, the outcome otherwise.
    pub verdict: String,
    /// The plan's disposition, or where the TUI is in getting it.
    pub disposition: ItemDisposition,
    pub rule: Option<u8>,
    pub result: Option<RuleResult>,
    /// The plan's one-line reason.
    pub reason: String,
    /// The planned writes, described, in order.
    pub writes: Vec<String>,
    /// `step N: rule` of the classifier (running rows only).
    pub explanation: Option<String>,
    /// (missing, total) calls of the trailing partial batch.
    pub partial: Option<(usize, usize)>,
    pub entry_count: Option<usize>,
    /// The cost since the input on the active path (the listing's walk: abandoned branches are
    /// counted only in the detail pane); `None` without an input entry or a verdict yet.
    pub cost: Option<f64>,
    /// A running row drawn from its submission row alone: its verdict and plan are still being
    /// computed in the background (`verdict` is `…` until then).
    pub pending: bool,
}

impl ListItem {
    /// What counts as "the row changed" for the flash and the banner.
    pub fn signature(&self) -> String {
        let r = &self.row;
        format!(
            "{}|{:?}|{}|{:?}|{:?}|{:?}|{}|{:?}|{:?}|{}",
            r.status,
            r.attempt_id,
            r.attempt_count,
            r.error,
            r.settled_at,
            self.journal,
            self.verdict,
            self.rule,
            self.entry_count,
            self.disposition.label()
        )
    }

    /// Build from a full report; `plan` is the plan at the current time.
    pub fn from_report(r: &SubmissionReport, plan: &RecoveryPlan, full: bool) -> ListItem {
        ListItem::from_parts(
            r.row(),
            r.bundle.journal.as_ref(),
            &r.inspection,
            r.bundle.session.as_ref().map(|s| s.entries.len()),
            r.path_cost().map(|c| c.cost),
            plan,
            full,
        )
    }

    /// Build from what a report concluded (kept per submission by the verdict cache, so a later
    /// refresh re-plans at its own time without re-reading the session).
    pub fn from_parts(
        row: &SubmissionRow,
        journal: Option<&JournalRow>,
        inspection: &SessionInspection,
        entry_count: Option<usize>,
        cost: Option<f64>,
        plan: &RecoveryPlan,
        full: bool,
    ) -> ListItem {
        let row = row.clone();
        let c = &inspection.classification;
        let verdict = verdict_label(&plan.disposition, full.then_some(c));
        ListItem {
            instance: row.instance_id().unwrap_or_default(),
            journal: journal.map(|j| (j.phase.to_string(), j.revision)),
            verdict,
            disposition: ItemDisposition::Planned(plan.disposition.kind()),
            rule: plan.rule,
            result: plan.result,
            reason: plan.reason.clone(),
            writes: plan.writes.iter().map(|w| w.describe()).collect(),
            explanation: full
                .then(|| format!("step {}: {}", c.explanation.step, c.explanation.rule)),
            partial: if full {
                c.trailing_partial_batch
                    .as_ref()
                    .map(|b| (b.missing_calls().count(), b.tool_calls.len()))
            } else {
                None
            },
            entry_count,
            cost,
            pending: false,
            row,
        }
    }

    /// A running row before its verdict is known: the columns the submission row gives, the
    /// verdict `…` and no plan yet.
    pub fn placeholder(row: SubmissionRow, journal: Option<(String, i64)>) -> ListItem {
        ListItem {
            instance: row.instance_id().unwrap_or_default(),
            journal,
            verdict: "…".into(),
            disposition: ItemDisposition::Computing,
            rule: None,
            result: None,
            reason: "computing the verdict and plan…".into(),
            writes: Vec::new(),
            explanation: None,
            partial: None,
            entry_count: None,
            cost: None,
            pending: true,
            row,
        }
    }
}

/// A submission as opened in the tree, with its plan at the time of loading.
#[derive(Debug, Clone)]
pub struct OpenedSubmission {
    pub report: Arc<SubmissionReport>,
    pub plan: RecoveryPlan,
}

impl OpenedSubmission {
    pub fn new(report: Arc<SubmissionReport>, now_ms: i64) -> OpenedSubmission {
        let plan = plan_recovery(
            report.row(),
            report.bundle.journal.as_ref(),
            &report.inspection,
            now_ms,
        );
        OpenedSubmission { report, plan }
    }

    /// The verdict with the current plan ([`verdict_label`]).
    pub fn verdict(&self) -> String {
        verdict_label(&self.plan.disposition, Some(self.report.classification()))
    }
}

/// A session as opened from the sessions view.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    pub key: String,
    pub summary: Option<SessionSummary>,
    pub record: Option<SessionRecord>,
    pub history: Option<History>,
    /// Submissions of the session in sequence order, with their input entry when on the path.
    pub submissions: Vec<(ListItem, Option<String>)>,
}

impl OpenedSession {
    pub fn build(
        key: &str,
        record: Option<SessionRecord>,
        summary: Option<SessionSummary>,
        items: Vec<ListItem>,
    ) -> Self {
        let history = record
            .as_ref()
            .map(|s| History::new(s.entries.clone(), s.leaf_id.clone()));
        let submissions = items
            .into_iter()
            .map(|it| {
                let input = history.as_ref().and_then(|h| {
                    let kind = it.row.submission_kind()?;
                    h.find_input(kind, &it.row.submission_id)
                        .map(|e| e.id.to_string())
                });
                (it, input)
            })
            .collect();
        OpenedSession {
            key: key.to_string(),
            summary,
            record,
            history,
            submissions,
        }
    }
}

/// What the operator last saw of the row a "changed under you" banner is about: while the banner
/// is up, each refresh describes the change since then, not since the previous refresh (three
/// new entries over two refreshes are three, not the last two).
#[derive(Debug, Clone)]
pub enum BannerBase {
    Row(Box<ListItem>),
    Opened(Box<OpenedSubmission>),
}

#[derive(Debug, Clone)]
pub enum Opened {
    Submission(OpenedSubmission),
    Session(Arc<OpenedSession>),
}

/// One refresh: the rows the list filter shows (running ones may be placeholders until their
/// verdicts arrive), counts, sessions when asked for, and the opened target.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub now_ms: i64,
    pub items: Vec<ListItem>,
    /// Status counts: `None` from a refresh (they follow in the first verdict batch).
    pub counts: Option<Vec<(SubmissionStatus, i64)>>,
    /// Rows of the list filter's status in the database, when the list holds only the newest page.
    pub list_total: Option<usize>,
    /// The filter these items were read for.
    pub filter: turnscope_store::RowFilter,
    /// The id prefix looked up in the whole journal (the list holding only its newest page),
    /// and how many of the filter's rows beyond the page it found (they are among `items`).
    pub id_lookup: Option<(String, usize)>,
    /// Expired-lease submissions (the runtime's predicate at `now_ms`).
    pub expired: usize,
    /// `None` unless the sessions view asked for them (they are read lazily).
    pub sessions: Option<Vec<SessionSummary>>,
    /// Running rows whose verdicts are still being computed in the background.
    pub pending: usize,
    /// The selected row when it is not among `items` (it left the filter), complete.
    pub watched: Option<ListItem>,
    pub open: Option<(Target, Result<Opened, super::worker_error::WorkerError>)>,
    /// How long the refresh took in the worker.
    pub took: Duration,
    /// Submissions written since whose rows the runtime has now acted on: what it did beside
    /// what was predicted right after the write.
    pub runtime_acted: Vec<RuntimeActed>,
}

/// What the runtime did after a write of this session, beside the prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeActed {
    pub submission_id: String,
    /// `rule 5 → replacement`.
    pub predicted: String,
    pub observed: turnscope_engine::report::observed::Observation,
    pub as_predicted: bool,
}

impl RuntimeActed {
    /// `✓` or `✗`.
    pub fn mark(&self) -> &'static str {
        if self.as_predicted {
            "✓"
        } else {
            "✗"
        }
    }

    /// One line for the status bar and the detail pane.
    pub fn line(&self) -> String {
        let rule = self
            .observed
            .rule
            .map_or("no rule".to_string(), |r| format!("rule {r}"));
        format!(
            "{} the runtime did {rule} → {} ({}){}",
            self.mark(),
            self.observed.what,
            self.observed.detail,
            if self.as_predicted {
                ", as predicted".to_string()
            } else {
                format!("; predicted {}", self.predicted)
            }
        )
    }
}

/// Verdicts computed in the background since the last snapshot, in visible-first order.
#[derive(Debug, Clone)]
pub struct VerdictBatch {
    pub items: Vec<ListItem>,
    /// Rows still waiting, and how many this refresh queued in all.
    pub remaining: usize,
    pub total: usize,
    /// The status counts, when this batch read them (the first after a refresh).
    pub counts: Option<Vec<(SubmissionStatus, i64)>>,
    /// The failed count, once computed for the current status counts.
    pub failed: Option<usize>,
}

/// What the sessions screen shows of a session's health: how many findings and the first kind
/// (`Hazard::KINDS` order), and what `R` would repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthMark {
    pub findings: usize,
    pub worst: Option<&'static str>,
    /// For a session with unresolved calls: the submission whose batch can be completed in
    /// place (`Ok`), or why none can (`Err`, health's own reason). `None`: no unresolved calls.
    pub repair: Option<Result<String, String>>,
}

impl HealthMark {
    pub fn of(h: &turnscope_engine::report::health::SessionHealth) -> HealthMark {
        let notes = || {
            h.findings
                .iter()
                .filter_map(|f| Some((f.repair.as_ref()?, f)))
        };
        // The first repairable batch wins; else the first finding's reason why not, with what
        // the model saw instead (the finding's effect on the next turn).
        let in_place = notes().find_map(|(note, f)| match &f.submission {
            Some(o) if note.in_place => Some(Ok(o.id.clone())),
            _ => None,
        });
        let repair = in_place.or_else(|| {
            notes()
                .next()
                .map(|(note, f)| Err(format!("{} · {}", note.why, f.effect)))
        });
        HealthMark {
            findings: h.findings.len(),
            worst: h.counts().first().map(|(k, _)| *k),
            repair,
        }
    }
}
