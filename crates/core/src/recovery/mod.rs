//! The runtime's recovery rules as pure functions: the submission-state classifier, the
//! reconciler's rule table, the tool-batch repair, the failures it settles with, and the exact
//! rows an action writes together with what the database holds afterwards.

pub mod attempts;
pub mod changes;
pub mod classify;
pub mod context_window;
pub mod direct_result;
pub mod failure;
pub mod health;
pub mod incidents;
pub mod next_request;
pub mod reconciler;
pub mod repair;
pub mod runtime_text;
pub mod simulate;

#[cfg(test)]
mod classify_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod reconciler_tests;
