//! The fold of a stream's records into conversations, as flue 2.1.0's reducer does it
//! (`applyConversationRecord`, `dist/dispatch-Dohpn4Ea.mjs:322–625`, and its helpers at
//! 805–1000): the same entries, the same active leaf, the same in-progress messages and
//! uncommitted tool outcomes, and the same refusals, with the runtime's own reason text, for a
//! record that breaks an invariant (the runtime then cannot load the instance at all).
//!
//! Not ported yet (the records are accepted, as the runtime accepts them when valid, but their
//! own checks are not made): task and action conversations' identity checks, retained child
//! conversations, resource snapshots' tool additions, response metadata and data parts beyond
//! their submission checks, attachments. A reused record id is compared by its `JSON.stringify`
//! text, as the runtime compares it (`digest.rs`: JavaScript's key order and numbers).

use std::collections::HashSet;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::Value;

use super::kept::{digest, Kept};
use super::records::{BlockKind, Body, Envelope, Parent, Record, CHILD_IDENTITY};
use super::records_text::ReadRecord;
use super::state::{
    Block, Conversation, Entry, EntryBody, FoldError, InProgressMessage, ToolCallRef,
    UncommittedOutcome,
};

/// Why [`InstanceState::apply_read`] did not fold a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadRefusal {
    /// The runtime's reducer refuses it.
    Fold(FoldError),
    /// Its id repeats a record folded before, and one of the two was read without its digest
    /// ([`super::read_batch_undigested`]): whether they are the same record is not known. Read
    /// the stream again with digests ([`super::read_batch`]).
    Undigested,
}

impl ReadRefusal {
    /// As a [`FoldError`], for folds that take every record's digest and so never meet
    /// [`ReadRefusal::Undigested`] but where a state they continue was read without them.
    fn into_fold_error(self, record: &Record) -> FoldError {
        match self {
            ReadRefusal::Fold(e) => e,
            ReadRefusal::Undigested => FoldError {
                record_id: record.envelope.id.clone(),
                record_type: record.envelope.record_type.clone(),
                reason: "its id repeats a record read without its digest: read the stream again \
                         with digests"
                    .into(),
            },
        }
    }
}

/// The folded state of one stream (one agent instance).
#[derive(Debug, Clone, Default)]
pub struct InstanceState {
    /// In the order they were created.
    pub conversations: Vec<Conversation>,
    /// `recordsById`: every record folded so far (less those the runtime forgets), by id,
    /// kept as [`Kept`]: envelope and typed body, the JSON itself only where it is read again.
    /// foldhash, not std's SipHash: a whale's stream has 100,000 records, each looked up and
    /// inserted once.
    records: foldhash::HashMap<String, Kept>,
    /// The `seq` of the batch whose records are being folded ([`Self::begin_batch`]).
    batch_seq: Option<i64>,
}

impl InstanceState {
    pub fn new() -> InstanceState {
        InstanceState::default()
    }

    /// The state of a whole stream: its batches' records, in order.
    pub fn fold<'a>(records: impl IntoIterator<Item = &'a Record>) -> Result<Self, FoldError> {
        let mut state = InstanceState::new();
        for record in records {
            state.apply(record)?;
        }
        Ok(state)
    }

    /// [`InstanceState::fold`] of a stream's batches (`seq` and records) the caller gives up:
    /// each record is kept (`recordsById`) without a copy, so a long stream is folded as it is
    /// read, at the cost of one record tree held per record, not two; each call keeps its
    /// batch's `seq` ([`Self::begin_batch`]).
    pub fn fold_owned(
        batches: impl IntoIterator<Item = (i64, Vec<Record>)>,
    ) -> Result<Self, FoldError> {
        let mut state = InstanceState::new();
        for (seq, records) in batches {
            state.begin_batch(seq);
            for record in records {
                state.apply_owned(record)?;
            }
            state.end_batch();
        }
        Ok(state)
    }

    /// The records folded next are those of the stream batch `seq`: each tool call they record
    /// keeps it ([`super::ToolCallRef::batch_seq`]), until [`Self::end_batch`].
    pub fn begin_batch(&mut self, seq: i64) {
        self.batch_seq = Some(seq);
    }

    /// The batch begun is folded: a record folded after it (outside any batch) keeps no `seq`.
    pub fn end_batch(&mut self) {
        self.batch_seq = None;
    }

    /// The conversation of a `harness`/`session` scope (the runtime's `conversationScopes`).
    pub fn conversation_for_scope(&self, harness: &str, session: &str) -> Option<&Conversation> {
        self.conversations
            .iter()
            .find(|c| c.harness == harness && c.session == session)
    }

    /// A record folded so far and read again, by id (the runtime's `recordsById`, read by its
    /// `getRecord`): a tool outcome not committed yet, a repair marker's tool outcome, a
    /// settlement ([`Kept`]); `None` for any other record, folded or not ([`Self::has_record`]
    /// tells). Its `raw` JSON is kept only for `submission_settled` records; every other
    /// record's `raw` reads as `null`.
    pub fn record(&self, id: &str) -> Option<&Record> {
        self.records.get(id).and_then(|k| k.record.as_deref())
    }

    /// Whether a record of id `id` was folded and is still in `recordsById` (the runtime's
    /// `hasRecord`): the recovery paths look their deterministic record ids up before appending.
    pub fn has_record(&self, id: &str) -> bool {
        self.records.contains_key(id)
    }

    /// Fold one record (the runtime's `applyConversationRecord`). On an error the state may be
    /// partly changed, as the runtime's in-place load leaves it (it discards it).
    pub fn apply(&mut self, record: &Record) -> Result<(), FoldError> {
        // The fold moves what it keeps out of a record's body (a delta's text, a completion's
        // usage): it folds a copy, which it then keeps.
        self.apply_owned(record.clone())
    }

    /// [`InstanceState::apply`], keeping `record` itself rather than a copy.
    pub fn apply_owned(&mut self, mut record: Record) -> Result<(), FoldError> {
        let d = digest(&record.raw);
        if self
            .check_and_apply(&mut record, d)
            .map_err(|e| e.into_fold_error(&record))?
        {
            let (id, kept) = Kept::keyed(record, d);
            self.records.insert(id, kept);
        }
        Ok(())
    }

    /// [`InstanceState::apply_owned`] of a record read from its text
    /// ([`super::records_text::read_batch`]): its digest was taken as it was read, and its
    /// `raw` holds the fields the fold reads. Read without its digest
    /// ([`super::read_batch_undigested`]), it folds alike unless its id repeats one folded before
    /// ([`ReadRefusal::Undigested`]).
    pub fn apply_read(&mut self, read: ReadRecord) -> Result<(), ReadRefusal> {
        let ReadRecord { mut record, digest } = read;
        if self.check_and_apply(&mut record, digest)? {
            let (id, kept) = Kept::keyed(record, digest);
            self.records.insert(id, kept);
        }
        Ok(())
    }

    /// The fold of `record` but for keeping it: whether it is new (to be kept) or a repeat of an
    /// accepted record (already kept, nothing changed).
    fn check_and_apply(
        &mut self,
        record: &mut Record,
        record_digest: u128,
    ) -> Result<bool, ReadRefusal> {
        let Record {
            envelope,
            body,
            raw,
        } = record;
        let env = &*envelope;
        let fail = |reason: String| {
            ReadRefusal::Fold(FoldError {
                record_id: env.id.clone(),
                record_type: env.record_type.clone(),
                reason,
            })
        };
        if let Some(accepted) = self.records.get(&env.id) {
            if accepted.digest == ReadRecord::UNDIGESTED || record_digest == ReadRecord::UNDIGESTED
            {
                return Err(ReadRefusal::Undigested);
            }
            // The same `JSON.stringify` text, as the runtime compares (its stubs by a 64-bit hash
            // of it): by digest, which counts key order and numbers as JavaScript does.
            let same = accepted.digest == record_digest;
            if same {
                return Ok(false);
            }
            return Err(fail(format!(
                "Record id \"{}\" was reused with different content.",
                env.id
            )));
        }
        if !js_number_is(&env.v, 1) {
            return Err(fail(format!(
                "Record version \"{}\" is unsupported.",
                js_string(&env.v)
            )));
        }
        if let Body::ConversationCreated {
            kind,
            parent_conversation_id,
        } = &*body
        {
            if kind == "root" {
                if CHILD_IDENTITY.iter().any(|k| raw.get(k).is_some()) {
                    return Err(fail(
                        "Root conversation creation contains child identity fields.".into(),
                    ));
                }
            } else if kind != "task" && kind != "action" {
                return Err(fail(
                    "Action conversation creation has invalid discriminated identity.".into(),
                ));
            }
            if self.index_of(&env.conversation_id).is_some() {
                return Err(fail(format!(
                    "Conversation \"{}\" is already initialized.",
                    env.conversation_id
                )));
            }
            if let Some(owner) = self.conversation_for_scope(&env.harness, &env.session) {
                return Err(fail(format!(
                    "Conversation scope is already owned by \"{}\".",
                    owner.conversation_id
                )));
            }
            if let Some(parent) = parent_conversation_id {
                if self.index_of(parent).is_none() {
                    return Err(fail(format!(
                        "Parent conversation \"{parent}\" does not exist."
                    )));
                }
            }
            self.conversations.push(Conversation {
                conversation_id: env.conversation_id.clone(),
                kind: kind.clone(),
                harness: env.harness.clone(),
                session: env.session.clone(),
                parent_conversation_id: parent_conversation_id.clone(),
                entries: Default::default(),
                active_leaf_id: None,
                in_progress: Vec::new(),
                uncommitted_outcomes: Vec::new(),
                last_assistant_by_submission: Default::default(),
                model: None,
                kept_path: Default::default(),
            });
            return Ok(true);
        }
        let Some(index) = self.index_of(&env.conversation_id) else {
            return Err(fail(format!(
                "Conversation \"{}\" is not initialized.",
                env.conversation_id
            )));
        };
        let conversation = &self.conversations[index];
        if conversation.harness != env.harness || conversation.session != env.session {
            return Err(fail(
                "Conversation scope conflicts with its creation record.".into(),
            ));
        }
        let forget = self.apply_to(index, env, body, raw).map_err(fail)?;
        for id in forget {
            self.records.remove(&id);
        }
        if let Body::ToolResultsCommitted { outcome_ids, .. } = &*body {
            for id in outcome_ids {
                if let Some(k) = self.records.get_mut(id) {
                    k.committed();
                }
            }
        }
        Ok(true)
    }

    fn index_of(&self, conversation_id: &str) -> Option<usize> {
        self.conversations
            .iter()
            .position(|c| c.conversation_id == conversation_id)
    }

    /// The record's effect on conversation `index`; the ids of records the runtime drops from
    /// `recordsById` (an in-progress message's block records once it completes or its submission
    /// settles). Errors are the runtime's reason text.
    ///
    /// What an entry or a block keeps of the record's body is moved out of it where the record
    /// itself is not kept (a delta's text, a completion's usage), after every check.
    fn apply_to(
        &mut self,
        index: usize,
        env: &Envelope,
        body: &mut Body,
        raw: &Value,
    ) -> Result<Vec<String>, String> {
        let batch_seq = self.batch_seq;
        let records = &self.records;
        let conversation = &mut self.conversations[index];
        let c = &mut *conversation;
        match body {
            Body::UserMessage {
                message_id,
                parent_id,
                content,
            } => append_entry(
                c,
                &env.record_type,
                Entry {
                    id: std::mem::take(message_id),
                    parent_id: std::mem::replace(parent_id, Parent::Undefined),
                    submission_id: env.submission_id.clone(),
                    body: EntryBody::User {
                        content: std::mem::take(content),
                    },
                },
            )?,
            Body::Signal {
                message_id,
                parent_id,
                signal_type,
            } => append_entry(
                c,
                &env.record_type,
                Entry {
                    id: std::mem::take(message_id),
                    parent_id: std::mem::replace(parent_id, Parent::Undefined),
                    submission_id: env.submission_id.clone(),
                    body: EntryBody::Signal {
                        signal_type: std::mem::take(signal_type),
                    },
                },
            )?,
            Body::AssistantMessageStarted {
                message_id,
                parent_id,
            } => {
                assert_parent(c, parent_id)?;
                if !parent_id.is(c.active_leaf_id.as_deref()) {
                    return Err(format!(
                        "Assistant parent \"{}\" is not the conversation tail. Appends are linear.",
                        parent_id.js()
                    ));
                }
                if c.has_entry_or_in_progress(message_id) {
                    return Err(format!("Assistant entry \"{message_id}\" already exists."));
                }
                if c.has_uncommitted_tool_batch_at_leaf() {
                    return Err(
                        "Cannot advance the conversation while a tool batch is uncommitted.".into(),
                    );
                }
                c.in_progress.push(InProgressMessage {
                    message_id: message_id.clone(),
                    parent_id: parent_id.clone(),
                    submission_id: env.submission_id.clone(),
                    turn_id: env.turn_id.clone(),
                    blocks: Vec::new(),
                    applied_record_ids: Vec::new(),
                });
                if let Some(m) = raw
                    .get("modelInfo")
                    .and_then(|i| i.get("model"))
                    .and_then(Value::as_str)
                {
                    c.model = Some(m.to_string());
                }
                if raw.get("responseMetadata").is_some_and(|m| !m.is_null())
                    && env.submission_id.is_none()
                {
                    return Err("Response metadata requires a tracked submission.".into());
                }
            }
            Body::BlockStarted {
                kind,
                message_id,
                block_id,
                block_index,
            } => start_block(
                in_progress(c, message_id)?,
                &env.id,
                Block {
                    block_id: std::mem::take(block_id),
                    block_index: 0,
                    kind: *kind,
                    deltas: Vec::new(),
                    completed: false,
                    tool_call: None,
                },
                block_index,
            )?,
            Body::ToolCall {
                message_id,
                block_id,
                block_index,
                tool_call_id,
                name,
            } => start_block(
                in_progress(c, message_id)?,
                &env.id,
                Block {
                    block_id: std::mem::take(block_id),
                    block_index: 0,
                    kind: BlockKind::ToolCall,
                    deltas: Vec::new(),
                    completed: false,
                    tool_call: Some(ToolCallRef {
                        id: std::mem::take(tool_call_id),
                        name: std::mem::take(name),
                        batch_seq,
                    }),
                },
                block_index,
            )?,
            Body::Delta {
                kind,
                message_id,
                block_id,
                sequence,
                delta,
            } => {
                let message = in_progress(c, message_id)?;
                let block = open_block(message, block_id, *kind)?;
                if !js_number_is(sequence, block.deltas.len()) {
                    return Err(format!(
                        "Expected delta sequence {}, received {}.",
                        block.deltas.len(),
                        js_string(sequence)
                    ));
                }
                block.deltas.push(std::mem::take(delta));
                message.applied_record_ids.push(env.id.clone());
            }
            Body::BlockCompleted {
                kind,
                message_id,
                block_id,
                delta_count,
            } => {
                let message = in_progress(c, message_id)?;
                let block = open_block(message, block_id, *kind)?;
                if !js_number_is(delta_count, block.deltas.len()) {
                    return Err(format!(
                        "Completion expected {} deltas but replay has {}.",
                        js_string(delta_count),
                        block.deltas.len()
                    ));
                }
                block.completed = true;
                message.applied_record_ids.push(env.id.clone());
            }
            Body::MessageCompleted {
                message_id,
                stop_reason,
                error,
                usage,
            } => {
                let at = in_progress_at(c, message_id)?;
                let message = &c.in_progress[at];
                if let Some(open) = message
                    .blocks
                    .iter()
                    .find(|b| b.kind != BlockKind::ToolCall && !b.completed)
                {
                    return Err(format!(
                        "Assistant block \"{}\" is not complete.",
                        open.block_id
                    ));
                }
                let mut blocks: Vec<&Block> = message.blocks.iter().collect();
                blocks.sort_by_key(|b| b.block_index);
                let text = blocks
                    .iter()
                    .filter(|b| b.kind == BlockKind::Text)
                    .map(|b| b.deltas.concat())
                    .collect::<String>();
                let tool_calls = blocks.iter().filter_map(|b| b.tool_call.clone()).collect();
                // The message is checked where it is and then taken out of `in_progress`, not
                // copied first (a copy of its deltas and record ids, dropped at once).
                let parent_id = message.parent_id.clone();
                if !message_id.starts_with("entry_") {
                    return Err("Graph entry ids must use the \"entry_\" prefix.".into());
                }
                if c.has_entry(message_id) {
                    return Err(format!("Graph entry \"{message_id}\" already exists."));
                }
                assert_parent(c, &parent_id)?;
                if !parent_id.is(c.active_leaf_id.as_deref()) {
                    return Err("Assistant parent is no longer the conversation tail.".into());
                }
                // Started messages have distinct ids (`assistant_message_started` refuses one in
                // progress), so this removes what the runtime's filter by id removes.
                let message = c.in_progress.remove(at);
                c.commit(Entry {
                    id: message_id.clone(),
                    parent_id,
                    submission_id: message.submission_id.clone(),
                    body: EntryBody::Assistant {
                        stop_reason: stop_reason.clone(),
                        error_message: error.clone(),
                        text,
                        tool_calls,
                        usage: usage.take(),
                    },
                });
                if let Some(submission) = &message.submission_id {
                    c.last_assistant_by_submission
                        .insert(submission.clone(), message_id.clone());
                }
                return Ok(message.applied_record_ids);
            }
            Body::ToolOutcome {
                assistant_message_id,
                tool_call_id,
                tool_name,
                is_error,
                terminate,
            } => {
                let Some(Entry {
                    body: EntryBody::Assistant { tool_calls, .. },
                    ..
                }) = c.entry(assistant_message_id)
                else {
                    return Err(format!(
                        "Tool outcome assistant \"{assistant_message_id}\" does not exist."
                    ));
                };
                if tool_calls
                    .iter()
                    .find(|call| call.id == *tool_call_id)
                    .is_none_or(|call| call.name != *tool_name)
                {
                    return Err("Tool outcome does not match its assistant tool request.".into());
                }
                if terminate.as_ref().is_some_and(|t| *t != Value::Bool(true)) {
                    return Err("A tool outcome's terminate flag is written only as true.".into());
                }
                if c.uncommitted_outcomes.iter().any(|o| {
                    o.assistant_message_id == *assistant_message_id
                        && o.tool_call_id == *tool_call_id
                }) {
                    return Err(format!(
                        "Tool outcome for \"{tool_call_id}\" already exists."
                    ));
                }
                c.uncommitted_outcomes.push(UncommittedOutcome {
                    record_id: env.id.clone(),
                    assistant_message_id: assistant_message_id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    is_error: *is_error,
                });
            }
            Body::ToolResultsCommitted {
                assistant_message_id,
                parent_id,
                outcome_ids,
            } => {
                let calls = match c.entry(assistant_message_id) {
                    Some(
                        entry @ Entry {
                            body: EntryBody::Assistant { tool_calls, .. },
                            ..
                        },
                    ) if entry.is_tool_batch_assistant() => tool_calls.clone(),
                    _ => {
                        return Err(
                            "Committed tool results require a completed tool-call assistant."
                                .into(),
                        )
                    }
                };
                if !parent_id.is(Some(assistant_message_id))
                    || !parent_id.is(c.active_leaf_id.as_deref())
                {
                    return Err(
                        "Committed tool results must extend their active assistant parent.".into(),
                    );
                }
                let distinct: HashSet<&String> = outcome_ids.iter().collect();
                if outcome_ids.len() != calls.len() || distinct.len() != calls.len() {
                    return Err("Committed tool results must reference every assistant tool call exactly once.".into());
                }
                let mut outcomes = Vec::new();
                for (outcome_id, call) in outcome_ids.iter().zip(&calls) {
                    let matches = records
                        .get(outcome_id)
                        .and_then(|k| k.record.as_deref())
                        .and_then(|k| match &k.body {
                            Body::ToolOutcome {
                                assistant_message_id: a,
                                tool_call_id,
                                tool_name,
                                is_error,
                                terminate,
                            } if k.envelope.conversation_id == env.conversation_id
                                && k.envelope.harness == env.harness
                                && k.envelope.session == env.session
                                && a == assistant_message_id
                                && *tool_call_id == call.id
                                && *tool_name == call.name
                                && c.uncommitted_outcomes.iter().any(|o| {
                                    o.assistant_message_id == *assistant_message_id
                                        && o.tool_call_id == call.id
                                        && o.record_id == *outcome_id
                                }) =>
                            {
                                Some((
                                    tool_call_id.clone(),
                                    tool_name.clone(),
                                    *is_error,
                                    terminate,
                                ))
                            }
                            _ => None,
                        });
                    let Some((tool_call_id, tool_name, is_error, terminate)) = matches else {
                        return Err("Committed tool outcome references do not match assistant tool-call order.".into());
                    };
                    outcomes.push((
                        tool_call_id,
                        tool_name,
                        is_error,
                        terminate.as_ref() == Some(&Value::Bool(true)),
                    ));
                }
                let mut parent = parent_id.clone();
                for (tool_call_id, tool_name, is_error, terminate) in outcomes {
                    // entry_tool_result_<b64url(assistant id)>_<b64url(call id)>, in one string.
                    let mut entry_id = String::with_capacity(
                        20 + (assistant_message_id.len() + tool_call_id.len()).div_ceil(3) * 4,
                    );
                    entry_id.push_str("entry_tool_result_");
                    URL_SAFE_NO_PAD.encode_string(assistant_message_id.as_bytes(), &mut entry_id);
                    entry_id.push('_');
                    URL_SAFE_NO_PAD.encode_string(tool_call_id.as_bytes(), &mut entry_id);
                    assert_entry_append(c, &env.record_type, &entry_id, &parent)?;
                    c.commit(Entry {
                        id: entry_id.clone(),
                        parent_id: parent,
                        submission_id: env.submission_id.clone(),
                        body: EntryBody::ToolResult {
                            tool_call_id: tool_call_id.clone(),
                            tool_name,
                            is_error,
                            terminate,
                        },
                    });
                    parent = Parent::Id(entry_id);
                    c.uncommitted_outcomes.retain(|o| {
                        !(o.assistant_message_id == *assistant_message_id
                            && o.tool_call_id == tool_call_id)
                    });
                }
            }
            Body::Compaction {
                entry_id,
                parent_id,
                first_kept_entry_id,
                source_leaf_id,
            } => {
                if !c.has_entry(first_kept_entry_id) {
                    return Err(format!(
                        "Compaction first-kept entry \"{first_kept_entry_id}\" does not exist."
                    ));
                }
                if !c.has_entry(source_leaf_id) {
                    return Err(format!(
                        "Compaction source leaf \"{source_leaf_id}\" does not exist."
                    ));
                }
                if !parent_id.is(Some(source_leaf_id))
                    || c.active_leaf_id.as_deref() != Some(source_leaf_id.as_str())
                {
                    return Err("Compaction source leaf must be its active parent.".into());
                }
                if !path_to(c, source_leaf_id)
                    .iter()
                    .any(|id| id == first_kept_entry_id)
                {
                    return Err("Compaction first-kept entry is not on the source path.".into());
                }
                append_entry(
                    c,
                    &env.record_type,
                    Entry {
                        id: entry_id.clone(),
                        parent_id: parent_id.clone(),
                        submission_id: env.submission_id.clone(),
                        body: EntryBody::Compaction {
                            first_kept_entry_id: first_kept_entry_id.clone(),
                        },
                    },
                )?;
            }
            Body::SubmissionSettled => {
                let Some(submission) = &env.submission_id else {
                    return Err("A submission settlement requires its submissionId.".into());
                };
                let mut forget = Vec::new();
                c.in_progress.retain(|m| {
                    let settled = m.submission_id.as_ref() == Some(submission);
                    if settled {
                        forget.extend(m.applied_record_ids.iter().cloned());
                    }
                    !settled
                });
                c.last_assistant_by_submission.remove(submission);
                return Ok(forget);
            }
            Body::ConversationCreated { .. } => unreachable!("handled by apply"),
            Body::Other => match env.record_type.as_str() {
                "tool_step_settled" => {
                    let present = |k: &str| {
                        raw.get(k)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                    };
                    if !present("toolCallId") || !present("stepName") {
                        return Err("A tool step memo requires its toolCallId and stepName.".into());
                    }
                }
                "message_metadata" if env.submission_id.is_none() => {
                    return Err("Response metadata requires a tracked submission.".into());
                }
                "message_data_write" => {
                    let Some(submission) = &env.submission_id else {
                        return Err("Message data writes require a tracked submission.".into());
                    };
                    if !c.last_assistant_by_submission.contains_key(submission) {
                        return Err(
                            "Message data writes require a completed assistant step to anchor to."
                                .into(),
                        );
                    }
                }
                _ => {}
            },
        }
        Ok(Vec::new())
    }
}

fn in_progress<'a>(
    c: &'a mut Conversation,
    message_id: &str,
) -> Result<&'a mut InProgressMessage, String> {
    let at = in_progress_at(c, message_id)?;
    Ok(&mut c.in_progress[at])
}

/// Where in `in_progress` the message `message_id` is.
fn in_progress_at(c: &Conversation, message_id: &str) -> Result<usize, String> {
    c.in_progress
        .iter()
        .position(|m| m.message_id == message_id)
        .ok_or_else(|| format!("Assistant message \"{message_id}\" is not in progress."))
}

fn start_block(
    message: &mut InProgressMessage,
    record_id: &str,
    mut block: Block,
    block_index: &Value,
) -> Result<(), String> {
    let Some(index) = js_integer(block_index).filter(|i| *i >= 0) else {
        return Err("Block index must be a non-negative integer.".into());
    };
    block.block_index = index;
    if message.blocks.iter().any(|b| b.block_id == block.block_id) {
        return Err(format!("Block \"{}\" already exists.", block.block_id));
    }
    if message.blocks.iter().any(|b| b.block_index == index) {
        return Err(format!(
            "Block index \"{index}\" already exists in this message."
        ));
    }
    message.blocks.push(block);
    message.applied_record_ids.push(record_id.to_string());
    Ok(())
}

/// An open text or reasoning block of `message` (the checks of `appendDelta`/`completeBlock`).
fn open_block<'a>(
    message: &'a mut InProgressMessage,
    block_id: &str,
    kind: BlockKind,
) -> Result<&'a mut Block, String> {
    let Some(block) = message
        .blocks
        .iter_mut()
        .find(|b| b.block_id == block_id && b.kind == kind)
    else {
        return Err(format!("Block \"{block_id}\" is not {}.", kind.js()));
    };
    if block.completed {
        return Err(format!("Block \"{block_id}\" is already complete."));
    }
    Ok(block)
}

fn assert_parent(c: &Conversation, parent: &Parent) -> Result<(), String> {
    match parent {
        Parent::Null => Ok(()),
        Parent::Id(id) if c.has_entry(id) => Ok(()),
        _ => Err(format!(
            "Parent entry \"{}\" does not exist in this conversation.",
            parent.js()
        )),
    }
}

/// The runtime's `assertEntryAppend`.
fn assert_entry_append(
    c: &Conversation,
    record_type: &str,
    entry_id: &str,
    parent: &Parent,
) -> Result<(), String> {
    if !entry_id.starts_with("entry_") {
        return Err("Graph entry ids must use the \"entry_\" prefix.".into());
    }
    if c.has_entry_or_in_progress(entry_id) {
        return Err(format!("Graph entry \"{entry_id}\" already exists."));
    }
    assert_parent(c, parent)?;
    if !parent.is(c.active_leaf_id.as_deref()) {
        return Err(format!(
            "Entry parent \"{}\" is not the conversation tail \"{}\". Appends are linear.",
            parent.js(),
            c.active_leaf_id.as_deref().unwrap_or("null")
        ));
    }
    if !c.in_progress.is_empty() {
        return Err(
            "Cannot advance the conversation while an assistant message is in progress.".into(),
        );
    }
    if record_type != "tool_results_committed" && c.has_uncommitted_tool_batch_at_leaf() {
        return Err("Cannot advance the conversation while a tool batch is uncommitted.".into());
    }
    Ok(())
}

fn append_entry(c: &mut Conversation, record_type: &str, entry: Entry) -> Result<(), String> {
    assert_entry_append(c, record_type, &entry.id, &entry.parent_id)?;
    c.commit(entry);
    Ok(())
}

/// The ids from the root to `leaf` (the runtime's `pathToLeaf`, which follows parents).
fn path_to(c: &Conversation, leaf: &str) -> Vec<String> {
    let mut path = Vec::new();
    let mut current = c.entry(leaf);
    while let Some(entry) = current {
        if path.len() > c.entries.len() {
            break; // a cycle; the runtime would loop forever, we stop
        }
        path.push(entry.id.clone());
        current = match &entry.parent_id {
            Parent::Id(p) => c.entry(p),
            _ => None,
        };
    }
    path
}

/// `Number.isInteger(v) ? v : None`.
fn js_integer(v: &Value) -> Option<i64> {
    let n = v.as_f64()?;
    (n.fract() == 0.0 && n.abs() < 9.0e15).then_some(n as i64)
}

/// `v === n` for a JavaScript number `n`.
fn js_number_is(v: &Value, n: usize) -> bool {
    v.as_f64().is_some_and(|x| x == n as f64)
}

/// `String(v)` as JavaScript writes it, for the runtime's messages.
fn js_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e21 => format!("{}", x as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Array(_) | Value::Object(_) => "[object Object]".into(),
    }
}

/// The runtime's `encodeCanonicalId`: base64url of the UTF-8 bytes, no padding.
pub(crate) fn base64url(id: &str) -> String {
    URL_SAFE_NO_PAD.encode(id)
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
