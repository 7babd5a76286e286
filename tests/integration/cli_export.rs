//! `turnscope export`: the same `turnscope.export/1` document the TUI's `e` writes (on SQLite and
//! PostgreSQL), on stdout or into a file that is never silently replaced, and one-line errors.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use turnscope_store::{DbTarget, JournalStore, RowFilter, SqliteStore};
use turnscope_tui::harness::{Harness, HarnessOptions};

use crate::backends::{kinds, TestDb};
use crate::support::{turnscope_command, unpack_fixture};

/// What `--db` takes for `target` (a PostgreSQL URL with whatever password it has).
pub fn db_arg(target: &DbTarget) -> String {
    match target {
        DbTarget::Sqlite(p) | DbTarget::Export(p) => p.display().to_string(),
        DbTarget::Postgres(t) => t.url(),
    }
}

/// "Now" for a crash fixture: just after its last lease expired.
fn fixture_now(db: &Path) -> i64 {
    let store = SqliteStore::open(db).unwrap();
    let rows = store.list_submissions(RowFilter::All, 0).unwrap();
    rows.iter().map(|r| r.lease_expires_at).max().unwrap_or(0) + 1
}

fn export(db: &str, now: i64, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .args(["--db", db, "--context-window", "200000", "export"])
        .args(args)
        .output()
        .unwrap()
}

fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error line and one hint line: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(o.stdout.is_empty(), "nothing on stdout on error");
}

/// The file the TUI's `e` wrote for its selected row.
fn tui_export(target: &DbTarget, now: i64, dir: &Path) -> PathBuf {
    let mut o = HarnessOptions::new(now);
    o.export_dir = dir.to_path_buf();
    o.context_window = Some(200_000);
    let mut h = Harness::open_target(target, o).unwrap();
    // `e` asks where, prefilled with the default name in the export directory: ⏎ takes it.
    h.press("e<Enter>");
    let status = h.status_text().unwrap();
    PathBuf::from(status.strip_prefix("exported to ").expect(&status))
}

#[test]
fn cli_export_is_the_tui_export_on_every_backend() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = unpack_fixture(dir.path(), "tool-results-partial");
        let now = fixture_now(&sqlite);
        let db = TestDb::from_sqlite(kind, &sqlite);
        let tui_dir = dir.path().join("tui");
        std::fs::create_dir(&tui_dir).unwrap();
        let tui_path = tui_export(&db.target, now, &tui_dir);
        let tui_text = std::fs::read_to_string(&tui_path).unwrap();
        let tui: Value = serde_json::from_str(&tui_text).unwrap();
        let id = tui["selectedSubmission"].as_str().unwrap().to_string();
        assert_eq!(tui["submissions"][0]["plan"]["rule"], 5, "{kind:?}");

        // stdout, by a prefix of the id: the same document.
        let o = export(&db_arg(&db.target), now, &[&id[..8]]);
        assert!(
            o.status.success(),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(cli, tui, "{kind:?}");
        // The pinned clock is noted on stderr, beside the document.
        assert!(String::from_utf8_lossy(&o.stderr).contains("clock: pinned"));

        // A file: the same bytes the TUI wrote, and private.
        let file = dir.path().join("cli.json");
        let o = export(
            &db_arg(&db.target),
            now,
            &[&id, "-o", file.to_str().unwrap()],
        );
        assert!(
            o.status.success(),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            tui_text,
            "{kind:?}"
        );
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            said.starts_with(&format!("exported submission {id} (session "))
                && said.contains("4 entries, 1 submission) to ")
                && said.contains("cli.json"),
            "{said}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        // Opened again with --db: `show --json` says what it says on the backend it came from.
        let show = |db: &str| -> Value {
            crate::support::turnscope_json(
                db,
                Some(now),
                &["--context-window", "200000", "show", &id, "--json"],
            )
        };
        assert_eq!(
            show(file.to_str().unwrap()),
            show(&db_arg(&db.target)),
            "{kind:?}: the export opened again"
        );
    }
}

#[test]
fn cli_export_document_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let now = fixture_now(&db);
    let o = export(db.to_str().unwrap(), now, &["ec6474"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).replace(dir.path().to_str().unwrap(), "<tmp>");
    insta::assert_snapshot!("cli_export_tool_results_partial", text);
}

#[test]
fn cli_export_refuses_to_replace_a_file_or_write_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let now = fixture_now(&db);
    let db = db.to_str().unwrap();
    let file = dir.path().join("kept.json");
    std::fs::write(&file, "precious").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let f = file.to_str().unwrap();
    let o = export(db, now, &["ec6474", "-o", f]);
    assert_fails(&o, 2, "kept.json already exists");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");

    // --force replaces it whole, and the replacement is private like any export.
    let o = export(db, now, &["ec6474", "-o", f, "--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["schema"], "turnscope.export/1");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    // No staging file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");

    let o = export(db, now, &["ec6474", "-o", dir.path().to_str().unwrap()]);
    assert_fails(&o, 2, "is a directory");
    assert!(String::from_utf8_lossy(&o.stderr).contains("export.json"));

    let missing = dir.path().join("no/such/dir/x.json");
    let o = export(db, now, &["ec6474", "-o", missing.to_str().unwrap()]);
    assert_fails(&o, 1, "could not write");
    assert!(!missing.exists());

    // No such submission: nothing written.
    let fresh = dir.path().join("fresh.json");
    let o = export(db, now, &["zzzz", "-o", fresh.to_str().unwrap()]);
    assert_fails(&o, 4, "zzzz");
    assert!(!fresh.exists());

    // --force means nothing without a file.
    let o = export(db, now, &["ec6474", "--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
#[cfg(target_os = "linux")]
fn tui_export_popup_asks_for_the_path_redacts_and_says_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_fixture(dir.path(), "tool-results-partial");
    let now = fixture_now(&db);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut o = HarnessOptions::new(now);
    o.export_dir = out.clone();
    o.context_window = Some(200_000);
    let mut h = Harness::open(&db, o).unwrap();
    h.press("e");
    let screen = h.render();
    assert!(screen.contains("Export submission"), "{screen}");
    assert!(screen.contains("turnscope-export-"), "{screen}");
    assert!(screen.contains("[ ] redact"), "{screen}");
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "nothing written before ⏎"
    );

    // A place nobody can create a file in: one status line with the error and the fix.
    h.press("<C-u>/proc/self/turnscope-x.json<Enter>");
    let status = h.status_text().unwrap();
    assert!(
        status.starts_with("export failed: could not create /proc/self/turnscope-x.json")
            && status.contains("press e again"),
        "{status}"
    );
    assert!(!status.contains('\n'));

    // A path of our own, redacted (tab).
    let path = out.join("mine.json");
    h.press("e<C-u>");
    h.press(&path.display().to_string());
    h.press("<Tab>");
    assert!(h.render().contains("[x] redact"));
    h.press("<Enter>");
    assert_eq!(
        h.status_text().unwrap(),
        format!("exported to {}", path.display())
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        doc["redaction"]["rules"],
        serde_json::json!(["args", "results", "text"])
    );

    // The same path again: refused in the popup, the file kept; esc cancels.
    let before = std::fs::read_to_string(&path).unwrap();
    h.press("e<C-u>");
    h.press(&path.display().to_string());
    h.press("<Enter>");
    assert!(h
        .render()
        .contains("exists: an export never replaces a file"));
    h.press("<Esc>");
    assert_eq!(h.status_text().as_deref(), Some("export cancelled"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}
