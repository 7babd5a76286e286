//! The records of the `flue2` profile, as JSON text in the exact field order flue 2.1.0 writes
//! them (`canonicalEnvelope`, CSS:1213; the fixtures' `flue_conversation_stream_batches.data`):
//! the envelope `v, id, type, conversationId, harness, session, timestamp`, then the owner
//! `submissionId, attemptId, operationId` and, inside a model turn, `turnId`, then the type's own
//! fields. Built by string formatting: the generator writes millions of them.
//!
//! Ids have the runtime's shapes: `record_<ULID>`, `entry_<ULID>`, `block_<ULID>`,
//! `turn_<ULID>`, `op_<ULID>`; the input's `record_<kind>_input_<sub>` and
//! `entry_<kind>_<b64url(sub)>`; a tool outcome's `record_tool_outcome_<b64 assistant>_<b64 call>`,
//! the commit's `record_tool_results_committed_<b64 assistant>` and the result entries
//! `entry_tool_result_<b64 assistant>_<b64 call>` (the fold's own ids); the settlement's
//! `record_<kind>-submission:<sub>:settled`.

use turnscope_core::flue2::classify::encode_canonical_id as b64;
use turnscope_demo::ids::{iso, Rng};
use turnscope_demo::shapes::Model;

/// JSON string literal of `s` (quotes included).
pub(crate) fn js(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The owner of a record: the submission, its attempt and the operation.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    pub kind: &'static str,
    pub sub: String,
    pub attempt: String,
    pub op: String,
}

/// Writes one conversation's records: the clock, the ids, the active leaf.
pub(crate) struct Conv {
    pub rng: Rng,
    pub conversation: String,
    /// Milliseconds; every record advances it a little.
    pub clock: i64,
    /// The active leaf's entry id (the next entry's parent).
    pub leaf: Option<String>,
}

/// A committed or half-written assistant tool cycle's ids.
pub(crate) struct Calls {
    pub message: String,
    pub calls: Vec<(String, &'static str)>,
}

impl Conv {
    pub fn ulid(&mut self) -> String {
        let ms = self.clock;
        self.rng.ulid(ms)
    }

    fn tick(&mut self, lo: i64, hi: i64) -> String {
        self.clock += self.rng.range(lo, hi);
        iso(self.clock)
    }

    fn envelope(&mut self, id: &str, kind: &str, o: &Owner, turn: Option<&str>) -> String {
        let ts = self.tick(1, 40);
        let mut s = format!(
            "{{\"v\":1,\"id\":\"{id}\",\"type\":\"{kind}\",\"conversationId\":\"{}\",\"harness\":\"default\",\"session\":\"default\",\"timestamp\":\"{ts}\",\"submissionId\":\"{}\",\"attemptId\":\"{}\",\"operationId\":\"{}\"",
            self.conversation, o.sub, o.attempt, o.op
        );
        if let Some(t) = turn {
            s.push_str(",\"turnId\":\"");
            s.push_str(t);
            s.push('"');
        }
        s
    }

    fn fresh(&mut self, kind: &str, o: &Owner, turn: Option<&str>) -> String {
        let id = format!("record_{}", self.ulid());
        self.envelope(&id, kind, o, turn)
    }

    /// `conversation_created` (unowned: the stream's first batch).
    pub fn created(&mut self) -> String {
        let ts = self.tick(1, 20);
        let (aff, uid) = (self.ulid(), self.ulid());
        format!(
            "{{\"kind\":\"root\",\"conversationId\":\"{c}\",\"harness\":\"default\",\"session\":\"default\",\"affinityKey\":\"aff_{aff}\",\"createdAt\":\"{ts}\",\"uid\":\"inst_{uid}\",\"v\":1,\"id\":\"record_conversation_created_{c}\",\"type\":\"conversation_created\",\"timestamp\":\"{ts}\"}}",
            c = self.conversation
        )
    }

    /// The submission's input `user_message`; the leaf moves to it.
    pub fn input(&mut self, o: &Owner, body: &str) -> String {
        let id = format!("record_{}_input_{}", o.kind, o.sub);
        let entry = format!("entry_{}_{}", o.kind, b64(&o.sub));
        let mut s = self.envelope(&id, "user_message", o, None);
        let parent = match &self.leaf {
            Some(p) => format!("\"{p}\""),
            None => "null".into(),
        };
        s.push_str(&format!(
            ",\"messageId\":\"{entry}\",\"parentId\":{parent},\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}",
            js(body)
        ));
        self.leaf = Some(entry);
        s
    }

    /// The baseline `resource_snapshot` of the agent's tools.
    pub fn snapshot(&mut self, o: &Owner, tools: &[&str]) -> String {
        let mut s = self.fresh("resource_snapshot", o, None);
        let list: Vec<String> = tools
            .iter()
            .map(|t| {
                format!(
                    "{{\"name\":\"{t}\",\"description\":\"{t} (scale profile tool).\",\"schema\":\"{{\\\"type\\\":\\\"object\\\",\\\"properties\\\":{{\\\"query\\\":{{\\\"type\\\":\\\"string\\\"}}}},\\\"required\\\":[\\\"query\\\"]}}\"}}"
                )
            })
            .collect();
        s.push_str(&format!(
            ",\"baseline\":true,\"snapshot\":{{\"skills\":[],\"tools\":[{}],\"subagents\":[],\"instructionsDigest\":\"{}\"}}}}",
            list.join(","),
            self.rng.hex(16)
        ));
        s
    }

    pub fn start_run(&mut self, o: &Owner) -> String {
        let mut s = self.fresh("agent_start_run", o, None);
        s.push('}');
        s
    }

    /// `assistant_message_started` of a new turn (its parent the leaf); returns the record, the
    /// turn id and the message id.
    pub fn message_started(&mut self, o: &Owner, model: &Model) -> (String, String, String) {
        self.clock += self.rng.range(200, 3_000); // the model's first token
        let turn = format!("turn_{}", self.ulid());
        let message = format!("entry_{}", self.ulid());
        let mut s = self.fresh("assistant_message_started", o, Some(&turn));
        let parent = self.leaf.clone().unwrap_or_default();
        s.push_str(&format!(
            ",\"messageId\":\"{message}\",\"parentId\":\"{parent}\",\"modelInfo\":{{\"api\":\"{}\",\"provider\":\"{}\",\"model\":\"{}\"}}}}",
            model.api, model.provider, model.id
        ));
        (s, turn, message)
    }

    /// A text block: started, its deltas (each batch of deltas one element), and, unless
    /// `open`, completed. Returns the batches.
    pub fn text_block(
        &mut self,
        o: &Owner,
        turn: &str,
        message: &str,
        index: usize,
        text: &str,
        open: bool,
    ) -> Vec<Vec<String>> {
        let block = format!("block_{}", self.ulid());
        let mut out = Vec::new();
        let mut s = self.fresh("assistant_text_started", o, Some(turn));
        s.push_str(&format!(
            ",\"messageId\":\"{message}\",\"blockId\":\"{block}\",\"blockIndex\":{index}}}"
        ));
        out.push(vec![s]);
        // Deltas of ~12-40 characters, one to three to a batch, as the runtime flushes them.
        let bytes = text.as_bytes();
        let mut at = 0;
        let mut seq = 0;
        let mut batch = Vec::new();
        while at < bytes.len() {
            let n = (self.rng.range(12, 40) as usize).min(bytes.len() - at);
            let delta = &text[at..at + n];
            at += n;
            let mut d = self.fresh("assistant_text_delta", o, Some(turn));
            d.push_str(&format!(
                ",\"messageId\":\"{message}\",\"blockId\":\"{block}\",\"sequence\":{seq},\"delta\":{}}}",
                js(delta)
            ));
            seq += 1;
            batch.push(d);
            if batch.len() >= self.rng.range(1, 4) as usize {
                out.push(std::mem::take(&mut batch));
            }
        }
        if !batch.is_empty() {
            out.push(batch);
        }
        if !open {
            let mut c = self.fresh("assistant_text_completed", o, Some(turn));
            c.push_str(&format!(
                ",\"messageId\":\"{message}\",\"blockId\":\"{block}\",\"deltaCount\":{seq}}}"
            ));
            out.push(vec![c]);
        }
        out
    }

    pub fn tool_call(
        &mut self,
        o: &Owner,
        turn: &str,
        message: &str,
        index: usize,
        (call, name): (&str, &str),
        query: &str,
    ) -> String {
        let block = format!("block_{}", self.ulid());
        let mut s = self.fresh("assistant_tool_call", o, Some(turn));
        s.push_str(&format!(
            ",\"messageId\":\"{message}\",\"blockId\":\"{block}\",\"blockIndex\":{index},\"toolCallId\":\"{call}\",\"name\":\"{name}\",\"arguments\":{{\"query\":{}}}}}",
            js(query)
        ));
        s
    }

    /// `assistant_message_completed`; a `stop` or `toolUse` answer becomes the leaf.
    pub fn message_completed(
        &mut self,
        o: &Owner,
        turn: &str,
        message: &str,
        stop: &str,
        error: Option<&str>,
    ) -> String {
        let mut s = self.fresh("assistant_message_completed", o, Some(turn));
        let input = self.rng.range(600, 60_000);
        let output = if error.is_some() {
            0
        } else {
            self.rng.range(5, 900)
        };
        let read = self.rng.range(0, input);
        s.push_str(&format!(
            ",\"messageId\":\"{message}\",\"stopReason\":\"{stop}\",\"usage\":{{\"input\":{input},\"output\":{output},\"cacheRead\":{read},\"cacheWrite\":{input},\"totalTokens\":{},\"cost\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}}",
            input * 2 + output + read
        ));
        if let Some(e) = error {
            s.push_str(&format!(",\"error\":{}", js(e)));
        }
        s.push('}');
        self.leaf = Some(message.to_string());
        s
    }

    /// A recorded `tool_outcome` of `call` (`output` is the tool's JSON result; its text is the
    /// content, as the runtime stores both).
    pub fn tool_outcome(
        &mut self,
        o: &Owner,
        turn: &str,
        message: &str,
        call: &str,
        name: &str,
        output: &str,
    ) -> String {
        self.clock += self.rng.range(10, 2_000); // the tool runs
        let id = format!("record_tool_outcome_{}_{}", b64(message), b64(call));
        let mut s = self.envelope(&id, "tool_outcome", o, Some(turn));
        s.push_str(&format!(
            ",\"assistantMessageId\":\"{message}\",\"toolCallId\":\"{call}\",\"toolName\":\"{name}\",\"isError\":false,\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"output\":{output},\"durationMs\":{}}}",
            js(output),
            self.rng.range(5, 2_000)
        ));
        s
    }

    /// `tool_results_committed` of every call of `c`, in call order; the leaf moves to the
    /// last result entry.
    pub fn commit(&mut self, o: &Owner, turn: &str, c: &Calls) -> String {
        let am = b64(&c.message);
        let id = format!("record_tool_results_committed_{am}");
        let mut s = self.envelope(&id, "tool_results_committed", o, Some(turn));
        let ids: Vec<String> = c
            .calls
            .iter()
            .map(|(call, _)| format!("\"record_tool_outcome_{am}_{}\"", b64(call)))
            .collect();
        s.push_str(&format!(
            ",\"assistantMessageId\":\"{}\",\"parentId\":\"{}\",\"outcomeIds\":[{}]}}",
            c.message,
            c.message,
            ids.join(",")
        ));
        let last = &c.calls.last().expect("a cycle has calls").0;
        self.leaf = Some(format!("entry_tool_result_{am}_{}", b64(last)));
        s
    }

    /// The reserved `submission_settled` record (also the row's `settlement_record`).
    pub fn settled(&mut self, o: &Owner, failed: Option<&str>) -> (String, String) {
        let id = format!("record_{}-submission:{}:settled", o.kind, o.sub);
        let ts = self.tick(2, 20);
        let mut s = format!(
            "{{\"v\":1,\"id\":\"{id}\",\"type\":\"submission_settled\",\"conversationId\":\"{}\",\"harness\":\"default\",\"session\":\"default\",\"timestamp\":\"{ts}\",\"submissionId\":\"{}\",\"attemptId\":\"{}\"",
            self.conversation, o.sub, o.attempt
        );
        match failed {
            None => s.push_str(",\"outcome\":\"completed\"}"),
            Some(reason) => {
                let op = format!("{}({})", o.kind, o.sub);
                s.push_str(&format!(
                    ",\"outcome\":\"failed\",\"error\":{{\"name\":\"FlueError\",\"message\":{},\"type\":\"operation_failed\",\"details\":\"\",\"meta\":{{\"operation\":\"{op}\",\"reason\":{}}}}}}}",
                    js(&format!("{op} failed: {reason}")),
                    js(reason)
                ));
            }
        }
        (id, s)
    }
}
