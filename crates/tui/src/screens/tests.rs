//! The screens' `handle` answers, each screen alone (no app around it).

use super::audit::AuditScreen;
use super::incidents::IncidentScreen;
use super::list::ListScreen;
use super::sessions::SessionsScreen;
use super::{Ask, ScreenCx};
use crate::keymap::Action;
use crate::view_state::InputMode;
use turnscope_store::RowFilter;

fn cx() -> ScreenCx<'static> {
    ScreenCx {
        items: &[],
        now_ms: 0,
        page: 10,
        write_mode: true,
    }
}

#[test]
fn a_filter_key_resets_the_cursor_and_asks_for_the_filters_rows() {
    let mut list = ListScreen {
        selected: 4,
        ..ListScreen::default()
    };
    let asks = list.handle(Action::Filter(RowFilter::Failed), &cx(), true);
    assert_eq!(list.filter, RowFilter::Failed);
    assert_eq!(list.selected, 0);
    assert!(matches!(asks.as_slice(), [Ask::Reread]));
}

#[test]
fn esc_on_the_list_peels_the_query_then_the_workers_narrowing_then_nothing() {
    let mut list = ListScreen::default();
    list.narrow_to(Some("worker-1".into()));
    list.query = "running".into();
    let first = list.handle(Action::Back, &cx(), true);
    assert!(matches!(first.as_slice(), [Ask::Rebuild]));
    assert!(list.query.is_empty());
    let second = list.handle(Action::Back, &cx(), true);
    assert!(
        matches!(second.as_slice(), [Ask::Rebuild, Ask::Info(m)] if m.contains("narrowing is off"))
    );
    assert!(list.owner.is_none());
    assert!(list.handle(Action::Back, &cx(), true).is_empty());
}

#[test]
fn the_audit_trail_leaves_on_esc_and_refuses_an_undo_without_a_record() {
    let mut audit = AuditScreen::default();
    assert!(matches!(
        audit.handle(Action::Back, 10).as_slice(),
        [Ask::Leave]
    ));
    let asks = audit.handle(Action::Undo { batch: false }, 10);
    assert!(matches!(asks.as_slice(), [Ask::Info(m)] if m == "select an audit record first"));
}

#[test]
fn slash_on_the_sessions_takes_text_and_enter_without_rows_opens_nothing() {
    let mut sessions = SessionsScreen::default();
    let asks = sessions.handle(Action::StartFilter, 10);
    assert!(matches!(asks.as_slice(), [Ask::Input(InputMode::Filter)]));
    assert!(sessions.handle(Action::Enter, 10).is_empty());
}

#[test]
fn enter_on_an_empty_incidents_screen_says_so_and_leaves_the_list_as_it_was() {
    let mut incidents = IncidentScreen::default();
    let mut list = ListScreen::default();
    let asks = incidents.handle(Action::Enter, 10, &mut list, true);
    assert!(matches!(asks.as_slice(), [Ask::Info(m)] if m == "no worker left anything stuck"));
    assert!(list.owner.is_none());
    assert!(matches!(
        incidents
            .handle(Action::Back, 10, &mut list, true)
            .as_slice(),
        [Ask::Leave]
    ));
}
