//! The generator's command line: its JSON summary, its determinism, its refusals, and silence on
//! stderr in a pipe.

use std::process::Command;

use serde_json::Value;

fn scale(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_turnscope-scale"))
        .args(args)
        .env("TURNSCOPE_NOW_MS", "1780000000000")
        .output()
        .expect("run turnscope-scale")
}

#[test]
fn writes_a_deterministic_journal_and_summarises_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| -> Value {
        let db = dir.path().join(name);
        let o = scale(&[db.to_str().unwrap(), "--scale", "0.001", "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "no progress in a pipe");
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let a = run("a.db");
    assert_eq!(a["schema"], "turnscope.scale/1");
    assert_eq!(a["now"], 1_780_000_000_000i64);
    assert!(a["submissions"].as_u64().unwrap() >= 200 && a["expired"].as_u64().unwrap() >= 20);
    let b = run("b.db");
    assert_eq!(
        (&a["entries"], &a["whaleSubmissionId"]),
        (&b["entries"], &b["whaleSubmissionId"])
    );
    let text = scale(&[
        dir.path().join("c.db").to_str().unwrap(),
        "--scale",
        "0.001",
    ]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.starts_with("scale journal database (session profile): "),
        "{text}"
    );
    assert!(text.contains("next: turnscope --db "), "{text}");
}

#[test]
fn refuses_a_factor_out_of_range_and_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let o = scale(&[db.to_str().unwrap(), "--scale", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: --scale 0 is out of range\nhint: "),
        "{err}"
    );
    assert!(!db.exists(), "nothing written");
    std::fs::write(&db, b"keep me").unwrap();
    let o = scale(&[db.to_str().unwrap(), "--scale", "0.001"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&db).unwrap(), b"keep me");
}
