//! The write flow's own screens, in one place: the reason prompt (`reason.rs`), the confirm
//! dialog that previews a plan and shows its result (`confirm.rs`), and their text
//! (`popup_text.rs`). The flow itself: a write key becomes `App::act` (`app/writes.rs`), the
//! worker plans it (`worker.rs`, `Request::Plan` → `turnscope_engine::actions::run::prepare`), the
//! confirm dialog shows the plan, and a yes sends `Request::Apply` (`app/popup_slot.rs`).

pub(crate) mod confirm;
pub(crate) mod popup_text;
pub(crate) mod reason;
