//! The reconciler's decision table (spec §5.2, rules 0–9) as a pure function.
//!
//! `inspect_session` gathers, from the session history and stream chunks, everything the reconciler
//! looks at; `plan_recovery` then names the rule that fires, the writes it implies in order, and why.

use serde::Serialize;

use crate::journal::entry::Role;
use crate::journal::history::{History, SubmissionKind};
use crate::journal::images::ImageGroup;
use crate::journal::payload::{PayloadFields, Thrown};
use crate::journal::status::{JournalPhase, SubmissionStatus};
use crate::journal::stream::{reconstruct_stream, StreamReconstruction};
use crate::journal::submission_rows::{JournalRow, SubmissionRow};
use crate::journal::time::human_duration;
use crate::recovery::classify::{classify_submission_state, Classification, Inspection};
use crate::recovery::failure::RuntimeFailure;
use crate::recovery::repair::{repair_for_journal, NoRepair, ToolRepair};

/// Everything about a submission's session that the reconciler consults, computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInspection {
    /// Whether `flue_sessions` has a row for the key (the runtime creates an empty one otherwise).
    pub session_present: bool,
    pub input_entry_id: Option<String>,
    /// The input exists, but only on an abandoned branch.
    pub input_off_path_id: Option<String>,
    pub classification: Classification,
    /// Rule 6's repair with the journal's tool request; `None` when the journal has none.
    pub journal_repair: Option<Result<ToolRepair, NoRepair>>,
    /// Problem reading the journal's tool request.
    pub tool_request_error: Option<String>,
    /// Stream chunks of the journal's stream key, rebuilt; `None` when there is no stream key.
    pub stream: Option<StreamReconstruction>,
    pub stream_segments: usize,
    /// A `stream_continued` signal for the journal's stream key is already on the active path.
    pub stream_already_continued: bool,
    /// The active path ends with an aborted assistant that is not the journal's checkpoint leaf.
    pub partial_already_checkpointed: bool,
    /// An interruption advisory for this submission is already on the active path.
    pub advisory_present: bool,
    /// Damage that stops the runtime from loading the session or reading the turn journal (it then
    /// cannot reconcile the row).
    pub load_blockers: Vec<String>,
}

impl SessionInspection {
    pub fn inspection(&self) -> Inspection {
        self.classification.state.inspection()
    }
}

/// Gather the inspection. `history` is `None` when the session row does not exist.
pub fn inspect_session(
    sub: &SubmissionRow,
    journal: Option<&JournalRow>,
    history: Option<&History>,
    stream_bodies: &[String],
    session_data_problems: &[String],
    context_window: u64,
) -> SessionInspection {
    let empty = History::default();
    let h = history.unwrap_or(&empty);
    let kind = sub.submission_kind().unwrap_or(SubmissionKind::Dispatch);
    let input = h.find_input(kind, &sub.submission_id);
    let following = h.following(kind, &sub.submission_id);
    let classification = classify_submission_state(following.as_deref(), context_window);
    let (journal_repair, tool_request_error) = match journal.map(JournalRow::tool_request) {
        Some(Ok(Some(calls))) => (Some(repair_for_journal(following.as_deref(), &calls)), None),
        Some(Err(e)) => (None, Some(e)),
        _ => (None, None),
    };
    let active = h.active_path();
    let stream_key = journal.and_then(|j| j.stream_key.clone());
    let stream = stream_key
        .as_ref()
        .map(|_| reconstruct_stream(stream_bodies));
    let stream_already_continued = stream_key.as_deref().is_some_and(|key| {
        active.iter().any(|e| {
            e.message()
                .is_some_and(|m| m.is_stream_continued() && m.attribute("streamKey") == Some(key))
        })
    });
    let partial_already_checkpointed = active.last().is_some_and(|last| {
        last.message_with_role(&Role::Assistant)
            .is_some_and(|m| m.stop_reason() == Some("aborted"))
            && journal.and_then(|j| j.checkpoint_leaf_id.as_deref()) != Some(last.id.as_str())
    });
    let advisory_present = active
        .iter()
        .any(|e| e.submission_terminal_id().as_deref() == Some(sub.submission_id.as_str()));
    SessionInspection {
        session_present: history.is_some(),
        input_entry_id: input.map(|e| e.id.to_string()),
        input_off_path_id: h
            .find_input_off_path(kind, &sub.submission_id)
            .map(|e| e.id.to_string()),
        classification,
        journal_repair,
        tool_request_error,
        stream,
        stream_segments: stream_bodies.len(),
        stream_already_continued,
        partial_already_checkpointed,
        advisory_present,
        load_blockers: session_data_problems
            .iter()
            .cloned()
            .chain(history.map(History::load_blockers).unwrap_or_default())
            // The reconciler reads the turn journal right after loading the session.
            .chain(journal.and_then(JournalRow::runtime_rejects).map(|p| {
                format!(
                    "the turn journal row is malformed ({p}): the runtime's read throws \"{}\"",
                    crate::journal::submission_rows::MALFORMED_JOURNAL
                )
            }))
            .collect(),
    }
}

/// One write the runtime would perform, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PlannedWrite {
    /// The harness's get-or-create: with no `flue_sessions` row for the key, opening the session
    /// saves an empty one before any rule runs (`harness.ts:89-91`).
    CreateSession,
    /// `completeSubmission(A)`: settled, no error.
    CompleteSubmission,
    /// Direct terminal outbox: reserve, append `submission_settled`, record offset, finalize.
    SettleDirect { outcome: DirectOutcome },
    /// `failSubmission(A, error)`.
    FailSubmission { error: String },
    /// `recordSubmissionTerminal`: the `submission_interrupted` advisory signal.
    AppendAdvisory {
        reason: &'static str,
        content: String,
    },
    /// `deleteStreamChunkSegments(key)`.
    DeleteStreamChunks { stream_key: String },
    /// `recoverInterruptedStream`: append the rebuilt partial (unless already checkpointed) and the
    /// `stream_interrupted` / `stream_continued` signals.
    RecoverStream {
        stream_key: String,
        append_partial: bool,
    },
    /// `markStreamConsumed(A, key)`.
    MarkStreamConsumed { stream_key: String },
    /// `repairInterruptedToolCalls`: a complete ordered result batch after the assistant.
    RepairToolCalls { repair: ToolRepair },
    /// `updateTurnJournalPhase(A, 'before_provider', {checkpointLeafId: <new leaf>})`.
    JournalBeforeProvider,
    /// `replaceTurnJournalAttempt(A, new, lease)`: hands the submission to a fresh attempt.
    ReplaceAttempt,
    /// `requeueSubmissionBeforeInputApplied(A)`.
    Requeue,
    /// The runtime's parser auto-settles a malformed row as failed
    /// (`failSubmissionSequence`: `status = 'settled', settled_at, error` where the status is
    /// still the one listed). `error` is `None` where turnscope cannot know the message: a
    /// direct prompt with images, hydrated against image chunks turnscope does not read.
    AutoFailMalformed { error: Option<String> },
}

impl PlannedWrite {
    /// One line for humans.
    pub fn describe(&self) -> String {
        match self {
            PlannedWrite::CreateSession => "create the missing session row, empty (the runtime's get-or-create)".into(),
            PlannedWrite::CompleteSubmission => "settle the submission as completed (completeSubmission)".into(),
            PlannedWrite::SettleDirect { outcome } => format!(
                "settle through the terminal outbox: reserve, append submission_settled ({outcome}), record offset, finalize"
            ),
            PlannedWrite::FailSubmission { error } => format!("settle as failed with error: {error}"),
            PlannedWrite::AppendAdvisory { reason, .. } => {
                format!("append the submission_interrupted advisory signal (reason {reason})")
            }
            PlannedWrite::DeleteStreamChunks { stream_key } => format!("delete the stream chunks of {stream_key}"),
            PlannedWrite::RecoverStream { append_partial, .. } => {
                if *append_partial {
                    "append the rebuilt aborted partial, then stream_interrupted and stream_continued signals".into()
                } else {
                    "append stream_interrupted and stream_continued signals (the partial is already in history)".into()
                }
            }
            PlannedWrite::MarkStreamConsumed { .. } => "mark the stream consumed in the journal".into(),
            PlannedWrite::RepairToolCalls { repair } => format!(
                "append a complete batch of {} tool results after {} ({} synthetic interrupted, {} copied)",
                repair.results.len(),
                repair.assistant_id,
                repair.synthetic_count(),
                repair.results.len() - repair.synthetic_count()
            ),
            PlannedWrite::JournalBeforeProvider => {
                "set the journal phase to before_provider with the repaired leaf as checkpoint".into()
            }
            PlannedWrite::ReplaceAttempt => "replace the attempt: new attempt id, attempt_count + 1, fresh lease".into(),
            PlannedWrite::Requeue => "requeue: status queued, attempt/owner/started cleared, lease 0".into(),
            PlannedWrite::AutoFailMalformed { error: Some(error) } => {
                format!("auto-settle the malformed row as failed: {error}")
            }
            PlannedWrite::AutoFailMalformed { error: None } => {
                "auto-settle the malformed row as failed, with the message the runtime's image hydration of this direct prompt gives (it turns on the image chunks)".into()
            }
        }
    }
}

/// Where a submission stands, for rows the reconciler does not (yet) touch as well. Its kind's
/// strum name is the one word the CLI and the TUI show for it (`stuck`, `no-lease`, …).
#[derive(Debug, Clone, PartialEq, Serialize, strum::EnumDiscriminants)]
#[serde(tag = "state", rename_all = "snake_case")]
#[strum_discriminants(
    name(DispositionKind),
    derive(Hash, strum::EnumIter, strum::IntoStaticStr, strum::Display),
    strum(serialize_all = "kebab-case")
)]
pub enum Disposition {
    /// Running with an expired lease: the next reconciliation pass applies `rule`.
    #[strum_discriminants(strum(serialize = "stuck"))]
    Reconcile,
    /// Running under a live lease: a worker owns it.
    Live {
        expires_in_ms: i64,
    },
    /// Running with `lease_expires_at = 0` (Cloudflare): a Node process never reconciles it.
    NoLease,
    /// A status the runtime does not write (or not stored as text): none of its queries
    /// (`status = 'running'`, `'queued'`, …) selects the row, so nothing ever acts on it.
    UnknownStatus {
        status: String,
    },
    /// Queued (the seed's `Pending`): waiting to be claimed.
    Pending,
    /// Terminalizing: the next pass publishes the terminal event and finalizes.
    Publishing,
    Completed,
    Failed {
        error: String,
    },
    /// The row violates the runtime's row invariants; the runtime auto-fails it.
    Malformed {
        problem: String,
    },
    /// The session cannot be loaded (damaged entries or data): the runtime's reconciliation of this
    /// row fails before any rule applies, and turnscope will not predict or write.
    #[strum_discriminants(strum(serialize = "damaged"))]
    Unreadable {
        problems: Vec<String>,
    },
}

impl Disposition {
    /// Which disposition, without its details.
    pub fn kind(&self) -> DispositionKind {
        DispositionKind::from(self)
    }

    pub fn label(&self) -> &'static str {
        self.kind().label()
    }
}

impl DispositionKind {
    /// The one word the CLI and the TUI show for it (`failed`, `stuck`, …).
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// What the runtime's reconciliation of a row comes to (spec §5.2): its own words, which the
/// JSON documents, the audit rows and the views print (`rule 6 → replacement`). The variants are
/// in the alphabetical order of their words: incidents break count ties by plan (`PlanKey`'s
/// `Ord`), which sorted the words before they were a type.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::EnumIter,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum RuleResult {
    /// Rule 1: settled as completed from the history.
    Completed,
    /// Rules 2, 3, 8, 9: settled as failed.
    Failed,
    /// Rules 4, 5, 6: handed to a fresh attempt.
    Replacement,
    /// Rule 7: back in the queue.
    Requeued,
    /// Rule 0: the row has no attempt id; nothing to reconcile.
    Stale,
}

impl RuleResult {
    /// The runtime's word (`replacement`, `failed`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The `outcome` of the `submission_settled` event a direct prompt's terminal outbox publishes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum DirectOutcome {
    Completed,
    Failed,
}

impl DirectOutcome {
    /// The event's word (`completed`, `failed`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecoveryPlan {
    pub disposition: Disposition,
    /// Rule 0–9 of spec §5.2 that fires, for `Reconcile`.
    pub rule: Option<u8>,
    /// The runtime's result, for `Reconcile`.
    pub result: Option<RuleResult>,
    pub writes: Vec<PlannedWrite>,
    /// One line: why.
    pub reason: String,
}

impl RecoveryPlan {
    /// `rule 9` when the reconciler has a rule to apply, else the disposition (`failed`, `live`,
    /// …): how the CLI and the TUI name where a submission stands.
    pub fn rule_label(&self) -> String {
        match self.rule {
            Some(n) => format!("rule {n}"),
            None => self.disposition.label().to_string(),
        }
    }

    fn observe(disposition: Disposition, reason: String) -> RecoveryPlan {
        RecoveryPlan {
            disposition,
            rule: None,
            result: None,
            writes: vec![],
            reason,
        }
    }

    fn rule(
        rule: u8,
        result: RuleResult,
        writes: Vec<PlannedWrite>,
        reason: String,
    ) -> RecoveryPlan {
        RecoveryPlan {
            disposition: Disposition::Reconcile,
            rule: Some(rule),
            result: Some(result),
            writes,
            reason,
        }
    }
}

pub use crate::recovery::failure::messages;

/// Check the runtime's row invariants (`parseSubmission`); `Some(problem)` for a malformed row.
pub fn row_problem(sub: &SubmissionRow) -> Option<String> {
    parse_failure(sub).map(|f| f.problem)
}

/// Why the runtime's row parser throws: what turnscope found, and the error text the parser
/// stores when it auto-settles the row; `None` where `JSON.parse` would throw a message turnscope
/// cannot give (defensively: a text serde_json rejects that `JSON.parse` would accept).
struct ParseFailure {
    problem: String,
    error: Option<String>,
}

/// `parseSubmission(row, chunks)` as the runtime runs it, in its order: the submission's image
/// chunk rows are read first, each checked for its types (`parseChunkRow`, for every row, even
/// a dispatch); then the row's columns; then `JSON.parse` of the payload (whose `SyntaxError`
/// message is V8's, see [`crate::js::parse_error`]); then, for a direct prompt, its image
/// hydration against those rows (the images' checks, and V8's `TypeError` where a value on the
/// way is missing); then the payload check. `None` when it parses.
fn parse_failure(sub: &SubmissionRow) -> Option<ParseFailure> {
    let fail = |problem: String, error: &str| ParseFailure {
        problem,
        error: Some(error.to_string()),
    };
    if let Some(e) = crate::journal::images::rows_error(&sub.image_chunks) {
        return Some(fail(
            format!("its image chunk rows: {}", e.found),
            e.message,
        ));
    }
    if let Some(problem) = row_shape_problem(sub) {
        return Some(fail(problem, messages::MALFORMED_ROW));
    }
    let p = match crate::journal::payload::read(&sub.payload) {
        Ok(p) => p,
        Err(e) => {
            return Some(ParseFailure {
                problem: format!("payload is not valid JSON: {e}"),
                error: crate::js::parse_error::parse_error_message(&sub.payload),
            })
        }
    };
    let mut images = Vec::new();
    if sub.is_direct() {
        match p.direct_hydration(&sub.image_chunks) {
            Ok(groups) => images = groups,
            Err(Thrown::Images(e)) => {
                return Some(fail(format!("its images: {}", e.found), e.message))
            }
            Err(thrown @ Thrown::TypeError(_)) => {
                let problem = payload_problem(sub, &p, &images)
                    .unwrap_or_else(|| "direct payload's images cannot be read".into());
                return Some(fail(problem, thrown.message()));
            }
        }
    }
    payload_problem(sub, &p, &images).map(|problem| fail(problem, messages::MALFORMED_PAYLOAD))
}

/// The column checks of `parseSubmission` (before the payload is parsed).
fn row_shape_problem(sub: &SubmissionRow) -> Option<String> {
    if let Some(stored) = &sub.stored_as {
        return Some(stored.to_string());
    }
    let null_when_queued = [
        ("attempt_id", sub.attempt_id.is_some()),
        ("input_applied_at", sub.input_applied_at.is_some()),
        ("recovery_requested_at", sub.recovery_requested_at.is_some()),
        ("started_at", sub.started_at.is_some()),
    ];
    match &sub.status {
        SubmissionStatus::Queued => {
            if let Some((col, _)) = null_when_queued.iter().find(|(_, set)| *set) {
                return Some(format!("queued row has {col} set"));
            }
        }
        SubmissionStatus::Running | SubmissionStatus::Terminalizing => {
            if sub.attempt_id.is_none() {
                return Some(format!("{} row has no attempt_id", sub.status));
            }
            if sub.started_at.is_none() {
                return Some(format!("{} row has no started_at", sub.status));
            }
        }
        SubmissionStatus::Settled => {}
        SubmissionStatus::Other(other) => return Some(format!("unknown status {other:?}")),
    }
    if sub.submission_kind().is_none() {
        return Some(format!("unknown kind {:?}", sub.kind));
    }
    if sub.accepted_at.is_none() {
        return Some("accepted_at is not a number".into());
    }
    None
}

/// The payload check (`isSubmissionPayload`) of the payload `p`, a direct prompt's images
/// hydrated as `images` say.
fn payload_problem(
    sub: &SubmissionRow,
    p: &PayloadFields,
    images: &[ImageGroup],
) -> Option<String> {
    if !p.is_object() {
        return Some("payload is not a JSON object".into());
    }
    if p.kind().as_deref() != Some(sub.kind.as_str())
        || p.submission_id().as_deref() != Some(sub.submission_id.as_str())
    {
        return Some("payload kind/submissionId differ from the row".into());
    }
    if p.agent().is_none() {
        return Some("payload has no agent name".into());
    }
    let Some(id) = p.id() else {
        return Some("payload has no id".into());
    };
    let key = format!(
        "agent-session:{}",
        serde_json::to_string(&[id.as_str(), "default", "default"]).unwrap_or_default()
    );
    if key != sub.session_key {
        return Some("payload id does not rebuild session_key".into());
    }
    match p
        .accepted_at()
        .as_deref()
        .and_then(crate::journal::time::ms_from_iso)
    {
        Some(ms) if Some(ms) == sub.accepted_at => {}
        _ => return Some("payload acceptedAt does not match accepted_at".into()),
    }
    if sub.kind == "dispatch" {
        if p.dispatch_id().as_deref() != Some(sub.submission_id.as_str()) || !p.has_input() {
            return Some("dispatch payload lacks a matching dispatchId or an input".into());
        }
    } else if !p.message_is_string() {
        return Some("direct payload has no payload.message string".into());
    } else {
        return p.direct_images_problem(images);
    }
    None
}

/// What a settled row ended with.
fn settled_disposition(sub: &SubmissionRow) -> Disposition {
    match sub.failure() {
        Some(error) => Disposition::Failed { error },
        None => Disposition::Completed,
    }
}

/// `reconcileInterruptedSubmission`'s decision for `sub` at `now_ms` (spec §5.2), or what the row's
/// status means when the reconciler would not touch it.
pub fn plan_recovery(
    sub: &SubmissionRow,
    journal: Option<&JournalRow>,
    inspection: &SessionInspection,
    now_ms: i64,
) -> RecoveryPlan {
    if let Some(ParseFailure { problem, error }) = parse_failure(sub) {
        if matches!(
            sub.status,
            SubmissionStatus::Queued | SubmissionStatus::Running
        ) {
            let mut plan = RecoveryPlan::observe(
                Disposition::Malformed { problem: problem.clone() },
                format!("the runtime's row parser rejects this row ({problem}) and settles it as failed"),
            );
            plan.writes.push(PlannedWrite::AutoFailMalformed { error });
            return plan;
        }
    }
    match &sub.status {
        SubmissionStatus::Queued => {
            return RecoveryPlan::observe(
                Disposition::Pending,
                "queued: the claim loop starts it once no earlier submission of its session is unsettled".into(),
            )
        }
        SubmissionStatus::Terminalizing => {
            return RecoveryPlan::observe(
                Disposition::Publishing,
                "terminalizing: the next reconciliation pass publishes the terminal event and finalizes".into(),
            )
        }
        SubmissionStatus::Other(status) => {
            return RecoveryPlan::observe(
                Disposition::UnknownStatus {
                    status: status.clone(),
                },
                format!("status {status:?} is not one the runtime writes: none of its queries selects the row, so nothing acts on it"),
            )
        }
        SubmissionStatus::Settled => {
            let d = settled_disposition(sub);
            let reason = match &d {
                Disposition::Failed { error } => format!("settled as failed: {error}"),
                _ => "settled as completed".into(),
            };
            return RecoveryPlan::observe(d, reason);
        }
        _ => {}
    }
    if sub.lease_expires_at == 0 {
        return RecoveryPlan::observe(
            Disposition::NoLease,
            "running with lease_expires_at = 0: a Node runtime never reconciles it (Cloudflare-style claim)".into(),
        );
    }
    if sub.lease_expires_at < 0 {
        // The runtime's expired predicate is `0 < lease_expires_at < now`: it never picks this up.
        return RecoveryPlan::observe(
            Disposition::NoLease,
            format!(
                "running with a negative lease_expires_at ({}): the runtime never writes one and never reconciles it",
                sub.lease_expires_at
            ),
        );
    }
    if sub.lease_expires_at >= now_ms {
        let left = sub.lease_expires_at - now_ms;
        return RecoveryPlan::observe(
            Disposition::Live {
                expires_in_ms: left,
            },
            format!(
                "owner {} holds the lease for {} more; the reconciler leaves it alone",
                sub.owner_id.as_deref().unwrap_or("?"),
                human_duration(left)
            ),
        );
    }
    if !inspection.load_blockers.is_empty() {
        return RecoveryPlan::observe(
            Disposition::Unreadable {
                problems: inspection.load_blockers.clone(),
            },
            format!(
                "the runtime cannot read this submission's session or turn journal ({}): its reconciliation throws before any rule",
                inspection.load_blockers.join("; ")
            ),
        );
    }
    let mut plan = decide(sub, journal, inspection, now_ms);
    if !inspection.session_present && plan.rule.is_some_and(|r| r > 0) {
        plan.writes.insert(0, PlannedWrite::CreateSession);
    }
    plan
}

fn decide(
    sub: &SubmissionRow,
    j: Option<&JournalRow>,
    si: &SessionInspection,
    now_ms: i64,
) -> RecoveryPlan {
    let c = si.inspection();
    let stream_key = j.and_then(|j| j.stream_key.clone());
    let delete_chunks = || {
        stream_key
            .clone()
            .map(|k| PlannedWrite::DeleteStreamChunks { stream_key: k })
    };
    // Rule 0.
    if sub.attempt_id.is_none() {
        return RecoveryPlan::rule(
            0,
            RuleResult::Stale,
            vec![],
            "the row has no attempt id; nothing to reconcile".into(),
        );
    }
    // Rule 1.
    if c == Inspection::Completed {
        let mut w = vec![if sub.is_direct() {
            PlannedWrite::SettleDirect {
                outcome: DirectOutcome::Completed,
            }
        } else {
            PlannedWrite::CompleteSubmission
        }];
        w.extend(delete_chunks());
        return RecoveryPlan::rule(
            1,
            RuleResult::Completed,
            w,
            "the session already holds a completed answer after the input: settle it as completed, no model call (wins over budget and timeout)".into(),
        );
    }
    // Rule 2.
    if sub.attempt_count >= sub.max_retry {
        return fail(
            2,
            sub,
            j,
            si,
            delete_chunks(),
            format!(
                "attempts {}/{} exhausted: fail",
                sub.attempt_count, sub.max_retry
            ),
        );
    }
    // Rule 3.
    if sub.timeout_at > 0 && now_ms >= sub.timeout_at {
        return fail(
            3,
            sub,
            j,
            si,
            delete_chunks(),
            format!(
                "the deadline passed {} ago: fail",
                human_duration(now_ms - sub.timeout_at)
            ),
        );
    }
    let phase = j.map(|j| j.phase.as_str());
    let typed_phase = j.map(|j| &j.phase);
    let uncommitted = j.is_some_and(|j| !j.committed);
    // Rule 4.
    if let (Some(j), Some(key)) = (j, &stream_key) {
        let recoverable = si
            .stream
            .as_ref()
            .is_some_and(StreamReconstruction::is_recoverable);
        if j.phase == JournalPhase::ProviderStarted
            && !j.committed
            && j.stream_consumed_at.is_none()
            && recoverable
        {
            let mut w = vec![];
            if !si.stream_already_continued {
                w.push(PlannedWrite::RecoverStream {
                    stream_key: key.clone(),
                    append_partial: !si.partial_already_checkpointed,
                });
            }
            w.push(PlannedWrite::MarkStreamConsumed {
                stream_key: key.clone(),
            });
            w.push(PlannedWrite::DeleteStreamChunks {
                stream_key: key.clone(),
            });
            w.push(PlannedWrite::ReplaceAttempt);
            return RecoveryPlan::rule(
                    4,
                    RuleResult::Replacement,
                    w,
                    format!(
                        "the provider stream was cut mid-answer and {} stored segment(s) rebuild to text: recover it and hand to a fresh attempt",
                        si.stream_segments
                    ),
                );
        }
    }
    // Rule 5.
    let provider_unreached = j.is_none() || typed_phase == Some(&JournalPhase::BeforeProvider);
    let journal_allows = j.is_none()
        || (matches!(
            typed_phase,
            Some(JournalPhase::BeforeProvider | JournalPhase::ProviderStarted)
        ) && uncommitted);
    if sub.input_applied_at.is_some()
        && journal_allows
        && (c == Inspection::Continuable || (c == Inspection::Uncertain && provider_unreached))
    {
        let why = match (c, j) {
            (Inspection::Continuable, _) => format!(
                "the history is continuable ({}) and the journal is {}: hand to a fresh attempt",
                si.classification.state.label(),
                phase.unwrap_or("absent")
            ),
            (_, None) => format!(
                "no turn journal yet and the history is {}: hand to a fresh attempt",
                si.classification.state.label()
            ),
            _ => format!(
                "the provider was never reached (journal before_provider) and the history is {}: hand to a fresh attempt",
                si.classification.state.label()
            ),
        };
        return RecoveryPlan::rule(
            5,
            RuleResult::Replacement,
            vec![PlannedWrite::ReplaceAttempt],
            why,
        );
    }
    // Rule 6.
    if let Some(j) = j {
        if j.phase == JournalPhase::ToolRequestRecorded
            && !j.committed
            && j.tool_request_json.is_some()
        {
            match &si.journal_repair {
                Some(Ok(repair)) => {
                    return RecoveryPlan::rule(
                        6,
                        RuleResult::Replacement,
                        vec![
                            PlannedWrite::RepairToolCalls { repair: repair.clone() },
                            PlannedWrite::JournalBeforeProvider,
                            PlannedWrite::ReplaceAttempt,
                        ],
                        format!(
                            "tools were requested and {} of {} calls have no result: write interrupted results, then hand to a fresh attempt",
                            repair.synthetic_count(),
                            repair.results.len()
                        ),
                    )
                }
                other => {
                    if c == Inspection::Continuable {
                        let why = match other {
                            Some(Err(n)) => n.describe().to_string(),
                            _ => si.tool_request_error.clone().unwrap_or_default(),
                        };
                        return RecoveryPlan::rule(
                            6,
                            RuleResult::Replacement,
                            vec![PlannedWrite::ReplaceAttempt],
                            format!("tools were requested; repair writes nothing ({why}) and the history is continuable: hand to a fresh attempt"),
                        );
                    }
                }
            }
        }
    }
    if sub.input_applied_at.is_none() {
        // Rule 7.
        if c == Inspection::Absent {
            return RecoveryPlan::rule(
                7,
                RuleResult::Requeued,
                vec![PlannedWrite::Requeue],
                "the input never reached the session: requeue it as if it had just arrived".into(),
            );
        }
        // Rule 8.
        return fail(
            8,
            sub,
            j,
            si,
            delete_chunks(),
            "the input is in the session but its application was never confirmed: fail without replay".into(),
        );
    }
    // Rule 9.
    let why = format!(
        "nothing safe to resume from ({}, journal {}): fail after input application",
        si.classification.state.label(),
        phase.unwrap_or("absent")
    );
    fail(9, sub, j, si, delete_chunks(), why)
}

/// A failing rule's writes: the advisory (unless one is already on the active path), the
/// settlement with the runtime's error for `rule`, then the chunk cleanup.
fn fail(
    rule: u8,
    sub: &SubmissionRow,
    j: Option<&JournalRow>,
    si: &SessionInspection,
    delete_chunks: Option<PlannedWrite>,
    why: String,
) -> RecoveryPlan {
    let Some(failure) = RuntimeFailure::for_rule(rule, sub, j) else {
        return RecoveryPlan::rule(rule, RuleResult::Failed, vec![], why);
    };
    let mut w = vec![];
    if !si.advisory_present {
        w.push(PlannedWrite::AppendAdvisory {
            reason: failure.reason,
            content: failure.advisory_content(),
        });
    }
    w.push(if sub.is_direct() {
        PlannedWrite::SettleDirect {
            outcome: DirectOutcome::Failed,
        }
    } else {
        PlannedWrite::FailSubmission {
            error: failure.message,
        }
    });
    w.extend(delete_chunks);
    RecoveryPlan::rule(rule, RuleResult::Failed, w, why)
}
