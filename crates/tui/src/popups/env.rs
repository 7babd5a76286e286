//! What a popup gets from the app (its [`Env`]) and gives back ([`Reply`], [`PopupView`]). A
//! leaf of the popups, so each popup and the `Popup` slot in `mod.rs` use it and not each other.

use crate::keymap::{Action, Ctx, Overrides};
use crate::theme::Theme;
use crate::write::popup_text::PlanItem;
use turnscope_engine::actions::ActionKind;

/// What a popup asks of the app after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Stay open (the popup changed itself, or the key did nothing).
    Stay,
    /// Stay open and say this in the status line.
    StayWith(String),
    /// Close.
    Close,
    /// Close and say this in the status line.
    CloseWith(String),
    /// Close and run this action (the palette).
    Run(Action),
    /// Close and apply these previewed plans, each in its own fenced transaction.
    Apply {
        kind: ActionKind,
        items: Vec<PlanItem>,
    },
    /// Close and switch to write mode.
    EnableWrites,
    /// Close and check (preview) the undo of an audit record or a batch.
    PlanUndo {
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
    },
    /// Close and ask why before checking the undo of this target (an apply's result offers it).
    AskUndo(turnscope_store::UndoTarget),
    /// Close and apply the previewed undo.
    Undo {
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
    },
    /// Close and export `target`'s session to `path` (`e`).
    Export {
        target: crate::messages::Target,
        path: std::path::PathBuf,
        redact: bool,
    },
    /// Close and plan this action (a `fail` with its reason, or step mode's next step).
    Plan {
        kind: ActionKind,
        ids: Vec<String>,
        reason: Option<String>,
    },
}

/// What popups need from the app to handle keys and draw.
pub struct Env<'a> {
    pub theme: Theme,
    pub write_mode: bool,
    pub keys: &'a Overrides,
    /// The contexts of the pane under the popup (the palette says what works there).
    pub here: Vec<Ctx>,
    /// Rows of a page of the pane under the popup (PgUp/PgDn scroll by it).
    pub page: usize,
}

/// Written while drawing: how far the open popup's body can scroll.
#[derive(Debug, Clone, Copy, Default)]
pub struct PopupView {
    pub max_scroll: Option<usize>,
}
