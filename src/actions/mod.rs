//! Operator actions as a *plan* (pure, previewable: the exact rows to write and the state they
//! rely on) that the store then *applies* in one fenced transaction.
//!
//! Writes the runtime reads are byte-compatible with its own (spec §6.5): compact JSON, the
//! runtime's key order, recorded messages copied verbatim.

mod common;
mod entries;
mod fail;
pub mod live;
mod repair;
mod requeue;
pub mod run;
mod step;

pub use common::{ActionKind, ActionPlan, Refusal};
pub use entries::EntryIds;
pub use fail::plan_fail;
pub use repair::{plan_repair, synthetic_result, INTERRUPTED_TEXT};
pub use requeue::plan_requeue;
pub use run::{plan, IdSource};
pub use step::plan_step;
