//! `y` and `e`: the selected thing's id to the clipboard, its document to a file.

use super::*;

impl App {
    /// The id `y` copies: the selected row's id, or the selected entry's.
    pub fn selected_id(&self) -> Option<String> {
        match self.focus {
            Pane::List => self.selected_item().map(|i| i.row.submission_id.clone()),
            Pane::Sessions => self.selected_session().map(|s| s.id.clone()),
            Pane::Audit => self.selected_audit().map(|a| a.submission_id.clone()),
            // The worker's full id: what `--owner` takes.
            Pane::Incidents => self.incidents.selected_group()?.owner_id.clone(),
            Pane::Tree | Pane::Detail => self.inspect()?.selected_id(),
        }
    }

    pub(super) fn copy(&mut self) {
        match self.selected_id() {
            Some(id) => {
                // What is pasted must not act either (a newline or ESC pasted into a shell): the
                // clipboard gets the id as shown, with hostile characters as visible escapes.
                let id = crate::text::clean(&id);
                self.effects.push(Effect::Copy(id.clone()));
                self.info(&format!("copied {id} to the clipboard (OSC 52)"));
            }
            None => self.info("nothing to copy here"),
        }
    }

    pub(super) fn export_target(&self) -> Option<Target> {
        if let Some(ins) = self.inspect() {
            return Some(ins.target.clone());
        }
        match self.focus {
            Pane::Sessions => self.sessions.target(),
            Pane::Audit => self.audit.target(),
            Pane::Incidents => None,
            _ => self.list.target(&self.items),
        }
    }

    /// `M`: the next request of the opened (or selected) submission or session, read whole by
    /// the worker and shown in a popup.
    pub(super) fn next_request(&mut self) {
        match self.export_target() {
            Some(target) => {
                self.info("reading the next request…");
                self.effects.push(Effect::Request(Request::NextRequest {
                    target,
                    now_ms: self.now_ms,
                }));
            }
            None => self.info("nothing selected: open a submission or a session, then M"),
        }
    }

    /// `e`: ask where (prefilled with the default name in the export directory), then export.
    pub(super) fn export(&mut self) {
        match self.export_target() {
            Some(t) => {
                let key = self.session_key_of(&t);
                // The first default name not taken yet (`-2`, `-3`, … after the first).
                let default = ExportPath::default_path(&self.cfg.export_dir, |n| {
                    turnscope_engine::report::export::file_name(
                        key.as_deref().unwrap_or(""),
                        self.now_ms,
                        n,
                    )
                });
                self.show(Popup::ExportPath(ExportPath::new(t, &default)));
            }
            None => self.info("nothing selected to export"),
        }
    }

    /// The session key of an export target, where the screen knows it.
    fn session_key_of(&self, t: &Target) -> Option<String> {
        match t {
            Target::Session(key) => Some(key.clone()),
            Target::Submission(id) => self
                .items
                .iter()
                .find(|i| &i.row.submission_id == id)
                .map(|i| i.row.session_key.clone())
                .or_else(|| match self.inspect()?.data.as_ref()? {
                    Opened::Submission(o) => Some(o.report.row().session_key.clone()),
                    Opened::Session(s) => Some(s.key.clone()),
                }),
        }
    }
}
