//! The `flue2` profile: a flue 2.1.0-shaped SQLite journal (conversation streams) for the scale
//! bench's 2.x scenarios. The schema is the runtime's byte for byte (`scale_flue2_schema.rs`);
//! the records are the runtime's shapes (`scale_flue2_records.rs`).
//!
//! Layout, deterministically from the seed: one agent instance per stream
//! (`agents/<agent>/<instance>`, one `default`/`default` root conversation), each a run of
//! submissions whose turns are mostly tool cycles (an assistant with text and 3 calls, 3
//! outcomes, the commit). Instance 0 is the whale: settled submissions, then one stuck
//! submission whose cycles fill the stream to `whale_active` records, ending in a trailing
//! partial batch (3 calls, 1 outcome: `tool_use_unresolved`). Then `expired - 1` instances whose
//! last submission is `running` with an expired lease, stuck at each classification in turn
//! (`STUCK`: claimed before its input, input only, mid-stream, a tool batch with 0, 1 or 3 of 3
//! outcomes, completed unsettled, a retryable error, a terminal error, an overflow) and, across
//! them, each row state the reconciler tests first (none, an abort intent, attempts exhausted,
//! a timeout passed; "none" has no deadline where its agent's would have passed); a queued submission waits behind every third. Then a few live instances
//! (lease a month ahead, a tool batch in flight), then settled instances until the journal holds
//! `entries` records (97% completed, 3% failed on a terminal model error).
//!
//! As the runtime writes: one record to a batch except text deltas (one to three), the first
//! batch `conversation_created` unowned, every other batch carrying its submission and attempt;
//! a batch over 1,048,576 bytes spilled into 524,288-byte chunk rows (CSS:5457-5480); a settled
//! row's `settlement_record` the `submission_settled` record's text. Not written: fold
//! checkpoints (the runtime writes one every 64 batches; readers fold from the origin without
//! it, as the runtime does whenever one is unusable), attachments, submission chunks. The
//! producer is the day's coordinator process (`owner_<ULID>`), its epoch bumped and its sequence
//! restarted when the process changes (the claim; not checked against a multi-process journal).

use std::path::Path;

use rusqlite::{params, Connection};

use super::scale_flue2_records::{js, Calls, Conv, Owner};
use super::scale_flue2_schema::FLUE2_DDL;
use super::scale_options::{session_seed, ScaleOptions, ScaleProfile, ScaleSummary, CRASHES};
use super::scale_profiles::{Profile, PROFILES, WHALE};
use turnscope_demo::build::{DAY, HOUR, MIN, SEC};
use turnscope_demo::ids::{iso, Rng};
use turnscope_demo::DemoError;

/// The stuck shapes, one per classification the runtime answers (the fixtures' scenarios).
pub(crate) const STUCK: [&str; 10] = [
    "claimed-before-input",
    "input-applied",
    "mid-stream",
    "tool-call-no-outcome",
    "tool-batch-1-of-3",
    "tool-batch-all-outcomes",
    "completed-unsettled",
    "transient-overloaded",
    "terminal-error",
    "overflow",
];

/// The row states the reconciler checks before the classification.
const ROW_STATES: [&str; 4] = [
    "plain",
    "abort-intent",
    "attempts-exhausted",
    "timeout-passed",
];

const TERMINAL: &str = "invalid_request_error: messages.0.content: unsupported content block type";
const OVERLOADED: &str = "overloaded_error: Overloaded";
const OVERFLOW: &str = "prompt is too long: 213462 tokens > 200000 maximum";
/// Live leases run this far past `now`.
const LIVE_LEASE: i64 = 30 * DAY;
/// The runtime's spill threshold and chunk length (code units; the generator writes ASCII).
const SPILL: usize = 1_048_576;
const CHUNK: usize = 524_288;

/// The layout at `factor`: `entries` records in all (1,050,000, about 2 GB, at 1), `expired` stuck heads
/// (the whale's included), a whale of 100,000 records.
pub(crate) fn options(factor: f64, now_ms: i64, seed: u64) -> ScaleOptions {
    let f = |n: f64| (n * factor).round().max(0.0) as usize;
    let expired = f(400.0).max(STUCK.len() * ROW_STATES.len() + 1);
    let whale = f(100_000.0).max(200);
    ScaleOptions {
        seed,
        submissions: 0,
        sessions: 0,
        entries: f(1_050_000.0).max(whale + 50 * expired),
        expired,
        whale_active: whale,
        whale_abandoned: 0,
        now_ms,
        profile: ScaleProfile::Flue2,
    }
}

/// Live instances at `expired` stuck heads.
fn live(expired: usize) -> usize {
    (expired / 20).max(2)
}

/// One submission row as the runtime stores it.
#[derive(Debug, Clone, Default)]
struct Row {
    submission_id: String,
    session_key: String,
    kind: &'static str,
    payload: String,
    status: &'static str,
    accepted_at: i64,
    canonical_ready_at: Option<i64>,
    attempt_id: Option<String>,
    input_applied_at: Option<i64>,
    abort_requested_at: Option<i64>,
    started_at: Option<i64>,
    settled_at: Option<i64>,
    error: Option<String>,
    attempt_count: i64,
    max_attempts: i64,
    timeout_at: i64,
    owner_id: Option<String>,
    lease_expires_at: i64,
    settlement_record_id: Option<String>,
    settlement_record: Option<String>,
}

/// One stored batch.
struct Batch {
    producer: String,
    epoch: i64,
    producer_sequence: i64,
    data: String,
    owner: Option<(String, String)>,
}

/// How an instance ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    Settled,
    Whale,
    Stuck {
        shape: usize,
        state: usize,
        queued: bool,
    },
    Live,
}

/// One instance's stream and rows, generated.
struct Instance {
    path: String,
    agent: String,
    id: String,
    incarnation: String,
    batches: Vec<Batch>,
    rows: Vec<Row>,
    records: usize,
}

struct Gen<'a> {
    c: Conv,
    p: &'a Profile,
    inst: Instance,
    key: String,
    seed: u64,
    /// The current producer (process) and its epoch and next sequence.
    producer: Option<String>,
    epoch: i64,
    next_seq: i64,
}

/// The coordinator process that ran on the day of `ms`.
fn owner_of_day(seed: u64, ms: i64) -> String {
    let day = ms.div_euclid(DAY);
    let mut r = Rng::new(seed ^ (day as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    format!("owner_{}", r.ulid(day * DAY))
}

impl Gen<'_> {
    fn push(&mut self, records: Vec<String>, owner: Option<&Owner>) {
        let producer = owner_of_day(self.seed, self.c.clock);
        if self.producer.as_deref() != Some(producer.as_str()) {
            self.producer = Some(producer.clone());
            self.epoch += 1;
            self.next_seq = 0;
        }
        self.inst.records += records.len();
        self.inst.batches.push(Batch {
            producer,
            epoch: self.epoch,
            producer_sequence: self.next_seq,
            data: format!("[{}]", records.join(",")),
            owner: owner.map(|o| (o.sub.clone(), o.attempt.clone())),
        });
        self.next_seq += 1;
    }

    fn one(&mut self, record: String, o: &Owner) {
        self.push(vec![record], Some(o));
    }

    fn sentence(&mut self, words: usize) -> String {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[(self.c.rng.next_u64() % WORDS.len() as u64) as usize]);
        }
        s.push('.');
        s
    }

    /// A tool's JSON result of about `n` bytes.
    fn output(&mut self, tool: &str, n: usize) -> String {
        let mut text = String::with_capacity(n + 16);
        while text.len() < n {
            let w = self.c.rng.range(6, 14) as usize;
            text.push_str(&self.sentence(w));
            text.push(if self.c.rng.next_u64() % 6 == 0 {
                '\n'
            } else {
                ' '
            });
        }
        format!(
            "{{\"ok\":true,\"tool\":\"{tool}\",\"result\":{}}}",
            js(&text)
        )
    }

    /// A tool output's size: median ~370 B, mean ~1.9 KB, a 20-100 KB tail, and (1 in 20,000)
    /// a 1.1-2.5 MB result whose batch the runtime spills into chunks.
    fn output_size(&mut self) -> usize {
        let x = self.c.rng.next_u64() % 20_000;
        let r = &mut self.c.rng;
        (match x {
            0 => r.range(1_100_000, 2_500_000),
            1..=199 => r.range(20_000, 100_000),
            200..=2_199 => r.range(4_000, 20_000),
            2_200..=8_199 => r.range(500, 4_000),
            _ => r.range(200, 500),
        }) as usize
    }

    fn owner(&mut self, kind: &'static str, sub: &str, attempt: &str) -> Owner {
        Owner {
            kind,
            sub: sub.to_string(),
            attempt: attempt.to_string(),
            op: format!("op_{}", self.c.ulid()),
        }
    }

    /// A model turn: text, then `calls` tool calls; the message completed unless `open_at`
    /// stops it there (0: after the message started, 1: inside its text).
    fn turn(
        &mut self,
        o: &Owner,
        calls: usize,
        stop: &str,
        error: Option<&str>,
    ) -> (String, Calls) {
        let (started, turn, message) = self.c.message_started(o, &self.p.model);
        self.one(started, o);
        if error.is_none() {
            let words = self.c.rng.range(4, 30) as usize;
            let text = self.sentence(words);
            for b in self.c.text_block(o, &turn, &message, 0, &text, false) {
                self.push(b, Some(o));
            }
        }
        let mut ids = Vec::new();
        for k in 0..calls {
            let tool = self.p.tools[(self.c.rng.next_u64() % self.p.tools.len() as u64) as usize];
            let call = format!("toolu_{}", self.c.rng.base62(24));
            let q = self.sentence(3);
            let r = self
                .c
                .tool_call(o, &turn, &message, k + 1, (&call, tool.name), &q);
            self.one(r, o);
            ids.push((call, tool.name));
        }
        let done = self.c.message_completed(o, &turn, &message, stop, error);
        self.one(done, o);
        (
            turn,
            Calls {
                message,
                calls: ids,
            },
        )
    }

    /// `n` of the calls' outcomes recorded (in a shuffled order, as tools finish).
    fn outcomes(&mut self, o: &Owner, turn: &str, c: &Calls, n: usize) {
        let mut order: Vec<usize> = (0..c.calls.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (self.c.rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for &k in order.iter().take(n) {
            let (call, name) = (c.calls[k].0.clone(), c.calls[k].1);
            let size = self.output_size();
            let out = self.output(name, size);
            let r = self.c.tool_outcome(o, turn, &c.message, &call, name, &out);
            self.one(r, o);
        }
    }

    /// A whole tool cycle: the calls, their outcomes, the commit.
    fn cycle(&mut self, o: &Owner) {
        let (turn, c) = self.turn(o, 3, "toolUse", None);
        self.outcomes(o, &turn, &c, 3);
        let r = self.c.commit(o, &turn, &c);
        self.one(r, o);
    }

    /// A new submission's row, accepted now; its attempt claimed.
    fn submission(&mut self, first: bool) -> (Row, Owner) {
        let kind = if self.c.rng.next_u64() % 100 < self.p.direct_pct {
            "direct"
        } else {
            "dispatch"
        };
        let accepted = self.c.clock;
        let sub = format!("sub_{}", self.c.ulid());
        let words = self.c.rng.range(6, 40) as usize;
        let body = self.sentence(words);
        let payload = format!(
            "{{\"kind\":\"{kind}\",\"submissionId\":\"{sub}\",\"agent\":\"{}\",\"id\":\"{}\",\"message\":{{\"kind\":\"user\",\"body\":{}}},\"acceptedAt\":\"{}\"}}",
            self.inst.agent,
            self.inst.id,
            js(&body),
            iso(accepted)
        );
        self.c.clock += self.c.rng.range(2, 20);
        let ready = self.c.clock;
        self.c.clock += self.c.rng.range(1, 15);
        let started = self.c.clock;
        let attempt = format!("attempt_{}", self.c.ulid());
        let owner = owner_of_day(self.seed, started);
        if first {
            let created = self.c.created();
            self.push(vec![created], None);
        }
        let o = self.owner(kind, &sub, &attempt);
        let (retries, budget) = self.p.durability;
        let row = Row {
            submission_id: sub,
            session_key: self.key.clone(),
            kind,
            payload,
            status: "running",
            accepted_at: accepted,
            canonical_ready_at: Some(ready),
            attempt_id: Some(attempt),
            started_at: Some(started),
            attempt_count: 1,
            max_attempts: retries.max(1),
            timeout_at: started + budget,
            owner_id: Some(owner),
            lease_expires_at: started + 30 * SEC,
            ..Row::default()
        };
        self.c.clock += self.c.rng.range(10, 300);
        (row, o)
    }

    /// The input applied: its record, the baseline snapshot (the instance's first), the run.
    fn apply_input(&mut self, row: &mut Row, o: &Owner, first: bool) {
        let body: serde_json::Value =
            serde_json::from_str(&row.payload).expect("the payload is JSON");
        let text = body["message"]["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let r = self.c.input(o, &text);
        self.one(r, o);
        row.input_applied_at = Some(self.c.clock);
        if first {
            let tools: Vec<&str> = self.p.tools.iter().map(|t| t.name).collect();
            let r = self.c.snapshot(o, &tools);
            self.one(r, o);
        }
        let r = self.c.start_run(o);
        self.one(r, o);
    }

    /// The lease as last renewed (every 10 s) by `clock`.
    fn renew(&self, row: &mut Row) {
        let started = row.started_at.unwrap_or(row.accepted_at);
        row.lease_expires_at =
            started + 30 * SEC + (self.c.clock - started) / (10 * SEC) * 10 * SEC;
    }

    /// A settled submission: `cycles` tool cycles and an answer, or a terminal model error.
    fn settled(&mut self, first: bool, cycles: usize, failed: bool) {
        let (mut row, o) = self.submission(first);
        self.apply_input(&mut row, &o, first);
        let reason = if failed {
            self.turn(&o, 0, "error", Some(TERMINAL));
            Some(TERMINAL)
        } else {
            for _ in 0..cycles {
                self.cycle(&o);
            }
            self.turn(&o, 0, "stop", None);
            None
        };
        let (id, record) = self.c.settled(&o, reason);
        self.one(record.clone(), &o);
        self.renew(&mut row);
        self.c.clock += self.c.rng.range(2, 15);
        row.status = "settled";
        row.settled_at = Some(self.c.clock);
        row.error = reason.map(|r| format!("{}({}) failed: {r}", o.kind, o.sub));
        row.settlement_record_id = Some(id);
        row.settlement_record = Some(record);
        self.inst.rows.push(row);
    }

    /// The last submission, stuck in `shape` (an index into `STUCK`) when its process died.
    fn stuck(&mut self, first: bool, shape: usize, prior_cycles: usize) -> Row {
        let (mut row, o) = self.submission(first);
        if shape > 0 {
            self.apply_input(&mut row, &o, first);
        }
        if shape > 2 {
            for _ in 0..prior_cycles {
                self.cycle(&o);
            }
        }
        match shape {
            0 | 1 => {}
            2 => {
                let (started, turn, message) = self.c.message_started(&o, &self.p.model);
                self.one(started, &o);
                let text = self.sentence(20);
                for b in self.c.text_block(&o, &turn, &message, 0, &text, true) {
                    self.push(b, Some(&o));
                }
            }
            3..=5 => {
                let (turn, c) = self.turn(&o, 3, "toolUse", None);
                let n = [0, 1, 3][shape - 3];
                self.outcomes(&o, &turn, &c, n);
            }
            6 => {
                self.turn(&o, 0, "stop", None);
            }
            _ => {
                let e = [OVERLOADED, TERMINAL, OVERFLOW][shape - 7];
                self.turn(&o, 0, "error", Some(e));
            }
        }
        self.renew(&mut row);
        row
    }
}

const WORDS: &[&str] = &[
    "refund",
    "latency",
    "timeout",
    "invoice",
    "deploy",
    "rollback",
    "checkout",
    "quota",
    "webhook",
    "migration",
    "session",
    "cache",
    "replica",
    "billing",
    "coupon",
    "the",
    "a",
    "of",
    "for",
    "order",
    "customer",
    "build",
    "failed",
    "passed",
    "queue",
    "worker",
    "region",
    "shard",
    "retry",
    "status",
    "report",
    "ticket",
    "user",
    "config",
    "error",
    "warning",
    "ok",
    "found",
];

/// Weighted pick of a crash event (index into `CRASHES`), as the other profiles pick them.
fn crash(r: &mut Rng) -> usize {
    let total: u64 = CRASHES.iter().map(|c| c.1).sum();
    let mut x = r.next_u64() % total;
    for (i, c) in CRASHES.iter().enumerate() {
        if x < c.1 {
            return i;
        }
        x -= c.1;
    }
    0
}

/// Generate instance `i` of `heads` (its seed derived from the run's).
fn instance(o: &ScaleOptions, i: usize, head: Head) -> Instance {
    let seed = session_seed(o.seed ^ 0x0066_6c75_6532, i);
    let mut rng = Rng::new(seed);
    let p = match head {
        Head::Whale => &WHALE,
        _ => &PROFILES[(rng.next_u64() % PROFILES.len() as u64) as usize],
    };
    let id = format!("{}-{}", p.prefix, rng.base62(10));
    let now = o.now_ms;
    // When the instance's last submission crashed (stuck heads), else when it began.
    let (start, crash) = match head {
        Head::Stuck { .. } | Head::Whale => {
            let age = CRASHES[crash(&mut rng)].0;
            let crash = now - age;
            (crash - rng.range(10 * MIN, 2 * DAY), crash)
        }
        Head::Live => (now - rng.range(HOUR, 3 * DAY), now),
        Head::Settled => (now - rng.range(2 * HOUR, 60 * DAY), now - HOUR),
    };
    let conversation = format!("conv_{}", rng.ulid(start));
    let incarnation = format!("inc_{}", rng.ulid(start));
    let mut g = Gen {
        c: Conv {
            rng,
            conversation,
            clock: start,
            leaf: None,
        },
        p,
        inst: Instance {
            path: format!("agents/{}/{id}", p.agent),
            agent: p.agent.to_string(),
            id: id.clone(),
            incarnation,
            batches: Vec::new(),
            rows: Vec::new(),
            records: 0,
        },
        key: format!(
            "agent-session:[\"{}\",\"{id}\",\"default\",\"default\"]",
            p.agent
        ),
        seed: o.seed,
        producer: None,
        epoch: 0,
        next_seq: 0,
    };
    let subs = g.c.rng.range(1, 12) as usize;
    let mut first = true;
    for _ in 0..subs {
        if g.c.clock > crash - 20 * MIN {
            break;
        }
        let cycles = g.c.rng.range(0, 6) as usize;
        let failed = g.c.rng.next_u64() % 100 < 3;
        g.settled(first, cycles, failed);
        first = false;
        g.c.clock +=
            g.c.rng
                .range(2 * SEC, 3 * HOUR)
                .min((crash - g.c.clock) / 4);
    }
    match head {
        Head::Settled => {}
        Head::Whale => {
            let (mut row, ow) = g.submission(first);
            g.apply_input(&mut row, &ow, first);
            // Whole cycles up to the whale's size, then the trailing partial batch.
            while g.inst.records + 30 < o.whale_active {
                g.cycle(&ow);
            }
            let (turn, c) = g.turn(&ow, 3, "toolUse", None);
            g.outcomes(&ow, &turn, &c, 1);
            g.renew(&mut row);
            // A budget and a timeout that days of repairs do not exhaust (RUNTIME_WHALE's).
            row.max_attempts = 1_000_000;
            row.timeout_at = row.started_at.unwrap_or(0) + 365 * DAY;
            row.lease_expires_at = row.lease_expires_at.max(crash).min(now - SEC);
            g.inst.rows.push(row);
        }
        Head::Stuck {
            shape,
            state,
            queued,
        } => {
            g.c.clock = g.c.clock.max(crash - g.c.rng.range(5 * SEC, 60 * SEC));
            let prior = g.c.rng.range(0, 4) as usize;
            let mut row = g.stuck(first, shape, prior);
            if shape == 0 {
                row.input_applied_at = None;
            }
            row.lease_expires_at = row.lease_expires_at.max(crash).min(now - SEC);
            let started = row.started_at.unwrap_or(row.accepted_at);
            match ROW_STATES[state] {
                "abort-intent" => row.abort_requested_at = Some(started + 2 * SEC),
                "attempts-exhausted" => {
                    row.max_attempts = 3;
                    row.attempt_count = 3;
                }
                "timeout-passed" => row.timeout_at = started + MIN,
                // Plain: no deadline to pass (an agent without a configured timeout, 0), where
                // the agent's own would have passed since the crash: the classification decides.
                _ if row.timeout_at <= now => row.timeout_at = 0,
                _ => {}
            }
            g.inst.rows.push(row);
            if queued {
                let accepted = crash - g.c.rng.range(SEC, 20 * SEC);
                let sub = format!("sub_{}", g.c.rng.ulid(accepted));
                let payload = format!(
                    "{{\"kind\":\"dispatch\",\"submissionId\":\"{sub}\",\"agent\":\"{}\",\"id\":\"{id}\",\"message\":{{\"kind\":\"user\",\"body\":\"follow-up\"}},\"acceptedAt\":\"{}\"}}",
                    p.agent,
                    iso(accepted)
                );
                g.inst.rows.push(Row {
                    submission_id: sub,
                    session_key: g.key.clone(),
                    kind: "dispatch",
                    payload,
                    status: "queued",
                    accepted_at: accepted,
                    canonical_ready_at: Some(accepted + 3),
                    max_attempts: 10,
                    ..Row::default()
                });
            }
        }
        Head::Live => {
            g.c.clock = g.c.clock.max(now - g.c.rng.range(5 * SEC, 50 * SEC));
            let mut row = g.stuck(first, 4, 1);
            row.lease_expires_at = now + LIVE_LEASE;
            g.inst.rows.push(row);
        }
    }
    g.inst
}

/// What instance `i` ends in: the whale, the stuck heads, the live ones, then settled.
fn head(o: &ScaleOptions, i: usize) -> Head {
    let stuck = o.expired - 1;
    match i {
        0 => Head::Whale,
        i if i <= stuck => {
            let k = i - 1;
            Head::Stuck {
                shape: k % STUCK.len(),
                state: (k / STUCK.len()) % ROW_STATES.len(),
                queued: k % 3 == 2,
            }
        }
        i if i <= stuck + live(o.expired) => Head::Live,
        _ => Head::Settled,
    }
}

/// Write the `flue2` profile's journal to `path` (a new file; the caller checked it).
pub(crate) fn write(
    path: &Path,
    o: &ScaleOptions,
    progress: &mut dyn turnscope_store::progress::Progress,
) -> Result<ScaleSummary, DemoError> {
    let conn = Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;",
    )?;
    for ddl in FLUE2_DDL {
        conn.execute_batch(ddl)?;
    }
    conn.execute_batch("BEGIN")?;
    conn.execute(
        "INSERT INTO flue_meta (key, value) VALUES ('format_version', '1')",
        [],
    )?;
    let mut rows: Vec<Row> = Vec::new();
    let mut summary = ScaleSummary {
        submissions: 0,
        sessions: 0,
        entries: 0,
        expired: 0,
        whale_submission_id: String::new(),
        whale_session_key: String::new(),
        bytes: 0,
    };
    progress.stage("writing streams", Some(o.entries as u64));
    let mut pending = 0usize;
    let mut i = 0;
    while summary.entries < o.entries || i <= o.expired + live(o.expired) {
        let h = head(o, i);
        let inst = instance(o, i, h);
        if h == Head::Whale {
            let last = inst.rows.last().expect("the whale has rows");
            summary.whale_submission_id = last.submission_id.clone();
            summary.whale_session_key = last.session_key.clone();
        }
        pending += insert_instance(&conn, &inst)?;
        summary.entries += inst.records;
        summary.sessions += 1;
        progress.advance(inst.records as u64);
        rows.extend(inst.rows);
        if pending > 256 << 20 {
            conn.execute_batch("COMMIT; BEGIN")?;
            pending = 0;
        }
        i += 1;
    }
    progress.stage("writing submissions", Some(rows.len() as u64));
    // `sequence` follows admission, as the runtime's AUTOINCREMENT does.
    rows.sort_by(|a, b| (a.accepted_at, &a.submission_id).cmp(&(b.accepted_at, &b.submission_id)));
    {
        let mut st = conn.prepare(
            "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, \
             accepted_at, canonical_ready_at, attempt_id, input_applied_at, abort_requested_at, \
             started_at, joined_into, settled_at, error, attempt_count, max_attempts, timeout_at, \
             owner_id, lease_expires_at, settlement_record_id, settlement_record) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULL, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        )?;
        for r in &rows {
            st.execute(params![
                r.submission_id,
                r.session_key,
                r.kind,
                r.payload,
                r.status,
                r.accepted_at,
                r.canonical_ready_at,
                r.attempt_id,
                r.input_applied_at,
                r.abort_requested_at,
                r.started_at,
                r.settled_at,
                r.error,
                r.attempt_count,
                r.max_attempts,
                r.timeout_at,
                r.owner_id,
                r.lease_expires_at,
                r.settlement_record_id,
                r.settlement_record,
            ])?;
            progress.advance(1);
        }
    }
    conn.execute_batch("COMMIT")?;
    summary.submissions = rows.len();
    summary.expired = rows
        .iter()
        .filter(|r| {
            r.status == "running" && 0 < r.lease_expires_at && r.lease_expires_at < o.now_ms
        })
        .count();
    // The runtime's file as the fixtures hold it: rollback journal, 4,096-byte pages.
    conn.execute_batch("PRAGMA journal_mode=DELETE")?;
    conn.close().map_err(|(_, e)| DemoError::Sqlite(e))?;
    summary.bytes = std::fs::metadata(path).map_err(DemoError::Io)?.len();
    Ok(summary)
}

/// Insert one instance's stream row and batches (spilling as the runtime does); the bytes.
fn insert_instance(conn: &Connection, inst: &Instance) -> Result<usize, DemoError> {
    let last = inst.batches.last();
    conn.prepare_cached(
        "INSERT INTO flue_conversation_streams (path, identity_json, next_offset, producer_id, \
         producer_epoch, next_producer_sequence, incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        inst.path,
        format!(
            "{{\"agentName\":\"{}\",\"instanceId\":\"{}\"}}",
            inst.agent, inst.id
        ),
        inst.batches.len() as i64,
        last.map(|b| b.producer.as_str()),
        last.map_or(0, |b| b.epoch),
        last.map_or(0, |b| b.producer_sequence + 1),
        inst.incarnation,
    ])?;
    let mut bytes = 0;
    let mut st = conn.prepare_cached(
        "INSERT INTO flue_conversation_stream_batches (path, seq, producer_id, producer_epoch, \
         producer_sequence, data, submission_id, attempt_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut chunks = conn.prepare_cached(
        "INSERT INTO flue_conversation_stream_batch_chunks (path, seq, chunk_index, chunk_count, \
         data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (seq, b) in inst.batches.iter().enumerate() {
        bytes += b.data.len();
        let spilled;
        let data = if b.data.len() > SPILL {
            debug_assert!(b.data.is_ascii());
            let parts: Vec<&str> = b
                .data
                .as_bytes()
                .chunks(CHUNK)
                .map(|c| std::str::from_utf8(c).expect("ASCII"))
                .collect();
            for (k, part) in parts.iter().enumerate() {
                chunks.execute(params![
                    inst.path,
                    seq as i64,
                    k as i64,
                    parts.len() as i64,
                    part
                ])?;
            }
            spilled = format!("{{\"$flueChunkCount\":{}}}", parts.len());
            spilled.as_str()
        } else {
            b.data.as_str()
        };
        st.execute(params![
            inst.path,
            seq as i64,
            b.producer,
            b.epoch,
            b.producer_sequence,
            data,
            b.owner.as_ref().map(|x| x.0.as_str()),
            b.owner.as_ref().map(|x| x.1.as_str()),
        ])?;
    }
    Ok(bytes)
}
