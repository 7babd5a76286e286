//! The pure domain: entries, the active path, the classifier, the partial-batch detector, the
//! repair preview and the recovery planner. No I/O, no terminal, no SQL.

pub mod changes;
pub mod classify;
pub mod compact;
mod compact_de;
#[cfg(test)]
mod compact_oracle;
mod compact_scan;
pub mod context_window;
pub mod direct_result;
pub mod entry;
pub mod entry_slice;
pub mod failure;
pub mod history;
pub mod incidents;
pub mod js_json_parse;
pub mod js_key;
pub mod jsjson;
mod json_string;
pub mod jsregex;
pub mod payload;
pub mod plan;
mod preview;
pub mod records;
pub mod repair;
pub mod rows;
pub mod runtime_text;
pub mod search;
pub mod simulate;
pub mod status;
pub mod stream;
pub mod time;

#[cfg(test)]
mod classify_tests;
#[cfg(test)]
pub(crate) mod plan_tests;
#[cfg(test)]
mod proptests;
