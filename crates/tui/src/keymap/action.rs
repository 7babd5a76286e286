//! The vocabulary of the keymap: the typed actions, the contexts a binding applies in, keys and
//! bindings. A leaf, so the table (`table.rs`) and the lookups (`mod.rs`) both use it.

use crossterm::event::{KeyCode, KeyModifiers};

use turnscope_engine::actions::ActionKind;

use turnscope_store::RowFilter;

/// How the TUI shows the list's filters (one key each, `1`–`7` in `RowFilter`'s order).
pub trait FilterLabel {
    /// The filter's name in the footer, the status line and the configuration's action names
    /// (`queued` reads as pending here).
    fn label(self) -> &'static str;
    /// The label where space is short (`pend`, `term`, …).
    fn short_label(self) -> &'static str;
    /// The digit that selects it.
    fn key(self) -> char;
}

impl FilterLabel for RowFilter {
    fn label(self) -> &'static str {
        match self {
            RowFilter::Queued => "pending",
            other => other.name(),
        }
    }

    fn short_label(self) -> &'static str {
        match self {
            RowFilter::Expired => "exp",
            RowFilter::All => "all",
            RowFilter::Queued => "pend",
            RowFilter::Running => "run",
            RowFilter::Terminalizing => "term",
            RowFilter::Settled => "done",
            RowFilter::Failed => "fail",
        }
    }

    fn key(self) -> char {
        let n = RowFilter::all().position(|f| f == self).unwrap_or(0);
        char::from_digit(n as u32 + 1, 10).unwrap_or('?')
    }
}

/// Everything a key (or the mouse) can ask for. The write actions are one variant, `Act`, and
/// exist only in `--write` mode (their bindings are marked `write`). The strum names are the
/// configuration's action names (`keymap::action_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    Quit,
    Back,
    Help,
    Refresh,
    NextPane,
    PrevPane,
    ToggleSessions,
    Copy,
    Export,
    PlanWrites,
    NextRequest,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    #[strum(serialize = "open")]
    Enter,
    Filter(RowFilter),
    #[strum(serialize = "filter")]
    StartFilter,
    #[strum(serialize = "sort")]
    SortNext,
    SortReverse,
    Expand,
    Collapse,
    ExpandAll,
    CollapseAll,
    JumpCheckpoint,
    JumpInput,
    JumpMatched,
    #[strum(serialize = "verdict")]
    ShowVerdict,
    Search,
    SearchNext,
    SearchPrev,
    PrevSubmission,
    NextSubmission,
    ToggleRaw,
    /// Press the popup's selected button (No on a write until the operator switches).
    Confirm,
    /// The popup's Yes: apply the previewed writes, or ok. Bound to `A`, a key that means
    /// nothing anywhere else (not `y`, which copies an id everywhere else).
    Yes,
    /// Switch between the popup's No and Yes buttons.
    SwitchButton,
    Cancel,
    /// Show the audit trail (both modes).
    #[strum(serialize = "audit")]
    ToggleAudit,
    /// Switch between read-only and write mode in place (to write mode after a confirm).
    #[strum(serialize = "write_mode")]
    ToggleWriteMode,
    /// Write mode only: plan an action on the selected (or every marked) submission and open its
    /// confirm popup.
    Act(ActionKind),
    /// Write mode only: mark or unmark the selected list row (on the incidents screen: every
    /// submission of the selected worker) for a bulk action.
    #[strum(serialize = "mark")]
    ToggleMark,
    /// Write mode only: mark every row the list shows (its filter and `/` query).
    MarkAll,
    /// Write mode only: mark the rows from the last one marked to the cursor.
    MarkRange,
    /// Write mode only: unmark every row, those hidden by the filter too.
    ClearMarks,
    /// The stuck submissions grouped by the worker that held their lease, or back.
    #[strum(serialize = "incidents")]
    ToggleIncidents,
    /// From any screen: the sessions screen, asking for a key, instance, id or text to find.
    FindSession,
    /// The command palette: every action with its key, filtered as you type.
    Palette,
    /// A bulk preview: show or hide each submission's rows under its group.
    ToggleRows,
    /// Write mode only, the audit trail: undo the selected record, or (`batch`) every record of
    /// its bulk apply.
    Undo {
        batch: bool,
    },
}

/// Where a binding applies. Lookup goes from the focused pane outwards to `Global`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    Global,
    /// Moving in any list-like pane.
    Nav,
    List,
    Sessions,
    /// Tree and detail of an opened submission or session.
    Inspect,
    Tree,
    Detail,
    /// The audit trail view.
    Audit,
    /// The incidents view: stuck submissions per worker.
    Incidents,
    Popup,
}

impl Ctx {
    pub fn title(self) -> &'static str {
        match self {
            Ctx::Global => "Everywhere",
            Ctx::Nav => "Moving",
            Ctx::List => "Submissions list",
            Ctx::Sessions => "Sessions list",
            Ctx::Inspect => "Opened submission or session (tree and detail)",
            Ctx::Tree => "History tree",
            Ctx::Detail => "Detail",
            Ctx::Audit => "Audit trail",
            Ctx::Incidents => "Incidents (stuck submissions per worker)",
            Ctx::Popup => "Popup",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub ctx: Ctx,
    pub keys: &'static [Key],
    /// How the keys are written in help and footer.
    pub label: &'static str,
    pub action: Action,
    pub help: &'static str,
    /// Short text for the footer; `None` keeps the binding out of the footer. `"keys\ttext"`
    /// overrides the key label (for groups like `1-7`).
    pub footer: Option<&'static str>,
    /// Only in `--write` mode. In read-only mode the binding is absent: not looked up, not in the
    /// footer, not in the help.
    pub write: bool,
}

impl Ctx {
    /// Whether keys of both contexts are looked up for one focused pane (the app's chains: a
    /// pane's own context, `Inspect` for the tree and the detail, then `Nav` and `Global`).
    pub fn active_with(self, other: Ctx) -> bool {
        use Ctx::*;
        self == other
            || matches!(self, Global | Nav)
            || matches!(other, Global | Nav)
            || matches!(
                (self, other),
                (Inspect, Tree | Detail) | (Tree | Detail, Inspect)
            )
    }
}

impl Binding {
    /// Whether the binding exists in this mode.
    pub fn active(&self, write_mode: bool) -> bool {
        write_mode || !self.write
    }
}
