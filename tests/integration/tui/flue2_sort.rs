//! The 2.x list's sort, headless (`Flue2Harness`) on a generated 2.x journal: `o` steps through
//! the columns and `O` turns the direction, and every order is the one `turnscope list --sort
//! COLUMN` (`--sort=-COLUMN`) prints at the same clock; the selection stays on its submission
//! and the sorted column's header carries the direction.

use serde_json::Value;

use super::flue2::{cli_list, open};
use crate::support::generated_flue2_journal;

const NOW: i64 = 1_796_000_000_000;

fn ids(doc: &Value) -> Vec<String> {
    doc["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_sort_is_the_order_list_sort_prints_and_keeps_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let db = generated_flue2_journal(dir.path(), NOW);
    let mut h = open(&db, "2.1.0", NOW, (220, 60));
    h.press("2");
    let by_sequence = ids(&cli_list(&db, NOW, &["--status", "all"]));
    assert!(by_sequence.len() > 100, "{}", by_sequence.len());
    assert_eq!(h.app.shown_ids(), by_sequence);
    // Every row with a conversation keys COST by its figure (read from the document).
    assert!(h.app.shown_rows().iter().any(|r| r.cost_total.is_some()));
    h.press("jjj");
    let selected = h.app.shown_ids()[h.app.selected_index()].clone();
    let columns = [
        "seq", "id", "kind", "instance", "status", "att", "lease", "cost", "verdict", "next",
    ];
    let mut reordered = 0;
    for column in columns {
        h.press("o");
        let status = h.app.status_text().unwrap_or_default();
        assert!(
            status.starts_with(&format!("sorted by {column}")),
            "{status}"
        );
        let up = ids(&cli_list(&db, NOW, &["--status", "all", "--sort", column]));
        assert_eq!(h.app.shown_ids(), up, "o: {column}");
        reordered += usize::from(up != by_sequence);
        // The selection stays on its submission.
        assert_eq!(
            h.app.shown_ids()[h.app.selected_index()],
            selected,
            "{column}"
        );
        h.press("O");
        let down = ids(&cli_list(
            &db,
            NOW,
            &["--status", "all", &format!("--sort=-{column}")],
        ));
        assert_eq!(h.app.shown_ids(), down, "O: {column}");
        if column == "lease" {
            assert!(
                h.render().contains("LEASE↓"),
                "the header says the direction"
            );
        }
        h.press("O");
        assert_eq!(h.app.shown_ids(), up, "O again: {column}");
    }
    // Most columns move rows on this journal: the comparison above is not of one order.
    assert!(reordered >= 6, "{reordered}");
    // After the last column, the sequence again.
    h.press("o");
    assert_eq!(h.app.shown_ids(), by_sequence);
}
