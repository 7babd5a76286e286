//! Operator actions as a *plan* (pure, previewable: the exact rows to write and the state they
//! rely on) that the store then *applies* in one fenced transaction.
//!
//! Writes the runtime reads are byte-compatible with its own (spec §6.5): compact JSON, the
//! runtime's key order, recorded messages copied verbatim.

pub mod bulk;
mod common;
mod entries;
mod extend;
mod fail;
pub mod live;
mod malformed;
pub mod predict;
mod reconcile;
mod repair;
mod requeue;
pub mod run;
mod runtime_rows;
pub mod side_effects;
mod step;
mod writes;

pub use common::{ActionKind, ActionPlan, Refusal};
pub use entries::EntryIds;
pub use extend::{parse_deadline, plan_extend, Extension, MAX_ATTEMPTS};
pub use fail::plan_fail;
pub use predict::{NextOutcome, Prediction};
pub use reconcile::plan_reconcile;
pub use repair::plan_repair;
pub use requeue::plan_requeue;
pub use run::{plan, IdSource};
pub use runtime_rows::{synthetic_result, INTERRUPTED_TEXT};
pub use side_effects::MayHaveRun;
pub use step::{next_step_len, plan_step, step_words};
