//! The runtime profile's whale: one stuck submission whose own history after its input is
//! `active` entries on the active path (tool cycles of 3 calls and their 3 results, ending in a
//! `toolUse` with 1 of its 3 results recorded) plus `abandoned` entries on the abandoned branches
//! its earlier repairs left (spec §6.1: each crash mid-batch left 1 or 2 recorded results behind,
//! the restart re-appended them and wrote `interrupted` results for the rest, and the attempt was
//! replaced). The journal is at `tool_request_recorded`, so the runtime classifies it
//! `resume/tool_results_partial` and its reconciler's next step is rule 6, a repair.
//!
//! The agent allows that many attempts and that long a run (`RUNTIME_WHALE`'s durability), so
//! neither the retry budget nor the timeout ends it first.

use super::scale_history::{self as hist, Ctx};
use super::scale_options::CALLS;
use super::scale_profiles::RUNTIME_WHALE;
use turnscope_demo::build::{Demo, Session, MIN, SEC};
use turnscope_demo::flow;

/// The shortest history after the input: one cycle, then the partly recorded batch.
pub(crate) const MIN_ACTIVE: usize = CALLS + 1 + 2;
/// The longest one `--whale-entries` accepts (the run then still ends before the timeout).
pub(crate) const MAX_ACTIVE: usize = 2_000_000;
/// How long after a crash the restarted process repaired the batch (the lease is 30 s).
const RESTART: (i64, i64) = (25 * SEC, 45 * SEC);
/// Mean duration of a tool cycle (model turn about 2.96 s, the slowest of 3 tools about 1.99 s),
/// and what a repair adds to its cycle (the crash, the restart, the repair writes), for the
/// start time.
const CYCLE_MS: i64 = 4_950;
const REPAIR_MS: i64 = 35_650;

/// The abandoned entries of a whale with `active` (the profile's 100,000 : 20,000).
pub(crate) fn abandoned_for(active: usize) -> usize {
    active / 5
}

/// Complete cycles before the last batch, and the extra calls of the first one (so the path
/// after the input has exactly `active` entries).
fn layout(active: usize) -> (usize, usize) {
    ((active - 2) / (CALLS + 1), (active - 2) % (CALLS + 1))
}

/// Why `active` and `abandoned` cannot be built, if they cannot.
pub(crate) fn check(active: usize, abandoned: usize) -> Result<(), String> {
    if !(MIN_ACTIVE..=MAX_ACTIVE).contains(&active) {
        return Err(format!(
            "a whale history of {active} entries after the input is outside {MIN_ACTIVE}..={MAX_ACTIVE}"
        ));
    }
    let (cycles, _) = layout(active);
    if abandoned.div_ceil(CALLS - 1) > cycles {
        return Err(format!(
            "a whale of {active} entries after the input has too few tool cycles for {abandoned} abandoned entries"
        ));
    }
    Ok(())
}

/// About how long the stuck submission ran (ms), with slack so its last entry is before the crash.
pub(crate) fn duration(active: usize, abandoned: usize) -> i64 {
    let (cycles, _) = layout(active);
    let repairs = abandoned as i64 * 3 / 5;
    let mean = cycles as i64 * CYCLE_MS + repairs * REPAIR_MS;
    // Three standard deviations of the sum are well under a 500th of it.
    mean + mean / 500 + 10 * MIN
}

/// Results recorded before each repair's crash (1 or 2, mostly 2, summing to `abandoned`), one
/// per cycle at most, at random cycles. `0` for a cycle that ran through.
fn repairs(d: &mut Demo, cycles: usize, abandoned: usize) -> Vec<usize> {
    let mut marks = vec![0usize; cycles];
    let mut left = abandoned;
    let mut j = 0;
    while left > 0 {
        let tight = j + left.div_ceil(CALLS - 1) >= cycles;
        let r = if left >= 2 && (tight || d.rng.next_u64() % 3 != 0) {
            2
        } else {
            1
        };
        marks[j] = r;
        left -= r;
        j += 1;
    }
    for i in (1..marks.len()).rev() {
        marks.swap(i, (d.rng.next_u64() % (i as u64 + 1)) as usize);
    }
    marks
}

/// Build the stuck submission in `s` (after its settled history), its last attempt owned by
/// process `owner` which crashed at `crash_at`. Returns its id.
pub(crate) fn stuck(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    active: usize,
    abandoned: usize,
    crash_at: i64,
    owner: usize,
) -> String {
    let p = &RUNTIME_WHALE;
    let (cycles, extra) = layout(active);
    let marks = repairs(d, cycles, abandoned);
    let begin = crash_at - duration(active, abandoned);
    if begin > s.t {
        s.jump(begin);
    }
    let mut sub = hist::admit(d, s, p, true);
    flow::start(d, s, &mut sub, owner, p.durability);
    let mut run = None;
    for (j, &recorded) in marks.iter().enumerate() {
        let calls = CALLS + if j == 0 { extra } else { 0 };
        if recorded > 0 {
            hist::repaired_round(x, d, s, p, &mut sub, &mut run, calls, recorded, RESTART);
        } else {
            let (_, batch) = hist::request(d, s, p, &sub, &mut run, calls);
            hist::results(x, d, s, run.as_mut(), &batch, false);
        }
    }
    let (_, batch) = hist::request(d, s, p, &sub, &mut run, CALLS);
    hist::results(x, d, s, None, &batch[..1], false);
    // The last replacement was claimed by the process that then crashed.
    sub.owner_id = Some(d.procs[owner].clone());
    let crashed = crash_at.max(s.t + d.jitter(40, 1_500));
    sub.crash(crashed, crashed + d.jitter(20 * SEC, 30 * SEC));
    sub.lease_expires_at = sub.lease_expires_at.min(d.now - SEC);
    let id = sub.id.clone();
    d.journals.extend(run);
    d.subs.push(sub);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_fills_the_history_exactly() {
        for active in [MIN_ACTIVE, 7, 8, 9, 100_000, 240_001] {
            let (c, extra) = layout(active);
            assert_eq!(c * (CALLS + 1) + extra + 2, active);
            assert!(c >= 1 && extra < CALLS + 1);
        }
        assert!(check(MIN_ACTIVE - 1, 0).is_err());
        assert!(check(100_000, 20_000).is_ok());
        assert!(check(10, 10).is_err());
    }

    #[test]
    fn repairs_sum_to_the_abandoned_entries() {
        let mut d = Demo::new(turnscope_demo::testing::NOW);
        for (active, abandoned) in [(100_000, 20_000), (6, 1), (10, 4), (1_000, 200)] {
            let (c, _) = layout(active);
            let m = repairs(&mut d, c, abandoned);
            assert_eq!(m.len(), c);
            assert_eq!(m.iter().sum::<usize>(), abandoned);
            assert!(m.iter().all(|r| *r < CALLS));
        }
    }
}
