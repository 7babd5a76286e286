//! turnscope's pure domain: the runtime's stored journal format, its JavaScript details, and its
//! recovery rules (the classifier, the reconciler, the repair). No I/O, no terminal, no SQL, no
//! clock: `now` is always a parameter.
//!
//! - [`journal`]: entries, the active path, compact parsing, rows as plain data.
//! - [`js`]: what JavaScript does that Rust does not (number and string output, `JSON.parse`'s
//!   error text, regex flags), so turnscope writes and judges bytes as the runtime does.
//! - [`recovery`]: the runtime's classifier, reconciler, repair and failures, and what an action's
//!   rows change ([`recovery::changes`], [`recovery::simulate`]).
//! - [`text`]: terminal-safe text, shared by the CLI and the TUI.
//! - [`flue2`]: flue 2.x's conversation streams: the record log parsed and folded as the runtime
//!   folds it (not yet read by the store).

// The fast paths and their references for the fuzz targets in `fuzz/` (not a public API).
pub mod flue2;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod journal;
pub mod js;
pub mod recovery;
pub mod suggest;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;
