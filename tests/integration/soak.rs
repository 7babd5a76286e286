//! "A busy runtime" (issue 7): a writer thread that behaves like the flue runtime (busy timeout 0,
//! deferred `BEGIN`, claims, lease renewals, session saves, journal phases, settlements, crashes
//! mid tool batch and its own reconciliation) runs against turnscope refreshing every 200 ms and,
//! in write mode, repairing or failing expired submissions. Afterwards the whole database is
//! checked: entries, positions, leaves, counts, tool results and submission rows.
//!
//! Short configuration in `cargo test`; `TURNSCOPE_SOAK_SECS=60 cargo test --release --test
//! integration soak -- --nocapture` runs each configuration for that long and prints the figures.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use turnscope_core::journal::status::SubmissionStatus;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use serde_json::{json, Value};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::recovery::changes::RowChange;
use turnscope_engine::actions::{plan, ActionKind, ActionPlan, EntryIds};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{ApplyError, AuditInfo, JournalStore, RowFilter, SqliteStore, SqliteWriter};
use turnscope_testkit::{JournalBuilder, SessionBuilder};

/// Read-only configuration: seconds of load in `cargo test`.
const READ_ONLY_SECS: u64 = 3;
/// Write-mode configuration: seconds of load in `cargo test`.
const WRITE_SECS: u64 = 5;
/// Submissions admitted per second of load (spread over the first 70 % of the run).
const SUBMISSIONS_PER_SEC: u64 = 8;
/// Sessions the submissions are spread over (per-session FIFO: one runs at a time).
const SESSIONS: usize = 10;
/// Seed entries per session (one earlier completed exchange).
const SEED_ENTRIES_PER_SESSION: usize = 2;
/// The soak's lease (the runtime's is 30 s), renewal period (the runtime's is 10 s).
const LEASE_MS: i64 = 1_000;
const RENEW_EVERY_MS: i64 = 250;
/// The writer never writes under a lease closer than this to its end, and never renews one:
/// a stalled worker gives its submissions up instead of racing a recovery.
const LEASE_MARGIN_MS: i64 = 300;
/// Writer tick; one step per owned submission per tick.
const TICK_MS: u64 = 15;
/// Concurrent submissions the writer works on.
const MAX_ACTIVE: usize = 5;
/// turnscope's refresh period (read-only thread) and action-pass period (write thread).
const REFRESH_MS: u64 = 200;
const ACTION_EVERY_MS: u64 = 150;
/// The operator reads the preview for up to this long before applying (during the run only):
/// the window in which the runtime's own reconciliation races turnscope's fence.
const PREVIEW_MS_MAX: u64 = 250;
/// The writer reconciles an expired submission itself only once it has been expired this long,
/// and then only with probability 1/RECONCILE_ONE_IN per scan.
const RECONCILE_AFTER_MS: i64 = 150;
const RECONCILE_ONE_IN: u64 = 3;
const RECONCILE_EVERY_MS: i64 = 300;
/// Percent of claimed submissions that crash mid tool batch / before the provider starts.
const CRASH_MID_BATCH_PCT: u64 = 30;
const CRASH_BEFORE_PROVIDER_PCT: u64 = 8;
const OWNER: &str = "0d4b7a9e-1c2f-4e3d-8b5a-6f7e8d9c0b1a";

fn now_ms() -> i64 {
    turnscope_demo::demo_now_ms()
}

/// Seconds of load: the constant, or `TURNSCOPE_SOAK_SECS` when set.
fn secs(default: u64) -> u64 {
    std::env::var("TURNSCOPE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn soak_read_only() {
    let fig = run(Mode::ReadOnly, secs(READ_ONLY_SECS));
    assert_eq!(
        fig.writer_busy, 0,
        "a read-only turnscope made runtime statements fail"
    );
    assert_eq!(fig.ts_applied + fig.ts_fenced, 0);
}

#[test]
fn soak_write_mode() {
    let fig = run(Mode::Write, secs(WRITE_SECS));
    // Not zero by design (our BEGIN IMMEDIATE excludes the runtime for a few ms), but rare.
    assert!(
        fig.writer_busy * 10 <= fig.writer_statements,
        "{} of {} runtime statements failed because of turnscope",
        fig.writer_busy,
        fig.writer_statements
    );
    assert_eq!(
        fig.retried_ok + fig.abandoned_after_busy,
        fig.writer_busy,
        "every failed statement was retried or its submission given up (and checked consistent)"
    );
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    ReadOnly,
    Write,
}

#[derive(Default, Debug)]
struct Figures {
    secs: u64,
    admitted: u64,
    writer_statements: u64,
    writer_busy: u64,
    retried_ok: u64,
    abandoned_after_busy: u64,
    writer_other_errors: u64,
    writer_entries: u64,
    claimed: u64,
    completed: u64,
    crashed: u64,
    lost: u64,
    reconciled: u64,
    refreshes: u64,
    reports_loaded: u64,
    load_errors: u64,
    ts_applied: u64,
    ts_applied_fail: u64,
    ts_fenced: u64,
    ts_noop: u64,
    ts_refused: u64,
    ts_store_errors: u64,
    ts_entries: u64,
    max_lock_held: Duration,
    fence_reasons: Vec<(String, u64)>,
    refusal_reasons: Vec<(String, u64)>,
    final_applied: u64,
    final_entries: u64,
    final_left_running: u64,
    seed_entries: u64,
    total_entries: u64,
    tool_calls_checked: u64,
}

impl Figures {
    fn print(&self, name: &str) {
        println!(
            "soak {name}: {}s, {} submissions admitted, {} claimed, {} completed by the writer, {} crashed, {} given up (lease near its end), {} reconciled by the writer",
            self.secs, self.admitted, self.claimed, self.completed, self.crashed, self.lost, self.reconciled
        );
        println!(
            "soak {name}: writer statements {}, failed because of turnscope (SQLITE_BUSY/LOCKED) {}, retried ok {}, given up with the submission {}, other errors {}",
            self.writer_statements, self.writer_busy, self.retried_ok, self.abandoned_after_busy, self.writer_other_errors
        );
        println!(
            "soak {name}: turnscope refreshes {}, reports loaded {}, load errors {}; actions applied {} ({} of them fail), refused by fencing {}, no-op {}, refused by plan {}, store errors {}, max lock hold {:?}",
            self.refreshes, self.reports_loaded, self.load_errors, self.ts_applied, self.ts_applied_fail, self.ts_fenced, self.ts_noop, self.ts_refused, self.ts_store_errors, self.max_lock_held
        );
        println!(
            "soak {name}: fenced because: {:?}; neither repair nor fail (during the run and in the final pass): {:?}",
            self.fence_reasons, self.refusal_reasons
        );
        println!(
            "soak {name}: final pass applied {} ({} entries), left running {}; entries: seed {} + writer {} + turnscope {} = table {}; tool calls checked {}",
            self.final_applied, self.final_entries, self.final_left_running, self.seed_entries, self.writer_entries, self.ts_entries + self.final_entries, self.total_entries, self.tool_calls_checked
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Shapes (compact JSON, the runtime's key order).

fn session_key(i: usize) -> String {
    format!("agent-session:[\"soak-{i:02}\",\"default\",\"default\"]")
}

fn instance(i: usize) -> String {
    format!("soak-{i:02}")
}

/// A ULID-shaped id body (26 Crockford characters, first in 0-7).
fn ulid(n: u64) -> String {
    format!("01KT{n:022}")
}

fn session_data(i: usize, leaf: Option<&str>, created: i64, updated: i64) -> String {
    json!({
        "version": 8,
        "conversationId": format!("conv_{}", ulid(i as u64)),
        "affinityKey": format!("aff_{}", ulid(1000 + i as u64)),
        "leafId": leaf,
        "childSessions": [],
        "metadata": {},
        "createdAt": iso_from_ms(created),
        "updatedAt": iso_from_ms(updated),
    })
    .to_string()
}

fn entry(
    id: &str,
    parent: Option<&str>,
    ts: i64,
    message: Value,
    extra: Option<(&str, Value)>,
) -> String {
    let mut e = json!({"type": "message", "id": id, "parentId": parent, "timestamp": iso_from_ms(ts), "message": message});
    if let Some((k, v)) = extra {
        e[k] = v;
    }
    e.to_string()
}

fn usage() -> Value {
    json!({"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110,
           "cost": {"input": 0.0001, "output": 0.00005, "cacheRead": 0, "cacheWrite": 0, "total": 0.00015}})
}

fn assistant(content: Value, stop: &str, ts: i64) -> Value {
    json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
           "model": "claude-haiku-4-5", "usage": usage(), "stopReason": stop, "timestamp": ts})
}

fn tool_result(call: &(String, String), ts: i64) -> Value {
    json!({"role": "toolResult", "toolCallId": call.0, "toolName": call.1,
           "content": [{"type": "text", "text": "ok"}], "details": {}, "isError": false, "timestamp": ts})
}

fn uuid(a: u64, b: u64) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a as u32,
        (a >> 32) as u16,
        (a >> 48) & 0xfff,
        (b as u16 & 0x3fff) | 0x8000,
        (b >> 16) & 0xffff_ffff_ffff
    )
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pct(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
}

// ---------------------------------------------------------------------------------------------
// Setup.

/// A journal of the runtime's schema holding only the seed sessions.
fn setup(dir: &Path) -> (PathBuf, u64) {
    let db = dir.join("soak.db");
    let now = now_ms() - 60_000;
    let mut journal = JournalBuilder::new();
    let mut seed = 0;
    for i in 0..SESSIONS {
        let (u, a) = (format!("5eed{i:04x}"), format!("5eee{i:04x}"));
        let user = json!({"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": now});
        let answer = assistant(json!([{"type": "text", "text": "hi"}]), "stop", now + 1);
        let mut s = SessionBuilder::for_instance(&instance(i), now).ids(
            &format!("conv_{}", ulid(i as u64)),
            &format!("aff_{}", ulid(1000 + i as u64)),
        );
        s.message(&u, user).at(now + 1).message(&a, answer);
        assert_eq!(s.key(), session_key(i));
        assert_eq!(s.len(), SEED_ENTRIES_PER_SESSION);
        seed += s.len() as u64;
        journal.session(s);
    }
    journal.write(&db).unwrap();
    (db, seed)
}

// ---------------------------------------------------------------------------------------------
// The runtime.

/// An entry to append: id, message, and one extra top-level key (`dispatch`).
type NewEntry<'a> = (String, Value, Option<(&'a str, Value)>);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    SaveInput,
    MarkApplied,
    BeginTurn1,
    ProviderStarted1,
    SaveToolUse,
    RecordToolRequest,
    SaveResult,
    CheckpointReady,
    BeginTurn2,
    ProviderStarted2,
    SaveFinal,
    Commit,
    Complete,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Crash {
    Never,
    BeforeProvider,
    /// Before writing result `n` of the batch (so `n` results are written).
    MidBatch(usize),
}

struct Job {
    sid: String,
    session: usize,
    attempt: String,
    step: Step,
    /// The session leaf this worker last wrote or read (the runtime's in-memory session).
    leaf: Option<String>,
    input_id: String,
    assistant_id: String,
    calls: Vec<(String, String)>,
    results: usize,
    turn: String,
    crash: Crash,
    /// Statements of this job that failed with BUSY and were not retried successfully yet.
    pending_busy: u64,
}

#[derive(Default)]
struct Stats {
    statements: Cell<u64>,
    busy: Cell<u64>,
    retried_ok: Cell<u64>,
    abandoned: Cell<u64>,
    other: Cell<u64>,
    entries: Cell<u64>,
}

fn bump(c: &Cell<u64>, n: u64) {
    c.set(c.get() + n);
}

enum Outcome {
    Done,
    Busy,
    /// The worker no longer owns the submission (or the session moved): it stops working on it.
    Lost,
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

struct Runtime {
    conn: Connection,
    stats: Stats,
    rng: Rng,
    counter: u64,
    jobs: Vec<Job>,
    admitted: u64,
    claimed: u64,
    completed: u64,
    crashed: u64,
    lost: u64,
    reconciled: u64,
    /// BUSY failures of statements not tied to one job (admission, claim, renewal, reconcile).
    pending_global: u64,
    created: i64,
}

impl Runtime {
    fn open(db: &Path, seed: u64) -> Runtime {
        let conn = Connection::open(db).unwrap();
        // The runtime: node:sqlite defaults (busy timeout 0), WAL.
        conn.busy_timeout(Duration::ZERO).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        Runtime {
            conn,
            stats: Stats::default(),
            rng: Rng(seed | 1),
            counter: 0,
            jobs: Vec::new(),
            admitted: 0,
            claimed: 0,
            completed: 0,
            crashed: 0,
            lost: 0,
            reconciled: 0,
            pending_global: 0,
            created: now_ms() - 60_000,
        }
    }

    fn fresh(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// Record the result of a statement not tied to a job.
    fn global<T>(&mut self, r: rusqlite::Result<T>) -> Option<T> {
        match r {
            Ok(v) => {
                bump(&self.stats.retried_ok, self.pending_global);
                self.pending_global = 0;
                Some(v)
            }
            Err(e) if is_busy(&e) => {
                bump(&self.stats.busy, 1);
                self.pending_global += 1;
                None
            }
            Err(e) => panic!("runtime statement failed: {e}"),
        }
    }

    fn admit(&mut self, n: u64) {
        let sid = uuid(0x5a5a_0000_0000 + n, n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let session = (n as usize) % SESSIONS;
        let accepted = now_ms();
        let payload = json!({"dispatchId": sid, "agent": "soak", "id": instance(session),
            "input": {"n": n}, "acceptedAt": iso_from_ms(accepted), "kind": "dispatch", "submissionId": sid})
        .to_string();
        bump(&self.stats.statements, 1);
        let r = self.conn.execute(
            "INSERT OR IGNORE INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, accepted_at) VALUES (?1, ?2, 'dispatch', ?3, 'queued', ?4)",
            params![sid, session_key(session), payload, accepted],
        );
        if self.global(r).is_some() {
            self.admitted += 1;
        }
    }

    fn claim(&mut self) {
        if self.jobs.len() >= MAX_ACTIVE {
            return;
        }
        bump(&self.stats.statements, 1);
        let queued: Option<Vec<(String, String)>> = {
            let r = self
                .conn
                .prepare_cached("SELECT submission_id, session_key FROM flue_agent_submissions WHERE status = 'queued' ORDER BY sequence LIMIT 20")
                .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect());
            self.global(r)
        };
        for (sid, key) in queued.unwrap_or_default() {
            if self.jobs.len() >= MAX_ACTIVE {
                return;
            }
            let n = self.fresh();
            let attempt = uuid(0xa77e_0000_0000 + n, n.wrapping_mul(0xd1b5_4a32_d192_ed03));
            let now = now_ms();
            bump(&self.stats.statements, 1);
            let r = self.conn.execute(
                "UPDATE flue_agent_submissions AS current SET status = 'running', attempt_id = ?1, started_at = ?2,
                   attempt_count = attempt_count + 1, max_retry = 10,
                   timeout_at = CASE WHEN timeout_at = 0 THEN ?2 + 3600000 ELSE timeout_at END,
                   owner_id = ?3, lease_expires_at = ?4
                 WHERE submission_id = ?5 AND status = 'queued' AND NOT EXISTS (
                   SELECT 1 FROM flue_agent_submissions earlier WHERE earlier.session_key = current.session_key
                   AND earlier.sequence < current.sequence AND earlier.status IN ('queued', 'running', 'terminalizing'))",
                params![attempt, now, OWNER, now + LEASE_MS, sid],
            );
            if self.global(r) != Some(1) {
                continue;
            }
            self.claimed += 1;
            let session = (0..SESSIONS).find(|i| session_key(*i) == key).unwrap();
            let crash = if self.rng.pct(CRASH_MID_BATCH_PCT) {
                Crash::MidBatch((self.rng.next() % 3) as usize)
            } else if self.rng.pct(CRASH_BEFORE_PROVIDER_PCT) {
                Crash::BeforeProvider
            } else {
                Crash::Never
            };
            let k = 2 + (self.rng.next() % 2) as usize;
            let calls = (0..k)
                .map(|c| (format!("toolu_{}_{c}", &sid[..8]), format!("tool_{c}")))
                .collect();
            let turn = format!("turn_{}", ulid(self.fresh()));
            self.jobs.push(Job {
                sid,
                session,
                attempt,
                step: Step::SaveInput,
                leaf: None,
                input_id: String::new(),
                assistant_id: String::new(),
                calls,
                results: 0,
                turn,
                crash,
                pending_busy: 0,
            });
            // The worker loads the session (outside any transaction, like the runtime).
            let i = self.jobs.len() - 1;
            match self.read_leaf(session) {
                Some(leaf) => self.jobs[i].leaf = leaf,
                None => {
                    let job = self.jobs.pop().unwrap();
                    self.drop_job(job, true);
                }
            }
        }
    }

    fn read_leaf(&mut self, session: usize) -> Option<Option<String>> {
        bump(&self.stats.statements, 1);
        let r = self.conn.query_row(
            "SELECT data FROM flue_sessions WHERE id = ?1",
            [session_key(session)],
            |r| r.get::<_, String>(0),
        );
        let data = self.global(r)?;
        let v: Value = serde_json::from_str(&data).unwrap();
        Some(v["leafId"].as_str().map(str::to_string))
    }

    fn drop_job(&mut self, job: Job, lost: bool) {
        bump(&self.stats.abandoned, job.pending_busy);
        if lost {
            self.lost += 1;
        }
    }

    /// `renewLeases`: every owned submission whose lease is not about to end.
    fn renew(&mut self) {
        if self.jobs.is_empty() {
            return;
        }
        let now = now_ms();
        let ids: Vec<String> = self.jobs.iter().map(|j| j.sid.clone()).collect();
        let list = ids
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(",");
        bump(&self.stats.statements, 1);
        let r = self.conn.execute(
            &format!(
                "UPDATE flue_agent_submissions SET lease_expires_at = ?1 WHERE owner_id = ?2 AND status = 'running'
                 AND lease_expires_at > ?3 AND submission_id IN ({list})"
            ),
            params![now + LEASE_MS, OWNER, now + LEASE_MARGIN_MS],
        );
        self.global(r);
    }

    /// One step of every owned submission.
    fn advance(&mut self) {
        let jobs = std::mem::take(&mut self.jobs);
        let mut keep = Vec::new();
        for mut job in jobs {
            let crash_now = match (job.crash, job.step) {
                (Crash::BeforeProvider, Step::ProviderStarted1) => true,
                (Crash::MidBatch(n), Step::SaveResult) => job.results == n.min(job.calls.len() - 1),
                _ => false,
            };
            if crash_now {
                // The process dies: no more renewals, the batch stays partial.
                self.crashed += 1;
                self.drop_job(job, false);
                continue;
            }
            match self.step(&mut job) {
                Ok(Outcome::Done) => {
                    bump(&self.stats.retried_ok, job.pending_busy);
                    job.pending_busy = 0;
                    if job.step == Step::SaveResult {
                        job.results += 1;
                    }
                    if job.step == Step::Complete {
                        self.completed += 1;
                        continue;
                    }
                    job.step = next_step(&job);
                    keep.push(job);
                }
                Ok(Outcome::Busy) => {
                    bump(&self.stats.busy, 1);
                    job.pending_busy += 1;
                    keep.push(job);
                }
                Ok(Outcome::Lost) => self.drop_job(job, true),
                Err(e) => {
                    eprintln!("soak runtime: {} at {:?}: {e}", job.sid, job.step);
                    bump(&self.stats.other, 1);
                    self.drop_job(job, true);
                }
            }
        }
        self.jobs.extend(keep);
    }

    /// Run one step in a deferred transaction that first checks the worker still owns the
    /// submission and the session is where it left it (the runtime's in-memory state).
    fn step(&mut self, job: &mut Job) -> rusqlite::Result<Outcome> {
        let fresh = self.fresh();
        let now = now_ms();
        let st = &self.stats;
        let tx = self.conn.unchecked_transaction()?;
        bump(&st.statements, 1);
        let row: Option<(String, Option<String>, i64)> = match tx
            .query_row(
                "SELECT status, attempt_id, lease_expires_at FROM flue_agent_submissions WHERE submission_id = ?1",
                [&job.sid],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
        {
            Ok(r) => r,
            Err(e) if is_busy(&e) => return Ok(Outcome::Busy),
            Err(e) => return Err(e),
        };
        let owned = matches!(&row, Some((s, a, lease)) if s == "running" && a.as_deref() == Some(&job.attempt) && *lease > now + LEASE_MARGIN_MS);
        if !owned {
            return Ok(Outcome::Lost);
        }
        bump(&st.statements, 1);
        let (data, count): (String, i64) = match tx.query_row(
            "SELECT data, (SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1) FROM flue_sessions WHERE id = ?1",
            [session_key(job.session)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        ) {
            Ok(r) => r,
            Err(e) if is_busy(&e) => return Ok(Outcome::Busy),
            Err(e) => return Err(e),
        };
        let leaf: Option<String> = serde_json::from_str::<Value>(&data).unwrap()["leafId"]
            .as_str()
            .map(str::to_string);
        if leaf != job.leaf {
            return Ok(Outcome::Lost);
        }
        let r = self.write_step(&tx, job, now, count, fresh);
        let r = r.and_then(|ok| {
            bump(&st.statements, 1);
            tx.commit().map(|_| ok)
        });
        match r {
            Ok(Some(new_entries)) => {
                bump(&st.entries, new_entries.len() as u64);
                if let Some(last) = new_entries.last() {
                    job.leaf = Some(last.clone());
                }
                Ok(Outcome::Done)
            }
            Ok(None) => Ok(Outcome::Lost),
            Err(e) if is_busy(&e) => Ok(Outcome::Busy),
            Err(e) => Err(e),
        }
    }

    /// The writes of one step; `Some(entries appended)` when they all matched their row.
    fn write_step(
        &self,
        tx: &rusqlite::Transaction,
        job: &mut Job,
        now: i64,
        count: i64,
        fresh: u64,
    ) -> rusqlite::Result<Option<Vec<String>>> {
        let st = &self.stats;
        let (skey, sess, created) = (session_key(job.session), job.session, self.created);
        let journal = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<bool> {
            bump(&st.statements, 1);
            Ok(tx.execute(sql, p)? == 1)
        };
        // The runtime's 8-hex ids, from a range turnscope's random ones hardly ever hit.
        let new_id = format!("{:08x}", 0xa000_0000u64 + fresh);
        let n = fresh;
        let save = |msgs: Vec<NewEntry>,
                    parent: Option<String>|
         -> rusqlite::Result<Option<Vec<String>>> {
            let mut parent = parent;
            let mut ids = Vec::new();
            for (pos, (id, msg, extra)) in msgs.into_iter().enumerate() {
                bump(&st.statements, 1);
                tx.execute(
                    "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)",
                    params![skey, id, count + pos as i64, entry(&id, parent.as_deref(), now, msg, extra)],
                )?;
                parent = Some(id.clone());
                ids.push(id);
            }
            bump(&st.statements, 1);
            tx.execute(
                "UPDATE flue_sessions SET data = ?1 WHERE id = ?2",
                params![session_data(sess, parent.as_deref(), created, now), skey],
            )?;
            Ok(Some(ids))
        };
        let stream_key = format!("{}:{}:{}", job.sid, job.turn, job.attempt);
        let fenced = "WHERE submission_id = ?1 AND attempt_id = ?2 AND committed = 0";
        let ok = |b: bool| if b { Some(Vec::new()) } else { None };
        Ok(match job.step {
            Step::SaveInput => {
                let id = new_id.clone();
                job.input_id = id.clone();
                let attrs = json!({"agent": "soak", "id": instance(job.session), "session": "default", "dispatchId": job.sid, "acceptedAt": iso_from_ms(now)});
                let msg = json!({"role": "signal", "type": "dispatch_input", "tagName": "dispatch",
                    "content": "{\n  \"n\": 1\n}", "attributes": attrs, "timestamp": now});
                save(vec![(id, msg, Some(("dispatch", json!({"dispatchId": job.sid}))))], job.leaf.clone())?
            }
            Step::MarkApplied => ok(journal(
                "UPDATE flue_agent_submissions SET input_applied_at = COALESCE(input_applied_at, ?3),
                   timeout_at = CASE WHEN input_applied_at IS NULL THEN started_at + 3600000 ELSE timeout_at END
                 WHERE submission_id = ?1 AND attempt_id = ?2 AND status = 'running'",
                &[&job.sid, &job.attempt, &now],
            )?),
            Step::BeginTurn1 | Step::BeginTurn2 => {
                let checkpoint = job.leaf.clone();
                let op = format!("op_{}", ulid(n));
                bump(&st.statements, 1);
                tx.execute(
                    "INSERT INTO flue_agent_turn_journals (submission_id, session_key, kind, attempt_id, operation_id, turn_id,
                       phase, revision, created_at, updated_at, checkpoint_leaf_id, tool_request_json, stream_key,
                       stream_consumed_at, committed, committed_leaf_id)
                     VALUES (?1, ?2, 'dispatch', ?3, ?4, ?5, 'before_provider', 1, ?6, ?6, ?7, NULL, NULL, NULL, 0, NULL)
                     ON CONFLICT(submission_id) DO UPDATE SET attempt_id = excluded.attempt_id,
                       operation_id = excluded.operation_id, turn_id = excluded.turn_id, phase = excluded.phase,
                       checkpoint_leaf_id = excluded.checkpoint_leaf_id, tool_request_json = excluded.tool_request_json,
                       revision = revision + 1, updated_at = excluded.updated_at, stream_key = NULL,
                       stream_consumed_at = NULL, committed = 0, committed_leaf_id = NULL",
                    params![job.sid, session_key(job.session), job.attempt, op, job.turn, now, checkpoint],
                )?;
                Some(Vec::new())
            }
            Step::ProviderStarted1 | Step::ProviderStarted2 => ok(journal(
                &format!("UPDATE flue_agent_turn_journals SET phase = 'provider_started', revision = revision + 1, updated_at = ?3, stream_key = COALESCE(?4, stream_key) {fenced}"),
                &[&job.sid, &job.attempt, &now, &stream_key],
            )?),
            Step::SaveToolUse => {
                let id = new_id.clone();
                job.assistant_id = id.clone();
                let blocks: Vec<Value> = job
                    .calls
                    .iter()
                    .map(|(cid, name)| json!({"type": "toolCall", "id": cid, "name": name, "arguments": {"q": 1}}))
                    .collect();
                save(vec![(id, assistant(Value::Array(blocks), "toolUse", now), None)], job.leaf.clone())?
            }
            Step::RecordToolRequest => {
                let calls: Vec<Value> = job
                    .calls
                    .iter()
                    .map(|(cid, name)| json!({"type": "toolCall", "id": cid, "name": name, "arguments": {"q": 1}}))
                    .collect();
                let request = json!({"toolCalls": calls}).to_string();
                ok(journal(
                    &format!("UPDATE flue_agent_turn_journals SET phase = 'tool_request_recorded', revision = revision + 1, updated_at = ?3, checkpoint_leaf_id = ?4, tool_request_json = ?5 {fenced}"),
                    &[&job.sid, &job.attempt, &now, &job.assistant_id, &request],
                )?)
            }
            Step::SaveResult => {
                let call = &job.calls[job.results];
                save(vec![(new_id.clone(), tool_result(call, now), None)], job.leaf.clone())?
            }
            Step::CheckpointReady => ok(journal(
                &format!("UPDATE flue_agent_turn_journals SET phase = 'before_provider', revision = revision + 1, updated_at = ?3, checkpoint_leaf_id = ?4 {fenced}"),
                &[&job.sid, &job.attempt, &now, &job.leaf],
            )?),
            Step::SaveFinal => save(
                vec![(new_id.clone(), assistant(json!([{"type": "text", "text": "done"}]), "stop", now), None)],
                job.leaf.clone(),
            )?,
            Step::Commit => ok(journal(
                &format!("UPDATE flue_agent_turn_journals SET phase = 'committed', committed = 1, committed_leaf_id = ?4, revision = revision + 1, updated_at = ?3 {fenced}"),
                &[&job.sid, &job.attempt, &now, &job.leaf],
            )?),
            Step::Complete => ok(journal(
                "UPDATE flue_agent_submissions SET status = 'settled', settled_at = ?3, error = NULL
                 WHERE submission_id = ?1 AND attempt_id = ?2 AND status = 'running'",
                &[&job.sid, &job.attempt, &now],
            )?),
        })
    }

    /// The runtime's own reconciliation of an expired submission (`replaceTurnJournalAttempt`),
    /// then resuming it: finish the tool batch, or continue from the repaired checkpoint.
    fn reconcile(&mut self) {
        let now = now_ms();
        bump(&self.stats.statements, 1);
        let r = self
            .conn
            .prepare_cached(
                "SELECT s.submission_id, s.attempt_id FROM flue_agent_submissions s
                 JOIN flue_agent_turn_journals j ON j.submission_id = s.submission_id
                 WHERE s.status = 'running' AND s.lease_expires_at > 0 AND s.lease_expires_at < ?1
                   AND j.committed = 0 AND j.phase IN ('tool_request_recorded', 'before_provider')",
            )
            .and_then(|mut s| {
                s.query_map([now - RECONCILE_AFTER_MS], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?
                .collect::<Result<Vec<_>, _>>()
            });
        let Some(expired) = self.global(r) else {
            return;
        };
        for (sid, old) in expired {
            if self.jobs.len() >= MAX_ACTIVE || self.rng.next() % RECONCILE_ONE_IN != 0 {
                continue;
            }
            if self.jobs.iter().any(|j| j.sid == sid) {
                continue;
            }
            let n = self.fresh();
            let new = uuid(0xbeef_0000_0000 + n, n.wrapping_mul(0xd1b5_4a32_d192_ed03));
            let now = now_ms();
            let r = (|| -> rusqlite::Result<bool> {
                let tx = self.conn.unchecked_transaction()?;
                bump(&self.stats.statements, 3);
                let n = tx.execute(
                    "UPDATE flue_agent_submissions SET attempt_id = ?1, recovery_requested_at = NULL, started_at = ?2,
                       attempt_count = attempt_count + 1, owner_id = ?3, lease_expires_at = ?4
                     WHERE submission_id = ?5 AND status = 'running' AND attempt_id = ?6
                       AND lease_expires_at > 0 AND lease_expires_at < ?2",
                    params![new, now, OWNER, now + LEASE_MS, sid, old],
                )?;
                if n == 0 {
                    return Ok(false);
                }
                tx.execute(
                    "UPDATE flue_agent_turn_journals SET attempt_id = ?1, revision = revision + 1, updated_at = ?2
                     WHERE submission_id = ?3 AND attempt_id = ?4 AND committed = 0",
                    params![new, now, sid, old],
                )?;
                tx.commit()?;
                Ok(true)
            })();
            if self.global(r) != Some(true) {
                continue;
            }
            self.reconciled += 1;
            match self.resume(&sid, &new) {
                Ok(Some(job)) => self.jobs.push(job),
                Ok(None) => self.lost += 1,
                Err(e) if is_busy(&e) => {
                    bump(&self.stats.busy, 1);
                    self.pending_global += 1;
                }
                Err(e) => panic!("resuming {sid}: {e}"),
            }
        }
    }

    /// Load what a resumed attempt needs (it owns a live lease now, so nothing changes under it).
    fn resume(&mut self, sid: &str, attempt: &str) -> rusqlite::Result<Option<Job>> {
        bump(&self.stats.statements, 3);
        let (key, phase, checkpoint, request, turn): (String, String, Option<String>, Option<String>, String) =
            self.conn.query_row(
                "SELECT s.session_key, j.phase, j.checkpoint_leaf_id, j.tool_request_json, j.turn_id
                 FROM flue_agent_submissions s JOIN flue_agent_turn_journals j ON j.submission_id = s.submission_id
                 WHERE s.submission_id = ?1",
                [sid],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
        let session = (0..SESSIONS).find(|i| session_key(*i) == key).unwrap();
        let data: String = self.conn.query_row(
            "SELECT data FROM flue_sessions WHERE id = ?1",
            [&key],
            |r| r.get(0),
        )?;
        let leaf = serde_json::from_str::<Value>(&data).unwrap()["leafId"]
            .as_str()
            .map(str::to_string);
        let entries = load_entries(&self.conn, &key)?;
        let path = active_path(&entries, leaf.as_deref());
        let mut job = Job {
            sid: sid.to_string(),
            session,
            attempt: attempt.to_string(),
            step: Step::SaveInput,
            leaf: leaf.clone(),
            input_id: String::new(),
            assistant_id: String::new(),
            calls: Vec::new(),
            results: 0,
            turn,
            crash: Crash::Never,
            pending_busy: 0,
        };
        let leaf_entry = path.last().map(|id| &entries[id]);
        match phase.as_str() {
            "tool_request_recorded" => {
                let Some(assistant) = checkpoint else {
                    return Ok(None);
                };
                let Some(at) = path.iter().position(|id| *id == assistant) else {
                    return Ok(None);
                };
                let req: Value =
                    serde_json::from_str(request.as_deref().unwrap_or("null")).unwrap();
                job.calls = req["toolCalls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| {
                        (
                            c["id"].as_str().unwrap().to_string(),
                            c["name"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect();
                job.assistant_id = assistant;
                job.results = path.len() - at - 1;
                if job.results > job.calls.len() {
                    return Ok(None);
                }
                job.step = if job.results == job.calls.len() {
                    Step::CheckpointReady
                } else {
                    Step::SaveResult
                };
            }
            "before_provider" => {
                let role =
                    leaf_entry.map(|e| e["message"]["role"].as_str().unwrap_or("").to_string());
                match role.as_deref() {
                    // Rule 5: the batch is complete (turnscope's repair): continue with a new turn.
                    Some("toolResult") if checkpoint == leaf => {
                        job.turn = format!("turn_{}", ulid(self.fresh()));
                        job.step = Step::BeginTurn2;
                    }
                    // Crashed before the provider started: the input is the checkpoint.
                    Some("signal") if checkpoint == leaf => {
                        job.calls = (0..2)
                            .map(|c| (format!("toolu_{}_r{c}", &sid[..8]), format!("tool_{c}")))
                            .collect();
                        job.step = Step::ProviderStarted1;
                    }
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }
        Ok(Some(job))
    }
}

fn next_step(job: &Job) -> Step {
    match job.step {
        Step::SaveInput => Step::MarkApplied,
        Step::MarkApplied => Step::BeginTurn1,
        Step::BeginTurn1 => Step::ProviderStarted1,
        Step::ProviderStarted1 => Step::SaveToolUse,
        Step::SaveToolUse => Step::RecordToolRequest,
        Step::RecordToolRequest => Step::SaveResult,
        Step::SaveResult if job.results < job.calls.len() => Step::SaveResult,
        Step::SaveResult => Step::CheckpointReady,
        Step::CheckpointReady => Step::BeginTurn2,
        Step::BeginTurn2 => Step::ProviderStarted2,
        Step::ProviderStarted2 => Step::SaveFinal,
        Step::SaveFinal => Step::Commit,
        Step::Commit => Step::Complete,
        Step::Complete => Step::Complete,
    }
}

fn run_runtime(mut rt: Runtime, secs: u64, stop: Arc<AtomicBool>) -> Runtime {
    let total = (secs * SUBMISSIONS_PER_SEC).max(12);
    let start = Instant::now();
    let admit_window = Duration::from_millis(secs * 700);
    let (mut last_renew, mut last_reconcile) = (now_ms(), now_ms());
    while !stop.load(Ordering::Relaxed) {
        let due = if start.elapsed() >= admit_window {
            total
        } else {
            total * start.elapsed().as_millis() as u64 / admit_window.as_millis() as u64 + 1
        };
        while rt.admitted < due.min(total) {
            let before = rt.admitted;
            rt.admit(rt.admitted);
            if rt.admitted == before {
                break;
            }
        }
        let now = now_ms();
        if now - last_renew >= RENEW_EVERY_MS {
            rt.renew();
            last_renew = now;
        }
        rt.claim();
        rt.advance();
        if now - last_reconcile >= RECONCILE_EVERY_MS {
            rt.reconcile();
            last_reconcile = now;
        }
        thread::sleep(Duration::from_millis(TICK_MS));
    }
    // The process stops: whatever it owned is left to expire.
    for job in std::mem::take(&mut rt.jobs) {
        rt.drop_job(job, false);
    }
    bump(&rt.stats.abandoned, rt.pending_global);
    rt.pending_global = 0;
    rt
}

// ---------------------------------------------------------------------------------------------
// turnscope.

#[derive(Default)]
struct TsStats {
    refreshes: u64,
    loaded: u64,
    load_errors: u64,
    applied: u64,
    applied_fail: u64,
    fenced: u64,
    noop: u64,
    refused: u64,
    store_errors: u64,
    entries: u64,
    max_lock: Duration,
    /// Why applies were fenced: the first difference, numbers and ids cut off.
    fence_reasons: HashMap<String, u64>,
    /// Why neither repair nor fail was planned (first words of the fail refusal).
    refusal_reasons: HashMap<String, u64>,
}

/// The TUI's refresh: open, list expired, load each.
fn refresh(db: &Path, st: &mut TsStats) -> Vec<SubmissionReport> {
    st.refreshes += 1;
    let now = now_ms();
    let store = match SqliteStore::open(db) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("soak refresh: {e}");
            st.load_errors += 1;
            return Vec::new();
        }
    };
    let rows = match store.list_submissions(RowFilter::Expired, now) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("soak refresh: {e}");
            st.load_errors += 1;
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for row in rows {
        match SubmissionReport::load(&store, &row.submission_id, Some(200_000), now) {
            Ok(r) => {
                st.loaded += 1;
                out.push(r);
            }
            Err(e) => {
                eprintln!("soak refresh: {}: {e}", row.submission_id);
                st.load_errors += 1;
            }
        }
    }
    out
}

/// One action pass: repair every expired submission, or fail it when repair is refused.
fn act(db: &Path, writer: &mut SqliteWriter, st: &mut TsStats, preview: bool) {
    for r in refresh(db, st) {
        let now = r.now_ms;
        let mut ids = EntryIds::for_report(&r);
        let plan: ActionPlan = match plan(ActionKind::Repair, &r, None, now, &mut ids) {
            Ok(p) if p.is_noop() => {
                st.noop += 1;
                continue;
            }
            Ok(p) => p,
            Err(_) => match plan(
                ActionKind::Fail,
                &r,
                Some("soak: repair refused"),
                now,
                &mut ids,
            ) {
                Ok(p) => p,
                Err(refusal) => {
                    st.refused += 1;
                    let why: Vec<&str> = refusal.reason.split([' ', ':', '(']).take(6).collect();
                    *st.refusal_reasons.entry(why.join(" ")).or_default() += 1;
                    continue;
                }
            },
        };
        if preview {
            let pause = (now_ms() as u64).wrapping_mul(2_654_435_761) % PREVIEW_MS_MAX;
            thread::sleep(Duration::from_millis(pause));
        }
        let audit = AuditInfo {
            operator: "soak@test".into(),
            action: plan.action.as_str().into(),
            reason: plan.reason.clone(),
            summary: plan.summary.clone(),
            now_ms: now,
            batch_id: None,
            side_effects: None,
        };
        match writer.apply(&plan.fence, &plan.changes, &audit) {
            Ok(a) => {
                st.applied += 1;
                if plan.action == ActionKind::Fail {
                    st.applied_fail += 1;
                }
                st.max_lock = st.max_lock.max(a.lock_held);
                st.entries += plan
                    .changes
                    .iter()
                    .filter(|c| matches!(c, RowChange::InsertEntry { .. }))
                    .count() as u64;
            }
            Err(ApplyError::Fenced(diffs)) => {
                st.fenced += 1;
                let why = diffs.first().map_or(String::new(), |d| {
                    d.split([' ', ',', '('])
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                *st.fence_reasons.entry(why).or_default() += 1;
            }
            Err(e @ (ApplyError::Store(_) | ApplyError::Refused(_) | ApplyError::NotFound(_))) => {
                eprintln!("soak apply: {e}");
                st.store_errors += 1;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run.

fn run(mode: Mode, secs: u64) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    let (db, seed_entries) = setup(dir.path());
    let stop = Arc::new(AtomicBool::new(false));
    let seed = now_ms() as u64
        ^ if mode == Mode::Write {
            0x5bd1_e995
        } else {
            0x2545_f491
        };
    println!("soak {mode:?}: rng seed {seed:#x}");

    // The runtime opens (and sets WAL, with busy timeout 0) before turnscope starts, as in a
    // deployment where turnscope attaches to a running process.
    let rt = Runtime::open(&db, seed);
    let writer = {
        let stop = stop.clone();
        thread::spawn(move || {
            let rt = run_runtime(rt, secs, stop);
            // Plain figures back to the test thread.
            (
                rt.admitted,
                rt.claimed,
                rt.completed,
                rt.crashed,
                rt.lost,
                rt.reconciled,
                [
                    rt.stats.statements.get(),
                    rt.stats.busy.get(),
                    rt.stats.retried_ok.get(),
                    rt.stats.abandoned.get(),
                    rt.stats.other.get(),
                    rt.stats.entries.get(),
                ],
            )
        })
    };
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        thread::spawn(move || {
            let mut st = TsStats::default();
            while !stop.load(Ordering::Relaxed) {
                refresh(&db, &mut st);
                thread::sleep(Duration::from_millis(REFRESH_MS));
            }
            st
        })
    };
    let actor = (mode == Mode::Write).then(|| {
        let (db, stop) = (db.clone(), stop.clone());
        thread::spawn(move || {
            let mut st = TsStats::default();
            let mut w = SqliteWriter::open(&db).unwrap();
            while !stop.load(Ordering::Relaxed) {
                act(&db, &mut w, &mut st, true);
                thread::sleep(Duration::from_millis(ACTION_EVERY_MS));
            }
            st
        })
    });

    thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    let (admitted, claimed, completed, crashed, lost, reconciled, w) = writer.join().unwrap();
    let reads = reader.join().unwrap();
    let acts = actor.map(|a| a.join().unwrap()).unwrap_or_default();

    // Mid-run invariants (before the final pass): at most one result per call.
    let mid = check(&db, false);

    // Final pass: the writer is gone; let every lease expire, then repair (or fail) what is stuck.
    thread::sleep(Duration::from_millis((LEASE_MS + 100) as u64));
    let mut fin = TsStats::default();
    let mut w_final = SqliteWriter::open(&db).unwrap();
    act(&db, &mut w_final, &mut fin, false);
    act(&db, &mut w_final, &mut fin, false);
    assert_eq!(
        fin.fenced + fin.store_errors,
        0,
        "nothing else writes during the final pass"
    );
    let checked = check(&db, true);

    let fig = Figures {
        secs,
        admitted,
        writer_statements: w[0],
        writer_busy: w[1],
        retried_ok: w[2],
        abandoned_after_busy: w[3],
        writer_other_errors: w[4],
        writer_entries: w[5],
        claimed,
        completed,
        crashed,
        lost,
        reconciled,
        refreshes: reads.refreshes + acts.refreshes,
        reports_loaded: reads.loaded + acts.loaded,
        load_errors: reads.load_errors + acts.load_errors,
        ts_applied: acts.applied,
        ts_applied_fail: acts.applied_fail,
        ts_fenced: acts.fenced,
        ts_noop: acts.noop,
        ts_refused: acts.refused,
        ts_store_errors: acts.store_errors,
        ts_entries: acts.entries,
        max_lock_held: acts.max_lock,
        fence_reasons: {
            let mut v: Vec<_> = acts.fence_reasons.clone().into_iter().collect();
            v.sort();
            v
        },
        refusal_reasons: {
            let mut v: Vec<_> = acts
                .refusal_reasons
                .iter()
                .chain(fin.refusal_reasons.iter())
                .map(|(k, n)| (k.clone(), *n))
                .collect();
            v.sort();
            v
        },
        final_applied: fin.applied,
        final_entries: fin.entries,
        final_left_running: checked.running,
        seed_entries,
        total_entries: checked.entries,
        tool_calls_checked: checked.tool_calls,
    };
    fig.print(&format!("{mode:?}"));
    assert_eq!(
        mid.entries,
        seed_entries + w[5] + acts.entries,
        "entries lost or invented (mid)"
    );
    assert_eq!(
        checked.entries,
        seed_entries + w[5] + acts.entries + fin.entries,
        "entries lost or invented"
    );
    assert_eq!(checked.submissions, admitted, "submission rows lost");
    assert_eq!(
        w[4], 0,
        "runtime statements failed for reasons other than locking"
    );
    assert_eq!(
        fig.load_errors, 0,
        "turnscope failed to read while the runtime wrote"
    );
    assert_eq!(acts.store_errors, 0, "turnscope's writes failed");
    assert!(
        claimed > 0 && completed > 0,
        "the soak did no work: {fig:?}"
    );
    fig
}

// ---------------------------------------------------------------------------------------------
// Invariants over the whole database.

fn load_entries(conn: &Connection, session: &str) -> rusqlite::Result<HashMap<String, Value>> {
    let mut stmt = conn
        .prepare_cached("SELECT entry_id, data FROM flue_session_entries WHERE session_id = ?1")?;
    let rows = stmt.query_map([session], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, data) = row?;
        out.insert(id, serde_json::from_str(&data).unwrap_or(Value::Null));
    }
    Ok(out)
}

/// Entry ids from the root to `leaf`.
fn active_path(entries: &HashMap<String, Value>, leaf: Option<&str>) -> Vec<String> {
    let mut path = Vec::new();
    let mut at = leaf.map(str::to_string);
    while let Some(id) = at {
        assert!(path.len() <= entries.len(), "cycle in the session tree");
        let Some(e) = entries.get(&id) else { break };
        at = e["parentId"].as_str().map(str::to_string);
        path.push(id);
    }
    path.reverse();
    path
}

struct Checked {
    entries: u64,
    submissions: u64,
    running: u64,
    tool_calls: u64,
}

fn check(db: &Path, final_pass: bool) -> Checked {
    let conn = Connection::open(db).unwrap();
    let entries: u64 = conn
        .query_row("SELECT COUNT(*) FROM flue_session_entries", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap() as u64;
    let mut tool_calls = 0;
    for i in 0..SESSIONS {
        let key = session_key(i);
        // Every row's data parses, its id is the row's id, positions are 0..N-1.
        let mut stmt = conn
            .prepare("SELECT entry_id, position, data FROM flue_session_entries WHERE session_id = ?1 ORDER BY position")
            .unwrap();
        let rows: Vec<(String, i64, String)> = stmt
            .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (n, (id, pos, data)) in rows.iter().enumerate() {
            assert_eq!(
                *pos, n as i64,
                "{key}: positions have a gap or duplicate at {n}"
            );
            let v: Value =
                serde_json::from_str(data).unwrap_or_else(|e| panic!("{key}/{id}: bad JSON: {e}"));
            assert_eq!(
                v["id"].as_str(),
                Some(id.as_str()),
                "{key}: entry id mismatch"
            );
        }
        let data: String = conn
            .query_row(
                "SELECT data FROM flue_sessions WHERE id = ?1",
                [&key],
                |r| r.get(0),
            )
            .unwrap();
        let data: Value = serde_json::from_str(&data).unwrap();
        let leaf = data["leafId"].as_str().map(str::to_string);
        let map = load_entries(&conn, &key).unwrap();
        if let Some(l) = &leaf {
            assert!(map.contains_key(l), "{key}: leafId {l} has no entry");
        }
        let path = active_path(&map, leaf.as_deref());
        assert_eq!(
            path.first().map(String::as_str),
            Some(&format!("5eed{i:04x}")[..]),
            "{key}: broken active path"
        );
        // Tool calls on the active path: at most one result each; exactly one after the final pass.
        let mut results: HashMap<String, usize> = HashMap::new();
        for id in &path {
            let m = &map[id]["message"];
            if m["role"] == "toolResult" {
                *results
                    .entry(m["toolCallId"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
        }
        let mut seen = HashSet::new();
        for id in &path {
            let m = &map[id]["message"];
            for block in m["content"].as_array().into_iter().flatten() {
                if block["type"] == "toolCall" {
                    let cid = block["id"].as_str().unwrap();
                    assert!(
                        seen.insert(cid.to_string()),
                        "{key}: tool call {cid} requested twice"
                    );
                    let n = results.get(cid).copied().unwrap_or(0);
                    tool_calls += 1;
                    assert!(
                        n <= 1,
                        "{key}: tool call {cid} has {n} results on the active path"
                    );
                    if final_pass {
                        assert_eq!(
                            n, 1,
                            "{key}: tool call {cid} has no result after the final pass"
                        );
                    }
                }
            }
        }
    }
    // Submission rows satisfy the runtime's row invariants.
    let bad: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM flue_agent_submissions WHERE
               status NOT IN ('queued', 'running', 'terminalizing', 'settled')
               OR (status = 'queued' AND (attempt_id IS NOT NULL OR input_applied_at IS NOT NULL
                   OR recovery_requested_at IS NOT NULL OR started_at IS NOT NULL))
               OR (status IN ('running', 'terminalizing') AND (attempt_id IS NULL OR started_at IS NULL))
               OR (status = 'settled' AND settled_at IS NULL)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0, "submission rows violate the runtime's invariants");
    // A running row's open journal belongs to its attempt, and its checkpoint exists.
    let mut stmt = conn
        .prepare(
            "SELECT s.submission_id, s.session_key, s.attempt_id, j.attempt_id, j.checkpoint_leaf_id
             FROM flue_agent_submissions s JOIN flue_agent_turn_journals j ON j.submission_id = s.submission_id
             WHERE s.status = 'running' AND j.committed = 0",
        )
        .unwrap();
    let rows: Vec<(String, String, String, String, Option<String>)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (sid, key, attempt, j_attempt, checkpoint) in rows {
        assert_eq!(attempt, j_attempt, "{sid}: journal of another attempt");
        if let Some(c) = checkpoint {
            let n: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = ?1 AND entry_id = ?2",
                    params![key, c],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{sid}: checkpoint {c} has no entry");
        }
    }
    // turnscope reads every row without complaint.
    let store = SqliteStore::open(db).unwrap();
    let all = store.list_submissions(RowFilter::All, 0).unwrap();
    let now = now_ms();
    for row in &all {
        let r = SubmissionReport::load(&store, &row.submission_id, Some(200_000), now).unwrap();
        assert!(
            !matches!(
                r.plan.disposition,
                turnscope_core::recovery::reconciler::Disposition::Malformed { .. }
            ),
            "{}: turnscope sees a malformed row",
            row.submission_id
        );
    }
    let running = all
        .iter()
        .filter(|r| r.status == SubmissionStatus::Running)
        .count() as u64;
    if final_pass {
        // Whatever is still running is only waiting for the runtime (a repaired batch or a
        // completed answer), never a half-written batch.
        for row in all.iter().filter(|r| r.status == SubmissionStatus::Running) {
            let r = SubmissionReport::load(&store, &row.submission_id, Some(200_000), now).unwrap();
            assert!(
                r.classification().trailing_partial_batch.is_none(),
                "{}: a partial batch survived the final pass ({})",
                row.submission_id,
                r.verdict()
            );
        }
    }
    Checked {
        entries,
        submissions: all.len() as u64,
        running,
        tool_calls,
    }
}
