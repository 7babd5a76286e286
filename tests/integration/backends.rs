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
    /// Held for its drop: the PostgreSQL database goes with this.
    #[cfg(feature = "postgres")]
    #[allow(dead_code)]
    pg: Option<PgDatabase>,
}

#[cfg(feature = "postgres")]
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A database on the test server, dropped when this goes out of scope: at the end of the test,
/// or while a failing test unwinds, so a failure leaves nothing on the server's disk.
#[cfg(feature = "postgres")]
pub struct PgDatabase {
    admin: PgTarget,
    name: String,
}

#[cfg(feature = "postgres")]
impl Drop for PgDatabase {
    fn drop(&mut self) {
        let _ = admin_client(&self.admin).batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// A new, empty PostgreSQL database on the test server, and the guard that drops it.
#[cfg(feature = "postgres")]
pub fn fresh_pg_database(admin: &PgTarget) -> (PgTarget, PgDatabase) {
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
    let target = admin.with_dbname(&name);
    (
        target,
        PgDatabase {
            admin: admin.clone(),
            name,
        },
    )
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
                #[cfg(feature = "postgres")]
                pg: None,
            },
            #[cfg(not(feature = "postgres"))]
            Kind::Postgres => unreachable!("kinds() has no PostgreSQL without the feature"),
            #[cfg(feature = "postgres")]
            Kind::Postgres => {
                // The guard first: a copy that fails drops its half-filled database too, so one
                // failure does not leave its rows on the server's disk for the tests after it.
                let (target, guard) = fresh_pg_database(&pg_admin());
                let db = TestDb {
                    kind,
                    target: DbTarget::Postgres(target.clone()),
                    sqlite: sqlite.to_path_buf(),
                    pg: Some(guard),
                };
                convert::sqlite_to_postgres(sqlite, &target)
                    .unwrap_or_else(|e| panic!("copying {}: {e}", sqlite.display()));
                db
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
