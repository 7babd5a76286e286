//! PostgreSQL only (skipped with a note without `TURNSCOPE_TEST_PG`): read-only connections,
//! one clear error per way to fail, passwords never shown, the CLI and the TUI end to end, and
//! the runtime's fixtures classifying identically after conversion.

use serde_json::Value;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_engine::report::{Previews, SubmissionReport};
use turnscope_store as store;
use turnscope_store::postgres::connect::connect;
use turnscope_store::postgres::PgTarget;
use turnscope_store::{DbTarget, JournalStore, PgFailure, SqliteStore, StoreError};
use turnscope_tui::harness::{Harness, HarnessOptions};

use crate::backends::{admin_client, fresh_pg_database, pg_admin, Kind, TestDb};
use crate::support::{manifest, turnscope_command, unpack_fixture};

const DEMO_NOW: i64 = 1_796_018_889_175;
const SECRET: &str = "hunter2-Sekr1t";

fn demo_db(dir: &std::path::Path) -> TestDb {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    TestDb::from_sqlite(Kind::Postgres, &path)
}

fn pg(db: &TestDb) -> &PgTarget {
    match &db.target {
        DbTarget::Postgres(t) => t,
        DbTarget::Sqlite(_) | DbTarget::Export(_) => unreachable!(),
    }
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_read_connections_refuse_writes_in_postgresql_itself() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut c = connect(pg(&db), true).unwrap();
    let err = c
        .execute("UPDATE flue_meta SET value = '3'", &[])
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION),
        "{err}"
    );
    // The store opens the same kind of connection and reads fine.
    let s = store::open(&db.target).unwrap();
    let counts = s.status_counts().unwrap();
    assert!(!counts.is_empty());
    // A dropped connection (server restart, failover) is opened again on the next read.
    let admin = pg_admin();
    admin_client(&admin)
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&pg(&db).dbname],
        )
        .unwrap();
    let _ = s.status_counts(); // the read that notices may fail
    assert_eq!(s.status_counts().unwrap(), counts);
}

type Expect = fn(&StoreError) -> bool;

fn open_err(url: &str) -> StoreError {
    match store::open(&DbTarget::parse(url).unwrap()) {
        Ok(_) => panic!("{url}: opened"),
        Err(e) => e,
    }
}

fn assert_secret_free(e: &StoreError) {
    let text = format!("{e} {} {e:?}", e.hint());
    assert!(!text.contains(SECRET), "password shown: {text}");
    assert!(!text.contains('\n'), "one line: {text}");
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_each_way_to_fail_has_its_own_error_and_never_shows_the_password() {
    let admin = pg_admin();
    let host = format!("{}:{}", admin.host, admin.port);
    let mut cases: Vec<(String, Expect)> = vec![
        (
            format!("postgres://u:{SECRET}@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"),
            |e| {
                matches!(
                    e,
                    StoreError::PgConnect {
                        why: PgFailure::Refused,
                        ..
                    }
                )
            },
        ),
        (
            format!("postgres://nobody_here:{SECRET}@{host}/postgres?sslmode=disable"),
            |e| {
                matches!(
                    e,
                    StoreError::PgConnect {
                        why: PgFailure::Auth,
                        ..
                    }
                )
            },
        ),
        (
            format!(
                "postgres://{}:{SECRET}@{host}/no_such_db_here?sslmode=disable",
                admin.user
            ),
            |e| {
                matches!(
                    e,
                    StoreError::PgConnect {
                        why: PgFailure::NoDatabase,
                        ..
                    }
                )
            },
        ),
        (
            format!(
                "postgres://{}:{SECRET}@{host}/postgres?sslmode=verify-full",
                admin.user
            ),
            |e| {
                matches!(
                    e,
                    StoreError::PgConnect {
                        why: PgFailure::Tls,
                        ..
                    }
                )
            },
        ),
    ];
    match std::env::var("TURNSCOPE_TEST_PG_CA")
        .ok()
        .filter(|c| !c.is_empty())
    {
        Some(ca) => {
            // The cluster serves TLS with a certificate for localhost signed by `ca`.
            let other = std::path::Path::new(&ca).with_file_name("other-ca.pem");
            let port = admin.port;
            cases.push((
                format!(
                    "postgres://{}@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={}",
                    admin.user,
                    other.display()
                ),
                |e| {
                    matches!(
                        e,
                        StoreError::PgConnect {
                            why: PgFailure::Tls,
                            ..
                        }
                    )
                },
            ));
            // With a CA file `require` verifies the chain too (libpq's rule), so another CA fails.
            cases.push((
                format!(
                    "postgres://{}@127.0.0.1:{port}/postgres?sslmode=require&sslrootcert={}",
                    admin.user,
                    other.display()
                ),
                |e| {
                    matches!(
                        e,
                        StoreError::PgConnect {
                            why: PgFailure::Tls,
                            ..
                        }
                    )
                },
            ));
            for url in [
                format!(
                    "postgres://{}@127.0.0.1:{port}/postgres?sslmode=require",
                    admin.user
                ),
                format!(
                    "postgres://{}@127.0.0.1:{port}/postgres?sslmode=require&sslrootcert={ca}",
                    admin.user
                ),
                format!(
                    "postgres://{}@localhost:{port}/postgres?sslmode=verify-ca&sslrootcert={ca}",
                    admin.user
                ),
                format!(
                    "postgres://{}@localhost:{port}/postgres?sslmode=verify-full&sslrootcert={ca}",
                    admin.user
                ),
            ] {
                let mut c = connect(&PgTarget::parse(&url).unwrap(), true).unwrap();
                let ssl: bool = c
                    .query_one(
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                        &[],
                    )
                    .unwrap()
                    .get(0);
                assert!(ssl, "{url}: not encrypted");
            }
            // --pg-ca-file does what sslrootcert= does.
            let t = DbTarget::parse(&format!(
                "postgres://{}@localhost:{port}/postgres?sslmode=verify-full",
                admin.user
            ))
            .unwrap()
            .with_ca_file(Some(std::path::Path::new(&ca)));
            match store::open(&t) {
                Err(StoreError::PgNotFlue { .. }) => {}
                other => panic!("verify-full with --pg-ca-file: {:?}", other.err()),
            }
        }
        None => cases.push((
            // This server has no TLS: `require` cannot be met.
            format!(
                "postgres://{}:{SECRET}@{host}/postgres?sslmode=require",
                admin.user
            ),
            |e| {
                matches!(
                    e,
                    StoreError::PgConnect {
                        why: PgFailure::Tls,
                        ..
                    }
                )
            },
        )),
    }
    for (url, expected) in &cases {
        let e = open_err(url);
        assert!(expected(&e), "{url}: {e:?}");
        assert_secret_free(&e);
    }
    // A database without flue tables, then flue tables with other versions.
    let (target, _db) = fresh_pg_database(&admin);
    let mut with_secret = target.clone();
    with_secret.password = Some(SECRET.into());
    let url = with_secret.url();
    let e = open_err(&url);
    assert!(matches!(e, StoreError::PgNotFlue { .. }), "{e:?}");
    assert_secret_free(&e);
    let mut c = connect(&target, false).unwrap();
    c.batch_execute(turnscope_store::postgres::ddl::FLUE_DDL)
        .unwrap();
    c.batch_execute("INSERT INTO flue_meta VALUES ('schema_version', '9')")
        .unwrap();
    assert!(matches!(open_err(&url), StoreError::SchemaVersion { .. }));
    c.batch_execute("INSERT INTO flue_meta VALUES ('format_version', '1')")
        .unwrap();
    assert!(matches!(open_err(&url), StoreError::NewerFormat { .. }));
    drop(c);
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_cli_seeds_lists_shows_repairs_and_audits_without_showing_the_password() {
    let admin = pg_admin();
    let (target, _db) = fresh_pg_database(&admin);
    // The test server trusts loopback, so any password is accepted: it must still never show.
    let mut t = target.clone();
    t.password = Some(SECRET.into());
    let url = t.url();
    let now = DEMO_NOW.to_string();
    let env_now = [("TURNSCOPE_NOW_MS", now.as_str())];
    let cmd = |args: &[&str]| {
        let o = turnscope_command()
            .envs(env_now)
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = cmd(&["--db", &url, "demo", "--json"]);
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    assert!(list["database"]
        .as_str()
        .unwrap()
        .starts_with("postgres://"));
    let mut seen = vec![out, err];
    // Seeding twice is refused: the database holds a journal now.
    let (code, out, err) = cmd(&["--db", &url, "demo", "--json"]);
    assert_ne!(code, 0);
    assert!(err.contains("already holds flue"), "{err}");
    assert!(err.contains("createdb"), "{err}");
    seen.extend([out, err]);
    let (code, out, err) = cmd(&["--db", &url, "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    let rows = list["submissions"].as_array().unwrap();
    assert!(rows.len() >= 10, "{out}");
    let id = rows
        .iter()
        .find(|r| r["submission"]["instanceId"] == "travel-desk")
        .unwrap()["submission"]["submissionId"]
        .as_str()
        .unwrap()
        .to_string();
    seen.extend([out, err]);
    let (code, out, err) = cmd(&["--db", &url, "show", &id]);
    assert_eq!(code, 0, "{err}");
    seen.extend([out, err]);
    let (code, out, err) = cmd(&[
        "--db",
        &url,
        "--write",
        "--operator",
        "pg@test",
        "fail",
        &id,
        "--reason",
        "pg test",
        "-y",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("applied:"), "{out}");
    seen.extend([out, err]);
    let (code, out, err) = cmd(&["--db", &url, "audit", "--json"]);
    assert_eq!(code, 0, "{err}");
    let audit: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(audit["records"][0]["operator"], "pg@test", "{out}");
    seen.extend([out, err]);
    let (_, out, err) = cmd(&["--db", &url, "config"]);
    seen.extend([out, err]);
    let (_, out, err) = cmd(&["--db", &url.replace(&admin.port.to_string(), "1"), "list"]);
    seen.extend([out, err]);
    for text in &seen {
        assert!(!text.contains(SECRET), "password shown: {text}");
    }
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_tui_opens_and_shows_the_same_list() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut o = HarnessOptions::new(DEMO_NOW);
    o.width = 160;
    o.height = 48;
    o.display_name = pg(&db).display();
    let mut pg_h = Harness::open_target(&db.target, o.clone()).unwrap();
    let mut lite = Harness::open(&db.sqlite, o).unwrap();
    let a = pg_h.render();
    assert_eq!(a, lite.render(), "the same first screen on both backends");
    assert!(a.contains("postgres://"), "{a}");
    pg_h.press("<Enter>");
    lite.press("<Enter>");
    pg_h.settle();
    lite.settle();
    assert_eq!(pg_h.render(), lite.render(), "the same opened submission");
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_tui_fails_a_submission_in_write_mode_with_its_audit_row() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let db = demo_db(dir.path());
    let mut o = HarnessOptions::new(DEMO_NOW);
    o.width = 100;
    o.height = 30;
    o.read_only = false;
    let mut h = Harness::open_target(&db.target, o).unwrap();
    h.press("/sales-assist<Enter>F");
    h.press("customer gave up<Enter>");
    // The preview is longer than the dialog: the submission row's change is further down.
    h.press(&"j".repeat(20));
    let preview = h.render();
    assert!(
        preview.contains("status: 'running' → 'settled'"),
        "{preview}"
    );
    h.press("<Tab><Enter>");
    let screen = h.render();
    assert!(screen.contains("Fail applied"), "{screen}");
    let trail = db.open().audit_records().unwrap();
    assert_eq!(trail.len(), 1);
    assert_eq!(
        (trail[0].action.as_str(), trail[0].reason.as_deref()),
        ("fail", Some("customer gave up"))
    );
    let r = SubmissionReport::load(db.open().reader(), &trail[0].submission_id, None, DEMO_NOW)
        .unwrap();
    assert_eq!(r.row().status, SubmissionStatus::Settled);
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_every_fixture_classifies_and_plans_as_on_sqlite() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let m = manifest();
    let mut checked = 0;
    for fixture in m["fixtures"].as_array().unwrap() {
        let name = match fixture["db"].as_str().unwrap() {
            "large.db" => "large-tail".to_string(),
            other => other.trim_end_matches(".db").to_string(),
        };
        let path = unpack_fixture(dir.path(), &name);
        let now = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
        let db = TestDb::from_sqlite(Kind::Postgres, &path);
        let lite = SqliteStore::open(&path).unwrap();
        let pg = db.open();
        for expected in fixture["submissions"].as_array().unwrap() {
            let id = expected["submissionId"].as_str().unwrap();
            let want = SubmissionReport::load(&lite, id, Some(200_000), now).unwrap();
            let got = SubmissionReport::load(pg.reader(), id, Some(200_000), now).unwrap();
            assert_eq!(got.to_json(), want.to_json(), "{name} {id}");
            assert_eq!(
                format!("{:?}", got.plan),
                format!("{:?}", want.plan),
                "{name} {id}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} submissions");
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_copy_to_postgres_copies_a_runtime_journal_and_needs_write() {
    let admin = pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let src = unpack_fixture(dir.path(), "tool-results-partial");
    let (target, _db) = fresh_pg_database(&admin);
    let url = target.url();
    let src_s = src.to_str().unwrap();
    let o = turnscope_command()
        .args(["--db", &url, "copy-to-postgres", src_s])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "read-only by default");
    let o = turnscope_command()
        .args(["--write", "--db", &url, "copy-to-postgres", src_s, "--json"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lite = SqliteStore::open(&src).unwrap();
    let pg = store::open(&DbTarget::Postgres(target)).unwrap();
    let all = turnscope_store::RowFilter::All;
    let rows = lite.list_submissions(all, 0).unwrap();
    assert_eq!(doc["rows"]["flue_agent_submissions"], rows.len());
    assert_eq!(pg.list_submissions(all, 0).unwrap(), rows);
    drop(pg);
}

#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_passwords_come_from_the_url_pgpassword_or_the_password_file() {
    let admin = pg_admin();
    // `.ci/pg-cluster` makes a password-checked role beside the trusted one.
    let (user, password) = (
        std::env::var("TURNSCOPE_TEST_PG_PW_USER")
            .expect("TURNSCOPE_TEST_PG_PW_USER: run the tests with bash .ci/pg-cluster run"),
        std::env::var("TURNSCOPE_TEST_PG_PW")
            .expect("TURNSCOPE_TEST_PG_PW: run the tests with bash .ci/pg-cluster run"),
    );
    let base = format!("127.0.0.1:{}/postgres?sslmode=disable", admin.port);
    // The `postgres` database holds no journal: "not a flue journal" means authentication passed.
    let passed = |e: &StoreError| matches!(e, StoreError::PgNotFlue { .. });
    let wrong = open_err(&format!("postgres://{user}:{SECRET}@{base}"));
    assert!(
        matches!(
            wrong,
            StoreError::PgConnect {
                why: PgFailure::Auth,
                ..
            }
        ),
        "{wrong:?}"
    );
    assert_secret_free(&wrong);
    let pw = |s: &str| s.replace('-', "%2D");
    assert!(passed(&open_err(&format!(
        "postgres://{user}:{}@{base}",
        pw(&password)
    ))));
    // From the environment and the password file: the binary, so the variables stay per process.
    let dir = tempfile::tempdir().unwrap();
    let pgpass = dir.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!(
            "# test\nother:1:*:*:nope\n127.0.0.1:{}:*:{user}:{password}\n",
            admin.port
        ),
    )
    .unwrap();
    let url = format!("postgres://{user}@{base}");
    let run = |envs: &[(&str, &str)]| {
        let o = turnscope_command()
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", dir.path().join("none"))
            .envs(envs.iter().copied())
            .args(["--db", &url, "list"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let none = run(&[]);
    assert!(none.contains("authentication failed"), "{none}");
    let env = run(&[("PGPASSWORD", &password)]);
    assert!(env.contains("not a flue journal"), "{env}");
    let file = run(&[("PGPASSFILE", pgpass.to_str().unwrap())]);
    assert!(file.contains("not a flue journal"), "{file}");
    for text in [none, env, file] {
        assert!(!text.contains(&password), "password shown: {text}");
    }
}

/// Sessions longer than a read chunk (2,048 rows) and walks longer than the walk's key lookups:
/// the chunked whole-session read and the walk's read-ahead give on PostgreSQL exactly what they
/// give on SQLite.
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_long_sessions_read_in_chunks_classify_and_show_as_on_sqlite() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    let paths = crate::scan::lengthen(&path, 700);
    assert!(paths.iter().all(|(_, p)| p.len() > 2_048));
    let db = TestDb::from_sqlite(Kind::Postgres, &path);
    let lite = SqliteStore::open(&path).unwrap();
    let pg = db.open();
    let mut lite_walker = turnscope_store::PathWalker::new(false);
    let mut pg_walker = turnscope_store::PathWalker::new(false);
    let running = lite
        .list_submissions(turnscope_store::RowFilter::All, 0)
        .unwrap()
        .into_iter()
        .filter(|r| r.status == SubmissionStatus::Running);
    let mut checked = 0;
    for row in running {
        let id = &row.submission_id;
        let want =
            SubmissionReport::load_compact(&lite, id, None, DEMO_NOW, Previews::Drop).unwrap();
        let got = SubmissionReport::load_compact(pg.reader(), id, None, DEMO_NOW, Previews::Drop)
            .unwrap();
        assert_eq!(got.to_json(), want.to_json(), "show of {id}");
        let want = SubmissionReport::scan(&lite, id, &mut lite_walker, None, DEMO_NOW).unwrap();
        let got = SubmissionReport::scan(pg.reader(), id, &mut pg_walker, None, DEMO_NOW).unwrap();
        assert_eq!(
            crate::scan::verdict_doc(&got),
            crate::scan::verdict_doc(&want),
            "scan of {id}"
        );
        checked += 1;
    }
    assert!(checked > 10, "only {checked} running submissions");
    assert_eq!(pg_walker.fallbacks, Vec::<(String, String)>::new());
}

/// `(entry_id, position, data)` of a session, as a part read hands them over.
type Rows = Vec<(Vec<u8>, i64, Vec<u8>)>;

/// Reads a session through `SessionRows::split`, inside the bundle's snapshot, after a commit
/// from another connection has replaced every entry's text.
struct ReadInHalves<'a> {
    db: &'a TestDb,
    read: Option<(usize, Rows)>,
}

impl store::SessionLoader for ReadInHalves<'_> {
    fn load(
        &mut self,
        rows: &dyn store::SessionRows,
        key: &str,
        _kind: &str,
        _submission_id: &str,
    ) -> Result<Option<store::SessionRecord>, StoreError> {
        let len = rows.entry_count(key)?.unwrap();
        self.db.exec(&format!(
            "UPDATE flue_session_entries SET data = '{{}}' WHERE session_id = '{}'",
            key.replace('\'', "''")
        ));
        let split = rows.split(key, len)?.expect("a whale session is split");
        let part = |lo, hi| store::PartRange {
            lo,
            hi,
            descending: false,
        };
        let mut got = Rows::new();
        split
            .first
            .for_each_entry_in(key, part(None, Some(split.at)), &mut |id, p, d, _| {
                got.push((id.to_vec(), p, d.to_vec()))
            })?;
        let later = std::thread::scope(|s| {
            s.spawn(|| {
                let mut later = Rows::new();
                split
                    .later
                    .for_each_entry_in(key, part(Some(split.at), None), &mut |id, p, d, _| {
                        later.push((id.to_vec(), p, d.to_vec()))
                    })
                    .map(|()| later)
            })
            .join()
            .unwrap()
        })?;
        got.extend(later);
        self.read = Some((split.first_len, got));
        Ok(None)
    }
}

/// A whale session (past the split threshold) is read on PostgreSQL in two halves at once, the
/// later one on a second connection that imports the bundle's snapshot: what it shows is what
/// SQLite shows, and a commit made while the bundle is read is seen by neither half.
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_a_whale_session_is_read_in_two_halves_in_the_bundles_snapshot() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("whale.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    let whale = crate::scan::lengthen(&path, 2800)[0].0.clone();
    let lite = SqliteStore::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let submission: String = conn
        .query_row(
            "SELECT submission_id FROM flue_agent_submissions WHERE session_key = ?1
             AND status = 'running' LIMIT 1",
            [&whale],
            |r| r.get(0),
        )
        .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT entry_id, position, data FROM flue_session_entries WHERE session_id = ?1
             ORDER BY position",
        )
        .unwrap();
    let expected: Rows = stmt
        .query_map([&whale], |r| {
            Ok((
                r.get::<_, String>(0)?.into_bytes(),
                r.get(1)?,
                r.get::<_, String>(2)?.into_bytes(),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(expected.len() > 8_192, "{} entries", expected.len());
    let db = TestDb::from_sqlite(Kind::Postgres, &path);
    let pg = db.open();

    let want =
        SubmissionReport::load_compact(&lite, &submission, None, DEMO_NOW, Previews::Drop).unwrap();
    let got =
        SubmissionReport::load_compact(pg.reader(), &submission, None, DEMO_NOW, Previews::Drop)
            .unwrap();
    assert!(got.to_json() == want.to_json(), "show on two connections");

    // A role allowed one connection: the second is refused, and the session is read on one.
    let DbTarget::Postgres(target) = &db.target else {
        unreachable!()
    };
    let role = format!("ts_one_{}", std::process::id());
    db.exec(&format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 1"));
    db.exec(&format!(
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"
    ));
    let one = PgTarget {
        user: role.clone(),
        ..target.clone()
    };
    let alone = store::open(&DbTarget::Postgres(one)).unwrap();
    let got =
        SubmissionReport::load_compact(alone.reader(), &submission, None, DEMO_NOW, Previews::Drop)
            .unwrap();
    drop(alone);
    db.exec(&format!("DROP OWNED BY {role}"));
    db.exec(&format!("DROP ROLE {role}"));
    // Compared, not printed: a failure would print 9,000 entries.
    assert!(got.to_json() == want.to_json(), "read on one connection");

    let mut halves = ReadInHalves {
        db: &db,
        read: None,
    };
    pg.reader()
        .load_bundle_with(&submission, &mut halves)
        .unwrap();
    let (first_len, read) = halves.read.unwrap();
    // Counted, not compared whole: a failure would print 9,000 rows.
    let differing = read.iter().zip(&expected).filter(|(a, b)| a != b).count();
    assert_eq!(
        (read.len(), differing),
        (expected.len(), 0),
        "both halves read the bundle's snapshot"
    );
    assert!(first_len > 0 && first_len < read.len(), "{first_len}");
    // The commit did happen: a read after the bundle sees it.
    let replaced = db.int(&format!(
        "SELECT COUNT(*) FROM flue_session_entries WHERE session_id = '{}' AND data = '{{}}'",
        whale.replace('\'', "''")
    ));
    assert_eq!(replaced as usize, expected.len());
}

/// A long listing on PostgreSQL is inspected on two connections, as on SQLite: the same items,
/// in the same order, as one connection (`--limit`) and as the SQLite file it was copied from.
#[cfg_attr(
    turnscope_no_pg,
    ignore = "needs PostgreSQL: TURNSCOPE_TEST_PG is not set (bash .ci/pg-cluster run cargo test --workspace)"
)]
#[test]
fn pg_a_long_listing_is_read_on_two_connections_with_the_same_items() {
    pg_admin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    let db = TestDb::from_sqlite(Kind::Postgres, &path);
    let DbTarget::Postgres(target) = &db.target else {
        unreachable!()
    };
    assert!(db.open().reader().snapshot_twin().is_some());
    let now = DEMO_NOW.to_string();
    let items = |db_arg: &str, extra: &[&str]| -> Vec<Value> {
        let o = turnscope_command()
            .env("TURNSCOPE_NOW_MS", &now)
            .args(["--db", db_arg, "list", "--status", "all", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["submissions"].as_array().unwrap().clone()
    };
    let url = target.url();
    let two = items(&url, &[]);
    assert!(
        two.len() >= 16,
        "{} rows: too few for two threads",
        two.len()
    );
    assert!(two == items(&url, &["--limit", "100000"]), "one connection");
    assert!(two == items(path.to_str().unwrap(), &[]), "the SQLite file");
}
