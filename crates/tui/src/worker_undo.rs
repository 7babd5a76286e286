//! The TUI's undo (write mode, the audit screen's `u` / `U`): the same fenced undo as the CLI's,
//! checked first (rolled back) for the preview, then applied on an explicit yes.

use crate::popup_line::{PopupLine, Tone};
use turnscope_store::{AuditInfo, JournalWriter, UndoTarget, Undone};

/// Check (and preview) or apply the undo of `target`.
pub fn undo(
    writer: &mut dyn JournalWriter,
    target: &UndoTarget,
    operator: &str,
    reason: Option<&str>,
    now_ms: i64,
    commit: bool,
) -> Result<Undone, super::worker_error::WorkerError> {
    let info = AuditInfo {
        operator: operator.to_string(),
        action: "undo".into(),
        reason: reason.map(str::to_string),
        summary: String::new(),
        now_ms,
        batch_id: match target {
            UndoTarget::Batch(_) => Some(turnscope_engine::actions::run::new_batch_id()),
            UndoTarget::Audit(_) => None,
        },
        side_effects: None,
    };
    writer.undo(target, &info, commit).map_err(Into::into)
}

/// The confirm popup's body for a checked undo.
pub fn preview_lines(target: &UndoTarget, reason: Option<&str>, u: &Undone) -> Vec<PopupLine> {
    let ids: Vec<String> = u.records.iter().map(|(id, _)| format!("#{id}")).collect();
    let mut lines = vec![PopupLine::new(
        Tone::Heading,
        format!(
            "undo {target}: revert audit {} ({}) in one fenced transaction",
            ids.join(", "),
            turnscope_core::text::plural(u.restored.len() as u64, "row", "rows")
        ),
    )];
    // Decision first: what it reverts and on what condition, then the rows it restores.
    lines.push(
        "every row still holds what turnscope wrote; if the runtime acts first, nothing is written"
            .into(),
    );
    if let Some(r) = reason {
        lines.push(format!("reason: {r}").into());
    }
    lines.push(PopupLine::blank());
    lines.push(PopupLine::new(Tone::Heading, "restores:"));
    lines.extend(
        u.restored
            .iter()
            .map(|l| PopupLine::new(Tone::Row, format!("  {l}"))),
    );
    lines
}
