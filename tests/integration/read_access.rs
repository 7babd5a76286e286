//! Read access that reads: a journal the operator may read but not write (its file or its
//! directory), with the runtime down, is listed read-only; where SQLite cannot read it without
//! writing beside it, the error says so and how to get a copy; a file of another kind is named as
//! such. Never a damage hint for a permissions problem, never a file created.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use crate::support::{fixtures_dir, gunzip, turnscope_command};

/// Run `turnscope --db DB ARGS` as a user who cannot write `DB`'s directory: uid 65534 when the
/// tests run as root (root writes anywhere), this user otherwise (the directory is made 0555).
fn as_reader(db: &Path, args: &[&str]) -> Output {
    let mut cmd = turnscope_command();
    cmd.env("HOME", "/nonexistent")
        .arg("--db")
        .arg(db)
        .args(args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    cmd.output().expect("run turnscope")
}

/// A directory holding `files` (name, bytes), readable by everyone and writable by nobody.
fn read_only_dir(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sub = dir.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    for (name, bytes) in files {
        let p = sub.join(name);
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn raw(name: &str) -> Vec<u8> {
    gunzip(
        &fixtures_dir()
            .join("flue-beta7/raw")
            .join(format!("{name}.gz")),
    )
}

#[test]
fn a_wal_journal_in_a_directory_the_reader_cannot_write_is_listed() {
    // The runtime's database after a clean stop: WAL mode, everything in the main file.
    let db = gunzip(&fixtures_dir().join("flue-beta7/tool-batch-mid.db.gz"));
    assert_eq!(&db[18..20], &[2, 2], "the fixture is in WAL mode");
    let dir = read_only_dir(&[("j.db", db)]);
    let ro = dir.path().join("ro");
    let o = as_reader(&ro.join("j.db"), &["list", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["submissions"].as_array().map(Vec::len),
        Some(1),
        "{doc}"
    );
    assert!(err.contains("immutable mode"), "the note is said: {err}");
    assert_eq!(err.matches("note: opened read-only").count(), 1, "{err}");
    assert_eq!(names(&ro), ["j.db"], "no -wal or -shm created");
}

#[test]
fn a_wal_with_transactions_and_no_shm_is_refused_with_the_copy_to_make() {
    // The files a SIGKILL left, without the -shm: the -wal holds the journal's transactions.
    let dir = read_only_dir(&[
        ("j.db", raw("tool-batch-mid.db")),
        ("j.db-wal", raw("tool-batch-mid.db-wal")),
    ]);
    let ro = dir.path().join("ro");
    let o = as_reader(&ro.join("j.db"), &["list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("holds transactions, and SQLite must create")
            && err.contains("-shm beside it")
            && err.contains("hint: copy the database with its -wal to a directory you can write"),
        "{err}"
    );
    assert!(
        !err.contains("integrity_check") && !err.contains("damage"),
        "{err}"
    );
    assert_eq!(names(&ro), ["j.db", "j.db-wal"], "nothing created");
}

#[test]
fn a_file_of_another_kind_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(
        &p,
        "db = /var/lib/flue/journal.db\nthis is not a database\n",
    )
    .unwrap();
    let o = turnscope_command()
        .arg("--db")
        .arg(&p)
        .arg("list")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("is not an SQLite database: it starts with \"db = /var/lib/fl\""),
        "{err}"
    );
    assert!(
        err.contains("hint: give --db the journal database the runtime writes"),
        "{err}"
    );
    assert!(
        !err.contains("truncated") && !err.contains("integrity_check"),
        "{err}"
    );
    assert_eq!(names(dir.path()), ["notes.txt"]);
}

#[test]
fn a_database_the_reader_may_not_read_says_so() {
    let db = gunzip(&fixtures_dir().join("flue-beta7/tool-batch-mid.db.gz"));
    let dir = read_only_dir(&[("j.db", db)]);
    let ro = dir.path().join("ro");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Readable by its owner alone (root), or by nobody when the tests do not run as root.
    // SAFETY: geteuid has no preconditions.
    let mode = if unsafe { libc::geteuid() } == 0 {
        0o600
    } else {
        0o000
    };
    std::fs::set_permissions(ro.join("j.db"), std::fs::Permissions::from_mode(mode)).unwrap();
    let o = as_reader(&ro.join("j.db"), &["list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("cannot be read by this user") && err.contains("Permission denied"),
        "{err}"
    );
    assert!(err.contains("hint: ask for read access"), "{err}");
    assert!(!err.contains("integrity_check"), "{err}");
    assert_eq!(names(&ro), ["j.db"]);
}
