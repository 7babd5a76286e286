//! `/` in a 2.x submission's detail finds a text in its lines as drawn: `⏎` scrolls to the first
//! line holding it, `n` and `N` step through the others round the end, the status line says
//! which of how many; a text no line holds says so and leaves the detail where it was; esc while
//! typing drops the search.

use super::flue2::{after_last_lease, batch_calls, open, runtime_answer};
use crate::support::unpack_db;

/// The detail's rows on screen, under the header and the view line, above the status and keys.
fn body(screen: &str) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    lines[2..lines.len() - 2].to_vec()
}

#[test]
fn slash_finds_a_call_below_the_fold_and_n_and_shift_n_step_through_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = after_last_lease(&db);
    let want = &runtime_answer("tool-batch-1-of-3")["submissions"][1];
    let calls = batch_calls(want);
    let recorded = want["uncommittedToolOutcomes"][0].as_str().unwrap();
    // A call of the batch with no outcome, named on its call line, the batch's line and the
    // plan's resume: every line holding it, counted on a screen tall enough for the whole detail.
    let call = *calls.iter().rfind(|c| **c != recorded).unwrap();
    let mut tall = open(&db, "2.1.0", now, (120, 300));
    tall.press("<Enter>");
    let n = tall.render().lines().filter(|l| l.contains(call)).count();
    assert!(n >= 2, "{}", tall.render());
    let mut h = open(&db, "2.1.0", now, (120, 16));
    h.press("<Enter>");
    let top = h.render();
    assert!(!body(&top).iter().any(|l| l.contains(call)), "{top}");

    // Typed in upper case: the case does not count.
    h.press(&format!("/{}", call.to_uppercase()));
    assert!(h.app.status_text().unwrap().starts_with('/'));
    h.press("<Enter>");
    let first = h.render();
    assert!(first.contains("n/N"), "the keys say n/N now: {first}");
    // Each line holding it in turn, in view (the first at the top), then round the end.
    let mut seen = Vec::new();
    for k in 1..=n {
        if k > 1 {
            h.press("n");
        }
        let screen = h.render();
        let status = h.app.status_text().unwrap();
        assert!(status.contains(&format!("line {k} of {n}")), "{status}");
        assert!(
            body(&screen).iter().any(|l| l.contains(call)),
            "{k}: {screen}"
        );
        seen.push(screen);
    }
    assert!(body(&seen[0])[0].contains(call), "{}", seen[0]);
    assert!(
        seen.iter()
            .any(|s| s.contains("TRAILING UNCOMMITTED BATCH")),
        "the batch's line among them"
    );
    h.press("n");
    assert!(h
        .app
        .status_text()
        .unwrap()
        .contains(&format!("line 1 of {n}")));
    assert_eq!(h.render(), seen[0]);
    h.press("N");
    assert!(h
        .app
        .status_text()
        .unwrap()
        .contains(&format!("line {n} of {n}")));
    let second = h.render();
    assert_eq!(second, seen[n - 1]);

    // A text no line holds: said, and the detail stays where it was.
    h.press("/no such text here<Enter>");
    assert!(
        h.app
            .status_text()
            .unwrap()
            .contains("no line of this detail holds"),
        "{:?}",
        h.app.status_text()
    );
    assert_eq!(body(&h.render()), body(&second));
    h.press("n");
    assert!(h.app.status_text().unwrap().contains("nothing found"));

    // esc while typing drops the search; esc then closes the detail as before.
    h.press(&format!("/{call}<Esc>"));
    assert_eq!(h.app.status_text(), None);
    assert!(h.app.opened().is_some());
    h.press("<Esc>");
    assert!(h.app.opened().is_none());
}
