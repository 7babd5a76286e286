//! A production-sized journal database for benchmarks: hundreds of thousands of submissions,
//! millions of entries, thousands of expired leases and one whale session, in the runtime's exact
//! schema (the demo's DDL) and JSON shapes, deterministically from a seed.
//!
//! Every session is generated from its own seed (derived from the options' seed and its index)
//! by the demo's state machines (`Demo`, `Session`, `Sub`, `Run`, `flow`), with hot-path entries
//! built by string formatting (`scale_text.rs`). One thread generates sessions in order while the
//! caller's thread inserts them with prepared statements in large transactions (journal off);
//! submissions are inserted last, in admission order (`sequence` follows `accepted_at`), and the
//! file is switched to WAL like the runtime leaves it.
//!
//! Layout (see `plan`): one whale session (`scale_whale.rs`); `expired - 1` sessions whose head
//! is an expired-lease running submission in one of the demo's stuck shapes (`scale_stuck.rs`);
//! a few sessions with a live submission (lease a month ahead) or a `terminalizing` direct
//! prompt; queued submissions, mostly behind the stuck heads; every other submission settled
//! (`scale_history.rs`: about 96% completed, the rest failed or completed after a repair).
//!
//! That is the `session` profile (the default). The `runtime` profile (`scale_runtime.rs`) lays
//! out the same kinds of rows in the shape of the runtime's own journals: short tool-heavy
//! sessions and a whale whose stuck submission holds the long history.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use rusqlite::Connection;

use super::scale_history::{self as hist, Ctx};
use super::scale_options::{crash_event, session_seed, CRASHES, DAYS, LIVE_LEASE};
pub use super::scale_options::{ScaleOptions, ScaleProfile, DEFAULT_SEED};
use super::scale_profiles::{self as prof, PROFILES, WHALE};
use super::scale_runtime as rt;
use super::scale_stuck::{self as stuck, VARIANTS};
use super::scale_text::{Corpus, Sizes};
use super::scale_whale as whale;
use turnscope_demo::build::{Demo, Session, Sub, DAY, HOUR, MIN, SEC};
use turnscope_demo::ids::Rng;
use turnscope_demo::insert::{insert_submissions, Batch, Inserts, SessionRow, SubRow};
use turnscope_demo::{DemoError, DDL};

impl ScaleOptions {
    /// 200,000 submissions over 20,000 sessions, about 2,000,000 entries, 2,000 expired leases,
    /// a whale with 100,000 active and 20,000 abandoned entries.
    pub fn default_scale(now_ms: i64) -> Self {
        Self::scaled(1.0, now_ms)
    }

    /// The default scale times `factor` (e.g. 0.001 for tests), with floors that keep every stuck
    /// shape present and the layout consistent.
    pub fn scaled(factor: f64, now_ms: i64) -> Self {
        let f = |n: f64| (n * factor).round().max(0.0) as usize;
        let expired = f(2_000.0).max(VARIANTS.len() + 3);
        let whale_active = f(100_000.0).max(40);
        let whale_abandoned = f(20_000.0);
        let sessions = f(20_000.0).max(expired + 8);
        let submissions = f(200_000.0).max(sessions * 3 + whale::subs(whale_active));
        let entries = f(2_000_000.0).max(submissions * 8 + whale_active + whale_abandoned);
        ScaleOptions {
            seed: DEFAULT_SEED,
            submissions,
            sessions,
            entries,
            expired,
            whale_active,
            whale_abandoned,
            now_ms,
            profile: ScaleProfile::Session,
        }
    }

    /// The layout of `profile` at `factor` (for `Session` the same as [`ScaleOptions::scaled`]).
    pub fn for_profile(profile: ScaleProfile, factor: f64, now_ms: i64) -> Self {
        match profile {
            ScaleProfile::Session => Self::scaled(factor, now_ms),
            ScaleProfile::Runtime => rt::options(factor, now_ms, DEFAULT_SEED),
            ScaleProfile::Flue2 => super::scale_flue2::options(factor, now_ms, DEFAULT_SEED),
        }
    }

    /// The whale's history set to `n` entries (the session's active path for `Session`, the
    /// stuck submission's active path after its input for `Runtime`), a fifth of that again on
    /// abandoned branches; the other sessions keep their entries (submissions are raised where
    /// a session whale needs more). Fails when `n` is out of the profile's range.
    pub fn with_whale_entries(mut self, n: usize) -> Result<Self, String> {
        let abandoned = n / 5;
        // Everything but the whale keeps its entries.
        let others = self
            .entries
            .saturating_sub(self.whale_active + self.whale_abandoned);
        self.entries = others + n + abandoned;
        match self.profile {
            ScaleProfile::Session => {
                if !(40..=2_000_000).contains(&n) {
                    return Err(format!(
                        "a whale session of {n} entries is outside 40..=2000000"
                    ));
                }
                self.submissions = self.submissions.max(self.sessions * 3 + whale::subs(n));
                self.entries = self.entries.max(self.submissions * 8 + n + abandoned);
            }
            ScaleProfile::Runtime => {
                rt_whale_check(n, abandoned)?;
                self.entries = self.entries.max(4 * self.submissions + n + abandoned);
            }
            ScaleProfile::Flue2 => {
                // Records of the whale's stream; nothing abandoned (2.x repairs in place).
                if !(200..=2_000_000).contains(&n) {
                    return Err(format!(
                        "a whale stream of {n} records is outside 200..=2000000"
                    ));
                }
                self.entries -= abandoned;
                self.whale_active = n;
                self.whale_abandoned = 0;
                return Ok(self);
            }
        }
        self.whale_active = n;
        self.whale_abandoned = abandoned;
        Ok(self)
    }
}

fn rt_whale_check(n: usize, abandoned: usize) -> Result<(), String> {
    super::scale_runtime_whale::check(n, abandoned)
}

pub use crate::scale_options::ScaleSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    Whale,
    /// The k-th stuck session.
    Stuck(usize),
    Live,
    Terminalizing,
    Settled,
}

#[derive(Debug, Clone)]
struct SessionPlan {
    head: Head,
    /// Settled submissions before the head.
    history: usize,
    /// Entries those should add.
    budget: usize,
    queued: usize,
}

fn invalid(msg: String) -> DemoError {
    DemoError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, msg))
}

/// Lay out sessions: which is the whale, which are stuck, live, terminalizing; how many settled
/// and queued submissions and entries each gets.
fn plan(o: &ScaleOptions) -> Result<Vec<SessionPlan>, DemoError> {
    let mut r = Rng::new(o.seed ^ 0x706c_616e);
    let live = (o.sessions / 1_000).max(1);
    let term = (o.expired / 1_000).max(1);
    let special = o.expired + live + term;
    if o.expired == 0 || o.sessions < special + 1 {
        return Err(invalid(format!(
            "{} sessions cannot hold {} expired, {live} live and {term} terminalizing heads plus a settled session",
            o.sessions, o.expired
        )));
    }
    if o.whale_active < whale::min_active(o.whale_active, o.whale_abandoned) {
        return Err(invalid(format!(
            "a whale of {} active entries cannot hold {} abandoned ones",
            o.whale_active, o.whale_abandoned
        )));
    }
    let queued = (o.submissions / 100).max(2);
    let fixed = whale::subs(o.whale_active) + (o.expired - 1) + live + term + queued;
    let others = o.sessions - 1;
    let history = o
        .submissions
        .checked_sub(fixed)
        .filter(|h| *h >= others)
        .ok_or_else(|| {
            invalid(format!(
                "{} submissions are too few for {} sessions",
                o.submissions, o.sessions
            ))
        })?;
    // Heads, in a shuffled order of session indexes.
    let mut order: Vec<usize> = (0..o.sessions).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
    }
    let mut heads = vec![Head::Settled; o.sessions];
    heads[order[0]] = Head::Whale;
    let mut k = 1;
    for j in 0..o.expired - 1 {
        heads[order[k]] = Head::Stuck(j);
        k += 1;
    }
    for _ in 0..live {
        heads[order[k]] = Head::Live;
        k += 1;
    }
    for _ in 0..term {
        heads[order[k]] = Head::Terminalizing;
        k += 1;
    }
    // Settled submissions: one each, the rest by a heavy-tailed weight (a few long sessions).
    let weights: Vec<f64> = heads
        .iter()
        .map(|h| {
            let u = ((r.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
            if *h == Head::Whale {
                0.0
            } else {
                u.powf(-0.6)
            }
        })
        .collect();
    let total_w: f64 = weights.iter().sum();
    let extra = history - others;
    let mut counts: Vec<usize> = Vec::with_capacity(o.sessions);
    let mut rems: Vec<(f64, usize)> = Vec::with_capacity(o.sessions);
    for (i, w) in weights.iter().enumerate() {
        let share = extra as f64 * w / total_w;
        let base = if heads[i] == Head::Whale { 0 } else { 1 };
        counts.push(base + share.floor() as usize);
        rems.push((share - share.floor(), i));
    }
    let short = history - counts.iter().sum::<usize>();
    rems.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rems.iter().take(short) {
        counts[*i] += 1;
    }
    // Entries: the whale's are exact; stuck, live and terminalizing heads add a few each.
    let heads_entries = 7 * (o.expired - 1) + 6 * live + 3 * term;
    let budget = o
        .entries
        .saturating_sub(o.whale_active + o.whale_abandoned + heads_entries);
    // Queued: mostly behind stuck heads, some behind live ones, some just admitted.
    let mut queued_n = vec![0usize; o.sessions];
    let of = |want: &dyn Fn(Head) -> bool| -> Vec<usize> {
        (0..o.sessions).filter(|i| want(heads[*i])).collect()
    };
    let stuck_ix = of(&|h| matches!(h, Head::Stuck(_)));
    let busy_ix = of(&|h| matches!(h, Head::Live | Head::Terminalizing));
    let idle_ix = of(&|h| h == Head::Settled);
    for q in 0..queued {
        let pool = match q % 10 {
            0..=6 => &stuck_ix,
            7 => &busy_ix,
            _ => &idle_ix,
        };
        queued_n[pool[(r.next_u64() % pool.len() as u64) as usize]] += 1;
    }
    Ok((0..o.sessions)
        .map(|i| SessionPlan {
            head: heads[i],
            history: counts[i],
            budget: (budget as f64 * counts[i] as f64 / history as f64).round() as usize,
            queued: queued_n[i],
        })
        .collect())
}

/// Generate session `i` of the plan.
fn session(x: &Ctx, o: &ScaleOptions, procs: &[String], i: usize, sp: &SessionPlan) -> Batch {
    let now = o.now_ms;
    let mut d = Demo::new(now);
    d.rng = Rng::new(session_seed(o.seed, i));
    d.procs = procs.to_vec();
    let crash_owner = |c: usize| DAYS + c;
    let live_owner = DAYS + CRASHES.len();
    let mut whale_ids = None;
    let s = if sp.head == Head::Whale {
        let start = now - 21 * DAY;
        let mut s = Session::new(WHALE.prefix, WHALE.agent, start);
        let c = 1; // the process that died 4 minutes ago
        let crash_at = now - CRASHES[c].0;
        let id = whale::whale(
            x,
            &mut d,
            &mut s,
            o.whale_active,
            o.whale_abandoned,
            start,
            crash_at,
            crash_owner(c),
        );
        whale_ids = Some((id, s.key.clone()));
        s
    } else {
        let p = &PROFILES[(d.rng.next_u64() % PROFILES.len() as u64) as usize];
        let instance = format!("{}-{}", p.prefix, i + 1);
        let (end, crash) = match sp.head {
            Head::Stuck(_) => {
                let c = crash_event(&mut d);
                let at = now - CRASHES[c].0;
                (at - HOUR - d.jitter(0, 2 * DAY), Some((c, at)))
            }
            Head::Live => (now - HOUR - d.jitter(0, 2 * DAY), None),
            Head::Terminalizing => (now - 3 * HOUR - d.jitter(0, DAY), None),
            _ => (now - d.jitter(10 * MIN, 3 * DAY), None),
        };
        let span = d.jitter(DAY, 40 * DAY).max(sp.history as i64 * 20 * MIN);
        let mut s = Session::new(&instance, p.agent, end - span);
        hist::history(
            x,
            &mut d,
            &mut s,
            p,
            sp.history,
            (end - span, end),
            sp.budget,
        );
        match sp.head {
            Head::Stuck(k) => {
                let (c, at) = crash.expect("stuck heads have a crash");
                let v = stuck::variant(k, d.rng.next_u64());
                stuck::stuck(x, &mut d, &mut s, p, v, at, crash_owner(c));
            }
            Head::Live => stuck::live(x, &mut d, &mut s, p, now, live_owner, now + LIVE_LEASE),
            Head::Terminalizing => {
                let at = now - d.jitter(5 * MIN, 2 * HOUR);
                let owner = x.owner_at(at);
                stuck::terminalizing(x, &mut d, &mut s, p, at, owner);
            }
            _ => {}
        }
        s
    };
    finish(d, s, i, sp.queued, sp.head == Head::Settled, whale_ids)
}

/// Queued submissions after the last admitted one (just admitted where nothing blocks them:
/// `idle`), then the session's rows.
fn finish(
    mut d: Demo,
    s: Session,
    i: usize,
    queued: usize,
    idle: bool,
    whale_ids: Option<(String, String)>,
) -> Batch {
    let now = d.now;
    if queued > 0 {
        let last = d
            .subs
            .iter()
            .map(|s| s.accepted_at)
            .max()
            .unwrap_or(now - HOUR);
        let from = if idle {
            (now - 15 * SEC).max(last + 1)
        } else {
            last + 1
        };
        let mut times: Vec<i64> = (0..queued).map(|_| d.jitter(from, now - 1)).collect();
        times.sort_unstable();
        let profile = PROFILES
            .iter()
            .find(|p| p.agent == s.agent)
            .unwrap_or(&WHALE);
        for (j, t) in times.iter().enumerate() {
            let at = (*t).max(from + j as i64);
            let input = prof::dispatch_input(&mut d.rng, profile);
            let q = Sub::dispatch(&mut d, &s, input, at);
            d.subs.push(q);
        }
    }
    let session = (!s.entries.is_empty()).then(|| SessionRow {
        data: s.data(),
        key: s.key,
        entries: s.entries,
    });
    Batch {
        session,
        subs: d
            .subs
            .into_iter()
            .enumerate()
            .map(|(j, s)| SubRow::new(s, i, j))
            .collect(),
        journals: d.journals,
        chunks: d.chunks,
        events: d.events,
        whale: whale_ids,
    }
}

/// The sessions to generate, by profile.
enum Layout {
    Session(Vec<SessionPlan>),
    Runtime(Vec<rt::Plan>),
}

impl Layout {
    fn len(&self) -> usize {
        match self {
            Layout::Session(p) => p.len(),
            Layout::Runtime(p) => p.len(),
        }
    }

    fn batch(&self, x: &Ctx, o: &ScaleOptions, procs: &[String], i: usize) -> Batch {
        match self {
            Layout::Session(p) => session(x, o, procs, i, &p[i]),
            Layout::Runtime(p) => {
                let (d, s, whale_ids, queued) = rt::session(x, o, procs, i, &p[i]);
                finish(d, s, i, queued, rt::idle(&p[i]), whale_ids)
            }
        }
    }
}

/// Commit and start a new transaction once this many bytes of entries were inserted.
const COMMIT_BYTES: usize = 256 << 20;

/// Write the scale database to `path` (a new file, or an existing empty one). Fails with
/// [`DemoError::AlreadyExists`] for a non-empty file, and with an `InvalidInput` [`DemoError::Io`]
/// when the options cannot be laid out (too few sessions or submissions for the expired, live and
/// whale heads, or a whale too short for its abandoned entries); [`ScaleOptions::scaled`] always
/// gives options that can.
pub fn write_scale(path: &Path, opts: &ScaleOptions) -> Result<ScaleSummary, DemoError> {
    write_scale_watched(path, opts, &mut turnscope_store::progress::Unwatched)
}

/// [`write_scale`], reporting its progress: the sessions written (one unit per session), then
/// the submission rows (one statement batch, no count).
pub fn write_scale_watched(
    path: &Path,
    opts: &ScaleOptions,
    progress: &mut dyn turnscope_store::progress::Progress,
) -> Result<ScaleSummary, DemoError> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 || !m.is_file() => {
            return Err(DemoError::AlreadyExists(path.to_path_buf()))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(DemoError::Io(e)),
    }
    let layout = match opts.profile {
        ScaleProfile::Session => Layout::Session(plan(opts)?),
        ScaleProfile::Runtime => Layout::Runtime(rt::plan(opts)?),
        ScaleProfile::Flue2 => return super::scale_flue2::write(path, opts, progress),
    };
    let now = opts.now_ms;
    let mut r = Rng::new(opts.seed ^ 0x6f77_6e65_7273);
    let procs: Vec<String> = (0..DAYS + CRASHES.len() + 1).map(|_| r.uuid()).collect();
    let corpus = Corpus::new();
    let ctx = Ctx {
        corpus: &corpus,
        sizes: match opts.profile {
            ScaleProfile::Session => Sizes::Session { huge_every: 4_000 },
            ScaleProfile::Runtime | ScaleProfile::Flue2 => Sizes::Runtime,
        },
        first_day: now.div_euclid(DAY) - DAYS as i64 + 1,
        days: DAYS,
    };
    let conn = Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY;",
    )?;
    conn.execute_batch(DDL)?;
    conn.execute_batch("BEGIN")?;
    conn.execute(
        "INSERT INTO flue_meta (key, value) VALUES ('schema_version', '3')",
        [],
    )?;
    let mut subs: Vec<SubRow> = Vec::with_capacity(opts.submissions);
    let mut summary = ScaleSummary {
        submissions: 0,
        sessions: 0,
        entries: 0,
        expired: 0,
        whale_submission_id: String::new(),
        whale_session_key: String::new(),
        bytes: 0,
    };
    progress.stage("writing sessions", Some(layout.len() as u64));
    std::thread::scope(|scope| -> Result<(), DemoError> {
        let (tx, rx) = sync_channel::<Batch>(16);
        let (ctx, layout, procs) = (&ctx, &layout, &procs);
        scope.spawn(move || {
            for i in 0..layout.len() {
                if tx.send(layout.batch(ctx, opts, procs, i)).is_err() {
                    return; // the writer failed
                }
            }
        });
        let mut ins = Inserts::new(&conn)?;
        let mut pending = 0;
        for b in rx {
            let (n, bytes) = ins.batch(&b)?;
            summary.entries += n;
            summary.sessions += usize::from(b.session.is_some());
            if let Some((id, key)) = b.whale {
                summary.whale_submission_id = id;
                summary.whale_session_key = key;
            }
            subs.extend(b.subs);
            progress.advance(1);
            pending += bytes;
            if pending > COMMIT_BYTES {
                conn.execute_batch("COMMIT; BEGIN")?;
                pending = 0;
            }
        }
        Ok(())
    })?;
    progress.stage("writing submissions", Some(subs.len() as u64));
    subs.sort_unstable_by_key(|s| s.key);
    insert_submissions(&conn, &subs, progress)?;
    conn.execute_batch("COMMIT")?;
    summary.submissions = subs.len();
    summary.expired = subs.iter().filter(|s| s.row.lease_expired(now)).count();
    drop(subs);
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    debug_assert_eq!(mode, "wal");
    conn.close().map_err(|(_, e)| DemoError::Sqlite(e))?;
    summary.bytes = std::fs::metadata(path).map_err(DemoError::Io)?.len();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

    use rusqlite::{Connection, OpenFlags};
    use serde_json::Value;

    use super::*;
    use turnscope_core::recovery::reconciler::row_problem;
    use turnscope_demo::testing::{is_compact, strings, TempDb, NOW};
    use turnscope_engine::report::SubmissionReport;
    use turnscope_store::{JournalStore, RowFilter, SqliteStore};

    const FACTOR: f64 = 0.0005;

    fn written(tag: &str) -> (TempDb, ScaleSummary, Connection) {
        let t = TempDb::new(tag);
        let s = write_scale(&t.0, &ScaleOptions::scaled(FACTOR, NOW)).expect("written");
        let c = Connection::open_with_flags(&t.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        (t, s, c)
    }

    fn count(c: &Connection, sql: &str) -> usize {
        c.query_row(sql, [], |r| r.get::<_, i64>(0)).expect("count") as usize
    }

    /// Every row of every table, in key order, as text.
    fn dump(c: &Connection) -> Vec<String> {
        let tables = strings(
            c,
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        );
        let mut out = Vec::new();
        for t in tables {
            let mut st = c
                .prepare(&format!("SELECT * FROM \"{t}\" ORDER BY 1, 2"))
                .expect("prepare");
            let n = st.column_count();
            let rows = st
                .query_map([], |r| {
                    let cells: Vec<String> = (0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).expect("cell")))
                        .collect();
                    Ok(format!("{t}|{}", cells.join("|")))
                })
                .expect("query");
            out.extend(rows.map(|r| r.expect("row")));
        }
        out
    }

    #[test]
    fn default_scale_is_factor_one() {
        let o = ScaleOptions::default_scale(NOW);
        assert_eq!(
            (
                o.submissions,
                o.sessions,
                o.entries,
                o.expired,
                o.whale_active,
                o.whale_abandoned
            ),
            (200_000, 20_000, 2_000_000, 2_000, 100_000, 20_000)
        );
        let small = ScaleOptions::scaled(FACTOR, NOW);
        assert!(small.expired > VARIANTS.len() && small.sessions > small.expired);
    }

    #[test]
    fn small_scale_is_valid_and_matches_the_summary() {
        let (t, s, c) = written("valid");
        assert_eq!(strings(&c, "PRAGMA integrity_check"), vec!["ok"]);
        assert_eq!(strings(&c, "PRAGMA journal_mode"), vec!["wal"]);
        let o = ScaleOptions::scaled(FACTOR, NOW);
        assert_eq!(
            count(&c, "SELECT COUNT(*) FROM flue_agent_submissions"),
            s.submissions
        );
        assert_eq!(s.submissions, o.submissions);
        assert_eq!(count(&c, "SELECT COUNT(*) FROM flue_sessions"), s.sessions);
        assert_eq!(s.sessions, o.sessions);
        assert_eq!(
            count(&c, "SELECT COUNT(*) FROM flue_session_entries"),
            s.entries
        );
        let diff = (s.entries as f64 - o.entries as f64).abs() / o.entries as f64;
        assert!(diff < 0.25, "{} entries for {} asked", s.entries, o.entries);
        let expired = format!(
            "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at > 0 AND lease_expires_at < {NOW}"
        );
        assert_eq!(count(&c, &expired), s.expired);
        assert_eq!(s.expired, o.expired);
        assert_eq!(s.bytes, std::fs::metadata(&t.0).expect("meta").len());
        // The same schema text as the demo.
        let demo = TempDb::new("valid-demo");
        turnscope_demo::write_demo(&demo.0, NOW).expect("demo");
        let dc =
            Connection::open_with_flags(&demo.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name";
        let row = |c: &Connection| {
            let mut st = c.prepare(schema).expect("prepare");
            let v: Vec<(String, String, Option<String>)> = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .expect("q")
                .map(|r| r.expect("row"))
                .collect();
            v
        };
        assert_eq!(row(&c), row(&dc));
        // A few live and queued rows, and settled failures of both kinds.
        let live = format!("SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'running' AND lease_expires_at > {NOW}");
        assert!(count(&c, &live) >= 1);
        assert!(
            count(
                &c,
                "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'queued'"
            ) >= 2
        );
        assert!(
            count(
                &c,
                "SELECT COUNT(*) FROM flue_agent_submissions WHERE status = 'terminalizing'"
            ) >= 1
        );
    }

    #[test]
    fn same_seed_gives_the_same_rows_and_another_seed_does_not() {
        let (_a, _, ca) = written("det-a");
        let (_b, _, cb) = written("det-b");
        let (da, db) = (dump(&ca), dump(&cb));
        assert_eq!(da.len(), db.len());
        assert!(da == db, "two writes with the same seed differ");
        let other = TempDb::new("det-c");
        let mut o = ScaleOptions::scaled(FACTOR, NOW);
        o.seed += 1;
        write_scale(&other.0, &o).expect("written");
        let cc =
            Connection::open_with_flags(&other.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        assert!(dump(&cc) != da);
    }

    #[test]
    fn entries_are_well_formed_trees() {
        let (_t, _, c) = written("trees");
        let mut st = c
            .prepare("SELECT session_id, entry_id, position, data FROM flue_session_entries ORDER BY session_id, position")
            .expect("prepare");
        let mut by_session: BTreeMap<String, Vec<(String, i64, Value)>> = BTreeMap::new();
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .expect("query");
        for row in rows {
            let (sid, eid, pos, data) = row.expect("row");
            assert!(is_compact(&data), "{data}");
            let v: Value = serde_json::from_str(&data).expect("entry JSON");
            assert_eq!(v["id"].as_str(), Some(eid.as_str()));
            assert!(
                eid.len() == 8
                    && eid
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                "{eid}"
            );
            let ty = v["type"].as_str().expect("type");
            assert!(ty == "message" || ty == "compaction", "{ty}");
            by_session.entry(sid).or_default().push((eid, pos, v));
        }
        let leaves: HashMap<String, Option<String>> = {
            let mut st = c
                .prepare("SELECT id, data FROM flue_sessions")
                .expect("prepare");
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .expect("q");
            rows.map(|r| {
                let (id, data) = r.expect("row");
                let v: Value = serde_json::from_str(&data).expect("session JSON");
                assert_eq!(v["version"], 8);
                (id, v["leafId"].as_str().map(str::to_string))
            })
            .collect()
        };
        assert_eq!(leaves.len(), by_session.len());
        for (sid, entries) in &by_session {
            let ids: HashSet<&str> = entries.iter().map(|e| e.0.as_str()).collect();
            assert_eq!(ids.len(), entries.len(), "unique ids in {sid}");
            for (i, (_, pos, v)) in entries.iter().enumerate() {
                assert_eq!(*pos, i as i64, "contiguous positions in {sid}");
                match v["parentId"].as_str() {
                    None => assert_eq!(i, 0, "only the first entry is a root"),
                    Some(p) => assert!(ids.contains(p), "parent {p} exists in {sid}"),
                }
            }
            let leaf = leaves[sid].as_deref().expect("leafId");
            assert!(ids.contains(leaf), "leaf {leaf} exists in {sid}");
        }
    }

    #[test]
    fn submission_rows_satisfy_parse_submission() {
        let (t, _, _c) = written("rows");
        let store = SqliteStore::open(&t.0).expect("open");
        let rows = store.list_submissions(RowFilter::All, 0).expect("list");
        let mut last = i64::MIN;
        for r in &rows {
            assert_eq!(row_problem(r), None, "{}", r.submission_id);
            let accepted = r.accepted_at.expect("accepted_at");
            assert!(accepted >= last, "sequence follows admission order");
            assert!(accepted < NOW);
            last = accepted;
        }
    }

    #[test]
    fn expired_rows_cover_the_classifications_and_the_whale_is_whole() {
        let (t, s, _c) = written("classes");
        let o = ScaleOptions::scaled(FACTOR, NOW);
        let store = SqliteStore::open(&t.0).expect("open");
        let expired = store
            .list_submissions(RowFilter::Expired, NOW)
            .expect("list");
        assert_eq!(expired.len(), o.expired);
        let mut labels = BTreeSet::new();
        for row in &expired {
            let r = SubmissionReport::load(&store, &row.submission_id, Some(200_000), NOW)
                .expect("load");
            labels.insert(r.classification().state.label());
        }
        assert!(labels.len() >= 12, "{labels:?}");
        let w = SubmissionReport::load(&store, &s.whale_submission_id, Some(200_000), NOW)
            .expect("whale");
        assert_eq!(w.row().session_key, s.whale_session_key);
        let label = w.classification().state.label();
        assert!(
            label == "tool_use_unresolved" || label == "resume/tool_results_partial",
            "{label}"
        );
        assert_eq!(
            w.bundle.journal.as_ref().map(|j| j.phase.as_str()),
            Some("tool_request_recorded")
        );
        let h = w.history.as_ref().expect("history");
        assert!(h.damage.is_empty());
        assert_eq!(h.active_path().len(), o.whale_active);
        assert_eq!(h.entries.len(), o.whale_active + o.whale_abandoned);
        let off: Vec<usize> = h
            .abandoned_branches()
            .into_iter()
            .flat_map(|(anchor, members)| {
                assert!(anchor.is_some(), "branches hang off the active path");
                members
            })
            .collect();
        assert_eq!(off.len(), o.whale_abandoned);
        assert!(off.iter().all(|i| !h.is_on_active_path(*i)));
        let compactions = h
            .active_path()
            .iter()
            .filter(|e| e.raw.starts_with("{\"type\":\"compaction\""))
            .count();
        assert!(compactions >= 1);
    }
}
