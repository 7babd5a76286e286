//! The floor: the `sqlite3` command-line shell running the SQL for the rows a screen needs,
//! timed from process start to exit (output discarded), like the turnscope figures. Also what
//! machine this is.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::stats::{median, ms};

pub struct Sqlite3 {
    pub path: String,
    pub version: String,
}

impl Sqlite3 {
    /// `/usr/bin/sqlite3` (or `TURNSCOPE_BENCH_SQLITE3`); `None`, with a notice, when missing.
    pub fn find() -> Option<Sqlite3> {
        let path =
            std::env::var("TURNSCOPE_BENCH_SQLITE3").unwrap_or_else(|_| "/usr/bin/sqlite3".into());
        match Command::new(&path).arg("-version").output() {
            Ok(o) if o.status.success() => Some(Sqlite3 {
                version: format!(
                    "sqlite3 {}",
                    String::from_utf8_lossy(&o.stdout)
                        .split_whitespace()
                        .next()
                        .unwrap_or("?")
                ),
                path,
            }),
            _ => {
                eprintln!("NOTICE: no {path}: floors are not measured (apt-get install sqlite3)");
                None
            }
        }
    }

    pub fn time(&self, db: &Path, sql: &str) -> Result<Duration, String> {
        let t0 = Instant::now();
        let st = Command::new(&self.path)
            .args(["-readonly", "-batch"])
            .arg(db)
            .arg(sql)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .map_err(|e| e.to_string())?;
        let took = t0.elapsed();
        if !st.success() {
            return Err(format!("sqlite3 failed on: {sql}"));
        }
        Ok(took)
    }

    /// The median of `runs` timings, in ms.
    pub fn median(&self, db: &Path, sql: &str, runs: usize) -> Result<f64, String> {
        let v: Vec<Duration> = (0..runs)
            .map(|_| self.time(db, sql))
            .collect::<Result<_, _>>()?;
        Ok(ms(median(&v)))
    }
}

/// The SQL of each figure's floor.
pub struct Floors {
    /// The expired list's rows, the status counts and the listed rows' journal phases.
    pub first_frame: String,
    /// Every (entry_id, position, data) row of the whale's session, with its submission row.
    pub whale: String,
    /// What a refresh of the expired list re-reads: the same as the first frame.
    pub refresh: String,
    /// The scan's rows: every expired submission with its journal, and every entry of their
    /// sessions.
    pub scan: String,
}

impl Floors {
    pub fn new(_db: &Path, now_ms: i64, whale_key: &str) -> Floors {
        let expired =
            format!("status = 'running' AND lease_expires_at > 0 AND lease_expires_at < {now_ms}");
        let key = whale_key.replace('\'', "''");
        let first_frame = format!(
            "SELECT * FROM flue_agent_submissions WHERE {expired} ORDER BY sequence;
             SELECT status, COUNT(*) FROM flue_agent_submissions GROUP BY status;
             SELECT j.submission_id, j.phase, j.revision FROM flue_agent_turn_journals j
               JOIN flue_agent_submissions s USING (submission_id) WHERE s.{expired};"
        );
        let whale = format!(
            "SELECT * FROM flue_agent_submissions WHERE session_key = '{key}' AND {expired};
             SELECT data FROM flue_sessions WHERE id = '{key}';
             SELECT entry_id, position, data FROM flue_session_entries
               WHERE session_id = '{key}' ORDER BY position;"
        );
        let scan = format!(
            "SELECT s.*, j.* FROM flue_agent_submissions s
               LEFT JOIN flue_agent_turn_journals j USING (submission_id)
               WHERE s.{expired} ORDER BY s.sequence;
             SELECT x.id, x.data, e.entry_id, e.position, e.data FROM flue_sessions x
               JOIN flue_session_entries e ON e.session_id = x.id
               WHERE x.id IN (SELECT session_key FROM flue_agent_submissions WHERE {expired})
               ORDER BY e.session_id, e.position;"
        );
        Floors {
            refresh: first_frame.clone(),
            first_frame,
            whale,
            scan,
        }
    }

    pub fn all(&self) -> [&str; 3] {
        [&self.first_frame, &self.whale, &self.scan]
    }
}

/// `nproc`, the CPU model and the RAM of this machine.
pub fn machine() -> Value {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let ram_kb: Option<u64> = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok());
    json!({
        "nproc": cpus,
        "cpu": model,
        "ram_gb": ram_kb.map(|k| (k as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0),
    })
}
