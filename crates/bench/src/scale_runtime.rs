//! The runtime-shaped scale profile (`turnscope-scale PATH --scale F --profile runtime`): the
//! shape of the runtime's own journals rather than one long session. 20,000 sessions of 5–200
//! entries, 148,000 submissions whose turns are mostly tool cycles (an assistant `toolUse` with 3
//! calls, then its 3 results; 0–12 cycles per submission, mostly 1 or 2), tool results of 200 B to
//! 20 KB (median about 370 B, mean about 1.9 KB), about 2 % of sessions ending in an
//! expired-lease submission in one of the stuck shapes of `scale_stuck.rs`, about 1 % in a queued
//! one, a few live ones, and one whale whose stuck submission's own history after its input is
//! 100,000 entries plus 20,000 on abandoned repair branches (`scale_runtime_whale.rs`).
//!
//! Everything is built with the same state machines and row builders as the session profile
//! (`scale_history.rs`, `scale_stuck.rs`), so rows have the runtime's exact shapes; only the
//! layout and the mix differ.

use super::scale_history::{self as hist, Compaction, Ctx, Outcome, Round};
use super::scale_options::{
    crash_event, session_seed, ScaleOptions, ScaleProfile, CALLS, CRASHES, DAYS, LIVE_LEASE,
};
use super::scale_profiles::{PROFILES, RUNTIME_WHALE};
use super::scale_runtime_whale as rt_whale;
use super::scale_stuck::{self as stuck, VARIANTS};
use turnscope_demo::build::{Demo, Session, DAY, HOUR, MIN};
use turnscope_demo::ids::Rng;
use turnscope_demo::DemoError;

/// The most tool cycles in one settled submission.
const MAX_CYCLES: usize = 12;
/// Entries of a session's settled history at most (its head adds a few).
const SESSION_CAP: usize = 190;
/// A session has at least this many entries.
const SESSION_MIN: usize = 5;
/// Settled submissions of one session at most (so it stays under `SESSION_CAP`).
const SUBS_CAP: usize = 32;
/// Settled submissions of the whale's session before its stuck one.
pub(crate) const WHALE_EARLIER: usize = 3;
/// After this many cycles per submission on average, a draw of "no cycle" becomes rare.
const TAIL: f64 = 0.35;

/// The layout of the runtime profile at `factor` (1 = the shape of issue 12).
pub(crate) fn options(factor: f64, now_ms: i64, seed: u64) -> ScaleOptions {
    let f = |n: f64| (n * factor).round().max(0.0) as usize;
    let stuck = f(400.0).max(VARIANTS.len());
    let expired = stuck + 1;
    let queued = f(245.0).max(2);
    let sessions = f(20_000.0).max(expired + queued + 8);
    let live = live_heads(sessions);
    let whale_active = f(100_000.0).max(rt_whale::MIN_ACTIVE);
    let whale_abandoned = rt_whale::abandoned_for(whale_active);
    let submissions = f(148_000.0).max(2 * sessions + queued + live + WHALE_EARLIER);
    let entries = f(985_000.0).max(4 * submissions + whale_active + whale_abandoned);
    ScaleOptions {
        seed,
        submissions,
        sessions,
        entries,
        expired,
        whale_active,
        whale_abandoned,
        now_ms,
        profile: ScaleProfile::Runtime,
    }
}

fn live_heads(sessions: usize) -> usize {
    (sessions / 1_000).max(1)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    Whale,
    Stuck(usize),
    Live,
    Settled,
}

/// One session of the layout.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    head: Head,
    /// Settled submissions before the head.
    history: usize,
    /// Entries those should add.
    budget: usize,
    /// A queued submission after the head.
    queued: bool,
}

fn invalid(msg: String) -> DemoError {
    DemoError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, msg))
}

/// Lay out the sessions of `o`.
pub(crate) fn plan(o: &ScaleOptions) -> Result<Vec<Plan>, DemoError> {
    let mut r = Rng::new(o.seed ^ 0x0072_756e_7469_6d65); // "runtime"
    let live = live_heads(o.sessions);
    let stuck_n = o.expired.saturating_sub(1);
    let queued = (o.sessions * 49 / 4_000).max(2);
    if o.expired == 0 || o.sessions < stuck_n + live + 1 + queued {
        return Err(invalid(format!(
            "{} sessions cannot hold {} expired and {live} live heads and {queued} queued submissions",
            o.sessions, o.expired
        )));
    }
    rt_whale::check(o.whale_active, o.whale_abandoned).map_err(invalid)?;
    let fixed = 1 + stuck_n + live + queued;
    let others = o.sessions - 1;
    let history = o
        .submissions
        .checked_sub(fixed)
        .filter(|h| *h >= others + WHALE_EARLIER)
        .ok_or_else(|| {
            invalid(format!(
                "{} submissions are too few for {} sessions",
                o.submissions, o.sessions
            ))
        })?;
    let mut order: Vec<usize> = (0..o.sessions).collect();
    shuffle(&mut r, &mut order);
    let mut heads = vec![Head::Settled; o.sessions];
    heads[order[0]] = Head::Whale;
    for (k, &i) in order[1..=stuck_n].iter().enumerate() {
        heads[i] = Head::Stuck(k);
    }
    for &i in &order[1 + stuck_n..1 + stuck_n + live] {
        heads[i] = Head::Live;
    }
    // Settled submissions: the whale's few, one for every other session, the rest by a
    // heavy-tailed weight, at most `SUBS_CAP` per session.
    let mut counts: Vec<usize> = heads
        .iter()
        .map(|h| if *h == Head::Whale { WHALE_EARLIER } else { 1 })
        .collect();
    let weights: Vec<f64> = heads
        .iter()
        .map(|h| {
            if *h == Head::Whale {
                0.0
            } else {
                unit(&mut r).max(1e-9).powf(-0.5)
            }
        })
        .collect();
    let total_w: f64 = weights.iter().sum();
    let extra = history - others - WHALE_EARLIER;
    for (c, w) in counts.iter_mut().zip(&weights) {
        *c += ((extra as f64 * w / total_w).floor() as usize).min(SUBS_CAP - 1);
    }
    let mut short = history - counts.iter().sum::<usize>();
    let open: Vec<usize> = (0..o.sessions)
        .filter(|i| heads[*i] != Head::Whale)
        .collect();
    let mut guard = 0;
    while short > 0 && guard < 100 * o.submissions {
        let i = open[(r.next_u64() % open.len() as u64) as usize];
        if counts[i] < SUBS_CAP {
            counts[i] += 1;
            short -= 1;
        }
        guard += 1;
    }
    if short > 0 {
        return Err(invalid(format!(
            "{} submissions do not fit {} sessions of at most {SUBS_CAP} each",
            o.submissions, o.sessions
        )));
    }
    // Entries: the whale's are exact; stuck heads add about 7, live ones about 6.
    let settled_total: usize = counts.iter().sum::<usize>() - WHALE_EARLIER;
    let heads_entries = 7 * stuck_n + 6 * live + 6 * WHALE_EARLIER;
    let budget = o
        .entries
        .saturating_sub(o.whale_active + o.whale_abandoned + 1 + heads_entries);
    let per_sub = budget as f64 / settled_total.max(1) as f64;
    // Queued: most behind a stuck head (the runtime will not claim them), the rest just admitted
    // in an idle session; one per session.
    let mut queued_at = vec![false; o.sessions];
    let stuck_ix: Vec<usize> = order[1..=stuck_n].to_vec();
    let idle_ix: Vec<usize> = order[1 + stuck_n + live..].to_vec();
    let behind = (queued * 6 / 10).min(stuck_ix.len());
    for &i in stuck_ix.iter().take(behind) {
        queued_at[i] = true;
    }
    for &i in idle_ix.iter().take(queued - behind) {
        queued_at[i] = true;
    }
    Ok((0..o.sessions)
        .map(|i| Plan {
            head: heads[i],
            history: counts[i],
            budget: if heads[i] == Head::Whale {
                6 * WHALE_EARLIER
            } else {
                (per_sub * counts[i] as f64).round() as usize
            },
            queued: queued_at[i],
        })
        .collect())
}

fn shuffle(r: &mut Rng, v: &mut [usize]) {
    for i in (1..v.len()).rev() {
        v.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
    }
}

/// A uniform number in [0, 1).
fn unit(r: &mut Rng) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Tool cycles of one submission, `mean` on average: none or 1 + a geometric tail (mostly 1 or
/// 2, rarely up to 12).
fn cycles(d: &mut Demo, mean: f64) -> usize {
    if mean <= 0.0 {
        return 0;
    }
    let with_tail = 1.0 / (1.0 - TAIL);
    let tail = if mean < with_tail {
        if unit(&mut d.rng) >= mean / with_tail {
            return 0;
        }
        TAIL
    } else {
        (mean - 1.0) / mean
    };
    let mut k = 1;
    while k < MAX_CYCLES && unit(&mut d.rng) < tail {
        k += 1;
    }
    k
}

/// `n` settled submissions of runtime shape spread over `window`, adding about `budget`
/// entries, never more than `SESSION_CAP` and at least `SESSION_MIN`: about 97 % completed (1.5 %
/// of those after a repaired cycle), 2 % failed by a provider error, 1 % failed by the reconciler
/// after an interruption.
#[allow(clippy::too_many_arguments)]
pub(crate) fn history(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &super::scale_profiles::Profile,
    n: usize,
    window: (i64, i64),
    budget: usize,
) {
    let start_len = s.entries.len();
    let span = (window.1 - window.0).max(n as i64);
    for i in 0..n {
        let slot = span / n as i64;
        let at = window.0 + slot * i as i64 + d.jitter(0, slot * 3 / 5);
        let used = s.entries.len() - start_len;
        let left = n - i;
        let target = budget.saturating_sub(used) as f64 / left as f64;
        // Room for cycles: every submission left needs its input and answer.
        let room = SESSION_CAP.saturating_sub(used + 2 * left) / (CALLS + 1);
        let mut k = cycles(d, (target - 2.0) / (CALLS + 1) as f64).min(room);
        let last = left == 1;
        let short = last && used + 2 + (CALLS + 1) * k < SESSION_MIN;
        if short {
            k = 1;
        }
        let mut rounds: Vec<Round> = (0..k).map(|_| Round::plain(CALLS)).collect();
        let outcome = match (short, d.rng.next_u64() % 1_000) {
            (true, _) => Outcome::Completed,
            (false, 0..=19) => {
                rounds.truncate(2);
                Outcome::TerminalError
            }
            (false, 20..=29) => {
                // With tool cycles the reconciler would have resumed it (rule 5), not failed it.
                rounds.clear();
                Outcome::Interrupted
            }
            (false, 30..=44) if !rounds.is_empty() => {
                rounds[0] = Round {
                    calls: CALLS,
                    recorded: d.jitter(1, CALLS as i64 - 1) as usize,
                };
                Outcome::Completed
            }
            _ => Outcome::Completed,
        };
        hist::settled(x, d, s, p, at, &rounds, outcome, Compaction::ByContext);
    }
}

/// Generate session `i` of the layout; returns the demo state and session to turn into rows, and
/// the whale's ids when it is the whale.
pub(crate) fn session(
    x: &Ctx,
    o: &ScaleOptions,
    procs: &[String],
    i: usize,
    sp: &Plan,
) -> (Demo, Session, Option<(String, String)>, usize) {
    let now = o.now_ms;
    let mut d = Demo::new(now);
    d.rng = Rng::new(session_seed(o.seed ^ 0x7274, i));
    d.procs = procs.to_vec();
    let crash_owner = |c: usize| DAYS + c;
    let live_owner = DAYS + CRASHES.len();
    if sp.head == Head::Whale {
        let p = &RUNTIME_WHALE;
        let c = 1; // the process that died 4 minutes ago
        let crash_at = now - CRASHES[c].0;
        let took = rt_whale::duration(o.whale_active, o.whale_abandoned);
        let start = crash_at - took - DAY;
        let mut s = Session::new(p.prefix, p.agent, start);
        history(
            x,
            &mut d,
            &mut s,
            p,
            sp.history,
            (start, start + 6 * HOUR),
            sp.budget,
        );
        let id = rt_whale::stuck(
            x,
            &mut d,
            &mut s,
            o.whale_active,
            o.whale_abandoned,
            crash_at,
            crash_owner(c),
        );
        let key = s.key.clone();
        return (d, s, Some((id, key)), usize::from(sp.queued));
    }
    let p = &PROFILES[(d.rng.next_u64() % PROFILES.len() as u64) as usize];
    let instance = format!("{}-{}", p.prefix, i + 1);
    let (end, crash) = match sp.head {
        Head::Stuck(_) => {
            let c = crash_event(&mut d);
            let at = now - CRASHES[c].0;
            (at - HOUR - d.jitter(0, 2 * DAY), Some((c, at)))
        }
        Head::Live => (now - HOUR - d.jitter(0, 2 * DAY), None),
        _ => (now - d.jitter(10 * MIN, 3 * DAY), None),
    };
    let span = d.jitter(DAY, 40 * DAY).max(sp.history as i64 * 20 * MIN);
    let mut s = Session::new(&instance, p.agent, end - span);
    history(
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
        _ => {}
    }
    (d, s, None, usize::from(sp.queued))
}

/// Whether session `sp` ends settled (its queued submission is just admitted, not blocked).
pub(crate) fn idle(sp: &Plan) -> bool {
    sp.head == Head::Settled
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_demo::testing::NOW;

    #[test]
    fn full_size_layout_has_the_issue_shape() {
        let o = options(1.0, NOW, 1);
        assert_eq!(
            (o.sessions, o.submissions, o.entries, o.expired),
            (20_000, 148_000, 985_000, 401)
        );
        assert_eq!((o.whale_active, o.whale_abandoned), (100_000, 20_000));
        let plan = plan(&o).expect("plan");
        assert_eq!(plan.len(), 20_000);
        let queued = plan.iter().filter(|p| p.queued).count();
        assert_eq!(queued, 245);
        let subs: usize = plan.iter().map(|p| p.history).sum::<usize>()
            + 1
            + (o.expired - 1)
            + live_heads(o.sessions)
            + queued;
        assert_eq!(subs, o.submissions);
        assert!(plan.iter().all(|p| p.history <= SUBS_CAP));
    }

    #[test]
    fn cycles_average_what_was_asked() {
        let mut d = Demo::new(NOW);
        for mean in [0.5, 0.96, 2.0, 4.0] {
            let n = 20_000;
            let ks: Vec<usize> = (0..n).map(|_| cycles(&mut d, mean)).collect();
            let avg = ks.iter().sum::<usize>() as f64 / n as f64;
            assert!((avg - mean).abs() < 0.12 * mean + 0.05, "{mean}: {avg}");
            assert!(ks.iter().all(|k| *k <= MAX_CYCLES));
        }
    }
}
