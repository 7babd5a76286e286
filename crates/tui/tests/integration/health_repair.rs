//! The repair health offers, in the TUI: `R` on the sessions screen completes the unresolved
//! batch a settled submission left at the session's leaf (the HEALTH column's finding), after the
//! same preview and confirmations as every repair; a batch with later turns is refused with
//! health's reason; and `R` on the settled row in the list plans the same repair.

use super::*;
use serde_json::{json, Value};
use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};

const T: i64 = NOW - 3_600_000;

fn asst(stop: &str, content: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
           "model": "claude-haiku-4-5", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
           "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": stop, "timestamp": T})
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
}

fn result(id: &str, name: &str) -> Value {
    json!({"role": "toolResult", "toolCallId": id, "toolName": name,
           "content": [{"type": "text", "text": "ok"}], "details": {}, "isError": false, "timestamp": T})
}

/// Two sessions, each starting with the input of a settled submission `sub-<instance>`:
/// `leaf-batch` ends with a batch of two calls, one answered (repairable in place);
/// `later-turns` has a turn after its unanswered call (not repairable in place).
fn journal(dir: &Path) -> PathBuf {
    let mut j = JournalBuilder::new();
    for instance in ["leaf-batch", "later-turns"] {
        let mut s = SessionBuilder::for_instance(instance, T).ids(
            "conv_01KT0000000000000000000000",
            "aff_01KT0000000000000000000000",
        );
        let sub = format!("sub-{instance}");
        let input = |sub: &str| {
            (
                json!({"role": "signal", "type": "dispatch_input", "tagName": "dispatch", "content": "{}",
                       "attributes": {"dispatchId": sub}, "timestamp": T}),
                vec![("dispatch", json!({"dispatchId": sub}))],
            )
        };
        let (m, x) = input(&sub);
        s.message_with("in", m, x);
        if instance == "leaf-batch" {
            s.message(
                "a1",
                asst(
                    "toolUse",
                    json!([
                        call("c1", "charge_card", json!({"amountCents": 8900})),
                        call("c2", "send_email", json!({"to": "x@example.com"}))
                    ]),
                ),
            );
            s.message("r1", result("c1", "charge_card"));
        } else {
            s.message(
                "a1",
                asst("toolUse", json!([call("c1", "get", json!({"id": 7}))])),
            );
            let (m, x) = input("sub-later-turns-2");
            s.message_with("in2", m, x);
            s.message(
                "a2",
                asst(
                    "stop",
                    json!([{"type": "text", "text": "answered without it"}]),
                ),
            );
            j.submission(
                Submission::dispatch(
                    "sub-later-turns-2",
                    s.key(),
                    "agent",
                    instance,
                    &json!({}),
                    T + 10,
                )
                .claimed("att2", "w", T + 11, T + 30_000)
                .input_applied(T + 11)
                .settled(T + 15, None),
            );
        }
        j.submission(
            Submission::dispatch(&sub, s.key(), "agent", instance, &json!({}), T)
                .claimed("att", "w", T + 1, T + 30_000)
                .input_applied(T + 1)
                .settled(T + 5, None),
        );
        j.session(s);
    }
    let db = dir.join("health.db");
    j.write(&db).unwrap();
    db
}

/// The HEALTH cell of the sessions row whose instance is `instance`.
fn health_cell(screen: &str, instance: &str) -> String {
    let header = screen
        .lines()
        .find(|l| l.contains("INSTANCE"))
        .unwrap_or_else(|| panic!("{screen}"));
    let col = header[..header.find("HEALTH").expect("a HEALTH column")]
        .chars()
        .count();
    let row = screen
        .lines()
        .find(|l| l.contains(&format!("[\"{instance}\"")))
        .unwrap_or_else(|| panic!("no row of {instance}: {screen}"));
    row.chars()
        .skip(col)
        .take(22)
        .collect::<String>()
        .trim()
        .to_string()
}

#[test]
fn r_on_the_sessions_screen_repairs_the_batch_health_found_at_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let db = journal(dir.path());
    let mut h = Harness::open(&db, write_opts("health.db", NOW, (160, 40), dir.path())).unwrap();
    h.press("s");
    let screen = h.render();
    assert_eq!(
        health_cell(&screen, "leaf-batch"),
        "‼ 1 unresolved_calls",
        "{screen}"
    );
    assert_eq!(
        health_cell(&screen, "later-turns"),
        "‼ 1 unresolved_calls",
        "{screen}"
    );
    assert!(
        screen.contains("R repair"),
        "the footer offers it: {screen}"
    );

    // Later turns follow the batch: refused with health's reason, no popup, nothing written.
    let state = db_state(&db);
    h.press("/later-turns<Enter>");
    h.render();
    h.press("R");
    assert!(h.popup().is_none(), "{}", h.render());
    let said = h.status_text().unwrap_or_default();
    assert!(
        said.starts_with("nothing to repair in place: ")
            && said.contains("later entries follow")
            && said.contains("the turns since were built from the history without this batch"),
        "{said}"
    );
    assert_eq!(db_state(&db), state);

    // The batch at the leaf: the repair's preview, its two confirmations, then applied.
    h.press("<Esc>/leaf-batch<Enter>");
    h.render();
    // The reason asked of every write: none given.
    h.press("R<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Repair sub-leaf"), "{title}\n{lines}");
    assert!(
        lines.contains("the settled submission left at the session's leaf")
            && lines.contains("insert entry"),
        "{lines}"
    );
    h.press("A");
    let (title, lines) = popup(&h);
    assert_eq!(title, "Repair: side effects?", "{lines}");
    assert!(lines.contains("send_email"), "{lines}");
    assert_eq!(
        db_state(&db),
        state,
        "nothing written before the second yes"
    );
    h.press("A");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Repair applied"), "{title}\n{lines}");
    assert!(lines.contains("audit #1"), "{lines}");
    assert_ne!(db_state(&db), state);
    let audit = audit_rows(&db);
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].0, "repair");

    // The session's health is read again: the finding is gone.
    h.press("<Esc>");
    h.render();
    let screen = h.render();
    assert_eq!(health_cell(&screen, "leaf-batch"), "ok", "{screen}");
    // Nothing is left to repair there.
    h.press("R");
    assert!(h.popup().is_none());
    assert_eq!(
        h.status_text().as_deref(),
        Some("the session is healthy: nothing to repair")
    );
}

/// `R` on the settled row in the list (filter 6) plans the same repair, and read-only mode has
/// no `R` on the sessions screen.
#[test]
fn r_on_a_settled_row_of_the_list_previews_the_leaf_batch_repair() {
    let dir = tempfile::tempdir().unwrap();
    let db = journal(dir.path());
    let mut h = Harness::open(&db, write_opts("health.db", NOW, (160, 40), dir.path())).unwrap();
    h.press("6/sub-leaf<Enter>");
    assert_eq!(h.selected_id().as_deref(), Some("sub-leaf-batch"));
    h.press("R<Enter>");
    let (title, lines) = popup(&h);
    assert!(title.starts_with("Repair sub-leaf"), "{title}\n{lines}");
    assert!(
        lines.contains("the settled submission left at the session's leaf"),
        "{lines}"
    );
    // Declined: nothing written.
    let state = db_state(&db);
    h.press("<Esc>");
    assert_eq!(db_state(&db), state);

    let mut ro = Harness::open(&db, opts("health.db", NOW, (160, 40), dir.path())).unwrap();
    ro.press("s");
    let screen = ro.render();
    assert!(!screen.contains("R repair"), "{screen}");
    ro.press("R");
    assert!(ro.popup().is_none());
    assert_eq!(db_state(&db), state);
}
