//! PostgreSQL only (skipped with a note without `TURNSCOPE_TEST_PG`): write access is checked when
//! the writer opens, before any preview: a role without write privilege, and a server that makes
//! every transaction read-only, each get one `error:` line and their own hint.

use std::process::Output;

use turnscope_store::{DbTarget, RowFilter};

use crate::backends::{admin_client, pg_admin, Kind, TestDb};

fn demo_pg(dir: &std::path::Path) -> TestDb {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, turnscope_store::clock::now_ms()).unwrap();
    TestDb::from_sqlite(Kind::Postgres, &path)
}

fn run(url: &str, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_NOW_MS")
        .env("TURNSCOPE_OPERATOR", "pg-access@test")
        .arg("--db")
        .arg(url)
        .args(args)
        .output()
        .unwrap()
}

fn one_error(o: &Output, needle: &str, hint: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one error and one hint: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(
        lines[1].starts_with("hint: ") && lines[1].contains(hint),
        "{err}"
    );
    assert!(
        o.stdout.is_empty(),
        "no preview: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_a_role_without_write_privilege_and_a_read_only_server_are_refused_before_the_preview() {
    let admin = pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let db = demo_pg(dir.path());
    let DbTarget::Postgres(target) = &db.target else {
        unreachable!()
    };
    let id = db
        .open()
        .list_submissions(RowFilter::Expired, turnscope_store::clock::now_ms())
        .unwrap()
        .into_iter()
        .find(|r| r.instance_id().as_deref() == Some("travel-desk"))
        .unwrap()
        .submission_id;
    let role = format!("ts_reader_{}", std::process::id());
    let mut c = admin_client(target);
    c.batch_execute(&format!(
        "CREATE ROLE {role} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};"
    ))
    .unwrap();
    let reader = turnscope_store::postgres::PgTarget {
        user: role.clone(),
        password: None,
        ..target.clone()
    };
    let o = run(
        &reader.url(),
        &["--write", "repair", &id, "-y", "--ack-side-effects"],
    );
    one_error(
        &o,
        "this PostgreSQL role cannot write the journal tables",
        "GRANT SELECT, INSERT, UPDATE, DELETE",
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("lacks INSERT on flue_session_entries"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Reading with the same role works.
    let o = run(&reader.url(), &["show", &id]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    c.batch_execute(&format!(
        "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}; DROP OWNED BY {role}; DROP ROLE {role};"
    ))
    .unwrap();

    // A server that makes every transaction read-only (as on a standby or a read replica setup).
    c.batch_execute(&format!(
        "ALTER DATABASE {} SET default_transaction_read_only = on",
        target.dbname
    ))
    .unwrap();
    let o = run(
        &target.url(),
        &["--write", "repair", &id, "-y", "--ack-side-effects"],
    );
    one_error(
        &o,
        "the PostgreSQL server makes every transaction read-only (default_transaction_read_only = on)",
        "connect to the primary",
    );
    c.batch_execute(&format!(
        "ALTER DATABASE {} RESET default_transaction_read_only",
        target.dbname
    ))
    .unwrap();
    drop(c);
    let _ = admin;
    // Nothing was written by either attempt.
    assert!(db.open().audit_records().unwrap().is_empty());
}
