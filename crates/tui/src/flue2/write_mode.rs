//! `w` on a 2.x journal: read-only and write mode switched in place, as beta.7's `w`. Write mode
//! asks first (No selected), then the worker opens the journal for writes (its checks: the file
//! writable, not an export); only then do the write keys and marks come on. Back to read-only,
//! the marks go and the worker lets its writer go.

use super::write::Flow;
use super::{Flue2App, Flue2Request};

impl Flue2App {
    /// `w`.
    pub(super) fn toggle_write_mode(&mut self) {
        if self.write.is_some() {
            self.status = Some("one action at a time: finish or close the popup first".into());
            return;
        }
        if self.cfg.write {
            self.cfg.write = false;
            self.list.marking = false;
            self.list.marks.clear();
            self.requests.push(Flue2Request::WriteMode(false));
            self.status = Some("read-only: the write keys are off (w switches back)".into());
            return;
        }
        if let Some(why) = &self.cfg.write_refusal {
            self.status = Some(format!("write mode is not available: {why}"));
            return;
        }
        self.write = Some(Flow::EnableWrites {
            operator: self.cfg.operator.clone(),
            yes: false,
        });
    }

    /// Yes on the popup: the worker opens the writer.
    pub(super) fn request_write_mode(&mut self) {
        self.write = Some(Flow::Waiting("opening the journal for writes…".into()));
        self.requests.push(Flue2Request::WriteMode(true));
    }

    pub(super) fn on_write_mode(&mut self, result: Result<(), String>) {
        self.write = None;
        self.status = Some(match result {
            Ok(()) => {
                self.cfg.write = true;
                self.list.marking = true;
                format!(
                    "write mode as {}: every write is previewed and asks first · w goes back to read-only",
                    self.cfg.operator
                )
            }
            Err(e) => format!("write mode is not available: {e}"),
        });
    }
}
