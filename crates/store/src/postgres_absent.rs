//! PostgreSQL in a build without the `postgres` feature: URLs still parse (so `config` shows them
//! and errors name them without their password), and every attempt to connect is refused with
//! [`StoreError::PgNotBuilt`], whose hint says how to rebuild.

#[path = "postgres/url.rs"]
pub mod url;

pub use url::{is_pg_url, PgTarget, SslMode};

use crate::StoreError;

fn not_built(target: &PgTarget) -> StoreError {
    StoreError::PgNotBuilt {
        target: target.display(),
    }
}

/// Connecting (what `demo --db postgres://…` checks first).
pub mod connect {
    use super::{not_built, PgTarget, StoreError};

    /// Never connects: there is no client in this build.
    pub fn connect(
        target: &PgTarget,
        _read_only: bool,
    ) -> Result<std::convert::Infallible, StoreError> {
        Err(not_built(target))
    }
}

/// Copying an SQLite journal into PostgreSQL (`copy-to-postgres`, `demo --db postgres://…`).
pub mod convert {
    use std::path::Path;

    use super::{not_built, PgTarget, StoreError};

    /// Rows copied per table (never any in this build).
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct CopyStats {
        pub tables: Vec<(String, u64)>,
    }

    impl CopyStats {
        pub fn rows(&self, table: &str) -> u64 {
            self.tables
                .iter()
                .find(|(t, _)| t == table)
                .map_or(0, |(_, n)| *n)
        }
    }

    /// Refused: there is no client in this build.
    pub fn sqlite_to_postgres(_sqlite: &Path, target: &PgTarget) -> Result<CopyStats, StoreError> {
        Err(not_built(target))
    }

    /// Refused: there is no client in this build.
    pub fn sqlite_to_postgres_watched(
        _sqlite: &Path,
        target: &PgTarget,
        _progress: &mut dyn crate::progress::Progress,
    ) -> Result<CopyStats, StoreError> {
        Err(not_built(target))
    }
}
