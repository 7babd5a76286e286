//! Tests of the worker's request queue.

use super::*;

fn search(needle: &str) -> Request {
    Request::SearchText {
        session: "s".into(),
        needle: needle.into(),
    }
}

fn refresh() -> Request {
    Request::Refresh {
        now_ms: 0,
        open: None,
        filter: RowFilter::default(),
        sessions: false,
        visible: Vec::new(),
        selected: None,
        id_lookup: None,
    }
}

#[test]
fn only_the_newest_search_and_refresh_of_a_batch_are_carried_out() {
    let body = Request::EntryBody {
        session: "s".into(),
        entry_id: "e".into(),
    };
    let batch = [
        search("d"),
        body.clone(),
        refresh(),
        search("di"),
        refresh(),
        search("dis"),
        body,
    ];
    assert_eq!(
        carried_out(&batch),
        [false, true, false, false, true, true, true]
    );
    assert_eq!(carried_out(&[search("x")]), [true]);
}
