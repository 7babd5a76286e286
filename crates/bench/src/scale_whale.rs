//! The whale: one session that ran for weeks, with exactly `active` entries on its active path
//! (thousands of submissions of tool rounds, a compaction every few thousand entries) and exactly
//! `abandoned` entries on the abandoned branches of earlier repairs (spec §6.1). Its latest
//! submission's process died in the middle of a tool batch: `tool_use_unresolved` or
//! `resume/tool_results_partial`, with the journal at `tool_request_recorded`.

use super::scale_history::{self as hist, Compaction, Ctx, Outcome, Round};
use super::scale_profiles::WHALE;
use turnscope_demo::build::{Demo, Session, HOUR, MIN, SEC};
use turnscope_demo::flow;

/// Submissions of a whale with `active` entries (about 40 entries each, at least 2).
pub(crate) fn subs(active: usize) -> usize {
    (active / 40).max(2)
}

/// The smallest active path that fits `subs(active)` submissions and the repairs that leave
/// `abandoned` entries behind (each repair event records at least 2 results, except perhaps
/// the last, and puts at most `recorded + 4` entries on the active path).
pub(crate) fn min_active(active: usize, abandoned: usize) -> usize {
    2 * (subs(active) - 1) + 3 * abandoned + 8
}

/// Repair events (results recorded before each crash: 2–12, mostly few, summing to `abandoned`)
/// assigned at random to the `settled` submissions, a few at most per submission.
fn repairs(d: &mut Demo, settled: usize, abandoned: usize) -> Vec<Vec<usize>> {
    let mut sizes = Vec::new();
    let mut left = abandoned;
    while left > 0 {
        let u = (d.rng.next_u64() % 1_000) as f64 / 1_000.0;
        let r = (2 + (10.0 * u * u) as usize).min(left);
        sizes.push(r);
        left -= r;
    }
    let cap = (sizes.len().div_ceil(settled.max(1)) + 1).max(4);
    let mut out = vec![Vec::new(); settled];
    for r in sizes {
        let mut j = (d.rng.next_u64() % settled as u64) as usize;
        while out[j].len() >= cap {
            j = (j + 1) % settled;
        }
        out[j].push(r);
    }
    out
}

fn compact_interval(d: &mut Demo, active: usize) -> usize {
    let base = (active / 35).clamp(10, 4_000) as i64;
    d.jitter(base * 7 / 10, base * 13 / 10).max(2) as usize
}

/// Build the whale in `s` (a fresh session) between `start` and the crash of process `owner` at
/// `crash_at`. Returns the stuck submission's id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn whale(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    active: usize,
    abandoned: usize,
    start: i64,
    crash_at: i64,
    owner: usize,
) -> String {
    let p = &WHALE;
    let n_subs = subs(active);
    let settled_n = n_subs - 1;
    let plan = repairs(d, settled_n, abandoned);
    // The stuck submission: its first tool batch with nothing recorded (`tool_use_unresolved`,
    // input + assistant), or some rounds then a partly recorded batch (`tool_results_partial`).
    let unresolved = d.rng.next_u64() % 2 == 0;
    let final_target = if unresolved {
        2
    } else {
        (active / n_subs).clamp(6, 60)
    };
    let slot = ((crash_at - HOUR - start) / settled_n as i64).max(MIN);
    let mut next_compact = compact_interval(d, active);
    let mut left_behind = 0;
    for (j, events) in plan.iter().enumerate() {
        let on_path = s.entries.len() - left_behind;
        let left = settled_n - j;
        let budget = active.saturating_sub(final_target + on_path) / left;
        let repaired: Vec<Round> = events
            .iter()
            .map(|&r| Round {
                calls: r + d.jitter(1, 3) as usize,
                recorded: r,
            })
            .collect();
        let mut used = 2 + repaired.iter().map(Round::on_path).sum::<usize>();
        let outcome = if repaired.is_empty() && d.rng.next_u64() % 50 == 0 {
            Outcome::TerminalError
        } else {
            Outcome::Completed
        };
        // A compaction when the schedule falls inside this submission and there is room.
        let compaction = on_path + budget >= next_compact && used + 3 <= budget;
        used += usize::from(compaction);
        // The last one fills its budget exactly (to within one entry), so the stuck submission
        // gets the size planned for it.
        let last = left == 1;
        let mut rounds = Vec::new();
        while used + 2 <= budget {
            let mut c = hist::calls_per_round(d).min(budget - used - 1);
            if last && budget - used - 1 - c == 1 {
                c = budget - used - 1;
            }
            rounds.push(Round::plain(c));
            used += 1 + c;
        }
        for r in repaired {
            let at = d.jitter(0, rounds.len() as i64) as usize;
            rounds.insert(at, r);
        }
        let mut compact = Compaction::Never;
        if compaction && !rounds.is_empty() {
            let mut pos = on_path + 1;
            let mut k = rounds.len() - 1;
            for (i, r) in rounds.iter().enumerate() {
                pos += r.on_path();
                if pos >= next_compact {
                    k = i;
                    break;
                }
            }
            compact = Compaction::AfterRound(k);
            next_compact = on_path + used + compact_interval(d, active);
        }
        let at = start + slot * j as i64 + d.jitter(0, slot / 2);
        left_behind += hist::settled(x, d, s, p, at, &rounds, outcome, compact);
    }
    // The stuck submission fills the active path exactly.
    let f = active
        .checked_sub(s.entries.len() - left_behind)
        .filter(|f| *f >= 2)
        .expect("the whale's settled history leaves room for its stuck submission");
    // An unresolved batch needs an input with nothing but (at most) a compaction before it;
    // with more room it becomes a partial batch after some rounds.
    let mut recorded = if unresolved && f <= 3 {
        0
    } else {
        (d.jitter(1, 3) as usize).min(f - 2)
    };
    if recorded == 0 && f > 3 {
        recorded = 1;
    }
    let mut fill = f - 2 - recorded;
    let mut rounds = Vec::new();
    while fill >= 2 {
        let mut c = hist::calls_per_round(d).min(fill - 1);
        if fill - 1 - c == 1 {
            c = fill - 1;
        }
        rounds.push(c);
        fill -= 1 + c;
    }
    let begin = crash_at - 2 * MIN - rounds.len() as i64 * 10 * SEC;
    if begin > s.t {
        s.jump(begin);
    }
    let mut sub = hist::admit(d, s, p, true);
    flow::start(d, s, &mut sub, owner, p.durability);
    if fill == 1 {
        hist::maybe_compact(d, s, true);
    }
    let mut run = None;
    for &c in &rounds {
        let (_, calls) = hist::request(d, s, p, &sub, &mut run, c);
        hist::results(x, d, s, run.as_mut(), &calls, false);
    }
    let n = recorded + d.jitter(1, 3) as usize;
    let (_, calls) = hist::request(d, s, p, &sub, &mut run, n);
    hist::results(x, d, s, None, &calls[..recorded], false);
    let crashed = crash_at.max(s.t + d.jitter(40, 1_500));
    sub.crash(crashed, crashed + d.jitter(20 * SEC, 30 * SEC));
    sub.lease_expires_at = sub.lease_expires_at.min(d.now - SEC);
    let id = sub.id.clone();
    d.journals.extend(run);
    d.subs.push(sub);
    id
}
