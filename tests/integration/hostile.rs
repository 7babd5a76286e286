//! Hostile content: terminal control sequences, bidi overrides, zero-width characters and odd ids
//! in every kind of database text, fed through every TUI screen and the real binary's CLI. Nothing
//! may reach the terminal raw; the text must stay visible as escapes. Also: exports and the log are
//! private (0600), and the read-only store is read-only at the SQLite layer.

use std::path::{Path, PathBuf};
use std::process::Output;

use rusqlite::{params, Connection};
use turnscope_store::SqliteStore;
use turnscope_tui::harness::{write_synthetic_journal, Harness, HarnessOptions, SYNTH_SUBMISSION};

/// The clock of the synthetic database.
const NOW: i64 = 1_767_604_800_000;

/// Every class at once: CSI (SGR, clear screen), OSC 52 (clipboard write), OSC 8 (hyperlink), BEL,
/// CR, BS, NUL, C1 (8-bit CSI U+009B, NEL U+0085), bidi override and isolate, zero-width space,
/// BOM and DEL.
const HOSTILE: &str = "A\x1b[31mRED\x1b[2J\x1b]52;c;aGk=\x07\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\\rOVER\x08\x00\u{9b}2J\u{85}\u{202e}evil\u{2066}\u{200b}\u{feff}\x7fZ";

/// The same without NUL (command-line arguments cannot carry it).
fn hostile_arg() -> String {
    HOSTILE.replace('\0', "")
}

/// A submission id with SQL-looking characters and the hostile text (looked up by its prefix).
fn hostile_submission_id() -> String {
    format!("5e5e5e5e-'q\"%_{HOSTILE}")
}

/// `s` as it appears inside a JSON string (without the quotes).
fn json_body(s: &str) -> String {
    let j = serde_json::to_string(s).unwrap();
    j[1..j.len() - 1].to_string()
}

/// Characters that must never reach a terminal raw (newline and tab are layout).
fn is_raw_hostile(c: char) -> bool {
    c != '\n' && c != '\t' && turnscope::cli::is_hostile_char(c)
}

/// The synthetic journal with hostile text in entry text, tool names, tool-call ids, entry ids,
/// model names, error messages, owner and attempt ids, the session key (so the instance id), the
/// submission id and the journal's `tool_request_json` and checkpoint leaf. Every statement binds
/// its values.
fn hostile_db(dir: &Path, name: &str) -> PathBuf {
    let db = dir.join(format!("{name}.db"));
    write_synthetic_journal(&db, 60, NOW).unwrap();
    let conn = Connection::open(&db).unwrap();
    let hj = json_body(HOSTILE);
    let sub = hostile_submission_id();
    let sub_j = json_body(&sub);
    // Text inside JSON documents.
    for (from, to) in [
        ("Working on it.".to_string(), format!("Working{hj}")),
        ("result of ".to_string(), format!("result{hj} of ")),
        ("get_weather".to_string(), format!("get_weather{hj}")),
        ("toolu_".to_string(), format!("toolu{hj}_")),
        ("claude-haiku-4-5".to_string(), format!("claude{hj}")),
        ("question ".to_string(), format!("question{hj} ")),
        ("\"1000".to_string(), format!("\"1000{hj}")),
    ] {
        conn.execute(
            "UPDATE flue_session_entries SET data = replace(data, ?1, ?2)",
            params![from, to],
        )
        .unwrap();
        conn.execute(
            "UPDATE flue_sessions SET data = replace(data, ?1, ?2)",
            params![from, to],
        )
        .unwrap();
        conn.execute(
            "UPDATE flue_agent_turn_journals SET tool_request_json = replace(tool_request_json, ?1, ?2)",
            params![from, to],
        )
        .unwrap();
    }
    // Entry ids (columns hold the raw text; JSON holds it escaped, done above).
    conn.execute(
        "UPDATE flue_session_entries SET entry_id = replace(entry_id, '1000', ?1)",
        params![format!("1000{HOSTILE}")],
    )
    .unwrap();
    conn.execute(
        "UPDATE flue_agent_turn_journals SET checkpoint_leaf_id = replace(checkpoint_leaf_id, '1000', ?1)",
        params![format!("1000{HOSTILE}")],
    )
    .unwrap();
    // The submission id.
    for table in ["flue_agent_submissions", "flue_agent_turn_journals"] {
        conn.execute(
            &format!("UPDATE {table} SET submission_id = ?1 WHERE submission_id = ?2"),
            params![sub, SYNTH_SUBMISSION],
        )
        .unwrap();
    }
    conn.execute(
        "UPDATE flue_agent_submissions SET payload = replace(payload, ?1, ?2)",
        params![SYNTH_SUBMISSION, sub_j],
    )
    .unwrap();
    conn.execute(
        "UPDATE flue_session_entries SET data = replace(data, ?1, ?2)",
        params![SYNTH_SUBMISSION, sub_j],
    )
    .unwrap();
    // The instance id, inside the session key (a JSON array) and every JSON that names it.
    let inst = format!("synthetic-1{hj}");
    for (table, col) in [
        ("flue_sessions", "id"),
        ("flue_session_entries", "session_id"),
        ("flue_session_entries", "data"),
        ("flue_agent_submissions", "session_key"),
        ("flue_agent_submissions", "payload"),
        ("flue_agent_turn_journals", "session_key"),
    ] {
        conn.execute(
            &format!("UPDATE {table} SET {col} = replace({col}, 'synthetic-1', ?1)"),
            params![inst],
        )
        .unwrap();
    }
    // Plain columns.
    conn.execute(
        "UPDATE flue_agent_submissions SET error = ?1, owner_id = ?2, attempt_id = ?3",
        params![
            format!("provider error: {HOSTILE}"),
            format!("owner-{HOSTILE}"),
            format!("att-{HOSTILE}")
        ],
    )
    .unwrap();
    conn.execute(
        "UPDATE flue_agent_turn_journals SET attempt_id = ?1",
        params![format!("att-{HOSTILE}")],
    )
    .unwrap();
    db
}

fn assert_clean_text(what: &str, text: &str) {
    let bad: Vec<String> = text
        .chars()
        .filter(|c| is_raw_hostile(*c))
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in:\n{text}");
}

/// Every cell of the last frame, symbol by symbol (not only the text `screen()` joins).
fn assert_clean_frame(what: &str, h: &Harness) {
    let buf = h.terminal.backend().buffer();
    for cell in &buf.content {
        assert!(
            !cell.symbol().chars().any(is_raw_hostile),
            "{what}: cell {:?} holds a raw hostile character\n{}",
            cell.symbol(),
            h.screen()
        );
    }
    assert_clean_text(what, &h.screen());
}

fn opts(size: (u16, u16), dir: &Path, write: bool) -> HarnessOptions {
    let mut o = HarnessOptions::new(NOW);
    o.width = size.0;
    o.height = size.1;
    o.display_name = "hostile.db".into();
    o.export_dir = dir.to_path_buf();
    o.context_window = Some(200_000);
    o.read_only = !write;
    o.operator = format!("op-{HOSTILE}");
    o
}

/// Drive every screen: list, preview, filter, sessions, the tree and detail of a submission and of
/// its session (every node, raw and pretty), help, the write previews and the reason dialog, the
/// audit pane after an applied repair. Returns every frame's text, by step.
fn drive_every_screen(h: &mut Harness) -> Vec<(String, String)> {
    let mut frames = Vec::new();
    let step = |h: &mut Harness, keys: &str, frames: &mut Vec<(String, String)>| {
        if !keys.is_empty() {
            h.press(keys);
        }
        let screen = h.render();
        assert_clean_frame(keys, h);
        frames.push((keys.to_string(), screen));
    };
    step(h, "", &mut frames);
    step(h, "2", &mut frames);
    step(h, "?", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "/att", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "<Enter>", &mut frames);
    step(h, "v", &mut frames);
    step(h, "W", &mut frames);
    step(h, "<Esc>", &mut frames);
    // Walk the whole tree, expanded, pretty and raw.
    step(h, "Z", &mut frames);
    let rows = h.tree_row_count();
    step(h, "g", &mut frames);
    for _ in 0..rows {
        step(h, "j", &mut frames);
    }
    step(h, "b", &mut frames);
    step(h, "g", &mut frames);
    for _ in 0..rows {
        step(h, "j", &mut frames);
    }
    step(h, "b", &mut frames);
    step(h, "/evil<Enter>", &mut frames);
    step(h, "n", &mut frames);
    step(h, "<Esc><Esc>", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "s", &mut frames);
    step(h, "<Enter>", &mut frames);
    step(h, "Z", &mut frames);
    step(h, "G", &mut frames);
    step(h, "<Esc><Esc>", &mut frames);
    step(h, "s", &mut frames);
    // Write dialogs (only in write mode do they open; in read-only mode they explain).
    step(h, "F", &mut frames);
    step(h, "why<Esc>", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "R", &mut frames);
    step(h, "<Enter>", &mut frames);
    step(h, "A", &mut frames);
    // The second confirmation: the calls the repair answers `interrupted` (hostile tool names
    // and arguments among them), acknowledged.
    step(h, "A", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "a", &mut frames);
    step(h, "<Enter>", &mut frames);
    step(h, "<Esc>", &mut frames);
    step(h, "e", &mut frames);
    // Copy (OSC 52) the selected ids: the clipboard never gets a hostile character either.
    step(h, "<Esc>s<Enter>jjjy", &mut frames);
    frames
}

#[test]
fn every_tui_screen_shows_hostile_text_escaped_and_never_raw() {
    let dir = tempfile::tempdir().unwrap();
    for write in [false, true] {
        for size in [(80u16, 24u16), (160, 48)] {
            let db = hostile_db(dir.path(), &format!("tui-{write}-{}x{}", size.0, size.1));
            let mut h = Harness::open(&db, opts(size, dir.path(), write)).unwrap();
            let frames = drive_every_screen(&mut h);
            let all: String = frames.iter().map(|(_, s)| s.as_str()).collect();
            assert!(!h.copied.is_empty(), "nothing was copied");
            for c in &h.copied {
                assert_clean_text("clipboard", c);
            }
            assert!(
                h.copied.iter().any(|c| c.contains("\\x1b[31mRED")),
                "{:?}",
                h.copied
            );
            // The screens were reached: help, sessions, the tree, the write preview (or refusal).
            for screen in [" help · j/k scroll", "SESSION ", "history ·", "VERDICT "] {
                assert!(
                    all.contains(screen),
                    "{screen} never shown ({write}, {size:?})"
                );
            }
            // The text is there, as visible escapes.
            for visible in [
                "\\x1b[31mRED",
                "\\x1b]52;c;",
                "\\x0dOVER\\x08",
                "\\u{202e}evil",
            ] {
                assert!(
                    all.contains(visible),
                    "{visible} never shown ({write}, {size:?})"
                );
            }
            if write && size == (160, 48) {
                // The repair was applied and audited under the hostile operator name.
                assert_eq!(h.audit_records().len(), 1, "{all}");
                assert!(all.contains("op-A\\x1b[31mRED"), "audit pane:\n{all}");
            }
            if !write && size == (160, 48) {
                let (_, detail) = frames
                    .iter()
                    .find(|(k, s)| k == "v" && s.contains("SUBMISSION"))
                    .unwrap_or_else(|| {
                        let v = frames
                            .iter()
                            .find(|(k, _)| k == "v")
                            .map(|(_, s)| s.clone());
                        panic!("the verdict document: {}", v.unwrap_or_default())
                    });
                let mut s = insta::Settings::clone_current();
                s.set_prepend_module_to_snapshot(false);
                s.set_snapshot_path("snapshots");
                s.bind(|| insta::assert_snapshot!("hostile_submission_detail", detail));
            }
        }
    }
}

fn run(db: &Path, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .env_remove("TURNSCOPE_LOG")
        .output()
        .unwrap()
}

/// No byte of `out` may act on a terminal: no ESC, BEL, CR, BS, NUL, DEL, no C1 (raw or as UTF-8),
/// no bidi or zero-width character; and it is UTF-8.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        assert!(
            !matches!(b, 0x00..=0x08 | 0x0b..=0x1f | 0x7f),
            "{what}: raw byte {b:#04x} at {i}: {}",
            String::from_utf8_lossy(bytes)
        );
    }
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    assert_clean_text(what, text);
    assert!(!bytes
        .windows(2)
        .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1])));
}

#[test]
fn cli_output_never_carries_hostile_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = hostile_db(dir.path(), "cli");
    let reason = hostile_arg();
    let op = format!("op-{}", hostile_arg());
    let cases: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "--status", "all"],
        vec!["list", "--json"],
        vec!["show", "5e5e5e5e"],
        vec!["show", "5e5e5e5e", "--json"],
        vec!["classify", "5e5e5e5e"],
        vec!["classify", "5e5e5e5e", "--json"],
        vec!["next-request", "5e5e5e5e"],
        vec!["next-request", "5e5e5e5e", "--json"],
        vec!["repair", "5e5e5e5e", "--dry-run"],
        vec!["repair", "5e5e5e5e", "--dry-run", "--json"],
        vec!["step", "5e5e5e5e", "--dry-run"],
        vec!["fail", "5e5e5e5e", "--dry-run", "--reason", &reason],
        vec!["audit"],
        // Errors: a query that matches nothing, a write without --write.
        vec!["show", "nomatch\x1b[2J"],
        vec!["repair", "5e5e5e5e"],
        // Applies (audited under a hostile operator and reason), then the audit trail.
        vec![
            "--write",
            "--operator",
            &op,
            "fail",
            "5e5e5e5e",
            "--yes",
            "--reason",
            &reason,
        ],
        vec!["audit"],
        vec!["audit", "--json"],
        vec!["show", "5e5e5e5e"],
    ];
    let mut seen = String::new();
    for args in &cases {
        let out = run(&db, args);
        let what = format!("turnscope {args:?}");
        assert_terminal_safe(&format!("{what} stdout"), &out.stdout);
        assert_terminal_safe(&format!("{what} stderr"), &out.stderr);
        seen.push_str(&String::from_utf8_lossy(&out.stdout));
        seen.push_str(&String::from_utf8_lossy(&out.stderr));
        if args.contains(&"--json") {
            // JSON stays valid, and its escapes decode to the stored text.
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}"));
            let text = v.to_string();
            if args[0] == "show" {
                assert_eq!(
                    v["submission"]["error"].as_str(),
                    Some(format!("provider error: {HOSTILE}").as_str()),
                    "{what}: {text}"
                );
            }
        }
    }
    for visible in [
        "\\x1b[31mRED",
        "\\x1b]8;;http://evil.example/",
        "\\x0dOVER\\x08\\x00\\x9b2J\\x85\\u{202e}evil",
        "op-A\\x1b[31mRED",
    ] {
        assert!(seen.contains(visible), "{visible} never shown:\n{seen}");
    }
}

#[test]
fn ids_with_quotes_wildcards_and_10kb_work_as_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ids.db");
    write_synthetic_journal(&db, 40, NOW).unwrap();
    let long = format!("5e5e'\"%_\\{}", "y".repeat(10 * 1024));
    let conn = Connection::open(&db).unwrap();
    for table in ["flue_agent_submissions", "flue_agent_turn_journals"] {
        conn.execute(
            &format!("UPDATE {table} SET submission_id = ?1"),
            params![long],
        )
        .unwrap();
    }
    drop(conn);
    let ok = run(&db, &["show", "5e5e'\"%_"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let stdout = String::from_utf8(ok.stdout).unwrap();
    assert!(stdout.contains(&long), "the whole 10 KB id is shown");
    let full = run(&db, &["show", &long, "--json"]);
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    assert_eq!(
        v["submission"]["submissionId"].as_str(),
        Some(long.as_str())
    );
    // `%` and `_` are literal characters, not LIKE wildcards; a quote is not SQL.
    for not_a_prefix in [
        "5e5e%",
        "5e5e'\"_",
        "5e5e'\"%y",
        "5e5e' OR '1'='1",
        "5e5e'\"%_\\z",
    ] {
        let out = run(&db, &["show", not_a_prefix]);
        assert_eq!(
            out.status.code(),
            Some(turnscope::cli::exit::NOT_FOUND),
            "{not_a_prefix} matched: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_terminal_safe("not found", &out.stderr);
    }
}

#[cfg(unix)]
#[test]
fn exports_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = hostile_db(dir.path(), "export");
    let out = dir.path().join("exports");
    std::fs::create_dir(&out).unwrap();
    let mut h = Harness::open(&db, opts((160, 48), &out, false)).unwrap();
    // The path popup (its title names the target, its path the instance): terminal-safe too.
    h.press("e");
    h.render();
    assert_clean_frame("export popup", &h);
    h.press("<Enter>");
    let files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{}", h.render());
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "export mode {mode:o}");
    // The status line names the file, terminal-safe.
    assert_clean_frame("export", &h);
    // The export itself is JSON that keeps the stored text exactly.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(v.to_string().contains("provider error: A\\u001b[31mRED"));
}

#[test]
fn read_only_store_refuses_writes_at_the_sqlite_layer() {
    let dir = tempfile::tempdir().unwrap();
    let db = hostile_db(dir.path(), "ro");
    let store = SqliteStore::open(&db).unwrap();
    let err = store
        .connection()
        .execute("UPDATE flue_meta SET value = value", [])
        .expect_err("a write through the read-only store must fail");
    match &err {
        rusqlite::Error::SqliteFailure(e, _) => {
            assert_eq!(e.code, rusqlite::ErrorCode::ReadOnly, "{err}")
        }
        other => panic!("not a SQLite read-only error: {other}"),
    }
    // Nothing else gets through either: DDL, and a pragma that would write.
    assert!(store
        .connection()
        .execute_batch("CREATE TABLE turnscope_probe (x)")
        .is_err());
    assert!(store
        .connection()
        .execute(
            "INSERT INTO flue_meta (key, value) VALUES (?1, ?2)",
            params!["probe", "x"]
        )
        .is_err());
}
