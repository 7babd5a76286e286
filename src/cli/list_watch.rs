//! `list --watch`: read the listing every interval. In a pipe, print it again only when its rows
//! changed (their stored state and verdicts, not the relative times shown), each after a time
//! line; on a terminal, clear and redraw it in place. Ctrl-C ends it with exit 0.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::{Cli, ListArgs};
use super::list::render;
use super::list_sort::SortBy;
use super::{now_ms, CliError};
use turnscope_core::journal::time::iso_from_ms;
use turnscope_core::text::sanitize;
use turnscope_store::JournalStore;

/// Clear the screen and put the cursor home (written to the terminal itself: every other byte
/// goes through the terminal-safe writer, which would show these as text).
const CLEAR: &[u8] = b"\x1b[H\x1b[2J";

pub fn run(
    store: &dyn JournalStore,
    cli: &Cli,
    args: &ListArgs,
    every: Duration,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let sort = args.sort.as_deref().map(SortBy::parse).transpose()?;
    let stop = interrupt_flag();
    let terminal = std::io::stdout().is_terminal();
    let mut last: Option<String> = None;
    let mut readings = 0u64;
    loop {
        let started = Instant::now();
        let listing = render(store, cli, args, sort)?;
        let changed = last.as_deref() != Some(listing.signature.as_str())
            // The first reading is always shown, rows or not.
            || last.is_none();
        // A terminal is redrawn in place at every reading, so its relative times ("expired 4m12s
        // ago") stay true; a pipe gets a listing only when the rows changed.
        if changed || terminal {
            let at = iso_from_ms(now_ms(cli));
            if terminal {
                out.flush()?;
                let mut tty = std::io::stdout();
                tty.write_all(CLEAR)?;
                tty.flush()?;
                writeln!(
                    out,
                    "every {} · {at} · Ctrl-C ends",
                    turnscope_core::journal::time::human_duration(every.as_millis() as i64)
                )?;
            } else {
                writeln!(out, "── {at} ──")?;
            }
            out.write_all(listing.stdout.as_bytes())?;
            if let Some(note) = &listing.stderr {
                if terminal {
                    writeln!(out, "{}", sanitize(note))?;
                } else {
                    eprintln!("{}", sanitize(note));
                }
            }
            out.flush()?;
            last = Some(listing.signature);
        }
        readings += 1;
        if args.watch_ticks.is_some_and(|n| readings >= n) {
            return Ok(());
        }
        // Sleep in short steps so Ctrl-C ends the watch at once.
        while started.elapsed() < every {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(25).min(every));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
    }
}

/// A flag Ctrl-C (SIGINT) sets instead of killing the process, so the watch ends with exit 0.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    {
        // Failing to install it only means Ctrl-C ends the process the default way.
        let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&flag));
    }
    flag
}
