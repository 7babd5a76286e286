//! `postgres://[user[:password]@][host][:port][/dbname][?param=value&…]` (also `postgresql://`).
//!
//! Parameters: `sslmode=disable|prefer|require|verify-full` (default `prefer`, like libpq),
//! `sslrootcert=PATH` (a CA file in PEM), `connect_timeout=SECONDS` (default 5), `host`, `port`,
//! `user`, `password`, `dbname`, `application_name`. A missing password comes from `PGPASSWORD`,
//! else from the password file (`PGPASSFILE`, else `~/.pgpass`).
//!
//! The password is kept out of every rendering of the target: [`PgTarget::display`] and `Debug`
//! show `***` in its place, and [`PgTarget::redact`] scrubs it from any other text.

use std::path::PathBuf;
use std::time::Duration;

use crate::StoreError;

/// libpq's `sslmode` values turnscope supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP only.
    Disable,
    /// TLS when the server offers it, without verifying the certificate (libpq's default).
    Prefer,
    /// TLS or nothing; the certificate is verified only against `sslrootcert` when one is given.
    Require,
    /// TLS with the certificate verified against the CA file and the host name checked.
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode, StoreError> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" | "allow" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-full" | "verify-ca" => SslMode::VerifyFull,
            other => return Err(url_error(format!("unknown sslmode {other:?}"))),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where a PostgreSQL journal lives and how to reach it.
#[derive(Clone, PartialEq, Eq)]
pub struct PgTarget {
    pub user: String,
    /// From the URL only; `PGPASSWORD` and the password file are read when connecting.
    pub password: Option<String>,
    /// A host name, an IP address, or a Unix-socket directory (starting with `/`).
    pub host: String,
    pub port: u16,
    pub dbname: String,
    pub sslmode: SslMode,
    /// `sslrootcert=` or `--pg-ca-file`.
    pub ca_file: Option<PathBuf>,
    pub connect_timeout: Duration,
    pub application_name: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgTarget({})", self.display())
    }
}

pub(crate) fn url_error(detail: String) -> StoreError {
    StoreError::PgUrl { detail }
}

/// Whether `s` names a PostgreSQL database rather than an SQLite file.
pub fn is_pg_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

fn percent_decode(s: &str) -> Result<String, StoreError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| url_error("a bad %-escape in the URL".into()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| url_error("the URL decodes to invalid UTF-8".into()))
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl PgTarget {
    /// Parse a `postgres://` URL. Defaults: user `PGUSER`/`USER`, host `PGHOST`/localhost, port
    /// `PGPORT`/5432, database = the user name.
    pub fn parse(url: &str) -> Result<PgTarget, StoreError> {
        let rest = url
            .strip_prefix("postgresql://")
            .or_else(|| url.strip_prefix("postgres://"))
            .ok_or_else(|| url_error("not a postgres:// URL".into()))?;
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = main.split_once('/').unwrap_or((main, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let mut user = None;
        let mut password = None;
        if let Some(u) = userinfo {
            let (name, pw) = match u.split_once(':') {
                Some((n, p)) => (n, Some(p)),
                None => (u, None),
            };
            user = Some(percent_decode(name)?).filter(|s| !s.is_empty());
            password = pw.map(percent_decode).transpose()?;
        }
        let (host, port) = split_host_port(hostport)?;
        let mut host = Some(percent_decode(&host)?).filter(|h| !h.is_empty());
        let mut port = port;
        let mut dbname = Some(percent_decode(path)?).filter(|d| !d.is_empty());
        let mut sslmode = SslMode::Prefer;
        let mut ca_file = None;
        let mut connect_timeout = Duration::from_secs(5);
        let mut application_name = "turnscope".to_string();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_decode(v)?;
            match k {
                "sslmode" => sslmode = SslMode::parse(&v)?,
                "sslrootcert" => ca_file = Some(PathBuf::from(v)),
                "connect_timeout" => {
                    let secs: u64 = v.parse().map_err(|_| {
                        url_error(format!("connect_timeout={v:?} is not a number of seconds"))
                    })?;
                    connect_timeout = Duration::from_secs(secs.max(1));
                }
                "host" => host = Some(v),
                "port" => port = Some(parse_port(&v)?),
                "user" => user = Some(v),
                "password" => password = Some(v),
                "dbname" => dbname = Some(v),
                "application_name" => application_name = v,
                other => {
                    return Err(url_error(format!(
                        "unknown URL parameter {other:?} (turnscope knows sslmode, sslrootcert, connect_timeout, host, port, user, password, dbname, application_name)"
                    )))
                }
            }
        }
        let user = user
            .or_else(|| env("PGUSER"))
            .or_else(|| env("USER"))
            .unwrap_or_else(|| "postgres".into());
        let port = match port {
            Some(p) => p,
            None => env("PGPORT").map_or(Ok(5432), |p| parse_port(&p))?,
        };
        Ok(PgTarget {
            host: host
                .or_else(|| env("PGHOST"))
                .unwrap_or_else(|| "localhost".into()),
            port,
            dbname: dbname
                .or_else(|| env("PGDATABASE"))
                .unwrap_or_else(|| user.clone()),
            user,
            password,
            sslmode,
            ca_file,
            connect_timeout,
            application_name,
        })
    }

    /// The URL without its password (`***` in its place): safe for titles, errors, logs and JSON.
    pub fn display(&self) -> String {
        self.url_with(self.password.as_ref().map(|_| "***"))
    }

    /// The full URL, password included: only for handing to another turnscope process.
    pub fn url(&self) -> String {
        self.url_with(self.password.as_deref().map(percent_encode).as_deref())
    }

    fn url_with(&self, password: Option<&str>) -> String {
        let host = if self.host.starts_with('/') {
            String::new()
        } else if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            percent_encode(&self.host)
        };
        let mut s = format!("postgres://{}", percent_encode(&self.user));
        if let Some(p) = password {
            s.push(':');
            s.push_str(p);
        }
        s.push_str(&format!(
            "@{host}:{}/{}?sslmode={}",
            self.port,
            percent_encode(&self.dbname),
            self.sslmode.as_str()
        ));
        if self.host.starts_with('/') {
            s.push_str(&format!("&host={}", percent_encode(&self.host)));
        }
        if self.connect_timeout != Duration::from_secs(5) {
            s.push_str(&format!(
                "&connect_timeout={}",
                self.connect_timeout.as_secs()
            ));
        }
        if self.application_name != "turnscope" {
            s.push_str(&format!(
                "&application_name={}",
                percent_encode(&self.application_name)
            ));
        }
        if let Some(ca) = &self.ca_file {
            s.push_str(&format!(
                "&sslrootcert={}",
                percent_encode(&ca.display().to_string())
            ));
        }
        s
    }

    /// `text` with every occurrence of the password replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        redact_with(text, self.password.as_deref())
    }

    /// The same target in another database on the same server (tests, seeding).
    pub fn with_dbname(&self, dbname: &str) -> PgTarget {
        PgTarget {
            dbname: dbname.to_string(),
            ..self.clone()
        }
    }
}

pub(crate) fn redact_with(text: &str, password: Option<&str>) -> String {
    match password {
        Some(p) if p.len() >= 2 => text.replace(p, "***").replace(&percent_encode(p), "***"),
        _ => text.to_string(),
    }
}

fn parse_port(s: &str) -> Result<u16, StoreError> {
    s.parse()
        .map_err(|_| url_error(format!("port {s:?} is not a number from 1 to 65535")))
}

fn split_host_port(s: &str) -> Result<(String, Option<u16>), StoreError> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| url_error("an unclosed [ in the host".into()))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(parse_port(p)?),
            None if after.is_empty() => None,
            None => return Err(url_error("junk after the IPv6 address".into())),
        };
        return Ok((h.to_string(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) => Ok((h.to_string(), Some(parse_port(p)?))),
        None => Ok((s.to_string(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_part_and_never_shows_the_password() {
        let t = PgTarget::parse(
            "postgresql://ops:s%40cret@db.example:6543/journal?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=2",
        )
        .unwrap();
        assert_eq!(t.user, "ops");
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!((t.host.as_str(), t.port), ("db.example", 6543));
        assert_eq!(t.dbname, "journal");
        assert_eq!(t.sslmode, SslMode::VerifyFull);
        assert_eq!(t.ca_file, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(t.connect_timeout, Duration::from_secs(2));
        for shown in [
            t.display(),
            format!("{t:?}"),
            t.redact("x s@cret y s%40cret"),
        ] {
            assert!(
                !shown.contains("s@cret") && !shown.contains("s%40cret"),
                "{shown}"
            );
        }
        assert!(t.display().contains("ops:***@db.example:6543/journal"));
        assert_eq!(PgTarget::parse(&t.url()).unwrap(), t);
    }

    #[test]
    fn ipv6_and_socket_hosts_and_bad_urls() {
        let t = PgTarget::parse("postgres://u@[::1]:5000/d").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 5000));
        let s = PgTarget::parse("postgres://u@/d?host=/run/postgresql").unwrap();
        assert_eq!(s.host, "/run/postgresql");
        assert_eq!(PgTarget::parse(&s.url()).unwrap(), s);
        for bad in [
            "postgres://u@h:99999/d",
            "postgres://u@h/d?sslmode=sometimes",
            "postgres://u@h/d?frobnicate=1",
            "postgres://u@h/d?connect_timeout=soon",
            "postgres://u:%zz@h/d",
        ] {
            let e = PgTarget::parse(bad).unwrap_err();
            assert!(matches!(e, StoreError::PgUrl { .. }), "{bad}: {e}");
        }
    }
}
