//! The one table of key bindings: lookup, the footer, the help, the palette and the
//! configuration's action names all read it.

use crossterm::event::{KeyCode, KeyModifiers};

use super::action::{Action, Binding, Ctx, Key};
use turnscope_engine::actions::ActionKind;
use turnscope_store::RowFilter;

const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::NONE,
    }
}

const fn code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

const fn b(
    ctx: Ctx,
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    footer: Option<&'static str>,
    help: &'static str,
) -> Binding {
    Binding {
        ctx,
        keys,
        label,
        action,
        help,
        footer,
        write: false,
    }
}

/// A binding that exists only in `--write` mode.
const fn w(
    ctx: Ctx,
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    footer: Option<&'static str>,
    help: &'static str,
) -> Binding {
    Binding {
        ctx,
        keys,
        label,
        action,
        help,
        footer,
        write: true,
    }
}

use Action as A;
use Ctx as C;
use RowFilter as F;

// One binding a line, in columns: context, keys, label, action, footer, help (the one long
// column, last). Unskipped, rustfmt spreads each call over eight lines, and a table of eighty
// bindings becomes seven hundred lines that cannot be read down a column.
#[rustfmt::skip]
pub static KEYMAP: &[Binding] = &[
    // Popup first: it owns the keyboard while open.
    b(C::Popup,     &[code(KeyCode::Enter)],                                       "⏎",       A::Confirm,                    Some("select"),            "press the selected button (a write's confirm opens with No selected)"),
    b(C::Popup,     &[k('A')],                                                     "A",       A::Yes,                        Some("apply"),             "apply: the previewed writes (a bulk of 10 or more: type its count first), or ok"),
    b(C::Popup,     &[code(KeyCode::Tab), code(KeyCode::BackTab)],                 "Tab",     A::SwitchButton,               None,                      "switch between the No and Yes buttons"),
    b(C::Popup,     &[code(KeyCode::Esc), k('n'), k('q')],                         "esc/n",   A::Cancel,                     Some("close"),             "cancel, close"),
    b(C::Popup,     &[k('d')],                                                     "d",       A::ToggleRows,                 None,                    "bulk preview: show or hide each submission's rows"),
    w(C::Popup,     &[k('u')],                                                     "u",       A::Undo { batch: false },      None,                      "an apply's result: undo it (asks why, previewed)"),
    b(C::Popup,     &[k('j'), code(KeyCode::Down)],                                "j/↓",     A::Down,                       None,                      "scroll down"),
    b(C::Popup,     &[k('k'), code(KeyCode::Up)],                                  "k/↑",     A::Up,                         None,                      "scroll up"),
    b(C::Popup,     &[code(KeyCode::PageDown), k(' ')],                            "PgDn",    A::PageDown,                   None,                      "page down"),
    b(C::Popup,     &[code(KeyCode::PageUp)],                                      "PgUp",    A::PageUp,                     None,                      "page up"),
    // Submissions list.
    b(C::List,      &[k('1')],                                                     "1",       A::Filter(F::Expired),         Some("1-7\tfilter"),       "filter: expired leases (what the reconciler picks up)"),
    b(C::List,      &[k('2')],                                                     "2",       A::Filter(F::All),             None,                      "filter: all submissions"),
    b(C::List,      &[k('3')],                                                     "3",       A::Filter(F::Queued),          None,                      "filter: pending (queued)"),
    b(C::List,      &[k('4')],                                                     "4",       A::Filter(F::Running),         None,                      "filter: running"),
    b(C::List,      &[k('5')],                                                     "5",       A::Filter(F::Terminalizing),   None,                      "filter: terminalizing"),
    b(C::List,      &[k('6')],                                                     "6",       A::Filter(F::Settled),         None,                      "filter: settled"),
    b(C::List,      &[k('7')],                                                     "7",       A::Filter(F::Failed),          None,                      "filter: failed (settled with an error)"),
    b(C::List,      &[k('/')],                                                     "/",       A::StartFilter,                Some("search"),            "filter: text, or verdict:… rule:6 kind:direct (-field: negates; ? lists all)"),
    b(C::List,      &[k('o')],                                                     "o",       A::SortNext,                   Some("sort"),              "sort by the next column"),
    b(C::List,      &[k('O')],                                                     "O",       A::SortReverse,                None,                      "reverse the sort order"),
    b(C::List,      &[code(KeyCode::Enter)],                                       "⏎",       A::Enter,                      Some("open"),              "open the submission: history tree, verdict, plan"),
    w(C::List,      &[k('R')],                                                     "R",       A::Act(ActionKind::Repair),    Some("C/R/Q/F/S/E\tact"),  "repair: complete the trailing tool batch as the runtime does (previewed)"),
    w(C::List,      &[k('Q')],                                                     "Q",       A::Act(ActionKind::Requeue),   None,                      "requeue: back to the queue, only where the runtime's rule 7 would (previewed)"),
    w(C::List,      &[k('F')],                                                     "F",       A::Act(ActionKind::Fail),      None,                      "fail: give up with the runtime's failure writes; asks for a reason (previewed)"),
    w(C::List,      &[k('S')],                                                     "S",       A::Act(ActionKind::Step),      None,                      "step: apply the next write of the runtime's own plan, one at a time (previewed)"),
    w(C::List,      &[k('C')],                                                     "C",       A::Act(ActionKind::Reconcile), None,                      "reconcile: the runtime's writes for the rule that fires now (previewed)"),
    w(C::List,      &[k('E')],                                                     "E",       A::Act(ActionKind::Extend),    None,                      "extend: 3 more attempts if rule 2 fires, else deadline now + 1h (previewed)"),
    w(C::List,      &[k(' ')],                                                     "space",   A::ToggleMark,                 Some("␣\tmark"),           "mark or unmark the row; the write keys then act on every marked row"),
    w(C::List,      &[k('*')],                                                     "*",       A::MarkAll,                    None,                      "mark every row shown (the filter and the / query)"),
    w(C::List,      &[k('V')],                                                     "V",       A::MarkRange,                  None,                      "mark the rows from the last one marked to the cursor"),
    w(C::List,      &[k('u')],                                                     "u",       A::ClearMarks,                 None,                      "unmark every row, those hidden by the filter too"),
    // Incidents: stuck submissions per worker.
    b(C::Incidents, &[code(KeyCode::Enter)],                                       "⏎",       A::Enter,                      Some("open"),              "open the worker's stuck submissions in the list (esc there shows them all again)"),
    w(C::Incidents, &[k(' ')],                                                     "space",   A::ToggleMark,                 Some("␣\tmark all of it"), "mark or unmark all of the worker's submissions; the write keys act on the marks"),
    w(C::Incidents, &[k('u')],                                                     "u",       A::ClearMarks,                 None,                      "unmark every row"),
    w(C::Incidents, &[k('C')],                                                     "C",       A::Act(ActionKind::Reconcile), Some("C/R/Q/F/S/E\tact"),  "reconcile the marked submissions, else every one of the worker (previewed)"),
    w(C::Incidents, &[k('R')],                                                     "R",       A::Act(ActionKind::Repair),    None,                      "repair the marked submissions, else every one of the worker (previewed)"),
    w(C::Incidents, &[k('Q')],                                                     "Q",       A::Act(ActionKind::Requeue),   None,                      "requeue the marked submissions, else every one of the worker (previewed)"),
    w(C::Incidents, &[k('F')],                                                     "F",       A::Act(ActionKind::Fail),      None,                      "fail the marked submissions, else every one of the worker; asks for a reason"),
    w(C::Incidents, &[k('S')],                                                     "S",       A::Act(ActionKind::Step),      None,                      "step: the next runtime write of each marked submission, else of the worker's"),
    w(C::Incidents, &[k('E')],                                                     "E",       A::Act(ActionKind::Extend),    None,                      "extend the marked submissions, else every one of the worker (previewed)"),
    // Audit trail.
    b(C::Audit,     &[code(KeyCode::Enter)],                                       "⏎",       A::Enter,                      Some("open"),              "open the submission the action was applied to"),
    b(C::Audit,     &[k('/')],                                                     "/",       A::StartFilter,                Some("search"),            "filter the records: text in any column, the batch id too"),
    w(C::Audit,     &[k('u')],                                                     "u",       A::Undo { batch: false },      Some("u/U\tundo/batch"),   "undo the selected record while its rows hold what turnscope wrote (previewed)"),
    w(C::Audit,     &[k('U')],                                                     "U",       A::Undo { batch: true },       None,                      "undo the whole bulk apply of the selected record, in one transaction (previewed)"),
    // Sessions list.
    b(C::Sessions,  &[code(KeyCode::Enter)],                                       "⏎",       A::Enter,                      Some("open"),              "open the session's history tree"),
    b(C::Sessions,  &[k('/')],                                                     "/",       A::StartFilter,                Some("search"),            "find sessions by key, instance, any id, or text (esc stops)"),
    w(C::Sessions,  &[k('R')],                                                     "R",       A::Act(ActionKind::Repair),    Some("R\trepair"),         "repair the unresolved batch health found at the session's leaf (previewed)"),
    // Tree and detail.
    b(C::Inspect,   &[k('v')],                                                     "v",       A::ShowVerdict,                Some("verdict"),           "show the verdict and recovery plan (header row)"),
    b(C::Inspect,   &[k('c')],                                                     "c",       A::JumpCheckpoint,             Some("checkpoint"),        "jump to the journal's checkpoint leaf"),
    b(C::Inspect,   &[k('m')],                                                     "m",       A::JumpMatched,                Some("matched"),           "jump to the next entry that made the rule match"),
    b(C::Inspect,   &[k('i')],                                                     "i",       A::JumpInput,                  None,                      "jump to the submission's input entry"),
    b(C::Inspect,   &[k('[')],                                                     "[",       A::PrevSubmission,             None,                      "previous submission of this session"),
    b(C::Inspect,   &[k(']')],                                                     "]",       A::NextSubmission,             Some("[ ]\tsubmissions"),  "next submission of this session"),
    b(C::Inspect,   &[k('W')],                                                     "W",       A::PlanWrites,                 None,                      "show the runtime's recovery plan: the writes its reconciler would make"),
    b(C::Inspect,   &[k('M')],                                                     "M",       A::NextRequest,                None,                      "the next request: what the model is sent next, and the hazards"),
    w(C::Inspect,   &[k('R')],                                                     "R",       A::Act(ActionKind::Repair),    Some("C/R/Q/F/S/E\tact"),  "repair this submission (preview, then confirm)"),
    w(C::Inspect,   &[k('Q')],                                                     "Q",       A::Act(ActionKind::Requeue),   None,                      "requeue this submission (preview, then confirm)"),
    w(C::Inspect,   &[k('F')],                                                     "F",       A::Act(ActionKind::Fail),      None,                      "fail this submission; asks for a reason (preview, then confirm)"),
    w(C::Inspect,   &[k('S')],                                                     "S",       A::Act(ActionKind::Step),      None,                      "step through this submission's recovery, one runtime write at a time"),
    w(C::Inspect,   &[k('C')],                                                     "C",       A::Act(ActionKind::Reconcile), None,                      "reconcile: the runtime's writes for its rule now (preview, then confirm)"),
    w(C::Inspect,   &[k('E')],                                                     "E",       A::Act(ActionKind::Extend),    None,                      "extend attempts (rule 2) or the deadline (preview, then confirm)"),
    b(C::Tree,      &[code(KeyCode::Enter), k(' '), k('l'), code(KeyCode::Right)], "⏎/l/→",   A::Expand,                     Some("fold"),              "expand or collapse the node; on an input in a session, open its submission"),
    b(C::Tree,      &[k('h'), code(KeyCode::Left)],                                "h/←",     A::Collapse,                   None,                      "collapse, or go to the parent"),
    b(C::Tree,      &[k('Z')],                                                     "Z",       A::ExpandAll,                  None,                      "expand everything"),
    b(C::Tree,      &[k('z')],                                                     "z",       A::CollapseAll,                Some("z/Z\tfold all"),     "collapse everything"),
    b(C::Tree,      &[k('/')],                                                     "/",       A::Search,                     Some("search"),            "search the session's entries"),
    b(C::Tree,      &[k('n')],                                                     "n",       A::SearchNext,                 None,                      "next search hit"),
    b(C::Tree,      &[k('N')],                                                     "N",       A::SearchPrev,                 None,                      "previous search hit"),
    // In the tree too (out of its footer, which is full): the detail pane shows the selected
    // entry whichever pane has focus.
    b(C::Tree,      &[k('b')],                                                     "b",       A::ToggleRaw,                  None,                      "the selected entry's raw stored bytes / pretty JSON"),
    b(C::Detail,    &[k('b')],                                                     "b",       A::ToggleRaw,                  Some("raw"),               "the selected entry's raw stored bytes / pretty JSON"),
    // Moving (any pane).
    b(C::Nav,       &[k('j'), code(KeyCode::Down)],                                "j/↓",     A::Down,                       None,                      "down"),
    b(C::Nav,       &[k('k'), code(KeyCode::Up)],                                  "k/↑",     A::Up,                         None,                      "up"),
    b(C::Nav,       &[code(KeyCode::PageDown), ctrl('d'), ctrl('f')],              "PgDn/^d", A::PageDown,                   None,                      "page down"),
    b(C::Nav,       &[code(KeyCode::PageUp), ctrl('u'), ctrl('b')],                "PgUp/^u", A::PageUp,                     None,                      "page up"),
    b(C::Nav,       &[k('g'), code(KeyCode::Home)],                                "g/Home",  A::Top,                        None,                      "first row"),
    b(C::Nav,       &[k('G'), code(KeyCode::End)],                                 "G/End",   A::Bottom,                     None,                      "last row"),
    // Everywhere.
    b(C::Global,    &[code(KeyCode::Tab)],                                         "Tab",     A::NextPane,                   Some("pane"),              "next pane"),
    b(C::Global,    &[code(KeyCode::BackTab)],                                     "S-Tab",   A::PrevPane,                   None,                      "previous pane"),
    b(C::Global,    &[code(KeyCode::Esc)],                                         "esc",     A::Back,                       Some("back"),              "back: close, clear the filter, leave the tree"),
    b(C::Global,    &[k('s')],                                                     "s",       A::ToggleSessions,             Some("sessions"),          "switch between submissions and sessions"),
    b(C::Global,    &[k('f')],                                                     "f",       A::FindSession,                None,                      "go to a session: type a key, instance, id or text"),
    b(C::Global,    &[k('y')],                                                     "y",       A::Copy,                       Some("copy"),              "copy the selected id to the clipboard (OSC 52, works over SSH)"),
    b(C::Global,    &[k('e')],                                                     "e",       A::Export,                     Some("export"),            "export the selected session (entries, journal, verdict) as JSON"),
    b(C::Global,    &[k('r')],                                                     "r",       A::Refresh,                    None,                      "refresh now (also every --refresh interval)"),
    b(C::Global,    &[k('a')],                                                     "a",       A::ToggleAudit,                None,                      "the audit trail: every action turnscope applied to this database, newest first"),
    b(C::Global,    &[k('w')],                                                     "w",       A::ToggleWriteMode,            None,                      "switch between read-only and write mode, in place (write mode asks first)"),
    b(C::Global,    &[k('I')],                                                     "I",       A::ToggleIncidents,            None,                      "incidents: the stuck submissions grouped by the worker that held their lease"),
    b(C::Global,    &[k('?')],                                                     "?",       A::Help,                       Some("help"),              "this help"),
    b(C::Global,    &[k(':')],                                                     ":",       A::Palette,                    None,                      "command palette: every action with its key; type to filter, ⏎ runs it"),
    b(C::Global,    &[k('q')],                                                     "q",       A::Quit,                       Some("quit"),              "quit"),
    b(C::Global,    &[ctrl('c')],                                                  "^c",      A::Quit,                       None,                      "quit"),
];
