//! The process's allocator: mimalloc, configured to give freed memory back soon. The binary
//! and the bench's children declare it ([`Allocator`]) and call [`configure_allocator`] first
//! thing, so both measure the same.
//!
//! Why mimalloc: the 2.x read path reads a stream on one thread, parses it on the pool and
//! applies it on another, so records are made on one thread and dropped on another. glibc's
//! arenas (capped at two before, for the resident peak) then contended on their locks: a whale's
//! `show --json` spent about a tenth of its CPU waiting on them and a quarter in malloc and free
//! (`perf record`). Why these options: with its defaults mimalloc kept freed pages for a second,
//! huge pages and two full pages per size class and thread, for up to 1.7× glibc's peak
//! (docs/architecture.md, "The allocator", has the figures of both).

/// The global allocator the binary and the bench's children declare.
pub type Allocator = mimalloc::MiMalloc;

/// Indices in mimalloc v3's `mi_option_t` (the sys crate names no constant for these).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_PAGE_FULL_RETAIN: libmimalloc_sys::mi_option_t = 36;
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// The options set, each with its value: no empty page kept per size class and thread (default
/// 2), no transparent huge pages (a 2 MiB page stays resident while one of its objects lives).
/// The purge delay is the process's own ([`Process`]).
const OPTIONS: [(libmimalloc_sys::mi_option_t, std::ffi::c_long); 2] =
    [(MI_OPTION_PAGE_FULL_RETAIN, 0), (MI_OPTION_ALLOW_THP, 0)];

/// What the process is, for how soon freed pages go back to the system (mimalloc's purge delay,
/// default 1 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// The TUI: 2 ms. It stays open and reads a whale's path more than once (its list's
    /// verdicts, then its open); pages kept after one read count in the next one's peak. 0 cost
    /// the 2.x TUI's open 8 %; 10 put the 240,000-entry whale's open at 148 MB.
    Tui,
    /// A command that reads, prints and exits: 100 ms. A stream's records are made on one
    /// thread and dropped on another, and with 2 ms the freed pages went back and were faulted
    /// in again chunk after chunk (perf, 2.x `list --expired`: 9 % of the CPU in page faults,
    /// 3 % in `madvise`). Paired (8 alternating runs, 2 cores): 2.x `list --expired` 0.93× the
    /// wall time and +5 MB, the 2.x whale's `show` 0.92× and +7 MB, the runtime profile's
    /// `list --expired` 0.94× and +9 MB; 1000 ms no faster, +10–21 MB.
    Command,
}

impl Process {
    fn purge_delay_ms(self) -> std::ffi::c_long {
        match self {
            Process::Tui => 2,
            Process::Command => 100,
        }
    }
}

/// Sets the allocator's options; called first thing, before any other thread starts (and again
/// by the TUI, for its purge delay, before it starts its own).
pub fn configure_allocator(process: Process) {
    let purge = (MI_OPTION_PURGE_DELAY, process.purge_delay_ms());
    for (option, value) in OPTIONS.into_iter().chain([purge]) {
        // SAFETY: mi_option_set only stores an option's value, read by mimalloc when it acts.
        unsafe { libmimalloc_sys::mi_option_set(option, value) };
    }
    // mimalloc turns huge pages off for the process itself only when `MIMALLOC_ALLOW_THP=0` is
    // in the environment at its start, which is before `main`.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_THP_DISABLE) only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Gives the pages of freed memory back to the system now, after a read of a big session was
/// dropped: the TUI's list verdicts read the whale's path and drop it, then opening the whale
/// reads it again, and the two must not be resident together.
pub fn release_freed_memory() {
    // SAFETY: mi_collect only frees and purges memory no longer in use; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each index names the option meant: before it is set, the option there has that option's
    /// default in v3's `options.c` (1000 ms, 2 pages, 1), unless the environment set it (mimalloc
    /// reads it at process start, so a test cannot); afterwards it has the value set.
    #[test]
    fn each_option_index_is_the_option_meant() {
        let defaults = [
            (MI_OPTION_PURGE_DELAY, "MIMALLOC_PURGE_DELAY", 1000),
            (MI_OPTION_PAGE_FULL_RETAIN, "MIMALLOC_PAGE_FULL_RETAIN", 2),
            (MI_OPTION_ALLOW_THP, "MIMALLOC_ALLOW_THP", 1),
        ];
        // SAFETY: reading an option's value.
        let before: Vec<_> = defaults
            .iter()
            .map(|(o, _, _)| unsafe { libmimalloc_sys::mi_option_get(*o) })
            .collect();
        configure_allocator(Process::Command);
        for ((option, var, default), before) in defaults.iter().zip(before) {
            let expected = std::env::var(var).map_or(*default, |v| v.parse().expect("a number"));
            assert_eq!(before, expected, "{var}");
            let value = OPTIONS
                .iter()
                .find(|(o, _)| o == option)
                .map_or(Process::Command.purge_delay_ms(), |o| o.1);
            // SAFETY: reading an option's value.
            assert_eq!(
                unsafe { libmimalloc_sys::mi_option_get(*option) },
                value,
                "{var}"
            );
        }
        configure_allocator(Process::Tui);
        // SAFETY: reading an option's value.
        let purge = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(purge, 2, "the TUI's purge delay");
    }
}
