//! flue 2.x, read-only: a submission of a 2.x journal inspected (its instance's stream folded as
//! the runtime folds it, then classified by the chosen release's classifier) and the documents
//! `list` and `classify` print for it (`show`'s: [`crate::flue2_show`]). SQLite only ([`Flue2SqliteReader`]).
//!
//! Every document names the format (`"format": "flue-2.x"`) and the classifier applied
//! (`flueVersion`, the release asked for, and `classifierVariant`, the first release that
//! classifies that way). What 2.x stores and what was checked against the runtime: docs/flue2.md.

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use turnscope_core::flue2::cost::{submission_cost, Flue2Cost};
use turnscope_core::flue2::{
    classify_conversation_submission, plan_flue2, Conversation, Flue2Classification, Flue2Plan,
    Flue2Step, Flue2SubmissionRow, Flue2Variant, InspectFailure, InstanceState, ReconcileInput,
};
use turnscope_core::recovery::context_window::{resolve, ContextWindow};
use turnscope_store::{Flue2SqliteReader, StoreError};

/// `format` in every 2.x document.
pub const FORMAT: &str = "flue-2.x";

/// Which classifier, and the context window it is asked with.
#[derive(Debug, Clone)]
pub struct Flue2Options {
    /// The release asked for (`--flue-version`, e.g. "2.1.0").
    pub release: String,
    pub variant: Flue2Variant,
    /// The runtime's `contextWindow` (0: no silent-overflow check).
    pub context_window: u64,
}

impl Flue2Options {
    /// `2.1.0`'s classifier, or the release's; `None` for a version that is not a 2.x release
    /// whose classifier turnscope has.
    pub fn for_release(release: &str, context_window: u64) -> Option<Flue2Options> {
        Some(Flue2Options {
            release: release.to_string(),
            variant: Flue2Variant::for_release(release)?,
            context_window,
        })
    }

    /// The context window a submission of `conversation` is classified with: `--context-window`
    /// (or the configuration's) where given, else the well-known model table matched on the
    /// conversation's latest model (`modelInfo.model`), else 0 (beta.7's rule,
    /// `recovery::context_window`).
    pub fn window_for(&self, conversation: Option<&Conversation>) -> ContextWindow {
        resolve(
            (self.context_window > 0).then_some(self.context_window),
            conversation.and_then(|c| c.model.as_deref()),
        )
    }

    /// The variant's name: its first release.
    pub fn variant_name(&self) -> &'static str {
        variant_name(self.variant)
    }

    /// The fields every document starts with.
    pub fn header(&self, schema: &str, format_version: &str) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("schema".into(), json!(schema));
        o.insert("format".into(), json!(FORMAT));
        o.insert("formatVersion".into(), json!(format_version));
        o.insert("flueVersion".into(), json!(self.release));
        o.insert("classifierVariant".into(), json!(self.variant_name()));
        o.insert("contextWindow".into(), json!(self.context_window));
        o
    }

    /// The first line of every text output.
    pub fn header_line(&self, format_version: &str) -> String {
        format!(
            "format: flue 2.x (flue_meta.format_version = {format_version}); classifier: flue {} (variant {}, as {})",
            self.release,
            self.variant_name(),
            self.variant.releases().join(", ")
        )
    }
}

/// The variant's name: the first release that classifies that way.
pub fn variant_name(v: Flue2Variant) -> &'static str {
    v.releases()[0]
}

pub use crate::flue2_fold::{fold_stream, fold_stream_observed, fold_streams, FoldedStream};

/// A submission inspected: its row, its instance's conversation, the classification.
pub struct Inspected<'a> {
    pub row: &'a Flue2SubmissionRow,
    pub stream_path: Option<String>,
    pub conversation: Option<&'a Conversation>,
    /// The instance's folded state (where it folds).
    pub instance: Option<&'a InstanceState>,
    /// The classification, or the reason there is none (a session key the runtime does not
    /// write, a stream it cannot load, the classifier's own `TypeError`).
    pub verdict: Result<Flue2Classification, String>,
    /// Which of those, where there is no classification.
    pub failure: Option<InspectFailure>,
    /// The deliveries joined into this submission and not settled (the reader's `joined_into`):
    /// the runtime settles them before it.
    pub joined: Vec<String>,
    /// What the runtime's recovery does next (`plan_flue2` at the command's clock).
    pub plan: Flue2Plan,
    /// The cost since the input, where it was computed before the stream was let go
    /// ([`Streams::inspect_each`]); else `flue2_cost::cost_of` computes it from `conversation`.
    pub detached_cost: Option<Flue2Cost>,
}

/// An inspection without its stream ([`Streams::inspect_each`]): what a list row shows.
pub struct Detached {
    pub stream_path: Option<String>,
    pub verdict: Result<Flue2Classification, String>,
    pub failure: Option<InspectFailure>,
    pub joined: Vec<String>,
    pub plan: Flue2Plan,
    /// The cost since the input, computed while the stream was held.
    pub cost: Option<Flue2Cost>,
}

impl Detached {
    /// The inspection of `row` (the row it was made of), with no conversation or folded state.
    pub fn attach(self, row: &Flue2SubmissionRow) -> Inspected<'_> {
        Inspected {
            row,
            stream_path: self.stream_path,
            conversation: None,
            instance: None,
            verdict: self.verdict,
            failure: self.failure,
            joined: self.joined,
            plan: self.plan,
            detached_cost: self.cost,
        }
    }
}

impl Inspected<'_> {
    /// The verdict column: `kind` or `resume/<mode>`, else `error`.
    pub fn label(&self) -> String {
        match &self.verdict {
            Ok(c) => c.label(),
            Err(_) => "error".into(),
        }
    }
}

/// Where a row stands, in one word (`list --verdict`'s dispositions, `flue2_select`): every
/// disposition word, in the order a row's life goes.
pub const DISPOSITIONS: [&str; 12] = [
    "pending",
    "live",
    "no-lease",
    "stuck",
    "blocked",
    "terminalizing",
    "completed",
    "failed",
    "aborted",
    "joined",
    "malformed",
    "damaged",
];

/// Where `i`'s row stands, from the step its plan names.
pub fn disposition(i: &Inspected<'_>) -> &'static str {
    match i.plan.step {
        Flue2Step::Queued => "pending",
        Flue2Step::LeaseHeld => "live",
        Flue2Step::NoLease => "no-lease",
        Flue2Step::FinalizeSettlement => "terminalizing",
        Flue2Step::Joined => "joined",
        Flue2Step::Malformed => "malformed",
        Flue2Step::PassFails => "blocked",
        Flue2Step::Settled => settled_word(i.row),
        // A step of the table fires: on a row whose instance the runtime cannot load or
        // classify (step 1 defers it, or a failure past the deadline), the history is damaged.
        _ if i.failure.is_some_and(|f| f != InspectFailure::SessionKey) => "damaged",
        _ => "stuck",
    }
}

/// A settled row's outcome: the reserved settlement's, else failed where the row has an error.
fn settled_word(row: &Flue2SubmissionRow) -> &'static str {
    match row.settlement_outcome().as_deref() {
        Some("aborted") => "aborted",
        Some("failed") => "failed",
        Some("completed") => "completed",
        _ if row.error.is_some() => "failed",
        _ => "completed",
    }
}

/// Folded streams by path, each read once.
#[derive(Default)]
pub struct Streams {
    folded: HashMap<String, FoldedStream>,
    /// The head each stream was folded at ([`Streams::refresh`]'s).
    heads: HashMap<String, (i64, String)>,
}

impl Streams {
    /// Read and fold the stream of every row that names one (not held yet), in one pipeline
    /// ([`fold_streams`]).
    pub fn load<'r>(
        &mut self,
        reader: &Flue2SqliteReader,
        rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>,
    ) -> Result<(), StoreError> {
        let mut paths: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for row in rows {
            if let Some(key) = row.session() {
                let path = key.stream_path();
                if !self.folded.contains_key(&path) && seen.insert(path.clone()) {
                    paths.push(path);
                }
            }
        }
        match paths.as_slice() {
            // One stream (`show`, `classify`): its batches parsed on every core.
            [path] => {
                let f = fold_stream(reader, path)?;
                self.folded.insert(path.clone(), f);
            }
            _ => fold_streams(reader, &paths, |k, f| -> Result<(), StoreError> {
                self.folded.insert(paths[k].clone(), f);
                Ok(())
            })?,
        }
        Ok(())
    }

    /// [`Streams::load`] of the stream at `path`, `observe` seeing each of its batches as it is
    /// folded (what `show` adds: one read). Whether it was read now: a stream already held is
    /// neither read again nor observed.
    pub fn load_observed<F>(
        &mut self,
        reader: &Flue2SqliteReader,
        path: &str,
        observe: F,
    ) -> Result<bool, StoreError>
    where
        F: FnMut(&turnscope_store::BatchView<'_>, Option<&[turnscope_core::flue2::ReadRecord]>)
            + Send,
    {
        if self.folded.contains_key(path) {
            return Ok(false);
        }
        let f = fold_stream_observed(reader, path, observe)?;
        self.folded.insert(path.to_string(), f);
        Ok(true)
    }

    /// The one stream at `path`, folded elsewhere (`fold_streams`).
    pub fn of_one(path: String, folded: FoldedStream) -> Streams {
        Streams {
            folded: HashMap::from([(path, folded)]),
            heads: HashMap::new(),
        }
    }

    pub fn get(&self, path: &str) -> Option<&FoldedStream> {
        self.folded.get(path)
    }

    /// [`Streams::load`] for a reader that lists again and again (the TUI's refresh): keep only
    /// the streams of `rows`, and fold again only those whose head moved since they were folded
    /// (`heads` is [`Flue2SqliteReader::stream_heads`], read in the same snapshot). A stream
    /// with no head row is folded each time (it reads as no batches).
    pub fn refresh<'r>(
        &mut self,
        reader: &Flue2SqliteReader,
        heads: &HashMap<String, (i64, String)>,
        rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>,
    ) -> Result<(), StoreError> {
        let paths = rows
            .into_iter()
            .filter_map(|r| r.session().map(|k| k.stream_path()))
            .collect();
        self.refresh_paths(reader, heads, &paths)
    }

    /// [`Streams::refresh`] for the streams at `paths`.
    pub fn refresh_paths(
        &mut self,
        reader: &Flue2SqliteReader,
        heads: &HashMap<String, (i64, String)>,
        paths: &std::collections::HashSet<String>,
    ) -> Result<(), StoreError> {
        self.folded.retain(|path, _| paths.contains(path));
        self.heads
            .retain(|path, head| paths.contains(path) && heads.get(path) == Some(head));
        for path in paths {
            if self.heads.contains_key(path) && self.folded.contains_key(path) {
                continue;
            }
            let f = fold_stream(reader, path)?;
            self.folded.insert(path.clone(), f);
            if let Some(h) = heads.get(path) {
                self.heads.insert(path.clone(), h.clone());
            }
        }
        Ok(())
    }

    /// `row` classified over its folded stream (which [`Streams::load`] read), and planned at
    /// `now_ms` with its unsettled joined deliveries `joined`.
    pub fn inspect<'a>(
        &'a self,
        row: &'a Flue2SubmissionRow,
        options: &Flue2Options,
        joined: Vec<String>,
        now_ms: i64,
    ) -> Inspected<'a> {
        let (stream_path, conversation, instance, verdict, failure) = self.classify(row, options);
        let plan = plan_flue2(&ReconcileInput {
            row,
            instance,
            conversation,
            classification: match (&verdict, failure) {
                (Ok(c), _) => Ok(c),
                (Err(e), kind) => Err((kind.unwrap_or(InspectFailure::Unloadable), e.as_str())),
            },
            joined: &joined,
            now_ms,
            variant: options.variant,
        });
        Inspected {
            row,
            stream_path,
            conversation,
            instance,
            verdict,
            failure,
            joined,
            plan,
            detached_cost: None,
        }
    }

    /// Every row of `rows` inspected as [`Streams::inspect`] does, one stream at a time: each
    /// row's stream is read and folded, its rows inspected, and the folded stream dropped
    /// before the next is read, so memory holds one stream, not all (`list`). The inspections
    /// keep no conversation: by submission id, what [`Detached::attach`] gives back.
    pub fn inspect_each<'r>(
        reader: &Flue2SqliteReader,
        rows: impl IntoIterator<Item = &'r Flue2SubmissionRow>,
        options: &Flue2Options,
        mut joined: impl FnMut(&Flue2SubmissionRow) -> Vec<String>,
        now_ms: i64,
    ) -> Result<HashMap<String, Detached>, StoreError> {
        let mut out = HashMap::new();
        let rows = rows.into_iter().map(|r| (r, joined(r)));
        Streams::visit_each(reader, rows, options, now_ms, &Streams::default(), |i| {
            let row = i.row;
            let cost = i.conversation.map(|c| {
                let mut owners: Vec<&str> = vec![row.submission_id.as_str()];
                owners.extend(i.joined.iter().map(String::as_str));
                submission_cost(c, &owners)
            });
            out.insert(
                row.submission_id.clone(),
                Detached {
                    stream_path: i.stream_path,
                    verdict: i.verdict,
                    failure: i.failure,
                    joined: i.joined,
                    plan: i.plan,
                    cost,
                },
            );
        })?;
        Ok(out)
    }

    /// Every row of `rows` (with its joined deliveries) inspected at `now_ms` and handed to
    /// `visit`, each stream folded once for all its rows: the rows with no stream first, and
    /// those whose stream `held` holds; then the other streams in one pipeline
    /// ([`fold_streams`]), each stream's rows visited as its fold arrives and the fold dropped.
    /// The paths folded, in order. What `list`, `incidents` and the TUI's list share.
    pub fn visit_each<'r>(
        reader: &Flue2SqliteReader,
        rows: impl IntoIterator<Item = (&'r Flue2SubmissionRow, Vec<String>)>,
        options: &Flue2Options,
        now_ms: i64,
        held: &Streams,
        mut visit: impl FnMut(Inspected<'_>),
    ) -> Result<Vec<String>, StoreError> {
        type Rows<'r> = Vec<(&'r Flue2SubmissionRow, Vec<String>)>;
        let mut by_stream: Vec<(Option<String>, Rows<'r>)> = Vec::new();
        let mut index: HashMap<Option<String>, usize> = HashMap::new();
        for (row, joined) in rows {
            let path = row.session().map(|k| k.stream_path());
            let at = *index.entry(path.clone()).or_insert_with(|| {
                by_stream.push((path, Vec::new()));
                by_stream.len() - 1
            });
            by_stream[at].1.push((row, joined));
        }
        let mut inspect = |streams: &Streams, rows: Rows<'r>| {
            for (row, joined) in rows {
                visit(streams.inspect(row, options, joined, now_ms));
            }
        };
        let none = Streams::default();
        let mut paths = Vec::new();
        let mut to_fold = Vec::new();
        for (path, rows) in by_stream {
            match path {
                None => inspect(&none, rows),
                Some(p) if held.get(&p).is_some() => inspect(held, rows),
                Some(p) => {
                    paths.push(p);
                    to_fold.push(rows);
                }
            }
        }
        fold_streams(reader, &paths, |k, folded| -> Result<(), StoreError> {
            let one = Streams::of_one(paths[k].clone(), folded);
            inspect(&one, std::mem::take(&mut to_fold[k]));
            Ok(())
        })?;
        Ok(paths)
    }

    #[allow(clippy::type_complexity)]
    fn classify<'a>(
        &'a self,
        row: &'a Flue2SubmissionRow,
        options: &Flue2Options,
    ) -> (
        Option<String>,
        Option<&'a Conversation>,
        Option<&'a InstanceState>,
        Result<Flue2Classification, String>,
        Option<InspectFailure>,
    ) {
        let Some(key) = row.session() else {
            return (
                None,
                None,
                None,
                Err(format!(
                    "session_key {:?} is not one the runtime writes",
                    row.session_key
                )),
                Some(InspectFailure::SessionKey),
            );
        };
        let path = key.stream_path();
        let folded = self.folded.get(&path);
        let state = match folded.map(|f| &f.state) {
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                return (
                    Some(path),
                    None,
                    None,
                    Err(format!("the runtime cannot load this instance: {e}")),
                    Some(InspectFailure::Unloadable),
                )
            }
            None => None,
        };
        let conversation = state.and_then(|s| s.conversation_for_scope(&key.harness, &key.session));
        match classify_conversation_submission(
            conversation,
            &row.input_entry_id(),
            options.window_for(conversation).tokens,
            options.variant,
        ) {
            Ok(c) => (Some(path), conversation, state, Ok(c), None),
            Err(e) => (
                Some(path),
                conversation,
                state,
                Err(format!("the runtime's classifier throws: {e}")),
                Some(InspectFailure::ClassifierThrows),
            ),
        }
    }
}

fn instance_json(row: &Flue2SubmissionRow) -> Value {
    match row.session() {
        Some(k) => json!({
            "agent": k.agent_name,
            "instanceId": k.instance_id,
            "harness": k.harness,
            "session": k.session,
        }),
        None => Value::Null,
    }
}

/// The row's fields every document shows.
pub fn row_json(row: &Flue2SubmissionRow, now_ms: i64) -> Value {
    json!({
        "id": row.submission_id,
        "sequence": row.sequence,
        "kind": row.kind,
        "status": row.status,
        "sessionKey": row.session_key,
        "instance": instance_json(row),
        "attempts": row.attempt_count,
        "maxAttempts": row.max_attempts,
        "attemptId": row.attempt_id,
        "owner": row.owner_id,
        "leaseExpiresAt": row.lease_expires_at,
        "leaseExpired": row.lease_expired(now_ms),
        "timeoutAt": row.timeout_at,
        "acceptedAt": row.accepted_at,
        "canonicalReadyAt": row.canonical_ready_at,
        "startedAt": row.started_at,
        "inputAppliedAt": row.input_applied_at,
        "abortRequestedAt": row.abort_requested_at,
        "joinedInto": row.joined_into,
        "settledAt": row.settled_at,
        "settlementRecordId": row.settlement_record_id,
        "settlementOutcome": row.settlement_outcome(),
        "attemptsExhausted": row.attempts_exhausted(),
        "deadlinePassed": row.deadline_passed(now_ms),
        "error": row.error,
        "notUtf8Columns": row.not_utf8,
    })
}

/// The classification as the runtime's (`describeClassification`), with the step that decided,
/// or `{ "error": why }`.
pub fn verdict_json(verdict: &Result<Flue2Classification, String>) -> Value {
    match verdict {
        Ok(c) => json!({
            "label": c.label(),
            "classification": c.to_runtime_json(),
            "explanation": {
                "step": c.explanation.step,
                "rule": c.explanation.rule,
                "entryIds": c.explanation.entry_ids,
            },
            "trailingPartialToolBatch": c.trailing_partial_batch.as_ref().map(|b| {
                b.tool_calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>()
            }),
        }),
        Err(e) => json!({ "label": "error", "error": e }),
    }
}

/// `serde_json::to_value` of a value whose `Serialize` cannot fail (plain data), with a
/// `description` beside its fields.
fn described(value: impl serde::Serialize, description: String) -> Value {
    let mut v = serde_json::to_value(value).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("description".into(), json!(description));
    }
    v
}

/// What the runtime's recovery does next (`plan` in every 2.x document): the step of
/// `reconcileInterruptedSubmission` (`step` 0–7, `null` outside the table), its `name`, the
/// condition that held (`reason`), its `writes` in order, the row as it leaves it (`rowAfter`)
/// and what the resume of a replaced or requeued attempt will do (`resume`).
pub fn plan_json(plan: &Flue2Plan) -> Value {
    json!({
        "step": plan.step.number(),
        "name": plan.step.name(),
        "column": plan.step.column(),
        "reason": plan.why,
        "writes": plan.writes.iter().map(|w| described(w, w.describe())).collect::<Vec<_>>(),
        "rowAfter": plan.row_after,
        "resume": plan.resume.as_ref().map(|r| json!({
            "after": r.after,
            "actions": r.actions.iter().map(|a| described(a, a.describe())).collect::<Vec<_>>(),
            "classification": r.classification,
            "end": described(&r.end, r.end.describe()),
        })),
    })
}

/// `list --json` (`turnscope.flue2.list/1`).
pub fn list_json(
    options: &Flue2Options,
    format_version: &str,
    view: &str,
    rows: &[Inspected<'_>],
    now_ms: i64,
) -> Value {
    let mut o = options.header("turnscope.flue2.list/1", format_version);
    o.insert("view".into(), json!(view));
    o.insert(
        "submissions".into(),
        Value::Array(rows.iter().map(|i| item_json(i, now_ms)).collect()),
    );
    Value::Object(o)
}

/// A row as `list --json` and an export show it: its fields, `verdict`, `disposition`, `plan`.
pub fn item_json(i: &Inspected<'_>, now_ms: i64) -> Value {
    let mut r = row_json(i.row, now_ms);
    if let Some(m) = r.as_object_mut() {
        m.insert("verdict".into(), verdict_json(&i.verdict));
        m.insert("disposition".into(), json!(disposition(i)));
        m.insert("plan".into(), plan_json(&i.plan));
    }
    r
}

/// `classify --json` (`turnscope.flue2.classify/1`).
pub fn classify_json(
    options: &Flue2Options,
    format_version: &str,
    i: &Inspected<'_>,
    now_ms: i64,
) -> Value {
    let mut o = options.header("turnscope.flue2.classify/1", format_version);
    o.insert("submission".into(), row_json(i.row, now_ms));
    o.insert("streamPath".into(), json!(i.stream_path));
    o.insert("inputEntryId".into(), json!(i.row.input_entry_id()));
    o.insert(
        "inputEntryFound".into(),
        json!(i
            .conversation
            .is_some_and(|c| c.has_entry(&i.row.input_entry_id()))),
    );
    if let Value::Object(v) = verdict_json(&i.verdict) {
        o.extend(v);
    }
    o.insert("joinedDeliveries".into(), json!(i.joined));
    o.insert("plan".into(), plan_json(&i.plan));
    // The window the classification was asked with (the header's is the flag's).
    o.insert(
        "contextWindowUsed".into(),
        json!(options.window_for(i.conversation)),
    );
    Value::Object(o)
}
