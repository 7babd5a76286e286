//! Opening a connection: password lookup (URL, `PGPASSWORD`, password file), TLS per `sslmode`,
//! the connect timeout, read-only sessions, and one clear error for each way it fails.

use std::path::{Path, PathBuf};

use postgres::error::SqlState;
use postgres::{Client, NoTls};

use super::tls;
use super::url::{redact_with, PgTarget, SslMode};
use crate::{PgFailure, StoreError};

/// The password to use: the URL's, else `PGPASSWORD`, else the first matching password-file line.
pub(crate) fn resolve_password(t: &PgTarget) -> Option<String> {
    if let Some(p) = &t.password {
        return Some(p.clone());
    }
    if let Some(p) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    // libpq matches a Unix-socket connection as host "localhost".
    let host = if t.host.starts_with('/') {
        "localhost"
    } else {
        t.host.as_str()
    };
    pgpass_lookup(&text, host, t.port, &t.dbname, &t.user)
}

/// `hostname:port:database:username:password` lines, `*` matching anything, `\:` and `\\` escaped.
pub(crate) fn pgpass_lookup(
    text: &str,
    host: &str,
    port: u16,
    db: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => cur.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let ok = |pat: &str, v: &str| pat == "*" || pat == v;
        if ok(&fields[0], host)
            && ok(&fields[1], &port)
            && ok(&fields[2], db)
            && ok(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// Connect to `t`. `read_only` sessions run with `default_transaction_read_only=on`, so any write
/// attempt fails in PostgreSQL itself.
pub fn connect(t: &PgTarget, read_only: bool) -> Result<Client, StoreError> {
    let password = resolve_password(t);
    let mut cfg = postgres::Config::new();
    cfg.host(&t.host)
        .port(t.port)
        .user(&t.user)
        .dbname(&t.dbname)
        .application_name(&t.application_name)
        .connect_timeout(t.connect_timeout);
    if let Some(p) = &password {
        cfg.password(p);
    }
    if read_only {
        cfg.options("-c default_transaction_read_only=on");
    }
    let fail = |why: PgFailure, detail: String| StoreError::PgConnect {
        target: t.display(),
        why,
        detail: redact_with(&detail, password.as_deref()),
    };
    let result = match t.sslmode {
        SslMode::Disable => {
            cfg.ssl_mode(postgres::config::SslMode::Disable);
            cfg.connect(NoTls)
        }
        mode => {
            cfg.ssl_mode(if mode == SslMode::Prefer {
                postgres::config::SslMode::Prefer
            } else {
                postgres::config::SslMode::Require
            });
            if t.ca_file.is_none() && mode == SslMode::VerifyFull {
                return Err(fail(
                    PgFailure::Tls,
                    "sslmode=verify-full needs a CA file (sslrootcert=PATH or --pg-ca-file PATH)"
                        .into(),
                ));
            }
            let roots = match &t.ca_file {
                Some(ca) => Some(tls::read_roots(ca).map_err(|d| fail(PgFailure::Tls, d))?),
                None => None,
            };
            // libpq semantics: prefer/require without a CA file encrypt but do not verify;
            // with a CA file the chain is verified; verify-full also checks the host name.
            let config = tls::client_config(roots, mode == SslMode::VerifyFull)
                .map_err(|d| fail(PgFailure::Tls, d))?;
            cfg.connect(tokio_postgres_rustls::MakeRustlsConnect::new(config))
        }
    };
    result.map_err(|e| {
        let (why, detail) = classify_connect_error(&e);
        fail(why, detail)
    })
}

fn classify_connect_error(e: &postgres::Error) -> (PgFailure, String) {
    if let Some(db) = e.as_db_error() {
        let why = match *db.code() {
            SqlState::INVALID_PASSWORD | SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
                PgFailure::Auth
            }
            SqlState::INVALID_CATALOG_NAME => PgFailure::NoDatabase,
            _ => PgFailure::Other,
        };
        return (why, db.message().to_string());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    let mut io_kind = None;
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        source = s.source();
    }
    let lower = text.to_lowercase();
    let why = match io_kind {
        Some(std::io::ErrorKind::ConnectionRefused) => PgFailure::Refused,
        Some(std::io::ErrorKind::TimedOut) => PgFailure::Timeout,
        _ if lower.contains("timeout") || lower.contains("timed out") => PgFailure::Timeout,
        _ if lower.contains("refused") => PgFailure::Refused,
        _ if lower.contains("tls")
            || lower.contains("ssl")
            || lower.contains("certificate")
            || lower.contains("handshake") =>
        {
            PgFailure::Tls
        }
        _ if lower.contains("password") || lower.contains("authentication") => PgFailure::Auth,
        _ => PgFailure::Other,
    };
    (why, text)
}

/// A PostgreSQL error while working: lock conflicts become `Locked` ("busy, try again").
pub(crate) fn pg_error(context: &str, e: &postgres::Error) -> StoreError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::LOCK_NOT_AVAILABLE
            || *code == SqlState::T_R_DEADLOCK_DETECTED
            || *code == SqlState::T_R_SERIALIZATION_FAILURE
            || *code == SqlState::QUERY_CANCELED
        {
            return StoreError::Locked {
                detail: format!("{context}: {}", db.message()),
            };
        }
        return StoreError::Postgres {
            context: context.to_string(),
            detail: format!("{} ({})", db.message(), code.code()),
        };
    }
    StoreError::Postgres {
        context: context.to_string(),
        detail: e.to_string(),
    }
}

/// A `REPEATABLE READ READ ONLY` transaction on `c`: one snapshot for everything read in it.
pub(super) fn begin_snapshot<'c>(
    c: &'c mut Client,
    context: &str,
) -> Result<postgres::Transaction<'c>, StoreError> {
    c.build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(|e| pg_error(context, &e))
}

#[cfg(test)]
mod tests {
    use super::pgpass_lookup;

    #[test]
    fn pgpass_matches_wildcards_and_escapes() {
        let text = "# comment\nother:5432:*:ops:nope\n*:5432:jour\\:nal:ops:pa\\:ss\nlocalhost:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(text, "db1", 5432, "jour:nal", "ops").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(
            pgpass_lookup(text, "localhost", 1, "x", "y").as_deref(),
            Some("fallback")
        );
        assert_eq!(pgpass_lookup(text, "db1", 5433, "jour:nal", "ops"), None);
    }
}
