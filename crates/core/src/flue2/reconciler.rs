//! flue 2.x's reconciler as a pure function: which step of the runtime's recovery pass acts on a
//! submission next, why, what it writes, and (for a replaced or requeued attempt) what the
//! runtime's resume will then do ([`super::resume`]).
//!
//! A port of `reconcileInterruptedSubmission` (flue 2.1.0's
//! `dist/conversation-stream-store-B2RVviYM.mjs:4996–5041`, the same in every 2.x release) and of
//! the terminal paths it calls: `failInterruptedSubmission` (CSS:5179), `settleAbortedWithContext`
//! (CSS:5218), `settleJoinedSubmissions` and `settleSubmissionWithRecord` (CSS:5257–5348), the
//! session's `recordSubmissionTerminal` with `settleDanglingConversationState` (CSS:3030–3142),
//! and the row writes of the SQL store (`sql-agent-execution-store-CS3_7p5s.mjs`:
//! `replaceSubmissionAttempt` 364, `requeueSubmission` 488, `reserveSubmissionSettlement` 494,
//! `finalizeSubmissionSettlement` 522). The Node coordinator's pass (`runReconciliationPass`,
//! `builtin-providers-Cr4ZxYKK.mjs:1169–1240`) runs it on every `running` row whose lease ended
//! (`listExpiredSubmissions`: `0 < lease_expires_at < now`), after finalizing every
//! `terminalizing` row whose lease ended ([`Flue2Step::FinalizeSettlement`]).
//!
//! The steps, in the order the runtime tries them:
//!
//! | step | name | when | what it writes |
//! | --- | --- | --- | --- |
//! | 0 | `no_attempt` | the row has no `attempt_id` | nothing |
//! | 1 | `inspect` | the inspection (fold + classifier) throws | past the deadline: the timeout failure of step 5; else nothing (the pass logs it, deferred) |
//! | 2 | `completed` | the classification is `completed` | joined deliveries, then the row: settled `completed` through the settlement outbox |
//! | 3 | `abort` | `abort_requested_at` is set | ghost converged, trailing batch marker-settled, `submission_aborted` signal, settled `aborted` |
//! | 4 | `budget` | `attempt_count >= max_attempts` | as 3, `submission_interrupted`, settled `failed` |
//! | 5 | `timeout` | `timeout_at > 0` and `now >= timeout_at` | as 4 |
//! | 6 | `replace` | the classification is neither `absent` nor `completed` | `replaceSubmissionAttempt`: new attempt, `attempt_count + 1`, a 30 s lease; the replacement then resumes |
//! | 7 | `requeue` | the classification is `absent` | `requeueSubmission`: `queued`, attempt, input application, start, owner cleared, lease 0 |
//!
//! The inspection is the session's `inspectSubmissionInput` (CSS:2570): `absent` where the input
//! entry is not in the conversation, else `classifyConversationSubmission` mapped by
//! `inspectCanonicalState` (CSS:4343) to `absent`, `completed` (a silent overflow included) or
//! `interrupted` (every other answer).

use serde::Serialize;

use super::classify::{encode_canonical_id, Flue2Classification, Flue2Variant};
use super::fold::InstanceState;
use super::records::Body;
use super::resume::{resume_after_replace, resume_after_requeue, Flue2Resume};
use super::rows::{Flue2SubmissionRow, ParseOutcome};
use super::state::{Conversation, EntryBody};
use super::writes::{batch_at_leaf, converge_write, ghost_at_leaf};
pub use super::writes::{CallRef, Flue2Write};
use crate::recovery::classify::SubmissionState;

/// The runtime's lease (`LEASE_DURATION_MS`, CSS:18): a replacement attempt's lease ends this long
/// after the pass.
pub const LEASE_DURATION_MS: i64 = 30_000;

/// The message of `SubmissionAbortedError` (`errors-CsDcT_C4.mjs:983`).
pub const ABORTED_MESSAGE: &str = "Submission was aborted.";
/// The message of `SubmissionTimeoutError` (errors:962).
pub const TIMEOUT_MESSAGE: &str = "Submission exceeded the configured timeout.";
/// The message of `SubmissionInterruptedError` (errors:923): the budget ran out before the input
/// was applied.
pub const INTERRUPTED_BEFORE_INPUT_MESSAGE: &str =
    "Submission was repeatedly interrupted before input application and exhausted its retry budget.";

/// The message of `SubmissionRetryExhaustedError` (errors:946).
pub fn retry_exhausted_message(attempt_count: i64, max_attempts: i64) -> String {
    format!("Submission exceeded maximum recovery attempts ({attempt_count}/{max_attempts}).")
}

/// What the runtime's recovery does with a submission next: a step of
/// `reconcileInterruptedSubmission` (0–7), or why no step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flue2Step {
    NoAttempt,
    Inspect,
    Completed,
    Abort,
    Budget,
    Timeout,
    Replace,
    Requeue,
    /// A `terminalizing` row whose lease ended: the pass's pending-settlement step
    /// (`finalizePendingSettlement`, CSS:5368) before the expired rows.
    FinalizeSettlement,
    /// `running` with a lease that has not ended: the pass skips it.
    LeaseHeld,
    /// `running` with `lease_expires_at` 0: `listExpiredSubmissions` never lists it.
    NoLease,
    /// `queued`: the claim loop's (or, unready, the materialization pass's) business.
    Queued,
    /// `settled`: nothing more.
    Settled,
    /// `joining` or `joined`: settled with the submission it joined.
    Joined,
    /// A row whose session key the runtime does not write: its row parser fails it.
    Malformed,
    /// An expired running or a terminalizing row that no pass reaches: every pass throws first,
    /// on a terminalizing row's settlement obligation ([`Flue2SubmissionRow::pass_fails`]).
    PassFails,
}

impl Flue2Step {
    /// The step's number in `reconcileInterruptedSubmission` (0–7); `None` outside it.
    pub fn number(self) -> Option<u8> {
        Some(match self {
            Flue2Step::NoAttempt => 0,
            Flue2Step::Inspect => 1,
            Flue2Step::Completed => 2,
            Flue2Step::Abort => 3,
            Flue2Step::Budget => 4,
            Flue2Step::Timeout => 5,
            Flue2Step::Replace => 6,
            Flue2Step::Requeue => 7,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Flue2Step::NoAttempt => "no_attempt",
            Flue2Step::Inspect => "inspect",
            Flue2Step::Completed => "completed",
            Flue2Step::Abort => "abort",
            Flue2Step::Budget => "budget",
            Flue2Step::Timeout => "timeout",
            Flue2Step::Replace => "replace",
            Flue2Step::Requeue => "requeue",
            Flue2Step::FinalizeSettlement => "finalize",
            Flue2Step::LeaseHeld => "lease_held",
            Flue2Step::NoLease => "no_lease",
            Flue2Step::Queued => "queued",
            Flue2Step::Settled => "settled",
            Flue2Step::Joined => "joined",
            Flue2Step::Malformed => "malformed",
            Flue2Step::PassFails => "pass_fails",
        }
    }

    /// The list's RULE column: `6 replace`, or `- lease_held` outside the step table.
    pub fn column(self) -> String {
        match self.number() {
            Some(n) => format!("{n} {}", self.name()),
            None => format!("- {}", self.name()),
        }
    }
}

/// The row as the step leaves it (what the runtime's pass changes, for comparing with it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flue2RowAfter {
    pub status: String,
    pub attempt_count: i64,
    /// A new `attempt_id` (step 6), or none (step 7).
    pub attempt_id: AttemptChange,
    pub error: Option<String>,
    /// The `outcome` of the reserved `submission_settled` record.
    pub settlement_outcome: Option<String>,
    pub input_applied_cleared: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptChange {
    Same,
    New,
    Cleared,
}

/// What turnscope predicts the runtime does with a submission next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flue2Plan {
    pub step: Flue2Step,
    /// The condition that held, in one sentence.
    pub why: String,
    /// In the order the runtime makes them (empty where it writes nothing).
    pub writes: Vec<Flue2Write>,
    /// The row after the step, where the step changes it.
    pub row_after: Option<Flue2RowAfter>,
    /// What the replacement attempt (step 6) or the next claim (step 7) will do.
    pub resume: Option<Flue2Resume>,
}

impl Flue2Plan {
    /// A step that writes nothing (outside the step table, or one that waits).
    fn plain(step: Flue2Step, why: String) -> Flue2Plan {
        Flue2Plan {
            step,
            why,
            writes: Vec::new(),
            row_after: None,
            resume: None,
        }
    }
}

/// Why the runtime's inspection has no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InspectFailure {
    /// The row's session key is not one the runtime writes.
    SessionKey,
    /// The instance's stream does not fold (the runtime cannot load it).
    Unloadable,
    /// The classifier throws (its `TypeError`).
    ClassifierThrows,
}

/// Everything the step table reads.
pub struct ReconcileInput<'a> {
    pub row: &'a Flue2SubmissionRow,
    /// The folded instance (`None` where it does not fold or has no stream).
    pub instance: Option<&'a InstanceState>,
    /// The submission's conversation (its session key's harness and session).
    pub conversation: Option<&'a Conversation>,
    /// The classification, or why there is none (with the message).
    pub classification: Result<&'a Flue2Classification, (InspectFailure, &'a str)>,
    /// Rows with `joined_into` = this submission and status `joined`.
    pub joined: &'a [String],
    pub now_ms: i64,
    /// The release's variant (its `findTrailingPartialToolBatch` settles the trailing batch).
    pub variant: Flue2Variant,
}

/// The runtime's `inspectCanonicalState` of a classification.
pub(super) fn inspection(c: &Flue2Classification) -> &'static str {
    match c.state {
        SubmissionState::Absent => "absent",
        SubmissionState::Completed { .. } => "completed",
        _ => "interrupted",
    }
}

/// The step that acts next on `input.row`, why, and its writes.
pub fn plan_flue2(input: &ReconcileInput<'_>) -> Flue2Plan {
    step_table(&Table::of(input), &Live(input))
}

/// What the step table reads besides the folded stream: the row, the classification, the joined
/// deliveries and the clock (the only input a kept plan is asked again with, `plan_facts`).
pub(super) struct Table<'a> {
    pub row: &'a Flue2SubmissionRow,
    pub classification: Result<&'a Flue2Classification, (InspectFailure, &'a str)>,
    pub joined: &'a [String],
    pub now_ms: i64,
}

impl<'a> Table<'a> {
    fn of(input: &ReconcileInput<'a>) -> Table<'a> {
        Table {
            row: input.row,
            classification: input.classification,
            joined: input.joined,
            now_ms: input.now_ms,
        }
    }
}

/// What the step table reads of the folded stream (the instance and the conversation), none of
/// it on the clock: computed when a step asks ([`Live`]), or kept from an earlier fold
/// (`plan_facts::PlanFacts`), so a list can plan again at a later clock without the stream.
pub(super) trait FoldReads {
    /// `settleSubmissionWithRecord`'s reads.
    fn settle(&self) -> SettleFacts;
    /// `recordSubmissionTerminal`'s reads; `None` without a conversation for the submission.
    fn terminal(&self) -> Option<TerminalFacts>;
    /// `finalizePendingSettlement`'s reads: (the reserved record is present, it differs).
    fn finalize(&self) -> (bool, bool);
    /// The resume of a replaced (`true`) or requeued attempt after classification `c`.
    fn resume(&self, c: &Flue2Classification, replace: bool) -> Option<Flue2Resume>;
}

/// `settleSubmissionWithRecord`'s reads of the fold.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SettleFacts {
    /// A conversation of the instance holds an entry of the submission, or `default`/`default`
    /// exists (else the row is settled alone).
    pub has_conversation: bool,
    /// The settled record is in the stream already.
    pub settled_present: bool,
}

/// `recordSubmissionTerminal`'s reads of the fold, for either slug.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TerminalFacts {
    /// The ghost converged at the leaf, else the trailing batch marker-settled at the leaf.
    pub repairs: Vec<Flue2Write>,
    /// The calls `recordedInterruptedTools` lists (earlier markers, then this pass's).
    pub tools: Vec<CallRef>,
    /// `record_submission_aborted_ID` is in the stream already.
    pub aborted_present: bool,
    /// `record_submission_interrupted_ID` is in the stream already.
    pub interrupted_present: bool,
}

/// [`FoldReads`] over the fold itself, each read when the step asks for it.
pub(super) struct Live<'a, 'i>(pub &'i ReconcileInput<'a>);

impl FoldReads for Live<'_, '_> {
    fn settle(&self) -> SettleFacts {
        let (row, instance) = (self.0.row, self.0.instance);
        let has_conversation = instance.is_some_and(|s| {
            s.conversations.iter().any(|c| {
                c.all_entries()
                    .any(|e| e.submission_id.as_deref() == Some(row.submission_id.as_str()))
            }) || s.conversation_for_scope("default", "default").is_some()
        });
        SettleFacts {
            has_conversation,
            settled_present: instance.is_some_and(|s| s.has_record(&settled_record_id(row))),
        }
    }

    fn terminal(&self) -> Option<TerminalFacts> {
        self.0.conversation.map(|conv| terminal_facts(self.0, conv))
    }

    fn finalize(&self) -> (bool, bool) {
        let (row, instance) = (self.0.row, self.0.instance);
        let record: Option<serde_json::Value> = row
            .settlement_record
            .as_deref()
            .and_then(|s| crate::js::lone_surrogates::from_str(s).ok());
        let record_id = row.settlement_record_id.clone().unwrap_or_default();
        let present = instance.is_some_and(|s| s.has_record(&record_id));
        // A record of that id that is not a settlement is not kept whole: it differs all the same.
        let conflict = present
            && instance
                .and_then(|s| s.record(&record_id))
                .is_none_or(|r| Some(&r.raw) != record.as_ref());
        (present, conflict)
    }

    fn resume(&self, c: &Flue2Classification, replace: bool) -> Option<Flue2Resume> {
        Some(if replace {
            resume_after_replace(self.0.row, self.0.conversation, c)
        } else {
            resume_after_requeue(self.0.row, self.0.conversation, c)
        })
    }
}

/// The settled record's id (`settleSubmissionWithRecord`).
fn settled_record_id(row: &Flue2SubmissionRow) -> String {
    format!(
        "record_{}-submission:{}:settled",
        row.kind, row.submission_id
    )
}

/// The plan of an expired running or a terminalizing row of a journal whose every reconciliation
/// pass throws before it reaches the row (`None` where passes run): the pass lists the pending
/// settlements (every terminalizing row's obligation parsed) before its expired-lease scan
/// (BP:1169–1193). Its unready pass, before, and the claim loop go on.
fn pass_fails_plan(row: &Flue2SubmissionRow) -> Option<Flue2Plan> {
    let why = row.pass_fails.as_ref()?;
    Some(Flue2Plan::plain(
        Flue2Step::PassFails,
        format!("every reconciliation pass throws before it reaches this row ({why}): no pass finalizes a settlement or reconciles an expired row of this journal until that row is mended (the unready pass and the claim loop go on)"),
    ))
}

/// The plan of a row the runtime's row parser rejects (or may reject), `None` where it parses.
/// Every pass parses the rows it lists (`parseOperationalRows`, SAES:664) and settles a running or
/// queued one it rejects as failed with the parser's message (`failSubmissionSequence`): a running
/// row in the expired-lease scan, a queued one in the unready pass (not ready) or in the claim
/// loop's listing (ready, once no earlier unsettled submission of its session is ahead of it). The
/// pending-settlement step parses a terminalizing row too (`getSubmission`, BP:1173), inside its
/// `try`: it logs the settlement as deferred.
fn parse_plan(row: &Flue2SubmissionRow, now: i64) -> Option<Flue2Plan> {
    let then = match (row.status.as_str(), row.canonical_ready_at) {
        ("queued", None) => "the unready pass settles the row as failed with that message",
        ("queued", Some(_)) => "the claim loop, once it lists the row (no earlier unsettled submission of its session ahead of it), settles it as failed with that message",
        ("terminalizing", _) => "the pending-settlement step logs the settlement as deferred and finalizes nothing, each pass",
        _ if row.lease_expired(now) => "its pass settles the row as failed with that message",
        _ => "once its lease ends, the pass's expired-lease scan settles the row as failed with that message",
    };
    let why = match &row.parse {
        ParseOutcome::Parses => return None,
        ParseOutcome::Fails { problem, error } => {
            let thrown = match error {
                Some(e) => format!("{e:?}"),
                None => "JSON.parse's message for this payload, which turnscope cannot give".into(),
            };
            format!("{problem}: the runtime's row parser throws {thrown}, and {then} (SAES:664–712)")
        }
        ParseOutcome::Undecided { why } => format!(
            "turnscope cannot tell whether the runtime's row parser accepts this row ({why}); where it throws {:?}, {then} (SAES:709)",
            super::submission_parse::messages::PAYLOAD_MALFORMED
        ),
    };
    Some(Flue2Plan::plain(Flue2Step::Malformed, why))
}

/// The step table of `t`, reading the fold through `reads`.
pub(super) fn step_table(t: &Table<'_>, reads: &dyn FoldReads) -> Flue2Plan {
    let input = t;
    let row = input.row;
    let now = input.now_ms;
    let plain = Flue2Plan::plain;
    match row.status.as_str() {
        "running" => {}
        "terminalizing" => return finalize_pending(input, reads),
        "queued" => {
            if let Some(plan) = parse_plan(row, now) {
                return plan;
            }
            return plain(
                Flue2Step::Queued,
                match (row.canonical_ready_at, row.abort_requested_at) {
                    (None, Some(_)) => "queued, not ready, with an abort intent: the unready pass settles it aborted without an attempt (settleQueuedSubmission)".into(),
                    (None, None) => "queued, not ready: the unready pass materializes its conversation first, then marks it ready".into(),
                    (Some(_), Some(_)) => "queued, with an abort intent: the claim loop claims it once no earlier unsettled submission of its session is ahead of it, and that attempt settles it aborted before anything else (processSubmission → settleAbortedWithContext, CSS:5149), as step 3 does".into(),
                    _ => "queued: the claim loop claims it once no earlier unsettled submission of its session is ahead of it".into(),
                },
            )
        }
        "settled" => return plain(Flue2Step::Settled, "settled: the runtime does nothing more with it".into()),
        "joining" | "joined" => {
            return plain(
                Flue2Step::Joined,
                format!(
                    "{}: settled with the submission it joined ({})",
                    row.status,
                    row.joined_into.as_deref().unwrap_or("-")
                ),
            )
        }
        // Every pass selects its rows by status (`status = 'running'`, `'queued'`, …): such a
        // row is never selected, so never parsed, settled or written (SAES:405–450).
        other => return plain(Flue2Step::Malformed, format!("status {other:?} is not one the runtime writes: no pass selects it (each selects its rows by status), so the runtime never settles or writes it")),
    }
    // A running row is parsed when the expired-lease scan lists it: never with a lease of 0, and
    // never where the pass throws before the scan.
    if row.lease_expired(now) {
        if let Some(plan) = pass_fails_plan(row) {
            return plan;
        }
    }
    if row.lease_expires_at > 0 {
        if let Some(plan) = parse_plan(row, now) {
            return plan;
        }
    }
    // A row built without the parser's outcome (the store sets it as it reads the row).
    if let (true, Some(stored)) = (row.lease_expires_at > 0, &row.stored_as) {
        return plain(
            Flue2Step::Malformed,
            format!("{stored}: the runtime's row parser rejects the row, and its pass settles it as failed with \"[flue] Persisted agent submission row is malformed.\" (SAES:704)"),
        );
    }
    if let Err((InspectFailure::SessionKey, e)) = &input.classification {
        return plain(
            Flue2Step::Malformed,
            format!("{e}: the runtime's row parser settles a malformed row as failed (SAES:664–703); turnscope does not predict its message"),
        );
    }
    if row.lease_expires_at <= 0 {
        return plain(
            Flue2Step::NoLease,
            "running with lease_expires_at 0: the expired-lease scan (0 < lease_expires_at < now) never lists it".into(),
        );
    }
    if !row.lease_expired(now) {
        let held = row.lease_expires_at - now;
        return plain(
            Flue2Step::LeaseHeld,
            match row.abort_requested_at {
                // enforceActiveDeadlines (BP:1028), run by the owner's claim loop every 15 s
                // (LEASE_SCAN_INTERVAL_MS), with a 60 s grace (SUBMISSION_SETTLE_GRACE_MS).
                Some(_) => format!(
                    "the lease is held for {held} ms more, with an abort intent: the owner's deadline scan (every 15 s) aborts the live attempt, which settles it aborted by its own path; an attempt still hung 60 s later is settled over by the interrupted path (step 3)"
                ),
                None => format!(
                    "the lease is held for {held} ms more: the pass reconciles it only after it ends"
                ),
            },
        );
    }
    // reconcileInterruptedSubmission, step by step.
    if row.attempt_id.is_none() {
        return plain(
            Flue2Step::NoAttempt,
            "the row has no attempt_id: submissionAttemptRef is null and the reconciler returns without a write".into(),
        );
    }
    let deadline_passed = row.deadline_passed(now);
    let c = match &input.classification {
        Ok(c) => *c,
        Err((kind, e)) => {
            let why = format!("the runtime's inspection throws ({e})");
            if !deadline_passed {
                return plain(
                    Flue2Step::Inspect,
                    format!("{why}, and the deadline has not passed: the reconciler rethrows, the pass logs it as deferred and the row stays until a later pass"),
                );
            }
            if *kind == InspectFailure::Unloadable {
                return plain(
                    Flue2Step::Inspect,
                    format!("{why} and the deadline passed: the reconciler turns to the timeout failure, whose settlement loads the same stream (turnscope predicts no write)"),
                );
            }
            return terminal(
                input,
                reads,
                Flue2Step::Inspect,
                format!(
                    "{why} and the deadline passed (timeout_at {} <= now)",
                    row.timeout_at
                ),
                Terminal::Timeout,
            );
        }
    };
    let label = c.label();
    if inspection(c) == "completed" {
        let mut writes = settle_with_record(input, reads, "completed", None);
        let joined = settle_joined(input, "completed");
        writes.splice(0..0, joined);
        return Flue2Plan {
            step: Flue2Step::Completed,
            why: format!("the classification is {label}: the reconciler settles it completed (joined deliveries first), whatever the budget or deadline"),
            row_after: Some(settled_after(row, &writes, "completed", None)),
            writes,
            resume: None,
        };
    }
    if row.abort_requested_at.is_some() {
        return terminal(
            input,
            reads,
            Flue2Step::Abort,
            format!("{label}, and abort_requested_at is set"),
            Terminal::Aborted,
        );
    }
    if row.attempt_count >= row.max_attempts {
        return terminal(
            input,
            reads,
            Flue2Step::Budget,
            format!(
                "{label}, and attempt_count {} >= max_attempts {}",
                row.attempt_count, row.max_attempts
            ),
            if inspection(c) == "absent" {
                Terminal::BudgetBeforeInput
            } else {
                Terminal::Budget
            },
        );
    }
    if deadline_passed {
        return terminal(
            input,
            reads,
            Flue2Step::Timeout,
            format!("{label}, and timeout_at {} <= now {now}", row.timeout_at),
            Terminal::Timeout,
        );
    }
    if inspection(c) == "interrupted" {
        let writes = vec![Flue2Write::ReplaceAttempt {
            attempt_count: row.attempt_count + 1,
            lease_expires_at: now + LEASE_DURATION_MS,
        }];
        return Flue2Plan {
            step: Flue2Step::Replace,
            why: format!(
                "the classification is {label} (interrupted), attempt {}/{} and the deadline not passed: a fresh attempt resumes it",
                row.attempt_count, row.max_attempts
            ),
            writes,
            row_after: Some(Flue2RowAfter {
                status: "running".into(),
                attempt_count: row.attempt_count + 1,
                attempt_id: AttemptChange::New,
                error: row.error.clone(),
                settlement_outcome: None,
                input_applied_cleared: false,
            }),
            resume: reads.resume(c, true),
        };
    }
    Flue2Plan {
        step: Flue2Step::Requeue,
        why: format!(
            "the classification is absent (the input entry {} is not on the conversation's active path): back to the queue",
            row.input_entry_id()
        ),
        writes: vec![Flue2Write::Requeue],
        row_after: Some(Flue2RowAfter {
            status: "queued".into(),
            attempt_count: row.attempt_count,
            attempt_id: AttemptChange::Cleared,
            error: row.error.clone(),
            settlement_outcome: None,
            input_applied_cleared: true,
        }),
        resume: reads.resume(c, false),
    }
}

/// The reconciler's failing and aborting paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminal {
    Aborted,
    Budget,
    BudgetBeforeInput,
    Timeout,
}

/// `failInterruptedSubmission` / `settleAbortedWithContext`: `recordSubmissionTerminal`, then the
/// joined deliveries and the submission settled.
fn terminal(
    input: &Table<'_>,
    reads: &dyn FoldReads,
    step: Flue2Step,
    why: String,
    t: Terminal,
) -> Flue2Plan {
    let row = input.row;
    let (reason, outcome, message) = match t {
        Terminal::Aborted => ("aborted", "aborted", ABORTED_MESSAGE.to_string()),
        Terminal::Budget => (
            "exhausted_retry_budget",
            "failed",
            retry_exhausted_message(row.attempt_count, row.max_attempts),
        ),
        Terminal::BudgetBeforeInput => (
            "exhausted_retry_budget",
            "failed",
            INTERRUPTED_BEFORE_INPUT_MESSAGE.to_string(),
        ),
        Terminal::Timeout => ("exceeded_timeout", "failed", TIMEOUT_MESSAGE.to_string()),
    };
    let mut writes = Vec::new();
    // Without a conversation for the submission's scope nothing is converged or marked; the
    // runtime's session open may create the conversation and append the signal to it, which
    // turnscope does not predict (no fixture has that state).
    if let Some(facts) = reads.terminal() {
        writes.extend(record_submission_terminal(row, facts, reason, &message));
    }
    writes.extend(settle_joined(input, outcome));
    writes.extend(settle_with_record(input, reads, outcome, Some(&message)));
    Flue2Plan {
        step,
        why: format!("{why}: settled {outcome} with {message:?}"),
        row_after: Some(settled_after(row, &writes, outcome, Some(&message))),
        writes,
        resume: None,
    }
}

/// What `recordSubmissionTerminal` (CSS:3112) reads of `conv` and the instance, scoped to the
/// submission: its ghost at the leaf converged, else its trailing batch at the leaf
/// marker-settled, and the interrupted calls the signal lists.
fn terminal_facts(input: &ReconcileInput<'_>, conv: &Conversation) -> TerminalFacts {
    let id = input.row.submission_id.as_str();
    let mut repairs = Vec::new();
    let ghost = ghost_at_leaf(conv, Some(id));
    if let Some(g) = ghost {
        repairs.push(converge_write(g));
    }
    // settleTrailingToolBatch: a ghost at the leaf means no batch is at the leaf (a stream starts
    // only after its batch commits), so after convergence the leaf is the aborted entry.
    let mut interrupted: Vec<CallRef> = Vec::new();
    if ghost.is_none() {
        if let Some(w) = batch_at_leaf(conv, Some(id), input.variant) {
            if let Flue2Write::MarkerSettleBatch { markers, .. } = &w {
                interrupted.extend(markers.iter().cloned());
            }
            repairs.push(w);
        }
    }
    // recordedInterruptedTools: every call of the submission's assistants on the active path whose
    // committed result is an error written by a repair marker (earlier ones and these).
    let mut tools = earlier_interrupted_tools(input, conv);
    for c in interrupted {
        if !tools.contains(&c) {
            tools.push(c);
        }
    }
    let present = |slug: &str| {
        input
            .instance
            .is_some_and(|s| s.has_record(&format!("record_{slug}_{id}")))
    };
    TerminalFacts {
        repairs,
        tools,
        aborted_present: present("submission_aborted"),
        interrupted_present: present("submission_interrupted"),
    }
}

/// `recordSubmissionTerminal`'s writes: the repairs, then the signal.
fn record_submission_terminal(
    row: &Flue2SubmissionRow,
    facts: TerminalFacts,
    reason: &'static str,
    message: &str,
) -> Vec<Flue2Write> {
    let id = row.submission_id.as_str();
    let mut writes = facts.repairs;
    let aborted = reason == "aborted";
    let slug = if aborted {
        "submission_aborted"
    } else {
        "submission_interrupted"
    };
    let record_id = format!("record_{slug}_{id}");
    let mut content = message.to_string();
    if !facts.tools.is_empty() {
        content.push_str("\n\nInterrupted tool call(s):\n");
        content.push_str(
            &facts
                .tools
                .iter()
                .map(|t| format!("  - {} ({})", t.name, t.id))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    writes.push(Flue2Write::TerminalSignal {
        signal_type: slug,
        already_present: if aborted {
            facts.aborted_present
        } else {
            facts.interrupted_present
        },
        record_id,
        content,
    });
    writes
}

/// The calls `recordedInterruptedTools` finds already answered by a repair marker.
fn earlier_interrupted_tools(input: &ReconcileInput<'_>, conv: &Conversation) -> Vec<CallRef> {
    let Ok(path) = conv.active_path() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in path {
        let EntryBody::Assistant { tool_calls, .. } = &e.body else {
            continue;
        };
        if e.submission_id.as_deref() != Some(input.row.submission_id.as_str()) {
            continue;
        }
        for call in tool_calls {
            let key = format!(
                "{}_{}",
                encode_canonical_id(&e.id),
                encode_canonical_id(&call.id)
            );
            let result_error = conv
                .entry(&format!("entry_tool_result_{key}"))
                .is_some_and(|r| matches!(r.body, EntryBody::ToolResult { is_error: true, .. }));
            let marker = input
                .instance
                .and_then(|s| s.record(&format!("record_tool_repair_outcome_{key}")))
                .is_some_and(|r| {
                    r.envelope.conversation_id == conv.conversation_id
                        && matches!(&r.body, Body::ToolOutcome { tool_name, is_error: true, .. } if *tool_name == call.name)
                });
            if result_error && marker {
                out.push(CallRef {
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
            }
        }
    }
    out
}

fn settle_joined(input: &Table<'_>, outcome: &'static str) -> Vec<Flue2Write> {
    if input.joined.is_empty() {
        return Vec::new();
    }
    vec![Flue2Write::SettleJoined {
        submission_ids: input.joined.to_vec(),
        outcome,
    }]
}

/// `settleSubmissionWithRecord` for a running row: reserve, append, finalize; the row alone where
/// no conversation of the instance holds an entry of the submission and there is no
/// `default`/`default` conversation.
fn settle_with_record(
    input: &Table<'_>,
    reads: &dyn FoldReads,
    outcome: &'static str,
    error: Option<&str>,
) -> Vec<Flue2Write> {
    let facts = reads.settle();
    if !facts.has_conversation {
        return vec![Flue2Write::SettleRowOnly {
            error: error.map(str::to_string),
        }];
    }
    vec![
        Flue2Write::ReserveSettlement {
            outcome,
            record_id: settled_record_id(input.row),
        },
        Flue2Write::AppendSettled {
            already_present: facts.settled_present,
            record_id: settled_record_id(input.row),
        },
        Flue2Write::Finalize {
            error: error.map(str::to_string),
        },
    ]
}

fn settled_after(
    row: &Flue2SubmissionRow,
    writes: &[Flue2Write],
    outcome: &str,
    error: Option<&str>,
) -> Flue2RowAfter {
    let outbox = writes
        .iter()
        .any(|w| matches!(w, Flue2Write::ReserveSettlement { .. }));
    Flue2RowAfter {
        status: "settled".into(),
        attempt_count: row.attempt_count,
        attempt_id: AttemptChange::Same,
        error: error.map(str::to_string),
        settlement_outcome: outbox.then(|| outcome.to_string()),
        input_applied_cleared: false,
    }
}

/// The pass's pending-settlement step for a `terminalizing` row (`finalizePendingSettlement`):
/// once its lease ended, the reserved record is appended where the stream lacks it (a different
/// record under its id is refused loudly and retried each pass), then the row finalized with the
/// record's error message (`The submission did not complete.` where it has none).
fn finalize_pending(input: &Table<'_>, reads: &dyn FoldReads) -> Flue2Plan {
    let row = input.row;
    if row.lease_expires_at > input.now_ms {
        return Flue2Plan::plain(
            Flue2Step::LeaseHeld,
            format!(
                "terminalizing with its lease held for {} ms more: the pending-settlement step waits for it",
                row.lease_expires_at - input.now_ms
            ),
        );
    }
    if let Some(plan) = pass_fails_plan(row) {
        return plan;
    }
    // `getSubmission` parses the row before anything of the settlement (BP:1173).
    if let Some(plan) = parse_plan(row, input.now_ms) {
        return plan;
    }
    let record: Option<serde_json::Value> = row
        .settlement_record
        .as_deref()
        .and_then(|s| crate::js::lone_surrogates::from_str(s).ok());
    let outcome = record
        .as_ref()
        .and_then(|r| r.get("outcome"))
        .and_then(|o| o.as_str())
        .unwrap_or("")
        .to_string();
    let error = (outcome != "completed").then(|| {
        record
            .as_ref()
            .and_then(|r| r.pointer("/error/message"))
            .and_then(|m| m.as_str())
            .unwrap_or("The submission did not complete.")
            .to_string()
    });
    let record_id = row.settlement_record_id.clone().unwrap_or_default();
    let (present, conflict) = reads.finalize();
    if conflict {
        return Flue2Plan::plain(
            Flue2Step::FinalizeSettlement,
            format!("terminalizing, its lease ended, but the stream holds a different record {record_id}: the runtime refuses (\"Pending settlement does not match its canonical record\") and retries every pass"),
        );
    }
    let writes = vec![
        Flue2Write::AppendSettled {
            record_id,
            already_present: present,
        },
        Flue2Write::Finalize {
            error: error.clone(),
        },
    ];
    Flue2Plan {
        step: Flue2Step::FinalizeSettlement,
        why: format!("terminalizing with its lease ended: the pass finishes the reserved settlement (outcome {outcome})"),
        row_after: Some(Flue2RowAfter {
            status: "settled".into(),
            attempt_count: row.attempt_count,
            attempt_id: AttemptChange::Same,
            error,
            settlement_outcome: Some(outcome),
            input_applied_cleared: false,
        }),
        writes,
        resume: None,
    }
}

#[cfg(test)]
#[path = "reconciler_tests.rs"]
pub(crate) mod tests;
