//! The screens under the popups: the submissions list, the sessions list, the audit trail, the
//! incidents (stuck submissions per worker), and
//! an opened submission or session. Each holds its own state and answers the actions of its
//! pane; the app routes keys to the focused one and carries out what it asks for.

pub mod audit;
pub mod incidents;
pub mod inspect;
pub mod list;
pub mod sessions;

/// A cursor at `cur` in `len` rows moved by `delta`, kept on a row.
pub fn step(cur: usize, len: usize, delta: isize) -> usize {
    if len == 0 {
        return 0;
    }
    (cur as isize)
        .saturating_add(delta)
        .clamp(0, len as isize - 1) as usize
}
