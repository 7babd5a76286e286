//! An opened submission: the active-path tree, the detail pane, jumps, export, long sessions.

use super::*;

/// One crash fixture per classification the runtime produced for it.
const KINDS: [(&str, &str); 10] = [
    ("claimed-before-input", "absent"),
    ("completed-before-settle", "completed"),
    ("before-provider", "resume/input_only"),
    ("overflow", "resume/overflow"),
    ("transient-retry", "resume/transient_retry"),
    ("tool-results-complete", "resume/tool_results"),
    ("tool-results-partial", "resume/tool_results_partial"),
    ("stream-abort", "resume/aborted_partial"),
    ("timeout-exceeded", "tool_use_unresolved"),
    ("terminal-error", "terminal_error"),
];

#[test]
fn tree_for_each_classification_kind() {
    let dir = tempfile::tempdir().unwrap();
    for (name, kind) in KINDS {
        let mut text = String::new();
        for size in SIZES {
            let mut h = fixture(dir.path(), name, size);
            // Open the first running submission.
            h.press("4<Enter>");
            let verdict = h.opened_report().unwrap().classification().state.label();
            assert_eq!(verdict, kind, "{name}");
            text.push_str(&h.render());
        }
        settings()
            .bind(|| insta::assert_snapshot!(format!("tree_{}", kind.replace('/', "_")), text));
    }
}

#[test]
fn demo_tree_for_each_classification_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("4");
    let mut seen: Vec<String> = Vec::new();
    let rows: Vec<(usize, String)> = h
        .rows()
        .into_iter()
        .enumerate()
        .map(|(pos, it)| (pos, it.verdict.clone()))
        .collect();
    for (pos, verdict) in rows {
        if seen.contains(&verdict) {
            continue;
        }
        seen.push(verdict.clone());
        h.press("g");
        for _ in 0..pos {
            h.press("j");
        }
        h.press("<Enter>");
        let text = h.render();
        settings().bind(|| {
            insta::assert_snapshot!(format!("demo_tree_{}", verdict.replace('/', "_")), text)
        });
        h.press("<Esc>");
    }
    assert!(
        seen.len() >= 10,
        "the demo covers every classification: {seen:?}"
    );
}

#[test]
fn abandoned_branch_is_folded_dimmed_and_expandable() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let (_, mut h) = synthetic(dir.path(), 60, size);
        h.press("<Enter>g");
        let fold = h
            .tree_rows()
            .iter()
            .position(|(kind, _)| matches!(kind, NodeKind::Abandoned { .. }))
            .expect("the abandoned branch is visible, folded");
        for _ in 0..fold {
            h.press("j");
        }
        text.push_str("── folded ──\n");
        text.push_str(&h.render());
        h.press("<Enter>j");
        text.push_str("── expanded, off-path entry selected ──\n");
        text.push_str(&h.render());
        assert!(h.detail_text().contains("off the active path"));
    }
    settings().bind(|| insta::assert_snapshot!("abandoned_branch", text));
}

/// The tree holds compact entries; the detail pane shows the selected entry's stored text, fetched
/// through the worker byte for byte.
#[test]
fn detail_fetches_the_stored_body_of_a_compact_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 60, (160, 48));
    h.press("<Enter>g");
    let fold = h
        .tree_rows()
        .iter()
        .position(|(kind, _)| matches!(kind, NodeKind::Abandoned { .. }))
        .expect("the abandoned branch is visible, folded");
    for _ in 0..fold {
        h.press("j");
    }
    h.press("<Enter>j");
    let (e, full) = h.selected_entry().expect("an entry is selected");
    assert!(
        e.compact && e.raw.is_empty(),
        "the tree keeps the entry compact"
    );
    let full = full.expect("the body was fetched");
    let stored: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT data FROM flue_session_entries WHERE entry_id = ?1",
            [e.id.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(&*full.raw, stored);
    assert!(h.detail_text().contains("ENTRY JSON"));
}

#[test]
fn verdict_panel() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for size in SIZES {
        let mut h = fixture(dir.path(), "tool-results-partial", size);
        h.press("<Enter>g<Tab>");
        assert_eq!(h.focus(), Pane::Detail);
        text.push_str(&h.render());
        let detail = h.detail_text();
        for part in [
            "VERDICT resume/tool_results_partial",
            "because",
            "PLAN  rule 5 → replacement",
            "JOURNAL",
            "checkpoint leaf",
        ] {
            assert!(detail.contains(part), "{part} missing in:\n{detail}");
        }
    }
    settings().bind(|| insta::assert_snapshot!("verdict_panel", text));
}

#[test]
fn expand_collapse_and_jumps() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    h.press("<Enter>");
    assert_eq!(h.focus(), Pane::Tree);
    let all = h.tree_rows().len();
    let roots = h.tree_roots();
    assert!(all > roots, "the assistant's tool calls are shown");
    h.press("z");
    assert_eq!(h.tree_rows().len(), roots);
    h.press("Z");
    assert_eq!(h.tree_rows().len(), all);
    // Enter on the assistant folds its calls, Enter again opens them.
    let assistant = h
        .tree_rows()
        .iter()
        .position(|(_, has_children)| *has_children)
        .unwrap();
    h.press("g");
    for _ in 0..assistant {
        h.press("j");
    }
    h.press("<Enter>");
    assert_eq!(h.tree_rows().len(), all - 3);
    h.press("<Right>");
    assert_eq!(h.tree_rows().len(), all);
    h.press("j<Left>");
    assert_eq!(
        h.tree_cursor(),
        assistant,
        "h/← on a leaf goes to the parent"
    );

    // Jump to the checkpoint leaf (the journal names it).
    h.press("c");
    let leaf = h
        .opened_report()
        .unwrap()
        .bundle
        .journal
        .as_ref()
        .unwrap()
        .checkpoint_leaf_id
        .clone()
        .unwrap();
    assert_eq!(h.selected_id().as_deref(), Some(leaf.as_str()));
    // Jump through the entries that made the rule match.
    let matched = h
        .opened_report()
        .unwrap()
        .classification()
        .explanation
        .entry_ids
        .clone();
    for id in &matched {
        h.press("m");
        assert_eq!(h.selected_id().as_deref(), Some(id.as_str()));
    }
    h.press("i");
    let input = h.opened_report().unwrap().inspection.input_entry_id.clone();
    assert_eq!(h.selected_id(), input);
    h.press("v");
    assert_eq!(h.tree_cursor(), 0);
    assert!(h.detail_text().starts_with("VERDICT"));
    // Raw bytes are one key away.
    h.press("i<Tab>b");
    assert!(h.detail_text().contains("RAW STORED BYTES"));
    h.press("b");
    assert!(h.detail_text().contains("ENTRY JSON"));
    // The write actions' confirm popup shows the plan and writes nothing.
    h.press("W");
    assert_eq!(h.popup_kind(), Some(PopupKind::Info));
    h.render();
    h.press("<Enter>");
    assert!(h.popup().is_none());
    h.press("<Esc>");
    assert!(h.opened_id().is_none());
    assert_eq!(h.focus(), Pane::List);
}

#[test]
fn export_writes_the_session_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (80, 24));
    // `e` asks where, prefilled with the default name: ⏎ takes it.
    h.press("e");
    assert_eq!(h.popup_kind(), Some(PopupKind::ExportPath));
    h.press("<Enter>");
    let status = h.status_text().unwrap();
    let path = PathBuf::from(status.strip_prefix("exported to ").expect(&status));
    assert_eq!(path.parent().unwrap(), dir.path());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["schema"], "turnscope.export/1");
    let sub = &doc["submissions"][0];
    assert_eq!(
        sub["classification"]["label"],
        "resume/tool_results_partial"
    );
    assert_eq!(sub["journal"]["phase"], "provider_started");
    assert_eq!(sub["plan"]["rule"], 5);
    let entries = doc["session"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|e| e["data"]["type"] == "message"));
    // A second export does not overwrite the first: its default name is the next free one.
    h.press("<Enter>e<Enter>");
    let second = h.status_text().unwrap();
    assert_ne!(second, status);
    assert!(path.exists());
}

#[test]
fn long_sessions_scroll_and_lay_out_only_the_viewport() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut h) = synthetic(dir.path(), 5000, (80, 24));
    h.press("<Enter>");
    let total = h.tree_rows().len();
    assert!(total > 4900, "{total}");
    h.press("G");
    let screen = h.render();
    assert_eq!(h.tree_cursor(), total - 1);
    assert!(h.tree_offset() > 4000, "the viewport follows the selection");
    // The partial batch at the very end is on screen.
    assert!(screen.contains("‼"), "{screen}");
    h.press("<PgUp><PgUp>g");
    h.render();
    assert_eq!(h.tree_offset(), 0);
}

#[test]
fn partial_batch_marker_survives_no_color() {
    let dir = tempfile::tempdir().unwrap();
    for color in [true, false] {
        let db = unpack_fixture(dir.path(), "tool-results-partial");
        let mut o = opts("x.db", fixture_now(&db), (100, 30), dir.path());
        o.theme = Theme {
            color,
            ..Theme::default()
        };
        let mut h = Harness::open(&db, o).unwrap();
        h.press("<Enter>g");
        let screen = h.render();
        assert!(screen.contains("[partial batch]") && screen.contains("‼") && screen.contains("⧗"));
        let buf = h.terminal.backend().buffer();
        let (x, y) = (0..buf.area.height)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            .find(|&(x, y)| buf[(x, y)].symbol() == "‼")
            .unwrap();
        let fg = buf[(x, y)].fg;
        if color {
            assert_eq!(fg, Color::Yellow);
        } else {
            assert_eq!(fg, Color::Reset, "NO_COLOR: no colour at all");
        }
    }
}

#[test]
fn detail_follows_the_opened_submission() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (160, 48));
    h.press("2g<Enter>g");
    let first = h.opened_id().unwrap();
    assert!(h.render().contains(&format!("SUBMISSION {first}")));
    h.press("<Esc>j<Enter>g");
    let second = h.opened_id().unwrap();
    assert_ne!(first, second);
    let screen = h.render();
    assert!(screen.contains(&format!("SUBMISSION {second}")), "{screen}");
    // ] and [ step between the session's submissions in place.
    h.press("[g");
    assert_eq!(h.opened_id().unwrap(), first);
    assert!(h.render().contains(&format!("SUBMISSION {first}")));
}

#[test]
fn a_slow_open_says_how_long_it_has_been_reading() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-batch-mid", (120, 30));
    h.press("2");
    h.press("<Enter>");
    h.render();
    // Fresh: the plain loading line.
    assert!(h.opened_id().is_some(), "opened");
    h.pretend_open_pending(std::time::Duration::ZERO);
    assert!(h.render().contains(" loading…"));
    // Two seconds in: how long, that it is in the background, and the way out.
    h.pretend_open_pending(std::time::Duration::from_secs(2));
    let screen = h.render();
    assert!(
        screen.contains("reading the session in the background… 2.0 s (esc goes back)"),
        "{screen}"
    );
}

/// The tree's entries are read without their text: the rows drawn read theirs from the worker
/// (shown as … for the frame before it arrives), and only those rows' texts are held.
#[test]
fn tree_rows_read_their_text_when_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut h) = synthetic(dir.path(), 400, (160, 30));
    h.press("<Enter>g");
    let top = h.render();
    assert!(top.contains("result of "), "{top}");
    let held = h.previews_held();
    assert!(
        held > 0 && held <= 30,
        "previews held for a 30-row screen: {held}"
    );
    let call = h
        .tree_rows()
        .iter()
        .position(|(k, _)| {
            matches!(
                k,
                NodeKind::Call {
                    result: Some(_),
                    ..
                }
            )
        })
        .expect("a call with its result");
    for _ in 0..call {
        h.press("j");
    }
    let (e, _) = h.selected_entry().expect("the call's result");
    let m = e.message().expect("a tool result");
    assert!(
        e.compact && m.text_if_read().is_none(),
        "the tree holds no text: {e:?}"
    );
    // The last page: its rows' texts are not held until it is drawn.
    h.press("G");
    let before = h.draw_frame_unanswered();
    let after = h.render();
    let shown = |s: &str| s.matches("result of ").count();
    assert!(
        shown(&before) < shown(&after),
        "before its texts arrived:\n{before}\nafter:\n{after}"
    );
    assert!(before.contains(" …"), "{before}");
    assert!(h.previews_held() > held);
}

/// Sets the text of the tool result `back` results before the session's last to `text`; its id.
fn set_tool_result_text(db: &Path, back: usize, text: &str) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    let id: String = conn
        .query_row(
            "SELECT entry_id FROM flue_session_entries \
             WHERE json_extract(data, '$.message.role') = 'toolResult' \
             ORDER BY position DESC LIMIT 1 OFFSET ?1",
            [back as i64],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE flue_session_entries SET data = json_set(data, '$.message.content[0].text', ?1) \
         WHERE entry_id = ?2",
        (text, &id),
    )
    .unwrap();
    id
}

/// The text search reads the session's stored JSON through the worker: a word past what a row
/// shows (and past anything the tree holds) is found, and so is a tool name the tree holds.
#[test]
fn search_finds_text_past_what_the_tree_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 200, (160, 48));
    let long = format!(
        "{} and then the Zebra-Crossing check failed",
        "x".repeat(400)
    );
    let id = set_tool_result_text(&db, 3, &long);
    h.press("<Enter>/zebra-crossing");
    assert_eq!(h.search(), ("zebra-crossing".to_string(), 1));
    h.press("<Enter>");
    let (e, full) = h.selected_entry().expect("the hit is selected");
    assert_eq!(e.id.as_str(), id);
    assert!(full.expect("its body").raw.contains("Zebra-Crossing"));
    assert!(h.detail_text().contains("Zebra-Crossing"));
    // A refresh that reads the session again (it was saved since) searches it again.
    set_tool_result_text(&db, 6, &long);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE flue_sessions SET data = json_set(data, '$.updatedAt', 'saved again')",
        [],
    )
    .unwrap();
    drop(conn);
    h.refresh();
    assert_eq!(h.search().1, 2, "{:?}", h.search());
    // What only the tree holds (a call's name) is still found with it.
    h.press("/<C-u>get_time");
    assert!(h.search().1 > 5, "{:?}", h.search());
    // A text nothing holds matches nothing.
    h.press("<C-u>no-such-text-anywhere<Enter>");
    assert_eq!(h.search().1, 0);
    assert!(h
        .status_text()
        .unwrap_or_default()
        .contains("no entry matches"));
}

/// While the stored text is still being searched, nothing says "no entry matches": the status
/// and the header say it is searching, and the answer, when it comes, decides.
#[test]
fn no_match_is_said_only_after_the_stored_text_was_searched() {
    let dir = tempfile::tempdir().unwrap();
    let (db, mut h) = synthetic(dir.path(), 200, (160, 48));
    let long = format!("{} the word Tromsø only here", "x".repeat(400));
    set_tool_result_text(&db, 3, &long);
    h.press("<Enter>/");
    h.press_unanswered("tromsø");
    let status = h.status_text().unwrap_or_default();
    assert!(
        status.contains("searching the stored text for \"tromsø\""),
        "{status}"
    );
    assert!(!status.contains("no entry matches"), "{status}");
    assert!(h
        .draw_frame_unanswered()
        .contains("searching the stored text…"));
    h.settle();
    assert_eq!(h.search(), ("tromsø".to_string(), 1));
    assert!(!h.render().contains("searching the stored text"));
    // Nothing anywhere: "no entry matches" once the answer is in, not before.
    h.press("<C-u>");
    h.press_unanswered("no-such-text-anywhere");
    assert!(!h
        .status_text()
        .unwrap_or_default()
        .contains("no entry matches"));
    h.settle();
    assert!(h
        .status_text()
        .unwrap_or_default()
        .contains("no entry matches \"no-such-text-anywhere\""));
}

/// A stuck submission with a trailing partial batch opens with the cursor on the batch's
/// assistant (its calls and recorded results follow), not on the input; one without a partial
/// batch opens on its input.
#[test]
fn a_partial_batch_is_where_the_cursor_opens() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (120, 40));
    h.press("<Enter>");
    let (e, _) = h.selected_entry().expect("an entry is selected");
    let screen = h.render();
    assert!(screen.contains("[partial batch]"), "{screen}");
    let role = e.message().map(|m| m.role.clone());
    assert_eq!(
        role,
        Some(turnscope_core::journal::entry::Role::Assistant),
        "{screen}"
    );
    assert!(h.tree_cursor() > 0);
    let mut h = fixture(dir.path(), "mid-stream", (120, 40));
    h.press("<Enter>");
    assert_eq!(h.tree_cursor(), 0);
}

#[test]
fn v_goes_to_the_verdict_from_the_partial_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (160, 48));
    h.press("<Enter>");
    assert!(h.tree_cursor() > 0);
    h.press("v");
    assert_eq!(h.tree_cursor(), 0);
    let detail = h.detail_text();
    assert!(detail.starts_with("VERDICT"), "{detail}");
    assert!(h.render().contains("SUBMISSION "));
}

/// The detail pane of an opened submission ends with the attempt timeline and the cost since the
/// input, their figures those of the rows and of the entries after the input.
#[test]
fn detail_shows_the_attempts_and_the_cost_since_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = fixture(dir.path(), "tool-results-partial", (160, 48));
    h.press("<Enter>g");
    let r = h.opened_report().unwrap();
    let row = r.row().clone();
    // The fixture's path after the input holds every assistant since it (no abandoned branch).
    let (mut assistants, mut cost, mut input_tokens) = (0u32, 0.0f64, 0u64);
    for e in r.following().unwrap() {
        if let Some(m) = e.message_with_role(&turnscope_core::journal::entry::Role::Assistant) {
            assistants += 1;
            cost += m.cost_total();
            input_tokens += m.usage("input") as u64;
        }
    }
    assert!(assistants >= 2, "an aborted partial after a tool request");
    let detail = h.detail_text();
    let at = |needle: &str| {
        detail
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in:\n{detail}"))
    };
    let attempts = at(&format!(
        "ATTEMPTS  {} of {} made",
        row.attempt_count, row.max_retry
    ));
    let current = at(&format!(
        "#{} {}…  current",
        row.attempt_count,
        &row.attempt_id.as_deref().unwrap()[..8]
    ));
    let total = at(&format!("total      ${cost:.4}  in {input_tokens}  out"));
    assert!(attempts < current && current < total, "{detail}");
    assert!(
        detail.contains(&format!("({assistants} assistants)")),
        "{detail}"
    );
    assert!(at("COST SINCE INPUT") > at("JOURNAL"), "after the journal");
}

/// `M` on an opened submission: the next request in an info popup, read whole by the worker,
/// the same lines `turnscope next-request` prints (a stream continuation: the partial the
/// runtime keeps is dropped by the model library, named as a hazard).
#[test]
fn m_shows_the_next_request_of_the_opened_submission() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut h = Harness::open(&db, opts("demo.db", NOW, (160, 48), dir.path())).unwrap();
    h.press("2/docs-bot<Enter><Enter>");
    let id = h.opened_id().expect("a submission is open");
    h.press("M");
    assert_eq!(
        h.popup_kind(),
        Some(PopupKind::Info),
        "M lists, it does not confirm"
    );
    let (title, body) = popup(&h);
    assert!(title.starts_with("Next request"), "{title}");
    let store = SqliteStore::open(&db).unwrap();
    let backend: Box<dyn turnscope_store::Backend> = Box::new(store);
    let report = turnscope_engine::report::next_request::NextRequestReport::load(
        &*backend, &id, None, NOW, None,
    )
    .unwrap();
    let lines = report.text_lines();
    assert!(
        lines[0].starts_with("next request of submission"),
        "{lines:?}"
    );
    for line in lines.iter().filter(|l| !l.is_empty()).take(3) {
        assert!(
            body.contains(line.as_str()),
            "{line:?} not in the popup:\n{body}"
        );
    }
    assert!(body.contains("continuation_without_partial"), "{body}");
}
