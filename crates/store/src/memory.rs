//! The process's use of glibc's allocator: fewer arenas, and freed pages given back after a big
//! read. Called by the binary first thing and by the bench's children, so both measure the same.
//! mimalloc in place of these was measured and not kept: the same speed for up to 1.7× the peak
//! memory (docs/architecture.md, "Why not another allocator").

/// Caps glibc's malloc arenas at two for the whole process. glibc gives each thread that
/// allocates its own arena (up to eight per core), and pages freed in one are not reused by
/// another: the read path's parse threads and the TUI's worker each grow one. Measured with the
/// scale bench's children (`ru_maxrss`, same build, `MALLOC_ARENA_MAX=2` against none): on the
/// runtime profile the whale open goes from 143 to 125 MB and the refresh from 152 to 127 MB;
/// on the session profile the whale open goes from 124 to 135 MB. One arena would remove the
/// rest of that effect (see `release_freed_memory`) but costs the parse threads their
/// parallelism: the 240,000-entry whale open took 12–13 % longer on both profiles
/// (`farm-bench -n 8`, the bench's `whale_open` child). The binary calls this first thing, and
/// the bench's children do too, so they measure what the binary does. Elsewhere (not glibc) it
/// does nothing.
pub fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the pages of freed memory back to the system (glibc's `malloc_trim`), after a read of
/// a big session was dropped. Freed pages stay resident in the arena of the thread that freed
/// them; when the next big read's threads allocate from the other arena, both are resident. The
/// TUI's list verdicts read the whale's path and drop it, then opening the whale reads it again:
/// its resident peak was 131–148 MiB run to run at 240,000 entries (set by which arena each
/// parse thread was given), 129–134 MiB with this after the verdict, in the same time
/// (`farm-bench -n 8`, the bench's `whale_open` child, 0.996×). Elsewhere (not glibc) it does
/// nothing.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
}
