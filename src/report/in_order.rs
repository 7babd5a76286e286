//! Inspecting a list of submissions on two threads, the reports handed on in the list's order.
//!
//! Why: a listing inspects each submission alone (its row, journal and active path since its
//! input), so two threads reading one snapshot on two connections inspect twice as many per
//! second, while the output stays oldest first and is written by one thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Results the second thread may have ready before this thread takes them. It bounds what is
/// held while this thread inspects a whale (or writes): a few dozen small reports.
const AHEAD: usize = 32;

/// Whether `visit` wants more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// The helper thread's work: the result for index `i`.
pub type Work<'a, T, E> = dyn FnMut(usize) -> Result<T, E> + Send + 'a;

/// Compute `work(i)` for every `i` in `0..n` and hand each result to `visit` in index order,
/// stopping at the first error (the one of the lowest index) or when `visit` says
/// [`Flow::Stop`]. With a `helper`, a second thread computes too: each thread claims the next
/// index not yet claimed, so the faster one does more; `visit` runs on this thread only.
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
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<Result<T, E>>(AHEAD);
        // Results the helper made come back to it once visited, to be freed where they were
        // allocated: freed on this thread, each free locks the helper's malloc arena while the
        // helper allocates in it (glibc), and the two threads took it in turn.
        let (back, returned) = mpsc::channel::<T>();
        let claims = &next;
        s.spawn(move || loop {
            while returned.try_recv().is_ok() {}
            let i = claims.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            let result = helper(i);
            let failed = result.is_err();
            // A closed channel: this thread stopped (an error, or `visit` had enough).
            if tx.send(result).is_err() || failed {
                break;
            }
        });
        let outcome = (|| {
            // The next index to hand to `visit`. This thread visits its own claims at once, so
            // every index from `due` up to this thread's latest claim is the helper's, and the
            // helper sends its results in the order it claimed them.
            let mut due = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let own = (i < n).then(|| work(i));
                while due < i.min(n) {
                    // The helper ends only after sending an error (received here first) or when
                    // the channel is closed; a closed one here means it panicked, and the scope
                    // passes the panic on.
                    let Ok(result) = rx.recv() else {
                        return Ok(());
                    };
                    due += 1;
                    let value = result?;
                    let flow = visit(&value);
                    // The helper may have ended: then it is freed here.
                    let _ = back.send(value);
                    if flow == Flow::Stop {
                        return Ok(());
                    }
                }
                let Some(result) = own else {
                    return Ok(());
                };
                due += 1;
                if visit(&result?) == Flow::Stop {
                    return Ok(());
                }
            }
        })();
        // No more claims; a helper waiting to send finds the channel closed.
        next.store(n, Ordering::Relaxed);
        drop(rx);
        drop(back);
        outcome
    })
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
                std::thread::sleep(std::time::Duration::from_millis(20));
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
