//! Inspecting a list of submissions on two threads, the reports handed on in the list's order.
//!
//! Why: a listing inspects each submission alone (its row, journal and active path since its
//! input), so two threads reading one snapshot on two connections inspect twice as many per
//! second, while the output stays oldest first and is written by one thread.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::ScopedJoinHandle;

/// How far the second thread may run ahead of what `visit` has been handed: it bounds what is
/// held while this thread inspects a whale (or writes), a few dozen small reports.
const AHEAD: usize = 32;
/// A helper that stopped `AHEAD` ahead is started again once the lead is down to this.
const RESTART_BELOW: usize = AHEAD / 2;

/// Whether `visit` wants more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// The helper thread's work: the result for index `i`.
pub type Work<'a, T, E> = dyn FnMut(usize) -> Result<T, E> + Send + 'a;

/// What the helper thread takes with it and gives back when it stops.
struct Helper<'h, 'w, T, E> {
    work: &'h mut Work<'w, T, E>,
    results: mpsc::Sender<Result<T, E>>,
}

/// Compute `work(i)` for every `i` in `0..n` and hand each result to `visit` in index order,
/// stopping at the first error (the one of the lowest index) or when `visit` says
/// [`Flow::Stop`]. With a `helper`, a second thread computes too: each thread claims the next
/// index not yet claimed, so the faster one does more; `visit` runs on this thread only.
///
/// While a claim of the helper's is due, this thread computes on, holding at most `AHEAD` of
/// its own results (before, it waited: a quarter of the default profile's `list --expired`;
/// paired, 10 runs: 108 → 92 ms). The helper stops rather than waits when it is `AHEAD` results
/// ahead, and is started again when this thread has caught up, so what is held stays bounded
/// while this thread inspects a whale. (Stopping rather than waiting was chosen under glibc's
/// allocator, where a waiting thread kept its malloc arena from the whale's read threads; under
/// mimalloc either does.)
pub fn in_order<T: Send, E: Send>(
    n: usize,
    work: &mut dyn FnMut(usize) -> Result<T, E>,
    helper: Option<&mut Work<'_, T, E>>,
    visit: &mut dyn FnMut(&T) -> Flow,
) -> Result<(), E> {
    let Some(helper) = helper else {
        for i in 0..n {
            if visit(&work(i)?) == Flow::Stop {
                break;
            }
        }
        return Ok(());
    };
    let next = AtomicUsize::new(0);
    let visited = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<Result<T, E>>();
        let (next, visited) = (&next, &visited);
        let mut idle = Some(Helper {
            work: helper,
            results: tx,
        });
        let mut running = None;
        // Each result handed on is counted in `visited` first: the helper reads it to know
        // how far ahead it is, and this thread to know which results are due.
        let mut hand_on = |result: Result<T, E>| {
            let value = result?;
            visited.fetch_add(1, Ordering::AcqRel);
            Ok(visit(&value))
        };
        // This thread's results not yet due (a claim of the helper's comes first), in claim
        // order: it computes on rather than wait for the helper (waiting idled it for a quarter
        // of a listing's time).
        let mut own: VecDeque<(usize, Result<T, E>)> = VecDeque::new();
        // Hand on every result due, in order, while they are at hand; with `wait`, until this
        // thread's oldest held one is handed on (waiting on the helper's). `false`: stop.
        let mut hand_due = |own: &mut VecDeque<(usize, Result<T, E>)>, wait: bool| {
            loop {
                let due = visited.load(Ordering::Acquire);
                if own.front().is_some_and(|(j, _)| *j == due) {
                    let (_, result) = own.pop_front().expect("front exists");
                    if hand_on(result)? == Flow::Stop {
                        return Ok(false);
                    }
                    if wait {
                        return Ok(true);
                    }
                    continue;
                }
                // `due` is not this thread's: the helper claimed it (or nobody yet). The helper
                // sends every claim, in order, before it stops.
                if due >= next.load(Ordering::Acquire).min(n) {
                    return Ok(true);
                }
                let result = if wait {
                    match rx.recv() {
                        Ok(r) => r,
                        // It panicked (dropping its sender): the scope passes the panic on.
                        Err(_) => return Ok(false),
                    }
                } else {
                    match rx.try_recv() {
                        Ok(r) => r,
                        Err(mpsc::TryRecvError::Empty) => return Ok(true),
                        Err(mpsc::TryRecvError::Disconnected) => return Ok(false),
                    }
                };
                if hand_on(result)? == Flow::Stop {
                    return Ok(false);
                }
            }
        };
        let outcome = (|| {
            loop {
                reap(&mut running, &mut idle);
                let lead = next
                    .load(Ordering::Acquire)
                    .saturating_sub(visited.load(Ordering::Acquire));
                if running.is_none() && lead < RESTART_BELOW {
                    running = idle
                        .take()
                        .map(|h| s.spawn(move || run_helper(h, n, next, visited)));
                }
                if !hand_due(&mut own, false)? {
                    return Ok(());
                }
                // At most `AHEAD` held here too: past that, wait for the helper's.
                while own.len() >= AHEAD {
                    if !hand_due(&mut own, true)? {
                        return Ok(());
                    }
                }
                let i = next.fetch_add(1, Ordering::AcqRel);
                if i >= n {
                    // Every claim is made: this thread's held results and the helper's between
                    // them, then the helper's after this thread's last (with nothing held, a wait
                    // hands on the helper's until none is due).
                    while !own.is_empty() {
                        if !hand_due(&mut own, true)? {
                            return Ok(());
                        }
                    }
                    return hand_due(&mut own, true).map(|_| ());
                }
                own.push_back((i, work(i)));
            }
        })();
        // No more claims; a helper still running stops at its next claim.
        next.store(n, Ordering::Release);
        outcome
    })
}

type Running<'s, 'h, 'w, T, E> = Option<ScopedJoinHandle<'s, Option<Helper<'h, 'w, T, E>>>>;

/// Take the helper back when it has stopped (`None` when it is not to run again); its panic is
/// passed on.
fn reap<'h, 'w, T, E>(
    running: &mut Running<'_, 'h, 'w, T, E>,
    idle: &mut Option<Helper<'h, 'w, T, E>>,
) {
    if let Some(handle) = running.take_if(|h| h.is_finished()) {
        match handle.join() {
            Ok(helper) => *idle = helper,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The helper thread: claim and compute until `AHEAD` ahead of `visited` (or out of indices),
/// then hand itself back; `None` when it need not run again (an error sent, or no receiver).
fn run_helper<'h, 'w, T, E>(
    h: Helper<'h, 'w, T, E>,
    n: usize,
    next: &AtomicUsize,
    visited: &AtomicUsize,
) -> Option<Helper<'h, 'w, T, E>> {
    loop {
        let i = next.load(Ordering::Acquire);
        if i >= n || i >= visited.load(Ordering::Acquire) + AHEAD {
            return Some(h);
        }
        if next
            .compare_exchange(i, i + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue;
        }
        let result = (h.work)(i);
        let failed = result.is_err();
        if h.results.send(result).is_err() || failed {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Runs `in_order` over `n` with a helper, `slow(i)` marking indices that take a while.
    fn run(
        n: usize,
        fail_at: Option<usize>,
        stop_after: Option<usize>,
        slow: impl Fn(usize) -> bool + Sync,
    ) -> (Result<(), usize>, Vec<usize>, Vec<&'static str>) {
        let by = Mutex::new(vec![""; n]);
        let compute = |i: usize, who: &'static str| {
            if slow(i) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            by.lock().unwrap()[i] = who;
            match fail_at {
                Some(f) if f == i => Err(i),
                _ => Ok(i),
            }
        };
        let mut seen = Vec::new();
        let outcome = in_order(
            n,
            &mut |i| compute(i, "this"),
            Some(&mut |i| compute(i, "helper")),
            &mut |&i| {
                seen.push(i);
                if stop_after.is_some_and(|k| seen.len() >= k) {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            },
        );
        (outcome, seen, by.into_inner().unwrap())
    }

    #[test]
    fn every_result_is_visited_once_in_order_and_both_threads_work() {
        // Slow indices on either thread make the other run ahead (up to `AHEAD` waiting).
        let (outcome, seen, by) = run(500, None, None, |i| i % 97 == 3 || i == 250);
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, (0..500).collect::<Vec<_>>());
        assert!(by.contains(&"this") && by.contains(&"helper"), "{by:?}");
    }

    #[test]
    fn a_helper_that_stopped_ahead_is_started_again() {
        // Index 0 keeps this thread busy: the helper stops `AHEAD` ahead, then is started again
        // (every index takes a while, so the restarted helper gets some of them).
        let (outcome, seen, by) = run(100, None, None, |_| true);
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        let past_first_stop = by[AHEAD + 2..].iter().filter(|w| **w == "helper").count();
        assert!(past_first_stop > 0, "{by:?}");
    }

    #[test]
    fn the_first_error_in_order_ends_the_run() {
        for fail_at in [0, 1, 7, 499] {
            let (outcome, seen, _) = run(500, Some(fail_at), None, |i| i % 50 == 0);
            assert_eq!(outcome, Err(fail_at));
            assert_eq!(seen, (0..fail_at).collect::<Vec<_>>());
        }
    }

    #[test]
    fn stopping_ends_the_run_and_the_helper() {
        let (outcome, seen, by) = run(10_000, None, Some(5), |i| i < 5);
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        // The helper stopped within its window: most indices were never computed.
        let computed = by.iter().filter(|w| !w.is_empty()).count();
        assert!(computed < 5 + 2 * AHEAD + 4, "{computed} computed");
    }

    #[test]
    fn this_thread_computes_on_while_a_helper_claim_is_due() {
        // The helper's first claim finishes only once this thread has computed 5 more: a
        // thread that waited for it would leave the helper waiting until its 2 s run out.
        let mine = AtomicUsize::new(0);
        let helper_first = AtomicUsize::new(usize::MAX);
        let waited_out = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let outcome = in_order::<usize, ()>(
            64,
            // A millisecond each, so the helper has started before this thread is done.
            &mut |i| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                mine.fetch_add(1, Ordering::AcqRel);
                Ok(i)
            },
            Some(&mut |i| {
                if helper_first
                    .compare_exchange(usize::MAX, i, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let from = mine.load(Ordering::Acquire);
                    let start = std::time::Instant::now();
                    while mine.load(Ordering::Acquire) < from + 5 {
                        if start.elapsed() > std::time::Duration::from_secs(2) {
                            waited_out.fetch_add(1, Ordering::AcqRel);
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                Ok(i)
            }),
            &mut |&i| {
                seen.push(i);
                Flow::Continue
            },
        );
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, (0..64).collect::<Vec<_>>());
        assert_ne!(
            helper_first.load(Ordering::Acquire),
            usize::MAX,
            "the helper ran"
        );
        assert_eq!(waited_out.load(Ordering::Acquire), 0, "this thread waited");
    }

    #[test]
    fn a_panic_on_the_helper_is_passed_on() {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut seen = 0;
            let _ = in_order::<usize, ()>(
                200,
                // This thread is still on index 0 when the helper has panicked on its first.
                &mut |i| {
                    if i == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(30));
                    }
                    Ok(i)
                },
                Some(&mut |i| panic!("helper fails at {i}")),
                &mut |_| {
                    seen += 1;
                    Flow::Continue
                },
            );
            seen
        }));
        assert!(outcome.is_err(), "the listing ended quietly: {outcome:?}");
    }

    #[test]
    fn without_a_helper_this_thread_computes_everything() {
        let mut seen = Vec::new();
        let outcome: Result<(), ()> = in_order(4, &mut |i| Ok(i * 10), None, &mut |&v| {
            seen.push(v);
            Flow::Continue
        });
        assert_eq!(outcome, Ok(()));
        assert_eq!(seen, vec![0, 10, 20, 30]);
    }
}
