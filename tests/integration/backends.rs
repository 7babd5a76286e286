//! One test body, every backend: SQLite always, PostgreSQL when `TURNSCOPE_TEST_PG` names a
//! server (`.ci/run` always sets it; `.ci/pg-cluster run cargo test` does it by hand). Each
//! PostgreSQL test gets its own fresh database, created from the same SQLite source with the
//! converter and dropped afterwards.

use std::path::{Path, PathBuf};
#[cfg(feature = "postgres")]
use std::sync::atomic::{AtomicU64, Ordering};

use turnscope_store as store;
#[cfg(feature = "postgres")]
use turnscope_store::postgres::convert;
use turnscope_store::postgres::PgTarget;
use turnscope_store::{DbTarget, JournalWriter};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// The server for PostgreSQL tests. A test that calls this is marked
/// `#[cfg_attr(turnscope_no_pg, ignore = …)]`, so it runs only where `TURNSCOPE_TEST_PG` was set
/// when the tests were built (`build.rs`); unset now, it fails.
pub fn pg_admin() -> PgTarget {
    let url = std::env::var("TURNSCOPE_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
        .expect("TURNSCOPE_TEST_PG was set when the tests were built and is not now: run `bash .ci/pg-cluster run cargo test --workspace`");
    PgTarget::parse(&url).expect("TURNSCOPE_TEST_PG")
}

/// The backends to run a contract test on: SQLite, and PostgreSQL where the tests were built
/// with `TURNSCOPE_TEST_PG` (the PostgreSQL half is counted as ignored otherwise, in
/// `outside::the_postgres_half_of_the_contract_tests_runs`).
pub fn kinds() -> Vec<Kind> {
    let mut v = vec![Kind::Sqlite];
    // A build without the `postgres` feature has no PostgreSQL backend to test.
    if cfg!(all(feature = "postgres", not(turnscope_no_pg))) {
        pg_admin();
        v.push(Kind::Postgres);
    }
    v
}

/// A journal database for one test: an SQLite file, or a fresh PostgreSQL database holding an
/// exact copy of it (dropped on drop).
pub struct TestDb {
    pub kind: Kind,
    pub target: DbTarget,
    /// The SQLite source (for Postgres: the file it was copied from).
    pub sqlite: PathBuf,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pg: Option<(PgTarget, String)>,
}

#[cfg(feature = "postgres")]
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new, empty PostgreSQL database on the test server (dropped with the returned guard).
#[cfg(feature = "postgres")]
pub fn fresh_pg_database(admin: &PgTarget) -> (PgTarget, String) {
    let name = format!(
        "ts_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let mut c = admin_client(admin);
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    (admin.with_dbname(&name), name)
}

#[cfg(feature = "postgres")]
pub fn admin_client(admin: &PgTarget) -> postgres::Client {
    postgres::Client::connect(&admin.url(), postgres::NoTls).expect("connecting to the test server")
}

impl TestDb {
    /// `sqlite` as is, or copied into a fresh PostgreSQL database.
    pub fn from_sqlite(kind: Kind, sqlite: &Path) -> TestDb {
        match kind {
            Kind::Sqlite => TestDb {
                kind,
                target: DbTarget::Sqlite(sqlite.to_path_buf()),
                sqlite: sqlite.to_path_buf(),
                pg: None,
            },
            #[cfg(not(feature = "postgres"))]
            Kind::Postgres => unreachable!("kinds() has no PostgreSQL without the feature"),
            #[cfg(feature = "postgres")]
            Kind::Postgres => {
                let admin = pg_admin();
                let (target, name) = fresh_pg_database(&admin);
                convert::sqlite_to_postgres(sqlite, &target)
                    .unwrap_or_else(|e| panic!("copying {}: {e}", sqlite.display()));
                TestDb {
                    kind,
                    target: DbTarget::Postgres(target),
                    sqlite: sqlite.to_path_buf(),
                    pg: Some((admin, name)),
                }
            }
        }
    }

    pub fn open(&self) -> Box<dyn store::Backend> {
        store::open(&self.target).unwrap_or_else(|e| panic!("{:?}: {e}", self.kind))
    }

    pub fn writer(&self) -> Box<dyn JournalWriter> {
        store::open_writer(&self.target).unwrap_or_else(|e| panic!("{:?}: {e}", self.kind))
    }

    /// Run a statement written in SQL both databases accept (a simulated runtime or operator).
    pub fn exec(&self, sql: &str) -> u64 {
        match &self.target {
            DbTarget::Sqlite(p) | DbTarget::Export(p) => rusqlite::Connection::open(p)
                .unwrap()
                .execute(sql, [])
                .unwrap() as u64,
            #[cfg(not(feature = "postgres"))]
            DbTarget::Postgres(_) => unreachable!("no PostgreSQL without the feature"),
            #[cfg(feature = "postgres")]
            DbTarget::Postgres(t) => postgres::Client::connect(&t.url(), postgres::NoTls)
                .unwrap()
                .execute(sql, &[])
                .unwrap(),
        }
    }

    /// One integer from a query both databases accept.
    pub fn int(&self, sql: &str) -> i64 {
        match &self.target {
            DbTarget::Sqlite(p) | DbTarget::Export(p) => rusqlite::Connection::open(p)
                .unwrap()
                .query_row(sql, [], |r| r.get(0))
                .unwrap(),
            #[cfg(not(feature = "postgres"))]
            DbTarget::Postgres(_) => unreachable!("no PostgreSQL without the feature"),
            #[cfg(feature = "postgres")]
            DbTarget::Postgres(t) => postgres::Client::connect(&t.url(), postgres::NoTls)
                .unwrap()
                .query_one(&format!("SELECT ({sql})::bigint"), &[])
                .unwrap()
                .get(0),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        if let Some((admin, name)) = &self.pg {
            let _ = admin_client(admin)
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}
