//! turnscope's engine: one submission fully inspected ([`report`]), the listing driver that
//! selects and inspects a view's submissions in one read snapshot ([`listing`]), and the
//! operator's actions as previewable plans applied in one fenced, audited transaction
//! ([`actions`], whose [`actions::run`] is the one runner both front ends use).

pub mod actions;
pub mod flue2;
pub mod flue2_actions;
pub mod flue2_bulk;
pub mod flue2_cost;
pub mod flue2_diff;
pub mod flue2_export;
pub mod flue2_find;
pub mod flue2_fold;
pub mod flue2_health;
pub mod flue2_incidents;
pub mod flue2_kept;
pub mod flue2_memos;
pub mod flue2_next_request;
pub mod flue2_redact;
pub mod flue2_select;
pub mod flue2_show;
pub mod flue2_sort;
pub mod in_order;
pub mod listing;
pub mod pretty_array;
pub mod report;
