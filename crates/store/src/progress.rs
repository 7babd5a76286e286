//! Progress of long work (the scale generator, a copy into PostgreSQL, a bulk apply), reported
//! by the layer that does the work to whoever shows it. A leaf: the layers below `cli` report
//! through this trait and never know whether (or how) a bar is drawn.

/// Receives the progress of one piece of work, in stages.
pub trait Progress {
    /// A new stage: `what` is being done, `total` units of it (`None`: unknown).
    fn stage(&mut self, what: &str, total: Option<u64>);
    /// `n` more units of the current stage are done.
    fn advance(&mut self, n: u64);
}

/// Progress nobody watches (tests, benches, pipes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unwatched;

impl Progress for Unwatched {
    fn stage(&mut self, _what: &str, _total: Option<u64>) {}
    fn advance(&mut self, _n: u64) {}
}
