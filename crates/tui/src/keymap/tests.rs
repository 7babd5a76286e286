//! The keymap's own rules: no key bound twice where it is looked up, write keys absent in
//! read-only mode, names and overrides round-trip.

use super::*;

fn ev(c: KeyCode, m: KeyModifiers) -> KeyEvent {
    KeyEvent::new(c, m)
}

#[test]
fn innermost_context_wins() {
    let slash = ev(KeyCode::Char('/'), KeyModifiers::NONE);
    assert_eq!(
        lookup(&[C::List, C::Nav, C::Global], &slash, false),
        Some(A::StartFilter)
    );
    assert_eq!(
        lookup(&[C::Tree, C::Inspect, C::Nav, C::Global], &slash, false),
        Some(A::Search)
    );
    let g = ev(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(
        lookup(&[C::List, C::Nav, C::Global], &g, false),
        Some(A::Bottom)
    );
    let cc = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(
        lookup(&[C::Tree, C::Inspect, C::Nav, C::Global], &cc, false),
        Some(A::Quit)
    );
    let c = ev(KeyCode::Char('c'), KeyModifiers::NONE);
    assert_eq!(
        lookup(&[C::Tree, C::Inspect, C::Nav, C::Global], &c, false),
        Some(A::JumpCheckpoint)
    );
    assert_eq!(lookup(&[C::List, C::Nav, C::Global], &c, false), None);
}

#[test]
fn no_key_is_bound_twice_in_one_lookup_chain() {
    let chains: [&[Ctx]; 7] = [
        &[C::Incidents, C::Nav, C::Global],
        &[C::List, C::Nav, C::Global],
        &[C::Sessions, C::Nav, C::Global],
        &[C::Tree, C::Inspect, C::Nav, C::Global],
        &[C::Detail, C::Inspect, C::Nav, C::Global],
        &[C::Audit, C::Nav, C::Global],
        &[C::Popup],
    ];
    for chain in chains {
        let mut seen: Vec<(Key, Ctx)> = Vec::new();
        for ctx in chain {
            for bnd in KEYMAP.iter().filter(|b| b.ctx == *ctx) {
                for key in bnd.keys {
                    if let Some((_, other)) = seen.iter().find(|(k2, _)| k2 == key) {
                        // Shadowing across contexts is deliberate only for Enter and '/'.
                        let ok = matches!(key.code, KeyCode::Enter | KeyCode::Char('/'));
                        assert!(ok || other == ctx, "{key:?} bound in {other:?} and {ctx:?}");
                        assert!(other != ctx, "{key:?} bound twice in {ctx:?}");
                    }
                    seen.push((*key, *ctx));
                }
            }
        }
    }
}

#[test]
fn write_bindings_are_absent_in_read_only_mode() {
    let chains: [&[Ctx]; 3] = [
        &[C::List, C::Nav, C::Global],
        &[C::Tree, C::Inspect, C::Nav, C::Global],
        &[C::Incidents, C::Nav, C::Global],
    ];
    for chain in chains {
        for c in ['R', 'Q', 'F', 'S', 'C', 'E'] {
            let e = ev(KeyCode::Char(c), KeyModifiers::SHIFT);
            assert_eq!(lookup(chain, &e, false), None, "{c} in read-only mode");
            assert!(matches!(lookup(chain, &e, true), Some(A::Act(_))), "{c}");
        }
        let footer_ro = footer(chain, false);
        assert!(footer_ro
            .iter()
            .all(|(_, _, a)| !matches!(a, A::Act(_) | A::ToggleMark)));
        assert!(footer(chain, true)
            .iter()
            .any(|(_, _, a)| matches!(a, A::Act(_))));
    }
    let space = ev(KeyCode::Char(' '), KeyModifiers::NONE);
    assert_eq!(lookup(&[C::List, C::Nav, C::Global], &space, false), None);
    assert_eq!(
        lookup(&[C::Incidents, C::Nav, C::Global], &space, false),
        None
    );
    for c in ['*', 'V', 'u'] {
        let e = ev(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(
            lookup(&[C::List, C::Nav, C::Global], &e, false),
            None,
            "{c}"
        );
        assert!(
            lookup(&[C::List, C::Nav, C::Global], &e, true).is_some(),
            "{c}"
        );
    }
    assert_eq!(
        lookup(&[C::List, C::Nav, C::Global], &space, true),
        Some(A::ToggleMark)
    );
    let help: Vec<&str> = help_groups(false)
        .into_iter()
        .flat_map(|(_, rows)| rows.into_iter().map(|(_, h)| h))
        .collect();
    for b in KEYMAP.iter().filter(|b| b.write) {
        assert!(!help.contains(&b.help), "{:?} in read-only help", b.help);
    }
    // The audit trail is there in both modes.
    let a = ev(KeyCode::Char('a'), KeyModifiers::NONE);
    assert_eq!(
        lookup(&[C::List, C::Nav, C::Global], &a, false),
        Some(A::ToggleAudit)
    );
}

#[test]
fn action_names_are_the_configuration_names() {
    let cases = [
        (A::Enter, "open"),
        (A::StartFilter, "filter"),
        (A::SortNext, "sort"),
        (A::ShowVerdict, "verdict"),
        (A::ToggleAudit, "audit"),
        (A::ToggleMark, "mark"),
        (A::NextPane, "next_pane"),
        (A::JumpCheckpoint, "jump_checkpoint"),
        (
            A::Filter(turnscope_store::RowFilter::Queued),
            "filter_pending",
        ),
        (
            A::Filter(turnscope_store::RowFilter::Expired),
            "filter_expired",
        ),
        (
            A::Act(turnscope_engine::actions::ActionKind::Requeue),
            "requeue",
        ),
    ];
    for (a, name) in cases {
        assert_eq!(action_name(a), name);
    }
}

/// `docs/tui.md`'s key tables are this keymap's (`key_tables_markdown`): a binding added, changed
/// or removed without the doc fails here. `TURNSCOPE_UPDATE_DOCS=1 cargo test -p turnscope-tui
/// keymap` writes them.
#[test]
fn docs_key_tables_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/tui.md");
    let doc = std::fs::read_to_string(path).expect("docs/tui.md");
    let (begin, end) = ("<!-- keys:begin -->\n", "<!-- keys:end -->");
    let a = doc.find(begin).expect("the keys:begin marker") + begin.len();
    let b = doc[a..].find(end).expect("the keys:end marker") + a;
    let want = key_tables_markdown();
    if doc[a..b] != want && std::env::var_os("TURNSCOPE_UPDATE_DOCS").is_some() {
        std::fs::write(path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
        return;
    }
    assert!(
        doc[a..b] == want,
        "docs/tui.md's key tables are stale: run TURNSCOPE_UPDATE_DOCS=1 cargo test -p turnscope-tui keymap"
    );
}
