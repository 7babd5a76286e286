//! `e` on a 2.x journal: the opened submission's agent instance (else the selected row's)
//! exported whole, as `turnscope export ID` writes it (`turnscope_engine::flue2_export`), to a
//! file the operator names in beta.7's path popup (prefilled with a name not taken yet in the
//! export directory; tab redacts as `--redact` does). The worker builds and writes it, never
//! replacing a file; `turnscope --db FILE` opens it again, read-only.

use crossterm::event::KeyEvent;

use super::{Flue2App, Flue2Request};
use crate::messages::Target;
use crate::popups::{ExportPath, Reply};

impl Flue2App {
    /// `e`: the path popup, for the opened submission or the selected row.
    pub(super) fn start_export(&mut self) {
        let id = match &self.detail {
            Some(d) => Some(d.id.clone()),
            None => self.list.selected_id(self.now_ms),
        };
        let Some(id) = id else {
            self.status = Some("nothing selected to export".into());
            return;
        };
        let instance = self
            .list
            .rows
            .iter()
            .find(|r| r.id == id)
            .and_then(|r| r.instance_id.clone())
            .unwrap_or_else(|| "instance".into());
        // The first default name not taken yet (`-2`, `-3`, … after the first), as beta.7's.
        let default = ExportPath::default_path(&self.cfg.export_dir, |n| {
            turnscope_engine::report::export::file_name_of_instance(&instance, self.now_ms, n)
        });
        self.export = Some(ExportPath::new(Target::Submission(id), &default));
    }

    /// A key while the path popup is open.
    pub(super) fn export_key(&mut self, ev: KeyEvent) {
        let Some(popup) = self.export.as_mut() else {
            return;
        };
        match popup.on_key(&ev) {
            Reply::Stay => {}
            Reply::StayWith(said) => self.status = Some(said),
            Reply::CloseWith(said) => {
                self.export = None;
                self.status = Some(said);
            }
            Reply::Export {
                target: Target::Submission(id),
                path,
                redact,
            } => {
                self.export = None;
                self.status = Some(format!("exporting {id}…"));
                self.requests.push(Flue2Request::Export {
                    id,
                    path,
                    redact,
                    now_ms: self.now_ms,
                });
            }
            _ => self.export = None,
        }
    }

    /// The path popup's text (tests read it), where open.
    pub fn export_popup(&self) -> Option<String> {
        self.export.as_ref().map(|e| e.text.clone())
    }

    /// What the worker did with an export.
    pub(super) fn on_exported(&mut self, result: Result<std::path::PathBuf, String>) {
        self.status = Some(match result {
            Ok(path) => {
                let shown = crate::text::clean(&path.display().to_string());
                format!("exported to {shown} · turnscope --db {shown} opens it, read-only")
            }
            Err(e) => e,
        });
    }
}
