//! The wall clock, read in one place. `core` is pure and takes `now` as a parameter; the layers
//! that run things (the CLI, the TUI, the demo writer, an action stamping its audit row) ask here.

/// Current wall-clock time in ms since the Unix epoch (JavaScript `Date.now()`).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
