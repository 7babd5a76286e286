//! Damaged and unexpected databases (issue 7): a corpus generated here (no committed binaries),
//! each case checked through the library and/or the real binary. turnscope never panics, never
//! hangs, never writes to a database it could not fully read: it opens what it can, marks what is
//! damaged, and refuses the write actions on damaged sessions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection};
use turnscope_core::journal::entry::{Entry, EntryBody};
use turnscope_core::journal::history::{History, PathDamage, SubmissionKind};
use turnscope_core::recovery::classify::classify_submission_state;
use turnscope_core::recovery::reconciler::Disposition;
use turnscope_engine::actions::{self, ActionKind, EntryIds, Refusal};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{
    ApplyError, AuditInfo, JournalStore, RowFilter, SqliteStore, SqliteWriter, StoreError,
};

/// The demo's clock (every stuck lease is expired relative to it).
pub const NOW: i64 = 1_796_018_889_175;
/// The demo's repairable submission (journal `tool_request_recorded`, rule 6).
const REPAIRABLE: &str = "travel-desk";

// ---------------------------------------------------------------------------------------------
// Corpus helpers
// ---------------------------------------------------------------------------------------------

/// The demo database, in rollback-journal mode (one file, no -wal) so byte-level damage is real.
pub fn demo(dir: &Path) -> PathBuf {
    let db = dir.join("journal.db");
    turnscope_demo::write_demo(&db, NOW).unwrap();
    settle(&db);
    db
}

/// Checkpoint and leave WAL mode: everything in the main file.
pub fn settle(db: &Path) {
    let c = Connection::open(db).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
}

pub fn sql(db: &Path, batch: &str) {
    Connection::open(db).unwrap().execute_batch(batch).unwrap();
}

/// The demo's schema with no rows: a fresh journal for hand-built cases.
pub fn blank(dir: &Path) -> PathBuf {
    let db = demo(dir);
    let c = Connection::open(&db).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'flue_%' AND name <> 'flue_meta'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for t in tables {
        c.execute(&format!("DELETE FROM {t}"), []).unwrap();
    }
    db
}

/// Everything on disk for `db` (main file and any -wal), to prove nothing was written.
fn snapshot(db: &Path) -> Vec<(usize, u64)> {
    use std::hash::{Hash, Hasher};
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    [db.to_path_buf(), PathBuf::from(wal)]
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).unwrap_or_default();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut h);
            (bytes.len(), h.finish())
        })
        .collect()
}

fn stuck_id(db: &Path, instance: &str) -> String {
    SqliteStore::open(db)
        .unwrap()
        .list_submissions(RowFilter::Expired, NOW)
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some(instance))
        .unwrap_or_else(|| panic!("no stuck submission for {instance}"))
        .submission_id
}

fn session_key(db: &Path, id: &str) -> String {
    Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT session_key FROM flue_agent_submissions WHERE submission_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

fn report(db: &Path, id: &str) -> SubmissionReport {
    let store = SqliteStore::open(db).unwrap();
    SubmissionReport::load(&store, id, Some(200_000), NOW).unwrap()
}

fn ids(r: &SubmissionReport) -> EntryIds {
    let mut n = 0x5000u64;
    EntryIds::with_source(
        r,
        Box::new(move || {
            n += 0x1357;
            n
        }),
    )
}

fn plan(kind: ActionKind, r: &SubmissionReport) -> Result<actions::ActionPlan, Refusal> {
    actions::plan(kind, r, Some("damaged-db test"), NOW, &mut ids(r))
}

const ALL_ACTIONS: [ActionKind; 4] = [
    ActionKind::Repair,
    ActionKind::Requeue,
    ActionKind::Fail,
    ActionKind::Step,
];

/// Every write action refuses `r`, and says why in terms of damage.
fn assert_every_action_refused(r: &SubmissionReport, needle: &str) {
    for kind in ALL_ACTIONS {
        match plan(kind, r) {
            Ok(p) => panic!(
                "{} was planned on a damaged session: {}",
                kind.as_str(),
                p.summary
            ),
            Err(refusal) => assert!(
                refusal.reason.contains(needle),
                "{}: {:?} does not mention {needle:?}",
                kind.as_str(),
                refusal.reason
            ),
        }
    }
}

fn audit(now: i64) -> AuditInfo {
    AuditInfo {
        operator: "damaged@test".into(),
        action: "repair".into(),
        reason: None,
        summary: "s".into(),
        now_ms: now,
        batch_id: None,
        side_effects: None,
    }
}

/// Run the real binary with a deadline (a hang fails the test instead of stalling the suite).
fn turnscope(db: &Path, args: &[&str]) -> Output {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(db)
        .args(args);
    run_bounded(cmd, Duration::from_secs(60)).0
}

/// Run `cmd` to completion within `limit`; also returns the child's peak RSS in kB (sampled).
fn run_bounded(mut cmd: Command, limit: Duration) -> (Output, u64) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn turnscope");
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            r.read_to_end(&mut buf).unwrap();
            buf
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let status_path = format!("/proc/{}/status", child.id());
    let started = Instant::now();
    let mut peak_kb = 0;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(kb) = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("turnscope did not finish within {limit:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, peak_kb)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A clean failure: exit `code`, one `error:` line containing `needle`, one `hint:` line, no panic.
fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one error line and one hint line, got: {err}"
    );
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn assert_ok(o: &Output) {
    assert!(o.status.success(), "stderr: {}", stderr(o));
    assert!(!stderr(o).contains("panicked"));
}

/// `--write repair|fail` on a damaged submission: refused (exit 3), nothing written.
fn assert_cli_refuses_writes(db: &Path, id: &str) {
    let before = snapshot(db);
    for action in ["repair", "requeue", "fail", "step"] {
        let o = turnscope(db, &["--write", action, id, "-y", "--reason", "test"]);
        assert_fails(&o, 3, "refused");
        assert_eq!(snapshot(db), before, "{action} wrote to a damaged database");
    }
}

// --- hand-built sessions -----------------------------------------------------------------------

pub const SUB: &str = "sub-damaged-0001";
pub const KEY: &str = r#"agent-session:["probe","default","default"]"#;
const TS: &str = "2026-11-30T07:00:00.000Z";

pub fn session_data(leaf: Option<&str>) -> String {
    let leaf = leaf.map_or("null".into(), |l| serde_json::Value::from(l).to_string());
    format!(
        r#"{{"version":8,"conversationId":"conv_01ARZ3NDEKTSV4RRFFQ69G5FAV","affinityKey":"aff_01ARZ3NDEKTSV4RRFFQ69G5FAV","leafId":{leaf},"createdAt":"{TS}","updatedAt":"{TS}"}}"#
    )
}

fn parent_json(parent: Option<&str>) -> String {
    parent.map_or("null".into(), |p| serde_json::Value::from(p).to_string())
}

/// The submission's input entry (a user message carrying the dispatch marker).
pub fn input_entry(id: &str, parent: Option<&str>) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{TS}","message":{{"role":"user","content":"go","timestamp":1}},"dispatch":{{"dispatchId":"{SUB}"}}}}"#,
        parent_json(parent)
    )
}

/// An assistant asking for tool calls `(id, name)`.
pub fn assistant_entry(id: &str, parent: &str, calls: &[(String, String)]) -> String {
    let content: Vec<serde_json::Value> = calls
        .iter()
        .map(|(c, n)| serde_json::json!({"type":"toolCall","id":c,"name":n,"arguments":{}}))
        .collect();
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{TS}","message":{{"role":"assistant","content":{},"api":"anthropic-messages","provider":"anthropic","model":"claude-x","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}},"stopReason":"toolUse","timestamp":2}}}}"#,
        serde_json::Value::from(content)
    )
}

pub fn result_entry(id: &str, parent: &str, call: &str, name: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{TS}","message":{{"role":"toolResult","toolCallId":{},"toolName":{},"content":[{{"type":"text","text":{}}}],"isError":false,"timestamp":3}}}}"#,
        serde_json::Value::from(call),
        serde_json::Value::from(name),
        serde_json::Value::from(text)
    )
}

/// A dispatch payload the runtime's row parser accepts for `SUB`.
pub fn payload() -> String {
    serde_json::json!({
        "kind": "dispatch",
        "submissionId": SUB,
        "id": "probe",
        "dispatchId": SUB,
        "acceptedAt": turnscope_core::journal::time::iso_from_ms(NOW - 120_000),
        "agent": "probe",
        "input": "go",
    })
    .to_string()
}

/// Insert one running, lease-expired dispatch submission with its session and (optionally) a
/// `tool_request_recorded` journal. `entries` are `(entry_id, data)` in position order.
pub fn insert_case(
    c: &Connection,
    entries: &[(String, String)],
    leaf: Option<&str>,
    tool_request_json: Option<&str>,
) {
    c.execute(
        "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, accepted_at,
           attempt_id, input_applied_at, started_at, attempt_count, max_retry, timeout_at, owner_id, lease_expires_at)
         VALUES (?1, ?2, 'dispatch', ?6, 'running', ?3, 'att-1', ?4, ?4, 1, 10, 0, 'worker-1', ?5)",
        params![SUB, KEY, NOW - 120_000, NOW - 110_000, NOW - 30_000, payload()],
    )
    .unwrap();
    c.execute(
        "INSERT INTO flue_sessions (id, data) VALUES (?1, ?2)",
        params![KEY, session_data(leaf)],
    )
    .unwrap();
    let mut ins = c
        .prepare("INSERT INTO flue_session_entries (session_id, entry_id, position, data) VALUES (?1, ?2, ?3, ?4)")
        .unwrap();
    for (i, (id, data)) in entries.iter().enumerate() {
        ins.execute(params![KEY, id, i as i64, data]).unwrap();
    }
    if let Some(tr) = tool_request_json {
        c.execute(
            "INSERT INTO flue_agent_turn_journals (submission_id, session_key, kind, attempt_id, operation_id, turn_id,
               phase, revision, created_at, updated_at, checkpoint_leaf_id, tool_request_json, committed)
             VALUES (?1, ?2, 'dispatch', 'att-1', 'op-1', 'turn-1', 'tool_request_recorded', 3, ?3, ?3, NULL, ?4, 0)",
            params![SUB, KEY, NOW - 100_000, tr],
        )
        .unwrap();
    }
}

/// A tool batch of `n` calls with the first `answered` results recorded: input, assistant, results.
pub fn batch_entries(n: usize, answered: usize) -> (Vec<(String, String)>, String, String) {
    let calls: Vec<(String, String)> = (0..n)
        .map(|i| (format!("call_{i}"), format!("tool_{}", i % 7)))
        .collect();
    let mut entries = vec![
        ("in000001".to_string(), input_entry("in000001", None)),
        (
            "as000001".to_string(),
            assistant_entry("as000001", "in000001", &calls),
        ),
    ];
    let mut leaf = "as000001".to_string();
    for (c, name) in calls.iter().take(answered) {
        let id = format!("r{:07}", entries.len());
        entries.push((id.clone(), result_entry(&id, &leaf, c, name, "ok")));
        leaf = id;
    }
    let request = serde_json::json!({
        "toolCalls": calls.iter().map(|(c, n)| serde_json::json!({"id": c, "name": n, "arguments": {}})).collect::<Vec<_>>()
    })
    .to_string();
    (entries, leaf, request)
}

fn hand_built(
    dir: &Path,
    entries: &[(String, String)],
    leaf: Option<&str>,
    tr: Option<&str>,
) -> PathBuf {
    let db = blank(dir);
    let c = Connection::open(&db).unwrap();
    insert_case(&c, entries, leaf, tr);
    db
}

/// The tool call ids that have more than one result on the active path after the input.
pub fn doubled_results(r: &SubmissionReport) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    for e in r.following().unwrap_or_default() {
        if let Some(m) = e.message() {
            if m.role == turnscope_core::journal::entry::Role::ToolResult {
                *seen
                    .entry(turnscope_core::journal::entry::js_key_text(
                        &m.tool_call_id(),
                    ))
                    .or_insert(0) += 1;
            }
        }
    }
    seen.into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Files damaged below SQLite
// ---------------------------------------------------------------------------------------------

#[test]
fn truncated_files_fail_cleanly_and_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = demo(dir.path());
    let bytes = std::fs::read(&src).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "the demo spans many pages");
    for (name, len) in [
        ("header-only", 50),
        ("first-page", page),
        ("half", bytes.len() / 2),
        ("last-page-missing", bytes.len() - page),
    ] {
        let db = dir.path().join(format!("trunc-{name}.db"));
        std::fs::write(&db, &bytes[..len]).unwrap();
        let before = snapshot(&db);
        // Library: an error with a hint, or a store that errors (not panics) when read.
        match SqliteStore::open(&db) {
            Err(e) => assert!(!e.hint().is_empty(), "{name}: {e}"),
            Ok(store) => {
                let _ = store.list_submissions(RowFilter::All, 0);
                let _ = store.status_counts();
            }
        }
        // CLI: `list` either works (what is left is readable) or fails with error + hint.
        let o = turnscope(&db, &["list", "--status", "all"]);
        if !o.status.success() {
            assert_fails(&o, 1, "");
        }
        let o = turnscope(
            &db,
            &["--write", "repair", "--ack-side-effects", "anything", "-y"],
        );
        assert!(!o.status.success(), "{name}: {}", stdout(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert_eq!(snapshot(&db), before, "{name} was written to");
    }
}

#[test]
fn zeroed_pages_fail_cleanly_and_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = demo(dir.path());
    let bytes = std::fs::read(&src).unwrap();
    let page = 4096;
    let pages = bytes.len() / page;
    let id = stuck_id(&src, REPAIRABLE);
    for (name, from, to) in [
        ("header", 0, 1),
        ("schema-root", 0, 2),
        ("second", 1, 2),
        ("middle", pages / 3, pages / 3 + 4),
        ("tail", pages - 3, pages),
    ] {
        let db = dir.path().join(format!("zero-{name}.db"));
        let mut damaged = bytes.clone();
        damaged[from * page..to * page].fill(0);
        std::fs::write(&db, &damaged).unwrap();
        let before = snapshot(&db);
        if let Ok(store) = SqliteStore::open(&db) {
            let _ = store.list_submissions(RowFilter::All, 0);
            if let Ok(r) = SubmissionReport::load(&store, &id, None, NOW) {
                let _ = r.to_json();
            }
        }
        for args in [
            &["list", "--status", "all"][..],
            &["show", &id],
            &["show", &id, "--json"],
        ] {
            let o = turnscope(&db, args);
            if !o.status.success() {
                let err = stderr(&o);
                assert!(
                    err.starts_with("error: ") && err.contains("\nhint: "),
                    "{name}: {err}"
                );
                assert!(!err.contains("panicked"), "{err}");
            }
        }
        // Even where the submission's own rows still read fine, the writer refuses the file.
        assert!(SqliteWriter::open(&db).is_err(), "{name}: writer opened");
        let o = turnscope(&db, &["--write", "repair", "--ack-side-effects", &id, "-y"]);
        assert!(!o.status.success(), "{name}: {}", stdout(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert_eq!(snapshot(&db), before, "{name} was written to");
    }
}

// ---------------------------------------------------------------------------------------------
// Unexpected schemas
// ---------------------------------------------------------------------------------------------

#[test]
fn missing_core_tables_are_not_a_flue_journal() {
    let dir = tempfile::tempdir().unwrap();
    for table in [
        "flue_agent_submissions",
        "flue_sessions",
        "flue_session_entries",
    ] {
        let sub = dir.path().join(table);
        std::fs::create_dir(&sub).unwrap();
        let db = demo(&sub);
        sql(&db, &format!("DROP TABLE {table}"));
        assert!(matches!(
            SqliteStore::open(&db),
            Err(StoreError::NotFlue { .. })
        ));
        assert_fails(&turnscope(&db, &["list"]), 1, "not a flue journal");
    }
}

#[test]
fn missing_optional_tables_still_show_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    sql(
        &db,
        "DROP TABLE flue_agent_turn_journals; DROP TABLE flue_agent_stream_chunks;",
    );
    let store = SqliteStore::open(&db).unwrap();
    assert!(!store
        .list_submissions(RowFilter::All, 0)
        .unwrap()
        .is_empty());
    let r = SubmissionReport::load(&store, &id, Some(200_000), NOW).unwrap();
    assert!(r.bundle.journal.is_none());
    assert!(r.bundle.stream_chunks.is_empty());
    assert_ok(&turnscope(&db, &["list", "--status", "all"]));
    assert_ok(&turnscope(&db, &["show", &id]));
    // The sessions view's queries too.
    store.list_sessions().unwrap();
    store.journal_phases().unwrap();
    store.bundle_fingerprint(&id, &r.row().session_key).unwrap();
    // Marked, and no write without the journal to fence on.
    assert!(r
        .bundle
        .journal_problem
        .as_deref()
        .unwrap()
        .contains("no flue_agent_turn_journals table"));
    assert_every_action_refused(&r, "flue_agent_turn_journals");
    assert_cli_refuses_writes(&db, &id);
}

#[test]
fn extra_tables_and_columns_still_work_including_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    sql(
        &db,
        "CREATE TABLE zz_future (x BLOB); INSERT INTO zz_future VALUES (x'00ff');
         CREATE TABLE flue_future_things (id TEXT PRIMARY KEY);
         ALTER TABLE flue_agent_submissions ADD COLUMN priority INTEGER DEFAULT 3;
         ALTER TABLE flue_session_entries ADD COLUMN tag TEXT;",
    );
    assert_ok(&turnscope(&db, &["list", "--status", "all"]));
    assert_ok(&turnscope(&db, &["show", &id, "--json"]));
    let r = report(&db, &id);
    let p = plan(ActionKind::Repair, &r).unwrap();
    SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap();
    let after = report(&db, &id);
    assert!(after.classification().trailing_partial_batch.is_none());
    assert!(doubled_results(&after).is_empty());
}

#[test]
fn old_schema_without_terminal_columns_reads_them_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    sql(
        &db,
        "ALTER TABLE flue_agent_submissions DROP COLUMN terminal_event_key;
         ALTER TABLE flue_agent_submissions DROP COLUMN terminal_event_json;
         ALTER TABLE flue_agent_submissions DROP COLUMN terminal_event_offset;
         ALTER TABLE flue_agent_submissions DROP COLUMN recovery_requested_at;",
    );
    let store = SqliteStore::open(&db).unwrap();
    let rows = store.list_submissions(RowFilter::All, 0).unwrap();
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r.terminal_key.is_none() && r.recovery_requested_at.is_none()));
    let r = SubmissionReport::load(&store, &id, Some(200_000), NOW).unwrap();
    assert!(!matches!(
        r.plan.disposition,
        Disposition::Unreadable { .. }
    ));
    assert_ok(&turnscope(&db, &["list", "--status", "all"]));
    assert_ok(&turnscope(&db, &["show", &id]));
    // A repair writes no terminal column: it works on the old schema.
    let p = plan(ActionKind::Repair, &r).unwrap();
    SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap();
    assert!(report(&db, &id)
        .classification()
        .trailing_partial_batch
        .is_none());
    // Failing a direct submission needs the terminal outbox: a clean error, nothing written.
    let direct = stuck_id(&db, "dana-phone");
    let r = report(&db, &direct);
    let p = plan(ActionKind::Fail, &r).unwrap();
    let before = snapshot(&db);
    let err = SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap_err();
    assert!(err.to_string().contains("terminal_event"), "{err}");
    assert_eq!(snapshot(&db), before);
    assert_fails(
        &turnscope(&db, &["--write", "fail", &direct, "-y", "--reason", "r"]),
        1,
        "terminal_event",
    );
    assert_eq!(snapshot(&db), before);
}

#[test]
fn wrong_schema_version_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (stmt, needle)) in [
        (
            "UPDATE flue_meta SET value = '4' WHERE key = 'schema_version'",
            "\"4\"",
        ),
        (
            "UPDATE flue_meta SET value = 'abc' WHERE key = 'schema_version'",
            "\"abc\"",
        ),
        (
            "DELETE FROM flue_meta WHERE key = 'schema_version'",
            "(none)",
        ),
        ("DROP TABLE flue_meta", "(none)"),
    ]
    .iter()
    .enumerate()
    {
        let sub = dir.path().join(i.to_string());
        std::fs::create_dir(&sub).unwrap();
        let db = demo(&sub);
        sql(&db, stmt);
        let before = snapshot(&db);
        assert!(matches!(
            SqliteStore::open(&db),
            Err(StoreError::SchemaVersion { .. })
        ));
        assert!(SqliteWriter::open(&db).is_err());
        assert_fails(&turnscope(&db, &["list"]), 1, needle);
        assert_fails(
            &turnscope(&db, &["--write", "repair", "--ack-side-effects", "x", "-y"]),
            1,
            "schema version",
        );
        assert_eq!(snapshot(&db), before);
    }
}

#[test]
fn newer_runtime_format_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    sql(
        &db,
        "INSERT INTO flue_meta (key, value) VALUES ('format_version', '2')",
    );
    let before = snapshot(&db);
    assert!(matches!(
        SqliteStore::open(&db),
        Err(StoreError::NewerFormat { .. })
    ));
    assert!(matches!(
        SqliteWriter::open(&db),
        Err(StoreError::NewerFormat { .. })
    ));
    assert_fails(&turnscope(&db, &["list"]), 1, "newer runtime format");
    assert_fails(
        &turnscope(&db, &["--write", "fail", "x", "-y", "--reason", "r"]),
        1,
        "newer runtime format",
    );
    assert_eq!(snapshot(&db), before);
}

// ---------------------------------------------------------------------------------------------
// Malformed JSON in data columns
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_session_data_is_shown_marked_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    let key = session_key(&db, &id);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_sessions SET data = substr(data, 1, length(data) - 7) WHERE id = ?1",
            [&key],
        )
        .unwrap();
    let r = report(&db, &id);
    let s = r.bundle.session.as_ref().unwrap();
    assert!(s.leaf_id.is_none());
    assert!(
        s.data_problems[0].contains("not valid JSON"),
        "{:?}",
        s.data_problems
    );
    assert!(!s.entries.is_empty(), "the entries are still shown");
    assert!(matches!(r.plan.disposition, Disposition::Unreadable { .. }));
    assert_every_action_refused(&r, "damaged");
    let o = turnscope(&db, &["show", &id, "--json"]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["session"]["problems"][0]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    assert_ok(&turnscope(&db, &["list", "--status", "all"]));
    assert_cli_refuses_writes(&db, &id);
}

#[test]
fn malformed_submission_payload_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    sql(
        &db,
        "UPDATE flue_agent_submissions SET payload = '{\"agent\": \"conc' ;
         UPDATE flue_agent_submissions SET payload = x'ff00fe' WHERE rowid % 3 = 0;",
    );
    let store = SqliteStore::open(&db).unwrap();
    let rows = store.list_submissions(RowFilter::All, 0).unwrap();
    assert!(rows.iter().all(|r| r.agent().is_none()));
    let r = SubmissionReport::load(&store, &id, Some(200_000), NOW).unwrap();
    let _ = r.to_json();
    // The runtime's row parser rejects it and settles it as failed; turnscope says so.
    assert!(
        matches!(r.plan.disposition, Disposition::Malformed { .. }),
        "{:?}",
        r.plan.disposition
    );
    assert!(plan(ActionKind::Repair, &r).is_err());
    assert_ok(&turnscope(&db, &["list", "--status", "all", "--json"]));
    assert_ok(&turnscope(&db, &["show", &id]));
}

#[test]
fn malformed_tool_request_json_is_marked_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bad) in [
        "{\"toolCalls\": [",
        "{\"calls\": []}",
        "[1,2,3]",
        "\u{0}\u{1}",
    ]
    .iter()
    .enumerate()
    {
        let sub = dir.path().join(i.to_string());
        std::fs::create_dir(&sub).unwrap();
        let db = demo(&sub);
        let id = stuck_id(&db, REPAIRABLE);
        Connection::open(&db)
            .unwrap()
            .execute(
                "UPDATE flue_agent_turn_journals SET tool_request_json = ?1 WHERE submission_id = ?2",
                params![bad, id],
            )
            .unwrap();
        let r = report(&db, &id);
        assert!(r.inspection.tool_request_error.is_some(), "{bad:?}");
        let _ = r.to_json();
        assert_every_action_refused(&r, "tool_request_json");
        assert_ok(&turnscope(&db, &["show", &id]));
        if i == 0 {
            assert_cli_refuses_writes(&db, &id);
        }
    }
}

#[test]
fn unknown_journal_phase_is_marked_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_turn_journals SET phase = 'tool_results_recorded_v2' WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    let r = report(&db, &id);
    assert!(r.bundle.journal_problem.is_some());
    assert_every_action_refused(&r, "journal");
    assert_ok(&turnscope(&db, &["show", &id]));
}

#[test]
fn malformed_entry_json_blocks_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    let key = session_key(&db, &id);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_session_entries SET data = substr(data, 1, 40) WHERE session_id = ?1 AND position = 1",
            [&key],
        )
        .unwrap();
    let r = report(&db, &id);
    let s = r.bundle.session.as_ref().unwrap();
    assert!(s
        .entries
        .iter()
        .any(|e| matches!(e.body, EntryBody::Malformed { .. })));
    assert!(matches!(r.plan.disposition, Disposition::Unreadable { .. }));
    assert_every_action_refused(&r, "damaged");
    assert_ok(&turnscope(&db, &["show", &id]));
    assert_cli_refuses_writes(&db, &id);
}

// ---------------------------------------------------------------------------------------------
// Broken trees
// ---------------------------------------------------------------------------------------------

#[test]
fn parent_cycle_is_reported_not_looped_and_blocks_writes() {
    let dir = tempfile::tempdir().unwrap();
    let calls = vec![("call_0".to_string(), "t".to_string())];
    // in -> as -> in: the input's parent is the assistant.
    let entries = vec![
        (
            "in000001".to_string(),
            input_entry("in000001", Some("as000001")),
        ),
        (
            "as000001".to_string(),
            assistant_entry("as000001", "in000001", &calls),
        ),
    ];
    let db = hand_built(dir.path(), &entries, Some("as000001"), None);
    let started = Instant::now();
    let r = report(&db, SUB);
    assert!(started.elapsed() < Duration::from_secs(5));
    let h = r.history.as_ref().unwrap();
    assert!(h
        .damage
        .iter()
        .any(|d| matches!(d, PathDamage::Cycle { .. })));
    assert!(
        matches!(r.plan.disposition, Disposition::Unreadable { .. }),
        "{:?}",
        r.plan
    );
    assert_every_action_refused(&r, "damaged");
    assert_ok(&turnscope(&db, &["show", SUB]));
    assert_cli_refuses_writes(&db, SUB);
}

#[test]
fn dangling_parent_is_marked_and_blocks_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut entries, leaf, request) = batch_entries(3, 1);
    // The assistant's parent names an entry that does not exist; the input is cut off the path.
    entries[1].1 = entries[1]
        .1
        .replace(r#""parentId":"in000001""#, r#""parentId":"gone0001""#);
    let db = hand_built(dir.path(), &entries, Some(&leaf), Some(&request));
    let r = report(&db, SUB);
    let h = r.history.as_ref().unwrap();
    assert!(h
        .damage
        .iter()
        .any(|d| matches!(d, PathDamage::DanglingParent { parent, .. } if parent == "gone0001")));
    let v = r.to_json();
    assert!(v["session"]["pathDamage"][0]
        .as_str()
        .unwrap()
        .contains("gone0001"));
    assert_every_action_refused(&r, "damaged");
    assert_ok(&turnscope(&db, &["show", SUB]));
    assert_cli_refuses_writes(&db, SUB);
}

#[test]
fn missing_leaf_is_marked_and_blocks_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (entries, _, request) = batch_entries(3, 1);
    let db = hand_built(dir.path(), &entries, Some("nowhere1"), Some(&request));
    let r = report(&db, SUB);
    let h = r.history.as_ref().unwrap();
    assert_eq!(h.damage, vec![PathDamage::MissingLeaf("nowhere1".into())]);
    assert!(h.active_path().is_empty());
    assert_every_action_refused(&r, "damaged");
    assert_ok(&turnscope(&db, &["show", SUB, "--json"]));
    assert_cli_refuses_writes(&db, SUB);
}

#[test]
fn duplicate_tool_call_ids_refuse_the_repair() {
    let dir = tempfile::tempdir().unwrap();
    // Two calls share an id; a third is distinct; nothing answered yet.
    let calls: Vec<(String, String)> = [("dup", "a"), ("dup", "b"), ("solo", "c")]
        .iter()
        .map(|(c, n)| (c.to_string(), n.to_string()))
        .collect();
    let entries = vec![
        ("in000001".to_string(), input_entry("in000001", None)),
        (
            "as000001".to_string(),
            assistant_entry("as000001", "in000001", &calls),
        ),
    ];
    let db = hand_built(dir.path(), &entries, Some("as000001"), None);
    let r = report(&db, SUB);
    assert!(r.classification().trailing_partial_batch.is_some());
    let before = snapshot(&db);
    // Which result answers which call is ambiguous: the repair is refused, nothing written.
    let refusal = plan(ActionKind::Repair, &r).unwrap_err();
    assert!(
        refusal.reason.contains("duplicate tool-call ids (dup)"),
        "{refusal:?}"
    );
    assert_fails(
        &turnscope(&db, &["--write", "repair", "--ack-side-effects", SUB, "-y"]),
        3,
        "duplicate",
    );
    assert_eq!(snapshot(&db), before);
    // Shown, and failing it (which names the calls) still works.
    assert_ok(&turnscope(&db, &["show", SUB]));
    assert!(plan(ActionKind::Fail, &r).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Size and depth
// ---------------------------------------------------------------------------------------------

#[test]
fn a_50_mb_entry_loads_in_bounded_time_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut entries, leaf, request) = batch_entries(2, 1);
    let big = "x".repeat(50 * 1024 * 1024);
    let id = entries[2].0.clone();
    entries[2].1 = result_entry(&id, "as000001", "call_0", "tool_0", &big);
    drop(big);
    let db = hand_built(dir.path(), &entries, Some(&leaf), Some(&request));
    let size = std::fs::metadata(&db).unwrap().len();
    assert!(size > 50_000_000, "{size}");
    let started = Instant::now();
    let r = report(&db, SUB);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.bundle.session.as_ref().unwrap().entries.len(), 3);
    drop(r);
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(&db)
        .args(["show", SUB]);
    let started = Instant::now();
    let (o, peak_kb) = run_bounded(cmd, Duration::from_secs(60));
    let took = started.elapsed();
    assert_ok(&o);
    assert!(
        stdout(&o).len() < 1_000_000,
        "show does not dump the 50 MB text: {} bytes",
        o.stdout.len()
    );
    eprintln!(
        "50 MB entry: show took {took:?}, peak RSS {} MB",
        peak_kb / 1024
    );
    assert!(peak_kb < 600 * 1024, "peak RSS {} MB", peak_kb / 1024);

    // Repairing the batch copies the 50 MB result verbatim (rule 6): bounded too.
    let started = Instant::now();
    let r = report(&db, SUB);
    let p = plan(ActionKind::Repair, &r).unwrap();
    SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap();
    let after = report(&db, SUB);
    assert!(after.classification().trailing_partial_batch.is_none());
    assert!(doubled_results(&after).is_empty());
    // The batch is re-appended after its assistant: the verbatim copy is on the active path, the
    // original stays on the abandoned branch.
    let big = |e: &Entry| e.raw.len() > 50 * 1024 * 1024;
    assert_eq!(
        after.following().unwrap().iter().filter(|e| big(e)).count(),
        1
    );
    let all = &after.bundle.session.as_ref().unwrap().entries;
    assert_eq!(all.iter().filter(|e| big(e)).count(), 2);
    let took = started.elapsed();
    eprintln!("50 MB entry: repair (copying it) + reload took {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn a_10000_call_batch_classifies_and_repairs_completely() {
    let dir = tempfile::tempdir().unwrap();
    let (entries, leaf, request) = batch_entries(10_000, 2_500);
    let db = hand_built(dir.path(), &entries, Some(&leaf), Some(&request));
    let started = Instant::now();
    let r = report(&db, SUB);
    let batch = r.classification().trailing_partial_batch.clone().unwrap();
    assert_eq!(batch.tool_calls.len(), 10_000);
    let p = plan(ActionKind::Repair, &r).unwrap();
    SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap();
    let after = report(&db, SUB);
    assert!(after.classification().trailing_partial_batch.is_none());
    assert!(doubled_results(&after).is_empty());
    assert_eq!(after.following().unwrap().len(), 1 + 10_000);
    let took = started.elapsed();
    eprintln!("10,000-call batch: load + classify + plan + apply + reload in {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let o = turnscope(&db, &["show", SUB]);
    assert_ok(&o);
}

fn nested(depth: usize) -> String {
    let mut s = String::with_capacity(depth * 2);
    s.extend(std::iter::repeat_n('[', depth));
    s.extend(std::iter::repeat_n(']', depth));
    s
}

#[test]
fn deeply_nested_json_is_a_malformed_entry_not_a_stack_overflow() {
    // In-process on a small stack: the recursion limit must stop the parser, not the stack.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let deep = nested(100_000);
            let e = Entry::parse(0, "deep0001", &deep);
            match &e.body {
                EntryBody::Malformed { error } => {
                    assert!(error.contains("recursion limit"), "{error}")
                }
                other => panic!("{other:?}"),
            }
            // Inside a real entry's message, too.
            let inner = format!(
                r#"{{"type":"message","id":"deep0002","parentId":null,"message":{{"role":"toolResult","content":{deep}}}}}"#
            );
            assert!(matches!(
                Entry::parse(1, "deep0002", &inner).body,
                EntryBody::Malformed { .. }
            ));
            let h = History::new(vec![e], Some("deep0001".into()));
            assert_eq!(h.load_blockers().len(), 1);
            let following: Vec<&Entry> = h.entries.iter().collect();
            let _ = classify_submission_state(Some(&following), 200_000);
            let _ = h.following(SubmissionKind::Dispatch, "x");
        })
        .unwrap();
    handle.join().expect("no stack overflow");

    // Through the store and the binary: in an entry, the session data and the tool request.
    let dir = tempfile::tempdir().unwrap();
    let (mut entries, leaf, _) = batch_entries(2, 1);
    let deep = nested(100_000);
    entries.push((
        "deep0003".into(),
        format!(
            r#"{{"type":"message","id":"deep0003","parentId":"{leaf}","message":{{"role":"toolResult","content":{deep}}}}}"#
        ),
    ));
    let db = hand_built(dir.path(), &entries, Some("deep0003"), Some(&deep));
    let r = report(&db, SUB);
    assert!(matches!(r.plan.disposition, Disposition::Unreadable { .. }));
    assert!(r.inspection.tool_request_error.is_some());
    assert_every_action_refused(&r, "damaged");
    assert_ok(&turnscope(&db, &["show", SUB]));
    assert_ok(&turnscope(&db, &["show", SUB, "--json"]));
    // In the payload: the runtime's row parser rejects the row (Disposition::Malformed).
    sql(
        &db,
        &format!("UPDATE flue_agent_submissions SET payload = '{deep}'"),
    );
    let r = report(&db, SUB);
    assert!(
        matches!(r.plan.disposition, Disposition::Malformed { .. }),
        "{:?}",
        r.plan.disposition
    );
    assert_ok(&turnscope(&db, &["show", SUB]));
    assert_ok(&turnscope(&db, &["list", "--status", "all", "--json"]));
    sql(&db, &format!("UPDATE flue_sessions SET data = '{deep}'"));
    let r = report(&db, SUB);
    assert!(!r.bundle.session.as_ref().unwrap().data_problems.is_empty());
    assert_ok(&turnscope(&db, &["show", SUB]));
    // The payload is JSON (an array), so the runtime's parser settles the row with its own
    // text before it loads any session; that is the one write turnscope makes here too, and it
    // touches the submission row alone.
    let before = snapshot(&db);
    for action in ["repair", "requeue", "fail"] {
        let o = turnscope(&db, &["--write", action, SUB, "-y", "--reason", "test"]);
        assert_fails(&o, 3, "refused");
        assert_eq!(
            snapshot(&db),
            before,
            "{action} wrote to a damaged database"
        );
    }
    assert_ok(&turnscope(
        &db,
        &["--write", "step", "--ack-side-effects", SUB, "-y"],
    ));
    let c = rusqlite::Connection::open(&db).unwrap();
    let (status, error, data): (String, String, String) = c
        .query_row(
            "SELECT s.status, s.error, f.data FROM flue_agent_submissions s, flue_sessions f WHERE s.submission_id = ?1",
            [SUB],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (status.as_str(), error.as_str()),
        (
            "settled",
            turnscope_core::recovery::reconciler::messages::MALFORMED_PAYLOAD
        )
    );
    assert_eq!(data, deep, "the damaged session was left as it was");
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// A row that is not UTF-8 is read as the runtime's `node:sqlite` reads it (U+FFFD for each bad
/// sequence): named, but not "damaged" in the verdict, which is the one the runtime reaches on
/// that text; every write refused all the same.
#[test]
fn non_utf8_text_is_read_as_the_runtime_reads_it_and_blocks_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (entries, leaf, request) = batch_entries(3, 1);
    let db = hand_built(dir.path(), &entries, Some(&leaf), Some(&request));
    let intact = report(&db, SUB);
    assert_ne!(intact.verdict(), "damaged");
    assert!(intact.bundle.session.as_ref().unwrap().not_utf8.is_empty());
    // Invalid UTF-8 stored as TEXT inside a recorded tool result (which a repair would copy).
    let c = Connection::open(&db).unwrap();
    let data: String = c
        .query_row(
            "SELECT data FROM flue_session_entries WHERE position = 2",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut bytes = data.into_bytes();
    let at = bytes.windows(4).position(|w| w == b"\"ok\"").unwrap() + 1;
    bytes.splice(at..at + 2, [0xff, 0xfe, 0xc3]);
    c.execute(
        "UPDATE flue_session_entries SET data = CAST(?1 AS TEXT) WHERE position = 2",
        [&bytes],
    )
    .unwrap();
    c.execute(
        "UPDATE flue_agent_submissions SET error = CAST(x'6261640aff' AS TEXT), owner_id = CAST(x'c0af' AS TEXT)",
        [],
    )
    .unwrap();
    drop(c);
    let r = report(&db, SUB);
    let s = r.bundle.session.as_ref().unwrap();
    assert!(s.entries[2].raw.contains('\u{FFFD}'));
    assert!(s.data_problems.is_empty(), "{:?}", s.data_problems);
    assert_eq!(s.not_utf8.len(), 1, "{:?}", s.not_utf8);
    assert!(s.not_utf8[0].contains("position 2 is not valid UTF-8"));
    assert!(r.inspection.load_blockers.is_empty());
    assert_eq!(r.verdict(), intact.verdict());
    assert_eq!(r.plan.rule, intact.plan.rule);
    assert_every_action_refused(&r, "UTF-8");
    let show = turnscope(&db, &["show", SUB]);
    assert_ok(&show);
    assert!(
        stdout(&show).contains("damaged: entry"),
        "{}",
        stdout(&show)
    );
    // The listing walks the active path, meets the row and reads the session whole: the same.
    let list = turnscope(&db, &["list", "--status", "all", "--json"]);
    assert_ok(&list);
    let list: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    let row = list["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["submission"]["submissionId"] == SUB)
        .unwrap();
    assert_eq!(row["verdict"], intact.verdict().as_str(), "{row}");
    let health = turnscope(&db, &["health", "--all", "--json"]);
    let health: serde_json::Value = serde_json::from_str(&stdout(&health)).unwrap();
    assert_eq!(health["totals"]["byKind"]["not_utf8"], 1, "{health}");
    assert_cli_refuses_writes(&db, SUB);

    // Non-UTF-8 session data.
    let dir = tempfile::tempdir().unwrap();
    let db = hand_built(dir.path(), &entries, Some(&leaf), Some(&request));
    let mut data = session_data(Some(&leaf)).into_bytes();
    let at = data.windows(9).position(|w| w == b"updatedAt").unwrap() + 12;
    data[at] = 0xff;
    Connection::open(&db)
        .unwrap()
        .execute("UPDATE flue_sessions SET data = CAST(?1 AS TEXT)", [&data])
        .unwrap();
    let r = report(&db, SUB);
    let s = r.bundle.session.as_ref().unwrap();
    assert!(s.data_problems.is_empty(), "{:?}", s.data_problems);
    assert!(s.not_utf8.iter().any(|p| p.contains("session data")));
    assert_eq!(r.verdict(), intact.verdict());
    assert_every_action_refused(&r, "UTF-8");
}

// ---------------------------------------------------------------------------------------------
// Concurrency and the file system
// ---------------------------------------------------------------------------------------------

#[test]
fn a_locked_database_refuses_writes_cleanly_and_reads_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wal.db");
    turnscope_demo::write_demo(&db, NOW).unwrap(); // WAL mode, like the runtime
    let id = stuck_id(&db, REPAIRABLE);
    let r = report(&db, &id);
    let p = plan(ActionKind::Repair, &r).unwrap();
    // Another writer holds the write lock (and keeps holding it).
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    holder
        .execute("CREATE TABLE held_by_other_writer (x)", [])
        .unwrap();
    // Reads work.
    let store = SqliteStore::open(&db).unwrap();
    assert!(!store
        .list_submissions(RowFilter::All, 0)
        .unwrap()
        .is_empty());
    assert!(SubmissionReport::load(&store, &id, None, NOW).is_ok());
    assert_ok(&turnscope(&db, &["list", "--status", "all"]));
    assert_ok(&turnscope(&db, &["show", &id]));
    // The write is refused with a lock error after a bounded wait, and writes nothing.
    let started = Instant::now();
    let err = SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(err, ApplyError::Store(StoreError::Locked { .. })),
        "{err}"
    );
    assert_fails(
        &turnscope(&db, &["--write", "repair", "--ack-side-effects", &id, "-y"]),
        1,
        "locked",
    );
    holder.execute_batch("ROLLBACK").unwrap();
    let after = report(&db, &id);
    assert!(
        after.classification().trailing_partial_batch.is_some()
            || after.inspection.journal_repair.is_some()
    );
    assert!(SqliteStore::open(&db)
        .unwrap()
        .audit_records()
        .unwrap()
        .is_empty());
}

#[test]
fn an_exclusive_lock_in_rollback_mode_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path()); // rollback-journal mode
    let id = stuck_id(&db, REPAIRABLE);
    let holder = Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    holder
        .execute("CREATE TABLE held_by_other_writer (x)", [])
        .unwrap();
    let started = Instant::now();
    let res = SqliteStore::open(&db).and_then(|s| s.list_submissions(RowFilter::All, 0));
    assert!(matches!(res, Err(StoreError::Locked { .. })), "{res:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_fails(&turnscope(&db, &["list"]), 1, "locked");
    assert_fails(
        &turnscope(&db, &["--write", "repair", "--ack-side-effects", &id, "-y"]),
        1,
        "locked",
    );
    holder.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn a_file_deleted_or_replaced_while_open_never_panics_or_writes_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    let store = SqliteStore::open(&db).unwrap();
    let n = store.list_submissions(RowFilter::All, 0).unwrap().len();
    // Deleted: the open handle still reads the old file (or reports an error); nothing panics.
    std::fs::remove_file(&db).unwrap();
    if let Ok(rows) = store.list_submissions(RowFilter::All, 0) {
        assert_eq!(rows.len(), n);
    }
    let _ = SubmissionReport::load(&store, &id, None, NOW);
    assert!(matches!(
        SqliteStore::open(&db),
        Err(StoreError::Missing(_))
    ));
    assert!(SqliteWriter::open(&db).is_err());
    assert!(!db.exists(), "nothing re-created the file");
    drop(store);

    // Replaced by another file (a different journal, then garbage) while a store is open.
    let other_dir = tempfile::tempdir().unwrap();
    let other = blank(other_dir.path());
    let dir2 = tempfile::tempdir().unwrap();
    let db = demo(dir2.path());
    let store = SqliteStore::open(&db).unwrap();
    let r = SubmissionReport::load(&store, &id, Some(200_000), NOW).unwrap();
    std::fs::rename(&other, &db).unwrap();
    let _ = store.list_submissions(RowFilter::All, 0);
    // A plan made on the old file is fenced on the new one: the submission no longer exists.
    let p = plan(ActionKind::Repair, &r).unwrap();
    let before = snapshot(&db);
    let err = SqliteWriter::open(&db)
        .unwrap()
        .apply(&p.fence, &p.changes, &audit(NOW))
        .unwrap_err();
    assert!(matches!(err, ApplyError::Fenced(_)), "{err}");
    assert_eq!(snapshot(&db), before);
    std::fs::write(&db, b"not a database at all, just text that replaced it").unwrap();
    let _ = store.list_submissions(RowFilter::All, 0);
    assert!(SqliteWriter::open(&db).is_err());
    assert_fails(&turnscope(&db, &["list"]), 1, "");
}

#[test]
fn a_wal_file_without_its_database_is_missing_and_not_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    turnscope_demo::write_demo(&db, NOW).unwrap();
    // Keep the database open so the -wal survives, copy it away, then lose the main file.
    let keep = Connection::open(&db).unwrap();
    keep.execute("INSERT INTO flue_meta (key, value) VALUES ('x', 'y')", [])
        .unwrap();
    let wal = dir.path().join("live.db-wal");
    let lone = tempfile::tempdir().unwrap();
    let orphan_db = lone.path().join("live.db");
    let orphan_wal = lone.path().join("live.db-wal");
    std::fs::copy(&wal, &orphan_wal).unwrap();
    drop(keep);
    let wal_before = std::fs::read(&orphan_wal).unwrap();
    assert!(matches!(
        SqliteStore::open(&orphan_db),
        Err(StoreError::Missing(_))
    ));
    assert!(SqliteWriter::open(&orphan_db).is_err());
    assert_fails(&turnscope(&orphan_db, &["list"]), 4, "no database");
    assert_fails(
        &turnscope(
            &orphan_db,
            &["--write", "repair", "--ack-side-effects", "x", "-y"],
        ),
        4,
        "no database",
    );
    assert!(!orphan_db.exists(), "the database was not re-created");
    assert_eq!(
        std::fs::read(&orphan_wal).unwrap(),
        wal_before,
        "the -wal was not touched"
    );
}

#[test]
fn non_utf8_in_the_journal_or_the_submission_row_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    // A tool request that still parses after lossy decoding: its call ids would be wrong.
    let tr: String = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT tool_request_json FROM flue_agent_turn_journals WHERE submission_id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    let mut bytes = tr.into_bytes();
    let at = bytes.windows(5).position(|w| w == b"\"id\":").unwrap() + 6;
    bytes[at] = 0xff;
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_turn_journals SET tool_request_json = CAST(?1 AS TEXT) WHERE submission_id = ?2",
            params![bytes, id],
        )
        .unwrap();
    let r = report(&db, &id);
    assert!(r.inspection.tool_request_error.is_none(), "it still parses");
    assert!(r
        .bundle
        .journal_problem
        .as_deref()
        .unwrap()
        .contains("UTF-8"));
    assert_every_action_refused(&r, "UTF-8");
    assert_ok(&turnscope(&db, &["show", &id]));
    assert_cli_refuses_writes(&db, &id);

    // The submission's attempt id: the fence cannot match it, so nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, "crm-sync");
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET attempt_id = CAST(attempt_id || x'ff' AS TEXT) WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    let before = snapshot(&db);
    let r = report(&db, &id);
    for kind in ALL_ACTIONS {
        if let Ok(p) = plan(kind, &r) {
            if p.is_noop() {
                continue;
            }
            let res = SqliteWriter::open(&db)
                .unwrap()
                .apply(&p.fence, &p.changes, &audit(NOW));
            assert!(res.is_err(), "{} applied", kind.as_str());
        }
    }
    assert_ok(&turnscope(&db, &["show", &id]));
    assert_eq!(snapshot(&db), before);
}

#[test]
fn a_hot_rollback_journal_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    // Leave a hot journal: a writer that died mid-transaction (forgotten, never rolled back).
    let c = Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA cache_size = 1; BEGIN; UPDATE flue_session_entries SET data = data || ' ';",
    )
    .unwrap();
    let hot = dir.path().join("journal.db-journal");
    assert!(hot.exists());
    let copy = tempfile::tempdir().unwrap();
    let db2 = copy.path().join("journal.db");
    std::fs::copy(&db, &db2).unwrap();
    std::fs::copy(&hot, copy.path().join("journal.db-journal")).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
    drop(c);
    let o = turnscope(&db2, &["list", "--status", "all"]);
    assert_fails(&o, 1, "unfinished transaction");
    let journal_before = std::fs::read(copy.path().join("journal.db-journal")).unwrap();
    assert!(matches!(
        SqliteStore::open(&db2),
        Err(StoreError::HotJournal { .. })
    ));
    assert!(SqliteWriter::open(&db2).is_err());
    assert_eq!(
        std::fs::read(copy.path().join("journal.db-journal")).unwrap(),
        journal_before,
        "the hot journal is left for a real writer to roll back"
    );
}

/// Found by the row property test: the runtime's expired predicate is `0 < lease < now`, so a
/// negative lease is never reconciled; turnscope used to plan (and then fence) actions on it.
#[test]
fn a_negative_lease_is_not_expired_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let id = stuck_id(&db, REPAIRABLE);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET lease_expires_at = -5 WHERE submission_id = ?1",
            [&id],
        )
        .unwrap();
    let r = report(&db, &id);
    assert!(!r.row().lease_expired(NOW));
    assert_eq!(r.plan.disposition, Disposition::NoLease);
    assert_every_action_refused(&r, "negative");
    assert_ok(&turnscope(&db, &["show", &id]));
    assert_cli_refuses_writes(&db, &id);
}
