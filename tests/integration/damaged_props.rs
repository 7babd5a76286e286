//! Property tests over database rows (issue 7): whatever the rows hold (malformed JSON, broken
//! trees, odd statuses, bytes that are not UTF-8), loading a report never panics and is
//! deterministic; and repairing a trailing partial tool batch, then classifying again, always
//! yields a complete batch with exactly one result per call on the active path.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use rusqlite::{params, Connection};
use turnscope_core::journal::entry::{js_key_text, Role};
use turnscope_core::recovery::changes::RowChange;
use turnscope_core::recovery::reconciler::Disposition;
use turnscope_engine::actions::{self, ActionKind, EntryIds};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{AuditInfo, JournalStore, RowFilter, SqliteStore, SqliteWriter};

use crate::damaged::{
    assistant_entry, blank, input_entry, insert_case, result_entry, session_data, KEY, NOW, SUB,
};

/// An empty journal database (the demo's schema), built once and copied per case.
fn template() -> &'static Path {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        blank(&dir)
    })
}

fn fresh(dir: &Path) -> PathBuf {
    let db = dir.join("case.db");
    std::fs::copy(template(), &db).unwrap();
    db
}

fn ids(r: &SubmissionReport) -> EntryIds {
    let mut n = 0x9000u64;
    EntryIds::with_source(
        r,
        Box::new(move || {
            n += 0x2468;
            n
        }),
    )
}

// --- arbitrary rows ------------------------------------------------------------------------------

/// Text for a data column: valid JSON of the right shape, or something that is not.
#[derive(Debug, Clone)]
enum Cell {
    Text(String),
    /// Stored as TEXT although the bytes are not UTF-8.
    Bytes(Vec<u8>),
    Null,
}

fn junk() -> impl Strategy<Value = Cell> {
    prop_oneof![
        Just(Cell::Text(String::new())),
        Just(Cell::Text("{".into())),
        Just(Cell::Text("[1,2".into())),
        Just(Cell::Text("null".into())),
        Just(Cell::Text("\"just a string\"".into())),
        Just(Cell::Text(format!(
            "{}{}",
            "[".repeat(2000),
            "]".repeat(2000)
        ))),
        Just(Cell::Bytes(vec![b'{', 0xff, 0xfe, b'}'])),
        Just(Cell::Null),
        "\\PC{0,20}".prop_map(Cell::Text),
    ]
}

/// One entry: id, parent (an earlier id, a missing id, or none), and a body.
fn entry_cell(index: usize) -> impl Strategy<Value = (String, Cell)> {
    let id = format!("e{index:07}");
    let parent = prop_oneof![
        6 => Just(Some(format!("e{:07}", index.saturating_sub(1)))),
        2 => (0..index.max(1)).prop_map(|p| Some(format!("e{p:07}"))),
        1 => Just(None),
        1 => Just(Some("nowhere0".to_string())),
        1 => Just(Some(format!("e{:07}", index + 1))), // a forward pointer: cycles become possible
    ];
    let calls = prop::collection::vec((0u8..4, 0u8..3), 0..4).prop_map(|v| {
        v.into_iter()
            .map(|(c, n)| (format!("call_{c}"), format!("tool_{n}")))
            .collect::<Vec<_>>()
    });
    let body = prop_oneof![
        2 => Just(0u8),
        2 => Just(1u8),
        2 => Just(2u8),
        1 => Just(3u8),
    ];
    (parent, calls, body, junk(), 0u8..4).prop_map(move |(parent, calls, kind, junk, call)| {
        let pid = parent.clone().unwrap_or_default();
        let cell = match kind {
            0 => Cell::Text(input_entry(&id, parent.as_deref())),
            1 => Cell::Text(assistant_entry(&id, &pid, &calls)),
            2 => Cell::Text(result_entry(
                &id,
                &pid,
                &format!("call_{call}"),
                "tool_0",
                "ok",
            )),
            _ => junk,
        };
        (id.clone(), cell)
    })
}

#[derive(Debug, Clone)]
struct Rows {
    status: &'static str,
    lease: i64,
    attempt: Option<&'static str>,
    payload: Cell,
    session: Option<Cell>,
    leaf: Option<usize>,
    entries: Vec<(String, Cell)>,
    journal: Option<(&'static str, Option<Cell>)>,
}

fn rows() -> impl Strategy<Value = Rows> {
    let entries = (0usize..10).prop_flat_map(|n| (0..n).map(entry_cell).collect::<Vec<_>>());
    let status = prop_oneof![
        8 => Just("running"),
        1 => prop::sample::select(vec!["queued", "settled", "terminalizing", "??"]),
    ];
    let lease = prop_oneof![
        6 => Just(NOW - 1_000),
        1 => Just(0i64),
        1 => Just(NOW + 60_000),
        1 => any::<i64>(),
    ];
    let attempt = prop_oneof![6 => Just(Some("att-1")), 1 => Just(None)];
    let payload = prop_oneof![8 => Just(Cell::Text(crate::damaged::payload())), 1 => junk()];
    // 99 stands for the last entry; other indexes may name no entry.
    let leaf =
        prop_oneof![6 => Just(Some(99usize)), 1 => (0usize..10).prop_map(Some), 1 => Just(None)];
    // Empty text stands for well-formed session data pointing at the chosen leaf.
    let session = prop_oneof![
        3 => Just(Some(Cell::Text(String::new()))),
        1 => junk().prop_map(Some),
        1 => Just(None),
    ];
    let phase = prop::sample::select(vec![
        "before_provider",
        "provider_started",
        "tool_request_recorded",
        "committed",
        "weird",
    ]);
    let tool_request = prop_oneof![
        1 => Just(None),
        2 => Just(Some(Cell::Text(r#"{"toolCalls":[{"id":"call_0","name":"tool_0"},{"id":"call_1","name":"tool_1"}]}"#.into()))),
        1 => junk().prop_map(Some),
    ];
    let journal = prop::option::of((phase, tool_request));
    (
        status, lease, attempt, payload, session, leaf, entries, journal,
    )
        .prop_map(
            |(status, lease, attempt, payload, session, leaf, entries, journal)| Rows {
                status,
                lease,
                attempt,
                payload,
                session,
                leaf,
                entries,
                journal,
            },
        )
}

fn bind(c: &Cell) -> rusqlite::types::Value {
    match c {
        Cell::Text(t) => rusqlite::types::Value::Text(t.clone()),
        Cell::Bytes(b) => rusqlite::types::Value::Blob(b.clone()),
        Cell::Null => rusqlite::types::Value::Null,
    }
}

/// Write `rows` into a fresh journal database. NOT NULL columns that get a NULL fall back to ''.
fn write_rows(db: &Path, rows: &Rows) {
    let c = Connection::open(db).unwrap();
    // Blobs are stored as TEXT with the same bytes (how a non-UTF-8 writer leaves them).
    let text = "CASE WHEN typeof(?) = 'blob' THEN CAST(? AS TEXT) ELSE coalesce(?, '') END";
    let cell_sql = |n: usize| text.replace('?', &format!("?{n}"));
    c.execute(
        &format!(
            "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, accepted_at,
               attempt_id, input_applied_at, started_at, attempt_count, max_retry, timeout_at, owner_id, lease_expires_at)
             VALUES (?1, ?2, 'dispatch', {}, ?4, ?5, ?6, ?7, ?7, 1, 10, 0, 'worker-1', ?8)",
            cell_sql(3)
        ),
        params![
            SUB,
            KEY,
            bind(&rows.payload),
            rows.status,
            NOW - 120_000,
            rows.attempt,
            NOW - 110_000,
            rows.lease
        ],
    )
    .unwrap();
    if let Some(session) = &rows.session {
        let data = match session {
            Cell::Text(t) if t.is_empty() => {
                let last = rows.entries.len().saturating_sub(1);
                let leaf = rows
                    .leaf
                    .map(|i| format!("e{:07}", if i == 99 { last } else { i }));
                Cell::Text(session_data(leaf.as_deref()))
            }
            other => other.clone(),
        };
        c.execute(
            &format!(
                "INSERT INTO flue_sessions (id, data) VALUES (?1, {})",
                cell_sql(2)
            ),
            params![KEY, bind(&data)],
        )
        .unwrap();
    }
    for (i, (id, cell)) in rows.entries.iter().enumerate() {
        c.execute(
            &format!(
                "INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, {})",
                cell_sql(4)
            ),
            params![KEY, id, i as i64, bind(cell)],
        )
        .unwrap();
    }
    if let Some((phase, tr)) = &rows.journal {
        let tr = tr.clone().unwrap_or(Cell::Null);
        c.execute(
                            "INSERT INTO flue_agent_turn_journals (submission_id, session_key, kind, attempt_id, operation_id, turn_id,
                   phase, revision, created_at, updated_at, tool_request_json, committed)
                 VALUES (?1, ?2, 'dispatch', 'att-1', 'op-1', 'turn-1', ?3, 2, ?4, ?4,
                   CASE WHEN typeof(?5) = 'blob' THEN CAST(?5 AS TEXT) ELSE ?5 END, 0)",
            params![SUB, KEY, phase, NOW - 100_000, bind(&tr)],
        )
        .unwrap();
    }
}

/// Everything a report concludes, as one comparable value.
fn fingerprint(r: &SubmissionReport) -> String {
    format!(
        "{}|{:?}|{:?}",
        r.to_json(),
        r.plan,
        ALL.map(|k| actions::plan(k, r, Some("p"), NOW, &mut ids(r)).map(|p| p.changes))
    )
}

const ALL: [ActionKind; 4] = [
    ActionKind::Repair,
    ActionKind::Requeue,
    ActionKind::Fail,
    ActionKind::Step,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Loading never panics and is deterministic; any action planned on a damaged session is a
    /// refusal.
    #[test]
    fn loading_arbitrary_rows_never_panics_and_is_deterministic(rows in rows()) {
        let dir = tempfile::tempdir().unwrap();
        let db = fresh(dir.path());
        write_rows(&db, &rows);
        let store = SqliteStore::open(&db).unwrap();
        let listed = store.list_submissions(RowFilter::All, 0).unwrap();
        prop_assert_eq!(listed.len(), 1);
        let _ = store.list_sessions().unwrap();
        let _ = store.load_session(KEY).unwrap();
        let a = SubmissionReport::load(&store, SUB, Some(200_000), NOW).unwrap();
        let b = SubmissionReport::load(&store, SUB, Some(200_000), NOW).unwrap();
        prop_assert_eq!(fingerprint(&a), fingerprint(&b));
        let damaged = !a.inspection.load_blockers.is_empty()
            || a.history.as_ref().is_some_and(|h| !h.damage.is_empty())
            || a.bundle.journal_problem.is_some()
            || a.inspection.tool_request_error.is_some();
        if damaged {
            for k in ALL {
                let planned = actions::plan(k, &a, Some("p"), NOW, &mut ids(&a));
                // The one write allowed there is the runtime's own auto-fail of a malformed row:
                // its parser settles the row before any session is loaded, and so does turnscope,
                // touching the submission row alone.
                let auto_fail = planned.as_ref().is_ok_and(|p| {
                    matches!(a.plan.disposition, Disposition::Malformed { .. })
                        && matches!(p.changes.as_slice(), [RowChange::AutoFailSubmission { .. }])
                });
                prop_assert!(
                    planned.is_err() || auto_fail,
                    "{} planned on a damaged session", k.as_str()
                );
            }
        }
        // Whatever is planned applies whole or not at all, and leaves a readable database.
        for k in ALL {
            let Ok(p) = actions::plan(k, &a, Some("p"), NOW, &mut ids(&a)) else { continue };
            if p.is_noop() {
                continue;
            }
            let copy = dir.path().join(format!("{}.db", k.as_str()));
            std::fs::copy(&db, &copy).unwrap();
            let res = SqliteWriter::open(&copy).unwrap().apply(
                &p.fence,
                &p.changes,
                &AuditInfo {
                    operator: "prop".into(),
                    action: k.as_str().into(),
                    reason: Some("p".into()),
                    summary: p.summary.clone(),
                    now_ms: NOW,
                    batch_id: None,
                    side_effects: None,
                },
            );
            // Entry rows without a session row: creating the session (as the runtime's
            // get-or-create does) would put them under it, so the store refuses that insert.
            let orphans = rows.session.is_none() && !rows.entries.is_empty();
            if orphans && p.changes.iter().any(|c| matches!(c, RowChange::InsertSession { .. })) {
                let err = res.unwrap_err().to_string();
                prop_assert!(err.contains("insert session"), "{}", err);
                continue;
            }
            prop_assert!(res.is_ok(), "{}: {}", k.as_str(), res.unwrap_err());
            let store = SqliteStore::open(&copy).unwrap();
            let after = SubmissionReport::load(&store, SUB, Some(200_000), NOW).unwrap();
            // A session damaged before stays as it was: the only write planned there is the
            // auto-fail of the row (checked above), which settles it.
            if damaged {
                prop_assert_eq!(&after.row().status, &turnscope_core::journal::status::SubmissionStatus::Settled);
            } else {
                prop_assert!(after.inspection.load_blockers.is_empty(), "{:?}", after.inspection.load_blockers);
            }
        }
    }
}

// --- repair, then classify -----------------------------------------------------------------------

/// A history: the input, `earlier` complete tool turns, then a trailing batch of `calls` calls of
/// which the results at `answered` (indexes, in that order) were recorded.
#[derive(Debug, Clone)]
struct Batch {
    earlier: Vec<usize>,
    calls: usize,
    answered: Vec<usize>,
    journal: bool,
}

fn batch() -> impl Strategy<Value = Batch> {
    (
        prop::collection::vec(1usize..4, 0..3),
        1usize..7,
        any::<bool>(),
    )
        .prop_flat_map(|(earlier, calls, journal)| {
            // A strict subset of the calls, answered in any order.
            let order = Just((0..calls).collect::<Vec<_>>()).prop_shuffle();
            (Just(earlier), Just(calls), order, 0..calls, Just(journal))
        })
        .prop_map(|(earlier, calls, order, k, journal)| Batch {
            earlier,
            calls,
            answered: order[..k].to_vec(),
            journal,
        })
}

fn write_batch(db: &Path, b: &Batch) -> Vec<String> {
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut leaf = "in000001".to_string();
    entries.push((leaf.clone(), input_entry(&leaf, None)));
    let push =
        |entries: &mut Vec<(String, String)>, leaf: &mut String, data: String, id: String| {
            entries.push((id.clone(), data));
            *leaf = id;
        };
    for (t, &n) in b.earlier.iter().enumerate() {
        let calls: Vec<(String, String)> = (0..n)
            .map(|i| (format!("t{t}_c{i}"), format!("tool_{i}")))
            .collect();
        let id = format!("as{t:06}");
        let data = assistant_entry(&id, &leaf, &calls);
        push(&mut entries, &mut leaf, data, id);
        for (c, name) in &calls {
            let id = format!("r{:07}", entries.len());
            let data = result_entry(&id, &leaf, c, name, "done");
            push(&mut entries, &mut leaf, data, id);
        }
    }
    let calls: Vec<(String, String)> = (0..b.calls)
        .map(|i| (format!("last_c{i}"), format!("tool_{i}")))
        .collect();
    let id = "aslast01".to_string();
    let data = assistant_entry(&id, &leaf, &calls);
    push(&mut entries, &mut leaf, data, id);
    for &i in &b.answered {
        let (c, name) = &calls[i];
        let id = format!("r{:07}", entries.len());
        let data = result_entry(&id, &leaf, c, name, "partial");
        push(&mut entries, &mut leaf, data, id);
    }
    let request = serde_json::json!({
        "toolCalls": calls.iter().map(|(c, n)| serde_json::json!({"id": c, "name": n, "arguments": {}})).collect::<Vec<_>>()
    })
    .to_string();
    let c = Connection::open(db).unwrap();
    insert_case(
        &c,
        &entries,
        Some(&leaf),
        b.journal.then_some(request.as_str()),
    );
    calls.into_iter().map(|(c, _)| c).collect()
}

/// Results per tool call id on the active path after the input.
fn results_per_call(r: &SubmissionReport) -> std::collections::HashMap<String, usize> {
    let mut n = std::collections::HashMap::new();
    for e in r.following().unwrap_or_default() {
        if let Some(m) = e.message_with_role(&Role::ToolResult) {
            *n.entry(js_key_text(&m.tool_call_id())).or_insert(0) += 1;
        }
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn repair_then_classify_always_yields_a_complete_batch(b in batch()) {
        let dir = tempfile::tempdir().unwrap();
        let db = fresh(dir.path());
        let calls = write_batch(&db, &b);
        let store = SqliteStore::open(&db).unwrap();
        let before = SubmissionReport::load(&store, SUB, Some(200_000), NOW).unwrap();
        prop_assert!(before.classification().trailing_partial_batch.is_some());
        let plan = actions::plan_repair(&before, NOW, &mut ids(&before))
            .map_err(|r| TestCaseError::fail(format!("refused: {r:?}")))?;
        prop_assert!(!plan.is_noop());
        SqliteWriter::open(&db)
            .unwrap()
            .apply(
                &plan.fence,
                &plan.changes,
                &AuditInfo {
                    operator: "prop".into(),
                    action: "repair".into(),
                    reason: None,
                    summary: plan.summary.clone(),
                    now_ms: NOW,
                    batch_id: None,
                    side_effects: None,
                },
            )
            .unwrap();
        let store = SqliteStore::open(&db).unwrap();
        let after = SubmissionReport::load(&store, SUB, Some(200_000), NOW).unwrap();
        prop_assert!(after.classification().trailing_partial_batch.is_none(),
            "{:?}", after.classification());
        prop_assert!(after.history.as_ref().unwrap().damage.is_empty());
        let per_call = results_per_call(&after);
        for c in &calls {
            prop_assert_eq!(per_call.get(c).copied(), Some(1), "call {}", c);
        }
        prop_assert!(per_call.values().all(|&n| n == 1), "{:?}", per_call);
        // Recorded results were kept: each answered call's result still says "partial".
        // And a second repair writes nothing.
        if let Ok(p) = actions::plan_repair(&after, NOW, &mut ids(&after)) {
            prop_assert!(p.is_noop(), "{}", p.summary);
        }
    }
}
