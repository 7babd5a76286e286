//! `e` on a 2.x journal, headless (`Flue2Harness`): the path popup prefilled with a name not
//! taken yet in the export directory, the file written byte for byte as `turnscope export ID`
//! (`--redact` after tab) prints it at the same clock, an existing file refused in place and
//! never replaced; read-only too (an export writes nothing to the journal).

use std::path::Path;

use turnscope_engine::flue2::Flue2Options;
use turnscope_tui::flue2::harness::Flue2Harness;
use turnscope_tui::harness::HarnessOptions;

use crate::support::{turnscope_ok, unpack_db};

fn open(db: &Path, now: i64, export_dir: &Path) -> Flue2Harness {
    let mut o = HarnessOptions::new(now);
    o.width = 160;
    o.height = 45;
    o.read_only = true;
    o.export_dir = export_dir.to_path_buf();
    Flue2Harness::open(db, Flue2Options::for_release("2.1.0", 0).unwrap(), o).unwrap()
}

#[test]
fn e_writes_what_turnscope_export_prints_and_never_replaces_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let out = dir.path().join("exports");
    std::fs::create_dir(&out).unwrap();
    let now = super::flue2::after_last_lease(&db);
    let mut h = open(&db, now, &out);
    h.press("2");
    let id = h.app.shown_ids()[1].clone();
    h.press("gj<Enter>");
    assert_eq!(h.app.opened(), Some(id.as_str()));
    // The opened submission's instance, to the default name in the export directory.
    h.press("e");
    let first = h.app.export_popup().expect("the path popup");
    assert!(first.starts_with(&out.display().to_string()), "{first}");
    // Named after the agent instance (the 2.x session key's second part).
    let instance = h.app.shown_rows()[1].instance_id.clone().unwrap();
    assert!(
        first.contains(&format!("turnscope-export-{instance}-")),
        "{first}"
    );
    assert!(h.render().contains("Export"), "{}", h.render());
    h.press("<Enter>");
    assert!(h.app.export_popup().is_none());
    let status = h.app.status_text().unwrap_or_default();
    assert!(status.starts_with("exported to "), "{status}");
    let cli = turnscope_ok(&db, Some(now), &["export", &id]);
    assert_eq!(
        std::fs::read(&first).unwrap(),
        cli,
        "as turnscope export prints it"
    );
    // Again: the next name not taken; typing the first one is refused in place.
    h.press("e");
    let second = h.app.export_popup().unwrap();
    assert_ne!(second, first);
    h.press("<C-u>");
    h.press(&first);
    h.press("<Enter>");
    assert_eq!(h.app.export_popup().as_deref(), Some(first.as_str()));
    assert!(h.render().contains("exists"), "{}", h.render());
    assert_eq!(std::fs::read(&first).unwrap(), cli, "not replaced");
    // Redacted (tab), to the second name: as `export ID --redact`.
    h.press("<C-u>");
    h.press(&second);
    h.press("<Tab><Enter>");
    let redacted = turnscope_ok(&db, Some(now), &["export", &id, "--redact"]);
    assert_ne!(redacted, cli);
    assert_eq!(std::fs::read(&second).unwrap(), redacted);
    // esc cancels: nothing written.
    h.press("e");
    let third = h.app.export_popup().unwrap();
    h.press("<Esc>");
    assert!(h.app.export_popup().is_none());
    assert!(!Path::new(&third).exists());
}
